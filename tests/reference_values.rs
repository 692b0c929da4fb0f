//! Small tables of every kind checked against literal numbers computed another way: each
//! reference implementation transcribed into NumPy (float64, or float32 where the reference
//! computes in float32) and run once; the script is quoted above each constant. None of these
//! numbers came from poslab.

// The literals are what the references printed; some happen to equal named constants.
#![allow(clippy::approx_constant)]

use ndarray::{Array2, array};
use poslab::encoding::PairLayout;
use poslab::encoding::alibi::{self, Alibi2dParams, AlibiMode, AlibiParams};
use poslab::encoding::binary::{self, BinaryParams};
use poslab::encoding::grid::{self, DistanceMetric, GridParams, SinCos2dParams};
use poslab::encoding::relative::{self, RelativeClipParams, T5BucketParams};
use poslab::encoding::rope::{self, RopeParams};
use poslab::encoding::rope2d::{self, AxialParams};
use poslab::encoding::sinusoidal::{self, SinusoidalParams, Spacing};

/// f64 results agree with NumPy to a few ulps of the largest magnitudes involved.
const TOLERANCE: f64 = 1e-13;

fn assert_close(actual: impl IntoIterator<Item = f64>, expected: &[f64], what: &str) {
    let actual: Vec<f64> = actual.into_iter().collect();
    assert_eq!(actual.len(), expected.len(), "{what}: length");
    for (k, (a, e)) in actual.iter().zip(expected).enumerate() {
        let same_infinity = a.is_infinite() && a == e;
        assert!(
            same_infinity || (a - e).abs() <= TOLERANCE * e.abs().max(1.0),
            "{what}[{k}]: poslab {a}, reference {e}"
        );
    }
}

fn sinusoidal(
    seq: usize,
    dim: usize,
    base: f64,
    start: u64,
    layout: PairLayout,
    spacing: Spacing,
) -> SinusoidalParams {
    SinusoidalParams {
        seq,
        dim,
        base,
        start,
        layout,
        spacing,
        ..SinusoidalParams::default()
    }
}

// pos = arange(start, start+seq)[:, None]; div = exp(arange(0, d, 2) * -(log(base)/d))
// pe[:, 0::2] = sin(pos*div); pe[:, 1::2] = cos(pos*div)   (the annotated transformer)
const VASWANI_3X6_B100_S5: [f64; 18] = [
    -0.9589242746631385,
    0.28366218546322625,
    0.8806428497839697,
    0.47378072050724973,
    0.23000171166476732,
    0.9731902242785206,
    -0.27941549819892586,
    0.960170286650366,
    0.9615690291242431,
    0.27456329366661597,
    0.27490926500059937,
    0.9614701742731442,
    0.6569865987187891,
    0.7539022543433046,
    0.9980354973727412,
    0.0626509854985941,
    0.3192246506063148,
    0.9476790714399449,
];

#[test]
fn sinusoidal_vaswani_interleaved_matches_the_annotated_transformer() {
    let p = sinusoidal(3, 6, 100.0, 5, PairLayout::Interleaved, Spacing::Vaswani);
    assert_close(
        sinusoidal::table(&p).unwrap(),
        &VASWANI_3X6_B100_S5,
        "vaswani",
    );
}

// tensor2tensor get_timing_signal_1d: inc = log(base)/max(n-1, 1);
// inv = exp(arange(n) * -inc); concat([sin(pos*inv), cos(pos*inv)], axis=1)
const T2T_3X8_B1000_S2: [f64; 24] = [
    0.9092974268256817,
    0.19866933079506124,
    0.019998666693333087,
    0.0019999986666669337,
    -0.4161468365471424,
    0.9800665778412416,
    0.9998000066665778,
    0.9999980000006666,
    0.1411200080598672,
    0.2955202066613396,
    0.029995500202495674,
    0.002999995500002026,
    -0.9899924966004454,
    0.955336489125606,
    0.9995500337489875,
    0.999995500003375,
    -0.7568024953079282,
    0.3894183423086506,
    0.039989334186634175,
    0.003999989333341868,
    -0.6536436208636119,
    0.9210609940028851,
    0.9992001066609779,
    0.9999920000106667,
];
const T2T_2X2_B10_S3: [f64; 4] = [
    0.1411200080598672,
    -0.9899924966004454,
    -0.7568024953079282,
    -0.6536436208636119,
];

