//! `--positions` and `--position-scale` (the third contract): the tables at positions given or
//! scaled, checked against the formulas evaluated here in plain f64, against the same table
//! computed at counting positions by the integer path, and against bad input.

mod common;

use common::run_poslab as run;
use ndarray::ArrayD;

/// Writes `poslab table` with `options` and reads it back.
fn table(options: &[&str]) -> ArrayD<f64> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.npy");
    let mut args = vec!["table"];
    args.extend_from_slice(options);
    args.extend_from_slice(&["-o", out.to_str().unwrap()]);
    let (status, text) = run(&args);
    assert_eq!(status, 0, "{args:?}\n{text}");
    poslab::import::tables::read_table(&out, None, u64::MAX).unwrap()
}

const POSITIONS: [f64; 5] = [-1.5, 0.0, 2.25, 7.0, 1_000_000.0];

#[test]
fn angles_and_caches_at_given_scaled_positions_follow_the_formula() {
    let list = "-1.5,0,2.25,7,1000000";
    let (dim, base, scale) = (8usize, 100.0f64, 3.0f64);
    let w: Vec<f64> = (0..dim / 2)
        .map(|i| base.powf(-2.0 * i as f64 / dim as f64))
        .collect();
    let common = [
        "--positions",
        list,
        "--position-scale",
        "3",
        "--dim",
        "8",
        "--base",
        "100",
        "--dtype",
        "f64",
    ];
    let with = |kind: &str, more: &[&str]| {
        let mut options = vec![kind];
        options.extend_from_slice(&common);
        options.extend_from_slice(more);
        table(&options)
    };
    let angles = with("rope-angles", &[]);
    assert_eq!(angles.shape(), &[5, 4]);
    let cos = with("rope-cos", &["--layout", "half"]);
    let sin = with("rope-sin", &["--layout", "interleaved"]);
    for (row, p) in POSITIONS.iter().enumerate() {
        for (i, w) in w.iter().enumerate() {
            let angle = p * scale * w;
            // The f64 product here carries about 2^-52 of the angle (3e6 rad at most).
            let slack = 1e-15 * angle.abs().max(1.0) * 4.0;
            assert!((angles[[row, i]] - angle).abs() <= slack, "{row} {i}");
            assert!((cos[[row, i]] - angle.cos()).abs() <= slack, "{row} {i}");
            assert!(
                (cos[[row, i + 4]] - angle.cos()).abs() <= slack,
                "{row} {i}"
            );
            assert!(
                (sin[[row, 2 * i]] - angle.sin()).abs() <= slack,
                "{row} {i}"
            );
            assert!(
                (sin[[row, 2 * i + 1]] - angle.sin()).abs() <= slack,
                "{row} {i}"
            );
        }
    }
    // Sinusoidal, cos first and scaled by 0.5: [cos | sin] halves.
    let sinusoidal = with(
        "sinusoidal",
        &["--layout", "split", "--first", "cos", "--scale", "0.5"],
    );
    for (row, p) in POSITIONS.iter().enumerate() {
        for (i, w) in w.iter().enumerate() {
            let angle = p * scale * w;
            let slack = 1e-15 * angle.abs().max(1.0) * 4.0;
            assert!((sinusoidal[[row, i]] - 0.5 * angle.cos()).abs() <= slack);
            assert!((sinusoidal[[row, i + 4]] - 0.5 * angle.sin()).abs() <= slack);
        }
    }
}

