//! Identities every encoding must satisfy, whatever its parameters: the properties that make
//! each one work, checked on the tables themselves. Each would catch a classic mistake (a
//! swapped sin/cos, a wrong pairing, an off-by-one frequency, a transposed table).

use ndarray::{Array1, Array2, Axis, array, s};
use poslab::encoding::PairLayout;
use proptest::prelude::*;

use poslab::encoding::alibi::{self, Alibi2dParams, AlibiMode, AlibiParams};
use poslab::encoding::grid::{self, DistanceMetric, GridParams, SinCos2dParams};
use poslab::encoding::relative::{self, RelativeClipParams, T5BucketParams};
use poslab::encoding::rope::{self, RopeParams};
use poslab::encoding::rope2d::{self, AxialParams};
use poslab::encoding::sinusoidal::{self, SinusoidalParams, Spacing};

fn rotate(x: &Array2<f64>, layout: PairLayout, base: f64, start: u64) -> Array2<f64> {
    rope::apply(x.view(), layout, base, start).unwrap()
}

/// A row vector placed at one position, as a `[1, dim]` array.
fn one_row(v: &Array1<f64>) -> Array2<f64> {
    v.clone().insert_axis(Axis(0))
}

#[test]
fn sinusoidal_dot_product_depends_only_on_the_offset() {
    let p = SinusoidalParams {
        seq: 300,
        dim: 64,
        base: 10_000.0,
        start: 17,
        layout: PairLayout::Interleaved,
        spacing: Spacing::Vaswani,
        ..SinusoidalParams::default()
    };
    let pe = sinusoidal::table(&p).unwrap();
    for k in [0usize, 1, 5, 40, 199] {
        let first = pe.row(0).dot(&pe.row(k));
        for i in [1usize, 33, 100] {
            let other = pe.row(i).dot(&pe.row(i + k));
            assert!(
                (first - other).abs() < 1e-10,
                "k {k}, i {i}: {first} vs {other}"
            );
        }
    }
}

#[test]
fn every_row_has_norm_sqrt_of_half_the_dimension() {
    for spacing in [Spacing::Vaswani, Spacing::T2t] {
        let p = SinusoidalParams {
            seq: 50,
            dim: 24,
            spacing,
            start: 1000,
            ..Default::default()
        };
        for row in sinusoidal::table(&p).unwrap().rows() {
            assert!((row.dot(&row) - 12.0).abs() < 1e-12);
        }
    }
}

#[test]
fn frequencies_span_one_to_one_over_base_as_each_convention_says() {
    let p = SinusoidalParams {
        dim: 8,
        base: 10_000.0,
        ..Default::default()
    };
    // Vaswani: 10000^(-2i/8) = 1, 0.1, 0.01, 0.001 (stops short of 1/base).
    let vaswani = p.frequencies();
    for (w, expected) in vaswani.iter().zip([1.0, 0.1, 0.01, 0.001]) {
        assert!((w - expected).abs() < 1e-15 * expected.max(1.0));
    }
    // tensor2tensor: the last of dim/2 = 4 frequencies is exactly 1/base.
    let t2t = SinusoidalParams {
        spacing: Spacing::T2t,
        ..p
    }
    .frequencies();
    assert!((t2t[3] - 1e-4).abs() < 1e-18);
    assert!((t2t[1] - 10_000f64.powf(-1.0 / 3.0)).abs() < 1e-15);
}

#[test]
fn split_layout_is_the_interleaved_table_with_columns_regrouped() {
    let interleaved = SinusoidalParams {
        seq: 20,
        dim: 10,
        start: 3,
        ..Default::default()
    };
    let split = SinusoidalParams {
        layout: PairLayout::Half,
        ..interleaved
    };
    let a = sinusoidal::table(&interleaved).unwrap();
    let b = sinusoidal::table(&split).unwrap();
    assert_eq!(a.slice(s![.., 0..;2]), b.slice(s![.., ..5]));
    assert_eq!(a.slice(s![.., 1..;2]), b.slice(s![.., 5..]));
    // sin first: position 0 is all zeros in the sine columns and ones in the cosine columns.
    let at_zero = sinusoidal::table(&SinusoidalParams { start: 0, ..split }).unwrap();
    assert!(at_zero.slice(s![0, ..5]).iter().all(|&v| v == 0.0));
    assert!(at_zero.slice(s![0, 5..]).iter().all(|&v| v == 1.0));
}

