//! The context-extension lab's numbers: the unseen-angle map on both engines and against angles
//! evaluated in f64, the per-pair counts against the map, each method's frequencies against
//! Hugging Face's formulas, and the survey's ImageNet-100 table as the article prints it.

mod common;

use common::{gpu, real};

use std::f64::consts::TAU;

use poslab::encoding::rope_scaling::ScalingKind;
use poslab::engine::{Strided, TableSpec, Window, cpu};
use poslab::scene::context::{self, METHODS, RopeModel, UnseenParams, pair_reach, survey_series};

fn model(file: &str) -> RopeModel {
    poslab::scene::context::shipped_models()
        .iter()
        .find(|(name, _)| name == file)
        .map(|(_, model)| model.clone())
        .unwrap_or_else(|| panic!("{file} is a shipped RoPE model"))
}

fn unseen(model: &RopeModel, kind: ScalingKind, target: usize) -> TableSpec {
    let scaling = model.method_scaling(kind, target).unwrap();
    TableSpec::RopeUnseen(Box::new(UnseenParams {
        freqs: model.frequencies(scaling),
        model: model.clone(),
        seq: target,
    }))
}

/// Every method with a model it applies to (LongRoPE needs Phi-3's fitted factors).
fn cases() -> Vec<(RopeModel, ScalingKind)> {
    let llama2 = model("llama-2-7b");
    let mut cases: Vec<_> = METHODS
        .iter()
        .filter(|&&kind| kind != ScalingKind::Longrope)
        .map(|&kind| (llama2.clone(), kind))
        .collect();
    cases.push((model("llama-3.1-8b"), ScalingKind::Llama3));
    cases.push((model("qwen2.5-7b-instruct-yarn"), ScalingKind::Yarn));
    cases.push((model("phi-3-vision-128k-instruct"), ScalingKind::Longrope));
    cases
}

#[test]
fn the_gpu_draws_the_unseen_map_the_cpu_computes() {
    for (model, kind) in cases() {
        // A whole map, and every 997th distance of one at 2^20.
        for (target, step) in [(3 * model.trained + 17, 1), (1 << 20, 997)] {
            let spec = unseen(&model, kind, target);
            let window = Window {
                rows: Strided {
                    step,
                    ..Strided::all(target)
                },
                ..Window::all(spec.matrix_shape())
            };
            let c = real(cpu::compute_window(&spec, &window).unwrap());
            let g = real(gpu().compute_window(&spec, &window).unwrap());
            assert_eq!(c.len(), g.len());
            let differ = c.iter().zip(&g).filter(|(a, b)| a != b).count();
            assert_eq!(differ, 0, "{} {kind:?} at {target}", model.name);
            assert!(c.contains(&1.0) || kind != ScalingKind::None);
        }
    }
}

#[test]
fn extrapolated_angles_are_unseen_where_f64_angles_say_so() {
    // Llama 2 run at 20,000 positions: pair i is unseen at distance p when it turned less than
    // a turn in training and (p θ_i mod 2π) > (L-1) θ_i, evaluated here in f64. Cells within
    // 1e-8 radians of the edge are skipped (distance L-1 itself, in every pair): the map counts
    // an angle up to 2^-32 turn (1.5e-9 radians) past the edge as seen.
    let model = model("llama-2-7b");
    let target = 20_000;
    let spec = unseen(&model, ScalingKind::None, target);
    let map = real(cpu::compute(&spec).unwrap());
    let pairs = model.rotary() / 2;
    let (mut unseen, mut checked) = (0, 0);
    for i in 0..pairs {
        let theta = model.base.powf(-((2 * i) as f64) / model.rotary() as f64);
        let span = (model.trained - 1) as f64 * theta;
        for p in 0..target {
            let angle = (p as f64 * theta) % TAU;
            if (angle - span).abs() < 1e-8 {
                continue;
            }
            let expected = span < TAU && angle > span;
            assert_eq!(
                map[p * pairs + i] == 1.0,
                expected,
                "pair {i}, distance {p}"
            );
            unseen += usize::from(expected);
            checked += 1;
        }
    }
    assert!(checked >= target * pairs - 2 * pairs, "{checked}");
    // Pairs 46 to 63 have wavelengths above 4096: each is unseen from 4096 to where it
    // wraps back into its trained span, if it does.
    assert!(unseen > 200_000, "{unseen}");
}

