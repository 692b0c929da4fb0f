//! The precision lab's tables against independent computations: rounding to bfloat16 and
//! float16 emulated here bit by bit (round to nearest, ties to even), the cache error composed
//! from the float32 cache PyTorch makes (`rope-cos --arith torch-f32`, itself checked bit for
//! bit elsewhere) and the exact cache, and the score drift recomputed here from those caches,
//! with the exact score from rotating q and k at their own positions.

mod common;

use egui_kittest::kittest::Queryable;
use ndarray::{ArrayD, Ix1, Ix2};
use poslab::encoding::PairLayout;
use poslab::encoding::precision::{
    CacheErrorParams, ComputeType, ScoreDriftParams, cache_error, score_drift,
};
use poslab::encoding::rope::{CachePart, RopeParams};
use poslab::encoding::rope_scaling::RopeFrequencies;
use poslab::encoding::torch_f32::Arithmetic;
use poslab::engine::{TableSpec, cpu};

/// bfloat16 from float32 by its bits: add half of the dropped part (ties to even), keep the top
/// 16 bits.
fn bf16_by_bits(x: f32) -> f32 {
    let bits = x.to_bits();
    let lsb = (bits >> 16) & 1;
    f32::from_bits(bits.wrapping_add(0x7fff + lsb) & 0xffff_0000)
}

/// float16 from float32 by scaling: 11 significant bits (fewer below 2^-14), ties to even.
fn f16_by_scaling(x: f32) -> f32 {
    let x = f64::from(x);
    if x == 0.0 || !x.is_finite() {
        return x as f32;
    }
    let exponent = x.abs().log2().floor().max(-14.0);
    let spacing = 2f64.powf(exponent - 10.0);
    let steps = x / spacing;
    let mut rounded = steps.round();
    if (steps - steps.trunc()).abs() == 0.5 && rounded % 2.0 != 0.0 {
        rounded -= steps.signum();
    }
    let value = rounded * spacing;
    if value.abs() > 65504.0 {
        return (f64::INFINITY * value.signum()) as f32;
    }
    value as f32
}

#[test]
fn compute_types_round_as_independent_emulations_do() {
    let mut random = poslab::encoding::random::SplitMix64::new(3);
    let mut values: Vec<f32> = (0..20_000)
        .map(|_| ((random.next_unit() - 0.5) * 2f64.powf(40.0 * random.next_unit() - 20.0)) as f32)
        .collect();
    // Ties: halfway between two bfloat16 (257 = 256 + 1 between 256 and 258) and float16 values.
    values.extend([
        257.0,
        259.0,
        2049.0,
        2051.0,
        1.0 + 2f32.powi(-8),
        1.0 + 3.0 * 2f32.powi(-8),
    ]);
    for v in values {
        assert_eq!(ComputeType::Bf16.round(v), bf16_by_bits(v), "bf16 of {v}");
        assert_eq!(ComputeType::F16.round(v), f16_by_scaling(v), "f16 of {v}");
        assert_eq!(ComputeType::F32.round(v), v);
    }
    assert_eq!(ComputeType::Bf16.round(257.0), 256.0);
    assert_eq!(ComputeType::Bf16.first_collision(), 257);
    assert_eq!(ComputeType::F16.round(2049.0), 2048.0);
    assert_eq!(ComputeType::F16.first_collision(), 2049);
}

fn rope(seq: usize, dim: usize, base: f64, start: u64) -> RopeParams {
    RopeParams {
        seq,
        dim,
        base,
        start,
    }
}

/// A `[seq, dim]` cache (half layout) from the CPU engine.
fn cache(params: RopeParams, part: CachePart, arith: Arithmetic) -> ndarray::Array2<f64> {
    let spec = TableSpec::RopeCache {
        params,
        freqs: RopeFrequencies::default(),
        layout: PairLayout::Half,
        part,
    };
    let table: ArrayD<f64> = cpu::compute_arith(&spec, arith).unwrap().into_real();
    table.into_dimensionality::<Ix2>().unwrap()
}

