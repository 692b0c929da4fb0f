//! sincos-2d-resample against torch's published numbers, Pillow's resampler (the algorithm
//! torch's anti-aliased path was taken from, run as another implementation) and identities.
//! None of these numbers came from poslab.

use ndarray::{Array2, array};
use poslab::encoding::resample::{self, AxisTaps, ResampleMode, ResampleParams};

fn params(
    from: (usize, usize),
    to: (usize, usize),
    mode: ResampleMode,
    antialias: bool,
) -> ResampleParams {
    ResampleParams {
        from,
        to,
        prefix_rows: 0,
        mode,
        antialias,
    }
}

fn assert_close(actual: &Array2<f64>, expected: &[[f64; 2]], tolerance: f64, what: &str) {
    assert_eq!(actual.nrows(), expected.len(), "{what}: rows");
    for (k, (row, want)) in actual.rows().into_iter().zip(expected).enumerate() {
        for c in 0..2 {
            assert!(
                (row[c] - want[c]).abs() <= tolerance,
                "{what}: patch {k} channel {c}: poslab {}, reference {}",
                row[c],
                want[c]
            );
        }
    }
}

/// PyTorch's own test of plain bicubic (test_nn.py, "must match opencv"):
/// `F.interpolate(torch.arange(8.).view(1, 2, 2, 2), scale_factor=2, mode='bicubic',
/// align_corners=False)`, printed to 5 decimals. As a table: 4 patches, 2 channels.
#[test]
fn plain_bicubic_matches_torchs_published_values() {
    let input = Array2::from_shape_fn((4, 2), |(patch, channel)| (4 * channel + patch) as f64);
    let out = resample::resample(
        input.view(),
        &params((2, 2), (4, 4), ResampleMode::Bicubic, false),
    )
    .unwrap();
    let expected: [[f64; 4]; 8] = [
        [-0.31641, 0.01562, 0.56250, 0.89453],
        [0.34766, 0.67969, 1.22656, 1.55859],
        [1.44141, 1.77344, 2.32031, 2.65234],
        [2.10547, 2.43750, 2.98438, 3.31641],
        [3.68359, 4.01562, 4.56250, 4.89453],
        [4.34766, 4.67969, 5.22656, 5.55859],
        [5.44141, 5.77344, 6.32031, 6.65234],
        [6.10547, 6.43750, 6.98438, 7.31641],
    ];
    for channel in 0..2 {
        for y in 0..4 {
            for x in 0..4 {
                let (got, want) = (out[[y * 4 + x, channel]], expected[channel * 4 + y][x]);
                assert!(
                    (got - want).abs() <= 5e-6,
                    "channel {channel} ({y}, {x}): {got} vs {want}"
                );
            }
        }
    }
}

/// The example of `torch.nn.Upsample`'s documentation: `[[1, 2], [3, 4]]` doubled bilinearly
/// with `align_corners=False`.
#[test]
fn plain_bilinear_matches_torchs_documented_example() {
    let input = array![[1.0], [2.0], [3.0], [4.0]];
    let out = resample::resample(
        input.view(),
        &params((2, 2), (4, 4), ResampleMode::Bilinear, false),
    )
    .unwrap();
    let expected = [
        1.0, 1.25, 1.75, 2.0, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3.0, 3.25, 3.75, 4.0,
    ];
    for (k, want) in expected.iter().enumerate() {
        assert_eq!(out[[k, 0]], *want, "patch {k}");
    }
}

/// Keys' kernel as one function of the distance, W(s) for |s| < 1 and 1 <= |s| < 2, summed
/// over the four neighbours with clamped indices: plain bicubic written another way (torch's
/// source index `scale (i + 0.5) - 0.5`, in f64 here, so within float32 weight rounding).
#[test]
fn plain_bicubic_is_keys_kernel_over_clamped_neighbours() {
    let keys = |s: f64| {
        let (a, s) = (-0.75, s.abs());
        if s < 1.0 {
            (a + 2.0) * s.powi(3) - (a + 3.0) * s * s + 1.0
        } else if s < 2.0 {
            a * s.powi(3) - 5.0 * a * s * s + 8.0 * a * s - 4.0 * a
        } else {
            0.0
        }
    };
    let (from, to) = ((3, 5), (7, 8));
    let value = |y: i64, x: i64| ((y * 5 + x) as f64 * 0.7).sin() + 0.1 * (x * x) as f64;
    let input = Array2::from_shape_fn((15, 1), |(k, _)| value(k as i64 / 5, k as i64 % 5));
    let out = resample::resample(
        input.view(),
        &params(from, to, ResampleMode::Bicubic, false),
    )
    .unwrap();
    let source =
        |i: usize, n_in: usize, n_out: usize| (i as f64 + 0.5) * n_in as f64 / n_out as f64 - 0.5;
    for y in 0..to.0 {
        for x in 0..to.1 {
            let (sy, sx) = (source(y, from.0, to.0), source(x, from.1, to.1));
            let mut want = 0.0;
            for ky in sy.floor() as i64 - 1..=sy.floor() as i64 + 2 {
                for kx in sx.floor() as i64 - 1..=sx.floor() as i64 + 2 {
                    want += keys(sy - ky as f64)
                        * keys(sx - kx as f64)
                        * value(ky.clamp(0, 2), kx.clamp(0, 4));
                }
            }
            let got = out[[y * to.1 + x, 0]];
            assert!((got - want).abs() <= 2e-6, "({y}, {x}): {got} vs {want}");
        }
    }
}