#[test]
fn the_per_pair_counts_are_the_maps_column_sums() {
    for (model, kind) in cases() {
        let target = 5 * model.trained / 2;
        let spec = unseen(&model, kind, target);
        let map = real(cpu::compute(&spec).unwrap());
        let freqs = model.frequencies(model.method_scaling(kind, target).unwrap());
        let reach = pair_reach(&model, &freqs, target);
        let pairs = reach.len();
        for (i, r) in reach.iter().enumerate() {
            let column: Vec<usize> = (0..target).filter(|&p| map[p * pairs + i] == 1.0).collect();
            assert_eq!(r.unseen_distances, column.len() as u64, "{kind:?} pair {i}");
            assert_eq!(
                r.first_unseen,
                column.first().map(|&p| p as u64),
                "{kind:?} pair {i}"
            );
        }
    }
}

#[test]
fn each_methods_frequencies_follow_its_formula() {
    let llama2 = model("llama-2-7b");
    let (l, target) = (4096.0, 16_384usize);
    let s = target as f64 / l;
    let d = 128.0;
    let theta = |i: usize| 10_000f64.powf(-(2.0 * i as f64) / d);
    let wavelengths = |kind| {
        let freqs = llama2.frequencies(llama2.method_scaling(kind, target).unwrap());
        pair_reach(&llama2, &freqs, target)
            .iter()
            .map(|r| r.wavelength)
            .collect::<Vec<_>>()
    };
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b;
    let none = wavelengths(ScalingKind::None);
    let pi = wavelengths(ScalingKind::Linear);
    let ntk = wavelengths(ScalingKind::Ntk);
    let dynamic = wavelengths(ScalingKind::Dynamic);
    let llama3 = wavelengths(ScalingKind::Llama3);
    for i in 0..64 {
        assert!(close(none[i], TAU / theta(i)), "none {i}");
        // Position Interpolation: every wavelength L'/L times longer.
        assert!(close(pi[i], s * TAU / theta(i)), "PI {i}");
        // NTK-aware: base s^(d/(d-2)) times larger; the fastest pair unchanged.
        let ntk_base = 10_000.0 * s.powf(d / (d - 2.0));
        assert!(
            close(ntk[i], TAU * ntk_base.powf(2.0 * i as f64 / d)),
            "NTK {i}"
        );
        // Dynamic NTK at L' with factor 1 is static NTK with factor L'/L.
        assert!(close(dynamic[i], ntk[i]), "dynamic {i}");
        // Llama 3: wavelengths below L/4 kept, above L stretched by the factor.
        let lambda = TAU / theta(i);
        if lambda < l / 4.0 {
            assert!(close(llama3[i], lambda), "llama3 high {i}");
        } else if lambda > l {
            assert!(close(llama3[i], s * lambda), "llama3 low {i}");
        } else {
            assert!(
                llama3[i] >= lambda && llama3[i] <= s * lambda,
                "llama3 band {i}"
            );
        }
    }
    assert_eq!(ntk[0], none[0]);
}

#[test]
fn a_model_trained_longer_than_the_target_sees_no_unseen_angle() {
    let model = model("llama-2-7b");
    for kind in [ScalingKind::None, ScalingKind::Linear, ScalingKind::Yarn] {
        let freqs = model.frequencies(model.method_scaling(kind, 2048).unwrap());
        assert!(
            pair_reach(&model, &freqs, 2048)
                .iter()
                .all(|r| r.first_unseen.is_none() && r.unseen_distances == 0)
        );
    }
}

#[test]
fn longrope_needs_the_models_factors() {
    let error = model("llama-2-7b")
        .method_scaling(ScalingKind::Longrope, 16_384)
        .unwrap_err();
    assert!(error.contains("fitted"), "{error}");
}