#[test]
fn dot_decay_is_a_row_of_the_similarity_matrix() {
    let p = SinusoidalParams {
        seq: 40,
        dim: 16,
        base: 100.0,
        start: 9,
        ..Default::default()
    };
    let similarity = sinusoidal::similarity(&p).unwrap();
    let decay = sinusoidal::dot_decay(&p, 7).unwrap();
    let table = sinusoidal::table(&p).unwrap();
    for j in 0..40 {
        assert!((decay[j] - similarity[[7, j]]).abs() < 1e-12);
        let by_rows = table.row(7).dot(&table.row(j));
        assert!((decay[j] - by_rows).abs() < 1e-12, "row {j}");
    }
}

#[test]
fn rope_keeps_norms_and_scores_depend_only_on_the_offset() {
    let q = array![0.3, -1.2, 0.7, 2.0, -0.4, 0.9, 1.1, -0.6];
    let k = array![1.0, 0.2, -0.5, 0.8, 0.3, -1.4, 0.6, 0.25];
    for layout in [PairLayout::Interleaved, PairLayout::Half] {
        let score = |m: u64, n: u64| {
            let qm = rotate(&one_row(&q), layout, 10_000.0, m);
            let kn = rotate(&one_row(&k), layout, 10_000.0, n);
            qm.row(0).dot(&kn.row(0))
        };
        for (m, n) in [(5, 2), (105, 102), (70_003, 70_000)] {
            assert!(
                (score(m, n) - score(3, 0)).abs() < 1e-9,
                "{layout:?} ({m}, {n})"
            );
        }
        let rotated = rotate(&one_row(&q), layout, 10_000.0, 12_345);
        assert!((rotated.row(0).dot(&rotated.row(0)) - q.dot(&q)).abs() < 1e-12);
    }
}

#[test]
fn the_two_rope_layouts_are_one_rotation_up_to_a_permutation() {
    let dim = 12;
    let x = Array2::from_shape_fn((5, dim), |(r, c)| ((r * 7 + c * 3) % 11) as f64 - 5.0);
    // Interleaved position 2i holds what half position i holds; 2i+1 holds i + dim/2.
    let to_half = |a: &Array2<f64>| {
        Array2::from_shape_fn(a.dim(), |(r, c)| {
            let (i, second) = (c % (dim / 2), c >= dim / 2);
            a[[r, 2 * i + usize::from(second)]]
        })
    };
    let interleaved = rotate(&x, PairLayout::Interleaved, 500_000.0, 31);
    let half = rotate(&to_half(&x), PairLayout::Half, 500_000.0, 31);
    let difference = (&to_half(&interleaved) - &half).mapv(f64::abs);
    assert!(difference.iter().all(|&d| d < 1e-12));
}

#[test]
fn rope_angles_are_the_rotation_rope_apply_performs() {
    let p = RopeParams {
        seq: 6,
        dim: 4,
        base: 10.0,
        start: 2,
    };
    let angles = rope::angles(&p).unwrap();
    // Rotating the unit vector (1, 0) of pair i gives (cos, sin) of that pair's angle.
    let e0 = Array2::from_shape_fn((6, 4), |(_, c)| if c == 0 { 1.0 } else { 0.0 });
    let rotated = rotate(&e0, PairLayout::Interleaved, 10.0, 2);
    for r in 0..6 {
        assert!((rotated[[r, 0]] - angles[[r, 0]].cos()).abs() < 1e-15);
        assert!((rotated[[r, 1]] - angles[[r, 0]].sin()).abs() < 1e-15);
    }
}