#[test]
fn the_cache_error_is_pytorchs_float32_cache_in_the_type_minus_the_exact_cache() {
    let params = rope(600, 32, 10_000.0, 5);
    let torch = cache(params, CachePart::Cos, Arithmetic::TORCH);
    let exact = cache(params, CachePart::Cos, Arithmetic::Exact);
    for (arith, round) in [
        (ComputeType::F32, (|v: f32| v) as fn(f32) -> f32),
        (ComputeType::Bf16, bf16_by_bits),
        (ComputeType::F16, f16_by_scaling),
    ] {
        let error = cache_error(&CacheErrorParams {
            rope: params,
            freqs: RopeFrequencies::default(),
            arith,
            positions_in: None,
        })
        .unwrap();
        assert_eq!(error.dim(), (600, 16));
        for ((row, pair), &e) in error.indexed_iter() {
            let made = f64::from(round(torch[[row, pair]] as f32));
            let expected = made - exact[[row, pair]];
            assert!(
                (e - expected).abs() <= 1e-12,
                "{arith:?} row {row} pair {pair}: {e} against {expected}"
            );
        }
    }
}

#[test]
fn positions_cast_to_bfloat16_collide_above_256() {
    let params = rope(600, 16, 10_000.0, 0);
    let exact = cache(params, CachePart::Cos, Arithmetic::Exact);
    let error = cache_error(&CacheErrorParams {
        rope: params,
        freqs: RopeFrequencies::default(),
        arith: ComputeType::F32,
        positions_in: Some(ComputeType::Bf16),
    })
    .unwrap();
    let made = |row: usize, pair: usize| error[[row, pair]] + exact[[row, pair]];
    for pair in 0..8 {
        // 257 reads as 256, 259 as 260 (ties to even), 258 stays.
        assert!((made(257, pair) - made(256, pair)).abs() < 1e-12);
        assert!((made(259, pair) - made(260, pair)).abs() < 1e-12);
    }
    // Below 256 every position is its own: the fastest pair tells 255 from 256.
    assert!((made(255, 0) - made(256, 0)).abs() > 1e-3);
    // Far out the cast position is off by up to 2 positions at 512 and more: the fastest pair's
    // cos is wrong by about that many radians' worth.
    let worst = (300..600)
        .map(|row| error[[row, 0]].abs())
        .fold(0.0, f64::max);
    assert!(worst > 0.5, "{worst}");
}

/// The exact score of `q` at `m` and `k` at `n`, rotating each by the exact caches (not by the
/// offset formula the table uses).
fn exact_score_at(
    q: &[f32],
    k: &[f32],
    m: usize,
    n: usize,
    cos: &ndarray::Array2<f64>,
    sin: &ndarray::Array2<f64>,
) -> f64 {
    let half = q.len() / 2;
    let rotate = |x: &[f32], p: usize| -> Vec<f64> {
        (0..x.len())
            .map(|j| {
                let i = j % half;
                let (a, b) = (f64::from(x[i]), f64::from(x[i + half]));
                if j < half {
                    a * cos[[p, i]] - b * sin[[p, i]]
                } else {
                    b * cos[[p, i]] + a * sin[[p, i]]
                }
            })
            .collect()
    };
    rotate(q, m)
        .iter()
        .zip(rotate(k, n))
        .map(|(a, b)| a * b)
        .sum()
}

/// The score Hugging Face's `apply_rotary_pos_emb` gives in the type `round` rounds to, from
/// PyTorch's float32 caches cast to the type.
#[allow(clippy::too_many_arguments)]
fn model_score(
    q: &[f32],
    k: &[f32],
    m: usize,
    n: usize,
    cos: &ndarray::Array2<f64>,
    sin: &ndarray::Array2<f64>,
    round: fn(f32) -> f32,
) -> f32 {
    let half = q.len() / 2;
    let rotate = |x: &[f32], p: usize| -> Vec<f32> {
        let mut out = vec![0.0f32; x.len()];
        for i in 0..half {
            let (c, s) = (round(cos[[p, i]] as f32), round(sin[[p, i]] as f32));
            let (a, b) = (x[i], x[i + half]);
            out[i] = round(round(a * c) + round(-b * s));
            out[i + half] = round(round(b * c) + round(a * s));
        }
        out
    };
    let (qr, kr) = (rotate(q, m), rotate(k, n));
    let mut dot = 0.0f32;
    for (a, b) in qr.iter().zip(&kr) {
        dot += a * b;
    }
    round(dot)
}

