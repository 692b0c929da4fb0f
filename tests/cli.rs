//! `poslab table` end to end: files read back with the right shape, dtype and values, and
//! every kind of bad input exits with status 2, one line on stderr and no file left behind.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ndarray::{Array1, Array2, ArrayD, Ix1, Ix2, Ix3, array};
use ndarray_npy::{read_npy, write_npy};

fn poslab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_poslab"))
        .args(args)
        .output()
        .expect("the poslab binary runs")
}

fn ok(args: &[&str]) -> Output {
    let out = poslab(args);
    assert!(
        out.status.success(),
        "poslab {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn dir() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary folder")
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("temporary paths are UTF-8")
}

/// Sinusoidal value computed from the formula, independently of the engine.
fn vaswani(p: f64, c: usize, dim: usize, base: f64) -> f64 {
    let w = base.powf(-((2 * (c / 2)) as f64) / dim as f64);
    if c.is_multiple_of(2) {
        (p * w).sin()
    } else {
        (p * w).cos()
    }
}

fn read_csv(path: &Path) -> Vec<Vec<f64>> {
    std::fs::read_to_string(path)
        .expect("csv written")
        .lines()
        .map(|line| {
            line.split(',')
                .map(|v| v.parse::<f64>().expect("a number"))
                .collect()
        })
        .collect()
}

#[test]
fn sinusoidal_npy_is_f4_by_default_and_f8_on_request() {
    let d = dir();
    let f4 = d.path().join("pe.npy");
    ok(&[
        "table",
        "sinusoidal",
        "--seq",
        "33",
        "--dim",
        "10",
        "--start",
        "7",
        "-o",
        path_str(&f4),
    ]);
    let table: Array2<f32> = read_npy(&f4).expect("a <f4 2-D array");
    assert_eq!(table.dim(), (33, 10));
    for ((r, c), &v) in table.indexed_iter() {
        let expected = vaswani((7 + r) as f64, c, 10, 10_000.0);
        assert_eq!(v, expected as f32, "[{r}, {c}] rounds to the nearest f32");
    }
    let f8 = d.path().join("pe64.npy");
    ok(&[
        "table",
        "sinusoidal",
        "--seq",
        "33",
        "--dim",
        "10",
        "--start",
        "7",
        "--base",
        "500",
        "--dtype",
        "f64",
        "-o",
        path_str(&f8),
    ]);
    let table: Array2<f64> = read_npy(&f8).expect("a <f8 2-D array");
    for ((r, c), &v) in table.indexed_iter() {
        assert!((v - vaswani((7 + r) as f64, c, 10, 500.0)).abs() < 1e-13);
    }
    assert!(read_npy::<_, Array2<f32>>(&f8).is_err(), "<f8 is not <f4");
}

#[test]
fn csv_reads_back_with_round_trip_precision() {
    let d = dir();
    let csv = d.path().join("pe.csv");
    ok(&[
        "table",
        "sinusoidal",
        "--seq",
        "5",
        "--dim",
        "6",
        "--layout",
        "split",
        "--spacing",
        "t2t",
        "--dtype",
        "f64",
        "-o",
        path_str(&csv),
    ]);
    let rows = read_csv(&csv);
    assert_eq!((rows.len(), rows[0].len()), (5, 6));
    // t2t, split: w_i = 10000^(-i/2), sin in columns 0..3, cos in 3..6.
    for (p, row) in rows.iter().enumerate() {
        for i in 0..3 {
            let angle = p as f64 * 10_000f64.powf(-(i as f64) / 2.0);
            assert!((row[i] - angle.sin()).abs() < 1e-15);
            assert!((row[3 + i] - angle.cos()).abs() < 1e-15);
        }
    }
    let slopes = d.path().join("slopes.csv");
    ok(&[
        "table",
        "alibi-slopes",
        "--heads",
        "8",
        "-o",
        path_str(&slopes),
    ]);
    let column: Vec<f64> = read_csv(&slopes).into_iter().map(|r| r[0]).collect();
    assert_eq!(column, (1..=8).map(|k| 2f64.powi(-k)).collect::<Vec<_>>());
}

#[test]
fn index_tables_are_int32() {
    let d = dir();
    let out = d.path().join("clip.npy");
    ok(&[
        "table",
        "relative-clip",
        "--seq",
        "4",
        "--max-relative",
        "1",
        "-o",
        path_str(&out),
    ]);
    let table: Array2<i32> = read_npy(&out).expect("an <i4 2-D array");
    assert_eq!(
        table,
        array![[1, 2, 2, 2], [0, 1, 2, 2], [0, 0, 1, 2], [0, 0, 0, 1]]
    );
    let out = d.path().join("t5.npy");
    ok(&[
        "table",
        "t5-buckets",
        "--seq",
        "3",
        "--bidirectional",
        "false",
        "-o",
        path_str(&out),
    ]);
    let table: Array2<i32> = read_npy(&out).expect("an <i4 2-D array");
    assert_eq!(table, array![[0, 0, 0], [1, 0, 0], [2, 1, 0]]);
}

#[test]
fn alibi_writes_all_heads_to_npy_and_one_head_to_csv() {
    let d = dir();
    let npy = d.path().join("alibi.npy");
    ok(&[
        "table",
        "alibi",
        "--heads",
        "4",
        "--seq",
        "3",
        "-o",
        path_str(&npy),
    ]);
    let all: ndarray::Array3<f32> = read_npy(&npy).expect("a <f4 3-D array");
    assert_eq!(all.dim(), (4, 3, 3));
    // 4 heads: slopes 2^-2, 2^-4, ...; head 1 has slope 1/16.
    assert_eq!(all[[1, 2, 0]], -2.0 / 16.0);
    assert_eq!(all[[1, 0, 2]], f32::NEG_INFINITY);
    let csv = d.path().join("head1.csv");
    ok(&[
        "table",
        "alibi",
        "--heads",
        "4",
        "--seq",
        "3",
        "--mode",
        "symmetric",
        "--head",
        "1",
        "-o",
        path_str(&csv),
    ]);
    assert_eq!(
        read_csv(&csv),
        vec![
            vec![0.0, -0.0625, -0.125],
            vec![-0.0625, 0.0, -0.0625],
            vec![-0.125, -0.0625, 0.0]
        ]
    );
    let causal = d.path().join("causal.csv");
    ok(&[
        "table",
        "alibi",
        "--heads",
        "2",
        "--seq",
        "2",
        "--head",
        "0",
        "-o",
        path_str(&causal),
    ]);
    assert_eq!(
        std::fs::read_to_string(&causal).unwrap(),
        "0,-inf\n-0.0625,0\n"
    );
}

#[test]
fn rope_apply_reads_f4_and_f8_inputs() {
    let d = dir();
    let x = array![[1.0, 2.0, 3.0, 4.0], [0.5, -1.0, 0.25, 2.0]];
    for (name, f4) in [("x32.npy", true), ("x64.npy", false)] {
        let input = d.path().join(name);
        if f4 {
            write_npy(&input, &x.mapv(|v| v as f32)).unwrap();
        } else {
            write_npy(&input, &x).unwrap();
        }
        let out = d.path().join(format!("rotated-{name}"));
        ok(&[
            "table",
            "rope-apply",
            "--input",
            path_str(&input),
            "--layout",
            "half",
            "--base",
            "100",
            "--start",
            "3",
            "--dtype",
            "f64",
            "-o",
            path_str(&out),
        ]);
        let rotated: Array2<f64> = read_npy(&out).unwrap();
        // Half pairs (0, 2) and (1, 3), theta = [1, 1/10], positions 3 and 4.
        for (r, p) in [(0, 3.0), (1, 4.0)] {
            for (i, theta) in [(0, 1.0), (1, 0.1f64)] {
                let (s, c) = (p * theta).sin_cos();
                let (a, b) = (x[[r, i]], x[[r, i + 2]]);
                assert!((rotated[[r, i]] - (a * c - b * s)).abs() < 1e-14);
                assert!((rotated[[r, i + 2]] - (a * s + b * c)).abs() < 1e-14);
            }
        }
    }
}

#[test]
fn mixed_rope_reads_its_frequencies() {
    let d = dir();
    let freqs = d.path().join("freqs.npy");
    write_npy(&freqs, &array![[0.5f32, 2.0], [0.25, -1.0]]).unwrap();
    let out = d.path().join("mixed.npy");
    ok(&[
        "table",
        "rope-2d-mixed",
        "--grid-h",
        "2",
        "--grid-w",
        "3",
        "--freqs",
        path_str(&freqs),
        "-o",
        path_str(&out),
    ]);
    let angles: Array2<f32> = read_npy(&out).unwrap();
    // Patch 5 sits at x 2, y 1.
    assert_eq!(
        angles.row(5).to_vec(),
        vec![0.5 * 2.0 + 0.25, 2.0 * 2.0 - 1.0]
    );
}

#[test]
fn every_kind_writes_the_shape_the_contract_gives() {
    let d = dir();
    let freqs = d.path().join("f.npy");
    write_npy(&freqs, &Array2::<f64>::ones((2, 6))).unwrap();
    let input = d.path().join("x.npy");
    write_npy(&input, &Array2::<f32>::ones((5, 8))).unwrap();
    let cases: Vec<(Vec<&str>, Vec<usize>)> = vec![
        (vec!["sinusoidal", "--seq", "5", "--dim", "8"], vec![5, 8]),
        (
            vec!["dot-decay", "--seq", "5", "--dim", "8", "--anchor", "4"],
            vec![5],
        ),
        (vec!["similarity", "--seq", "5", "--dim", "8"], vec![5, 5]),
        (vec!["rope-inv-freq", "--dim", "8"], vec![4]),
        (vec!["rope-angles", "--seq", "5", "--dim", "8"], vec![5, 4]),
        (vec!["rope-apply", "--input", path_str(&input)], vec![5, 8]),
        (
            vec![
                "rope-unseen",
                "--seq",
                "5",
                "--dim",
                "8",
                "--train-len",
                "3",
            ],
            vec![5, 4],
        ),
        (vec!["alibi-slopes", "--heads", "6"], vec![6]),
        (vec!["alibi", "--heads", "6", "--seq", "5"], vec![6, 5, 5]),
        (
            vec!["alibi-2d", "--heads", "3", "--grid-h", "2", "--grid-w", "3"],
            vec![3, 6, 6],
        ),
        (
            vec!["patch-distance", "--grid-h", "2", "--grid-w", "3"],
            vec![6, 6],
        ),
        (
            vec!["sincos-2d", "--grid-h", "2", "--grid-w", "3", "--dim", "8"],
            vec![6, 8],
        ),
        (
            vec![
                "rope-2d-axial",
                "--grid-h",
                "2",
                "--grid-w",
                "3",
                "--dim",
                "8",
            ],
            vec![6, 4],
        ),
        (
            vec![
                "rope-2d-mixed",
                "--grid-h",
                "2",
                "--grid-w",
                "3",
                "--freqs",
                path_str(&freqs),
            ],
            vec![6, 6],
        ),
        (vec!["t5-buckets", "--seq", "5"], vec![5, 5]),
        (
            vec!["relative-clip", "--seq", "5", "--max-relative", "2"],
            vec![5, 5],
        ),
        (vec!["binary", "--seq", "5", "--dim", "3"], vec![5, 3]),
    ];
    for (args, shape) in cases {
        let out = d.path().join(format!("{}.npy", args[0]));
        let mut full = vec!["table"];
        full.extend(&args);
        full.extend(["-o", path_str(&out)]);
        ok(&full);
        let index = args[0] == "t5-buckets" || args[0] == "relative-clip";
        let written = if index {
            read_npy::<_, ArrayD<i32>>(&out).map(|a| a.shape().to_vec())
        } else {
            read_npy::<_, ArrayD<f32>>(&out).map(|a| a.shape().to_vec())
        };
        assert_eq!(written.expect("the declared dtype"), shape, "{}", args[0]);
    }
}

#[test]
fn start_shifts_rows_of_position_tables() {
    let d = dir();
    let (a, b) = (d.path().join("a.npy"), d.path().join("b.npy"));
    ok(&[
        "table",
        "binary",
        "--seq",
        "9",
        "--dim",
        "5",
        "-o",
        path_str(&a),
    ]);
    ok(&[
        "table",
        "binary",
        "--seq",
        "4",
        "--dim",
        "5",
        "--start",
        "5",
        "-o",
        path_str(&b),
    ]);
    let (a, b): (Array2<f32>, Array2<f32>) = (read_npy(&a).unwrap(), read_npy(&b).unwrap());
    assert_eq!(a.slice(ndarray::s![5.., ..]), b);
    let decay = d.path().join("decay.npy");
    ok(&[
        "table",
        "dot-decay",
        "--seq",
        "4",
        "--dim",
        "4",
        "--anchor",
        "3",
        "--start",
        "100",
        "--dtype",
        "f64",
        "-o",
        path_str(&decay),
    ]);
    let decay: Array1<f64> = read_npy::<_, ArrayD<f64>>(&decay)
        .unwrap()
        .into_dimensionality::<Ix1>()
        .unwrap();
    // Offsets -3..=0 from the anchor: sum over w = 1, 1/100 of cos(k w).
    for (j, v) in decay.iter().enumerate() {
        let k = j as f64 - 3.0;
        assert!((v - (k.cos() + (k / 100.0).cos())).abs() < 1e-14);
    }
}