#[test]
fn a_rotation_at_given_positions_is_the_cache_applied() {
    // rope-apply of an input at given positions = x cos + rotate_half(x) sin, with the cos
    // and sin caches of the same positions.
    let dir = tempfile::tempdir().unwrap();
    let input_path = dir.path().join("x.npy");
    let input = ndarray::Array2::from_shape_fn((5, 8), |(r, c)| {
        (0.7 * r as f64 - 0.3 * c as f64).sin() + 0.1
    });
    ndarray_npy::write_npy(&input_path, &input).unwrap();
    let input_arg = input_path.to_str().unwrap();
    let list = "-1.5,0,2.25,7,1000000";
    let rotated = table(&[
        "rope-apply",
        "--input",
        input_arg,
        "--positions",
        list,
        "--layout",
        "half",
        "--dtype",
        "f64",
    ]);
    let cache = |kind: &str| {
        table(&[
            kind,
            "--positions",
            list,
            "--dim",
            "8",
            "--layout",
            "half",
            "--dtype",
            "f64",
        ])
    };
    let (cos, sin) = (cache("rope-cos"), cache("rope-sin"));
    for r in 0..5 {
        for c in 0..8 {
            let half = if c < 4 {
                -input[[r, c + 4]]
            } else {
                input[[r, c - 4]]
            };
            let expected = input[[r, c]] * cos[[r, c]] + half * sin[[r, c]];
            assert!((rotated[[r, c]] - expected).abs() < 1e-13, "{r} {c}");
        }
    }
    // A count of positions other than the input's rows is refused.
    let (status, text) = run(&[
        "table",
        "rope-apply",
        "--input",
        input_arg,
        "--positions",
        "0,1",
        "-o",
        dir.path().join("o.npy").to_str().unwrap(),
    ]);
    assert_eq!(status, 2, "{text}");
    assert!(text.contains("one position per row"), "{text}");
}

#[test]
fn counting_positions_given_agree_with_the_integer_path() {
    // The integer turns (exact at any position below 2^53) and the given positions' product
    // (to about 104 bits) are two computations of one table; in float32 they are the same
    // products rounded, so equal to the bit.
    let counted = table(&[
        "rope-cos-sin",
        "--start",
        "4503599627370000",
        "--seq",
        "3",
        "--dim",
        "16",
        "--dtype",
        "f64",
    ]);
    let given = table(&[
        "rope-cos-sin",
        "--positions",
        "4503599627370000,4503599627370001,4503599627370002",
        "--dim",
        "16",
        "--dtype",
        "f64",
    ]);
    let worst = counted
        .iter()
        .zip(&given)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(worst < 1e-12, "{worst}");
    let scaled_once = table(&[
        "sinusoidal",
        "--start",
        "5",
        "--seq",
        "4",
        "--dim",
        "16",
        "--position-scale",
        "1",
        "--dtype",
        "f64",
    ]);
    let plain = table(&[
        "sinusoidal",
        "--start",
        "5",
        "--seq",
        "4",
        "--dim",
        "16",
        "--dtype",
        "f64",
    ]);
    let worst = plain
        .iter()
        .zip(&scaled_once)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(worst < 1e-15, "{worst}");
    let f32_counted = table(&[
        "rope-cos",
        "--start",
        "7",
        "--seq",
        "3",
        "--dim",
        "16",
        "--arith",
        "torch-f32",
    ]);
    let f32_given = table(&[
        "rope-cos",
        "--positions",
        "7,8,9",
        "--dim",
        "16",
        "--arith",
        "torch-f32",
    ]);
    assert_eq!(f32_counted, f32_given);
}

#[test]
fn bad_positions_get_one_message_each() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.npy");
    let out = out.to_str().unwrap();
    let wide = dir.path().join("wide.npy");
    ndarray_npy::write_npy(&wide, &ndarray::Array2::<f32>::zeros((2, 3))).unwrap();
    let wide = wide.to_str().unwrap();
    for (options, says) in [
        (
            &["rope-cos", "--positions", "0,nan", "--dim", "4"][..],
            "finite",
        ),
        (&["rope-cos", "--positions", "1e300", "--dim", "4"], "2^53"),
        (
            &["rope-cos", "--positions", "0,1", "--seq", "3", "--dim", "4"],
            "disagree",
        ),
        (
            &["rope-cos", "--positions", "1", "--start", "3", "--dim", "4"],
            "cannot be used with",
        ),
        (
            &[
                "rope-cos",
                "--position-scale",
                "0",
                "--seq",
                "3",
                "--dim",
                "4",
            ],
            "above 0",
        ),
        (
            &["rope-cos", "--positions", "/nonexistent.npy", "--dim", "4"],
            "no such file",
        ),
        (
            &["rope-cos", "--positions", wide, "--dim", "4"],
            "one position per row",
        ),
        (
            &["alibi", "--positions", "1", "--heads", "2", "--seq", "2"],
            "does not apply to alibi",
        ),
        (
            &[
                "rope-cos",
                "--positions",
                "1,2",
                "--dim",
                "4",
                "--backend",
                "gpu",
            ],
            "CPU engine only",
        ),
    ] {
        let mut args = vec!["table"];
        args.extend_from_slice(options);
        args.extend_from_slice(&["-o", out]);
        let (status, text) = run(&args);
        assert_eq!(status, 2, "{args:?}\n{text}");
        assert!(text.contains(says), "{args:?} should say {says:?}:\n{text}");
        assert_eq!(
            text.trim().lines().count(),
            1,
            "{args:?}: one message\n{text}"
        );
        assert!(!std::path::Path::new(out).exists(), "{args:?} wrote a file");
    }
}

