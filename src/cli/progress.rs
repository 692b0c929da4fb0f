//! Long command-line work made visible and asked for: a progress bar with an estimate of the
//! time left on a terminal (stderr, only when it is a terminal; `--quiet` silences it), and
//! work estimated beyond [`MAX_UNASKED_SECONDS`] refused up front, with the estimate, unless
//! `--yes` is given, so that a short argument (`--dim 1048576`) cannot start hours of work
//! unawares.

use std::io::IsTerminal;

use crate::engine::blocks::CpuBlockSource;
use crate::engine::{TableSpec, Window};
use crate::numbers::duration_text;
use crate::table_args::CliError;

/// Work estimated beyond this is done only with `--yes`.
pub const MAX_UNASKED_SECONDS: f64 = 600.0;

/// Refuses, before its set-up, a table whose set-up alone (a similarity table's offsets) would
/// take longer than the bound, even at a rate no core reaches.
pub fn check_setup(spec: &TableSpec, yes: bool) -> Result<(), CliError> {
    refuse_beyond(spec, crate::engine::estimate::setup_seconds(spec), yes)
}

/// The time `source`'s whole table would take here, from a few samples timed on it
/// (single rows or parts of one, spread over the table), parallel across rows as the
/// blocks are.
pub fn estimate_seconds(spec: &TableSpec, source: &CpuBlockSource<'_>) -> f64 {
    let window = Window::all(spec.matrix_shape());
    crate::engine::estimate::estimated_seconds(
        &window,
        &|part| {
            let _ = source.block(part);
        },
        MAX_UNASKED_SECONDS,
    )
}

/// Refuses work estimated beyond [`MAX_UNASKED_SECONDS`] unless `yes`.
pub fn refuse_beyond(spec: &TableSpec, seconds: f64, yes: bool) -> Result<(), CliError> {
    if yes || seconds <= MAX_UNASKED_SECONDS {
        return Ok(());
    }
    Err(CliError::usage(format!(
        "this {} table would take about {} here: give --yes to compute it anyway, or reduce {}",
        spec.kind_name(),
        duration_text(seconds),
        spec.work_options()
    )))
}

/// A bar on stderr of the values written, with the time left; nothing when stderr is not a
/// terminal or `quiet`.
pub struct Progress(Option<indicatif::ProgressBar>);

impl Progress {
    pub fn new(total_values: u64, quiet: bool) -> Self {
        if quiet || !std::io::stderr().is_terminal() {
            return Self(None);
        }
        let bar = indicatif::ProgressBar::new(total_values);
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "{spinner} writing [{bar:32}] {percent:>3}% · {elapsed} so far, about {eta} left",
        ) {
            bar.set_style(style.progress_chars("=> "));
        }
        Self(Some(bar))
    }

    pub fn advance(&self, values: u64) {
        if let Some(bar) = &self.0 {
            bar.inc(values);
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}

/// A spinner on stderr while work whose length cannot be foreseen is done (identify's search,
/// the readings check tries), with the time so far; nothing when stderr is not a terminal or
/// `quiet`. Cleared when dropped.
pub struct Working(Option<indicatif::ProgressBar>);

impl Working {
    pub fn new(message: String, quiet: bool) -> Self {
        if quiet || !std::io::stderr().is_terminal() {
            return Self(None);
        }
        let spinner = indicatif::ProgressBar::new_spinner();
        if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} {msg} · {elapsed}") {
            spinner.set_style(style);
        }
        spinner.set_message(message);
        spinner.enable_steady_tick(std::time::Duration::from_millis(120));
        Self(Some(spinner))
    }
}

impl Drop for Working {
    fn drop(&mut self) {
        if let Some(spinner) = &self.0 {
            spinner.finish_and_clear();
        }
    }
}
