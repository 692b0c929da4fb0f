//! The true range of the cells a heatmap window covers, for its colour bar. A picture whose
//! pixels are means of many cells spans less than the table does (an ALiBi bias's zero
//! diagonal averages away to -0.167, a similarity's peak of d/2 to 63.047), and the bar must
//! say what the table holds. Found in closed form (ALiBi) or cell by cell with a rotation
//! recurrence, within a budget; `None` beyond it, and the bar then says it is the pixels' range.

use std::ops::Range;

use rayon::prelude::*;

use super::{TableSpec, Window};
use crate::encoding::alibi::{self, AlibiMode};
use crate::encoding::sinusoidal::SinusoidalValues;
use crate::jobs::{Cancel, Cancelled};

/// The most cosine terms a range may cost: about half a second on two cores.
pub const MAX_RANGE_TERMS: u64 = 1 << 28;

/// Rows (or offsets) stepped by the recurrence between exact restarts: its rounding error
/// grows by about 1e-16 a step, so it stays below 1e-12.
const CHUNK: usize = 4096;

/// The smallest and largest finite value among the cells of `window` (all of them, not one per
/// pixel); `None` where poslab has no way to find it within [`MAX_RANGE_TERMS`], or no cell is
/// finite.
pub fn covered_range(
    spec: &TableSpec,
    window: &Window,
    cancel: &Cancel,
) -> Result<Option<(f64, f64)>, Cancelled> {
    let rows = window.rows.start..window.rows.end;
    let cols = window.cols.start..window.cols.end;
    if rows.is_empty() || cols.is_empty() {
        return Ok(None);
    }
    match spec {
        TableSpec::Alibi { params, head } => {
            let Ok(slopes) = alibi::slopes(params.heads) else {
                return Ok(None);
            };
            let heads: Vec<f64> = match head {
                Some(h) => slopes.get(*h).copied().into_iter().collect(),
                None => (window.heads.start..window.heads.end.min(slopes.len()))
                    .map(|h| slopes[h])
                    .collect(),
            };
            Ok(alibi_range(&heads, params.mode, rows, cols))
        }
        TableSpec::Similarity(params) => {
            let Ok(values) = SinusoidalValues::new(params) else {
                return Ok(None);
            };
            similarity_range(&values, rows, cols, cancel)
        }
        TableSpec::Sinusoidal(params) => {
            let Ok(values) = SinusoidalValues::new(params) else {
                return Ok(None);
            };
            sinusoidal_range(&values, rows, cols, cancel)
        }
        _ => Ok(None),
    }
}

/// `-m |i − j|` over queries `rows` and keys `cols`, causal cells above the diagonal left out
/// (they are −∞, masked).
fn alibi_range(
    slopes: &[f64],
    mode: AlibiMode,
    rows: Range<usize>,
    cols: Range<usize>,
) -> Option<(f64, f64)> {
    let (first_query, last_query) = (rows.start, rows.end - 1);
    let (first_key, last_key) = (cols.start, cols.end - 1);
    let overlap = first_query <= last_key && first_key <= last_query;
    let (nearest, farthest) = match mode {
        AlibiMode::Causal => {
            // Finite cells have key ≤ query.
            if first_key > last_query {
                return None;
            }
            let nearest = if overlap { 0 } else { first_query - last_key };
            (nearest, last_query - first_key)
        }
        AlibiMode::Symmetric => {
            let nearest = if overlap {
                0
            } else if last_key < first_query {
                first_query - last_key
            } else {
                first_key - last_query
            };
            (
                nearest,
                last_query
                    .abs_diff(first_key)
                    .max(last_key.abs_diff(first_query)),
            )
        }
    };
    let low = slopes
        .iter()
        .map(|m| -m * farthest as f64)
        .fold(f64::INFINITY, f64::min);
    let high = slopes
        .iter()
        .map(|m| -m * nearest as f64)
        .fold(f64::NEG_INFINITY, f64::max);
    (low.is_finite() && high.is_finite()).then_some((low + 0.0, high + 0.0))
}

/// `PE[i]·PE[j] = Σ cos((j − i) w)` over the offsets the window holds: `d/2` where it holds the
/// diagonal, and otherwise the extremes of the sum over every offset.
fn similarity_range(
    values: &SinusoidalValues,
    rows: Range<usize>,
    cols: Range<usize>,
    cancel: &Cancel,
) -> Result<Option<(f64, f64)>, Cancelled> {
    let lowest = cols.start as i64 - (rows.end as i64 - 1);
    let highest = cols.end as i64 - 1 - rows.start as i64;
    // The sum is even in the offset: only distances matter.
    let (near, far) = if lowest <= 0 && highest >= 0 {
        (0, lowest.unsigned_abs().max(highest.unsigned_abs()))
    } else {
        let (a, b) = (lowest.unsigned_abs(), highest.unsigned_abs());
        (a.min(b), a.max(b))
    };
    let freqs = values.params().frequencies();
    let terms = (far - near + 1).saturating_mul(freqs.len() as u64);
    if terms > MAX_RANGE_TERMS {
        return Ok(None);
    }
    // Chunks of offsets on every core: the extremes of the chunks are the extremes.
    let chunks = (far - near) / CHUNK as u64 + 1;
    let (low, mut high) = (0..chunks)
        .into_par_iter()
        .map(|k| {
            cancel.check()?;
            let first = near + k * CHUNK as u64;
            let count = (far - first + 1).min(CHUNK as u64) as usize;
            let mut sums = vec![0.0; count];
            for &w in &freqs {
                // (cos, sin) of first·w, then turned by w each offset.
                let (mut s, mut c) = (first as f64 * w).sin_cos();
                let (step_s, step_c) = w.sin_cos();
                for sum in &mut sums {
                    *sum += c;
                    (c, s) = (c * step_c - s * step_s, s * step_c + c * step_s);
                }
            }
            Ok(extremes(sums.into_iter()))
        })
        .try_reduce(
            || (f64::INFINITY, f64::NEG_INFINITY),
            |a, b| Ok((a.0.min(b.0), a.1.max(b.1))),
        )?;
    if near == 0 {
        // The diagonal: every pair adds sin² + cos², exactly d/2.
        high = freqs.len() as f64;
    }
    let scale = values.dot_scale();
    Ok(Some((scale * low, scale * high)))
}