/// A grid's coordinates scaled per axis (`--position-scale sy,sx`, fractions as typed):
/// sin and cos of `k · s · omega`, evaluated here, in MAE's order (x's blocks first), row by
/// row; a single scale applies to both axes.
#[test]
fn scaled_grid_coordinates_follow_the_formula() {
    let (grid_h, grid_w, dim) = (3usize, 5usize, 8usize);
    let (sy, sx) = (2.0 / 3.0, 0.4);
    let quarter = dim / 4;
    let omega: Vec<f64> = (0..quarter)
        .map(|k| 10_000f64.powf(-(k as f64) / quarter as f64))
        .collect();
    let common = ["sincos-2d", "--grid-h", "3", "--grid-w", "5", "--dim", "8"];
    for (scale, (sy, sx)) in [("2/3,0.4", (sy, sx)), ("1/4", (0.25, 0.25))] {
        let mut options = common.to_vec();
        options.extend(["--position-scale", scale, "--dtype", "f64"]);
        let t = table(&options);
        assert_eq!(t.shape(), &[grid_h * grid_w, dim]);
        for y in 0..grid_h {
            for x in 0..grid_w {
                let row = y * grid_w + x;
                for k in 0..quarter {
                    let (ax, ay) = (x as f64 * sx * omega[k], y as f64 * sy * omega[k]);
                    let expected = [ax.sin(), ax.cos(), ay.sin(), ay.cos()];
                    for (block, value) in expected.iter().enumerate() {
                        let got = t[[row, block * quarter + k]];
                        assert!(
                            (got - value).abs() < 1e-15,
                            "{scale}: ({y}, {x}) block {block} pair {k}: {got} vs {value}"
                        );
                    }
                }
            }
        }
    }
    // Refused with one message each: a third number, a zero, a 1D kind given two, timm's
    // float32 grid (which has no scale), the GPU engine.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.npy");
    for (extra, says) in [
        (&["--position-scale", "1,2,3"][..], "sy,sx"),
        (&["--position-scale", "0,1"], "above 0"),
        (&["--position-scale", "1/0"], "above 0"),
        (
            &["--position-scale", "0.5", "--arith", "torch-f32"],
            "not available for sincos-2d with --position-scale",
        ),
        (
            &["--position-scale", "0.5", "--backend", "gpu"],
            "CPU engine only",
        ),
    ] {
        let mut args = vec!["table"];
        args.extend_from_slice(&common);
        args.extend_from_slice(extra);
        args.extend(["-o", out.to_str().unwrap()]);
        let (status, text) = run(&args);
        assert_eq!(status, 2, "{args:?}\n{text}");
        assert!(text.contains(says), "{args:?} should say {says:?}:\n{text}");
        assert!(!out.exists());
    }
    let (status, text) = run(&[
        "table",
        "rope-cos",
        "--seq",
        "3",
        "--dim",
        "4",
        "--position-scale",
        "1,2",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(status, 2, "{text}");
    assert!(text.contains("give one number"), "{text}");
}

/// Axial 2D RoPE at scaled coordinates (timm's `ref_feat_shape`, HunyuanDiT's crop): the angle
/// of pair `k` along each axis is `coordinate · s_axis · theta^(-4k/dim)`, evaluated here, in
/// timm's layout (y's angles first, each twice in a row) and rope-vit's (x first, each once).
#[test]
fn scaled_axial_rope_coordinates_follow_the_formula() {
    let (grid_h, grid_w, dim, theta) = (3usize, 4usize, 16usize, 10_000f64);
    let (sy, sx) = (2.0 / 3.0, 0.5);
    let quarter = dim / 4;
    let f: Vec<f64> = (0..quarter)
        .map(|k| theta.powf(-4.0 * k as f64 / dim as f64))
        .collect();
    let common = [
        "rope-2d-axial",
        "--grid-h",
        "3",
        "--grid-w",
        "4",
        "--dim",
        "16",
        "--theta",
        "10000",
        "--position-scale",
        "2/3,0.5",
        "--dtype",
        "f64",
    ];
    let mut timm = common.to_vec();
    timm.extend([
        "--values",
        "cos",
        "--layout",
        "interleaved",
        "--axis-order",
        "yx",
    ]);
    let (cos, angles) = (table(&timm), table(&common));
    assert_eq!(cos.shape(), &[grid_h * grid_w, dim]);
    assert_eq!(angles.shape(), &[grid_h * grid_w, dim / 2]);
    for y in 0..grid_h {
        for x in 0..grid_w {
            let row = y * grid_w + x;
            for k in 0..quarter {
                let (ay, ax) = (y as f64 * sy * f[k], x as f64 * sx * f[k]);
                for (got, want) in [
                    (cos[[row, 2 * k]], ay.cos()),
                    (cos[[row, 2 * k + 1]], ay.cos()),
                    (cos[[row, 2 * (quarter + k)]], ax.cos()),
                    (angles[[row, k]], ax),
                    (angles[[row, quarter + k]], ay),
                ] {
                    assert!(
                        (got - want).abs() < 1e-15,
                        "({y}, {x}) pair {k}: {got} vs {want}"
                    );
                }
            }
        }
    }
    // Scaled angles are the CPU engine's (the GPU computes rope-vit's unscaled ones).
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.npy");
    let mut args = vec!["table"];
    args.extend_from_slice(&common);
    args.extend(["--backend", "gpu", "-o", out.to_str().unwrap()]);
    let (status, text) = run(&args);
    assert_eq!(status, 2, "{text}");
    assert!(text.contains("--position-scale"), "{text}");
    assert!(!out.exists());
}

#[test]
fn dynamic_and_longrope_read_the_current_length_from_the_positions() {
    // Hugging Face's dynamic NTK and LongRoPE take the current length from the position ids
    // (max + 1): rows that start at 100, or sit at given positions, are rows of a table that
    // long. Identity: they are those rows of the table from 0 (before issue 48 the length was
    // the number of rows, so these differed).
    let dynamic = [
        "rope-cos",
        "--dim",
        "16",
        "--scaling",
        "dynamic",
        "--factor",
        "2",
        "--max-position-embeddings",
        "64",
        "--dtype",
        "f64",
    ];
    let whole = table(&[&dynamic[..], &["--seq", "201"]].concat());
    let first_104 = table(&[&dynamic[..], &["--seq", "104"]].concat());
    let started = table(&[&dynamic[..], &["--start", "100", "--seq", "4"]].concat());
    let placed = table(&[&dynamic[..], &["--positions", "5,200"]].concat());
    for (r, row) in [100, 101, 102, 103].into_iter().enumerate() {
        for c in 0..16 {
            assert!(
                (started[[r, c]] - first_104[[row, c]]).abs() < 1e-12,
                "row {row}"
            );
        }
    }
    // The frequencies of length 201 (not of 2 rows, which keep the base): row 200 of the
    // whole table.
    for c in 0..16 {
        assert!((placed[[1, c]] - whole[[200, c]]).abs() < 1e-12);
        assert!((placed[[0, c]] - whole[[5, c]]).abs() < 1e-12);
    }
    let plain = table(&[
        "rope-cos",
        "--dim",
        "16",
        "--positions",
        "5,200",
        "--dtype",
        "f64",
    ]);
    assert!((0..16).any(|c| (placed[[1, c]] - plain[[1, c]]).abs() > 1e-3));
    // LongRoPE switches to its long factors past the original context.
    let longrope = [
        "rope-cos",
        "--dim",
        "8",
        "--scaling",
        "longrope",
        "--long-factor",
        "1,2,4,8",
        "--short-factor",
        "1,1,1,1",
        "--original-max-position-embeddings",
        "64",
        "--max-position-embeddings",
        "256",
        "--dtype",
        "f64",
    ];
    let long = table(&[&longrope[..], &["--seq", "101"]].concat());
    let placed = table(&[&longrope[..], &["--positions", "3,100"]].concat());
    for c in 0..8 {
        assert!((placed[[0, c]] - long[[3, c]]).abs() < 1e-12);
        assert!((placed[[1, c]] - long[[100, c]]).abs() < 1e-12);
    }
}