#[test]
fn sinusoidal_t2t_split_matches_tensor2tensor() {
    let p = sinusoidal(3, 8, 1000.0, 2, PairLayout::Half, Spacing::T2t);
    assert_close(sinusoidal::table(&p).unwrap(), &T2T_3X8_B1000_S2, "t2t");
    // dim 2: one frequency, and tensor2tensor's max(n - 1, 1) guard keeps it at 1.
    let p = sinusoidal(2, 2, 10.0, 3, PairLayout::Half, Spacing::T2t);
    assert_close(sinusoidal::table(&p).unwrap(), &T2T_2X2_B10_S3, "t2t dim 2");
}

// pe = vaswani(5, 4, base=10); pe @ pe[2]
const DOT_DECAY_5X4_B10_A2: [f64; 5] = [
    0.39043157333793327,
    1.4907175861233226,
    2.0000000000000004,
    1.4907175861233226,
    0.3904315733379333,
];

// pe = t2t(3, 4, base=10, start=7); pe @ pe.T
const SIM_T2T_3X4_B10_S7: [f64; 9] = [
    1.9999999999999998,
    1.5353064711461655,
    0.5639197412940994,
    1.5353064711461655,
    2.0,
    1.5353064711461655,
    0.5639197412940994,
    1.5353064711461655,
    2.0,
];

#[test]
fn dot_decay_and_similarity_match_row_products() {
    let p = sinusoidal(5, 4, 10.0, 0, PairLayout::Interleaved, Spacing::Vaswani);
    assert_close(
        sinusoidal::dot_decay(&p, 2).unwrap(),
        &DOT_DECAY_5X4_B10_A2,
        "dot-decay",
    );
    let p = sinusoidal(3, 4, 10.0, 7, PairLayout::Half, Spacing::T2t);
    assert_close(
        sinusoidal::similarity(&p).unwrap(),
        &SIM_T2T_3X4_B10_S7,
        "similarity",
    );
}

/// diffusers' `flip_sin_to_cos` and MLX's `cos_first` put each cosine before its sine; the
/// scale of x-transformers and MLX multiplies every value, and a row's dot product by its
/// square. Evaluated here from the formulas, position by position, in both layouts.
#[test]
fn cos_first_and_scale_are_the_libraries_formulas() {
    let (seq, dim, base, start, scale) = (9usize, 10usize, 500.0f64, 7u64, 0.3f64);
    let half = dim / 2;
    for spacing in [Spacing::Vaswani, Spacing::T2t] {
        // diffusers: exp(-ln(max_period) * i / (half - shift)), shift 0 (Vaswani) or 1.
        let shift = usize::from(spacing == Spacing::T2t);
        let w = |i: usize| (-base.ln() * i as f64 / (half - shift) as f64).exp();
        for layout in [PairLayout::Interleaved, PairLayout::Half] {
            let params = SinusoidalParams {
                first: sinusoidal::FirstOfPair::Cos,
                amplitude: scale,
                ..sinusoidal(seq, dim, base, start, layout, spacing)
            };
            let mut expected = Vec::new();
            for r in 0..seq {
                let p = (start + r as u64) as f64;
                let mut row = vec![0.0; dim];
                for i in 0..half {
                    let (cos_col, sin_col) = match layout {
                        PairLayout::Interleaved => (2 * i, 2 * i + 1),
                        PairLayout::Half => (i, half + i),
                    };
                    row[cos_col] = scale * (p * w(i)).cos();
                    row[sin_col] = scale * (p * w(i)).sin();
                }
                expected.extend(row);
            }
            let what = format!("cos first, scale {scale}, {layout:?}, {spacing:?}");
            assert_close(sinusoidal::table(&params).unwrap(), &expected, &what);
            // PE[2] . PE[j] from the rows above: scale^2 * sum_i cos((j - 2) w_i).
            let dots: Vec<f64> = (0..seq)
                .map(|j| {
                    (0..dim)
                        .map(|c| expected[2 * dim + c] * expected[j * dim + c])
                        .sum()
                })
                .collect();
            assert_close(
                sinusoidal::dot_decay(&params, 2).unwrap(),
                &dots,
                &format!("dot-decay, {what}"),
            );
        }
    }
    let refused = SinusoidalParams {
        amplitude: 0.0,
        ..SinusoidalParams::default()
    };
    assert!(
        sinusoidal::table(&refused).is_err(),
        "a scale of 0 is refused"
    );
}

