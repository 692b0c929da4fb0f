//! Checking and identifying tables computed elsewhere: the right convention is found for
//! tables in every convention (with 1e-6 noise), and for small tables typed in by hand; random
//! data is no match; `poslab check` and `poslab identify` exit 0, 1 or 2 as documented; bad and
//! hostile files get a message, never a crash.

mod common;

use common::run_poslab as run;
use ndarray::{Array2, ArrayD, IxDyn, array};
use poslab::check::identify::identify;
use poslab::check::{Tolerance, compare};
use poslab::encoding::PairLayout;
use poslab::encoding::alibi::{AlibiMode, AlibiParams};
use poslab::encoding::random::SplitMix64;
use poslab::encoding::rope::{self, RopeParams};
use poslab::encoding::sinusoidal::{SinusoidalParams, Spacing};
use poslab::engine::{Table, TableSpec, cpu};
use poslab::import::StoredFloat;
use poslab::import::tables::{TableFormat, parse_table};

fn real(spec: &TableSpec) -> ArrayD<f64> {
    match cpu::compute(spec).unwrap() {
        Table::Real(values) => values,
        Table::Index(values) => values.mapv(f64::from),
    }
}

/// The table with uniform noise of at most `amplitude` added (not to infinities).
fn noisy(table: &ArrayD<f64>, amplitude: f64, seed: u64) -> ArrayD<f64> {
    let mut random = SplitMix64::new(seed);
    table.mapv(|v| {
        if v.is_finite() {
            v + amplitude * (2.0 * random.next_unit() - 1.0)
        } else {
            v
        }
    })
}

/// The table as a float32 file holds it.
fn as_f32(table: &ArrayD<f64>) -> ArrayD<f64> {
    table.mapv(|v| f64::from(v as f32))
}

fn assert_identified(table: &ArrayD<f64>, expected: &[&str]) {
    let identification = identify(&noisy(table, 1e-6, 7), Tolerance::default(), None);
    let report = identification.report();
    assert!(identification.found(), "not identified:\n{report}");
    let best = &identification.best().unwrap().description;
    for part in expected {
        assert!(best.contains(part), "expected '{part}' in:\n{report}");
    }
}

#[test]
fn sinusoidal_tables_in_every_convention_are_identified() {
    for (layout, layout_name) in [
        (PairLayout::Interleaved, "interleaved layout"),
        (PairLayout::Half, "split layout"),
    ] {
        for (spacing, base) in [(Spacing::Vaswani, 10_000.0), (Spacing::T2t, 500_000.0)] {
            for start in [0u64, 37] {
                let params = SinusoidalParams {
                    seq: 60,
                    dim: 24,
                    base,
                    start,
                    layout,
                    spacing,
                    ..SinusoidalParams::default()
                };
                let table = real(&TableSpec::Sinusoidal(params));
                let positions = format!("positions {start}..{}", start + 59);
                let base_text = format!("base {base}");
                assert_identified(&table, &[layout_name, "sin first", &base_text, &positions]);
                // Transposed, [dim, seq].
                let transposed = table.t().to_owned();
                assert_identified(&transposed, &[layout_name, &base_text, "transposed"]);
            }
        }
    }
}

#[test]
fn a_cos_first_table_is_identified() {
    let params = SinusoidalParams {
        seq: 50,
        dim: 16,
        ..Default::default()
    };
    let mut table = real(&TableSpec::Sinusoidal(params))
        .into_dimensionality::<ndarray::Ix2>()
        .unwrap();
    for i in 0..8 {
        for row in 0..50 {
            table.swap([row, 2 * i], [row, 2 * i + 1]);
        }
    }
    assert_identified(
        &table.into_dyn(),
        &["interleaved layout", "cos first", "base 10000"],
    );
}

#[test]
fn rope_tables_are_identified() {
    let params = RopeParams {
        seq: 200,
        dim: 32,
        base: 500_000.0,
        start: 5,
    };
    assert_identified(
        &real(&TableSpec::RopeAngles {
            params,
            freqs: Default::default(),
        }),
        &["RoPE angles", "base 500000", "positions 5..204"],
    );
    // Frequencies carry relative noise (float32), not absolute noise: see
    // scaled_inverse_frequencies_are_identified.
    let frequencies = real(&TableSpec::RopeInvFreq {
        dim: 64,
        base: 10_000.0,
        seq: 0,
        freqs: Default::default(),
    });
    let identification = identify(&as_f32(&frequencies), Tolerance::default(), None);
    let best = &identification.best().unwrap().description;
    assert!(identification.found(), "{}", identification.report());
    for part in ["RoPE inverse frequencies", "dim 64", "base 10000"] {
        assert!(best.contains(part), "{part} in {best}");
    }
    // Cos and sin caches as Hugging Face (halves) and Llama-style (pairs) lay them out.
    let angles = rope::angles(&RopeParams { start: 0, ..params }).unwrap();
    for (layout, name) in [
        (PairLayout::Half, "half layout"),
        (PairLayout::Interleaved, "interleaved layout"),
    ] {
        for (function, cache) in [
            (f64::cos as fn(f64) -> f64, "cos cache"),
            (f64::sin, "sin cache"),
        ] {
            let table = Array2::from_shape_fn((200, 32), |(p, col)| {
                function(angles[[p, layout.pair_of_column(col, 32)]])
            });
            assert_identified(&table.into_dyn(), &[cache, name, "base 500000"]);
        }
    }
}

#[test]
fn alibi_and_patch_tables_are_identified() {
    assert_identified(
        &real(&TableSpec::AlibiSlopes { heads: 12 }),
        &["ALiBi slopes of 12 heads"],
    );
    let params = AlibiParams {
        heads: 8,
        seq: 20,
        mode: AlibiMode::Symmetric,
    };
    assert_identified(
        &real(&TableSpec::Alibi { params, head: None }),
        &["8 heads", "symmetric"],
    );
    assert_identified(
        &real(&TableSpec::Alibi {
            params: AlibiParams {
                mode: AlibiMode::Causal,
                ..params
            },
            head: Some(2),
        }),
        &["one head", "causal", "2^-3.000", "head 2 of 8"],
    );
    assert_identified(
        &real(&TableSpec::PatchDistance {
            grid: poslab::encoding::grid::GridParams {
                grid_h: 3,
                grid_w: 5,
            },
            metric: poslab::encoding::grid::DistanceMetric::Manhattan,
        }),
        &["Manhattan distance", "3 x 5 grid"],
    );
}

/// Small tables typed in by hand from the formulas.
#[test]
fn hand_typed_tables_are_identified() {
    // d = 4, base 10000: PE[p] = [sin p, cos p, sin(p/100), cos(p/100)].
    let pe = array![
        [0.0, 1.0, 0.0, 1.0],
        [0.841471, 0.540302, 0.010000, 0.999950],
        [0.909297, -0.416147, 0.019999, 0.999800],
        [0.141120, -0.989992, 0.029996, 0.999550],
    ];
    assert_identified(&pe.into_dyn(), &["sinusoidal", "interleaved", "base 10000"]);
    // RoPE inverse frequencies, d = 8, base 10000, typed exactly (frequencies are compared
    // relative to their size, so absolute noise of 1e-6 would be 0.1% on the last one).
    let identification = identify(
        &array![1.0, 0.1, 0.01, 0.001].into_dyn(),
        Tolerance::default(),
        None,
    );
    let best = &identification.best().unwrap().description;
    assert!(identification.found(), "{}", identification.report());
    for part in ["inverse frequencies", "dim 8", "base 10000"] {
        assert!(best.contains(part), "{part} in {best}");
    }
    // Four ALiBi heads: 2^-2, 2^-4, 2^-6, 2^-8.
    assert_identified(
        &array![0.25, 0.0625, 0.015625, 0.00390625].into_dyn(),
        &["slopes of 4 heads"],
    );
    let ninf = f64::NEG_INFINITY;
    let head = array![[0.0, ninf, ninf], [-0.5, 0.0, ninf], [-1.0, -0.5, 0.0],];
    assert_identified(&head.into_dyn(), &["causal", "slope 0.5", "head 0 of 8"]);
}

