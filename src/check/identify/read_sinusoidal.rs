//! Sinusoidal tables: layout, first function, spacing, base, start, transposed or not.

use super::*;
use crate::encoding::positions::{Positions, ScaleAt};

/// Sinusoidal tables in both layouts, sin or cos first, both spacings.
pub(super) fn sinusoidal(
    search: &mut Search,
    view: &Array2<f64>,
    orient: &dyn Fn(Array2<f64>) -> ArrayD<f64>,
    suffix: &str,
) {
    let (seq, dim) = view.dim();
    if dim < 2 || dim % 2 != 0 || seq < 2 {
        return;
    }
    let pairs = dim / 2;
    let (amplitude, amplitude_name) = fitted_amplitude(view);
    for layout in [PairLayout::Interleaved, PairLayout::Half] {
        for first in [FirstOfPair::Sin, FirstOfPair::Cos] {
            // Everything but the frequencies' parameters, which the search fills in.
            let shape = SinusoidalParams {
                seq: 1,
                dim,
                layout,
                first,
                amplitude,
                ..SinusoidalParams::default()
            };
            let rates: Vec<(usize, f64, f64)> = (0..pairs)
                .filter_map(|i| {
                    let (s, c) = shape.pair_columns(i);
                    let sin: Vec<f64> = view.column(s).to_vec();
                    let cos: Vec<f64> = view.column(c).to_vec();
                    let (rate, _) = angle_rate(&sin, &cos)?;
                    Some((i, rate, rate * (seq - 1) as f64))
                })
                .collect();
            // Each pair's angle in the first row (the amplitude cancels in the ratio).
            let phases: Vec<f64> = (0..pairs)
                .map(|i| {
                    let (s, c) = shape.pair_columns(i);
                    view[[0, s]].atan2(view[[0, c]])
                })
                .collect();
            let last = (pairs - 1) as f64;
            for spacing in [Spacing::Vaswani, Spacing::T2t] {
                // w_i = base^(-2i/d) (Vaswani) or base^(-i/(d/2-1)) (t2t).
                let exponent = |i: usize| match spacing {
                    Spacing::Vaswani => dim as f64 / (2.0 * i as f64),
                    Spacing::T2t => last / i as f64,
                };
                let (base, any_base) = match best_conditioned(&rates, exponent) {
                    Some((i, rate)) => (rate.powf(-exponent(i)), false),
                    // With one pair (d = 2) the frequency is base^0 = 1 in both spacings: the
                    // table is the same for every base, so the default stands for them all.
                    None if pairs == 1 => (10000.0, true),
                    None => continue,
                };
                // The start for a base: found from the phases with that base's frequencies
                // (once per base: the description and the table both ask).
                let starts = std::cell::RefCell::new(std::collections::HashMap::new());
                let start_for = |b: f64| {
                    *starts.borrow_mut().entry(b.to_bits()).or_insert_with(|| {
                        let params = SinusoidalParams {
                            base: b,
                            spacing,
                            ..shape
                        };
                        resolve_start(params.frequencies().as_slice()?, &phases)
                    })
                };
                let order = match first {
                    FirstOfPair::Sin => "sin first",
                    FirstOfPair::Cos => "cos first",
                };
                let layout_name = match layout {
                    PairLayout::Interleaved => "interleaved",
                    PairLayout::Half => "split",
                };
                let spacing_name = match spacing {
                    Spacing::Vaswani => "Vaswani",
                    Spacing::T2t => "tensor2tensor",
                };
                // Each description's table as `poslab table` words (a transposed or
                // reshaped reading's are dropped by the check that confirms them).
                let named = std::cell::RefCell::new(Vec::new());
                search.consider_bases(
                    base,
                    |b| {
                        let start = start_for(b);
                        let positions = match start {
                            Some(start) => format!("{start}..{}", start + seq as u64 - 1),
                            None => "unknown".to_owned(),
                        };
                        let base = if any_base {
                            "any base (its one pair turns 1 radian per position)".to_owned()
                        } else {
                            format!("base {b}")
                        };
                        let description = format!(
                            "sinusoidal, {layout_name} layout, {order}, {spacing_name} spacing, {base}, {}d = {dim}, positions {positions}{suffix}",
                            amplitude_name
                        );
                        if let Some(start) = start {
                            named.borrow_mut().push((
                                description.clone(),
                                sinusoidal_words(seq, b, start, amplitude, (layout, first, spacing), dim),
                            ));
                        }
                        description
                    },
                    view,
                    orient,
                    |b, rows| {
                        let params = SinusoidalParams {
                            seq: rows,
                            base: b,
                            start: start_for(b)?,
                            spacing,
                            ..shape
                        };
                        let table = super::noted(cpu::compute(&TableSpec::Sinusoidal(params)))?;
                        table.into_real().into_dimensionality::<Ix2>().ok()
                    },
                    Some(&|b, rows, reading| {
                        let params = SinusoidalParams {
                            seq: rows,
                            base: b,
                            start: start_for(b)?,
                            spacing,
                            ..shape
                        };
                        let file = view.slice(ndarray::s![..rows, ..]).to_owned().into_dyn();
                        float32_table(&TableSpec::Sinusoidal(params), reading, &file)?
                            .into_dimensionality::<Ix2>()
                            .ok()
                    }),
                );
                for (description, words) in named.into_inner() {
                    search.name_words(description, words);
                }
            }
        }
    }
}