// The anti-aliased references: Pillow 9.4 (Debian bookworm's python3-pil) resizing a float
// ("F") image, whose algorithm torch's anti-aliased path reproduces (torch forms its weights in
// float32 where Pillow uses double, hence the tolerance). Rows are output patches in raster
// order, columns the two channels:
// import math
// from PIL import Image
// H, W = 4, 5
// def value(c, y, x):
//     return math.sin(0.9 * x + 0.4 * y) if c == 0 else 0.1 * (x - 2) ** 2 - 0.3 * y + 0.05 * x * y
// for (th, tw) in [(7, 9), (2, 3)]:
//     for name, f in [("bicubic", Image.BICUBIC), ("bilinear", Image.BILINEAR)]:
//         rows = []
//         for c in range(2):
//             im = Image.new("F", (W, H))
//             im.putdata([value(c, y, x) for y in range(H) for x in range(W)])
//             out = im.resize((tw, th), f)
//             rows.append(list(out.getdata()))
//         print(f"// {name} {th}x{tw}")
//         print("[" + ", ".join(f"[{a:.9e}, {b:.9e}]" for a, b in zip(rows[0], rows[1])) + "]")
const PILLOW_BICUBIC_7X9: &[[f64; 2]] = &[
    [-9.600121528e-02, 4.485395253e-01],
    [1.822615415e-01, 3.435303271e-01],
    [6.973115802e-01, 1.480077356e-01],
    [9.467893243e-01, 4.893310741e-02],
    [9.869644046e-01, 1.586538553e-02],
    [7.578412890e-01, 4.452605918e-02],
    [3.668039739e-01, 1.391118616e-01],
    [-1.942925751e-01, 3.295797408e-01],
    [-4.888570309e-01, 4.320284426e-01],
    [4.555618390e-02, 3.441829979e-01],
    [3.035288453e-01, 2.447126061e-01],
    [7.755073309e-01, 6.012435630e-02],
    [9.626827240e-01, -2.924006991e-02],
    [9.350895882e-01, -5.277447775e-02],
    [6.523525119e-01, -1.458049472e-02],
    [2.326782793e-01, 8.971550316e-02],
    [-3.149275184e-01, 2.911177576e-01],
    [-5.996742845e-01, 3.991052508e-01],
    [3.134639263e-01, 1.434539407e-01],
    [5.297206044e-01, 5.463740230e-02],
    [9.140932560e-01, -1.089186892e-01],
    [9.807592630e-01, -1.796056181e-01],
    [8.249822855e-01, -1.848027706e-01],
    [4.441047013e-01, -1.282715201e-01],
    [-2.462206595e-02, -5.298031028e-03],
    [-5.397771597e-01, 2.171363831e-01],
    [-8.023343086e-01, 3.357777596e-01],
    [5.290968418e-01, -3.168604523e-02],
    [6.947430372e-01, -1.112069041e-01],
    [9.773150086e-01, -2.564120293e-01],
    [9.336401224e-01, -3.108024895e-01],
    [6.750633121e-01, -3.000000119e-01],
    [2.322920412e-01, -2.274691463e-01],
    [-2.494819462e-01, -8.819918334e-02],
    [-7.029720545e-01, 1.525862068e-01],
    [-9.291278124e-01, 2.805232704e-01],
    [7.168349028e-01, -2.068260312e-01],
    [8.231374621e-01, -2.770512104e-01],
    [9.890111089e-01, -4.039053321e-01],
    [8.372979760e-01, -4.419993460e-01],
    [4.895538986e-01, -4.151972532e-01],
    [8.232579567e-03, -3.266667426e-01],
    [-4.611887336e-01, -1.711003333e-01],
    [-8.291051388e-01, 8.803603053e-02],
    [-1.006936193e+00, 2.252687663e-01],
    [8.778122067e-01, -4.075550735e-01],
    [9.089217186e-01, -4.671263993e-01],
    [9.300817251e-01, -5.729483366e-01],
    [6.666858792e-01, -5.923649073e-01],
    [2.430163175e-01, -5.472255349e-01],
    [-2.469614595e-01, -4.403577745e-01],
    [-6.680687666e-01, -2.661138773e-01],
    [-9.118841290e-01, 1.405466627e-02],
    [-1.021819592e+00, 1.619412452e-01],
    [9.568872452e-01, -5.119116306e-01],
    [9.481450319e-01, -5.659441352e-01],
    [8.928638697e-01, -6.608316898e-01],
    [5.723233223e-01, -6.705380678e-01],
    [1.114214808e-01, -6.158654094e-01],
    [-3.798822165e-01, -4.994643331e-01],
    [-7.727324963e-01, -3.155102134e-01],
    [-9.495033026e-01, -2.440732345e-02],
    [-1.022913694e+00, 1.290180683e-01],
];
const PILLOW_BILINEAR_7X9: &[[f64; 2]] = &[
    [0.000000000e+00, 4.000000060e-01],
    [2.611089647e-01, 3.000000119e-01],
    [6.962906122e-01, 1.333333403e-01],
    [8.680027723e-01, 5.555555597e-02],
    [9.738476276e-01, 0.000000000e+00],
    [6.702544093e-01, 5.555555597e-02],
    [3.307242990e-01, 1.333333403e-01],
    [-1.525536627e-01, 3.000000119e-01],
    [-4.425204396e-01, 4.000000060e-01],
    [1.390779763e-01, 2.928571403e-01],
    [3.752837181e-01, 1.988095343e-01],
    [7.689599991e-01, 4.206349328e-02],
    [8.775167465e-01, -2.579365298e-02],
    [9.147936106e-01, -7.142857462e-02],
    [5.674607158e-01, -5.952381063e-03],
    [1.957768500e-01, 8.174603432e-02],
    [-2.733111978e-01, 2.583333552e-01],
    [-5.547640324e-01, 3.642857075e-01],
    [3.616027236e-01, 1.214285716e-01],
    [5.579633117e-01, 3.690476343e-02],
    [8.852310181e-01, -1.039682627e-01],
    [8.927390575e-01, -1.559523791e-01],
    [8.203071952e-01, -1.857142895e-01],
    [4.029908478e-01, -1.043650806e-01],
    [-2.013908513e-02, -7.936496986e-04],
    [-4.665232897e-01, 1.916666776e-01],
    [-7.343537807e-01, 3.071428835e-01],
    [5.533872247e-01, -5.000000075e-02],
    [6.947953105e-01, -1.250000000e-01],
    [9.304754734e-01, -2.500000000e-01],
    [8.373392820e-01, -2.861111164e-01],
    [6.619988680e-01, -3.000000119e-01],
    [2.083321214e-01, -2.027777880e-01],
    [-2.323347330e-01, -8.333333582e-02],
    [-6.210019588e-01, 1.250000000e-01],
    [-8.542022705e-01, 2.500000000e-01],
    [7.326905727e-01, -2.214285731e-01],
    [8.159568906e-01, -2.869047821e-01],
    [9.547339678e-01, -3.960317373e-01],
    [7.630540729e-01, -4.162698388e-01],
    [4.887598455e-01, -4.142857194e-01],
    [8.974693716e-03, -3.011904955e-01],
    [-4.392902851e-01, -1.658730209e-01],
    [-7.614745498e-01, 5.833333731e-02],
    [-9.547851086e-01, 1.928571463e-01],
    [8.553665876e-01, -3.928571343e-01],
    [8.732731342e-01, -4.488095343e-01],
    [9.031174779e-01, -5.420634747e-01],
    [6.271935701e-01, -5.464285612e-01],
    [2.748276293e-01, -5.285714269e-01],
    [-1.930849850e-01, -3.996031880e-01],
    [-6.132855415e-01, -2.484126836e-01],
    [-8.426380157e-01, -8.333330043e-03],
    [-9.802494049e-01, 1.357142925e-01],
    [9.320390821e-01, -5.000000000e-01],
    [9.090958238e-01, -5.500000119e-01],
    [8.708571196e-01, -6.333333254e-01],
    [5.422807336e-01, -6.277777553e-01],
    [1.411200017e-01, -6.000000238e-01],
    [-3.193722963e-01, -4.611111283e-01],
    [-7.220326066e-01, -2.999999821e-01],
    [-8.933651447e-01, -4.999999702e-02],
    [-9.961646199e-01, 1.000000015e-01],
];
const PILLOW_BICUBIC_2X3: &[[f64; 2]] = &[
    [5.244823694e-01, 1.097329855e-01],
    [7.908139229e-01, -9.782049060e-02],
    [-3.053036630e-01, 2.063254863e-01],
    [9.026618600e-01, -4.058868289e-01],
    [3.273880184e-01, -4.631097615e-01],
    [-8.119243383e-01, -8.633184247e-03],
];
const PILLOW_BILINEAR_2X3: &[[f64; 2]] = &[
    [5.354980230e-01, 7.244898379e-02],
    [6.966587901e-01, -9.841270000e-02],
    [-3.067344427e-01, 1.846938878e-01],
    [8.354072571e-01, -3.653061092e-01],
    [3.301591873e-01, -4.126984179e-01],
    [-7.269920707e-01, -6.122445688e-03],
];

