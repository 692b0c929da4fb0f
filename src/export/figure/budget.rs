//! The time a figure's tables take, asked for. `poslab figure` draws under a [`Budget`], in
//! two passes: the first estimates each table the figure computes (a heatmap's window, a patch
//! map: [`computed`]) from parts of it timed as the whole will be, and computes none; a figure
//! whose tables would pass the bound is then refused with the estimate unless `--yes`, before
//! any of its work. The second computes them, a long one with a spinner and its estimate on a
//! terminal. Outside a budget (the app, whose figures are made off the UI thread) nothing is
//! estimated.

use std::cell::RefCell;
use std::io::IsTerminal;

use crate::engine::{TableSpec, Window};
use crate::numbers::duration_text;

use super::FigureError;

/// How much work a figure may do unasked, and how it is shown.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Work estimated beyond this many seconds is refused unless `yes`.
    pub bound_seconds: f64,
    /// `--yes`: draw whatever the estimate.
    pub yes: bool,
    /// `--quiet`: no spinner.
    pub quiet: bool,
}

/// Tables estimated to take longer than this show a spinner while they are computed.
const SHOWN_AFTER_SECONDS: f64 = 2.0;

/// A table's estimate, as the refusal names the costliest.
#[derive(Debug, Clone)]
struct Estimate {
    seconds: f64,
    kind: &'static str,
    cells: usize,
    work_options: &'static str,
}

/// What [`computed`] does on this thread.
enum Pass {
    /// Estimating every table of the figure, computing none (each is given zeros).
    Estimating(Vec<Estimate>),
    /// Computing them, the `next`-th with the estimate of the first pass.
    Drawing {
        estimates: Vec<Estimate>,
        next: usize,
    },
}

thread_local! {
    static ACTIVE: RefCell<Option<(Budget, Pass)>> = const { RefCell::new(None) };
}

/// Runs `draw` (a figure's drawing) under `budget`: first with every table estimated and
/// none computed, so that a figure beyond the bound is refused before any of its work, then
/// for real.
pub fn with_budget<T>(
    budget: Budget,
    draw: impl Fn() -> Result<T, FigureError>,
) -> Result<T, FigureError> {
    let set = |pass: Option<Pass>| {
        ACTIVE.with(|active| *active.borrow_mut() = pass.map(|pass| (budget, pass)))
    };
    set(Some(Pass::Estimating(Vec::new())));
    let estimated = draw();
    let estimates = match ACTIVE.with(|active| active.borrow_mut().take()) {
        Some((_, Pass::Estimating(estimates))) => estimates,
        _ => Vec::new(),
    };
    // A figure that computed no table through [`computed`] drew itself for real: done.
    if estimates.is_empty() {
        return estimated;
    }
    estimated?;
    let total: f64 = estimates.iter().map(|e| e.seconds).sum();
    if !budget.yes
        && total > budget.bound_seconds
        && let Some(costliest) = estimates
            .iter()
            .max_by(|a, b| a.seconds.total_cmp(&b.seconds))
    {
        return Err(FigureError::Input(format!(
            "this figure would take about {} here ({} of it its {} table of {} cells): give --yes to draw it anyway, or reduce {}",
            duration_text(total),
            duration_text(costliest.seconds),
            costliest.kind,
            costliest.cells,
            costliest.work_options
        )));
    }
    set(Some(Pass::Drawing { estimates, next: 0 }));
    let drawn = draw();
    set(None);
    drawn
}

/// The values of `window` of `spec` as `compute` computes them (`compute` computes any part
/// of the window as it computes the whole). Under a budget's first pass, the window's time is
/// estimated from parts of it and zeros are returned; under its second, a table estimated to
/// take seconds shows a spinner on a terminal while it is computed.
pub(super) fn computed(
    spec: &TableSpec,
    window: &Window,
    compute: &dyn Fn(&Window) -> Result<Vec<f64>, FigureError>,
) -> Result<Vec<f64>, FigureError> {
    let pass = ACTIVE.with(|active| {
        let mut active = active.borrow_mut();
        match active.as_mut() {
            None => None,
            Some((budget, Pass::Estimating(_))) => Some((*budget, None)),
            Some((budget, Pass::Drawing { estimates, next })) => {
                *next += 1;
                Some((*budget, estimates.get(*next - 1).map(|e| e.seconds)))
            }
        }
    });
    let Some((budget, drawing)) = pass else {
        return compute(window);
    };
    let Some(seconds) = drawing else {
        // A table whose set-up alone (a similarity table's offsets, summed before any
        // value) passes the bound is not timed: a part of it would take as long.
        let setup = crate::engine::estimate::setup_seconds(spec);
        let seconds = if setup > budget.bound_seconds {
            setup
        } else {
            setup
                + crate::engine::estimate::estimated_seconds(
                    window,
                    &|part| {
                        let _ = compute(part);
                    },
                    budget.bound_seconds,
                )
        };
        ACTIVE.with(|active| {
            if let Some((_, Pass::Estimating(estimates))) = active.borrow_mut().as_mut() {
                estimates.push(Estimate {
                    seconds,
                    kind: spec.kind_name(),
                    cells: window.len(),
                    work_options: spec.work_options(),
                });
            }
        });
        return Ok(vec![0.0; window.len()]);
    };
    let spinner = (!budget.quiet
        && seconds >= SHOWN_AFTER_SECONDS
        && std::io::stderr().is_terminal())
    .then(|| {
        let spinner = indicatif::ProgressBar::new_spinner();
        spinner.set_message(format!(
            "computing the {} table, about {} (estimated)",
            spec.kind_name(),
            duration_text(seconds)
        ));
        if let Ok(style) =
            indicatif::ProgressStyle::with_template("{spinner} {msg} · {elapsed} so far")
        {
            spinner.set_style(style);
        }
        spinner.enable_steady_tick(std::time::Duration::from_millis(120));
        spinner
    });
    let values = compute(window);
    if let Some(spinner) = spinner {
        spinner.finish_and_clear();
    }
    values
}