#[test]
fn the_score_drift_is_the_models_score_minus_the_exact_one() {
    let (seq, dim, offset) = (300usize, 16usize, 16u64);
    let positions = rope(seq + offset as usize, dim, 10_000.0, 0);
    let torch_cos = cache(positions, CachePart::Cos, Arithmetic::TORCH);
    let torch_sin = cache(positions, CachePart::Sin, Arithmetic::TORCH);
    let cos = cache(positions, CachePart::Cos, Arithmetic::Exact);
    let sin = cache(positions, CachePart::Sin, Arithmetic::Exact);
    for (arith, round) in [
        (ComputeType::F32, (|v: f32| v) as fn(f32) -> f32),
        (ComputeType::Bf16, bf16_by_bits),
        (ComputeType::F16, f16_by_scaling),
    ] {
        for seed in [None, Some(11)] {
            let params = ScoreDriftParams {
                seq,
                dim,
                base: 10_000.0,
                offset,
                arith,
                seed,
            };
            let (q, k) = params.vectors();
            let drift = score_drift(&params).unwrap();
            for n in 0..seq {
                let m = n + offset as usize;
                let exact = exact_score_at(&q, &k, m, n, &cos, &sin);
                let model = model_score(&q, &k, m, n, &torch_cos, &torch_sin, round);
                let expected = f64::from(model) - exact;
                assert!(
                    (drift[n] - expected).abs() <= 1e-9,
                    "{arith:?} {seed:?} key {n}: {} against {expected}",
                    drift[n]
                );
            }
        }
    }
}

#[test]
fn bfloat16_drifts_ten_times_more_than_float32_which_stays_within_its_angles() {
    let (seq, dim, offset) = (65_536usize, 128usize, 16u64);
    let drift = |arith| -> ndarray::Array1<f64> {
        score_drift(&ScoreDriftParams {
            seq,
            dim,
            base: 10_000.0,
            offset,
            arith,
            seed: None,
        })
        .unwrap()
    };
    let (f32_drift, bf16_drift) = (drift(ComputeType::F32), drift(ComputeType::Bf16));
    let far = |d: &ndarray::Array1<f64>| {
        d.iter()
            .skip(seq - 4096)
            .fold(0.0f64, |m, v| m.max(v.abs()))
    };
    assert!(
        far(&bf16_drift) >= 10.0 * far(&f32_drift),
        "bf16 {} f32 {}",
        far(&bf16_drift),
        far(&f32_drift)
    );
    // float32: each pair's angle p·ω is off by its float32 product's rounding and by the float32
    // frequency's (p times it); with q = k = ones a pair contributes 2 cos(angle difference), so
    // it moves by at most 2 (|Δ_m| + |Δ_n|), plus the rounding of cos, sin, the products and
    // the float32 sum of 128 terms.
    let freqs = RopeFrequencies::default();
    let torch_freqs = freqs.inv_freq_torch(dim, 10_000.0, seq, Arithmetic::TORCH_MODE);
    let exact_freqs = freqs.inv_freq(dim, 10_000.0, seq);
    let angle_error = |p: u64, i: usize| {
        let made = f64::from((p as f32) * torch_freqs[i]);
        (made - p as f64 * exact_freqs[i]).abs()
    };
    let epsilon = 2f64.powi(-24);
    for n in (0..seq).step_by(97) {
        let m = n as u64 + offset;
        let bound: f64 = (0..dim / 2)
            .map(|i| 2.0 * (angle_error(m, i) + angle_error(n as u64, i)) + 16.0 * epsilon)
            .sum::<f64>()
            + (dim as f64) * (dim as f64) * epsilon;
        assert!(
            f32_drift[n].abs() <= bound,
            "key {n}: float32 drift {} beyond its angles' {bound}",
            f32_drift[n]
        );
    }
}