/// The survey's results table, typed from the article: resolution, then the standard ViT
/// (learned table, 2D-interpolated), no position encoding, 2D mixed-frequency RoPE, 2D ALiBi.
#[rustfmt::skip]
const SURVEY: [(u32, [f64; 4]); 14] = [
    (96, [18.80, 16.82, 18.98, 19.60]),
    (128, [33.96, 30.84, 32.92, 36.44]),
    (160, [44.10, 42.96, 44.84, 50.28]),
    (192, [51.42, 49.22, 51.60, 55.84]),
    (224, [55.48, 53.86, 55.26, 60.74]),
    (256, [56.52, 55.80, 57.98, 61.52]),
    (288, [57.14, 56.52, 58.76, 64.00]),
    (320, [57.02, 55.86, 59.84, 64.62]),
    (352, [56.48, 55.22, 59.70, 65.54]),
    (384, [55.88, 54.16, 58.92, 65.76]),
    (416, [55.20, 53.50, 58.44, 65.24]),
    (448, [54.34, 52.40, 57.86, 64.24]),
    (480, [53.42, 51.48, 56.88, 63.56]),
    (512, [52.32, 49.80, 55.62, 62.20]),
];

#[test]
fn the_shipped_survey_table_is_the_articles_cell_by_cell() {
    let series = survey_series().unwrap();
    assert_eq!(series.len(), 4);
    assert!(series[0].method.contains("Standard"));
    assert!(series[1].method.contains("without"));
    assert!(series[2].method.contains("RoPE"));
    assert!(series[3].method.contains("ALiBi"));
    for (row, (resolution, accuracies)) in SURVEY.iter().enumerate() {
        for (column, &accuracy) in accuracies.iter().enumerate() {
            assert_eq!(
                series[column].points[row],
                (*resolution, accuracy),
                "{} at {resolution}",
                series[column].method
            );
        }
    }
    assert!(series.iter().all(|s| s.points.len() == SURVEY.len()));
    assert!(context::SURVEY_CSV.contains("Positional Embeddings in Transformer Models"));
}

#[test]
fn the_vision_maps_are_the_engines_tables_compared_patch_by_patch() {
    use poslab::encoding::grid::{GridParams, SinCos2dParams};
    use poslab::encoding::resample::{ResampleMode, ResampleParams};
    use poslab::encoding::similarity2d::{PatchEncoding, PatchSimilarityParams};
    use poslab::scene::context::VisionParams;
    let params = VisionParams {
        train_side: 14,
        target_side: 24,
        dim: 64,
        mode: ResampleMode::Bicubic,
        antialias: true,
        query: 5 * 24 + 17,
    };
    let maps = params.maps().unwrap();
    let grid = GridParams {
        grid_h: 24,
        grid_w: 24,
    };
    // Made at 24 x 24: MAE's similarity in closed form (a mean of cosines of phase
    // differences), the engine's patch-similarity table.
    let closed = real(
        cpu::compute(&TableSpec::PatchSimilarity(PatchSimilarityParams {
            grid,
            encoding: PatchEncoding::SinCos {
                dim: 64,
                base: 10_000.0,
            },
        }))
        .unwrap(),
    );
    for p in 0..576 {
        let (x, y) = (p % 24, p / 24);
        let expected = closed[params.query * 576 + p];
        assert!((maps.direct[[y, x]] - expected).abs() < 1e-12, "patch {p}");
    }
    // Resampled: dot products of rows of the engine's sincos-2d-resample table.
    let trained = poslab::encoding::grid::sincos_2d(&SinCos2dParams {
        grid: GridParams {
            grid_h: 14,
            grid_w: 14,
        },
        dim: 64,
        prefix_rows: 1,
        ..Default::default()
    })
    .unwrap();
    let spec = TableSpec::SinCos2dResample {
        input: trained,
        params: ResampleParams {
            from: (14, 14),
            to: (24, 24),
            prefix_rows: 1,
            mode: ResampleMode::Bicubic,
            antialias: true,
        },
    };
    let table = real(cpu::compute(&spec).unwrap());
    let row = |r: usize| &table[r * 64..(r + 1) * 64];
    let q = row(1 + params.query);
    for p in 0..576 {
        let dot: f64 = q.iter().zip(row(1 + p)).map(|(a, b)| a * b).sum();
        let (x, y) = (p % 24, p / 24);
        assert!(
            (maps.resampled[[y, x]] - dot / 32.0).abs() < 1e-12,
            "patch {p}"
        );
    }
    // The tables differ: a resampled table is not the one made for the grid.
    let largest = (&maps.resampled - &maps.direct)
        .iter()
        .fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(largest > 0.05, "{largest}");
    // Resampling to the same grid changes nothing.
    for mode in [ResampleMode::Bicubic, ResampleMode::Bilinear] {
        let same = VisionParams {
            target_side: 14,
            query: 20,
            mode,
            ..params
        }
        .maps()
        .unwrap();
        let off = (&same.resampled - &same.direct)
            .iter()
            .fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(off < 1e-12, "{mode:?}: {off}");
    }
}