/// With d = 2 the one pair turns at base^0 = 1 radian per position whatever the base, so the
/// base cannot be read off the table (it used to find no match at all), and only the table's
/// precision tells a start from one 710 positions earlier (710 positions are 113.00001 turns).
#[test]
fn a_two_column_table_is_identified_with_its_start() {
    for start in [0u64, 1000, 20_000, 31_000] {
        for float32 in [false, true] {
            let rows = 50;
            let mut pe = Array2::<f64>::zeros((rows, 2));
            for row in 0..rows {
                let p = (start + row as u64) as f64;
                pe[[row, 0]] = p.sin();
                pe[[row, 1]] = p.cos();
            }
            let table = if float32 {
                as_f32(&pe.into_dyn())
            } else {
                pe.into_dyn()
            };
            let identification = identify(&table, Tolerance::default(), None);
            let report = identification.report();
            assert!(identification.found(), "start {start}:\n{report}");
            let best = &identification.best().unwrap().description;
            let positions = format!("positions {start}..{}", start + rows as u64 - 1);
            for part in ["sinusoidal", "any base", "d = 2", &positions] {
                assert!(best.contains(part), "expected '{part}' in:\n{report}");
            }
        }
    }
}

/// Hugging Face T5's `_relative_position_bucket(key - query)`, written out here: the log in
/// float32 as torch computes it on a float32 tensor, `math.log(max_distance / max_exact)` in
/// double, truncation towards zero.
fn t5_bucket(relative: i64, bidirectional: bool, num_buckets: i64, max_distance: i64) -> i64 {
    let (mut buckets, mut bucket) = (num_buckets, 0);
    let distance = if bidirectional {
        buckets /= 2;
        if relative > 0 {
            bucket += buckets;
        }
        relative.abs()
    } else {
        (-relative).max(0)
    };
    let max_exact = buckets / 2;
    if distance < max_exact {
        return bucket + distance;
    }
    let log_ratio = (distance as f32 / max_exact as f32).ln();
    let log_range = (max_distance as f64 / max_exact as f64).ln() as f32;
    let large = max_exact + (log_ratio / log_range * (buckets - max_exact) as f32) as i64;
    bucket + large.min(buckets - 1)
}

fn t5_table(seq: usize, bidirectional: bool, num_buckets: i64, max_distance: i64) -> Array2<f64> {
    Array2::from_shape_fn((seq, seq), |(query, key)| {
        t5_bucket(
            key as i64 - query as i64,
            bidirectional,
            num_buckets,
            max_distance,
        ) as f64
    })
}

/// The number after `word` in `text` (up to a space, comma or parenthesis).
fn number_after(text: &str, word: &str) -> Option<i64> {
    let rest = &text[text.find(word)? + word.len()..];
    rest.split([' ', ',', ')']).next()?.parse().ok()
}

/// T5 buckets and clipped offsets (the contract's relative index tables) are identified with
/// their settings, as stored and transposed; where a short table cannot pin `max_distance`,
/// the interval named is exactly the one that gives the same table.
#[test]
fn relative_index_tables_are_identified_with_their_settings() {
    for (seq, bidirectional, buckets, distance) in [
        (300, true, 32, 128),
        (300, false, 32, 128),
        (600, true, 64, 256),
        (1000, false, 64, 500),
    ] {
        let table = t5_table(seq, bidirectional, buckets, distance);
        let direction = if bidirectional {
            "bidirectional"
        } else {
            "unidirectional"
        };
        let settings = format!("--num-buckets {buckets} --max-distance {distance}");
        for (table, transposed) in [(table.clone(), false), (table.reversed_axes(), true)] {
            let identification = identify(&table.into_dyn(), Tolerance::default(), None);
            let report = identification.report();
            assert!(identification.found(), "{report}");
            let best = &identification.best().unwrap().description;
            assert!(best.starts_with("T5 relative position buckets"), "{report}");
            assert!(
                best.contains(direction) && best.contains(&settings),
                "{report}"
            );
            assert_eq!(best.contains("transposed"), transposed, "{report}");
            assert_eq!(
                identification.best().unwrap().comparison.max_abs_error(),
                0.0
            );
        }
    }
    // 16 positions of T5's encoder table reach offset 15 only: several distances give it.
    let short = t5_table(16, true, 32, 128);
    let identification = identify(&short.clone().into_dyn(), Tolerance::default(), None);
    let best = &identification.best().unwrap().description;
    assert!(
        best.contains("--num-buckets 32 --max-distance 128"),
        "{best}"
    );
    let lo = number_after(best, "any --max-distance from ").unwrap();
    let hi = number_after(best, &format!("from {lo} to ")).unwrap();
    assert!(lo < 128 && 128 < hi, "{best}");
    for distance in [lo, (lo + hi) / 2, hi] {
        assert_eq!(
            t5_table(16, true, 32, distance),
            short,
            "{distance} in {best}"
        );
    }
    for distance in [lo - 1, hi + 1] {
        assert_ne!(
            t5_table(16, true, 32, distance),
            short,
            "{distance} in {best}"
        );
    }
    // Shaw et al.: clip(j - i, -K, K) + K.
    for (seq, k) in [(8usize, 2i64), (64, 16), (5, 9)] {
        let table = Array2::from_shape_fn((seq, seq), |(i, j)| {
            ((j as i64 - i as i64).clamp(-k, k) + k) as f64
        });
        let identification = identify(&table.into_dyn(), Tolerance::default(), None);
        let report = identification.report();
        assert!(identification.found(), "{report}");
        let best = &identification.best().unwrap().description;
        assert!(
            best.starts_with("clipped relative offsets")
                && best.contains(&format!("--max-relative {k},")),
            "{report}"
        );
        assert_eq!(
            best.contains("nothing is clipped"),
            k as usize >= seq - 1,
            "{report}"
        );
    }
}

