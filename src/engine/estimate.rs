//! How long computing a window of a table will take here, measured before it is computed: a
//! few parts of it (one row, growing runs of columns, rows spread over the table) are timed
//! and the rest extrapolated, parallel across rows as the engine computes them. Both
//! `poslab table` and `poslab figure` refuse work estimated beyond a bound this way.

use std::time::Duration;
use web_time::Instant;

use super::{Strided, TableSpec, Window};

/// Cosine terms a core sums per second at most (a bound from above: the real rate is lower),
/// for the work done before the first value, which cannot be timed without doing it.
const TERMS_PER_SECOND: f64 = 2e9;

/// Seconds at least that `spec`'s set-up (a similarity table's offsets) takes before its
/// first value, on every core.
pub fn setup_seconds(spec: &TableSpec) -> f64 {
    spec.setup_terms() as f64 / TERMS_PER_SECOND / rayon::current_num_threads() as f64
}

/// How long the estimate may time samples.
const SAMPLING: Duration = Duration::from_millis(150);

/// The most cells (or bins) one timed sample holds.
const SAMPLE_CELLS: usize = 4096;

/// Seconds computing all of `window` would take, from parts of it timed with `compute`
/// (which computes a part of the window as the whole will be: the same bins, the same
/// reduction). A call costs a set-up, then each row a set-up of its own and each cell its
/// work; parts one row wide and growing (1, 4, 16, ... cells) give the cell's cost, parts one
/// column tall and growing give the row's, and the smallest part what is left, so that a
/// set-up paid once per call is not counted once per cell. Rows are computed in parallel, as
/// the engine computes them. `bound` is the estimate that matters: sampling stops early once
/// the work is clearly far inside it.
pub fn estimated_seconds(window: &Window, compute: &dyn Fn(&Window), bound: f64) -> f64 {
    let origin = Instant::now();
    estimated_seconds_by(window, compute, bound, &|| origin.elapsed().as_secs_f64())
}

/// [`estimated_seconds`] with the clock `now` (seconds since any fixed moment), so that its
/// arithmetic can be tested on a clock the test advances instead of on real time.
fn estimated_seconds_by(
    window: &Window,
    compute: &dyn Fn(&Window),
    bound: f64,
    now: &dyn Fn() -> f64,
) -> f64 {
    let (heads, rows, cols) = (window.heads.len(), window.rows.len(), window.cols.len());
    if heads * rows * cols == 0 {
        return 0.0;
    }
    let threads = rayon::current_num_threads().max(1);
    // Rows of a part, or of the window, computed one round per thread.
    let rounds = |n: usize| n.div_ceil(threads) as f64;
    let timed = |head: usize, row: usize, row_count: usize, width: usize| {
        let part = Window {
            heads: whole_bins(&window.heads, head, 1),
            rows: whole_bins(&window.rows, row, row_count),
            cols: whole_bins(&window.cols, 0, width),
        };
        let started = now();
        compute(&part);
        now() - started
    };
    let started = now();
    // The smallest part, twice when it is quick (the first call also pays for caches and
    // pages, which a long call hardly notices).
    let first = timed(0, 0, 1, 1);
    let single = if first < 0.01 {
        first.min(timed(0, 0, 1, 1))
    } else {
        first
    };
    let mut per_cell = 0.0f64;
    let mut per_row = 0.0f64;
    let estimate = |per_row: f64, per_cell: f64| {
        let fixed = (single - per_row - per_cell).max(0.0);
        fixed + rounds(heads * rows) * (per_row + per_cell * cols as f64)
    };
    // What one part may take, and all of them: a call whose set-up alone takes long (a
    // million-pair table's frequencies) gets a few parts however long they take.
    let part_budget = SAMPLING.as_secs_f64().max(2.0 * single);
    let deadline = SAMPLING.as_secs_f64().max(6.0 * single);
    // The next size along an axis: four times the last, or, once a slope is measured, as
    // large as fits a part's budget (a call whose set-up dwarfs its cells' work measures
    // them only in large parts), growing at most 64 times a step.
    let next = |current: usize, limit: usize, slope: Option<f64>| {
        let fits = match slope {
            // A slope the clock barely saw makes the quotient huge: `as` saturates, the add
            // must too.
            Some(slope) if slope > 0.0 => {
                (((part_budget - single) / slope).max(0.0) as usize).saturating_add(1)
            }
            Some(_) => usize::MAX,
            None => current * 4,
        };
        fits.min(current * 64).min(limit).min(SAMPLE_CELLS)
    };
    let (mut width, mut tall) = (1usize, 1usize);
    let (mut cell_measured, mut row_measured) = (false, false);
    for k in 1.. {
        if now() - started > deadline {
            break;
        }
        let new_width = next(width, cols, cell_measured.then_some(per_cell));
        let new_tall = next(tall, rows, row_measured.then_some(per_row + per_cell));
        if new_width <= width && new_tall <= tall {
            break;
        }
        // Spread over the window: some kinds cost more at large positions.
        let row = (k * 7919) % rows;
        let head = k % heads;
        // Each slope from the largest part so far: the small ones differ from the smallest
        // by less than the clock's noise.
        if new_width > width {
            width = new_width;
            let t = timed(head, row, 1, width);
            per_cell = ((t - single) / (width - 1) as f64).max(0.0);
            cell_measured = true;
        }
        if new_tall > tall {
            tall = new_tall;
            let row = row.min(rows - tall);
            let t = timed(head, row, tall, 1);
            let extra_rounds = rounds(tall) - 1.0;
            if extra_rounds > 0.0 {
                per_row = ((t - single) / extra_rounds - per_cell).max(0.0);
                row_measured = true;
            }
        }
        // Far inside the bound after a couple of milliseconds, with parts large enough to
        // measure: no need to time more (a table made in a third of a second is not made
        // slower by its estimate).
        let measured = width.max(tall) >= 64 && now() - started > 0.002;
        if measured && estimate(per_row, per_cell) < bound / 10.0 {
            break;
        }
    }
    // A call may also pay a set-up per column (a sinusoidal table's exact frequencies, one
    // per column): one row's cells then look far dearer than they are in a block of many
    // rows. A part as wide and several rows tall tells the cells' own cost; the rest of one
    // row's is paid once per column.
    if width > 1 && rows > 1 {
        // At least a few rounds of rows on every thread, so that the extra rows show.
        let tall_wide = rows.min((SAMPLE_CELLS / width).max(4 * threads));
        let extra_rounds = rounds(tall_wide) - 1.0;
        if extra_rounds > 0.0 {
            let one_row = timed(0, 0, 1, width);
            let t = timed(0, 0, tall_wide, width);
            let in_rows = (((t - one_row) / extra_rounds - per_row) / width as f64).max(0.0);
            if in_rows < per_cell {
                let column_set_up = per_cell - in_rows;
                return estimate(per_row, in_rows) + column_set_up * cols as f64;
            }
        }
    }
    estimate(per_row, per_cell)
}

