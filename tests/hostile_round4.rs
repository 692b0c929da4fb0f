//! Hostile inputs, round four (issue 51): what the command line meets with one clear line or
//! a true answer: full devices, targets that are not files, and the rest of the probes.

mod common;

use std::process::{Command, Stdio};

fn poslab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_poslab"))
}

/// `args` run with stdout (`out`) or stderr to `/dev/full`: the exit status and stderr.
fn to_full_device(args: &[&str], stdout_full: bool) -> (i32, String) {
    let full = || std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
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
        "table", "sinusoidal", "--seq", "16", "--dim", "8", "-o", table_str,
    ]);
    assert_eq!(code, 0, "{text}");
    let commands: [&[&str]; 6] = [
        &["config", "assets/models/llama-2-7b.json"],
        &["identify", table_str],
        &["check", table_str, "--as", "sinusoidal", "--seq", "16", "--dim", "8"],
        &["bench", "sinusoidal", "--seq", "16", "--dim", "8", "--repeats", "1"],
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
        &["table", "sinusoidal", "--seq", "4", "--dim", "4", "-o", table_str, "--verbose"],
        false,
    );
    assert_eq!(code, 0);
    let (code, _) = to_full_device(&["table", "sinusoidal", "--seq", "0", "-o", table_str], false);
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
    assert!(std::fs::symlink_metadata(at("pipe.npy")).unwrap().file_type().is_fifo());
    for link in ["device.npy", "device.png", "a.npy", "b.npy"] {
        assert!(std::fs::symlink_metadata(at(link)).unwrap().file_type().is_symlink());
    }
    assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
}