// Hugging Face: 1.0 / (base ** (arange(0, dim, 2) / dim))
const INV_FREQ_10_B500000: [f64; 5] = [
    1.0,
    0.07247796636776954,
    0.0052530556088075326,
    0.00038073078774317583,
    2.7594593229224282e-05,
];

#[test]
fn rope_inverse_frequencies_match_hugging_face() {
    assert_close(
        rope::inv_freq(10, 500_000.0).unwrap(),
        &INV_FREQ_10_B500000,
        "inv_freq",
    );
}

#[test]
fn rope_angles_are_positions_times_frequencies() {
    // base 10000, dim 4: theta = [1, 1/100]; positions 100, 101, 102.
    let p = RopeParams {
        seq: 3,
        dim: 4,
        base: 10_000.0,
        start: 100,
    };
    assert_close(
        rope::angles(&p).unwrap(),
        &[100.0, 1.0, 101.0, 1.01, 102.0, 1.02],
        "angles",
    );
}

fn rope_input() -> Array2<f64> {
    array![
        [1.0, 2.0, 3.0, 4.0],
        [0.5, -1.0, 0.25, 2.0],
        [-3.0, 1.5, 2.0, -0.5]
    ]
}

// Meta llama apply_rotary_emb: x viewed as complex (x[2i] + i x[2i+1]) times exp(i p theta),
// positions 3, 4, 5, base 100.
const LLAMA_X_B100_S3: [f64; 12] = [
    -1.27223251272018,
    -1.8388649851410237,
    1.6839286407314595,
    4.707906576486443,
    -1.0836243057397341,
    0.27524237320964784,
    -0.5485714361165798,
    1.939476573582933,
    0.5873998556050288,
    3.3022661021842548,
    1.994877893082847,
    0.5200597962632196,
];

// Hugging Face: x * cos(cat(f, f)) + rotate_half(x) * sin(cat(f, f)), same positions.
const HF_X_B100_S3: [f64; 12] = [
    -1.413352520780047,
    0.7285921516058536,
    -2.828857481741469,
    4.412386369825104,
    -0.13762118660482392,
    -1.6998976786201863,
    -0.5418121528698671,
    1.4527036456971196,
    1.0668619929365981,
    1.5560866121376606,
    3.4440971949158676,
    0.28034702696111813,
];

#[test]
fn rope_apply_matches_llama_and_hugging_face() {
    let x = rope_input();
    let llama = rope::apply(x.view(), PairLayout::Interleaved, 100.0, 3).unwrap();
    assert_close(llama, &LLAMA_X_B100_S3, "interleaved");
    let hf = rope::apply(x.view(), PairLayout::Half, 100.0, 3).unwrap();
    assert_close(hf, &HF_X_B100_S3, "half");
}

// ofirpress/attention_with_linear_biases get_slopes, run as written.
const SLOPES_6: [f64; 6] = [0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125];
const SLOPES_12: [f64; 12] = [
    0.5,
    0.25,
    0.125,
    0.0625,
    0.03125,
    0.015625,
    0.0078125,
    0.00390625,
    0.7071067811865476,
    0.35355339059327384,
    0.17677669529663692,
    0.08838834764831849,
];

#[test]
fn alibi_slopes_follow_the_reference_rule_for_any_head_count() {
    assert_close(alibi::slopes(6).unwrap(), &SLOPES_6, "6 heads");
    assert_close(alibi::slopes(12).unwrap(), &SLOPES_12, "12 heads");
    assert_close(alibi::slopes(1).unwrap(), &[1.0 / 256.0], "1 head");
}

// b = -m[:, None, None] * abs(i - j), 3 heads, seq 3, symmetric
const ALIBI_3X3_SYM: [f64; 27] = [
    -0.0,
    -0.0625,
    -0.125,
    -0.0625,
    -0.0,
    -0.0625,
    -0.125,
    -0.0625,
    -0.0,
    -0.0,
    -0.00390625,
    -0.0078125,
    -0.00390625,
    -0.0,
    -0.00390625,
    -0.0078125,
    -0.00390625,
    -0.0,
    -0.0,
    -0.25,
    -0.5,
    -0.25,
    -0.0,
    -0.25,
    -0.5,
    -0.25,
    -0.0,
];