/// Bins `k` to `k + count - 1` of `range`, each bin whole (the cells up to the next bin's
/// first, as a reduction covers them).
fn whole_bins(range: &Strided, k: usize, count: usize) -> Strided {
    Strided {
        start: range.at(k),
        end: (range.at(k) + count * range.step).min(range.end),
        step: range.step,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parts timed are whole bins of the window, inside it; and a computation that pays
    /// a set-up per call, one per row and its cells' work is estimated at what the whole
    /// window costs, not at the set-up times the cells.
    #[test]
    fn parts_are_whole_bins_and_set_ups_are_counted_once() {
        let window = Window {
            heads: Strided::all(2),
            rows: Strided {
                start: 0,
                end: 1000,
                step: 10,
            },
            cols: Strided {
                start: 3,
                end: 998,
                step: 5,
            },
        };
        let threads = rayon::current_num_threads();
        let (fixed, per_row, per_cell) = (3e-3, 1e-4, 4e-6);
        let cost = |heads: usize, rows: usize, cols: usize| {
            fixed + (heads * rows).div_ceil(threads) as f64 * (per_row + per_cell * cols as f64)
        };
        let parts = std::cell::RefCell::new(Vec::new());
        // A clock that only the computation advances, by exactly its cost: the estimate's
        // arithmetic, free of the machine's load.
        let clock = std::cell::Cell::new(0.0f64);
        let seconds = estimated_seconds_by(
            &window,
            &|part| {
                parts.borrow_mut().push(*part);
                let (h, r, c) = (part.heads.len(), part.rows.len(), part.cols.len());
                clock.set(clock.get() + cost(h, r, c));
            },
            f64::INFINITY,
            &|| clock.get(),
        );
        for part in parts.into_inner() {
            assert_eq!(
                part.rows.end - part.rows.start,
                10 * part.rows.len(),
                "whole row bins"
            );
            assert_eq!((part.rows.start % 10, part.cols.start), (0, 3));
            assert!(part.rows.end <= 1000 && part.cols.end <= 998 && part.heads.end <= 2);
        }
        let whole = cost(2, 100, 199);
        assert!(
            (0.99 * whole..1.01 * whole).contains(&seconds),
            "estimated {seconds} s, the whole takes {whole} s"
        );
    }

    /// A part the clock sees as barely longer than the smallest (a slope of 1e-310 s a
    /// cell) sizes the next part by the budget over that slope, beyond any `usize`: the size
    /// saturates rather than overflow (it panicked, now and then, in debug builds).
    #[test]
    fn a_slope_the_clock_barely_sees_does_not_overflow() {
        let window = Window::all([1, 64, 4096]);
        let clock = std::cell::Cell::new(0.0f64);
        let seconds = estimated_seconds_by(
            &window,
            &|part| {
                let cells = (part.rows.len() * part.cols.len()) as f64;
                clock.set(clock.get() + 1e-300 + 1e-310 * cells);
            },
            600.0,
            &|| clock.get(),
        );
        assert!(seconds.is_finite() && seconds >= 0.0, "{seconds}");
    }

    /// A call that sets up each of its columns once (a sinusoidal table's exact frequencies)
    /// and then computes its cells cheaply is estimated within a small factor of its cost, not
    /// at the set-up times every cell: `table sinusoidal --seq 4000000 --dim 256` was refused
    /// as 13 min for a table made in 4.4 s.
    #[test]
    fn a_set_up_per_column_is_not_counted_per_cell() {
        let window = Window::all([1, 4_000_000, 256]);
        let threads = rayon::current_num_threads();
        let (per_column, per_cell) = (1.4e-6, 4e-9);
        let cost = |rows: usize, cols: usize| {
            per_column * cols as f64 + rows.div_ceil(threads) as f64 * per_cell * cols as f64
        };
        let clock = std::cell::Cell::new(0.0f64);
        let seconds = estimated_seconds_by(
            &window,
            &|part| clock.set(clock.get() + cost(part.rows.len(), part.cols.len())),
            600.0,
            &|| clock.get(),
        );
        let whole = cost(4_000_000, 256);
        assert!(
            (0.5 * whole..2.0 * whole).contains(&seconds),
            "estimated {seconds} s, the whole takes {whole} s"
        );
    }
}
