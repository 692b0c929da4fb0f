//! Hostile inputs, round three: control characters in names and titles, and the other probes
//! of issue 32 that the command line must meet with one clear line and nothing left behind.

mod common;

/// An SVG document as the strict XML parser of usvg reads it.
fn parses(svg: &str) -> bool {
    resvg::usvg::Tree::from_str(svg, &resvg::usvg::Options::default()).is_ok()
}

#[test]
fn control_characters_in_titles_and_names_never_break_a_file_or_a_line() {
    let folder = tempfile::tempdir().unwrap();
    let svg = folder.path().join("x.svg");
    let png = folder.path().join("x.png");
    let title = "a\u{1}b\u{1b}]0;pwned\u{7}<c&d";
    for out in [&svg, &png] {
        let (code, text) = common::run_poslab(&[
            "figure",
            "sinusoidal",
            "--seq",
            "16",
            "--dim",
            "8",
            "--title",
            title,
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{text}");
    }
    let document = std::fs::read_to_string(&svg).unwrap();
    assert!(parses(&document), "the SVG is well-formed XML");
    assert!(document.contains("a\\u{1}b\\u{1b}]0;pwned\\u{7}&lt;c&amp;d"));
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));

    // Tensor names with a newline and a terminal escape: the learned figure names its tensor,
    // and an error naming one stays one line with the escape written out.
    let table: Vec<f32> = (0..32).map(|k| (k as f32 * 0.37).sin()).collect();
    let named = folder.path().join("named.safetensors");
    common::safetensors_file(&named, &[("pos\nembed\u{1b}[31m", &table, vec![8, 4])]);
    let (code, text) = common::run_poslab(&[
        "figure",
        "learned",
        "--file",
        named.to_str().unwrap(),
        "-o",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{text}");
    assert!(parses(&std::fs::read_to_string(&svg).unwrap()));
    let (code, text) = common::run_poslab(&[
        "figure",
        "learned",
        "--file",
        named.to_str().unwrap(),
        "--tensor",
        "no\nsuch\u{1b}[0m",
        "-o",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{text}");
    assert_eq!(text.trim_end().lines().count(), 1, "one line: {text:?}");
    assert!(!text.contains('\u{1b}'), "{text:?}");
}

/// `-o` through a symbolic link writes the file it names (the link stays a link), and a file
/// replaced keeps its permissions: a private 0600 table stays private. (A hard link to the
/// old file keeps the old contents: the new file is a new inode, as README says.)
#[test]
fn writing_through_a_link_keeps_the_link_and_the_files_mode() {
    use std::os::unix::fs::PermissionsExt;
    let folder = tempfile::tempdir().unwrap();
    let real = folder.path().join("real.npy");
    let link = folder.path().join("link.npy");
    let nested = folder.path().join("nested.npy");
    std::fs::write(&real, b"old").unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::os::unix::fs::symlink("real.npy", &link).unwrap();
    std::os::unix::fs::symlink(&link, &nested).unwrap();
    for (out, kind) in [(&link, "sinusoidal"), (&nested, "rope-cos")] {
        let mut args = vec!["table", kind, "--seq", "4", "--dim", "4"];
        args.extend(["-o", out.to_str().unwrap()]);
        let (code, text) = common::run_poslab(&args);
        assert_eq!(code, 0, "{text}");
        assert!(
            std::fs::symlink_metadata(out)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        let written = std::fs::read(&real).unwrap();
        assert!(
            written.starts_with(b"\x93NUMPY"),
            "the link's file is the table"
        );
        let mode = std::fs::metadata(&real).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    let names: Vec<String> = std::fs::read_dir(folder.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 3, "no temporary left: {names:?}");
}

/// Runs poslab with its address space limited to `bytes` (as `prlimit --as` does).
fn run_limited(args: &[&str], bytes: u64) -> (Option<i32>, String, String) {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_poslab"));
    command.args(args);
    common::limit_resource(&mut command, libc::RLIMIT_AS, bytes);
    let output = command.output().unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Under a memory limit a command either finishes or ends with exit status 2 and one line,
/// its file not written: never Rust's abort (134), and never an answer from a search cut
/// short ("no match" for a genuine Vaswani table, as `identify` said under 300 MB).
#[test]
fn a_memory_limit_ends_a_command_with_one_line_never_a_wrong_answer() {
    let folder = tempfile::tempdir().unwrap();
    let table = folder.path().join("sin4M.npy");
    let (code, text) = common::run_poslab(&[
        "table",
        "sinusoidal",
        "--seq",
        "8192",
        "--dim",
        "512",
        "-o",
        table.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{text}");
    for limit in [150_000_000, 200_000_000, 300_000_000, 400_000_000] {
        let (code, stdout, stderr) = run_limited(&["identify", table.to_str().unwrap()], limit);
        match code {
            Some(0) => assert!(stdout.starts_with("identified: sinusoidal"), "{stdout}"),
            Some(2) => {
                assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
                assert!(stdout.is_empty(), "no answer printed: {stdout}");
            }
            other => panic!("{limit}: {other:?}: {stdout}{stderr}"),
        }
        assert!(!stdout.contains("no match"), "{limit}: {stdout}");
    }
    // A figure larger than the memory left: one line, no file, nothing left behind.
    let png = folder.path().join("big.png");
    let (code, _, stderr) = run_limited(
        &[
            "figure",
            "sinusoidal",
            "--seq",
            "4096",
            "--dim",
            "512",
            "--width",
            "8000",
            "--height",
            "8000",
            "-o",
            png.to_str().unwrap(),
        ],
        600_000_000,
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("out of memory") || stderr.contains("memory"),
        "{stderr}"
    );
    let names: Vec<_> = std::fs::read_dir(folder.path()).unwrap().collect();
    assert_eq!(names.len(), 1, "only the table: nothing left behind");
}

/// Messages that named the wrong thing (issue 32, group 8): each now names what was wrong and
/// what is allowed, in one line, before any work, leaving no file.
#[test]
fn messages_name_what_was_wrong() {
    let folder = tempfile::tempdir().unwrap();
    let at = |name: &str| folder.path().join(name).to_str().unwrap().to_owned();
    let models = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/models");
    let llama31 = format!("{models}/llama-3.1-8b.json");
    let table = at("t.npy");
    let (code, text) = common::run_poslab(&[
        "table",
        "sinusoidal",
        "--seq",
        "8",
        "--dim",
        "8",
        "-o",
        &table,
    ]);
    assert_eq!(code, 0, "{text}");
    // [2, 4] float64 frequencies of 1e308: the angles overflow even in f64.
    let huge = folder.path().join("huge.npy");
    common::write_npy_f64(&huge, &ndarray::Array2::from_elem((2, 4), 1e308));
    let long = format!("{}x", "1,".repeat(50_000));
    let (f_npy, r_npy, m_npy) = (at("f.npy"), at("r.npy"), at("m.npy"));
    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
        // The check figure's options as typed: --as, not its id "expected".
        (
            vec![
                "figure", "check", "--file", &table, "--seq", "4", "-o", "c.svg",
            ],
            2,
            "its options are --file --tensor --as --atol --rtol",
        ),
        // A number list holding nan is not a file name.
        (
            vec![
                "table",
                "rope-cos",
                "--seq",
                "8",
                "--dim",
                "8",
                "--scaling",
                "longrope",
                "--long-factor",
                "nan,1",
                "--short-factor",
                "1,1",
                "-o",
                "a.npy",
            ],
            2,
            "\"nan\" is not a finite number",
        ),
        // A 100,000-character value is not echoed whole.
        (
            vec![
                "table",
                "rope-cos",
                "--seq",
                "8",
                "--dim",
                "8",
                "--scaling",
                "longrope",
                "--long-factor",
                &long,
                "--short-factor",
                "1,1",
                "-o",
                "a.npy",
            ],
            2,
            "(100001 characters)",
        ),
        // Llama 3.1's config sets llama3 scaling, which takes --factor.
        (
            vec![
                "table", "rope-cos", "--config", &llama31, "--factor", "4", "--seq", "8", "-o",
                &f_npy,
            ],
            0,
            "",
        ),
        // A slice bound past 64 bits is the end of the axis, as in Python.
        (
            vec![
                "check",
                &table,
                "--as",
                "sinusoidal",
                "--seq",
                "8",
                "--dim",
                "8",
                "--rows",
                "0:99999999999999999999",
            ],
            0,
            "",
        ),
        // A name ending in a separator is refused before any work.
        (
            vec![
                "table",
                "sinusoidal",
                "--seq",
                "8",
                "--dim",
                "8",
                "-o",
                "x.npy/",
            ],
            2,
            "ends in a separator",
        ),
        // The source table of a resample is --from-grid's to reduce.
        (
            vec![
                "table",
                "sincos-2d-resample",
                "--from-grid",
                "65536x65536",
                "--grid-h",
                "2",
                "--grid-w",
                "2",
                "--dim",
                "8",
                "-o",
                &r_npy,
            ],
            2,
            "reduce --from-grid or --dim",
        ),
        // On the CPU engine, "try --backend cpu" is no advice.
        (
            vec![
                "table",
                "rope-2d-mixed",
                "--freqs",
                huge.to_str().unwrap(),
                "--grid-h",
                "2",
                "--grid-w",
                "2",
                "--backend",
                "cpu",
                "--dtype",
                "f64",
                "-o",
                &m_npy,
            ],
            2,
            "even in f64",
        ),
    ];
    for (args, want, says) in cases {
        let (code, text) = common::run_poslab(&args);
        assert_eq!(code, want, "{args:?}: {text}");
        if want == 2 {
            assert!(text.contains(says), "{args:?}: {text}");
            assert_eq!(text.trim_end().lines().count(), 1, "{text}");
            assert!(text.len() < 400, "{} bytes", text.len());
        }
    }
    for name in ["r.npy", "m.npy", "a.npy"] {
        assert!(!folder.path().join(name).exists(), "{name}");
    }
}

/// Options that were accepted and changed nothing (the output byte for byte the same without
/// them) are refused, naming where they apply.
#[test]
fn options_with_no_effect_are_refused() {
    let folder = tempfile::tempdir().unwrap();
    let out = folder.path().join("x.svg");
    let npy = folder.path().join("x.npy");
    let (out, npy) = (out.to_str().unwrap(), npy.to_str().unwrap());
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec![
                "figure",
                "patches",
                "--left",
                "euclidean",
                "--right",
                "manhattan",
                "--base",
                "100",
                "-o",
                out,
            ],
            "it applies to sin-cos",
        ),
        (
            vec![
                "figure",
                "patches",
                "--left",
                "euclidean",
                "--right",
                "sin-cos",
                "--seed",
                "3",
                "-o",
                out,
            ],
            "it applies to mixed-rope",
        ),
        (
            vec![
                "figure",
                "patches",
                "--left",
                "euclidean",
                "--right",
                "manhattan",
                "--dim",
                "64",
                "-o",
                out,
            ],
            "--dim changes nothing",
        ),
        (
            vec!["figure", "corkscrew", "--reduce", "max", "-o", out],
            "no cells to colour",
        ),
        (
            vec![
                "figure",
                "tour",
                "--step",
                "1",
                "--colormap",
                "magma",
                "-o",
                out,
            ],
            "no cells to colour",
        ),
        (
            vec![
                "table",
                "rope-inv-freq",
                "--dim",
                "8",
                "--seq",
                "100",
                "-o",
                npy,
            ],
            "only dynamic and longrope",
        ),
        (
            vec!["figure", "context", "--set", "none.factor=2", "-o", out],
            "none reads no parameter",
        ),
        (
            vec![
                "figure",
                "context",
                "--set",
                "yarn.low_freq_factor=2",
                "-o",
                out,
            ],
            "yarn does not read low_freq_factor",
        ),
        (
            vec![
                "figure",
                "context",
                "--set",
                "linear.beta_fast=5",
                "-o",
                out,
            ],
            "linear does not read beta_fast",
        ),
        (
            vec![
                "figure",
                "context",
                "--methods",
                "none,linear",
                "--set",
                "yarn.factor=2",
                "-o",
                out,
            ],
            "neither in --methods nor the --map",
        ),
    ];
    for (args, says) in cases {
        let (code, text) = common::run_poslab(&args);
        assert_eq!(code, 2, "{args:?}: {text}");
        assert!(text.contains(says), "{args:?}: {text}");
    }
    // Where they do apply, they are taken.
    for args in [
        vec![
            "figure",
            "patches",
            "--left",
            "mixed-rope",
            "--right",
            "sin-cos",
            "--dim",
            "64",
            "--seed",
            "2",
            "--base",
            "100",
            "-o",
            out,
        ],
        vec![
            "figure",
            "tour",
            "--step",
            "9",
            "--colormap",
            "magma",
            "-o",
            out,
        ],
        vec![
            "table",
            "rope-inv-freq",
            "--dim",
            "8",
            "--seq",
            "100",
            "--scaling",
            "dynamic",
            "--factor",
            "2",
            "--max-position-embeddings",
            "64",
            "-o",
            npy,
        ],
    ] {
        let (code, text) = common::run_poslab(&args);
        assert_eq!(code, 0, "{args:?}: {text}");
    }
}

/// A table written to a file streams, block by block: it is admitted by the memory its blocks
/// take, not the whole table's (a [32768, 1024] table "needed 512 MiB" and was refused under a
/// 450 MB limit although it streams in a few MiB). The disk space check still bounds it.
#[test]
fn a_streamed_table_is_admitted_by_the_memory_its_blocks_take() {
    let folder = tempfile::tempdir().unwrap();
    let npy = folder.path().join("big.npy");
    let (code, _, stderr) = run_limited(
        &[
            "table",
            "sinusoidal",
            "--seq",
            "32768",
            "--dim",
            "1024",
            "-o",
            npy.to_str().unwrap(),
        ],
        450_000_000,
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        std::fs::metadata(&npy).unwrap().len(),
        128 + 32768 * 1024 * 4
    );
}

/// A short argument cannot start hours of work unawares: work estimated beyond ten minutes is
/// refused up front with the estimate, before any file is made, unless --yes; a table of
/// ordinary size is neither refused nor slowed, and no progress bar is written where stderr is
/// not a terminal.
#[test]
fn hours_of_work_are_refused_up_front_unless_asked_for() {
    let folder = tempfile::tempdir().unwrap();
    let out = folder.path().join("dd.npy");
    let started = std::time::Instant::now();
    let (code, text) = common::run_poslab(&[
        "table",
        "dot-decay",
        "--seq",
        "1000000",
        "--dim",
        "1048576",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("would take about") && text.contains(" h ") && text.contains("--yes"),
        "{text}"
    );
    assert_eq!(text.trim_end().lines().count(), 1, "{text}");
    assert!(
        started.elapsed().as_secs() < 60,
        "the estimate itself is quick"
    );
    assert!(std::fs::read_dir(folder.path()).unwrap().next().is_none());
    // Ordinary work: written, silently (stderr is a pipe here).
    let (code, text) = common::run_poslab(&[
        "table",
        "sinusoidal",
        "--seq",
        "4096",
        "--dim",
        "256",
        "--yes",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!((code, text.as_str()), (0, ""));
}

/// `poslab bench --config` reads the model's config as `poslab table` does (it was ignored:
/// "--heads is required" for BLOOM).
#[test]
fn bench_reads_a_models_config() {
    let config = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/models/bloom-560m.json");
    let (code, text) = common::run_poslab(&[
        "bench",
        "alibi",
        "--config",
        config,
        "--size",
        "seq=16",
        "--repeats",
        "1",
        "--backend",
        "cpu",
    ]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("[16, 16, 16]"),
        "BLOOM-560m's 16 heads: {text}"
    );
}

/// A file of 100,000 tensors gets a message of a line, not of 789 KB: ten names, then how many
/// more.
#[test]
fn a_file_of_many_tensors_is_named_in_a_short_line() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("many.safetensors");
    let values = [0f32; 4];
    let names: Vec<String> = (0..100_000).map(|k| format!("t{k:06}")).collect();
    let tensors: Vec<(&str, &[f32], Vec<usize>)> = names
        .iter()
        .map(|name| (name.as_str(), &values[..], vec![2, 2]))
        .collect();
    common::safetensors_file(&path, &tensors);
    let (code, text) = common::run_poslab(&["identify", path.to_str().unwrap()]);
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("holds 100000 tensors") && text.contains("and 99990 more"),
        "{text}"
    );
    assert!(text.len() < 300, "{} bytes", text.len());
}

/// The readers stream: a table too large to check whole under a memory limit is refused
/// before its values are read, in one line naming `--rows` and `--cols`; its first rows are
/// then checked and identified, read from the file without the rest.
#[test]
fn part_of_a_table_too_large_for_memory_is_checked_by_its_rows() {
    let folder = tempfile::tempdir().unwrap();
    let table = folder.path().join("sin8M.npy");
    let path = table.to_str().unwrap();
    let (code, text) = common::run_poslab(&[
        "table",
        "sinusoidal",
        "--seq",
        "8192",
        "--dim",
        "1024",
        "--dtype",
        "f32",
        "-o",
        path,
    ]);
    assert_eq!(code, 0, "{text}");
    let limit = 300_000_000;
    let whole = ["--as", "sinusoidal", "--seq", "8192", "--dim", "1024"];
    let (code, stdout, stderr) = run_limited(&[&["check", path][..], &whole].concat(), limit);
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("8388608 values ([8192, 1024]) needs about 320.0 MiB")
            && stderr.contains("(--rows, --cols)"),
        "{stderr}"
    );
    // Under 150 MB, about 58 MiB is left: less than the whole table's 64 MiB of f64 values,
    // so its rows must be read without the rest.
    let limit = 150_000_000;
    let first = ["--as", "sinusoidal", "--seq", "512", "--dim", "1024"];
    let (code, stdout, stderr) = run_limited(
        &[&["check", path, "--rows", "0:512"][..], &first].concat(),
        limit,
    );
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("verdict: MATCH"), "{stdout}");
    let (code, stdout, stderr) = run_limited(&["identify", path, "--rows", ":256"], limit);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(
        stdout.starts_with("identified: sinusoidal") && stdout.contains("positions 0..255"),
        "{stdout}"
    );
    // Rows from the middle of the file are the table of the positions they hold.
    let middle = [
        "--as",
        "sinusoidal",
        "--seq",
        "256",
        "--dim",
        "1024",
        "--start",
        "100",
    ];
    let (code, stdout, stderr) = run_limited(
        &[&["check", path, "--rows", "100:356"][..], &middle].concat(),
        limit,
    );
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(stdout.contains("verdict: MATCH"), "{stdout}");
}

/// More pairs than a figure draws are thinned, and the figure says so (it drew every
/// 8,192nd pair of `--pairs all` at dim 1M without a word).
#[test]
fn a_thinned_pair_list_is_said() {
    let folder = tempfile::tempdir().unwrap();
    let svg = folder.path().join("c.svg");
    let run = |pairs: &str| {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_poslab"))
            .args([
                "figure",
                "corkscrew",
                "--dim",
                "512",
                "--pairs",
                pairs,
                "-o",
            ])
            .arg(&svg)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0));
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let said = run("0-100");
    assert!(
        said.contains("selects 101 pairs")
            && said.contains("draws 51 of them, one in every 2 (0, 2, …, 100)"),
        "{said}"
    );
    assert_eq!(run("0-63"), "", "64 pairs are all drawn, nothing to say");
}

/// A figure is estimated before any of its work, as a table is. The one figure that was
/// estimated at hours, a 64 x 64 grid of mixed RoPE at `--dim 1048576` (about 12 h, refused),
/// now sums each of the grid's 16,129 offsets once instead of each of its 16.7 million pairs
/// of patches: 93 s at that size (release build, 2 cores), so it is drawn unasked. Here at
/// `--dim 16384`, which pairs of patches put at about 11 minutes (refused then): drawn, with
/// no refusal. Figures still pass through the estimate (a table's refusal is
/// `hours_of_work_are_refused_up_front_unless_asked_for`).
#[test]
fn a_grid_of_mixed_rope_once_estimated_at_hours_is_drawn_by_offsets() {
    let folder = tempfile::tempdir().unwrap();
    let out = folder.path().join("f.svg");
    let out = out.to_str().unwrap();
    let (code, text) = common::run_poslab(&[
        "figure",
        "patches",
        "--grid-h",
        "64",
        "--grid-w",
        "64",
        "--left",
        "mixed-rope",
        "--right",
        "sin-cos",
        "--dim",
        "16384",
        "-o",
        out,
    ]);
    assert_eq!((code, text.as_str()), (0, ""), "the grid of mixed RoPE");
    // Ordinary figures: drawn, silently (stderr is a pipe here), --yes and --quiet allowed.
    for args in [
        &["figure", "patches", "-o", out][..],
        &["figure", "sinusoidal", "--yes", "--quiet", "-o", out],
    ] {
        let (code, text) = common::run_poslab(args);
        assert_eq!((code, text.as_str()), (0, ""), "{args:?}");
    }
}