#[test]
fn alibi_bias_matches_the_formula() {
    let p = AlibiParams {
        heads: 3,
        seq: 3,
        mode: AlibiMode::Symmetric,
    };
    assert_close(alibi::bias(&p).unwrap(), &ALIBI_3X3_SYM, "symmetric");
    let p = AlibiParams {
        heads: 2,
        seq: 3,
        mode: AlibiMode::Causal,
    };
    let ninf = f64::NEG_INFINITY;
    #[rustfmt::skip]
    let causal = [0.0, ninf, ninf, -0.0625, 0.0, ninf, -0.125, -0.0625, 0.0,
                  0.0, ninf, ninf, -0.00390625, 0.0, ninf, -0.0078125, -0.00390625, 0.0];
    assert_close(alibi::bias(&p).unwrap(), &causal, "causal");
}

// CROMA get_2dalibi(num_heads=3, num_patches=9), run as written (square grids only there).
const CROMA_3H_3X3: [f64; 243] = [
    -0.0,
    -0.0625,
    -0.125,
    -0.0625,
    -0.08838834764831845,
    -0.13975424859373686,
    -0.125,
    -0.13975424859373686,
    -0.1767766952966369,
    -0.0625,
    -0.0,
    -0.0625,
    -0.08838834764831845,
    -0.0625,
    -0.08838834764831845,
    -0.13975424859373686,
    -0.125,
    -0.13975424859373686,
    -0.125,
    -0.0625,
    -0.0,
    -0.13975424859373686,
    -0.08838834764831845,
    -0.0625,
    -0.1767766952966369,
    -0.13975424859373686,
    -0.125,
    -0.0625,
    -0.08838834764831845,
    -0.13975424859373686,
    -0.0,
    -0.0625,
    -0.125,
    -0.0625,
    -0.08838834764831845,
    -0.13975424859373686,
    -0.08838834764831845,
    -0.0625,
    -0.08838834764831845,
    -0.0625,
    -0.0,
    -0.0625,
    -0.08838834764831845,
    -0.0625,
    -0.08838834764831845,
    -0.13975424859373686,
    -0.08838834764831845,
    -0.0625,
    -0.125,
    -0.0625,
    -0.0,
    -0.13975424859373686,
    -0.08838834764831845,
    -0.0625,
    -0.125,
    -0.13975424859373686,
    -0.1767766952966369,
    -0.0625,
    -0.08838834764831845,
    -0.13975424859373686,
    -0.0,
    -0.0625,
    -0.125,
    -0.13975424859373686,
    -0.125,
    -0.13975424859373686,
    -0.08838834764831845,
    -0.0625,
    -0.08838834764831845,
    -0.0625,
    -0.0,
    -0.0625,
    -0.1767766952966369,
    -0.13975424859373686,
    -0.125,
    -0.13975424859373686,
    -0.08838834764831845,
    -0.0625,
    -0.125,
    -0.0625,
    -0.0,
    -0.0,
    -0.00390625,
    -0.0078125,
    -0.00390625,
    -0.005524271728019903,
    -0.008734640537108554,
    -0.0078125,
    -0.008734640537108554,
    -0.011048543456039806,
    -0.00390625,
    -0.0,
    -0.00390625,
    -0.005524271728019903,
    -0.00390625,
    -0.005524271728019903,
    -0.008734640537108554,
    -0.0078125,
    -0.008734640537108554,
    -0.0078125,
    -0.00390625,
    -0.0,
    -0.008734640537108554,
    -0.005524271728019903,
    -0.00390625,
    -0.011048543456039806,
    -0.008734640537108554,
    -0.0078125,
    -0.00390625,
    -0.005524271728019903,
    -0.008734640537108554,
    -0.0,
    -0.00390625,
    -0.0078125,
    -0.00390625,
    -0.005524271728019903,
    -0.008734640537108554,
    -0.005524271728019903,
    -0.00390625,
    -0.005524271728019903,
    -0.00390625,
    -0.0,
    -0.00390625,
    -0.005524271728019903,
    -0.00390625,
    -0.005524271728019903,
    -0.008734640537108554,
    -0.005524271728019903,
    -0.00390625,
    -0.0078125,
    -0.00390625,
    -0.0,
    -0.008734640537108554,
    -0.005524271728019903,
    -0.00390625,
    -0.0078125,
    -0.008734640537108554,
    -0.011048543456039806,
    -0.00390625,
    -0.005524271728019903,
    -0.008734640537108554,
    -0.0,
    -0.00390625,
    -0.0078125,
    -0.008734640537108554,
    -0.0078125,
    -0.008734640537108554,
    -0.005524271728019903,
    -0.00390625,
    -0.005524271728019903,
    -0.00390625,
    -0.0,
    -0.00390625,
    -0.011048543456039806,
    -0.008734640537108554,
    -0.0078125,
    -0.008734640537108554,
    -0.005524271728019903,
    -0.00390625,
    -0.0078125,
    -0.00390625,
    -0.0,
    -0.0,
    -0.25,
    -0.5,
    -0.25,
    -0.3535533905932738,
    -0.5590169943749475,
    -0.5,
    -0.5590169943749475,
    -0.7071067811865476,
    -0.25,
    -0.0,
    -0.25,
    -0.3535533905932738,
    -0.25,
    -0.3535533905932738,
    -0.5590169943749475,
    -0.5,
    -0.5590169943749475,
    -0.5,
    -0.25,
    -0.0,
    -0.5590169943749475,
    -0.3535533905932738,
    -0.25,
    -0.7071067811865476,
    -0.5590169943749475,
    -0.5,
    -0.25,
    -0.3535533905932738,
    -0.5590169943749475,
    -0.0,
    -0.25,
    -0.5,
    -0.25,
    -0.3535533905932738,
    -0.5590169943749475,
    -0.3535533905932738,
    -0.25,
    -0.3535533905932738,
    -0.25,
    -0.0,
    -0.25,
    -0.3535533905932738,
    -0.25,
    -0.3535533905932738,
    -0.5590169943749475,
    -0.3535533905932738,
    -0.25,
    -0.5,
    -0.25,
    -0.0,
    -0.5590169943749475,
    -0.3535533905932738,
    -0.25,
    -0.5,
    -0.5590169943749475,
    -0.7071067811865476,
    -0.25,
    -0.3535533905932738,
    -0.5590169943749475,
    -0.0,
    -0.25,
    -0.5,
    -0.5590169943749475,
    -0.5,
    -0.5590169943749475,
    -0.3535533905932738,
    -0.25,
    -0.3535533905932738,
    -0.25,
    -0.0,
    -0.25,
    -0.7071067811865476,
    -0.5590169943749475,
    -0.5,
    -0.5590169943749475,
    -0.3535533905932738,
    -0.25,
    -0.5,
    -0.25,
    -0.0,
];