/// CROMA's 2D ALiBi, `-m_h` times the Euclidean distance between patch centres, written out
/// here (slopes `2^(-8(h+1)/n)` for n a power of two): all heads, and one head alone, are
/// named with their grid (and the head's slope with the heads that have it).
#[test]
fn two_dimensional_alibi_is_identified_on_its_grid() {
    let bias = |heads: usize, head: usize, grid_w: usize, query: usize, key: usize| {
        let slope = 2f64.powf(-8.0 * (head + 1) as f64 / heads as f64);
        let (qx, qy) = ((query % grid_w) as f64, (query / grid_w) as f64);
        let (kx, ky) = ((key % grid_w) as f64, (key / grid_w) as f64);
        -slope * ((qx - kx).powi(2) + (qy - ky).powi(2)).sqrt()
    };
    for (heads, grid_h, grid_w) in [(8, 4, 4), (16, 3, 5), (4, 6, 2)] {
        let patches = grid_h * grid_w;
        let table = ndarray::Array3::from_shape_fn((heads, patches, patches), |(h, q, k)| {
            bias(heads, h, grid_w, q, k)
        });
        let identification = identify(&as_f32(&table.into_dyn()), Tolerance::default(), None);
        let report = identification.report();
        assert!(identification.found(), "{report}");
        let best = &identification.best().unwrap().description;
        let expected = format!("2D ALiBi biases (CROMA), {heads} heads, {grid_h} x {grid_w} grid");
        assert!(best.starts_with(&expected), "{report}");
    }
    // Head 3 of 8 (slope 2^-4) on a 3 x 5 grid.
    let head = Array2::from_shape_fn((15, 15), |(q, k)| bias(8, 3, 5, q, k));
    let identification = identify(&head.into_dyn(), Tolerance::default(), None);
    let report = identification.report();
    assert!(identification.found(), "{report}");
    let best = &identification.best().unwrap().description;
    for part in [
        "2D ALiBi bias of one head",
        "slope 0.0625",
        "head 3 of 8",
        "3 x 5 grid",
    ] {
        assert!(best.contains(part), "expected '{part}' in:\n{report}");
    }
}

/// Meta's llama keeps its rotary table as complex numbers (`torch.polar(1, outer(t, freqs))`);
/// `torch.view_as_real` stores them as `[seq, dim/2, 2]`, cos then sin: identified as the
/// sinusoidal table it is, laid out that way, and as the RoPE cache it also is.
#[test]
fn metas_freqs_cis_stored_as_real_pairs_is_identified() {
    let (seq, pairs, start) = (300usize, 32usize, 7u64);
    let table = ndarray::Array3::from_shape_fn((seq, pairs, 2), |(p, i, part)| {
        let theta = 500_000f64.powf(-2.0 * i as f64 / (2 * pairs) as f64);
        let angle = (start + p as u64) as f64 * theta;
        if part == 0 { angle.cos() } else { angle.sin() }
    });
    let identification = identify(&table.into_dyn(), Tolerance::default(), None);
    let report = identification.report();
    assert!(identification.found(), "{report}");
    // The same table is a RoPE cos-sin cache in pairs (torchtune's) from position 7: the two
    // readings are said, first and runner-up.
    let said: String = report.lines().take(2).collect();
    for part in [
        "interleaved layout, cos first, Vaswani spacing, base 500000, d = 64, positions 7..306",
        "[seq, dim/2, 2] (cos, sin) pairs: Meta's freqs_cis",
        "RoPE cos-sin cache, (cos, sin) pairs",
        "positions 7..306 (--start 7), base 500000",
    ] {
        assert!(said.contains(part), "expected '{part}' in:\n{report}");
    }
}

/// Where two readings give the same table, the one that assumes less is named: ALiBi's two
/// slopes 2^-4 and 2^-8 are also RoPE's frequencies at base 256 under linear scaling by 16, and
/// a tensor2tensor table at base 10000 with d = 4 is a Vaswani one at base 10^8.
#[test]
fn of_equal_readings_the_plainer_is_named() {
    let identification = identify(
        &array![0.0625, 0.00390625].into_dyn(),
        Tolerance::default(),
        None,
    );
    let report = identification.report();
    assert!(
        identification
            .best()
            .unwrap()
            .description
            .starts_with("ALiBi slopes of 2 heads"),
        "{report}"
    );
    assert!(
        report.contains("runner-up: RoPE inverse frequencies"),
        "{report}"
    );
    // tensor2tensor with 2 timescales: 1 and 1/10000.
    let pe = Array2::from_shape_fn((8, 4), |(p, c)| {
        let w = if c < 2 { 1.0 } else { 1e-4 };
        let angle = p as f64 * w;
        if c % 2 == 0 { angle.sin() } else { angle.cos() }
    });
    let identification = identify(&pe.into_dyn(), Tolerance::default(), None);
    let report = identification.report();
    let best = &identification.best().unwrap().description;
    assert!(
        best.contains("tensor2tensor spacing") && best.contains("base 10000,"),
        "{report}"
    );
    assert!(
        report.contains("Vaswani spacing, base 100000000"),
        "{report}"
    );
}

#[test]
fn random_data_is_no_match() {
    let mut random = SplitMix64::new(42);
    for shape in [vec![64], vec![50, 16], vec![12, 12], vec![4, 10, 10]] {
        let size = shape.iter().product();
        let values: Vec<f64> = (0..size).map(|_| random.next_unit() * 2.0 - 1.0).collect();
        let table = ArrayD::from_shape_vec(IxDyn(&shape), values).unwrap();
        let identification = identify(&table, Tolerance::default(), None);
        assert!(
            !identification.found(),
            "{shape:?}: {}",
            identification.report()
        );
        assert!(identification.report().starts_with("no match"));
    }
}

#[test]
fn the_comparison_names_the_worst_element() {
    let reference = array![[1.0, 2.0], [3.0, f64::NEG_INFINITY]].into_dyn();
    let mut loaded = reference.clone();
    loaded[[1, 0]] = 3.5;
    let comparison = compare(&reference, &loaded, Tolerance::default());
    let worst = comparison.max_abs.clone().unwrap();
    assert_eq!((worst.index, worst.error), (vec![1, 0], 0.5));
    assert!(!comparison.matches());
    assert_eq!(comparison.outside, 1);
    loaded[[1, 0]] = 3.0;
    loaded[[1, 1]] = 0.0;
    let comparison = compare(&reference, &loaded, Tolerance::default());
    assert_eq!(comparison.infinity_mismatch, Some(vec![1, 1]));
    assert!(!comparison.matches());
    // [n], [1, n] and [n, 1] compare; other shapes do not.
    let row = array![[1.0, 2.0, 3.0]].into_dyn();
    assert!(
        compare(
            &array![1.0, 2.0, 3.0].into_dyn(),
            &row,
            Tolerance::default()
        )
        .matches()
    );
    let other = compare(&array![1.0, 2.0].into_dyn(), &row, Tolerance::default());
    assert!(!other.shapes_match());
    assert!(other.report().starts_with("shape mismatch"));
}