#[test]
fn rope_long_term_decay_starts_at_its_maximum_and_falls() {
    // At r = 0 every S_j = j, so the bound is (1/(d/2)) Σ_{j=1}^{d/2} j = (d/2 + 1) / 2.
    let dim = 128;
    let decay = rope::long_term_decay(dim, 10_000.0, &[0.0, 10.0, 100.0, 1000.0]).unwrap();
    assert!((decay[0] - 32.5).abs() < 1e-12);
    assert!(decay[0] > decay[1] && decay[1] > decay[2] && decay[2] > decay[3]);
    // An independent evaluation of the same sum with complex numbers written out.
    let theta = rope::inv_freq(dim, 10_000.0).unwrap();
    let r = 37.0;
    let mut partial = (0.0f64, 0.0f64);
    let mut sum = 0.0;
    for &t in theta.iter() {
        partial = (partial.0 + (r * t).cos(), partial.1 + (r * t).sin());
        sum += (partial.0 * partial.0 + partial.1 * partial.1).sqrt();
    }
    let at_37 = rope::long_term_decay(dim, 10_000.0, &[r]).unwrap()[0];
    assert!((at_37 - sum / 64.0).abs() < 1e-12);
}

#[test]
fn alibi_slopes_for_powers_of_two_are_geometric() {
    let expected: Vec<f64> = (1..=8).map(|k| 2f64.powi(-k)).collect();
    assert_eq!(alibi::slopes(8).unwrap(), expected);
    let sixteen: Vec<f64> = (1..=16).map(|k| 2f64.powf(-0.5 * k as f64)).collect();
    for (a, e) in alibi::slopes(16).unwrap().iter().zip(sixteen) {
        // The reference multiplies powers of a rounded ratio: a few ulps, growing with h.
        assert!((a - e).abs() < 4e-15 * e);
    }
}

#[test]
fn alibi_rows_mask_the_future_in_causal_mode_only() {
    let causal = AlibiParams {
        heads: 4,
        seq: 9,
        mode: AlibiMode::Causal,
    };
    let symmetric = AlibiParams {
        mode: AlibiMode::Symmetric,
        ..causal
    };
    let (c, s) = (
        alibi::bias(&causal).unwrap(),
        alibi::bias(&symmetric).unwrap(),
    );
    for ((h, i, j), &value) in c.indexed_iter() {
        if j > i {
            assert_eq!(value, f64::NEG_INFINITY);
        } else {
            assert_eq!(value, s[[h, i, j]]);
        }
        assert_eq!(s[[h, i, j]], s[[h, j, i]]);
    }
    assert_eq!(
        alibi::bias_head(&causal, 2).unwrap(),
        c.index_axis(Axis(0), 2)
    );
}

#[test]
fn two_dimensional_tables_are_symmetric_with_a_zero_diagonal() {
    let g = GridParams {
        grid_h: 3,
        grid_w: 5,
    };
    for metric in [
        DistanceMetric::Euclidean,
        DistanceMetric::Manhattan,
        DistanceMetric::Chebyshev,
    ] {
        let d = grid::patch_distance(&g, metric).unwrap();
        assert_eq!(d, d.t());
        assert!(d.diag().iter().all(|&v| v == 0.0));
    }
    let bias = alibi::bias_2d(&Alibi2dParams { heads: 5, grid: g }).unwrap();
    let euclidean = grid::patch_distance(&g, DistanceMetric::Euclidean).unwrap();
    for (h, slope) in alibi::slopes(5).unwrap().into_iter().enumerate() {
        let head = bias.index_axis(Axis(0), h);
        assert_eq!(head, head.t());
        assert_eq!(
            head,
            euclidean.mapv(|d| if d == 0.0 { 0.0 } else { -slope * d })
        );
    }
}