/// A sinusoidal table's `poslab table` words.
fn sinusoidal_words(
    seq: usize,
    base: f64,
    start: u64,
    amplitude: f64,
    (layout, first, spacing): (PairLayout, FirstOfPair, Spacing),
    dim: usize,
) -> TableWords {
    let mut options = vec![
        ("seq", seq.to_string()),
        ("dim", dim.to_string()),
        ("base", format!("{base}")),
        (
            "layout",
            match layout {
                PairLayout::Interleaved => "interleaved",
                PairLayout::Half => "split",
            }
            .to_owned(),
        ),
    ];
    if first == FirstOfPair::Cos {
        options.push(("first", "cos".to_owned()));
    }
    if spacing == Spacing::T2t {
        options.push(("spacing", "t2t".to_owned()));
    }
    if start > 0 {
        options.push(("start", start.to_string()));
    }
    if amplitude != 1.0 {
        options.push(("scale", format!("{amplitude}")));
    }
    TableWords {
        kind: "sinusoidal",
        options,
    }
}

/// The amplitude of a sinusoidal table (every pair's sine and cosine lie on a circle of that
/// radius), and how a description names it: nothing for 1, else the value and, where it is
/// one, the rule a library uses (`dim^-0.5`: x-transformers; `sqrt(2/dim)`: MLX). A named
/// value within float32 rounding of the fit is said as that value, never as the fit.
fn fitted_amplitude(view: &Array2<f64>) -> (f64, String) {
    let (rows, dim) = view.dim();
    let pairs = dim / 2;
    // Pairs of an interleaved and of a split table have the same radii: try both readings
    // of the first row, and keep the one whose radii agree.
    let radii = |columns: &dyn Fn(usize) -> (usize, usize)| -> Vec<f64> {
        (0..rows.min(64))
            .flat_map(|r| (0..pairs).map(move |i| (r, i)))
            .map(|(r, i)| {
                let (a, b) = columns(i);
                view[[r, a]].hypot(view[[r, b]])
            })
            .collect()
    };
    // Rows of zeros (a padding row) have no radius to agree on.
    let spread = |values: &[f64]| {
        let (low, high) = values
            .iter()
            .filter(|&&v| v != 0.0)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| {
                (l.min(v), h.max(v))
            });
        (high - low) / high.max(f64::MIN_POSITIVE)
    };
    let interleaved = radii(&|i| (2 * i, 2 * i + 1));
    let split = radii(&|i| (i, i + pairs));
    let values = if spread(&interleaved) <= spread(&split) {
        interleaved
    } else {
        split
    };
    // The median: a padding row of zeros (fairseq's) leaves it where the other rows put it.
    let mut sorted = values;
    sorted.sort_by(f64::total_cmp);
    let fitted = sorted.get(sorted.len() / 2).copied().unwrap_or(1.0);
    let named = [
        (1.0, ""),
        (
            1.0 / (dim as f64).sqrt(),
            " (dim^-0.5, x-transformers' ScaledSinusoidalEmbedding)",
        ),
        ((2.0 / dim as f64).sqrt(), " (sqrt(2/dim), MLX's default)"),
    ];
    if !(fitted.is_finite() && fitted > 0.0) {
        return (1.0, String::new());
    }
    match named
        .iter()
        .find(|(value, _)| ((fitted - value) / value).abs() < 1e-5)
    {
        Some(&(1.0, _)) => (1.0, String::new()),
        Some(&(value, rule)) => (value, format!("scale {value:.9}{rule}, ")),
        None => {
            // The fewest significant digits that float32 rounding cannot tell from the fit.
            let roundest = (1..=9)
                .map(|digits| round_to_digits(fitted, digits))
                .find(|v| ((v - fitted) / fitted).abs() < 1e-6)
                .unwrap_or(fitted);
            (roundest, format!("scale {roundest} (fitted), "))
        }
    }
}