fn pillow_input() -> Array2<f64> {
    Array2::from_shape_fn((20, 2), |(k, c)| {
        let (y, x) = ((k / 5) as f64, (k % 5) as f64);
        if c == 0 {
            (0.9 * x + 0.4 * y).sin()
        } else {
            0.1 * (x - 2.0).powi(2) - 0.3 * y + 0.05 * x * y
        }
    })
}

#[test]
fn anti_aliased_resampling_matches_pillow_up_and_down() {
    let cases = [
        (
            (7, 9),
            ResampleMode::Bicubic,
            PILLOW_BICUBIC_7X9,
            "bicubic up",
        ),
        (
            (7, 9),
            ResampleMode::Bilinear,
            PILLOW_BILINEAR_7X9,
            "bilinear up",
        ),
        (
            (2, 3),
            ResampleMode::Bicubic,
            PILLOW_BICUBIC_2X3,
            "bicubic down",
        ),
        (
            (2, 3),
            ResampleMode::Bilinear,
            PILLOW_BILINEAR_2X3,
            "bilinear down",
        ),
    ];
    for (to, mode, expected, what) in cases {
        let out =
            resample::resample(pillow_input().view(), &params((4, 5), to, mode, true)).unwrap();
        assert_close(&out, expected, 1e-6, what);
    }
}

