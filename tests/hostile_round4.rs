//! Hostile inputs, round four (issue 51): what the command line meets with one clear line or
//! a true answer: full devices, targets that are not files, and the rest of the probes.

mod common;

use std::process::{Command, Stdio};

fn poslab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_poslab"))
}

/// `args` run with stdout (`out`) or stderr to `/dev/full`: the exit status and stderr.
fn to_full_device(args: &[&str], stdout_full: bool) -> (i32, String) {
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    let mut command = poslab();
    command.args(args).stdin(Stdio::null());
    if stdout_full {
        command.stdout(full()).stderr(Stdio::piped());
    } else {
        command.stdout(Stdio::null()).stderr(full());
    }
    let output = command.output().unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A result that cannot be written (stdout on a full device) is an error, said in one line,
/// exit status 1: never a panic, never a silent 0. Notes that cannot be written are let go.
#[test]
fn output_to_a_full_device_is_one_line_and_exit_1() {
    let folder = tempfile::tempdir().unwrap();
    let table = folder.path().join("t.npy");
    let table_str = table.to_str().unwrap();
    let (code, text) = common::run_poslab(&[
        "table",
        "sinusoidal",
        "--seq",
        "16",
        "--dim",
        "8",
        "-o",
        table_str,
    ]);
    assert_eq!(code, 0, "{text}");
    let commands: [&[&str]; 6] = [
        &["config", "assets/models/llama-2-7b.json"],
        &["identify", table_str],
        &[
            "check",
            table_str,
            "--as",
            "sinusoidal",
            "--seq",
            "16",
            "--dim",
            "8",
        ],
        &[
            "bench",
            "sinusoidal",
            "--seq",
            "16",
            "--dim",
            "8",
            "--repeats",
            "1",
        ],
        &["help"],
        &["--version"],
    ];
    for args in commands {
        let (code, stderr) = to_full_device(args, true);
        assert_eq!(code, 1, "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(
            stderr.trim(),
            "error: could not write the output: No space left on device (os error 28)",
            "{args:?}"
        );
    }
    // stderr full: a table is still written (its notes are extra), and a refusal still exits
    // 2, with no panic.
    let (code, _) = to_full_device(
        &[
            "table",
            "sinusoidal",
            "--seq",
            "4",
            "--dim",
            "4",
            "-o",
            table_str,
            "--verbose",
        ],
        false,
    );
    assert_eq!(code, 0);
    let (code, _) = to_full_device(
        &["table", "sinusoidal", "--seq", "0", "-o", table_str],
        false,
    );
    assert_eq!(code, 2);
}

/// `-o` onto a device, a FIFO, a link to a device or a loop of links is refused before the
/// work, exit 2, naming what is there; the node or link is left as it was.
#[test]
fn outputs_that_are_not_regular_files_are_refused() {
    use std::os::unix::fs::FileTypeExt;
    let folder = tempfile::tempdir().unwrap();
    let at = |name: &str| folder.path().join(name);
    let fifo = std::ffi::CString::new(at("pipe.npy").to_str().unwrap()).unwrap();
    // SAFETY: a plain system call with a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    std::os::unix::fs::symlink("/dev/null", at("device.npy")).unwrap();
    std::os::unix::fs::symlink("/dev/null", at("device.png")).unwrap();
    std::os::unix::fs::symlink(at("b.npy"), at("a.npy")).unwrap();
    std::os::unix::fs::symlink(at("a.npy"), at("b.npy")).unwrap();
    let cases = [
        ("pipe.npy", "table", "a FIFO"),
        ("device.npy", "table", "a device"),
        ("device.png", "figure", "a device"),
        ("a.npy", "table", "a loop of symbolic links"),
    ];
    for (name, command, what) in cases {
        let target = at(name);
        let (code, text) = common::run_poslab(&[
            command,
            "sinusoidal",
            "--seq",
            "4",
            "--dim",
            "4",
            "-o",
            target.to_str().unwrap(),
        ]);
        assert_eq!(code, 2, "{name}: {text}");
        assert!(text.contains(&format!("it is {what}")), "{name}: {text}");
        assert_eq!(text.trim().lines().count(), 1, "{text}");
    }
    assert!(
        std::fs::symlink_metadata(at("pipe.npy"))
            .unwrap()
            .file_type()
            .is_fifo()
    );
    for link in ["device.npy", "device.png", "a.npy", "b.npy"] {
        assert!(
            std::fs::symlink_metadata(at(link))
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }
    assert!(
        std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device()
    );
}

/// The first line of `poslab identify` with `args`.
fn identified(args: &[&str]) -> String {
    let mut all = vec!["identify"];
    all.extend_from_slice(args);
    let (code, text) = common::run_poslab(&all);
    assert!(code == 0 || code == 1, "{text}");
    text.lines().next().unwrap_or_default().to_owned()
}

/// Tables poslab writes at given positions are named by identify at those positions: uneven
/// gaps, a gap of 2, a start past 0, half-integer positions, a split t2t table, and a scale.
#[test]
fn identify_names_tables_written_at_the_positions_it_is_given() {
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("p.npy");
    let file = file.to_str().unwrap();
    let cases: [&[&str]; 6] = [
        &["--positions", "0,1,2,3,4,5,6,8"],
        &["--positions", "0,2,4,6,8,10,12,14"],
        &["--positions", "3..10"],
        &["--positions", "0.5,1.5,2.5,3.5,4.5,5.5,6.5,7.5"],
        &[
            "--positions",
            "0..31",
            "--layout",
            "split",
            "--spacing",
            "t2t",
        ],
        &["--positions", "0..7", "--position-scale", "1000"],
    ];
    for case in cases {
        let mut args = vec!["table", "sinusoidal", "--dim", "16", "-o", file];
        args.extend_from_slice(case);
        let (code, text) = common::run_poslab(&args);
        assert_eq!(code, 0, "{text}");
        let mut given = vec![file];
        given.extend(
            case.iter()
                .take(if case.len() == 4 && case[2] == "--position-scale" {
                    4
                } else {
                    2
                }),
        );
        let first = identified(&given);
        let layout = if case.contains(&"split") {
            "sinusoidal, split layout, sin first, tensor2tensor spacing, base 10000, d = 16"
        } else {
            "sinusoidal, interleaved layout, sin first, Vaswani spacing, base 10000, d = 16"
        };
        assert!(
            first.starts_with(&format!("identified: {layout}")),
            "{case:?}: {first}"
        );
    }
}

/// A runner-up is as true as the answer: a half-layout cos cache is no GPT-J's (whose code
/// interleaves), and an interleaved one may be.
#[test]
fn a_runner_up_names_only_models_of_the_caches_pairing() {
    let folder = tempfile::tempdir().unwrap();
    for layout in ["half", "interleaved"] {
        let file = folder.path().join(format!("{layout}.npy"));
        let file = file.to_str().unwrap();
        let (code, text) = common::run_poslab(&[
            "table", "rope-cos", "--layout", layout, "--dim", "64", "--seq", "128", "-o", file,
        ]);
        assert_eq!(code, 0, "{text}");
        let (code, text) = common::run_poslab(&["identify", file]);
        assert_eq!(code, 0, "{text}");
        assert_eq!(
            text.contains("gpt-j"),
            layout == "interleaved",
            "{layout}: {text}"
        );
    }
}

/// `poslab config` of a config that `poslab table --config` refuses is refused too (exit 2),
/// in the same words, after its description; but for a factor below 1, which transformers
/// only warns of: there `poslab config` warns (exit 0, 1 under --strict) and the table refuses.
/// A Llama 3 scaling without its original context takes the context, as transformers 5 does,
/// with a warning.
#[test]
fn config_refuses_what_table_config_refuses_in_the_same_words() {
    let folder = tempfile::tempdir().unwrap();
    let model = std::fs::read_to_string("assets/models/llama-3.1-8b.json").unwrap();
    let mut config: serde_json::Value = serde_json::from_str(&model).unwrap();
    // (field, value, what table says, whether config only warns)
    let cases: [(&str, serde_json::Value, &str, bool); 4] = [
        (
            "factor",
            serde_json::json!(0.5),
            "--factor 0.5 is not allowed",
            true,
        ),
        (
            "factor",
            serde_json::json!(-1),
            "--factor -1 is not allowed",
            true,
        ),
        (
            "low_freq_factor",
            serde_json::json!(8),
            "--low-freq-factor 8 is not allowed",
            false,
        ),
        (
            "original_max_position_embeddings",
            serde_json::Value::Null,
            "",
            true,
        ),
    ];
    for (key, value, words, warns) in cases {
        let mut broken = config.clone();
        if value.is_null() {
            broken["rope_scaling"].as_object_mut().unwrap().remove(key);
        } else {
            broken["rope_scaling"][key] = value;
        }
        let path = folder.path().join("c.json");
        std::fs::write(&path, broken.to_string()).unwrap();
        let path = path.to_str().unwrap();
        let (code, said) = common::run_poslab(&["config", path]);
        if warns {
            assert_eq!(code, 0, "{key}: {said}");
            assert!(
                said.contains(&format!("warning: rope_scaling.{key}")),
                "{key}: {said}"
            );
            assert!(said.contains(words), "{key}: {said}");
            let (code, said) = common::run_poslab(&["config", path, "--strict"]);
            assert_eq!(code, 1, "{key}: {said}");
        } else {
            assert_eq!(code, 2, "{key}: {said}");
            assert!(said.contains(words), "{key}: {said}");
        }
        let out = folder.path().join("t.npy");
        let (code, table_said) = common::run_poslab(&[
            "table",
            "rope-angles",
            "--config",
            path,
            "--seq",
            "8",
            "-o",
            out.to_str().unwrap(),
        ]);
        if words.is_empty() {
            assert_eq!(code, 0, "{key}: {table_said}");
            continue;
        }
        assert_eq!(code, 2, "{key}: {table_said}");
        assert!(table_said.contains(words), "{key}: {table_said}");
        assert!(!out.exists());
    }
    config["max_position_embeddings"] = serde_json::json!(0);
    let path = folder.path().join("zero.json");
    std::fs::write(&path, config.to_string()).unwrap();
    let (code, said) = common::run_poslab(&["config", path.to_str().unwrap()]);
    assert_eq!(code, 2, "{said}");
}

/// A `[H, W, D]` file whose own grid contradicts `--grid-h/--grid-w` (the 2 x 8 table saved as
/// `[8, 2, D]`) is refused, naming the file's grid; the same file as `[2, 8, D]` matches.
#[test]
fn a_grid_file_of_another_grid_is_refused() {
    let folder = tempfile::tempdir().unwrap();
    for (kind, dim, columns) in [("sincos-2d", "16", 16), ("rope-2d-axial", "16", 8)] {
        let flat = folder.path().join(format!("{kind}.csv"));
        let (code, text) = common::run_poslab(&[
            "table",
            kind,
            "--grid-h",
            "2",
            "--grid-w",
            "8",
            "--dim",
            dim,
            "-o",
            flat.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{text}");
        let values: Vec<f64> = std::fs::read_to_string(&flat)
            .unwrap()
            .split([',', '\n'])
            .filter(|v| !v.is_empty())
            .map(|v| v.parse().unwrap())
            .collect();
        for (shape, expected) in [([8, 2, columns], 2), ([2, 8, columns], 0)] {
            let grid = ndarray::Array3::from_shape_vec(shape, values.clone()).unwrap();
            let path = folder
                .path()
                .join(format!("{kind}_{}x{}.npy", shape[0], shape[1]));
            ndarray_npy::write_npy(&path, &grid.mapv(|v| v as f32)).unwrap();
            let (code, text) = common::run_poslab(&[
                "check",
                path.to_str().unwrap(),
                "--as",
                kind,
                "--grid-h",
                "2",
                "--grid-w",
                "8",
                "--dim",
                dim,
            ]);
            assert_eq!(code, expected, "{kind} {shape:?}: {text}");
            if expected == 2 {
                assert!(text.contains("is a grid of 8 x 2 patches"), "{text}");
            }
        }
    }
}

/// The precision lab refuses positions cast to float16 that round to infinity (from 65520 on;
/// the table would be NaN) instead of writing NaN with exit 0; 65519, which rounds to 65504,
/// is fine. Computing "in" float16 casts only the cosines and products, never the positions:
/// it is not refused there, and its tables are finite.
#[test]
fn float16_positions_past_its_range_are_refused() {
    let folder = tempfile::tempdir().unwrap();
    let out = folder.path().join("e.csv");
    let out = out.to_str().unwrap();
    let run = |kind: &str, first: &str, at: &str, types: &[&str]| {
        let mut args = vec![
            "table", kind, "--seq", "5", "--dim", "8", first, at, "-o", out,
        ];
        args.extend_from_slice(types);
        common::run_poslab(&args)
    };
    let finite = || {
        let written = std::fs::read_to_string(out).unwrap();
        !written.contains("NaN") && !written.contains("inf")
    };
    let (code, text) = run(
        "rope-cache-error",
        "--start",
        "65516",
        &["--positions-in", "f16"],
    );
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("float16's largest finite value is 65504"),
        "{text}"
    );
    assert!(text.contains("keep the last position at 65519"), "{text}");
    let (code, text) = run(
        "rope-cache-error",
        "--start",
        "65515",
        &["--positions-in", "f16"],
    );
    assert_eq!(code, 0, "{text}");
    assert!(finite());
    for kind in ["rope-cache-error", "rope-score-drift"] {
        let first = if kind == "rope-cache-error" {
            "--start"
        } else {
            "--offset"
        };
        let (code, text) = run(kind, first, "70000", &["--arith", "f16"]);
        assert_eq!(code, 0, "{kind}: {text}");
        assert!(finite(), "{kind}");
    }
}

/// identify of 40,000 values (one very long CSV line, as ALiBi slopes or a constant vector)
/// answers instead of running for minutes: LongRoPE's pair-by-pair reading, whose time grows
/// with the square of the pairs, is not tried beyond real models' widths. Not a timing: a
/// guard that kills a search still running after two minutes.
#[test]
fn identify_of_forty_thousand_values_answers() {
    let folder = tempfile::tempdir().unwrap();
    let line: Vec<String> = (0..40_000).map(|_| "0.5".to_owned()).collect();
    let file = folder.path().join("long.csv");
    std::fs::write(&file, line.join(",") + "\n").unwrap();
    let mut child = poslab()
        .args(["identify", file.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > std::time::Duration::from_secs(120) {
            let _ = child.kill();
            panic!("identify of 40,000 values still ran after two minutes");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(1), "no match, said");
}

/// Without a display the app says so in one plain line (no winit message, no source path of
/// the machine it was built on), exit 1; a table to check that is not there is refused first,
/// exit 2.
#[test]
fn the_app_without_a_display_says_so_plainly() {
    let run = |args: &[&str]| {
        let output = poslab()
            .args(args)
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .env_remove("WAYLAND_SOCKET")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let (code, text) = run(&["app"]);
    assert_eq!(code, Some(1), "{text}");
    assert_eq!(text.trim().lines().count(), 1, "{text}");
    assert!(text.contains("there is no display"), "{text}");
    assert!(!text.contains(".rs:"), "{text}");
    let (code, text) = run(&["app", "--check", "/no/such/table.npy"]);
    assert_eq!(code, Some(2), "{text}");
    assert!(
        text.contains("--check /no/such/table.npy: cannot be read"),
        "{text}"
    );
}

/// Options that would have no effect are refused, naming why: a base beside given
/// frequencies, a --dim the axes' widths contradict.
#[test]
fn options_without_effect_are_refused() {
    let folder = tempfile::tempdir().unwrap();
    let out = folder.path().join("t.npy");
    let out = out.to_str().unwrap();
    let cases: [(&[&str], &str); 2] = [
        (
            &[
                "rope-angles",
                "--seq",
                "4",
                "--dim",
                "4",
                "--inv-freq",
                "1,0.1",
                "--base",
                "500",
            ],
            "--base 500 does not apply with --inv-freq",
        ),
        (
            &[
                "rope-axes",
                "--grid",
                "1,4,4",
                "--axes-dim",
                "4,4,4",
                "--dim",
                "16",
            ],
            "--dim 16 is not allowed with --axes-dim 4,4,4: the axes' widths make a RoPE of 12 dimensions",
        ),
    ];
    for (args, says) in cases {
        let mut all = vec!["table"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["-o", out]);
        let (code, text) = common::run_poslab(&all);
        assert_eq!(code, 2, "{args:?}: {text}");
        assert!(text.contains(says), "{args:?}: {text}");
    }
    let (code, text) = common::run_poslab(&[
        "table",
        "rope-axes",
        "--grid",
        "1,4,4",
        "--axes-dim",
        "4,4,4",
        "--dim",
        "12",
        "-o",
        out,
    ]);
    assert_eq!(code, 0, "{text}");
}

/// Messages that named the wrong thing: a whole head_dim written 128.0 is read, zero heads are
/// said as zero heads, "mrope" points to rope-axes, rope-cache-error takes a model's config,
/// and a layout slip of every column does not say "the others match".
#[test]
fn messages_name_what_is_wrong() {
    let folder = tempfile::tempdir().unwrap();
    let model = std::fs::read_to_string("assets/models/llama-3.1-8b.json").unwrap();
    let config: serde_json::Value = serde_json::from_str(&model).unwrap();
    let write = |name: &str, change: &dyn Fn(&mut serde_json::Value)| {
        let mut changed = config.clone();
        change(&mut changed);
        let path = folder.path().join(name);
        std::fs::write(&path, changed.to_string()).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let float_dim = write("f.json", &|c| c["head_dim"] = serde_json::json!(128.0));
    let (code, text) = common::run_poslab(&["config", &float_dim]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("head dim: 128"), "{text}");
    let no_heads = write("h.json", &|c| {
        c["num_attention_heads"] = serde_json::json!(0)
    });
    let (code, text) = common::run_poslab(&["config", &no_heads]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("\"num_attention_heads\": 0"), "{text}");
    let mrope =
        write(
            "m.json",
            &|c| {
                c["rope_scaling"] =
                    serde_json::json!({"type": "mrope", "mrope_section": [16, 24, 24]})
            },
        );
    // M-RoPE is read (transformers 5 reads "mrope" as the default RoPE split among axes), and
    // the rope-axes command for image tokens is named.
    let (code, text) = common::run_poslab(&["config", &mrope]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("rope-axes --mrope-section 16,24,24"),
        "{text}"
    );
    let out = folder.path().join("e.npy");
    let (code, text) = common::run_poslab(&[
        "table",
        "rope-cache-error",
        "--config",
        "assets/models/llama-3.1-8b.json",
        "--seq",
        "8",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{text}");
    // Cos first against sin first moves every column: none is left to "match".
    let cos_first = folder.path().join("c.npy");
    let (code, text) = common::run_poslab(&[
        "table",
        "sinusoidal",
        "--seq",
        "16",
        "--dim",
        "8",
        "--first",
        "cos",
        "-o",
        cos_first.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{text}");
    let (code, text) = common::run_poslab(&[
        "check",
        cos_first.to_str().unwrap(),
        "--as",
        "sinusoidal",
        "--seq",
        "16",
        "--dim",
        "8",
    ]);
    assert_eq!(code, 1, "{text}");
    let diagnosis = text
        .lines()
        .find(|l| l.starts_with("diagnosis:"))
        .unwrap_or_default();
    assert!(
        diagnosis.starts_with("diagnosis: every column (8 of 8) is wrong;"),
        "{text}"
    );
    assert!(!diagnosis.contains("the others match"), "{text}");
}

/// A `.safetensors` file cut short, in its header or its data, is said to be cut short, with
/// the sizes, not "invalid JSON" or "invalid header length".
#[test]
fn a_truncated_safetensors_file_is_said_to_be_cut_short() {
    let folder = tempfile::tempdir().unwrap();
    let whole = folder.path().join("whole.safetensors");
    let values: Vec<f32> = (0..64).map(|k| k as f32).collect();
    common::safetensors_file(&whole, &[("t", &values, vec![8, 8])]);
    let bytes = std::fs::read(&whole).unwrap();
    let header = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    for cut in [20, 8 + header - 5, 8 + header, bytes.len() - 1] {
        let path = folder.path().join(format!("cut{cut}.safetensors"));
        std::fs::write(&path, &bytes[..cut]).unwrap();
        let (code, text) = common::run_poslab(&["identify", path.to_str().unwrap()]);
        assert_eq!(code, 2, "{cut}: {text}");
        assert!(text.contains("it is cut short"), "{cut}: {text}");
    }
}

/// check names the file's own shape where the comparison drops its axes of length 1.
#[test]
fn check_names_the_files_own_shape() {
    let folder = tempfile::tempdir().unwrap();
    let three = folder.path().join("three.npy");
    ndarray_npy::write_npy(&three, &ndarray::Array3::<f32>::zeros((4, 1, 16))).unwrap();
    let (_, text) = common::run_poslab(&[
        "check",
        three.to_str().unwrap(),
        "--as",
        "sinusoidal",
        "--seq",
        "4",
        "--dim",
        "16",
    ]);
    assert!(
        text.contains("file shape [4, 1, 16] (compared without its axes of length 1)"),
        "{text}"
    );
    let scalar = folder.path().join("scalar.npy");
    ndarray_npy::write_npy(&scalar, &ndarray::arr0(0.00390625f32)).unwrap();
    let (code, text) = common::run_poslab(&[
        "check",
        scalar.to_str().unwrap(),
        "--as",
        "alibi-slopes",
        "--heads",
        "1",
    ]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("file shape [] (a single value, compared as [1])"),
        "{text}"
    );
}