/// `value` rounded to `digits` significant decimal digits.
fn round_to_digits(value: f64, digits: i32) -> f64 {
    let magnitude = value.abs().log10().floor() as i32;
    let factor = 10f64.powi(digits - 1 - magnitude);
    (value * factor).round() / factor
}

/// Sinusoidal tables at the positions given (`identify --positions`, `--position-scale`):
/// both layouts, sin or cos first, both spacings, the amplitude and the base fitted. Each
/// pair's angle is unwrapped over the rows sorted by position; the fastest pair whose angle is
/// a straight line through the positions pins the base (its slope is the frequency).
pub(super) fn sinusoidal_at_positions(search: &mut Search, positions: &Positions) {
    let Ok(view) = search.table.clone().into_dimensionality::<Ix2>() else {
        return;
    };
    let (rows, dim) = view.dim();
    if dim < 2 || dim % 2 != 0 || rows < 2 || rows != positions.len() {
        return;
    }
    let pairs = dim / 2;
    let scaled: Vec<f64> = (0..rows).map(|r| positions.exact(r).to_f64()).collect();
    let mut order: Vec<usize> = (0..rows).collect();
    order.sort_by(|&a, &b| scaled[a].total_cmp(&scaled[b]));
    let sorted: Vec<f64> = order.iter().map(|&r| scaled[r]).collect();
    let (amplitude, amplitude_name) = fitted_amplitude(&view);
    for layout in [PairLayout::Interleaved, PairLayout::Half] {
        for first in [FirstOfPair::Sin, FirstOfPair::Cos] {
            let shape = SinusoidalParams {
                seq: rows,
                dim,
                layout,
                first,
                amplitude,
                ..SinusoidalParams::default()
            };
            // Each pair's rate where its unwrapped angle is a line through the positions.
            let rates: Vec<Option<f64>> = (0..pairs)
                .map(|i| {
                    let (s, c) = shape.pair_columns(i);
                    let angles: Vec<f64> = order
                        .iter()
                        .map(|&r| view[[r, s]].atan2(view[[r, c]]))
                        .collect();
                    straight_line_slope(&sorted, &angles).filter(|&rate| rate > 0.0)
                })
                .collect();
            // Pair 0 turns 1 radian a position whatever the base: the fastest other pins it.
            let Some((pair, rate)) = trusted_rates(&rates)
                .into_iter()
                .rev()
                .find(|&(i, _)| i > 0)
            else {
                continue;
            };
            let order_name = match first {
                FirstOfPair::Sin => "sin first",
                FirstOfPair::Cos => "cos first",
            };
            let layout_name = match layout {
                PairLayout::Interleaved => "interleaved",
                PairLayout::Half => "split",
            };
            for spacing in [Spacing::Vaswani, Spacing::T2t] {
                if pair == 0 {
                    // w_0 = 1 whatever the base: nothing to fit.
                    continue;
                }
                let exponent = match spacing {
                    Spacing::Vaswani => dim as f64 / (2.0 * pair as f64),
                    Spacing::T2t => (pairs - 1) as f64 / pair as f64,
                };
                let base = rate.powf(-exponent);
                let spacing_name = match spacing {
                    Spacing::Vaswani => "Vaswani",
                    Spacing::T2t => "tensor2tensor",
                };
                let spec_for = |b: f64, rows: usize, at: &Positions| {
                    TableSpec::AtPositions(Box::new(crate::engine::PositionedTable {
                        table: TableSpec::Sinusoidal(SinusoidalParams {
                            seq: rows,
                            base: b,
                            spacing,
                            ..shape
                        }),
                        positions: at.clone(),
                    }))
                };
                // Both float32 orders of a scale, the one nearer the file's first rows kept.
                let orders: Vec<ScaleAt> = if positions.scale == 1.0 {
                    vec![ScaleAt::Position]
                } else {
                    vec![ScaleAt::Position, ScaleAt::Angle]
                };
                let named = std::cell::RefCell::new(Vec::new());
                search.consider_bases(
                    base,
                    |b| {
                        let description = format!(
                            "sinusoidal, {layout_name} layout, {order_name}, {spacing_name} spacing, base {b}, {amplitude_name}d = {dim}, at the {}",
                            positions.describe()
                        );
                        let mut words =
                            sinusoidal_words(rows, b, 0, amplitude, (layout, first, spacing), dim);
                        words.options.retain(|(id, _)| *id != "seq");
                        words
                            .options
                            .push(("positions", super::FROM_THE_CALL.to_owned()));
                        if positions.scale != 1.0 {
                            words
                                .options
                                .push(("position_scale", super::FROM_THE_CALL.to_owned()));
                        }
                        named.borrow_mut().push((description.clone(), words));
                        description
                    },
                    &view,
                    &|reference| reference.into_dyn(),
                    |b, rows| {
                        let table =
                            super::noted(cpu::compute(&spec_for(b, rows, &positions.first(rows))))?;
                        table.into_real().into_dimensionality::<Ix2>().ok()
                    },
                    Some(&|b, rows, reading| {
                        let file = view.slice(ndarray::s![..rows, ..]).to_owned().into_dyn();
                        let tables = orders.iter().filter_map(|&scale_at| {
                            let at = positions.first(rows).with_scale_at(scale_at);
                            let table = float32_table(&spec_for(b, rows, &at), reading, &file)?;
                            let error = crate::check::compare(&table, &file, search_tolerance())
                                .max_abs_error();
                            Some((error, table))
                        });
                        let (_, table) = tables.min_by(|a, b| a.0.total_cmp(&b.0))?;
                        table.into_dimensionality::<Ix2>().ok()
                    }),
                );
                for (description, words) in named.into_inner() {
                    search.name_words(description, words);
                }
            }
        }
    }
}

