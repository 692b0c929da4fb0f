//! What commands print: results on stdout, notes on stderr. Neither may panic when its stream
//! cannot take the text (a full disk, `> /dev/full`, a closed terminal), as `println!` and
//! `eprintln!` do: a result that cannot be written is an error (exit status 1, said on stderr
//! where that still works), a note that cannot be written is let go.

use std::io::Write;

use super::CliError;

/// Writes `text` to stdout as it is, and flushes it: the command's result.
pub(crate) fn print(text: &str) -> Result<(), CliError> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(|error| CliError::runtime(format!("could not write the output: {error}")))
}

/// [`print`] with a newline after `text`.
pub(crate) fn print_line(text: &str) -> Result<(), CliError> {
    print(&format!("{text}\n"))
}

/// Writes `text` and a newline to stderr, if stderr takes it: a note, a warning, an error's
/// one line.
pub fn note(text: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = stderr
        .write_all(format!("{text}\n").as_bytes())
        .and_then(|()| stderr.flush());
}