#[test]
fn the_lab_tables_on_the_command_line() {
    let folder = tempfile::tempdir().unwrap();
    let out = folder.path().join("t.npy").display().to_string();
    let run = common::run_poslab;
    let (status, text) = run(&[
        "table",
        "rope-cache-error",
        "--seq",
        "64",
        "--dim",
        "16",
        "--arith",
        "bf16",
        "-o",
        &out,
    ]);
    assert_eq!(status, 0, "{text}");
    let (table, _) =
        poslab::import::tables::read_table_typed(std::path::Path::new(&out), None, u64::MAX)
            .unwrap();
    assert_eq!(table.shape(), &[64, 8]);
    let (status, text) = run(&[
        "table",
        "rope-score-drift",
        "--seq",
        "64",
        "--dim",
        "16",
        "--offset",
        "4",
        "--seed",
        "2",
        "-o",
        &out,
    ]);
    assert_eq!(status, 0, "{text}");
    let (table, _) =
        poslab::import::tables::read_table_typed(std::path::Path::new(&out), None, u64::MAX)
            .unwrap();
    assert_eq!(table.into_dimensionality::<Ix1>().unwrap().len(), 64);
    for (args, message) in [
        (
            vec![
                "table",
                "rope-cache-error",
                "--seq",
                "8",
                "--dim",
                "8",
                "--backend",
                "gpu",
            ],
            "computed by the CPU engine only",
        ),
        (
            vec![
                "table",
                "rope-score-drift",
                "--seq",
                "8",
                "--dim",
                "8",
                "--arith",
                "exact",
            ],
            "--arith exact does not apply to rope-score-drift",
        ),
        (
            vec![
                "table",
                "sinusoidal",
                "--seq",
                "8",
                "--dim",
                "8",
                "--arith",
                "bf16",
            ],
            "--arith bf16 applies to rope-cache-error and rope-score-drift",
        ),
        (
            vec![
                "table",
                "rope-cache-error",
                "--seq",
                "8",
                "--dim",
                "8",
                "--positions-in",
                "f32",
            ],
            "positions are float32 already",
        ),
        (
            vec![
                "table",
                "rope-score-drift",
                "--seq",
                "8",
                "--dim",
                "8",
                "--offset",
                "16777215",
            ],
            "must stay below 2^24",
        ),
        (
            vec![
                "table",
                "rope-score-drift",
                "--seq",
                "16000000",
                "--dim",
                "128",
            ],
            "at most 2^30",
        ),
    ] {
        let mut args = args;
        args.extend(["-o", &out]);
        let (status, text) = run(&args);
        assert_eq!(status, 2, "{args:?}: {text}");
        assert!(text.contains(message), "{args:?}: {text}");
    }
}

#[test]
fn the_precision_lab_draws_both_charts_and_exports_its_figure() {
    let folder = tempfile::tempdir().unwrap();
    let launch = poslab::cli::app::AppLaunch {
        view: Some(poslab::views::ViewKind::Precision),
        seq: Some(4096),
        dim: Some(64),
        ..Default::default()
    };
    let mut harness = common::app_harness_with(|app| app.launched(&launch));
    harness.run();
    let (settings, shown) = harness
        .state()
        .precision_view()
        .shown()
        .cloned()
        .expect("the curves");
    assert_eq!(
        (settings.seq, settings.dim, settings.offset),
        (4096, 64, 16)
    );
    assert_eq!(shown.drift.len(), 3);
    assert_eq!(shown.cache.len(), 4);
    assert_eq!(
        shown.collisions,
        vec![(ComputeType::Bf16, 257), (ComputeType::F16, 2049)]
    );
    // Each curve point is the table's value at its position: the bfloat16 drift, every key up
    // to 600, then keys spread evenly over the decades up to the last.
    let drift = score_drift(&settings.score_params(ComputeType::Bf16)).unwrap();
    let bf16 = shown
        .drift
        .iter()
        .find(|c| c.compute == ComputeType::Bf16)
        .expect("a bfloat16 curve");
    for point in &bf16.points {
        assert_eq!(point[1], drift[point[0] as usize].abs());
    }
    let positions = poslab::scene::precision::sampled_positions(4096);
    assert!(positions.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(positions[..600], (0..600).collect::<Vec<_>>()[..]);
    assert_eq!(positions.last(), Some(&4095));
    assert!(
        harness
            .query_by_label_contains("bfloat16 positions collide from 257")
            .is_some()
    );
    common::pane_snapshot(&mut harness, "views/precision");
    // Random q and k: the curves follow.
    harness.get_by_label("random q and k").click();
    harness.run();
    let (settings, _) = harness.state().precision_view().shown().cloned().unwrap();
    assert_eq!(settings.seed, Some(0));
    let export = harness.state().view_export().expect("an export");
    let style = poslab::export::figure::FigureStyle::default();
    let svg = common::assert_command_line_figure_equals_export(
        &export,
        &style,
        folder.path(),
        "precision",
    );
    assert!(svg.contains("q and k from seed 0"), "the figure's title");
}