#[test]
fn check_and_identify_exit_as_documented() {
    let folder = tempfile::tempdir().unwrap();
    let file = |name: &str| folder.path().join(name).display().to_string();
    let angles = file("angles.npy");
    let (status, _) = run(&[
        "table",
        "rope-angles",
        "--seq",
        "64",
        "--dim",
        "16",
        "--base",
        "500000",
        "-o",
        &angles,
    ]);
    assert_eq!(status, 0);
    let (status, text) = run(&[
        "check",
        &angles,
        "--as",
        "rope-angles",
        "--seq",
        "64",
        "--dim",
        "16",
        "--base",
        "500000",
    ]);
    assert_eq!(status, 0, "{text}");
    assert!(text.contains("verdict: MATCH"), "{text}");
    let (status, text) = run(&[
        "check",
        &angles,
        "--as",
        "rope-angles",
        "--seq",
        "64",
        "--dim",
        "16",
    ]);
    assert_eq!(status, 1, "{text}");
    assert!(
        text.contains("MISMATCH") && text.contains("largest absolute error"),
        "{text}"
    );
    let (status, text) = run(&[
        "check",
        &angles,
        "--as",
        "rope-angles",
        "--seq",
        "65",
        "--dim",
        "16",
    ]);
    assert_eq!(status, 1, "{text}");
    assert!(text.contains("shape mismatch"), "{text}");
    let (status, text) = run(&["identify", &angles]);
    assert_eq!(status, 0, "{text}");
    assert!(
        text.contains("identified: RoPE angles") && text.contains("base 500000"),
        "{text}"
    );

    // Angles computed as PyTorch does in float32: a mismatch, explained.
    let torch = file("torch.npy");
    run(&[
        "table",
        "rope-angles",
        "--seq",
        "4096",
        "--dim",
        "16",
        "--arith",
        "torch-f32",
        "-o",
        &torch,
    ]);
    let (status, text) = run(&[
        "check",
        &torch,
        "--as",
        "rope-angles",
        "--seq",
        "4096",
        "--dim",
        "16",
        "--atol",
        "1e-7",
        "--rtol",
        "1e-9",
    ]);
    assert_eq!(status, 1, "{text}");
    assert!(text.contains("PyTorch"), "{text}");

    // A .safetensors file with two tensors: the tensor is chosen by name.
    let slopes: Vec<f32> = vec![
        0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625,
    ];
    let model = file("model.safetensors");
    common::safetensors_file(
        std::path::Path::new(&model),
        &[
            ("slopes", &slopes, vec![8]),
            ("other", &[1.0, 2.0], vec![2]),
        ],
    );
    let (status, text) = run(&[
        "check",
        &model,
        "--tensor",
        "slopes",
        "--as",
        "alibi-slopes",
        "--heads",
        "8",
    ]);
    assert_eq!(status, 0, "{text}");
    let (status, text) = run(&["identify", &model]);
    assert_eq!(status, 2, "{text}");
    assert!(
        text.contains("holds 2 tensors (other, slopes); choose one with --tensor"),
        "{text}"
    );
    let (status, text) = run(&["identify", &model, "--tensor", "nope"]);
    assert_eq!(status, 2, "{text}");
    assert!(
        text.contains("has no tensor 'nope'; it holds other, slopes"),
        "{text}"
    );
    let (status, text) = run(&["identify", &model, "--tensor", "slopes"]);
    assert_eq!(status, 0, "{text}");
    assert!(text.contains("ALiBi slopes of 8 heads"), "{text}");

    // Options that do not apply, and bad tolerances, are bad input.
    let (status, _) = run(&[
        "check",
        &angles,
        "--as",
        "rope-angles",
        "--seq",
        "64",
        "--dim",
        "16",
        "-o",
        "x.npy",
    ]);
    assert_eq!(status, 2);
    let (status, _) = run(&[
        "check",
        &angles,
        "--as",
        "rope-angles",
        "--seq",
        "64",
        "--dim",
        "16",
        "--atol",
        "-1",
    ]);
    assert_eq!(status, 2);
}

/// Bad and hostile files: a message naming the problem, exit status 2, never a crash.
#[test]
fn bad_files_are_explained() {
    let folder = tempfile::tempdir().unwrap();
    let write = |name: &str, bytes: &[u8]| {
        let path = folder.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path.display().to_string()
    };
    let npy_header = |descr: &str, shape: &str| {
        let mut header =
            format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
        while (10 + header.len() + 1) % 64 != 0 {
            header.push(' ');
        }
        header.push('\n');
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
        bytes.extend_from_slice(header.as_bytes());
        bytes
    };
    let mut truncated = npy_header("<f4", "(4, 4)");
    truncated.extend_from_slice(&[0u8; 20]);
    let mut complex = npy_header("<c8", "(2,)");
    complex.extend_from_slice(&[0u8; 16]);
    let mut nan = npy_header("<f8", "(3,)");
    for v in [1.0f64, f64::NAN, 2.0] {
        nan.extend_from_slice(&v.to_le_bytes());
    }
    let mut huge_header = b"\x93NUMPY\x02\x00".to_vec();
    huge_header.extend_from_slice(&u32::MAX.to_le_bytes());
    let mut huge_safetensors = u64::MAX.to_le_bytes().to_vec();
    huge_safetensors.extend_from_slice(b"{}");
    let cases = [
        (write("truncated.npy", &truncated), "truncated"),
        (write("complex.npy", &complex), "<c8"),
        (write("nan.npy", &nan), "NaN"),
        (write("huge.npy", &huge_header), "header"),
        (
            write("huge.safetensors", &huge_safetensors),
            "not a valid .safetensors",
        ),
        (
            write("junk.safetensors", b"garbage"),
            "not a valid .safetensors",
        ),
        (
            write("ragged.csv", b"1,2,3\n4,5\n"),
            "line 2 has 2 values, line 1 has 3",
        ),
        (
            write("words.csv", b"a,b\n1,x\n"),
            "line 2, column 2: 'x' is not a number",
        ),
        (write("nan.csv", b"1,nan\n"), "NaN"),
        (write("empty.csv", b""), "holds no numbers"),
        // A first line with a number among its fields is data, not a header.
        (
            write("hex.csv", b"0x10,2\n"),
            "line 1, column 1: '0x10' is not a number",
        ),
        (
            write("table.txt", b"1,2"),
            "use a .npy, .csv or .safetensors",
        ),
    ];
    for (path, expected) in cases {
        let (status, text) = run(&["identify", &path]);
        assert_eq!(status, 2, "{path}: {text}");
        assert!(
            text.contains(expected),
            "{path}: expected '{expected}' in {text}"
        );
        assert_eq!(text.lines().count(), 1, "one line: {text}");
    }
    // A header line and infinities are fine in a .csv.
    let table = parse_table(b"query,key\n0,-inf\n-0.5,0\n", TableFormat::Csv, None).unwrap();
    assert_eq!(table.shape(), &[2, 2]);
    assert_eq!(table[[0, 1]], f64::NEG_INFINITY);
    // A byte-order mark (spreadsheets write one) is not part of the first row.
    let table = parse_table(b"\xef\xbb\xbf1,2\n3,4\n", TableFormat::Csv, None).unwrap();
    assert_eq!(table.shape(), &[2, 2]);
    assert_eq!(table[[0, 0]], 1.0);
    let table = parse_table(b"\xef\xbb\xbfa,b\n3,4\n", TableFormat::Csv, None).unwrap();
    assert_eq!(table.shape(), &[1, 2]);
}