#[test]
fn alibi_2d_matches_croma() {
    let p = Alibi2dParams {
        heads: 3,
        grid: GridParams {
            grid_h: 3,
            grid_w: 3,
        },
    };
    assert_close(alibi::bias_2d(&p).unwrap(), &CROMA_3H_3X3, "2d alibi");
}

#[test]
fn patch_distances_on_a_rectangular_grid() {
    // 2 rows x 3 columns: patch 0 at (0,0), patch 5 at (x 2, y 1).
    let g = GridParams {
        grid_h: 2,
        grid_w: 3,
    };
    let d = |metric| grid::patch_distance(&g, metric).unwrap();
    assert_eq!(d(DistanceMetric::Euclidean)[[0, 5]], 5f64.sqrt());
    assert_eq!(d(DistanceMetric::Manhattan)[[0, 5]], 3.0);
    assert_eq!(d(DistanceMetric::Chebyshev)[[0, 5]], 2.0);
    assert_eq!(d(DistanceMetric::Manhattan)[[2, 3]], 3.0);
    assert_eq!(d(DistanceMetric::Chebyshev)[[1, 4]], 1.0);
}

// MAE get_2d_sincos_pos_embed with meshgrid(arange(grid_w), arange(grid_h)), grid 2 x 3, dim 8
const MAE_2X3_D8: [f64; 48] = [
    0.0,
    0.0,
    1.0,
    1.0,
    0.0,
    0.0,
    1.0,
    1.0,
    0.8414709848078965,
    0.009999833334166664,
    0.5403023058681398,
    0.9999500004166653,
    0.0,
    0.0,
    1.0,
    1.0,
    0.9092974268256817,
    0.01999866669333308,
    -0.4161468365471424,
    0.9998000066665778,
    0.0,
    0.0,
    1.0,
    1.0,
    0.0,
    0.0,
    1.0,
    1.0,
    0.8414709848078965,
    0.009999833334166664,
    0.5403023058681398,
    0.9999500004166653,
    0.8414709848078965,
    0.009999833334166664,
    0.5403023058681398,
    0.9999500004166653,
    0.8414709848078965,
    0.009999833334166664,
    0.5403023058681398,
    0.9999500004166653,
    0.9092974268256817,
    0.01999866669333308,
    -0.4161468365471424,
    0.9998000066665778,
    0.8414709848078965,
    0.009999833334166664,
    0.5403023058681398,
    0.9999500004166653,
];

