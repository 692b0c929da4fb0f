//! Long command-line work made visible and asked for: a progress bar with an estimate of the
//! time left on a terminal (stderr, only when it is a terminal; `--quiet` silences it), and
//! work estimated beyond [`MAX_UNASKED_SECONDS`] refused up front, with the estimate, unless
//! `--yes` is given, so that a short argument (`--dim 1048576`) cannot start hours of work
//! unawares.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use crate::engine::blocks::CpuBlockSource;
use crate::engine::{Strided, TableSpec, Window};
use crate::table_args::CliError;

/// Work estimated beyond this is done only with `--yes`.
pub const MAX_UNASKED_SECONDS: f64 = 600.0;

/// How long the estimate may time samples of the table.
const SAMPLING: Duration = Duration::from_millis(150);

/// The most values one timed sample holds.
const SAMPLE_VALUES: usize = 4096;

/// Cosine terms a core sums per second at most (a bound from above: the real rate is lower),
/// for the work done before the first value, which cannot be timed without doing it.
const TERMS_PER_SECOND: f64 = 2e9;

/// `seconds` as a person reads it: `46 s`, `12 min`, `5 h 12 min`, `3.2 days`.
pub fn duration_text(seconds: f64) -> String {
    if seconds < 90.0 {
        format!("{seconds:.0} s")
    } else if seconds < 5400.0 {
        format!("{:.0} min", seconds / 60.0)
    } else if seconds < 2.0 * 86_400.0 {
        let minutes = (seconds / 60.0).round() as u64;
        format!("{} h {} min", minutes / 60, minutes % 60)
    } else {
        format!("{:.1} days", seconds / 86_400.0)
    }
}

/// Refuses, before its set-up, a table whose set-up alone (a similarity table's offsets) would
/// take longer than the bound, even at a rate no core reaches.
pub fn check_setup(spec: &TableSpec, yes: bool) -> Result<(), CliError> {
    let seconds =
        spec.setup_terms() as f64 / TERMS_PER_SECOND / rayon::current_num_threads() as f64;
    refuse_beyond(spec, seconds, yes)
}

/// The time `source`'s whole table would take here, from a few samples timed on it
/// (single rows or parts of one, spread over the table), parallel across rows as the
/// blocks are.
pub fn estimate_seconds(spec: &TableSpec, source: &CpuBlockSource<'_>) -> f64 {
    let [heads, rows, cols] = spec.matrix_shape();
    let total = (heads * rows * cols) as f64;
    let started = Instant::now();
    let mut sampled = 0usize;
    let mut k = 0usize;
    while started.elapsed() < SAMPLING && (sampled as f64) < total {
        // Samples grow from one value, so that one costly value (a dot product over a
        // million pairs) is not four thousand of them before the clock is read.
        let width = cols.clamp(1, SAMPLE_VALUES.min(1 << (2 * k.min(6))));
        // Rows spread over the table: some kinds cost more at large positions.
        let row = (k * 7919) % rows.max(1);
        let head = k % heads.max(1);
        let window = Window {
            heads: Strided {
                start: head,
                end: head + 1,
                step: 1,
            },
            rows: Strided {
                start: row,
                end: row + 1,
                step: 1,
            },
            cols: Strided {
                start: 0,
                end: width,
                step: 1,
            },
        };
        let _ = source.block(&window);
        sampled += width;
        k += 1;
        // Far inside the bound after a couple of milliseconds: no need to time more (a
        // table written in a third of a second is not made slower by its estimate).
        let elapsed = started.elapsed();
        if elapsed > Duration::from_millis(2)
            && whole_time(elapsed, sampled, total, heads * rows) < MAX_UNASKED_SECONDS / 10.0
        {
            break;
        }
    }
    whole_time(started.elapsed(), sampled, total, heads * rows)
}

/// The time `total` values take at the rate `sampled` values took `elapsed`, across `rows`
/// computed in parallel (a table of one row is not).
fn whole_time(elapsed: Duration, sampled: usize, total: f64, rows: usize) -> f64 {
    let per_value = elapsed.as_secs_f64() / sampled.max(1) as f64;
    let threads = if rows > 1 {
        rayon::current_num_threads() as f64
    } else {
        1.0
    };
    per_value * total / threads
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
        spec.size_options()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_a_person_says_them() {
        assert_eq!(duration_text(46.0), "46 s");
        assert_eq!(duration_text(720.0), "12 min");
        assert_eq!(duration_text(18_720.0), "5 h 12 min");
        assert_eq!(duration_text(3.0 * 86_400.0), "3.0 days");
    }
}