#[test]
fn scaled_inverse_frequencies_are_identified_and_never_misnamed() {
    use poslab::encoding::rope_scaling::{RopeFrequencies, RopeScaling, ScalingKind};
    let frequencies = |dim: usize, base: f64, scaling: RopeScaling| {
        as_f32(&real(&TableSpec::RopeInvFreq {
            dim,
            base,
            seq: 0,
            freqs: RopeFrequencies {
                rotary_dim: None,
                scaling,
                ..Default::default()
            },
        }))
    };
    let llama31 = RopeScaling {
        kind: ScalingKind::Llama3,
        factor: Some(8.0),
        original_max_position_embeddings: Some(8192),
        low_freq_factor: Some(1.0),
        high_freq_factor: Some(4.0),
        ..Default::default()
    };
    let qwen_yarn = RopeScaling {
        kind: ScalingKind::Yarn,
        factor: Some(4.0),
        original_max_position_embeddings: Some(32_768),
        ..Default::default()
    };
    let linear = RopeScaling {
        kind: ScalingKind::Linear,
        factor: Some(4.0),
        ..Default::default()
    };
    let cases = [
        (
            frequencies(128, 500_000.0, llama31.clone()),
            vec![
                "base 500000",
                "Llama 3 scaling, factor 8, original context 8192, low_freq_factor 1, high_freq_factor 4",
            ],
        ),
        (
            frequencies(128, 1_000_000.0, qwen_yarn),
            vec![
                "base 1000000",
                "YaRN scaling, factor 4, original context 32768",
            ],
        ),
        (
            frequencies(64, 10_000.0, linear),
            vec![
                "base 10000",
                "linear scaling (Position Interpolation), factor 4",
            ],
        ),
        // Dynamic NTK's base at 3x the trained length is 10000 * 5^(64/62) = 52,664.4...: named
        // as the round base it was raised from (the report also gives the plain reading, a
        // base that is not round, never rounded to 50000 or 53000).
        (
            frequencies(
                64,
                10_000.0 * 5f64.powf(64.0 / 62.0),
                RopeScaling::default(),
            ),
            vec!["base 10000, NTK-aware scaling, factor 5"],
        ),
    ];
    for (table, expected) in &cases {
        for tolerance in [
            Tolerance::default(),
            // A loose absolute tolerance cannot hide a factor on the small frequencies.
            Tolerance {
                abs: 1e-3,
                rel: 1e-5,
            },
        ] {
            let identification = identify(table, tolerance, None);
            let report = identification.report();
            assert!(identification.found(), "{report}");
            let best = &identification.best().unwrap().description;
            for part in expected {
                assert!(best.contains(part), "'{part}' in:\n{report}");
            }
            if expected[0].contains("NTK-aware") {
                assert!(
                    report.contains("runner-up: RoPE inverse frequencies, dim 64, base 5266")
                        && report.contains("not round"),
                    "{report}"
                );
            }
        }
    }
    // Llama 3.1's frequencies are not plain base 500000, even at atol 1e-3.
    let loose = identify(
        &cases[0].0,
        Tolerance {
            abs: 1e-3,
            rel: 0.0,
        },
        None,
    );
    assert!(
        !loose
            .best()
            .unwrap()
            .description
            .contains("RoPE inverse frequencies, dim 128, base 500000,")
            || loose.best().unwrap().description.contains("Llama 3"),
        "{}",
        loose.report()
    );
    // A near miss (one frequency 1% off) is no match.
    let mut near = cases[0].0.clone();
    near[[40]] *= 1.01;
    let identification = identify(&near, Tolerance::default(), None);
    assert!(!identification.found(), "{}", identification.report());
}

#[test]
fn scaled_angle_tables_are_identified() {
    use poslab::encoding::rope_scaling::{RopeFrequencies, RopeScaling, ScalingKind};
    let angles = |scaling: RopeScaling| {
        as_f32(&real(&TableSpec::RopeAngles {
            params: RopeParams {
                seq: 300,
                dim: 128,
                base: 500_000.0,
                start: 20,
            },
            freqs: RopeFrequencies {
                rotary_dim: None,
                scaling,
                ..Default::default()
            },
        }))
    };
    let llama31 = RopeScaling {
        kind: ScalingKind::Llama3,
        factor: Some(8.0),
        original_max_position_embeddings: Some(8192),
        low_freq_factor: Some(1.0),
        high_freq_factor: Some(4.0),
        ..Default::default()
    };
    let linear = RopeScaling {
        kind: ScalingKind::Linear,
        factor: Some(4.0),
        ..Default::default()
    };
    for (table, expected) in [
        (
            angles(llama31),
            "Llama 3 scaling, factor 8, original context 8192",
        ),
        (
            angles(linear),
            "linear scaling (Position Interpolation), factor 4",
        ),
    ] {
        let identification = identify(&table, Tolerance::default(), None);
        let report = identification.report();
        assert!(identification.found(), "{report}");
        let best = &identification.best().unwrap().description;
        for part in ["RoPE angles", "positions 20..319", "base 500000", expected] {
            assert!(best.contains(part), "'{part}' in\n{report}");
        }
    }
}

#[test]
fn sinusoidal_tables_are_found_at_large_starts() {
    // The slowest pair turns once every 47,000 positions at base 10000, d = 64: beyond that
    // its phase alone is ambiguous, and the other pairs settle which turn it is on.
    for (start, dim, layout) in [
        (65_536u64, 64usize, PairLayout::Interleaved),
        (300_000, 64, PairLayout::Half),
        (123_456_789, 128, PairLayout::Interleaved),
    ] {
        let table = as_f32(&real(&TableSpec::Sinusoidal(SinusoidalParams {
            seq: 40,
            dim,
            base: 10_000.0,
            start,
            layout,
            spacing: Spacing::Vaswani,
            ..SinusoidalParams::default()
        })));
        let identification = identify(&table, Tolerance::default(), None);
        let report = identification.report();
        assert!(identification.found(), "{report}");
        let expected = format!("positions {start}..{}", start + 39);
        assert!(
            identification
                .best()
                .unwrap()
                .description
                .contains(&expected),
            "{expected} in\n{report}"
        );
    }
}

#[test]
fn vision_tables_and_stored_alibi_are_identified() {
    use poslab::encoding::alibi::AlibiForm;
    use poslab::encoding::grid::{GridParams, Raster, SinCos2dParams, parse_order};
    let cases = [
        (
            TableSpec::SinCos2d(SinCos2dParams {
                grid: GridParams {
                    grid_h: 6,
                    grid_w: 6,
                },
                dim: 32,
                prefix_rows: 1,
                ..Default::default()
            }),
            vec![
                "2D sin-cos, 6 x 6 grid",
                "MAE order",
                "row by row",
                "after a zero CLS row",
            ],
        ),
        (
            TableSpec::SinCos2d(SinCos2dParams {
                grid: GridParams {
                    grid_h: 4,
                    grid_w: 6,
                },
                dim: 16,
                order: parse_order("sin-y,cos-y,sin-x,cos-x").unwrap(),
                raster: Raster::Columns,
                ..Default::default()
            }),
            vec!["4 x 6 grid", "timm interleaved order", "column by column"],
        ),
        (
            TableSpec::AlibiKeys {
                heads: 12,
                seq: 40,
                form: AlibiForm::Bloom,
                head: None,
            },
            vec![
                "ALiBi as BLOOM's build_alibi_tensor",
                "12 heads",
                "--form bloom",
            ],
        ),
        (
            TableSpec::AlibiKeys {
                heads: 8,
                seq: 40,
                form: AlibiForm::Mpt,
                head: None,
            },
            vec!["ALiBi as MPT's build_alibi_bias", "8 heads"],
        ),
    ];
    for (spec, expected) in cases {
        let identification = identify(&as_f32(&real(&spec)), Tolerance::default(), None);
        let report = identification.report();
        assert!(identification.found(), "{report}");
        let best = &identification.best().unwrap().description;
        for part in expected {
            assert!(best.contains(part), "'{part}' in\n{report}");
        }
    }
}