#[test]
fn sincos_2d_matches_mae() {
    let p = SinCos2dParams {
        grid: GridParams {
            grid_h: 2,
            grid_w: 3,
        },
        dim: 8,
        base: 10_000.0,
        ..Default::default()
    };
    assert_close(grid::sincos_2d(&p).unwrap(), &MAE_2X3_D8, "mae");
}

// rope-vit compute_axial_cis(dim=8, end_x=3, end_y=2, theta=100), angles of freqs_cis
const AXIAL_2X3_D8_T100: [f64; 24] = [
    0.0, 0.0, 0.0, 0.0, 1.0, 0.1, 0.0, 0.0, 2.0, 0.2, 0.0, 0.0, 0.0, 0.0, 1.0, 0.1, 1.0, 0.1, 1.0,
    0.1, 2.0, 0.2, 1.0, 0.1,
];
const MIXED_2X3: [f64; 18] = [
    0.0, 0.0, 0.0, 0.5, -1.25, 2.0, 1.0, -2.5, 4.0, 0.75, 0.125, -3.5, 1.25, -1.125, -1.5, 1.75,
    -2.375, 0.5,
];

#[test]
fn rope_2d_angles_match_rope_vit() {
    let p = AxialParams {
        grid: GridParams {
            grid_h: 2,
            grid_w: 3,
        },
        dim: 8,
        theta: 100.0,
        ..Default::default()
    };
    assert_close(
        rope2d::axial_angles(&p).unwrap(),
        &AXIAL_2X3_D8_T100,
        "axial",
    );
    // t_x = t % 3, t_y = t // 3; theta_x[k] * t_x + theta_y[k] * t_y
    let freqs = array![[0.5, -1.25, 2.0], [0.75, 0.125, -3.5]];
    let g = GridParams {
        grid_h: 2,
        grid_w: 3,
    };
    assert_close(
        rope2d::mixed_angles(&g, freqs.view()).unwrap(),
        &MIXED_2X3,
        "mixed",
    );
}

// Hugging Face T5 _relative_position_bucket on relative positions -150..=150, in float32
// as torch evaluates it on a float tensor.
const T5_BI_32_128: [i32; 301] = [
    15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15,
    15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15,
    15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14,
    14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 14, 13, 13, 13, 13, 13, 13, 13, 13, 13,
    13, 13, 13, 13, 13, 13, 13, 13, 13, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 12, 11,
    11, 11, 11, 11, 11, 11, 11, 11, 10, 10, 10, 10, 10, 10, 10, 9, 9, 9, 9, 8, 8, 8, 8, 7, 6, 5, 4,
    3, 2, 1, 0, 17, 18, 19, 20, 21, 22, 23, 24, 24, 24, 24, 25, 25, 25, 25, 26, 26, 26, 26, 26, 26,
    26, 27, 27, 27, 27, 27, 27, 27, 27, 27, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28,
    29, 29, 29, 29, 29, 29, 29, 29, 29, 29, 29, 29, 29, 29, 29, 29, 29, 29, 30, 30, 30, 30, 30, 30,
    30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 31, 31, 31,
    31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31,
    31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31,
    31, 31, 31, 31, 31, 31, 31, 31, 31,
];
const T5_UNI_32_128: [i32; 301] = [
    31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31,
    31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 31, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30,
    30, 30, 30, 30, 29, 29, 29, 29, 29, 29, 29, 29, 29, 29, 29, 29, 28, 28, 28, 28, 28, 28, 28, 28,
    28, 28, 27, 27, 27, 27, 27, 27, 27, 27, 27, 27, 26, 26, 26, 26, 26, 26, 26, 26, 25, 25, 25, 25,
    25, 25, 25, 24, 24, 24, 24, 24, 24, 23, 23, 23, 23, 23, 23, 22, 22, 22, 22, 22, 21, 21, 21, 21,
    20, 20, 20, 20, 19, 19, 19, 18, 18, 18, 17, 17, 16, 16, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6,
    5, 4, 3, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
];