#[test]
fn sincos_2d_halves_are_1d_encodings_of_column_then_row() {
    let g = GridParams {
        grid_h: 4,
        grid_w: 3,
    };
    let table = grid::sincos_2d(&SinCos2dParams {
        grid: g,
        dim: 16,
        base: 10_000.0,
        ..Default::default()
    })
    .unwrap();
    // A 1D split sinusoidal table of width 8 has omega_k = base^(-2k/8): MAE's 1D encoding.
    let one_d = sinusoidal::table(&SinusoidalParams {
        seq: 4,
        dim: 8,
        layout: PairLayout::Half,
        ..Default::default()
    })
    .unwrap();
    for k in 0..g.patches() {
        let (x, y) = (k % 3, k / 3);
        for c in 0..8 {
            assert!((table[[k, c]] - one_d[[x, c]]).abs() < 1e-15);
            assert!((table[[k, 8 + c]] - one_d[[y, c]]).abs() < 1e-15);
        }
    }
}

#[test]
fn axial_rope_is_mixed_rope_with_frequencies_on_one_axis_each() {
    let p = AxialParams {
        grid: GridParams {
            grid_h: 3,
            grid_w: 4,
        },
        dim: 16,
        theta: 100.0,
        ..Default::default()
    };
    let f = Array1::from(p.frequencies());
    let zeros = Array1::<f64>::zeros(4);
    let mut freqs = Array2::<f64>::zeros((2, 8));
    freqs.slice_mut(s![0, ..4]).assign(&f);
    freqs.slice_mut(s![1, 4..]).assign(&f);
    freqs.slice_mut(s![1, ..4]).assign(&zeros);
    let mixed = rope2d::mixed_angles(&p.grid, freqs.view()).unwrap();
    assert_eq!(rope2d::axial_angles(&p).unwrap(), mixed);
}

#[test]
fn patch_similarities_are_mean_cosines_of_the_tables_themselves() {
    use poslab::encoding::similarity2d::{self, PatchEncoding, PatchSimilarityParams};
    let grid = GridParams {
        grid_h: 3,
        grid_w: 5,
    };
    let patches = grid.patches();
    // MAE: PE[q]·PE[p] / (dim/2), from the sin-cos table's rows.
    let mae = grid::sincos_2d(&SinCos2dParams {
        grid,
        dim: 16,
        base: 10_000.0,
        ..Default::default()
    })
    .unwrap();
    let similarity = similarity2d::table(&PatchSimilarityParams {
        grid,
        encoding: PatchEncoding::SinCos {
            dim: 16,
            base: 10_000.0,
        },
    })
    .unwrap();
    for q in 0..patches {
        assert!((similarity[[q, q]] - 1.0).abs() < 1e-12);
        for p in 0..patches {
            let by_rows = mae.row(q).dot(&mae.row(p)) / 8.0;
            assert!((similarity[[q, p]] - by_rows).abs() < 1e-12, "({q}, {p})");
        }
    }
    // RoPE, axial and mixed: the mean cosine of the angle differences of the angle tables.
    let axial = AxialParams {
        grid,
        dim: 16,
        theta: 100.0,
        ..Default::default()
    };
    let freqs = similarity2d::random_mixed_freqs(16, 100.0, 7).unwrap();
    for (angles, encoding) in [
        (
            rope2d::axial_angles(&axial).unwrap(),
            PatchEncoding::AxialRope {
                dim: 16,
                theta: 100.0,
            },
        ),
        (
            rope2d::mixed_angles(&grid, freqs.view()).unwrap(),
            PatchEncoding::MixedRope {
                freqs: freqs.clone(),
            },
        ),
    ] {
        let table = similarity2d::table(&PatchSimilarityParams { grid, encoding }).unwrap();
        assert_eq!(table, table.t());
        for q in 0..patches {
            for p in 0..patches {
                let n = angles.ncols() as f64;
                let mean: f64 = angles
                    .row(q)
                    .iter()
                    .zip(angles.row(p))
                    .map(|(a, b)| (a - b).cos())
                    .sum::<f64>()
                    / n;
                assert!((table[[q, p]] - mean).abs() < 1e-12);
            }
        }
    }
    // rope-vit's initialisation: the two halves a quarter turn apart, magnitudes theta^(-4k/dim).
    for k in 0..4 {
        let (a, b) = (
            (freqs[[0, k]], freqs[[1, k]]),
            (freqs[[0, 4 + k]], freqs[[1, 4 + k]]),
        );
        assert!((a.0 * b.0 + a.1 * b.1).abs() < 1e-12);
        assert!((a.0.hypot(a.1) - 100f64.powf(-((4 * k) as f64) / 16.0)).abs() < 1e-12);
    }
}