/// A cache as PyTorch computes it in float32 (`--arith torch-f32`, the SLEEF pow poslab
/// reproduces), at model-like sizes.
fn torch_cache(
    part: poslab::encoding::rope::CachePart,
    layout: PairLayout,
    seq: usize,
    dim: usize,
    base: f64,
    freqs: poslab::encoding::rope_scaling::RopeFrequencies,
) -> ArrayD<f64> {
    use poslab::encoding::torch_f32::Arithmetic;
    let spec = TableSpec::RopeCache {
        params: RopeParams {
            seq,
            dim,
            base,
            start: 0,
        },
        freqs,
        layout,
        part,
    };
    cpu::compute_arith(&spec, Arithmetic::TORCH)
        .unwrap()
        .into_real()
}

/// Real models' float32 caches, scaled, partial and multiplied by an attention factor, are
/// named with every parameter; a float32 file is PyTorch's float32 computation of it, which an
/// exact comparison at 1e-5 would refuse (the angle p·θ rounded to float32 is off by up to
/// 2.5e-4 at position 4095).
#[test]
fn float32_caches_of_real_models_are_identified_with_their_scaling() {
    use poslab::encoding::rope::CachePart::{Cos, Sin};
    use poslab::encoding::rope_scaling::{RopeFrequencies, RopeScaling, ScalingKind};
    let full = |scaling: RopeScaling| RopeFrequencies {
        rotary_dim: None,
        scaling,
        ..Default::default()
    };
    let llama31 = RopeScaling {
        kind: ScalingKind::Llama3,
        factor: Some(8.0),
        original_max_position_embeddings: Some(8192),
        low_freq_factor: Some(1.0),
        high_freq_factor: Some(4.0),
        ..Default::default()
    };
    let qwen_yarn = RopeScaling {
        kind: ScalingKind::Yarn,
        factor: Some(4.0),
        original_max_position_embeddings: Some(32768),
        ..Default::default()
    };
    // DeepSeek-V2-Lite: mscale = mscale_all_dim, so the attention factor is 1.
    let deepseek = RopeScaling {
        kind: ScalingKind::Yarn,
        factor: Some(40.0),
        original_max_position_embeddings: Some(4096),
        mscale: Some(0.707),
        mscale_all_dim: Some(0.707),
        ..Default::default()
    };
    let dynamic = RopeScaling {
        kind: ScalingKind::Dynamic,
        factor: Some(2.0),
        max_position_embeddings: Some(2048),
        ..Default::default()
    };
    let ntk = RopeScaling {
        kind: ScalingKind::Ntk,
        factor: Some(4.0),
        ..Default::default()
    };
    let linear = RopeScaling {
        kind: ScalingKind::Linear,
        factor: Some(4.0),
        ..Default::default()
    };
    let cases: Vec<(ArrayD<f64>, Vec<&str>)> = vec![
        (
            torch_cache(Cos, PairLayout::Half, 4096, 128, 500_000.0, full(llama31)),
            vec![
                "cos cache,",
                "half layout",
                "base 500000, Llama 3 scaling, factor 8, original context 8192",
                "as PyTorch computes it in float32",
            ],
        ),
        (
            torch_cache(
                Sin,
                PairLayout::Half,
                4096,
                128,
                1_000_000.0,
                full(qwen_yarn.clone()),
            ),
            vec![
                "sin cache, times 1.1386",
                "base 1000000, YaRN scaling, factor 4, original context 32768",
            ],
        ),
        (
            torch_cache(Cos, PairLayout::Half, 2048, 64, 10_000.0, full(deepseek)),
            vec![
                "YaRN scaling, factor 40, original context 4096",
                "attention factor 1",
            ],
        ),
        (
            torch_cache(Cos, PairLayout::Half, 4500, 128, 10_000.0, full(dynamic)),
            vec!["base 10000, dynamic NTK scaling, factor 2, max_position_embeddings 2048"],
        ),
        (
            torch_cache(Cos, PairLayout::Half, 2048, 128, 10_000.0, full(ntk)),
            vec!["base 10000, NTK-aware scaling, factor 4"],
        ),
        (
            torch_cache(Sin, PairLayout::Half, 2048, 128, 10_000.0, full(linear)),
            vec!["base 10000, linear scaling (Position Interpolation), factor 4"],
        ),
        // GPT-NeoX / Pythia: a quarter of a 96-wide head rotates.
        (
            torch_cache(
                Sin,
                PairLayout::Half,
                2048,
                96,
                10_000.0,
                RopeFrequencies {
                    rotary_dim: Some(24),
                    scaling: RopeScaling::default(),
                    ..Default::default()
                },
            ),
            vec![
                "sin cache, half layout",
                "dim 24 (the rotary part",
                "base 10000,",
            ],
        ),
        // GPT-J: interleaved pairs, 64 of 256 dims rotate.
        (
            torch_cache(
                Cos,
                PairLayout::Interleaved,
                2048,
                256,
                10_000.0,
                RopeFrequencies {
                    rotary_dim: Some(64),
                    scaling: RopeScaling::default(),
                    ..Default::default()
                },
            ),
            vec!["cos cache, interleaved layout", "dim 64", "base 10000,"],
        ),
    ];
    for (table, expected) in &cases {
        let identification = identify(table, Tolerance::default(), Some(StoredFloat::F32));
        let report = identification.report();
        assert!(identification.found(), "not identified:\n{report}");
        let best = &identification.best().unwrap().description;
        for part in expected {
            assert!(best.contains(part), "expected '{part}' in:\n{report}");
        }
    }
    // The same Llama 3.1 cache held to the exact table alone (not a float32 file) is no match
    // at 1e-5: the float32 reading is what finds it.
    let exact_only = identify(&cases[0].0, Tolerance::default(), None);
    assert!(!exact_only.found(), "{}", exact_only.report());
    // Exact (float64) caches are named too, without the float32 note.
    let exact = real(&TableSpec::RopeCache {
        params: RopeParams {
            seq: 2048,
            dim: 128,
            base: 1_000_000.0,
            start: 0,
        },
        freqs: full(qwen_yarn),
        layout: PairLayout::Half,
        part: Cos,
    });
    let identification = identify(&exact, Tolerance::default(), None);
    let best = &identification.best().unwrap().description;
    assert!(identification.found(), "{}", identification.report());
    assert!(best.contains("cos cache, times 1.1386294") && best.contains("YaRN scaling, factor 4"));
    assert!(!best.contains("float32"), "{best}");
}

/// A float32 cache whose slow frequencies no convention gives (Llama 3.1's, the slowest pairs
/// off by 1%) is no match: never a convention it is not.
#[test]
fn a_cache_no_convention_gives_is_no_match() {
    let theta: Vec<f64> = (0..64)
        .map(|i| {
            let plain = 500_000f64.powf(-(2 * i) as f64 / 128.0) / 8.0;
            if i >= 48 { plain * 1.01 } else { plain * 8.0 }
        })
        .collect();
    let table = Array2::from_shape_fn((4096, 128), |(p, col)| {
        let angle = p as f32 * theta[col % 64] as f32;
        f64::from((f64::from(angle)).cos() as f32)
    })
    .into_dyn();
    let identification = identify(&table, Tolerance::default(), Some(StoredFloat::F32));
    assert!(!identification.found(), "{}", identification.report());
}