/// Runs poslab expecting bad-input handling: exit 2, exactly one line on stderr mentioning
/// `expected`, and no file in the output folder other than those there before.
fn refused(d: &Path, args: &[&str], expected: &str) {
    let before: Vec<PathBuf> = listing(d);
    let out = poslab(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{args:?} exit status; stderr: {stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{args:?} one line: {stderr}");
    assert!(
        stderr.contains(expected),
        "{args:?}: {stderr:?} names {expected:?}"
    );
    assert_eq!(listing(d), before, "{args:?} left a file behind");
}

fn listing(d: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    entries
}

#[test]
fn bad_parameters_exit_2_with_one_line_and_no_file() {
    let d = dir();
    let o = d.path().join("out.npy");
    let o = path_str(&o);
    let cases: &[(&[&str], &str)] = &[
        (&["sinusoidal", "--seq", "4", "--dim", "7"], "--dim 7"),
        (&["sinusoidal", "--seq", "4", "--dim", "0"], "--dim"),
        (
            &["rope-angles", "--seq", "4", "--dim", "8", "--base", "1"],
            "--base 1",
        ),
        (&["rope-inv-freq", "--dim", "8", "--base", "0.5"], "--base"),
        (&["rope-inv-freq", "--dim", "8", "--base", "nan"], "--base"),
        (&["sinusoidal", "--seq", "0", "--dim", "8"], "--seq 0"),
        (&["sinusoidal", "--seq", "-4", "--dim", "8"], "--seq -4"),
        (&["sinusoidal", "--seq", "abc", "--dim", "8"], "--seq"),
        // A value with a minus sign is the option's value, and named as such.
        (
            &["rope-inv-freq", "--dim", "8", "--base", "-inf"],
            "--base -inf",
        ),
        // ALiBi and the relative indices depend on offsets only: a start would do nothing.
        (
            &["alibi", "--heads", "2", "--seq", "4", "--start", "5"],
            "--start does not apply to alibi",
        ),
        (
            &["t5-buckets", "--seq", "4", "--start", "-5"],
            "--start does not apply to t5-buckets",
        ),
        (
            &[
                "relative-clip",
                "--seq",
                "4",
                "--max-relative",
                "2",
                "--start",
                "3",
            ],
            "--start does not apply to relative-clip",
        ),
        (&["sinusoidal", "--dim", "8"], "--seq is required"),
        (&["alibi", "--heads", "0", "--seq", "4"], "--heads 0"),
        (&["alibi-slopes", "--heads", "0"], "--heads"),
        (
            &["alibi", "--heads", "2", "--seq", "4", "--head", "2"],
            "--head 2",
        ),
        (
            &["dot-decay", "--seq", "4", "--dim", "8", "--anchor", "4"],
            "--anchor 4",
        ),
        (
            &["sincos-2d", "--grid-h", "2", "--grid-w", "2", "--dim", "6"],
            "--dim 6",
        ),
        (
            &[
                "rope-2d-axial",
                "--grid-h",
                "0",
                "--grid-w",
                "2",
                "--dim",
                "8",
            ],
            "--grid-h 0",
        ),
        (
            &[
                "rope-2d-axial",
                "--grid-h",
                "2",
                "--grid-w",
                "2",
                "--dim",
                "8",
                "--theta",
                "1",
            ],
            "--theta",
        ),
        (
            &["t5-buckets", "--seq", "4", "--num-buckets", "2"],
            "--num-buckets 2",
        ),
        (
            &["t5-buckets", "--seq", "4", "--max-distance", "8"],
            "--max-distance 8",
        ),
        (
            &["relative-clip", "--seq", "4"],
            "--max-relative is required",
        ),
        (
            &[
                "sinusoidal",
                "--seq",
                "4",
                "--dim",
                "8",
                "--layout",
                "diagonal",
            ],
            "invalid value 'diagonal' for '--layout <LAYOUT>'",
        ),
        (
            &[
                "rope-angles",
                "--seq",
                "4",
                "--dim",
                "8",
                "--layout",
                "diagonal",
            ],
            "--layout",
        ),
        (
            &["sinusoidal", "--seq", "4", "--dim", "8", "--heads", "2"],
            "--heads does not apply",
        ),
        (
            &["t5-buckets", "--seq", "4", "--dtype", "f64"],
            "--dtype does not apply",
        ),
        (
            &["sinusoidal", "--seq", "4", "--dim", "8", "--frobnicate"],
            "--frobnicate",
        ),
        (
            &["sinusoidal", "--seq", "4", "--dim", "8", "--start", "-1"],
            "--start",
        ),
        (&["cosine", "--seq", "4"], "cosine"),
        (
            &["similarity", "--seq", "1000000000", "--dim", "8"],
            "reduce --seq",
        ),
        // 256 PiB: streamed, it needs a few blocks of memory, but no disk holds it.
        (
            &["alibi", "--heads", "65536", "--seq", "1048576"],
            "does not fit",
        ),
        (
            &[
                "alibi-2d", "--heads", "8", "--grid-h", "65536", "--grid-w", "65536",
            ],
            "reduce",
        ),
    ];
    for (args, expected) in cases {
        let mut full = vec!["table"];
        full.extend(args.iter());
        full.extend(["-o", o]);
        refused(d.path(), &full, expected);
    }
}

#[test]
fn bad_output_paths_exit_2() {
    let d = dir();
    let p = |name: &str| d.path().join(name).to_str().unwrap().to_owned();
    let base = ["table", "sinusoidal", "--seq", "4", "--dim", "8", "-o"];
    let run = |o: &str, expected: &str| {
        let mut args = base.to_vec();
        args.push(o);
        refused(d.path(), &args, expected);
    };
    run(&p("table.txt"), ".npy or .csv");
    run(&p("no/such/folder/t.npy"), "does not exist");
    run(path_str(d.path()), "--output");
    let mut alibi = vec!["table", "alibi", "--heads", "3", "--seq", "4", "-o"];
    let csv = p("a.csv");
    alibi.push(&csv);
    refused(d.path(), &alibi, "--head H (0 to 2)");
    let missing_output = ["table", "sinusoidal", "--seq", "4", "--dim", "8"];
    refused(d.path(), &missing_output, "--output");
}

#[test]
fn bad_input_files_exit_2_and_name_the_option() {
    let d = dir();
    let inputs = tempfile::tempdir().unwrap();
    let file = |name: &str, bytes: &[u8]| {
        let path = inputs.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    };
    let npy_bytes = |array: &ArrayD<f64>| {
        let mut bytes = Vec::new();
        ndarray_npy::WriteNpyExt::write_npy(array, &mut bytes).unwrap();
        bytes
    };
    let good = npy_bytes(&Array2::<f64>::ones((4, 8)).into_dyn());
    let mut nan = Array2::<f64>::ones((4, 8));
    nan[[2, 3]] = f64::NAN;
    let mut huge_header = b"\x93NUMPY\x02\x00".to_vec();
    huge_header.extend(u32::MAX.to_le_bytes());
    // Same file, but the header claims far more rows than the data holds (same header length).
    let header_end = good.iter().position(|&b| b == b'\n').unwrap();
    let header = String::from_utf8(good[10..header_end].to_vec()).unwrap();
    let bigger = header.replacen("(4, 8)}           ", "(400000000000, 8)}", 1);
    assert_eq!(bigger.len(), header.len());
    let mut claims_more = good.clone();
    claims_more.splice(10..header_end, bigger.bytes());
    let int_array = {
        let mut bytes = Vec::new();
        ndarray_npy::WriteNpyExt::write_npy(&Array2::<i64>::ones((4, 8)), &mut bytes).unwrap();
        bytes
    };
    let cases = [
        (inputs.path().join("missing.npy"), "no such file"),
        (
            file("garbage.npy", b"this is not an array"),
            "not a .npy file",
        ),
        (file("truncated.npy", &good[..good.len() - 5]), "truncated"),
        (file("int.npy", &int_array), "<i8"),
        (file("nan.npy", &npy_bytes(&nan.into_dyn())), "NaN"),
        (file("huge-header.npy", &huge_header), "header"),
        (file("claims-more.npy", &claims_more), "truncated"),
        (
            file(
                "odd.npy",
                &npy_bytes(&Array2::<f64>::ones((4, 7)).into_dyn()),
            ),
            "even",
        ),
        (
            file("3d.npy", &npy_bytes(&ArrayD::<f64>::ones(vec![2, 4, 8]))),
            "2-D",
        ),
        (
            file(
                "empty.npy",
                &npy_bytes(&Array2::<f64>::ones((0, 8)).into_dyn()),
            ),
            "[0, 8]",
        ),
    ];
    let o = d.path().join("out.npy");
    for (input, expected) in &cases {
        let args = [
            "table",
            "rope-apply",
            "--input",
            path_str(input),
            "-o",
            path_str(&o),
        ];
        refused(d.path(), &args, expected);
        assert!(
            String::from_utf8_lossy(&poslab(&args).stderr).contains("--input"),
            "{input:?} names --input"
        );
    }
    let wrong_freqs = file(
        "freqs.npy",
        &npy_bytes(&Array2::<f64>::ones((3, 4)).into_dyn()),
    );
    let args = [
        "table",
        "rope-2d-mixed",
        "--grid-h",
        "2",
        "--grid-w",
        "2",
        "--freqs",
        path_str(&wrong_freqs),
        "-o",
        path_str(&o),
    ];
    refused(d.path(), &args, "--freqs");
}

#[test]
fn help_explains_every_kind_and_option() {
    let top = ok(&["--help"]);
    assert!(String::from_utf8_lossy(&top.stdout).contains("table"));
    // With no arguments poslab opens the app; `poslab help` is the command line's help.
    let help_command = ok(&["help"]);
    assert!(String::from_utf8_lossy(&help_command.stdout).contains("Usage"));
    let help = String::from_utf8_lossy(&ok(&["table", "--help"]).stdout).into_owned();
    for kind in [
        "sinusoidal",
        "dot-decay",
        "similarity",
        "rope-inv-freq",
        "rope-angles",
        "rope-apply",
        "alibi-slopes",
        "alibi",
        "alibi-2d",
        "patch-distance",
        "sincos-2d",
        "sincos-2d-resample",
        "rope-2d-axial",
        "rope-2d-mixed",
        "t5-buckets",
        "relative-clip",
        "binary",
    ] {
        assert!(help.contains(&format!("{kind}:")), "help describes {kind}");
    }
    for option in [
        "--seq", "--dim", "--base", "--start", "--heads", "--grid-h", "--dtype",
    ] {
        assert!(help.contains(option), "help lists {option}");
    }
    // --base's default, and --theta's for each kind that reads it.
    assert!(help.contains("(default 10000)") && help.contains("rope-2d-axial (default 100)"));
}

#[test]
fn three_axis_tables_stay_three_axis_in_npy() {
    let d = dir();
    let out = d.path().join("a2d.npy");
    ok(&[
        "table",
        "alibi-2d",
        "--heads",
        "2",
        "--grid-h",
        "2",
        "--grid-w",
        "2",
        "-o",
        path_str(&out),
    ]);
    let a: ArrayD<f32> = read_npy(&out).unwrap();
    let a = a.into_dimensionality::<Ix3>().unwrap();
    // 2 heads: slopes 1/16 and 1/256; patches 0 and 3 are a diagonal apart.
    assert_eq!(a[[0, 0, 3]], -(2f32.sqrt()) / 16.0);
    let one = d.path().join("head.npy");
    ok(&[
        "table",
        "alibi-2d",
        "--heads",
        "2",
        "--grid-h",
        "2",
        "--grid-w",
        "2",
        "--head",
        "1",
        "-o",
        path_str(&one),
    ]);
    let head: ArrayD<f32> = read_npy(&one).unwrap();
    assert_eq!(
        head.into_dimensionality::<Ix2>().unwrap(),
        a.index_axis(ndarray::Axis(0), 1)
    );
}

#[test]
fn the_gpu_backend_writes_the_same_tables() {
    let d = dir();
    for args in [
        vec![
            "sinusoidal",
            "--seq",
            "40",
            "--dim",
            "12",
            "--start",
            "5000",
        ],
        vec!["alibi", "--heads", "3", "--seq", "9", "--head", "1"],
        vec!["t5-buckets", "--seq", "30"],
    ] {
        let (cpu, gpu) = (d.path().join("cpu.npy"), d.path().join("gpu.npy"));
        let run = |out: &Path, backend: &str| {
            let mut full = vec!["table"];
            full.extend(&args);
            full.extend(["--backend", backend, "-v", "-o", path_str(out)]);
            ok(&full)
        };
        run(&cpu, "cpu");
        let verbose = String::from_utf8_lossy(&run(&gpu, "gpu").stderr).into_owned();
        assert!(verbose.contains("engine: gpu"), "{args:?}: {verbose}");
        if args[0] == "t5-buckets" {
            let (c, g): (ArrayD<i32>, ArrayD<i32>) =
                (read_npy(&cpu).unwrap(), read_npy(&gpu).unwrap());
            assert_eq!(c, g);
        } else {
            let (c, g): (ArrayD<f32>, ArrayD<f32>) =
                (read_npy(&cpu).unwrap(), read_npy(&gpu).unwrap());
            assert_eq!(c.shape(), g.shape());
            for (a, b) in c.iter().zip(g.iter()) {
                assert!(a == b || (a - b).abs() <= 2e-6, "{args:?}: {a} vs {b}");
            }
        }
    }
    // --dtype f64: the GPU's float32 values widened as they stream to the file, each exactly
    // the float32 the GPU wrote (so within float32 rounding of the CPU's f64 table).
    let (cpu, gpu) = (d.path().join("cpu64.npy"), d.path().join("gpu64.npy"));
    for (out, backend) in [(&cpu, "cpu"), (&gpu, "gpu")] {
        ok(&[
            "table",
            "rope-cos",
            "--seq",
            "33",
            "--dim",
            "16",
            "--dtype",
            "f64",
            "--backend",
            backend,
            "-o",
            path_str(out),
        ]);
    }
    let (c, g): (ArrayD<f64>, ArrayD<f64>) = (read_npy(&cpu).unwrap(), read_npy(&gpu).unwrap());
    assert_eq!(c.shape(), &[33, 16]);
    assert_eq!(c.shape(), g.shape());
    for (a, b) in c.iter().zip(g.iter()) {
        assert_eq!(f64::from(*b as f32), *b, "a widened float32: {b}");
        assert!((a - b).abs() <= 2e-6, "{a} vs {b}");
    }
}

#[test]
fn without_an_adapter_the_cpu_engine_serves_and_says_so() {
    let d = dir();
    let out = d.path().join("pe.npy");
    // No backend of this build exists under that name: wgpu finds no adapter.
    let result = Command::new(env!("CARGO_BIN_EXE_poslab"))
        .args([
            "table",
            "sinusoidal",
            "--seq",
            "4",
            "--dim",
            "4",
            "--backend",
            "gpu",
            "-v",
        ])
        .args(["-o", path_str(&out)])
        .env("WGPU_BACKEND", "noop")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(result.status.success(), "{stderr}");
    assert!(
        stderr.contains("computing on the CPU engine instead"),
        "{stderr}"
    );
    assert!(stderr.contains("engine: cpu"), "{stderr}");
    assert_eq!(read_npy::<_, Array2<f32>>(&out).unwrap().dim(), (4, 4));
}

#[test]
fn bench_prints_a_row_per_size_on_either_engine() {
    for backend in ["cpu", "gpu"] {
        let out = ok(&[
            "bench",
            "sinusoidal",
            "--size",
            "seq=64,dim=16",
            "--size",
            "seq=128,dim=8",
            "--repeats",
            "2",
            "--backend",
            backend,
        ]);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(text.contains(&format!("on {backend}")), "{text}");
        assert!(
            text.contains("[64, 16]") && text.contains("[128, 8]"),
            "{text}"
        );
        assert!(text.contains("GB/s written"), "{text}");
        // The GPU's ceiling and readback, measured in the same run.
        if backend == "gpu" {
            assert!(
                text.contains("fill ms") && text.contains("of ceiling"),
                "{text}"
            );
            assert!(text.contains("readback GB/s"), "{text}");
        }
    }
    let d = dir();
    refused(
        d.path(),
        &["bench", "sinusoidal", "--dim", "8", "--size", "seq=x"],
        "--size",
    );
    refused(
        d.path(),
        &["bench", "sinusoidal", "--dim", "8", "--size", "frobs=3"],
        "frobs",
    );
    // A size sets the kind's own options, once each: anything else would time another table.
    refused(
        d.path(),
        &[
            "bench",
            "sinusoidal",
            "--dim",
            "8",
            "--size",
            "seq=64,heads=4",
        ],
        "heads does not apply to sinusoidal",
    );
    refused(
        d.path(),
        &[
            "bench",
            "sinusoidal",
            "--dim",
            "8",
            "--size",
            "seq=64,seq=128",
        ],
        "seq is given twice",
    );
    refused(
        d.path(),
        &[
            "bench",
            "rope-apply",
            "--input",
            "x.npy",
            "--size",
            "seq=64",
        ],
        "seq does not apply to rope-apply",
    );
    refused(
        d.path(),
        &[
            "bench",
            "sinusoidal",
            "--seq",
            "4",
            "--dim",
            "8",
            "--repeats",
            "0",
        ],
        "--repeats",
    );
}

#[test]
fn torch_f32_arithmetic_is_offered_where_tables_come_from_f32_angles() {
    let d = dir();
    let (exact, torch) = (d.path().join("exact.npy"), d.path().join("torch.npy"));
    let args = [
        "table",
        "rope-angles",
        "--seq",
        "8",
        "--dim",
        "4",
        "--start",
        "5000",
    ];
    let mut with_exact = args.to_vec();
    with_exact.extend(["--dtype", "f64", "-o", path_str(&exact)]);
    ok(&with_exact);
    let mut with_torch = args.to_vec();
    with_torch.extend([
        "--arith",
        "torch-f32",
        "--dtype",
        "f64",
        "-o",
        path_str(&torch),
    ]);
    ok(&with_torch);
    let (e, t): (Array2<f64>, Array2<f64>) = (read_npy(&exact).unwrap(), read_npy(&torch).unwrap());
    // theta = [1, 1/100]: the f32 product of 5007 and f32(0.01) rounds, the exact one does not.
    assert_eq!(t[[7, 0]], 5007.0);
    assert_eq!(t[[7, 1]], f64::from(5007.0f32 * 0.01f32));
    assert!((e[[7, 1]] - 50.07).abs() < 1e-12 && t[[7, 1]] != e[[7, 1]]);
    refused(
        d.path(),
        &[
            "table",
            "alibi",
            "--heads",
            "2",
            "--seq",
            "4",
            "--arith",
            "torch-f32",
            "-o",
            "x.npy",
        ],
        "--arith",
    );
}

#[test]
fn check_matches_a_torch_float32_table_in_either_frequency_form() {
    let dir = tempfile::tempdir().unwrap();
    for form in ["pow", "exp"] {
        let file = dir.path().join(format!("{form}.npy"));
        let file = file.to_str().unwrap();
        // At position 10^6 float32 angles are far from the exact ones: only PyTorch's own
        // computation explains the file.
        let table = [
            "table",
            "sinusoidal",
            "--seq",
            "32",
            "--dim",
            "64",
            "--start",
            "1000000",
            "--arith",
            "torch-f32",
            "--freq-form",
            form,
            "-o",
            file,
        ];
        let output = poslab(&table);
        let (code, stderr) = (
            output.status.code().unwrap(),
            String::from_utf8_lossy(&output.stderr).to_string(),
        );
        assert_eq!(code, 0, "{stderr}");
        let check = [
            "check",
            file,
            "--as",
            "sinusoidal",
            "--seq",
            "32",
            "--dim",
            "64",
            "--start",
            "1000000",
        ];
        let output = poslab(&check);
        let (code, stdout) = (
            output.status.code().unwrap(),
            String::from_utf8_lossy(&output.stdout).to_string(),
        );
        assert_eq!(code, 0, "{stdout}");
        assert!(
            stdout.contains("MISMATCH (the default for a float32 file: 8 ulp"),
            "{stdout}"
        );
        assert!(
            stdout.contains(&format!(
                "MATCH as PyTorch computes it in float32 (--arith torch-f32 --freq-form {form})"
            )),
            "{stdout}"
        );
        // A different base is not explained by float32 rounding.
        let other = [
            "check",
            file,
            "--as",
            "sinusoidal",
            "--seq",
            "32",
            "--dim",
            "64",
            "--start",
            "1000000",
            "--base",
            "10001",
        ];
        let output = poslab(&other);
        let (code, stdout) = (
            output.status.code().unwrap(),
            String::from_utf8_lossy(&output.stdout).to_string(),
        );
        assert_eq!(code, 1, "{stdout}");
        assert!(!stdout.contains("MATCH as PyTorch"), "{stdout}");
    }
    let exact_with_form = [
        "table",
        "sinusoidal",
        "--seq",
        "4",
        "--dim",
        "8",
        "--freq-form",
        "exp",
        "-o",
    ];
    let out = dir.path().join("never.npy");
    let mut words: Vec<&str> = exact_with_form.to_vec();
    words.push(out.to_str().unwrap());
    let output = poslab(&words);
    let (code, stderr) = (
        output.status.code().unwrap(),
        String::from_utf8_lossy(&output.stderr).to_string(),
    );
    assert_eq!(code, 2);
    assert!(
        stderr.contains("--freq-form applies only with --arith torch-f32"),
        "{stderr}"
    );
    assert!(!out.exists());
}

#[test]
fn rope_caches_follow_their_layout_partial_rotary_and_attention_factor() {
    let d = dir();
    let (seq, rotary, base, start) = (12usize, 16usize, 10_000.0f64, 500u64);
    // theta_i = base^(-2i/R) over the rotary width, written out here.
    let theta = |i: usize| base.powf(-((2 * i) as f64) / rotary as f64);
    for (kind, layout) in [("rope-cos", "half"), ("rope-sin", "interleaved")] {
        let out = d.path().join(format!("{kind}.npy"));
        ok(&[
            "table",
            kind,
            "--seq",
            "12",
            "--dim",
            "64",
            "--rotary-dim",
            "16",
            "--start",
            "500",
            "--layout",
            layout,
            "--dtype",
            "f64",
            "-o",
            path_str(&out),
        ]);
        let table: Array2<f64> = read_npy(&out).expect("a <f8 2-D array");
        assert_eq!(table.dim(), (seq, rotary), "{kind}: [seq, R]");
        for ((row, col), &value) in table.indexed_iter() {
            // half: cat(freqs, freqs); interleaved: each frequency twice in a row.
            let pair = if layout == "half" {
                col % (rotary / 2)
            } else {
                col / 2
            };
            let angle = (start + row as u64) as f64 * theta(pair);
            let expected = if kind == "rope-cos" {
                angle.cos()
            } else {
                angle.sin()
            };
            assert!((value - expected).abs() < 1e-12, "{kind} [{row}, {col}]");
        }
    }
    // The same width from --partial-rotary-factor: int(64 * 0.25) = 16.
    let by_factor = d.path().join("factor.npy");
    ok(&[
        "table",
        "rope-cos",
        "--seq",
        "12",
        "--dim",
        "64",
        "--partial-rotary-factor",
        "0.25",
        "--start",
        "500",
        "--layout",
        "half",
        "--dtype",
        "f64",
        "-o",
        path_str(&by_factor),
    ]);
    let a: Array2<f64> = read_npy(&by_factor).unwrap();
    let b: Array2<f64> = read_npy(d.path().join("rope-cos.npy")).unwrap();
    assert_eq!(a, b);
    // YaRN multiplies the cache by its attention factor, 0.1 ln(4) + 1 for factor 4.
    let yarn = d.path().join("yarn.npy");
    let plain = d.path().join("plain.npy");
    let yarn_options = [
        "--scaling",
        "yarn",
        "--factor",
        "4",
        "--original-max-position-embeddings",
        "32768",
    ];
    let mut words = vec![
        "table", "rope-cos", "--seq", "4", "--dim", "64", "--start", "0", "--dtype", "f64",
    ];
    words.extend(yarn_options);
    words.extend(["-o", path_str(&yarn)]);
    ok(&words);
    ok(&[
        "table",
        "rope-cos",
        "--seq",
        "4",
        "--dim",
        "64",
        "--dtype",
        "f64",
        "-o",
        path_str(&plain),
    ]);
    let (yarn, plain): (Array2<f64>, Array2<f64>) =
        (read_npy(&yarn).unwrap(), read_npy(&plain).unwrap());
    let attention = 0.1 * 4f64.ln() + 1.0;
    // Row 0 is position 0: cos 0 = 1 everywhere, so the cache holds the factor itself.
    for (y, p) in yarn.row(0).iter().zip(plain.row(0)) {
        assert!((y - attention * p).abs() < 1e-15);
    }
    let factor = d.path().join("factor.csv");
    let mut words = vec!["table", "rope-attention-factor", "--dim", "64"];
    words.extend(yarn_options);
    words.extend(["-o", path_str(&factor)]);
    ok(&words);
    let text = std::fs::read_to_string(&factor).unwrap();
    let value: f64 = text.trim().parse().unwrap();
    assert!((value - attention).abs() < 1e-6, "{text}");
}

#[test]
fn rope_apply_rotates_only_the_rotary_dimensions() {
    let d = dir();
    let input = Array2::from_shape_fn((6, 10), |(r, c)| (r * 10 + c) as f64 / 7.0 - 4.0);
    let input_path = d.path().join("x.npy");
    write_npy(&input_path, &input).unwrap();
    let out = d.path().join("rotated.npy");
    ok(&[
        "table",
        "rope-apply",
        "--input",
        path_str(&input_path),
        "--layout",
        "half",
        "--rotary-dim",
        "4",
        "--start",
        "3",
        "--dtype",
        "f64",
        "-o",
        path_str(&out),
    ]);
    let rotated: Array2<f64> = read_npy(&out).unwrap();
    for row in 0..6 {
        // Dimensions 4.. pass through; pairs (0, 2) and (1, 3) rotate by p * 10000^(-2i/4).
        for col in 4..10 {
            assert_eq!(rotated[[row, col]], input[[row, col]]);
        }
        let p = (3 + row) as f64;
        for i in 0..2 {
            let angle = p * 10_000f64.powf(-((2 * i) as f64) / 4.0);
            let (a, b) = (input[[row, i]], input[[row, i + 2]]);
            let (s, c) = angle.sin_cos();
            assert!((rotated[[row, i]] - (a * c - b * s)).abs() < 1e-12);
            assert!((rotated[[row, i + 2]] - (a * s + b * c)).abs() < 1e-12);
        }
    }
}

#[test]
fn check_matches_a_scaled_float32_cache_and_refuses_bad_scaling_options() {
    let d = dir();
    let cache = d.path().join("cos.npy");
    let llama3 = [
        "--seq",
        "64",
        "--dim",
        "128",
        "--base",
        "500000",
        "--start",
        "100000",
        "--layout",
        "half",
        "--scaling",
        "llama3",
        "--factor",
        "8",
        "--original-max-position-embeddings",
        "8192",
        "--low-freq-factor",
        "1",
        "--high-freq-factor",
        "4",
    ];
    let mut words = vec!["table", "rope-cos"];
    words.extend(llama3);
    words.extend(["--arith", "torch-f32", "-o", path_str(&cache)]);
    ok(&words);
    let mut words = vec!["check", path_str(&cache), "--as", "rope-cos"];
    words.extend(llama3);
    let out = poslab(&words);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("MATCH as PyTorch computes it in float32"),
        "{text}"
    );
    // Bad scaling options: exit 2, one line naming the option, no file.
    let never = d.path().join("never.npy");
    for (words, says) in [
        (
            vec![
                "rope-cos",
                "--seq",
                "4",
                "--dim",
                "64",
                "--scaling",
                "yarn",
                "--low-freq-factor",
                "1",
                "--factor",
                "4",
            ],
            "--low-freq-factor does not apply to --scaling yarn",
        ),
        (
            vec![
                "rope-cos",
                "--seq",
                "4",
                "--dim",
                "64",
                "--scaling",
                "linear",
            ],
            "--scaling linear needs --factor",
        ),
        (
            vec![
                "rope-inv-freq",
                "--dim",
                "64",
                "--scaling",
                "linear",
                "--factor",
                "0.5",
            ],
            "--factor 0.5 is not allowed",
        ),
        (
            vec![
                "rope-cos",
                "--seq",
                "4",
                "--dim",
                "64",
                "--rotary-dim",
                "80",
            ],
            "--rotary-dim 80 is not allowed",
        ),
        (
            vec![
                "rope-cos", "--seq", "4", "--dim", "64", "--layout", "diagonal",
            ],
            "invalid value 'diagonal' for '--layout <LAYOUT>'",
        ),
        (
            vec![
                "rope-inv-freq",
                "--dim",
                "64",
                "--scaling",
                "longrope",
                "--original-max-position-embeddings",
                "4096",
                "--long-factor",
                "1,2",
                "--short-factor",
                "1,x",
                "--factor",
                "4",
            ],
            "--short-factor",
        ),
        (
            vec!["alibi", "--heads", "4", "--seq", "8", "--scaling", "yarn"],
            "--scaling does not apply to alibi",
        ),
    ] {
        let mut all = vec!["table"];
        all.extend(words);
        all.extend(["-o", path_str(&never)]);
        let out = poslab(&all);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{all:?}: {stderr}");
        assert!(stderr.contains(says), "{all:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(!never.exists());
    }
}

#[test]
fn checks_default_tolerance_follows_the_files_float_type() {
    let d = dir();
    let llama3 = [
        "--scaling",
        "llama3",
        "--factor",
        "8",
        "--original-max-position-embeddings",
        "8192",
        "--low-freq-factor",
        "1",
        "--high-freq-factor",
        "4",
    ];
    let scaled = d.path().join("scaled.npy");
    let mut words = vec!["table", "rope-inv-freq", "--dim", "128", "--base", "500000"];
    words.extend(llama3);
    words.extend(["-o", path_str(&scaled)]);
    ok(&words);
    let verdict = |words: &[&str]| {
        let out = poslab(words);
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        (out.status.code(), text)
    };
    // Llama 3.1's frequencies against the unscaled ones: the slowest are 8 times smaller,
    // about 3e-7 apart; an absolute tolerance of 1e-5 would pass them, 8 ulp of each does not.
    let (code, text) = verdict(&[
        "check",
        path_str(&scaled),
        "--as",
        "rope-inv-freq",
        "--dim",
        "128",
        "--base",
        "500000",
    ]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("the default for a float32 file: 8 ulp of each value;"),
        "{text}"
    );
    let mut words = vec![
        "check",
        path_str(&scaled),
        "--as",
        "rope-inv-freq",
        "--dim",
        "128",
        "--base",
        "500000",
    ];
    words.extend(llama3);
    let (code, text) = verdict(&words);
    assert_eq!(code, Some(0), "{text}");
    // A float64 file is held to 1e-10: poslab's own f8 table passes, its f4 one does not.
    let f8 = d.path().join("pe8.npy");
    let f4 = d.path().join("pe4.npy");
    ok(&[
        "table",
        "sinusoidal",
        "--seq",
        "300",
        "--dim",
        "64",
        "--dtype",
        "f64",
        "-o",
        path_str(&f8),
    ]);
    ok(&[
        "table",
        "sinusoidal",
        "--seq",
        "300",
        "--dim",
        "64",
        "-o",
        path_str(&f4),
    ]);
    let (code, text) = verdict(&[
        "check",
        path_str(&f8),
        "--as",
        "sinusoidal",
        "--seq",
        "300",
        "--dim",
        "64",
    ]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("float64 file: 1e-10"), "{text}");
    let f4_as_f8 = d.path().join("pe4_as_f8.npy");
    let table: Array2<f32> = read_npy(&f4).unwrap();
    write_npy(&f4_as_f8, &table.mapv(f64::from)).unwrap();
    let (code, text) = verdict(&[
        "check",
        path_str(&f4_as_f8),
        "--as",
        "sinusoidal",
        "--seq",
        "300",
        "--dim",
        "64",
    ]);
    assert_eq!(code, Some(1), "{text}");
    let (code, text) = verdict(&[
        "check",
        path_str(&f4),
        "--as",
        "sinusoidal",
        "--seq",
        "300",
        "--dim",
        "64",
    ]);
    assert_eq!(code, Some(0), "{text}");
    // An explicit tolerance replaces the default.
    let (code, text) = verdict(&[
        "check",
        path_str(&f4_as_f8),
        "--as",
        "sinusoidal",
        "--seq",
        "300",
        "--dim",
        "64",
        "--atol",
        "1e-6",
    ]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("tolerance 1e-6 absolute"), "{text}");
}

#[test]
fn alibi_as_bloom_and_mpt_store_it_is_equivalent_to_the_relative_table() {
    let d = dir();
    let (heads, seq) = (4usize, 8usize);
    // get_slopes for 4 heads: 2^-2, 2^-4, 2^-6, 2^-8.
    let slope = |h: usize| 2f64.powi(-2 * (h as i32 + 1));
    for (form, bias) in [
        (
            "bloom",
            Box::new(|m: f64, j: usize| m * j as f64) as Box<dyn Fn(f64, usize) -> f64>,
        ),
        (
            "mpt",
            Box::new(move |m: f64, j: usize| m * (j as f64 - (seq - 1) as f64)),
        ),
    ] {
        let out = d.path().join(format!("{form}.npy"));
        ok(&[
            "table",
            "alibi",
            "--heads",
            "4",
            "--seq",
            "8",
            "--form",
            form,
            "--dtype",
            "f64",
            "-o",
            path_str(&out),
        ]);
        let table: ArrayD<f64> = read_npy(&out).unwrap();
        assert_eq!(table.shape(), &[heads, 1, seq]);
        for h in 0..heads {
            for j in 0..seq {
                assert_eq!(table[[h, 0, j]], bias(slope(h), j), "{form} [{h}, 0, {j}]");
            }
        }
        // Checked as it is stored: a match; against the relative table: a shape mismatch that
        // names --form.
        let checked = poslab(&[
            "check",
            path_str(&out),
            "--as",
            "alibi",
            "--heads",
            "4",
            "--seq",
            "8",
            "--form",
            form,
        ]);
        assert_eq!(
            checked.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&checked.stdout)
        );
        let relative = poslab(&[
            "check",
            path_str(&out),
            "--as",
            "alibi",
            "--heads",
            "4",
            "--seq",
            "8",
        ]);
        let text = String::from_utf8_lossy(&relative.stdout);
        assert_eq!(relative.status.code(), Some(1), "{text}");
        assert!(
            text.contains("--form bloom") && text.contains("--form mpt"),
            "{text}"
        );
        // Broadcast over the queries, as the model adds it to the scores (masked cells hold
        // whatever: the mask hides them): the same attention as the relative table.
        let expanded = d.path().join(format!("{form}_expanded.npy"));
        let full = ndarray::Array3::from_shape_fn((heads, seq, seq), |(h, _, j)| bias(slope(h), j));
        write_npy(&expanded, &full).unwrap();
        let equivalent = poslab(&[
            "check",
            path_str(&expanded),
            "--as",
            "alibi",
            "--heads",
            "4",
            "--seq",
            "8",
        ]);
        let text = String::from_utf8_lossy(&equivalent.stdout);
        assert_eq!(equivalent.status.code(), Some(0), "{text}");
        assert!(
            text.contains("equivalent: equal up to a constant per query row (the same attention after softmax)"),
            "{text}"
        );
    }
    // A table off by more than a row constant is not equivalent.
    let wrong = d.path().join("wrong.npy");
    let full =
        ndarray::Array3::from_shape_fn((heads, seq, seq), |(h, _, j)| 1.01 * slope(h) * j as f64);
    write_npy(&wrong, &full).unwrap();
    let out = poslab(&[
        "check",
        path_str(&wrong),
        "--as",
        "alibi",
        "--heads",
        "4",
        "--seq",
        "8",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let never = d.path().join("never.npy");
    let out = poslab(&[
        "table",
        "alibi",
        "--heads",
        "4",
        "--seq",
        "8",
        "--form",
        "bloom",
        "--mode",
        "symmetric",
        "-o",
        path_str(&never),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!never.exists());
}

#[test]
fn rows_and_cols_leave_out_a_cls_row_in_python_slice_syntax() {
    let d = dir();
    let table_path = d.path().join("mae.npy");
    ok(&[
        "table",
        "sincos-2d",
        "--grid-h",
        "4",
        "--grid-w",
        "4",
        "--dim",
        "16",
        "--dtype",
        "f64",
        "-o",
        path_str(&table_path),
    ]);
    let table: Array2<f64> = read_npy(&table_path).unwrap();
    // MAE's pos_embed: a zero CLS row, then the patches.
    let with_cls = ndarray::concatenate(
        ndarray::Axis(0),
        &[Array2::<f64>::zeros((1, 16)).view(), table.view()],
    )
    .unwrap();
    let cls_path = d.path().join("mae_cls.npy");
    write_npy(&cls_path, &with_cls).unwrap();
    let check = |extra: &[&str]| {
        let mut words = vec![
            "check",
            path_str(&cls_path),
            "--as",
            "sincos-2d",
            "--grid-h",
            "4",
            "--grid-w",
            "4",
            "--dim",
            "16",
        ];
        words.extend(extra);
        let out = poslab(&words);
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).to_string()
                + &String::from_utf8_lossy(&out.stderr),
        )
    };
    let (code, text) = check(&[]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("shape mismatch"), "{text}");
    let (code, text) = check(&["--rows", "1:"]);
    assert_eq!(code, Some(0), "{text}");
    // Negative indices and steps as Python has them: rows 1, 3, ... against nothing that
    // matches is a shape mismatch, not a crash.
    let (code, text) = check(&["--rows", "-16:"]);
    assert_eq!(code, Some(0), "{text}");
    let (code, text) = check(&["--rows", "1::2"]);
    assert_eq!(code, Some(1), "{text}");
    for (bad, says) in [
        ("1:x", "\"x\" is not a whole number"),
        ("1", "one or two colons"),
        ("5:2", "keeps none"),
        ("::0", "step must be 1 or more"),
    ] {
        let (code, text) = check(&["--rows", bad]);
        assert_eq!(code, Some(2), "{bad}: {text}");
        assert!(text.contains(says), "{bad}: {text}");
    }
    // identify too: a sinusoidal table after a padding row, and a 1-D table's only axis.
    let pe_path = d.path().join("pe.npy");
    ok(&[
        "table",
        "sinusoidal",
        "--seq",
        "40",
        "--dim",
        "16",
        "--dtype",
        "f64",
        "-o",
        path_str(&pe_path),
    ]);
    let pe: Array2<f64> = read_npy(&pe_path).unwrap();
    let padded = ndarray::concatenate(
        ndarray::Axis(0),
        &[Array2::<f64>::zeros((1, 16)).view(), pe.view()],
    )
    .unwrap();
    let padded_path = d.path().join("padded.npy");
    write_npy(&padded_path, &padded).unwrap();
    let out = poslab(&["identify", path_str(&padded_path), "--rows", "1:"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("identified: sinusoidal"), "{text}");
    let out = poslab(&[
        "identify",
        path_str(&padded_path),
        "--cols",
        "0:8",
        "--rows",
        "1:",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn sincos_2d_in_timms_orders_with_a_cls_row_and_fairseqs_padding_row() {
    let d = dir();
    let (h, w, dim) = (3usize, 4usize, 16usize);
    // timm build_sincos2d_pos_embed, written out: bands_k = 1 / 10000^(k / (dim/4)); patches
    // of ndgrid(H, W) row by row; [sin(y b), sin(x b), cos(y b), cos(x b)] flattened.
    let quarter = dim / 4;
    let band = |k: usize| 1.0 / 10_000f64.powf(k as f64 / quarter as f64);
    let timm = |y: usize, x: usize, col: usize| {
        let (block, k) = (col / quarter, col % quarter);
        let angle = if block % 2 == 0 { y } else { x } as f64 * band(k);
        if block < 2 { angle.sin() } else { angle.cos() }
    };
    let out = d.path().join("timm.npy");
    ok(&[
        "table",
        "sincos-2d",
        "--grid-h",
        "3",
        "--grid-w",
        "4",
        "--dim",
        "16",
        "--order",
        "sin-y,sin-x,cos-y,cos-x",
        "--prefix-rows",
        "1",
        "--dtype",
        "f64",
        "-o",
        path_str(&out),
    ]);
    let table: Array2<f64> = read_npy(&out).unwrap();
    assert_eq!(table.dim(), (1 + h * w, dim));
    assert!(
        table.row(0).iter().all(|&v| v == 0.0),
        "the CLS row is zero"
    );
    for p in 0..h * w {
        let (y, x) = (p / w, p % w);
        for col in 0..dim {
            assert!(
                (table[[1 + p, col]] - timm(y, x, col)).abs() < 1e-12,
                "[{p}, {col}]"
            );
        }
    }
    // Column raster: patch p sits at x = p / H, y = p % H.
    let columns = d.path().join("columns.npy");
    ok(&[
        "table",
        "sincos-2d",
        "--grid-h",
        "3",
        "--grid-w",
        "4",
        "--dim",
        "16",
        "--order",
        "sin-y,sin-x,cos-y,cos-x",
        "--raster",
        "columns",
        "--dtype",
        "f64",
        "-o",
        path_str(&columns),
    ]);
    let table: Array2<f64> = read_npy(&columns).unwrap();
    for p in 0..h * w {
        let (x, y) = (p / h, p % h);
        for col in 0..dim {
            assert!(
                (table[[p, col]] - timm(y, x, col)).abs() < 1e-12,
                "columns [{p}, {col}]"
            );
        }
    }
    // fairseq keeps a zero padding row in its sinusoidal table.
    let padded = d.path().join("padded.npy");
    ok(&[
        "table",
        "sinusoidal",
        "--seq",
        "10",
        "--dim",
        "8",
        "--zero-row",
        "1",
        "--dtype",
        "f64",
        "-o",
        path_str(&padded),
    ]);
    let table: Array2<f64> = read_npy(&padded).unwrap();
    assert!(table.row(1).iter().all(|&v| v == 0.0));
    assert!(
        (table[[2, 1]] - 2f64.cos()).abs() < 1e-12,
        "other rows untouched"
    );
    let never = d.path().join("never.npy");
    for (words, says) in [
        (
            vec![
                "sincos-2d",
                "--grid-h",
                "2",
                "--grid-w",
                "2",
                "--dim",
                "8",
                "--order",
                "sin-x,sin-x,cos-y,cos-x",
            ],
            "--order sin-x,sin-x,cos-y,cos-x is not allowed",
        ),
        (
            vec![
                "sincos-2d",
                "--grid-h",
                "2",
                "--grid-w",
                "2",
                "--dim",
                "8",
                "--order",
                "sin-x,cos-x",
            ],
            "four distinct blocks",
        ),
        (
            vec!["sinusoidal", "--seq", "4", "--dim", "8", "--zero-row", "4"],
            "--zero-row 4 is not allowed: the table has rows 0 to 3",
        ),
        (vec!["t5-buckets", "--seq", "4", "--zero-row", "0"], "int32"),
        (
            vec![
                "sinusoidal",
                "--seq",
                "4",
                "--dim",
                "8",
                "--order",
                "sin-x,cos-x,sin-y,cos-y",
            ],
            "--order does not apply to sinusoidal",
        ),
    ] {
        let mut all = vec!["table"];
        all.extend(words);
        all.extend(["-o", path_str(&never)]);
        let out = poslab(&all);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{all:?}: {stderr}");
        assert!(stderr.contains(says), "{all:?}: {stderr}");
        assert!(!never.exists());
    }
}

#[test]
fn alibi_slope_scaling_shrinks_slopes_beyond_the_training_length() {
    let d = dir();
    let slopes = |extra: &[&str]| -> Array1<f64> {
        let out = d.path().join("slopes.npy");
        let mut words = vec![
            "table",
            "alibi-slopes",
            "--heads",
            "8",
            "--dtype",
            "f64",
            "-o",
            path_str(&out),
        ];
        words.extend(extra);
        ok(&words);
        read_npy(&out).unwrap()
    };
    let plain = slopes(&[]);
    // 8 heads: 2^-1 ... 2^-8.
    assert_eq!(plain[0], 0.5);
    let within = slopes(&[
        "--seq",
        "1024",
        "--train-len",
        "1024",
        "--slope-scaling",
        "true",
    ]);
    assert_eq!(within, plain, "within the training length nothing changes");
    let beyond = slopes(&[
        "--seq",
        "4096",
        "--train-len",
        "1024",
        "--slope-scaling",
        "true",
    ]);
    for (b, p) in beyond.iter().zip(&plain) {
        assert_eq!(*b, p * 0.25, "m_h L / seq");
    }
    // The biases follow: -m_h L/seq |i - j|, -inf stays masked.
    let out = d.path().join("bias.npy");
    ok(&[
        "table",
        "alibi",
        "--heads",
        "8",
        "--seq",
        "16",
        "--head",
        "0",
        "--train-len",
        "4",
        "--slope-scaling",
        "true",
        "--dtype",
        "f64",
        "-o",
        path_str(&out),
    ]);
    let bias: Array2<f64> = read_npy(&out).unwrap();
    assert_eq!(bias[[10, 2]], -0.5 * 0.25 * 8.0);
    assert_eq!(bias[[2, 10]], f64::NEG_INFINITY);
    let never = d.path().join("never.npy");
    for (words, says) in [
        (
            vec![
                "alibi-slopes",
                "--heads",
                "8",
                "--seq",
                "64",
                "--slope-scaling",
                "true",
            ],
            "needs --train-len",
        ),
        (
            vec!["alibi-slopes", "--heads", "8", "--train-len", "64"],
            "--train-len applies with --slope-scaling true",
        ),
        (
            vec![
                "alibi-slopes",
                "--heads",
                "8",
                "--train-len",
                "64",
                "--slope-scaling",
                "true",
            ],
            "needs --seq",
        ),
        (
            vec![
                "alibi",
                "--heads",
                "8",
                "--seq",
                "64",
                "--train-len",
                "0",
                "--slope-scaling",
                "true",
            ],
            "--train-len 0 is not allowed",
        ),
    ] {
        let mut all = vec!["table"];
        all.extend(words);
        all.extend(["-o", path_str(&never)]);
        let out = poslab(&all);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{all:?}: {stderr}");
        assert!(stderr.contains(says), "{all:?}: {stderr}");
        assert!(!never.exists());
    }
}

#[test]
fn blooms_float32_alibi_is_checked_as_pytorch_computes_it() {
    let d = dir();
    let out = d.path().join("bloom.npy");
    let options = ["--heads", "32", "--seq", "2048", "--form", "bloom"];
    let mut words = vec!["table", "alibi"];
    words.extend(options);
    words.extend(["--arith", "torch-f32", "-o", path_str(&out)]);
    ok(&words);
    let mut words = vec!["check", path_str(&out), "--as", "alibi"];
    words.extend(options);
    let checked = poslab(&words);
    let text = String::from_utf8_lossy(&checked.stdout);
    assert_eq!(checked.status.code(), Some(0), "{text}");
    assert!(
        text.contains("MATCH as PyTorch computes it in float32 (--arith torch-f32)"),
        "{text}"
    );
    // The relative table has no float32 mode: refused by name.
    let never = d.path().join("never.npy");
    let refused = poslab(&[
        "table",
        "alibi",
        "--heads",
        "4",
        "--seq",
        "8",
        "--arith",
        "torch-f32",
        "-o",
        path_str(&never),
    ]);
    assert_eq!(
        refused.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    assert!(!never.exists());
}

#[test]
fn devices_and_pipes_are_refused_before_reading() {
    // /dev/zero says it holds 0 bytes and never ends; a FIFO blocks whoever opens it.
    let d = dir();
    let zero = d.path().join("zero.npy");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    let fifo = d.path().join("pipe.npy");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let out = d.path().join("never.npy");
    for words in [
        vec!["identify", path_str(&zero)],
        vec![
            "check",
            path_str(&fifo),
            "--as",
            "sinusoidal",
            "--seq",
            "4",
            "--dim",
            "4",
        ],
        vec![
            "table",
            "rope-apply",
            "--input",
            path_str(&zero),
            "-o",
            path_str(&out),
        ],
        vec![
            "table",
            "rope-inv-freq",
            "--dim",
            "4",
            "--scaling",
            "longrope",
            "--original-max-position-embeddings",
            "8",
            "--factor",
            "2",
            "--long-factor",
            path_str(&fifo),
            "--short-factor",
            "1",
            "-o",
            path_str(&out),
        ],
    ] {
        let result = poslab(&words);
        let stderr = String::from_utf8_lossy(&result.stderr);
        assert_eq!(result.status.code(), Some(2), "{words:?}: {stderr}");
        assert!(
            stderr.contains("is not a regular file"),
            "{words:?}: {stderr}"
        );
        assert!(!out.exists());
    }
}

#[test]
fn sincos_2d_resample_moves_a_cls_table_to_a_new_grid_and_refuses_what_does_not_fit() {
    let d = dir();
    let p = |name: &str| d.path().join(name);
    // The MAE table at 3 x 3 with a CLS row, as a model checkpoint stores it (float32).
    let source = p("pe.npy");
    ok(&[
        "table",
        "sincos-2d",
        "--grid-h",
        "3",
        "--grid-w",
        "3",
        "--dim",
        "8",
        "--prefix-rows",
        "1",
        "-o",
        path_str(&source),
    ]);
    let from_file = p("from_file.npy");
    ok(&[
        "table",
        "sincos-2d-resample",
        "--input",
        path_str(&source),
        "--prefix-rows",
        "1",
        "--grid-h",
        "5",
        "--grid-w",
        "4",
        "--antialias",
        "true",
        "-o",
        path_str(&from_file),
    ]);
    let resampled: Array2<f32> = read_npy(&from_file).unwrap();
    assert_eq!(resampled.shape(), &[1 + 20, 8]);
    assert!(
        resampled.row(0).iter().all(|&v| v == 0.0),
        "the CLS row is kept"
    );
    // Without --input, the same table made at --from-grid.
    let made = p("made.npy");
    ok(&[
        "table",
        "sincos-2d-resample",
        "--from-grid",
        "3x3",
        "--dim",
        "8",
        "--prefix-rows",
        "1",
        "--grid-h",
        "5",
        "--grid-w",
        "4",
        "--antialias",
        "true",
        "--dtype",
        "f64",
        "-o",
        path_str(&made),
    ]);
    let made: Array2<f64> = read_npy(&made).unwrap();
    let worst = made
        .iter()
        .zip(resampled.iter())
        .map(|(a, &b)| (a - f64::from(b)).abs())
        .fold(0.0, f64::max);
    assert!(worst < 1e-6, "file and made table differ by {worst}");
    // check holds a float32 table to its float type: the resampled file matches.
    let verdict = ok(&[
        "check",
        path_str(&from_file),
        "--as",
        "sincos-2d-resample",
        "--input",
        path_str(&source),
        "--prefix-rows",
        "1",
        "--grid-h",
        "5",
        "--grid-w",
        "4",
        "--antialias",
        "true",
    ]);
    assert!(String::from_utf8_lossy(&verdict.stdout).contains("verdict: MATCH"));
    // The GPU engine writes the same table.
    let gpu = p("gpu.npy");
    let gpu_run = poslab(&[
        "table",
        "sincos-2d-resample",
        "--input",
        path_str(&source),
        "--prefix-rows",
        "1",
        "--grid-h",
        "5",
        "--grid-w",
        "4",
        "--antialias",
        "true",
        "--backend",
        "gpu",
        "-o",
        path_str(&gpu),
    ]);
    assert!(
        gpu_run.status.success(),
        "{}",
        String::from_utf8_lossy(&gpu_run.stderr)
    );
    let gpu: Array2<f32> = read_npy(&gpu).unwrap();
    let worst = gpu
        .iter()
        .zip(resampled.iter())
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f32::max);
    assert!(worst < 2e-6, "GPU and CPU differ by {worst}");

    let out = path_str(&d.path().join("never.npy")).to_owned();
    let input = path_str(&source).to_owned();
    let base = [
        "table",
        "sincos-2d-resample",
        "--grid-h",
        "5",
        "--grid-w",
        "4",
        "-o",
        &out,
    ];
    let with = |extra: &[&str]| -> Vec<String> {
        base.iter().chain(extra).map(|s| s.to_string()).collect()
    };
    let cases: Vec<(Vec<String>, &str)> = vec![
        (with(&[]), "needs --input"),
        // 10 rows without --prefix-rows: not a square number of patches.
        (with(&["--input", &input]), "not a square: give --from-grid"),
        (
            with(&["--input", &input, "--from-grid", "3x4"]),
            "[0 + 3 x 4, dim]",
        ),
        (
            with(&["--input", &input, "--prefix-rows", "1", "--dim", "8"]),
            "--dim describes",
        ),
        (
            with(&["--input", &input, "--prefix-rows", "1", "--mode", "causal"]),
            "bicubic or bilinear",
        ),
        (
            with(&["--from-grid", "3by3", "--dim", "8"]),
            "--from-grid \"3by3\"",
        ),
        (
            with(&["--from-grid", "0x3", "--dim", "8"]),
            "--from-grid \"0x3\"",
        ),
        (with(&["--from-grid", "3x3", "--dim", "6"]), "--dim 6"),
        (
            with(&["--input", &input, "--prefix-rows", "11"]),
            "only 10 rows",
        ),
    ];
    for (args, expected) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        refused(d.path(), &args, expected);
    }
    refused(
        d.path(),
        &[
            "table", "alibi", "--heads", "2", "--seq", "3", "--mode", "bicubic", "-o", &out,
        ],
        "causal or symmetric",
    );
}

/// A `.npy` file of float16 values (`<f2`, as `np.save(a.astype(np.float16))` writes it).
fn write_f16_npy(path: &Path, table: &Array2<f64>) {
    let (rows, cols) = table.dim();
    let mut header =
        format!("{{'descr': '<f2', 'fortran_order': False, 'shape': ({rows}, {cols}), }}");
    // Magic (6) + version (2) + length (2) + header + newline, padded to 64 bytes.
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    for v in table.iter() {
        bytes.extend_from_slice(&half::f16::from_f64(*v).to_le_bytes());
    }
    std::fs::write(path, bytes).unwrap();
}

/// float16 `.npy` files are read (NumPy's `<f2`) and held to what float16 holds: `check`
/// matches at 8 ulp of float16, `identify` names the table at float16 precision.
#[test]
fn float16_npy_files_are_checked_and_identified() {
    let d = dir();
    let table = Array2::from_shape_fn((64, 16), |(p, c)| vaswani(p as f64, c, 16, 10_000.0));
    let file = d.path().join("pe16.npy");
    write_f16_npy(&file, &table);
    let out = ok(&["identify", path_str(&file)]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("precision a float16 file holds")
            && text.contains("identified: sinusoidal, interleaved layout, sin first")
            && text.contains("base 10000"),
        "{text}"
    );
    let out = ok(&[
        "check",
        path_str(&file),
        "--as",
        "sinusoidal",
        "--seq",
        "64",
        "--dim",
        "16",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("MATCH (the default for a float16 file"),
        "{text}"
    );
    // A different base is still told apart at float16 precision.
    let out = poslab(&[
        "check",
        path_str(&file),
        "--as",
        "sinusoidal",
        "--seq",
        "64",
        "--dim",
        "16",
        "--base",
        "11000",
    ]);
    assert_eq!(out.status.code(), Some(1));
}

/// Outside a desktop session (no XDG_RUNTIME_DIR) a GPU run that succeeds prints nothing on
/// stderr: Mesa's device-selection layer no longer makes libwayland complain.
#[test]
fn a_gpu_run_outside_a_session_is_quiet() {
    let d = dir();
    let file = d.path().join("g.npy");
    let out = Command::new(env!("CARGO_BIN_EXE_poslab"))
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("NODEVICE_SELECT")
        .args([
            "table",
            "sinusoidal",
            "--seq",
            "8",
            "--dim",
            "8",
            "--backend",
            "gpu",
            "-o",
            path_str(&file),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

/// poslab under an address-space limit (`ulimit -v`, in KiB): the run's exit status and stderr.
fn limited(kib: u64, args: &[&str]) -> Output {
    let mut command = String::from("ulimit -v ");
    command.push_str(&kib.to_string());
    command.push_str("; exec \"$0\" \"$@\"");
    Command::new("sh")
        .arg("-c")
        .arg(command)
        .arg(env!("CARGO_BIN_EXE_poslab"))
        .args(args)
        .output()
        .expect("sh runs")
}

/// `poslab table` streams: blocks are computed and written one after another, so a table needs
/// the memory of one block, not of the table plus its f32 copy (a 32768 x 1024 table is
/// written here under a 700 MB address space, with values checked across blocks).
#[test]
fn tables_are_written_block_by_block_in_bounded_memory() {
    let d = dir();
    let file = d.path().join("pe.npy");
    let out = limited(
        700_000,
        &[
            "table",
            "sinusoidal",
            "--seq",
            "32768",
            "--dim",
            "1024",
            "-o",
            path_str(&file),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table: Array2<f32> = read_npy(&file).unwrap();
    assert_eq!(table.dim(), (32768, 1024));
    // Rows in different blocks, against the formula evaluated here.
    for (row, col) in [(0, 0), (1, 1), (63, 2), (64, 3), (4097, 510), (32767, 1023)] {
        let w = 10_000f64.powf(-((col / 2 * 2) as f64) / 1024.0);
        let angle = row as f64 * w;
        let expected = if col % 2 == 0 {
            angle.sin()
        } else {
            angle.cos()
        };
        assert!(
            (f64::from(table[[row, col]]) - expected).abs() < 1e-7,
            "[{row}, {col}]: {} vs {expected}",
            table[[row, col]]
        );
    }
    assert_eq!(listing(d.path()), vec![file.clone()]);
}

/// Identify keeps only the table of the hypothesis it names: a 2048 x 2048 file (T5's
/// buckets, written by `poslab table`) is identified under a 700 MB address space, where each
/// of the 36 patch-distance readings used to keep its 32 MB table (1.45 GB in all).
#[test]
fn identify_holds_one_hypothesis_table_at_a_time() {
    let d = dir();
    let file = d.path().join("t5.npy");
    ok(&[
        "table",
        "t5-buckets",
        "--seq",
        "2048",
        "-o",
        path_str(&file),
    ]);
    let out = limited(700_000, &["identify", path_str(&file)]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.starts_with(
            "identified: T5 relative position buckets, bidirectional (encoder), \
             --num-buckets 32 --max-distance 128, 2048 positions"
        ),
        "{text}"
    );
}

/// Figures are bounded before any work: a PNG beyond 2^26 pixels and a figure of more heads
/// than fit side by side are refused with exit 2; a pair list of any length costs memory of
/// the pair count (3000 ranges of half a million pairs run under a 2 GB address space); an
/// ALiBi figure of 2^30 positions is drawn (each pixel's block in closed form).
#[test]
fn figures_are_bounded_before_the_work() {
    let d = dir();
    let png = d.path().join("f.png");
    let png = path_str(&png);
    refused(
        d.path(),
        &[
            "figure",
            "sinusoidal",
            "--width",
            "8000",
            "--height",
            "8000",
            "--scale",
            "4",
            "-o",
            png,
        ],
        "32000 x 32000 pixel PNG",
    );
    refused(
        d.path(),
        &[
            "figure", "alibi", "--heads", "65536", "--seq", "64", "-o", png,
        ],
        "pick one with --head",
    );
    let svg = d.path().join("c.svg");
    let list = vec!["0-524287"; 3000].join(",");
    let out = limited(
        2_000_000,
        &[
            "figure",
            "corkscrew",
            "--dim",
            "1048576",
            "--pairs",
            &list,
            "-o",
            path_str(&svg),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    ok(&[
        "figure",
        "alibi",
        "--heads",
        "16",
        "--seq",
        "1073741824",
        "-o",
        png,
    ]);
    assert!(std::fs::metadata(png).unwrap().len() > 0);
}

/// Messages are one line naming the option as it is typed: a malformed `.npy` header (the
/// parser's drawing of it with a caret is folded into the column), a shape mismatch in
/// `figure check`, `--grid-h`.
#[test]
fn messages_are_one_line_with_options_as_typed() {
    let d = dir();
    let bad = d.path().join("bad.npy");
    let mut header = String::from("{'descr': '<f4', 'fortran_order': False, 'shape': (3,) ");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(&[0; 12]);
    std::fs::write(&bad, bytes).unwrap();
    let out = poslab(&["identify", path_str(&bad)]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("at character 54 of its header"), "{stderr}");
    let table = d.path().join("s8.npy");
    ok(&[
        "table",
        "sinusoidal",
        "--seq",
        "8",
        "--dim",
        "8",
        "-o",
        path_str(&table),
    ]);
    let png = d.path().join("f.png");
    refused(
        d.path(),
        &[
            "figure",
            "check",
            "--file",
            path_str(&table),
            "--as",
            "sinusoidal --seq 9 --dim 8",
            "-o",
            path_str(&png),
        ],
        "shape mismatch",
    );
    refused(
        d.path(),
        &["figure", "patches", "--grid-h", "0", "-o", path_str(&png)],
        "--grid-h 0 is not allowed",
    );
}

/// The folder's entries whose names mark them as poslab's temporary files.
fn temporaries(d: &Path) -> Vec<String> {
    std::fs::read_dir(d)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| name.starts_with(".poslab"))
        .collect()
}

/// Every signal that ends a process by default (Ctrl+C, Ctrl+\\, SIGTERM, SIGHUP, the user,
/// timer, profiling, power, trap, abort and real-time signals) sent while a table is being
/// written removes the temporary file and ends the process as the signal does; nothing is left
/// in the folder. The test holds when it runs as a background job that ignores SIGINT.
#[test]
fn an_interrupted_write_leaves_nothing() {
    // Every signal whose default action ends a process (but SIGSEGV and SIGBUS, which Rust's
    // runtime handles, and SIGKILL, which nothing can).
    for signal in [
        libc::SIGINT,
        libc::SIGTERM,
        libc::SIGQUIT,
        libc::SIGHUP,
        libc::SIGUSR1,
        libc::SIGUSR2,
        libc::SIGALRM,
        libc::SIGVTALRM,
        libc::SIGXCPU,
        libc::SIGPROF,
        libc::SIGPWR,
        libc::SIGSTKFLT,
        libc::SIGSYS,
        libc::SIGTRAP,
        libc::SIGABRT,
        libc::SIGILL,
        libc::SIGFPE,
        libc::SIGIO,
        libc::SIGRTMIN(),
        libc::SIGRTMAX(),
    ] {
        let d = dir();
        let file = d.path().join("big.csv");
        // A CSV of 33 million numbers: seconds of writing.
        let mut command = Command::new(env!("CARGO_BIN_EXE_poslab"));
        command
            .args([
                "table",
                "sinusoidal",
                "--seq",
                "32768",
                "--dim",
                "1024",
                "-o",
                path_str(&file),
            ])
            .stderr(std::process::Stdio::null());
        // No core file from SIGQUIT, SIGABRT and the others that dump one.
        common::limit_resource(&mut command, libc::RLIMIT_CORE, 0);
        // As a background job of a script (`cargo test &`, nohup) starts it: SIGINT, SIGQUIT
        // and SIGHUP ignored; `default_signals` gives the writer the defaults back.
        {
            use std::os::unix::process::CommandExt;
            // SAFETY: signal is async-signal-safe.
            unsafe {
                command.pre_exec(|| {
                    for ignored in [libc::SIGINT, libc::SIGQUIT, libc::SIGHUP] {
                        libc::signal(ignored, libc::SIG_IGN);
                    }
                    Ok(())
                });
            }
        }
        common::default_signals(&mut command);
        let mut child = command.spawn().unwrap();
        // Until the temporary file appears (it is created when writing starts).
        let waited = std::time::Instant::now();
        while temporaries(d.path()).is_empty() {
            assert!(
                waited.elapsed().as_secs() < 120,
                "no temporary file appeared"
            );
            assert!(child.try_wait().unwrap().is_none(), "poslab ended early");
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        // SAFETY: a signal to the child this test spawned.
        assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
        let status = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(signal), "{status:?}");
        assert!(listing(d.path()).is_empty(), "{:?}", listing(d.path()));
    }
}

/// Past the file size limit (`ulimit -f`, `prlimit --fsize`) a write does not end the process
/// by SIGXFSZ with no word and the temporary file left: it says so, in one line, and leaves
/// nothing.
#[test]
fn the_file_size_limit_is_said_and_leaves_nothing() {
    let d = dir();
    let table = d.path().join("big.npy");
    let png = d.path().join("big.png");
    let svg = d.path().join("big.svg");
    let table_args = [
        "table",
        "sinusoidal",
        "--seq",
        "4096",
        "--dim",
        "512",
        "-o",
        path_str(&table),
    ];
    // A figure's write: an SVG of 128 x 128 cells and a PNG at 4 times the size pass 1 MB.
    let png_args = [
        "figure",
        "sinusoidal",
        "--seq",
        "1024",
        "--dim",
        "512",
        "--scale",
        "4",
        "-o",
        path_str(&png),
    ];
    let svg_args = [
        "figure",
        "sinusoidal",
        "--seq",
        "1024",
        "--dim",
        "512",
        "-o",
        path_str(&svg),
    ];
    for args in [&table_args[..], &png_args, &svg_args] {
        let mut command = Command::new(env!("CARGO_BIN_EXE_poslab"));
        command.args(args);
        common::limit_resource(&mut command, libc::RLIMIT_FSIZE, 1_000_000);
        let output = command.output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            output.status.code(),
            Some(1),
            "{args:?}: {:?}: {stderr}",
            output.status
        );
        assert!(stderr.contains("file size limit exceeded"), "{stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        // The temporary file is gone when the message is read: it is not named.
        assert!(!stderr.contains(".poslab."), "{stderr}");
        assert!(listing(d.path()).is_empty(), "{:?}", listing(d.path()));
    }
}

/// A command whose output pipe has no reader (`poslab identify t.npy | head -0`) ends by
/// SIGPIPE, as other command line tools do, not with a panic and a backtrace.
#[test]
fn a_closed_output_pipe_ends_the_command_quietly() {
    let d = dir();
    let file = d.path().join("pe.npy");
    ok(&[
        "table",
        "sinusoidal",
        "--seq",
        "16",
        "--dim",
        "8",
        "-o",
        path_str(&file),
    ]);
    let (reader, writer) = std::io::pipe().unwrap();
    // The reader is gone before the command writes its first line.
    drop(reader);
    let output = Command::new(env!("CARGO_BIN_EXE_poslab"))
        .args(["identify", path_str(&file)])
        .stdout(writer)
        .output()
        .unwrap();
    use std::os::unix::process::ExitStatusExt;
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.signal(),
        Some(libc::SIGPIPE),
        "{:?}: {stderr}",
        output.status
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// A temporary file left by a writer that is gone (killed with SIGKILL) is removed by the
/// next write to its folder. Kept: one whose writer still holds its lock, even under a process
/// id that runs nowhere here (a writer in another PID namespace, a container with this
/// machine's name: the lock is what tells, not the id); one written in the last seconds (its
/// writer may not have locked it yet); another machine's.
#[test]
fn stale_temporary_files_are_cleaned_safely() {
    use std::os::unix::io::AsRawFd;
    let d = dir();
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_owned();
    // Beyond the kernel's largest pid (2^22): no such process here.
    let gone = format!(".poslab.99999999.{host}.Xy12ab.tmp");
    let other_namespace = format!(".poslab.99999998.{host}.Xy12ab.tmp");
    let fresh = format!(".poslab.99999997.{host}.Xy12ab.tmp");
    let elsewhere = ".poslab.99999999.another-machine.Xy12ab.tmp".to_owned();
    let minute_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    for name in [&gone, &other_namespace, &fresh, &elsewhere] {
        let file = std::fs::File::create(d.path().join(name)).unwrap();
        std::io::Write::write_all(&mut &file, b"partial").unwrap();
        if name != &fresh {
            file.set_modified(minute_ago).unwrap();
        }
    }
    // The live writer's lock, held by this process as a writer in a container would hold it.
    let writer = std::fs::File::open(d.path().join(&other_namespace)).unwrap();
    // SAFETY: a plain system call on a descriptor owned here.
    let held = unsafe { libc::flock(writer.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    assert_eq!(held, 0, "{}", std::io::Error::last_os_error());
    let file = d.path().join("pe.npy");
    let write = || {
        ok(&[
            "table",
            "sinusoidal",
            "--seq",
            "8",
            "--dim",
            "8",
            "-o",
            path_str(&file),
        ])
    };
    write();
    let mut left = temporaries(d.path());
    left.sort();
    let mut expected = vec![elsewhere.clone(), other_namespace.clone(), fresh.clone()];
    expected.sort();
    assert_eq!(left, expected);
    // The writer gone (its descriptor closed, as at its death), its file is stale.
    drop(writer);
    write();
    let mut left = temporaries(d.path());
    left.sort();
    let mut expected = vec![elsewhere, fresh];
    expected.sort();
    assert_eq!(left, expected);
}

/// A name longer than the file system takes is refused before the work, with exit 2.
#[test]
fn an_overlong_name_is_refused_up_front() {
    let d = dir();
    let long = d.path().join(format!("{}.npy", "x".repeat(300)));
    refused(
        d.path(),
        &[
            "table",
            "sinusoidal",
            "--seq",
            "8",
            "--dim",
            "8",
            "-o",
            path_str(&long),
        ],
        "File name too long",
    );
}

/// Finite inputs whose table overflows float32 are refused (exit 2, no file) instead of
/// written as infinities; float64 holds the same table.
#[test]
fn tables_beyond_float32_are_refused_not_written_as_infinities() {
    let d = dir();
    let freqs = d.path().join("freqs.npy");
    write_npy(&freqs, &Array2::<f64>::from_elem((2, 8), 1e38)).unwrap();
    let out = d.path().join("m.npy");
    let args = |extra: &[&'static str]| {
        let mut args = vec![
            "table".to_owned(),
            "rope-2d-mixed".to_owned(),
            "--grid-h".to_owned(),
            "4".to_owned(),
            "--grid-w".to_owned(),
            "4".to_owned(),
            "--freqs".to_owned(),
            path_str(&freqs).to_owned(),
            "-o".to_owned(),
            path_str(&out).to_owned(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    };
    for extra in [&[][..], &["--backend", "gpu"][..]] {
        let args = args(extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let expected = if extra.is_empty() {
            "beyond float32's range"
        } else {
            "overflowed to infinity"
        };
        refused(d.path(), &args, expected);
    }
    let args = args(&["--dtype", "f64"]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    ok(&args);
    let table: Array2<f64> = read_npy(&out).unwrap();
    assert!(table.iter().all(|v| v.is_finite()));
    // Patch 15 sits at (3, 3): 3 theta_x + 3 theta_y.
    assert_eq!(table[[15, 0]], 6e38);
}

/// `figure patches --freqs` takes rope-vit's [2, heads, n] parameter as the app does, one
/// head of it chosen with --freqs-head.
#[test]
fn figure_patches_takes_a_layers_frequencies() {
    let d = dir();
    let freqs = d.path().join("freqs.npy");
    let values = ndarray::Array3::from_shape_fn((2, 4, 8), |(axis, head, k)| {
        0.1 * (1 + axis + head + k) as f64
    });
    write_npy(&freqs, &values).unwrap();
    let svg = d.path().join("p.svg");
    ok(&[
        "figure",
        "patches",
        "--left",
        "mixed-rope",
        "--freqs",
        path_str(&freqs),
        "--freqs-head",
        "3",
        "-o",
        path_str(&svg),
    ]);
    refused(
        d.path(),
        &[
            "figure",
            "patches",
            "--left",
            "mixed-rope",
            "--freqs",
            path_str(&freqs),
            "--freqs-head",
            "4",
            "-o",
            path_str(&d.path().join("q.svg")),
        ],
        "--freqs-head 4 is not allowed: use 0 to 3",
    );
}

#[test]
fn no_command_opens_the_app_only_from_main() {
    // The library's command line never opens a window: with no command it says what to do.
    assert!(matches!(
        poslab::cli::dispatch(["poslab"]),
        poslab::cli::Outcome::OpenApp(_)
    ));
    assert_eq!(poslab::cli::run(["poslab"]), 2);
    assert!(matches!(
        poslab::cli::dispatch(["poslab", "--version"]),
        poslab::cli::Outcome::Exit(0)
    ));
}

#[test]
fn rope_unseen_marks_the_distances_past_the_trained_span() {
    let d = dir();
    let out = d.path().join("unseen.npy");
    let o = path_str(&out);
    // Llama 2 (d 128, base 10000, L 4096) extrapolated to 8192: pair i is unseen from distance
    // 4096 exactly when its wavelength exceeds 4095 positions (less than a turn in training),
    // until its angle wraps back into the span: computed here from the formula in f64.
    ok(&[
        "table",
        "rope-unseen",
        "--seq",
        "8192",
        "--dim",
        "128",
        "--train-len",
        "4096",
        "-o",
        o,
    ]);
    let map: Array2<f32> = read_npy(&out).expect("a <f4 2-D array");
    assert_eq!(map.dim(), (8192, 64));
    for i in 0..64 {
        let theta = 10_000f64.powf(-((2 * i) as f64) / 128.0);
        let span = 4095.0 * theta;
        for p in [0usize, 4095, 4096, 6000, 8191] {
            let angle = (p as f64 * theta) % std::f64::consts::TAU;
            let expected = span < std::f64::consts::TAU && angle > span + 1e-8;
            assert_eq!(map[[p, i]] == 1.0, expected, "pair {i}, distance {p}");
        }
    }
    // With Position Interpolation by 2 only the last distance (8191 -> 4095.5) leaves the span.
    ok(&[
        "table",
        "rope-unseen",
        "--seq",
        "8192",
        "--dim",
        "128",
        "--train-len",
        "4096",
        "--scaling",
        "linear",
        "--factor",
        "2",
        "-o",
        o,
    ]);
    let map: Array2<f32> = read_npy(&out).expect("a <f4 2-D array");
    let rows: Vec<usize> = (0..8192).filter(|&p| map.row(p).sum() > 0.0).collect();
    assert_eq!(rows, [8191]);
    refused(
        d.path(),
        &["table", "rope-unseen", "--seq", "64", "--dim", "8", "-o", o],
        "needs --train-len",
    );
    refused(
        d.path(),
        &[
            "table",
            "rope-unseen",
            "--seq",
            "64",
            "--dim",
            "8",
            "--train-len",
            "1",
            "-o",
            o,
        ],
        "--train-len 1 is not allowed",
    );
}

#[test]
fn the_context_figure_reads_a_model_and_refuses_what_does_not_apply() {
    let d = dir();
    let out = d.path().join("ctx.svg");
    let o = path_str(&out);
    // A config.json of its own: a RoPE model trained on 2048 positions.
    let config = d.path().join("config.json");
    std::fs::write(
        &config,
        r#"{"model_type": "llama", "hidden_size": 512, "num_attention_heads": 8,
            "max_position_embeddings": 2048, "rope_theta": 10000.0}"#,
    )
    .unwrap();
    ok(&[
        "figure",
        "context",
        "--model",
        path_str(&config),
        "--target",
        "8192",
        "--methods",
        "yarn,none",
        "--set",
        "yarn.beta_fast=16",
        "-o",
        o,
    ]);
    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(svg.contains("trained on L = 2048, run at L' = 8192"));
    std::fs::remove_file(&out).unwrap();
    let bert = d.path().join("bert.json");
    std::fs::write(
        &bert,
        r#"{"model_type": "bert", "hidden_size": 768, "num_attention_heads": 12,
            "max_position_embeddings": 512}"#,
    )
    .unwrap();
    // A head 2048 wide (its fitted score would be an SVD of 8192 x 4096), and a model trained
    // on one position.
    let wide = d.path().join("wide.json");
    std::fs::write(
        &wide,
        r#"{"model_type": "llama", "hidden_size": 16384, "num_attention_heads": 8, "max_position_embeddings": 2048}"#,
    )
    .unwrap();
    let short = d.path().join("short.json");
    std::fs::write(
        &short,
        r#"{"model_type": "llama", "hidden_size": 512, "num_attention_heads": 8, "max_position_embeddings": 1}"#,
    )
    .unwrap();
    for (words, says) in [
        (vec!["--model", "gpt-5"], "not a shipped RoPE model"),
        (vec!["--model", path_str(&bert)], "does not use RoPE"),
        (vec!["--methods", "none,pi"], "the methods are none, linear"),
        (vec!["--map", "longrope"], "fitted for each model"),
        (vec!["--set", "yarn.gamma=2"], "the parameters are factor"),
        (
            vec!["--methods", "none,llama3", "--set", "llama3.factor=0.5"],
            "--factor 0.5 is not allowed",
        ),
        // A method neither drawn nor mapped: its parameters would change nothing.
        (
            vec!["--set", "llama3.factor=2"],
            "neither in --methods nor the --map",
        ),
        (
            vec!["--heads", "4"],
            "apply to the context figure with --chart alibi",
        ),
        (vec!["--target", "1"], "--target 1 is not allowed"),
        (
            vec!["--seq", "64"],
            "--seq does not apply to the context figure",
        ),
        (vec!["--model", path_str(&wide)], "rotary widths up to 512"),
        (
            vec!["--model", path_str(&short)],
            "--train-len 1 is not allowed",
        ),
    ] {
        let mut args = vec!["figure", "context"];
        args.extend(words);
        args.extend(["-o", o]);
        refused(d.path(), &args, says);
    }
}

#[test]
fn the_vision_figure_takes_its_grids_and_refuses_what_does_not_fit() {
    let d = dir();
    let out = d.path().join("vit.svg");
    let o = path_str(&out);
    ok(&[
        "figure",
        "context-vision",
        "--trained-grid",
        "7",
        "--grid",
        "12",
        "--dim",
        "32",
        "--resample",
        "bilinear",
        "--antialias",
        "false",
        "--query",
        "0",
        "-o",
        o,
    ]);
    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(
        svg.contains("trained at 112 px run at 192 px, MAE's table: query patch (0, 0), bilinear")
    );
    std::fs::remove_file(&out).unwrap();
    for (words, says) in [
        (vec!["--dim", "30"], "multiple of 4"),
        (
            vec!["--grid", "10", "--query", "100"],
            "--query 100 is not allowed",
        ),
        (vec!["--grid", "65"], "--grid 65 is not allowed"),
        (
            vec!["--heads", "4", "--head", "4"],
            "--head 4 is not allowed",
        ),
        (
            vec!["--target", "100"],
            "--target does not apply to the context-vision figure",
        ),
    ] {
        let mut args = vec!["figure", "context-vision"];
        args.extend(words);
        args.extend(["-o", o]);
        refused(d.path(), &args, says);
    }
}

#[test]
fn the_relative_figure_draws_each_panel_and_refuses_what_does_not_apply() {
    let d = dir();
    for panel in ["offsets", "shaw", "t5", "alibi", "skew", "2d"] {
        let svg = d.path().join(format!("{panel}.svg"));
        ok(&["figure", "relative", "--panel", panel, "-o", path_str(&svg)]);
        let text = std::fs::read_to_string(&svg).unwrap();
        assert!(text.contains("<svg"), "{panel}");
    }
    // The skew trick's last stage has one labelled cell per (query, key): 5 x 5.
    let svg = d.path().join("sliced.svg");
    ok(&[
        "figure",
        "relative",
        "--panel",
        "skew",
        "--stage",
        "6",
        "-o",
        path_str(&svg),
    ]);
    let text = std::fs::read_to_string(&svg).unwrap();
    // Each text element's content is a line of its own.
    let lines: std::collections::HashSet<&str> = text.lines().collect();
    for i in 0..5i64 {
        for j in 0..5i64 {
            let o = j - i;
            let label = format!("q{i}·r{}{o}", if o > 0 { "+" } else { "" });
            assert!(lines.contains(label.as_str()), "{label}");
        }
    }
    let out = d.path().join("x.svg");
    let out = path_str(&out);
    let cases: &[(&[&str], &str)] = &[
        (&["--panel", "skew", "--stage", "0"], "--stage 0"),
        (&["--panel", "skew", "--stage", "7"], "--stage 7"),
        (&["--panel", "skew", "--tokens", "13"], "--tokens 13"),
        (&["--panel", "skew", "--dim", "0"], "use 1 to 1024"),
        (
            &["--panel", "offsets", "--stage", "2"],
            "--stage does not apply",
        ),
        (&["--panel", "t5", "--max-distance", "4"], "use 9 to 1024"),
        (&["--panel", "t5", "--num-buckets", "3"], "use 4 to 128"),
        (&["--panel", "2d", "--query", "25"], "--query 25"),
        (
            &["--panel", "alibi", "--heads", "4", "--head", "4"],
            "--head 4",
        ),
        (&["--panel", "alibi", "--seq", "4"], "--seq does not apply"),
        (&["--panel", "nope"], "--panel"),
    ];
    for (args, expected) in cases {
        let mut words = vec!["figure", "relative"];
        words.extend_from_slice(args);
        words.extend_from_slice(&["-o", out]);
        refused(d.path(), &words, expected);
    }
}

#[test]
fn app_refuses_bad_settings_before_any_window_opens() {
    for (args, says) in [
        (
            vec!["app", "--seq", "0"],
            "--seq 0: 0 is below the smallest sequence length, 1",
        ),
        (
            vec!["app", "--seq", "2000000"],
            "--seq 2000000: 2000000 is above the largest sequence length, 1048576",
        ),
        (
            vec!["app", "--dim", "33"],
            "--dim 33: Dimension must be even",
        ),
        (
            vec!["app", "--heads", "2.5"],
            "invalid value '2.5' for '--heads <H>'",
        ),
        (
            vec!["app", "--base", "nan"],
            "--base NaN: not a finite number",
        ),
        (
            vec!["app", "--view", "nope"],
            "invalid value 'nope' for '--view <VIEW>'",
        ),
        (
            vec!["app", "--seq", "abc"],
            "invalid value 'abc' for '--seq <N>'",
        ),
        (
            vec!["app", "--base", "abc"],
            "invalid value 'abc' for '--base <B>'",
        ),
        (
            vec!["app", "--base", "1e400"],
            "--base inf: not a finite number",
        ),
        // One rule with poslab table (the same options): no spaces around, a count written as a
        // whole number.
        (
            vec!["app", "--seq", "1e400"],
            "invalid value '1e400' for '--seq <N>'",
        ),
        (
            vec!["app", "--dim", " 4"],
            "invalid value ' 4' for '--dim <D>'",
        ),
        (
            vec!["app", "--dim", "1e3"],
            "invalid value '1e3' for '--dim <D>'",
        ),
        (
            vec!["app", "--dim", "6.0"],
            "invalid value '6.0' for '--dim <D>'",
        ),
        (
            vec!["app", "--base", " 500"],
            "invalid value ' 500' for '--base <B>'",
        ),
        // The table to check is looked at first.
        (
            vec!["app", "--check", "/no/such/table.npy"],
            "--check /no/such/table.npy: cannot be read",
        ),
        (
            vec!["app", "--check", "/tmp"],
            "--check /tmp: is not a file",
        ),
        (
            vec!["app", "--seq", "-5"],
            "--seq -5: -5 is below the smallest sequence length, 1",
        ),
    ] {
        let out = poslab(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}

#[test]
fn app_takes_a_view_and_its_settings() {
    use poslab::cli::{Outcome, app::AppLaunch, dispatch};
    use poslab::views::ViewKind;
    let Outcome::OpenApp(launch) = dispatch([
        "poslab", "app", "--view", "patches", "--seq", "1048576", "--dim", "4096", "--base",
        "500000", "--layout", "split",
    ]) else {
        panic!("poslab app did not ask for the app");
    };
    assert_eq!(
        launch,
        AppLaunch {
            view: Some(ViewKind::Patches),
            seq: Some(1 << 20),
            dim: Some(4096),
            base: Some(500000.0),
            layout: Some(poslab::encoding::PairLayout::Half),
            ..AppLaunch::default()
        }
    );
    let mut params = poslab::ui::params::SharedParams::default();
    launch.apply(&mut params);
    assert_eq!(
        (params.seq, params.dim, params.base),
        (1 << 20, 4096, 500000.0)
    );
    assert_eq!(
        (params.layout, params.spacing),
        (
            poslab::encoding::PairLayout::Half,
            poslab::encoding::sinusoidal::Spacing::Vaswani
        )
    );
    // No command still opens the app as it was left.
    assert!(matches!(dispatch(["poslab"]), Outcome::OpenApp(l) if l == AppLaunch::default()));
}

/// `--max-period` is diffusers' spelling of the base for the sinusoidal kinds (the third
/// contract): the table of `get_timestep_embedding(max_period=2000)` frequencies, refused with
/// `--base` beside it, for RoPE kinds, and out of range under its own name.
#[test]
fn max_period_is_the_sinusoidal_base_as_diffusers_spells_it() {
    let d = dir();
    let file = d.path().join("t.npy");
    let (code, text) = common::run_poslab(&[
        "table",
        "sinusoidal",
        "--seq",
        "6",
        "--dim",
        "8",
        "--max-period",
        "2000",
        "--dtype",
        "f64",
        "-o",
        path_str(&file),
    ]);
    assert_eq!(code, 0, "{text}");
    let table: Array2<f64> = read_npy(&file).unwrap();
    for p in 0..6 {
        for i in 0..4 {
            // w_i = 2000^(-2i/8), evaluated here as exp(-ln(2000) 2i/8).
            let angle = p as f64 * (-(2000f64.ln()) * (2 * i) as f64 / 8.0).exp();
            assert!((table[[p, 2 * i]] - angle.sin()).abs() < 1e-14);
            assert!((table[[p, 2 * i + 1]] - angle.cos()).abs() < 1e-14);
        }
    }
    let (code, text) = common::run_poslab(&[
        "check",
        path_str(&file),
        "--as",
        "sinusoidal",
        "--seq",
        "6",
        "--dim",
        "8",
        "--max-period",
        "2000",
    ]);
    assert_eq!(code, 0, "{text}");
    for (args, said) in [
        (
            &[
                "table",
                "sinusoidal",
                "--seq",
                "6",
                "--dim",
                "8",
                "--max-period",
                "2000",
                "--base",
                "3",
            ][..],
            "cannot be used with",
        ),
        (
            &[
                "table",
                "rope-cos",
                "--seq",
                "6",
                "--dim",
                "8",
                "--max-period",
                "2000",
            ],
            "--max-period does not apply to rope-cos",
        ),
        (
            &[
                "table",
                "sinusoidal",
                "--seq",
                "6",
                "--dim",
                "8",
                "--max-period",
                "1",
            ],
            "--max-period 1 is not allowed: must be a finite number greater than 1",
        ),
    ] {
        let other = d.path().join("x.npy");
        let (code, text) = common::run_poslab(&[args, &["-o", path_str(&other)]].concat());
        assert_eq!(code, 2, "{text}");
        assert!(text.contains(said), "{text}");
        assert!(!other.exists());
    }
}

/// A sinusoidal table's "split" and RoPE's "half" are one layout, pairs (i, i + d/2): either
/// word gives it, for either family, with the sines (or cosines) of every frequency in the
/// first half of the row and the cosines in the second.
#[test]
fn split_and_half_are_one_layout_under_either_word() {
    let d = dir();
    let table = |kind: &str, word: &str| -> Array2<f64> {
        let file = d.path().join(format!("{kind}-{word}.npy"));
        ok(&[
            "table",
            kind,
            "--seq",
            "5",
            "--dim",
            "8",
            "--layout",
            word,
            "--dtype",
            "f64",
            "-o",
            path_str(&file),
        ]);
        read_npy(&file).unwrap()
    };
    for kind in ["sinusoidal", "rope-cos"] {
        let (split, half) = (table(kind, "split"), table(kind, "half"));
        assert_eq!(split, half, "{kind}: split and half differ");
        for p in 0..5 {
            for i in 0..4 {
                // w_i = 10000^(-2i/8), evaluated here as exp(-ln(10000) i/4).
                let angle = p as f64 * (-(10000f64.ln()) * i as f64 / 4.0).exp();
                let (first, second) = match kind {
                    "sinusoidal" => (angle.sin(), angle.cos()),
                    _ => (angle.cos(), angle.cos()),
                };
                assert!((half[[p, i]] - first).abs() < 1e-14, "{kind} [{p}, {i}]");
                assert!(
                    (half[[p, i + 4]] - second).abs() < 1e-14,
                    "{kind} [{p}, {}]",
                    i + 4
                );
            }
        }
    }
}

/// torchtune's Qwen2 cache, `cat([emb.cos(), emb.sin()], -1)` with `emb = cat([angles,
/// angles], -1)`: `rope-cos-sin --format halves` is `[seq, 2R]`, the half-layout cos cache then
/// the sin cache, on the GPU as on the CPU.
#[test]
fn rope_cos_sin_halves_is_the_cos_cache_then_the_sin_cache() {
    let d = dir();
    let (seq, rotary, start) = (6usize, 8usize, 40u64);
    for backend in ["cpu", "gpu"] {
        let file = d.path().join(format!("halves-{backend}.npy"));
        ok(&[
            "table",
            "rope-cos-sin",
            "--format",
            "halves",
            "--seq",
            "6",
            "--dim",
            "12",
            "--rotary-dim",
            "8",
            "--start",
            "40",
            "--base",
            "1000000",
            "--backend",
            backend,
            "-o",
            path_str(&file),
        ]);
        let table: Array2<f32> = read_npy(&file).unwrap();
        assert_eq!(table.dim(), (seq, 2 * rotary), "{backend}");
        for p in 0..seq {
            for i in 0..rotary / 2 {
                // theta_i = 1e6^(-2i/R), evaluated here as exp(-ln(1e6) 2i/R).
                let theta = (-(1e6f64.ln()) * (2 * i) as f64 / rotary as f64).exp();
                let (sin, cos) = ((start + p as u64) as f64 * theta).sin_cos();
                for (col, expected) in [
                    (i, cos),
                    (i + rotary / 2, cos),
                    (rotary + i, sin),
                    (rotary + i + rotary / 2, sin),
                ] {
                    let got = f64::from(table[[p, col]]);
                    assert!(
                        (got - expected).abs() < 2e-6,
                        "{backend} [{p}, {col}]: {got} vs {expected}"
                    );
                }
            }
        }
    }
}

/// A torchtune Qwen2 cache written here from its formula, not by poslab, is identified as
/// `--format halves` with its base and start.
#[test]
fn a_torchtune_qwen2_cache_is_identified_as_halves() {
    let d = dir();
    let file = d.path().join("qwen2_cache.npy");
    let (seq, rotary, start) = (48usize, 64usize, 7u64);
    // freqs = cat([idx_theta, idx_theta]); cache = cat([freqs.cos(), freqs.sin()]).
    let cache = Array2::from_shape_fn((seq, 2 * rotary), |(p, col)| {
        let i = col % (rotary / 2);
        let theta = (-(1e6f64.ln()) * (2 * i) as f64 / rotary as f64).exp();
        let angle = (start + p as u64) as f64 * theta;
        if col < rotary {
            angle.cos()
        } else {
            angle.sin()
        }
    });
    write_npy(&file, &cache.mapv(|v| v as f32)).unwrap();
    let (code, text) = common::run_poslab(&["identify", path_str(&file)]);
    assert_eq!(code, 0, "{text}");
    let identified = text
        .lines()
        .find(|l| l.starts_with("identified:"))
        .unwrap_or_else(|| panic!("no identification: {text}"));
    for said in ["--format halves", "dim 64", "base 1000000", "--start 7"] {
        assert!(identified.contains(said), "{said} not in: {identified}");
    }
}