#[test]
fn relative_indices_mirror_around_the_diagonal() {
    let clip = relative::relative_clip(&RelativeClipParams {
        seq: 30,
        max_relative: 4,
    })
    .unwrap();
    for ((i, j), &v) in clip.indexed_iter() {
        assert_eq!(v + clip[[j, i]], 8);
    }
    let decoder = relative::t5_buckets(&T5BucketParams {
        seq: 200,
        bidirectional: false,
        ..Default::default()
    })
    .unwrap();
    for ((i, j), &bucket) in decoder.indexed_iter() {
        // A decoder never looks ahead: every later key shares bucket 0.
        if j >= i {
            assert_eq!(bucket, 0);
        }
        // Buckets never decrease with distance, and stay below num_buckets.
        if j + 1 < i {
            assert!(decoder[[i, j + 1]] <= bucket && bucket < 32);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn sinusoidal_rows_keep_their_norm_and_offset_products(
        seq in 2usize..64,
        pairs in 1usize..24,
        base in 2.0f64..1e6,
        start in 0u64..1_000_000,
        split in any::<bool>(),
        t2t in any::<bool>(),
    ) {
        let p = SinusoidalParams {
            seq,
            dim: 2 * pairs,
            base,
            start,
            layout: if split { PairLayout::Half } else { PairLayout::Interleaved },
            spacing: if t2t { Spacing::T2t } else { Spacing::Vaswani },
            ..SinusoidalParams::default()
        };
        let pe = sinusoidal::table(&p).unwrap();
        prop_assert_eq!(pe.dim(), (seq, 2 * pairs));
        let decay = sinusoidal::dot_decay(&p, 0).unwrap();
        for (j, row) in pe.rows().into_iter().enumerate() {
            prop_assert!((row.dot(&row) - pairs as f64).abs() < 1e-9);
            // Tolerance grows with the position: f64 rounding of p * w in the table itself.
            let tolerance = 1e-15 * (start + seq as u64) as f64 * pairs as f64 + 1e-12;
            prop_assert!((pe.row(0).dot(&row) - decay[j]).abs() < tolerance);
        }
    }

    #[test]
    fn rope_is_a_relative_rotation_in_both_layouts(
        pairs in 1usize..16,
        m in 0u64..100_000,
        n in 0u64..100_000,
        shift in 0u64..100_000,
        half in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let dim = 2 * pairs;
        let layout = if half { PairLayout::Half } else { PairLayout::Interleaved };
        let value = |k: usize| (((seed >> (k % 60)) ^ (k as u64 * 2654435761)) % 1000) as f64 / 500.0 - 1.0;
        let q = Array1::from_shape_fn(dim, value);
        let k = Array1::from_shape_fn(dim, |i| value(i + 31));
        let score = |a: u64, b: u64| {
            let qa = rotate(&one_row(&q), layout, 10_000.0, a);
            let kb = rotate(&one_row(&k), layout, 10_000.0, b);
            qa.row(0).dot(&kb.row(0))
        };
        let tolerance = 1e-11 * (m.max(n) + shift) as f64 + 1e-12;
        prop_assert!((score(m, n) - score(m + shift, n + shift)).abs() < tolerance);
        let rotated = rotate(&one_row(&q), layout, 10_000.0, m);
        prop_assert!((rotated.row(0).dot(&rotated.row(0)) - q.dot(&q)).abs() < 1e-12);
    }

    #[test]
    fn alibi_slopes_halve_every_power_of_two_heads(heads in 1usize..300) {
        let slopes = alibi::slopes(heads).unwrap();
        prop_assert_eq!(slopes.len(), heads);
        let c = 1usize << heads.ilog2();
        // The first c slopes are 2^(-8(h+1)/c); the rest interleave between them.
        for (h, &m) in slopes.iter().enumerate().take(c) {
            prop_assert!((m - 2f64.powf(-8.0 * (h + 1) as f64 / c as f64)).abs() < 1e-15);
        }
        for (k, &m) in slopes.iter().enumerate().skip(c) {
            let extra = k - c;
            let expected = 2f64.powf(-4.0 * (2 * extra + 1) as f64 / c as f64);
            prop_assert!((m - expected).abs() < 1e-15);
        }
        prop_assert!(slopes.iter().all(|&m| m > 0.0 && m < 1.0));
    }

    #[test]
    fn patch_distances_satisfy_metric_inequalities(h in 1usize..9, w in 1usize..9) {
        let g = GridParams { grid_h: h, grid_w: w };
        let e = grid::patch_distance(&g, DistanceMetric::Euclidean).unwrap();
        let m = grid::patch_distance(&g, DistanceMetric::Manhattan).unwrap();
        let c = grid::patch_distance(&g, DistanceMetric::Chebyshev).unwrap();
        prop_assert_eq!(e.dim(), (h * w, h * w));
        for ((a, b), &euclid) in e.indexed_iter() {
            prop_assert!(c[[a, b]] <= euclid && euclid <= m[[a, b]]);
            prop_assert!(m[[a, b]] <= 2.0 * c[[a, b]]);
            let (ax, ay) = (a % w, a / w);
            let (bx, by) = (b % w, b / w);
            prop_assert_eq!(m[[a, b]], (ax.abs_diff(bx) + ay.abs_diff(by)) as f64);
        }
    }
}

/// The block statistics of an ALiBi matrix, in closed form, equal a walk over every cell of
/// the block (small blocks) and over every row (large ones), in both modes, for blocks above,
/// across and below the diagonal.
#[test]
fn alibi_block_distances_in_closed_form_equal_a_walk_over_the_block() {
    use poslab::encoding::alibi::{BlockDistances, block_distances};
    // Row by row: the runs of distances on each side of the diagonal, summed one cell at a
    // time for narrow blocks.
    let walk = |mode: AlibiMode, rows: std::ops::Range<usize>, cols: std::ops::Range<usize>| {
        let mut out = BlockDistances {
            min: u64::MAX,
            ..Default::default()
        };
        for i in rows {
            for j in cols.clone() {
                if mode == AlibiMode::Causal && j > i {
                    continue;
                }
                let d = i.abs_diff(j) as u64;
                out.count += 1;
                out.sum += u128::from(d);
                out.min = out.min.min(d);
                out.max = out.max.max(d);
            }
        }
        if out.count == 0 {
            out.min = 0;
        }
        out
    };
    let mut random = poslab::encoding::random::SplitMix64::new(11);
    let mut below = |n: u64| (random.next_u64() % n) as usize;
    for _ in 0..3000 {
        let r0 = below(300);
        let c0 = below(300);
        let rows = r0..r0 + below(80);
        let cols = c0..c0 + below(80);
        for mode in [AlibiMode::Causal, AlibiMode::Symmetric] {
            assert_eq!(
                block_distances(mode, rows.clone(), cols.clone()),
                walk(mode, rows.clone(), cols.clone()),
                "{mode:?} rows {rows:?} cols {cols:?}"
            );
        }
    }
    // The whole causal matrix of 2^30 positions as one block: row i holds distances 0..=i,
    // n(n+1)/2 cells in all, summing to (n-1)n(n+1)/6.
    let n: u128 = 1 << 30;
    let whole = block_distances(AlibiMode::Causal, 0..n as usize, 0..n as usize);
    assert_eq!(u128::from(whole.count), n * (n + 1) / 2);
    assert_eq!(whole.sum, (n - 1) * n * (n + 1) / 6);
    assert_eq!((whole.min, whole.max), (0, (n - 1) as u64));
}