/// A learned-looking table: `[rows, dim]` seeded values.
fn learned_table(rows: usize, dim: usize, seed: u64) -> ndarray::Array2<f64> {
    let mut random = poslab::encoding::random::SplitMix64::new(seed);
    ndarray::Array2::from_shape_simple_fn((rows, dim), || random.next_unit() - 0.5)
}

#[test]
fn a_learned_table_is_read_with_its_grid_and_resampled_as_the_engine_does() {
    use poslab::encoding::resample::ResampleMode;
    use poslab::scene::context::{LearnedTable, VisionParams};
    let folder = tempfile::tempdir().unwrap();
    // timm's [1, 1 + 7 x 7, 16] with a CLS row, in a .safetensors beside another tensor.
    let table = learned_table(50, 16, 3);
    let values: Vec<f32> = table.iter().map(|&v| v as f32).collect();
    let other = vec![0.0f32; 12];
    let path = folder.path().join("vit.safetensors");
    common::safetensors_file(
        &path,
        &[
            ("blocks.0.attn.qkv.weight", &other, vec![3, 4]),
            ("pos_embed", &values, vec![1, 50, 16]),
        ],
    );
    let (read, tensor) = poslab::import::read_position_table(&path, None, u64::MAX).unwrap();
    assert_eq!(tensor.as_deref(), Some("pos_embed"));
    assert_eq!(read.dim(), (50, 16));
    let learned = LearnedTable::new(read.clone()).unwrap();
    assert_eq!((learned.prefix, learned.side), (1, 7));
    let params = VisionParams {
        target_side: 11,
        mode: ResampleMode::Bilinear,
        antialias: false,
        query: 3 * 11 + 9,
        ..Default::default()
    };
    let maps = learned.maps(&params).unwrap();
    // The resampled map: cosines between rows of the engine's sincos-2d-resample of the table.
    let resampled = real(cpu::compute(&learned.resample_spec(&params)).unwrap());
    let row = |r: usize| &resampled[r * 16..(r + 1) * 16];
    let cosine = |a: &[f64], b: &[f64]| {
        let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
        let norm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
        dot / (norm(a) * norm(b))
    };
    for p in 0..121 {
        let expected = cosine(row(1 + params.query), row(1 + p));
        assert!(
            (maps.resampled[[p / 11, p % 11]] - expected).abs() < 1e-12,
            "patch {p}"
        );
    }
    // The trained map: the query's place on the 7 x 7 grid, (9 * 7 / 11, 3 * 7 / 11) = (5, 1).
    assert_eq!(maps.trained_query, (5, 1));
    let trained_row = |r: usize| read.row(r).to_vec();
    for p in 0..49 {
        let expected = cosine(&trained_row(1 + 7 + 5), &trained_row(1 + p));
        assert!(
            (maps.trained[[p / 7, p % 7]] - expected).abs() < 1e-12,
            "patch {p}"
        );
    }
    // Grids from row counts: square, square plus a CLS row, or neither.
    assert_eq!(
        LearnedTable::new(learned_table(196, 4, 1)).unwrap().prefix,
        0
    );
    assert_eq!(
        LearnedTable::new(learned_table(197, 4, 1)).unwrap().side,
        14
    );
    let error = LearnedTable::new(learned_table(50 + 3, 4, 1)).unwrap_err();
    assert!(error.contains("53 rows"), "{error}");
    let error = LearnedTable::new(learned_table(65 * 65, 2, 1)).unwrap_err();
    assert!(error.contains("65 x 65"), "{error}");
    // A file with several tensors, none named as a position embedding, names them.
    let unnamed = folder.path().join("two.safetensors");
    common::safetensors_file(
        &unnamed,
        &[("a", &other, vec![3, 4]), ("b", &other, vec![12])],
    );
    let error = poslab::import::read_position_table(&unnamed, None, u64::MAX).unwrap_err();
    assert!(error.to_string().contains("name one of a, b"), "{error}");
    let error = poslab::import::read_position_table(&unnamed, Some("b"), u64::MAX).unwrap_err();
    assert!(error.to_string().contains("[rows, dim]"), "{error}");
}