/// LongRoPE's per-pair factors follow no formula: a cache or frequency table of a model
/// poslab ships (assets/models) is named by that model.
#[test]
fn longrope_tables_are_named_by_the_model_they_come_from() {
    use poslab::encoding::rope::CachePart::Cos;
    use poslab::import::model_config::{ModelConfig, PositionEncoding};
    let config = ModelConfig::parse(include_str!(
        "../assets/models/phi-3-vision-128k-instruct.json"
    ))
    .unwrap();
    let PositionEncoding::Rope {
        head_dim,
        base,
        freqs,
        layout,
    } = config.encoding
    else {
        panic!("Phi-3 uses RoPE");
    };
    // Within the original 4096 positions: the short factors, times the attention factor.
    let cache = torch_cache(Cos, layout, 2048, head_dim, base, (*freqs).clone());
    let identification = identify(&cache, Tolerance::default(), Some(StoredFloat::F32));
    let report = identification.report();
    assert!(identification.found(), "{report}");
    let best = &identification.best().unwrap().description;
    assert!(
        best.contains("as configured for microsoft/Phi-3-vision-128k-instruct (longrope scaling)")
            && best.contains("times 1.19"),
        "{report}"
    );
    // The inverse frequencies beyond 4096 positions: the long factors.
    let long = as_f32(&real(&TableSpec::RopeInvFreq {
        dim: head_dim,
        base,
        seq: 8192,
        freqs: *freqs,
    }));
    let identification = identify(&long, Tolerance::default(), Some(StoredFloat::F32));
    let report = identification.report();
    assert!(identification.found(), "{report}");
    assert!(
        report.contains("Phi-3-vision-128k-instruct (longrope scaling) (its long factors"),
        "{report}"
    );
}

/// A model poslab does not ship with Phi-3's LongRoPE lists at another base: the factors are
/// recovered from its float32 cos cache as the float32 values its config holds (1.5999999,
/// not 1.6: the file pins its fast pairs that finely), the base and the original context
/// named, and the pairs the cache hardly turns said to be pinned loosely.
#[test]
fn longrope_factors_of_an_unshipped_model_are_recovered_as_its_float32_values() {
    use poslab::encoding::rope::CachePart::Cos;
    use poslab::encoding::rope_scaling::{RopeFrequencies, RopeScaling, ScalingKind};
    use poslab::import::model_config::{ModelConfig, PositionEncoding};
    let config = ModelConfig::parse(include_str!(
        "../assets/models/phi-3-vision-128k-instruct.json"
    ))
    .unwrap();
    let PositionEncoding::Rope { freqs, .. } = config.encoding else {
        panic!("Phi-3 uses RoPE");
    };
    let long = freqs.scaling.long_factor.clone().unwrap();
    // Beyond an original context of 1024, to 128 times it.
    let freqs = RopeFrequencies {
        scaling: RopeScaling {
            kind: ScalingKind::Longrope,
            original_max_position_embeddings: Some(1024),
            max_position_embeddings: Some(131_072),
            long_factor: Some(long.clone()),
            short_factor: freqs.scaling.short_factor.clone(),
            ..Default::default()
        },
        ..Default::default()
    };
    let cache = torch_cache(Cos, PairLayout::Half, 2048, 96, 500_000.0, freqs);
    let identification = identify(&cache, Tolerance::default(), Some(StoredFloat::F32));
    let report = identification.report();
    assert!(identification.found(), "{report}");
    let best = &identification.best().unwrap().description;
    // The config's float32 values, as Rust prints a float32 (its shortest exact text).
    let config_text: Vec<String> = long[..12]
        .iter()
        .map(|&f| format!("{}", f as f32))
        .collect();
    assert_eq!(config_text[8], "1.5999999");
    for said in [
        format!(
            "base 500000, LongRoPE scaling, factors {},",
            config_text.join(",")
        ),
        "L 1024 and s 128 (its 2048 positions beyond L: these are the long factors".to_owned(),
        "turn too little over these positions".to_owned(),
    ] {
        assert!(best.contains(&said), "{said:?} in:\n{report}");
    }
}

/// The table rounded to float16 or bfloat16 (round to nearest even, as `.to(torch.bfloat16)`).
fn rounded_to(table: &ArrayD<f64>, stored: StoredFloat) -> ArrayD<f64> {
    table.mapv(|v| match stored {
        StoredFloat::F16 => half::f16::from_f64(v).to_f64(),
        StoredFloat::Bf16 => half::bf16::from_f32(v as f32).to_f64(),
        StoredFloat::F32 => f64::from(v as f32),
        StoredFloat::F64 => v,
    })
}

/// Half-precision files (a model's bfloat16 cache, a float16 frequency table) are identified
/// at the precision their type holds, not at 1e-5, which nothing stored in 8 or 11 bits meets:
/// with their scaling, their round base, and frequencies float16 holds only as subnormals.
#[test]
fn float16_and_bfloat16_tables_are_identified_at_their_precision() {
    use poslab::encoding::rope::CachePart::{Cos, Sin};
    use poslab::encoding::rope_scaling::{RopeFrequencies, RopeScaling, ScalingKind};
    let llama31 = RopeScaling {
        kind: ScalingKind::Llama3,
        factor: Some(8.0),
        low_freq_factor: Some(1.0),
        high_freq_factor: Some(4.0),
        original_max_position_embeddings: Some(8192),
        ..Default::default()
    };
    let scaled = |scaling: RopeScaling| RopeFrequencies {
        rotary_dim: None,
        scaling,
        ..Default::default()
    };
    let inv_freq = |base: f64, scaling: RopeScaling| {
        real(&TableSpec::RopeInvFreq {
            dim: 128,
            base,
            seq: 8192,
            freqs: scaled(scaling),
        })
    };
    let cases: Vec<(ArrayD<f64>, Vec<&str>)> = vec![
        // HF computes the cache in float32 and casts it to the model's dtype.
        (
            torch_cache(
                Cos,
                PairLayout::Half,
                4096,
                128,
                500_000.0,
                scaled(llama31.clone()),
            ),
            vec!["cos cache, half layout", "base 500000", "Llama-3.1-8B"],
        ),
        (
            torch_cache(
                Sin,
                PairLayout::Half,
                1024,
                64,
                12_000.0,
                scaled(RopeScaling::default()),
            ),
            vec!["sin cache, half layout", "dim 64", "base 12000"],
        ),
        // The slowest of these frequencies are float16 subnormals (2.4e-6 in steps of 6e-8).
        (
            inv_freq(500_000.0, RopeScaling::default()),
            vec!["inverse frequencies, dim 128, base 500000, max error"],
        ),
        (
            inv_freq(500_000.0, llama31.clone()),
            vec!["base 500000", "Llama"],
        ),
        (
            real(&TableSpec::Sinusoidal(SinusoidalParams {
                seq: 512,
                dim: 128,
                base: 10_000.0,
                layout: PairLayout::Interleaved,
                spacing: Spacing::Vaswani,
                start: 0,
                ..SinusoidalParams::default()
            })),
            vec!["sinusoidal, interleaved layout, sin first", "base 10000,"],
        ),
    ];
    for stored in [StoredFloat::F16, StoredFloat::Bf16] {
        for (table, expected) in &cases {
            let narrow = rounded_to(table, stored);
            // At 1e-5, as for a file of unknown type, no reading matches.
            assert!(!identify(&narrow, Tolerance::default(), None).found());
            let identification = identify(&narrow, Tolerance::default(), Some(stored));
            let report = identification.report();
            assert!(
                identification.found(),
                "{stored:?}: not identified:\n{report}"
            );
            assert!(report.starts_with(&format!(
                "compared at the precision a {} file holds",
                stored.name()
            )));
            let best = report.lines().nth(1).unwrap();
            for part in expected {
                assert!(
                    best.contains(part),
                    "{stored:?}: expected '{part}' in:\n{report}"
                );
            }
        }
    }
    // Llama 3.1's frequencies are not plain base 500000 at bfloat16 precision either: its
    // slow pairs are 8 times slower, far beyond 3 digits.
    let identification = identify(
        &rounded_to(&inv_freq(500_000.0, llama31), StoredFloat::Bf16),
        Tolerance::default(),
        Some(StoredFloat::Bf16),
    );
    for candidate in identification
        .candidates
        .iter()
        .filter(|c| c.comparison.matches())
    {
        assert!(
            !candidate.description.ends_with("base 500000"),
            "{}",
            identification.report()
        );
        assert!(
            candidate.description.contains("Llama") || candidate.description.contains("llama3")
        );
    }
}