/// The anti-aliased bicubic uses a = -0.5 and the plain one a = -0.75: the two differ.
#[test]
fn antialias_changes_the_bicubic_kernel() {
    let plain = resample::resample(
        pillow_input().view(),
        &params((4, 5), (7, 9), ResampleMode::Bicubic, false),
    )
    .unwrap();
    let worst = plain
        .iter()
        .zip(PILLOW_BICUBIC_7X9.iter().flatten())
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(
        worst > 1e-3,
        "plain bicubic should differ from the anti-aliased one, by {worst}"
    );
}

#[test]
fn the_same_grid_is_the_identity_and_prefix_rows_are_kept() {
    let input = Array2::from_shape_fn((2 + 12, 3), |(r, c)| ((r * 3 + c) as f64 * 0.61).cos());
    for mode in [ResampleMode::Bicubic, ResampleMode::Bilinear] {
        for antialias in [false, true] {
            let same = ResampleParams {
                prefix_rows: 2,
                ..params((3, 4), (3, 4), mode, antialias)
            };
            assert_eq!(resample::resample(input.view(), &same).unwrap(), input);
            let larger = ResampleParams {
                prefix_rows: 2,
                ..params((3, 4), (6, 5), mode, antialias)
            };
            let out = resample::resample(input.view(), &larger).unwrap();
            assert_eq!(out.nrows(), 2 + 30);
            assert_eq!(
                out.slice(ndarray::s![..2, ..]),
                input.slice(ndarray::s![..2, ..])
            );
        }
    }
}

/// Every path's weights sum to 1 (a constant table stays constant), up to float32 rounding.
#[test]
fn weights_sum_to_one_on_every_path() {
    for (n_in, n_out) in [(14, 24), (24, 14), (7, 32), (64, 3), (1, 5), (5, 1)] {
        for mode in [ResampleMode::Bicubic, ResampleMode::Bilinear] {
            for antialias in [false, true] {
                let taps = AxisTaps::new(n_in, n_out, mode, antialias);
                for i in 0..n_out {
                    let sum: f64 = taps.of(i).iter().map(|&(_, w)| f64::from(w)).sum();
                    assert!(
                        (sum - 1.0).abs() < 1e-6,
                        "{n_in} -> {n_out} {mode:?} aa {antialias} output {i}: {sum}"
                    );
                    assert!(taps.of(i).iter().all(|&(k, _)| k < n_in));
                }
            }
        }
    }
}

#[test]
fn inputs_that_do_not_fit_the_grid_are_refused() {
    let input = Array2::<f64>::zeros((15, 4));
    let e = resample::resample(
        input.view(),
        &params((4, 4), (8, 8), ResampleMode::Bicubic, false),
    )
    .unwrap_err();
    assert!(e.to_string().contains("[0 + 4 x 4, dim]"), "{e}");
    let e = resample::resample(
        input.view(),
        &params((3, 5), (0, 8), ResampleMode::Bicubic, false),
    )
    .unwrap_err();
    assert!(e.to_string().contains("--grid-h 0"), "{e}");
}