/// Every cell of `rows` x `cols` of a sinusoidal table, column by column.
fn sinusoidal_range(
    values: &SinusoidalValues,
    rows: Range<usize>,
    cols: Range<usize>,
    cancel: &Cancel,
) -> Result<Option<(f64, f64)>, Cancelled> {
    let terms = (rows.len() as u64).saturating_mul(cols.len() as u64);
    if terms > MAX_RANGE_TERMS {
        return Ok(None);
    }
    let params = *values.params();
    let freqs = params.frequencies();
    // Columns on every core: the extremes of the columns are the extremes.
    let (low, high) = cols
        .into_par_iter()
        .map(|col| {
            cancel.check()?;
            let (pair, is_cos) = params.column_pair(col);
            let (step_s, step_c) = freqs[pair].sin_cos();
            let mut column = (f64::INFINITY, f64::NEG_INFINITY);
            let mut first = rows.start;
            while first < rows.end {
                let count = (rows.end - first).min(CHUNK);
                // Each chunk starts from the engine's exact value at its first row and its
                // partner (the sine beside a cosine), so that large positions lose nothing.
                let (mut s, mut c) = values.unit_sin_cos(first, pair);
                let chunk = (0..count).map(|_| {
                    let v = if is_cos { c } else { s };
                    (c, s) = (c * step_c - s * step_s, s * step_c + c * step_s);
                    v
                });
                let (lo, hi) = extremes(chunk);
                column = (column.0.min(lo), column.1.max(hi));
                first += count;
            }
            Ok(column)
        })
        .try_reduce(
            || (f64::INFINITY, f64::NEG_INFINITY),
            |a, b| Ok((a.0.min(b.0), a.1.max(b.1))),
        )?;
    // The recurrence's rounding may step a hair past ±1, which no sine reaches.
    let amplitude = params.amplitude;
    Ok(Some((amplitude * low.max(-1.0), amplitude * high.min(1.0))))
}

/// The least and greatest of `values` (infinities where there are none).
pub(crate) fn extremes(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::alibi::AlibiParams;
    use crate::engine::Strided;

    fn every_cell(spec: &TableSpec, window: &Window) -> (f64, f64) {
        let table = crate::engine::cpu::compute(spec).unwrap().into_real();
        let view = table.view();
        let mut low = f64::INFINITY;
        let mut high = f64::NEG_INFINITY;
        for h in window.heads.start..window.heads.end {
            for r in window.rows.start..window.rows.end {
                for c in window.cols.start..window.cols.end {
                    let v = match view.ndim() {
                        2 => view[[r, c]],
                        _ => view[[h, r, c]],
                    };
                    if v.is_finite() {
                        low = low.min(v);
                        high = high.max(v);
                    }
                }
            }
        }
        (low, high)
    }

    fn window(spec: &TableSpec, rows: Range<usize>, cols: Range<usize>) -> Window {
        let [heads, ..] = spec.matrix_shape();
        Window {
            heads: Strided::all(heads),
            rows: Strided {
                start: rows.start,
                end: rows.end,
                step: 7,
            },
            cols: Strided {
                start: cols.start,
                end: cols.end,
                step: 3,
            },
        }
    }

    #[test]
    fn the_range_is_that_of_every_cell_the_window_covers() {
        let sinusoidal = crate::encoding::sinusoidal::SinusoidalParams {
            seq: 300,
            dim: 16,
            base: 100.0,
            ..Default::default()
        };
        let split = crate::encoding::sinusoidal::SinusoidalParams {
            layout: crate::encoding::PairLayout::Half,
            start: 5000,
            ..sinusoidal
        };
        let specs = [
            TableSpec::Alibi {
                params: AlibiParams {
                    heads: 6,
                    seq: 200,
                    mode: AlibiMode::Causal,
                },
                head: None,
            },
            TableSpec::Alibi {
                params: AlibiParams {
                    heads: 6,
                    seq: 200,
                    mode: AlibiMode::Symmetric,
                },
                head: Some(2),
            },
            TableSpec::Similarity(sinusoidal),
            TableSpec::Sinusoidal(sinusoidal),
            TableSpec::Sinusoidal(split),
        ];
        let cancel = Cancel::default();
        for spec in &specs {
            let [_, rows, cols] = spec.matrix_shape();
            for (r, c) in [
                (0..rows, 0..cols),
                (rows / 2..rows, 0..cols / 3),
                (0..rows / 3, cols / 2..cols),
                (5..9, 1..cols.min(40)),
            ] {
                let w = window(spec, r.clone(), c.clone());
                let want = every_cell(spec, &w);
                match covered_range(spec, &w, &cancel).unwrap() {
                    Some((low, high)) => {
                        assert!(
                            (low - want.0).abs() < 1e-9 && (high - want.1).abs() < 1e-9,
                            "{spec:?} rows {r:?} cols {c:?}: {:?} against {want:?}",
                            (low, high)
                        );
                    }
                    None => assert!(
                        matches!(spec, TableSpec::Alibi { params, .. } if params.mode == AlibiMode::Causal),
                        "{spec:?} rows {r:?} cols {c:?}: no range"
                    ),
                }
            }
        }
    }
}