/// A table whose rows a file keeps on a grid (`[H, W, D]`, as a ViT's patch table is often
/// saved) is read as the `[H*W, D]` table by `identify` and `check`, which say so; a grid whose
/// rows are not the table's is not (the third contract, "Reading files").
#[test]
fn a_grid_of_rows_is_read_as_the_table_and_said_so() {
    // The values by the formula, written here: sin(p w_i), cos(p w_i), w_i = 10000^(-2i/d).
    let (side, dim) = (12usize, 32usize);
    let grid = ndarray::Array3::from_shape_fn((side, side, dim), |(y, x, c)| {
        let p = (y * side + x) as f64;
        let w = 10000f64.powf(-((2 * (c / 2)) as f64) / dim as f64);
        if c % 2 == 0 {
            (p * w).sin()
        } else {
            (p * w).cos()
        }
    });
    let identification = identify(&grid.clone().into_dyn(), Tolerance::default(), None);
    let report = identification.report();
    assert!(
        report.starts_with("read as [144, 32]: the file's [12, 12, 32]")
            && report.contains("identified: sinusoidal, interleaved layout, sin first, Vaswani spacing, base 10000, d = 32, positions 0..143"),
        "{report}"
    );
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("grid.npy");
    ndarray_npy::write_npy(&file, &grid).unwrap();
    let path = file.to_str().unwrap();
    let (code, text) = run(&[
        "check",
        path,
        "--as",
        "sinusoidal",
        "--seq",
        "144",
        "--dim",
        "32",
    ]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("read as [144, 32]") && text.contains("verdict: MATCH"),
        "{text}"
    );
    // 143 rows are not the grid's 144: a shape mismatch, as before.
    let (code, text) = run(&[
        "check",
        path,
        "--as",
        "sinusoidal",
        "--seq",
        "143",
        "--dim",
        "32",
    ]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("shape mismatch") && !text.contains("read as"),
        "{text}"
    );
    // Scrambled rows (the grid transposed) are read, and do not match: never a wrong reading.
    let transposed = grid
        .permuted_axes([1, 0, 2])
        .as_standard_layout()
        .into_owned();
    ndarray_npy::write_npy(&file, &transposed).unwrap();
    let (code, text) = run(&[
        "check",
        path,
        "--as",
        "sinusoidal",
        "--seq",
        "144",
        "--dim",
        "32",
    ]);
    assert_eq!(code, 1, "{text}");
    assert!(!identify(&transposed.into_dyn(), Tolerance::default(), None).found());
}

/// A causal ALiBi table masked with the float32 minimum rather than -inf (as x-transformers,
/// MLX and many kernels mask) is the same attention after softmax: `check` says equivalent
/// and why, `identify` names causal ALiBi and says how it read the mask.
#[test]
fn a_float32_minimum_mask_is_read_as_the_mask() {
    // -m_h (i - j) below the diagonal, m_h = 2^-4 and 2^-8 for two heads, written here.
    let slopes = [2f64.powi(-4), 2f64.powi(-8)];
    let table = ndarray::Array3::from_shape_fn((2, 6, 6), |(h, i, j)| {
        if j <= i {
            -slopes[h] * (i - j) as f64
        } else {
            f64::from(f32::MIN)
        }
    });
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("alibi.npy");
    ndarray_npy::write_npy(&file, &table.mapv(|v| v as f32)).unwrap();
    let path = file.to_str().unwrap();
    let (code, text) = run(&[
        "check", path, "--as", "alibi", "--heads", "2", "--seq", "6", "--mode", "causal",
    ]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("verdict: equivalent: masked with the float32 minimum (-3.4e38) where the reference has -inf, equal elsewhere"),
        "{text}"
    );
    let (code, text) = run(&["identify", path]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.starts_with("read its float32-minimum cells (-3.4e38) as masked (-inf)")
            && text.contains("identified: ALiBi biases, 2 heads, 6 positions, causal"),
        "{text}"
    );
    // One unmasked cell wrong as well: no reading makes it ALiBi.
    let mut wrong = table.clone();
    wrong[[1, 3, 1]] += 0.5;
    ndarray_npy::write_npy(&file, &wrong.mapv(|v| v as f32)).unwrap();
    let (code, text) = run(&["identify", path]);
    assert_eq!(code, 1, "{text}");
    assert!(!text.contains("identified"), "{text}");
}

#[test]
fn a_loosened_tolerance_still_names_the_roundest_parameters() {
    // Float32 caches as PyTorch makes them (HF's linear x4, YaRN x16, Llama 3.1's llama3),
    // identified under --atol 5e-4: the fitted base 9999.98 and factor 15.998 fit within it,
    // but so do 10000 and 16, which are what the report must name.
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &[&str]); 3] = [
        (
            &["--scaling", "linear", "--factor", "4"],
            &["base 10000,", "linear scaling", "factor 4,"],
        ),
        (
            &[
                "--scaling",
                "yarn",
                "--factor",
                "16",
                "--original-max-position-embeddings",
                "4096",
            ],
            &[
                "base 10000,",
                "YaRN scaling, factor 16,",
                "original context 4096",
            ],
        ),
        (&common::LLAMA31_ROPE, &["base 500000,", "llama3"]),
    ];
    for (k, (scaling, says)) in cases.iter().enumerate() {
        let path = dir.path().join(format!("cache{k}.npy"));
        let path = path.to_str().unwrap();
        let mut args = vec![
            "table",
            "rope-cos",
            "--seq",
            "2048",
            "--dim",
            "128",
            "--layout",
            "half",
            "--arith",
            "torch-f32",
            "-o",
            path,
        ];
        args.extend_from_slice(scaling);
        let (status, text) = run(&args);
        assert_eq!(status, 0, "{text}");
        let (status, text) = run(&["identify", path, "--atol", "5e-4"]);
        assert_eq!(status, 0, "{scaling:?}: {text}");
        let first = text.lines().next().unwrap_or_default();
        assert!(first.starts_with("identified: RoPE cos cache"), "{first}");
        for said in *says {
            assert!(
                first.contains(said),
                "{scaling:?} should say {said:?}: {first}"
            );
        }
        assert!(!first.contains("not round"), "{first}");
    }
}