/// The pairs whose rates can be trusted, slowest first, with their rates. Rows far apart in
/// position (64 timesteps at 15.625) turn a fast pair by more than half a turn a row, and its
/// angles then make a straight line of the wrong slope (an alias, as a wheel in a film turns
/// backwards). Both spacings make the rates a geometric sequence, so from the slowest pair on,
/// a pair is trusted while its rate continues that sequence (within 5%).
fn trusted_rates(rates: &[Option<f64>]) -> Vec<(usize, f64)> {
    let mut trusted: Vec<(usize, f64)> = Vec::new();
    for i in (0..rates.len()).rev() {
        let Some(rate) = rates[i] else {
            break;
        };
        if let [.., (_, slower), (_, previous)] = trusted[..] {
            let predicted = previous * previous / slower;
            if (rate - predicted).abs() > 0.05 * predicted {
                break;
            }
        } else if let [(_, previous)] = trusted[..]
            && rate < previous
        {
            break;
        }
        trusted.push((i, rate));
    }
    trusted
}

/// Any tolerance: only the error is read.
fn search_tolerance() -> crate::check::Tolerance {
    crate::check::Tolerance::default()
}

/// The slope of `angles` (in `(-π, π]`, at the increasing `positions`) unwrapped into a
/// straight line through them; `None` when the unwrapped angles stray from a line by more than
/// 0.05 rad (steps too large to unwrap) or the positions do not vary.
fn straight_line_slope(positions: &[f64], angles: &[f64]) -> Option<f64> {
    let mut unwrapped = Vec::with_capacity(angles.len());
    let mut turns = 0.0;
    for (k, &a) in angles.iter().enumerate() {
        if k > 0 {
            let previous = angles[k - 1];
            let step = a - previous;
            if step > std::f64::consts::PI {
                turns -= std::f64::consts::TAU;
            } else if step < -std::f64::consts::PI {
                turns += std::f64::consts::TAU;
            }
        }
        unwrapped.push(a + turns);
    }
    let n = positions.len() as f64;
    let mean_p = positions.iter().sum::<f64>() / n;
    let mean_a = unwrapped.iter().sum::<f64>() / n;
    let (covariance, variance) =
        positions
            .iter()
            .zip(&unwrapped)
            .fold((0.0, 0.0), |(c, v), (p, a)| {
                (
                    c + (p - mean_p) * (a - mean_a),
                    v + (p - mean_p) * (p - mean_p),
                )
            });
    if variance <= 0.0 {
        return None;
    }
    let slope = covariance / variance;
    let intercept = mean_a - slope * mean_p;
    let straight = positions
        .iter()
        .zip(&unwrapped)
        .all(|(p, a)| (a - (slope * p + intercept)).abs() < 0.05);
    straight.then_some(slope)
}