// The same for -30..=30 with num_buckets 10, max_distance 20 (bidirectional).
const T5_BI_10_20: [i32; 61] = [
    4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 3, 3, 3, 3, 3, 2, 2, 2, 1, 0, 6,
    7, 7, 7, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9,
];

#[test]
fn t5_buckets_match_hugging_face() {
    for (params, range, expected) in [
        ((32, 128, true), -150..=150, &T5_BI_32_128[..]),
        ((32, 128, false), -150..=150, &T5_UNI_32_128[..]),
        ((10, 20, true), -30..=30, &T5_BI_10_20[..]),
    ] {
        let p = T5BucketParams {
            seq: 1,
            num_buckets: params.0,
            max_distance: params.1,
            bidirectional: params.2,
        };
        let buckets: Vec<i32> = range.map(|r| p.bucket(r)).collect();
        assert_eq!(buckets, expected, "{params:?}");
    }
    // The table puts key - query in row query, column key.
    let p = T5BucketParams {
        seq: 151,
        num_buckets: 32,
        max_distance: 128,
        bidirectional: true,
    };
    let table = relative::t5_buckets(&p).unwrap();
    assert_eq!(table.row(150).to_vec(), T5_BI_32_128[..151].to_vec());
    assert_eq!(table.row(0).to_vec(), T5_BI_32_128[150..].to_vec());
}

/// Bucket edges where float32 and float64 disagree: torch (float32) puts distance 64 with
/// num_buckets 9, max_distance 128 (decoder) in bucket 8, float64 arithmetic in bucket 7.
/// Found by evaluating the NumPy transcription both ways over many settings.
#[test]
fn t5_bucket_edges_follow_float32_like_torch() {
    let p = T5BucketParams {
        seq: 1,
        num_buckets: 9,
        max_distance: 128,
        bidirectional: false,
    };
    assert_eq!([p.bucket(-8), p.bucket(-16), p.bucket(-64)], [5, 6, 8]);
    let p = T5BucketParams {
        seq: 1,
        num_buckets: 10,
        max_distance: 160,
        bidirectional: false,
    };
    assert_eq!([p.bucket(-10), p.bucket(-20), p.bucket(-80)], [6, 7, 9]);
    let p = T5BucketParams {
        seq: 1,
        num_buckets: 10,
        max_distance: 686,
        bidirectional: true,
    };
    assert_eq!([p.bucket(-98), p.bucket(98)], [3, 8]);
}

#[test]
fn relative_clip_matches_shaw() {
    let p = RelativeClipParams {
        seq: 4,
        max_relative: 2,
    };
    let expected = array![[2, 3, 4, 4], [1, 2, 3, 4], [0, 1, 2, 3], [0, 0, 1, 2]];
    assert_eq!(relative::relative_clip(&p).unwrap(), expected);
}

#[test]
fn binary_rows_are_bits_least_significant_first() {
    // 5 = 0b101, 6 = 0b110, 7 = 0b111 (Python: [(p >> j) & 1 for j in range(4)])
    let p = BinaryParams {
        seq: 3,
        dim: 4,
        start: 5,
    };
    let expected = array![
        [1.0, 0.0, 1.0, 0.0],
        [0.0, 1.0, 1.0, 0.0],
        [1.0, 1.0, 1.0, 0.0]
    ];
    assert_eq!(binary::table(&p).unwrap(), expected);
}
