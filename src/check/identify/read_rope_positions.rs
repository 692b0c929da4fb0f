//! RoPE tables whose rows sit at positions given by the call (`--positions`): which kind,
//! pairing and scaling the rows are, read at those positions.

use super::read_rope::{nearest_turn, pair_angles, positioned_words};
use super::*;

/// RoPE angles `[rows, R/2]` and cos, sin or vLLM cos-sin caches `[rows, R]` at the positions
/// given (`identify --positions`): plain RoPE, no scaling, the base fitted from the slowest
/// pair (its angle read where it stays within a quarter turn, so no unwrapping is needed) and
/// each candidate computed at those positions.
pub(super) fn rope_at_positions(
    search: &mut Search,
    positions: &crate::encoding::positions::Positions,
) {
    let Ok(view) = search.table.clone().into_dimensionality::<Ix2>() else {
        return;
    };
    let (rows, cols) = view.dim();
    if rows < 2 || cols < 2 || rows != positions.len() {
        return;
    }
    let scaled: Vec<f64> = (0..rows).map(|r| positions.exact(r).to_f64()).collect();
    // What the file may be, with its rotary width.
    let mut kinds: Vec<(Option<(PairLayout, CachePart)>, usize)> = vec![(None, 2 * cols)];
    if cols.is_multiple_of(2) && cols >= 4 {
        for layout in [PairLayout::Half, PairLayout::Interleaved] {
            for part in [CachePart::Cos, CachePart::Sin] {
                kinds.push((Some((layout, part)), cols));
            }
        }
        kinds.push((Some((PairLayout::Half, CachePart::CosSin)), cols));
    }
    for (kind, rotary) in kinds {
        let pairs = rotary / 2;
        if pairs < 2 {
            continue;
        }
        // Pair i's angle at row r, as far as the values tell it: cos is even, so acos gives
        // |angle| (signed by the position); asin and acos only within a quarter turn.
        let angle = |i: usize, r: usize| -> f64 {
            match kind {
                None => view[[r, i]],
                // vLLM's [cos | sin]: both values of the pair.
                Some((_, CachePart::CosSin)) => view[[r, i + pairs]].atan2(view[[r, i]]),
                Some((layout, part)) => {
                    let (col, _) = layout.pair(i, rotary);
                    let v = view[[r, col]].clamp(-1.0, 1.0);
                    match part {
                        CachePart::Cos => v.acos() * scaled[r].signum(),
                        _ => v.asin(),
                    }
                }
            }
        };
        // The slowest pair that turns far enough to be read (a tenth of a radian at the
        // furthest position) and not so far that it wraps; its angle over the positions is a
        // line through 0.
        let Some((pair, rate)) = (1..pairs).rev().find_map(|i| {
            let points: Vec<(f64, f64)> = (0..rows).map(|r| (scaled[r], angle(i, r))).collect();
            let largest = points.iter().fold(0.0f64, |m, (_, a)| m.max(a.abs()));
            if !(0.1..std::f64::consts::FRAC_PI_2).contains(&largest) {
                return None;
            }
            let (num, den) = points
                .iter()
                .fold((0.0, 0.0), |(n, d), (p, a)| (n + a * p, d + p * p));
            let rate = num / den;
            (rate.is_finite() && rate > 0.0).then_some((i, rate))
        }) else {
            continue;
        };
        let base = rate.powf(-(rotary as f64) / (2.0 * pair as f64));
        let spec_for = |b: f64, rows: usize| {
            let params = RopeParams {
                seq: rows,
                dim: rotary,
                base: b,
                start: 0,
            };
            let freqs = RopeFrequencies::default();
            let table = match kind {
                None => TableSpec::RopeAngles { params, freqs },
                Some((layout, part)) => TableSpec::RopeCache {
                    params,
                    freqs,
                    layout,
                    part,
                },
            };
            TableSpec::AtPositions(Box::new(crate::engine::PositionedTable {
                table,
                positions: positions.first(rows),
            }))
        };
        let what = match kind {
            None => "RoPE angles p·θ_i".to_owned(),
            Some((layout, part)) => format!(
                "RoPE {} cache, {}",
                match part {
                    CachePart::Cos => "cos",
                    CachePart::Sin => "sin",
                    CachePart::CosSin | CachePart::CosSinHalves => "cos-sin",
                },
                match (part, layout) {
                    (CachePart::CosSin, _) => "vLLM's layout (every cosine, then every sine)",
                    (CachePart::CosSinHalves, _) => {
                        "the cos then the sin cache, each in the half layout (torchtune's Qwen2)"
                    }
                    (_, PairLayout::Half) => "half layout (Hugging Face)",
                    (_, PairLayout::Interleaved) => "interleaved layout",
                }
            ),
        };
        let named = std::cell::RefCell::new(Vec::new());
        search.consider_bases(
            base,
            |b| {
                let description = format!(
                    "{what}, dim {rotary}, base {b}, at the {}",
                    positions.describe()
                );
                let mut words = positioned_words(kind, rotary, positions);
                words.options.push(("base", format!("{b}")));
                named.borrow_mut().push((description.clone(), words));
                description
            },
            &view,
            &|reference| reference.into_dyn(),
            |b, rows| {
                let table = super::noted(cpu::compute(&spec_for(b, rows)))?;
                table.into_real().into_dimensionality::<Ix2>().ok()
            },
            Some(&|b, rows, reading| {
                let file = view.slice(ndarray::s![..rows, ..]).to_owned().into_dyn();
                float32_table(&spec_for(b, rows), reading, &file)?
                    .into_dimensionality::<Ix2>()
                    .ok()
            }),
        );
        for (description, words) in named.into_inner() {
            search.name_words(description, words);
        }
        scalings_at_positions(search, &view, positions, kind, rotary, &what);
    }
}

/// Linear, Llama 3, YaRN or LongRoPE frequencies (anything but plain RoPE, tried before) at
/// the positions given: each pair's frequency read from its angles, rows taken by growing
/// `|position|`, each angle's turn and sign chosen nearest the frequency read so far (the
/// first from the smallest nonzero position, where the angle is taken to be below half a
/// turn), then identified through those frequencies. A cache is read at amplitude 1, or at
/// the factor a cos-sin cache's pairs give (YaRN's attention factor).
fn scalings_at_positions(
    search: &mut Search,
    view: &Array2<f64>,
    positions: &crate::encoding::positions::Positions,
    kind: Option<(PairLayout, CachePart)>,
    rotary: usize,
    what: &str,
) {
    use crate::encoding::exact_angle::DoubleF64;
    use std::f64::consts::{PI, TAU};
    let (rows, cols) = view.dim();
    let pairs = rotary / 2;
    let scaled: Vec<f64> = (0..rows).map(|r| positions.exact(r).to_f64()).collect();
    let amplitude = match kind {
        Some((layout, CachePart::CosSin)) => {
            let (c, s) = layout.pair(0, rotary);
            view[[0, c]].hypot(view[[0, s]])
        }
        _ => 1.0,
    };
    if !(amplitude.is_finite() && amplitude > 0.0) {
        return;
    }
    // The angles pair `i`'s value at row `r` may be (one of two, by symmetry), and how well
    // the value pins them (the slope of the value against the angle).
    let angles = |i: usize, r: usize| -> ([f64; 2], f64) {
        match kind {
            None => ([view[[r, i]]; 2], 1.0),
            Some((layout, part)) => pair_angles(view, layout, part, amplitude, i, r),
        }
    };
    let mut order: Vec<usize> = (0..rows).filter(|&r| scaled[r] != 0.0).collect();
    order.sort_by(|&a, &b| scaled[a].abs().total_cmp(&scaled[b].abs()));
    if order.is_empty() {
        return;
    }
    let mut frequencies = Vec::with_capacity(pairs);
    for i in 0..pairs {
        // (frequency, how well it is pinned)
        let mut best: Option<(f64, f64)> = None;
        for &r in &order {
            let p = scaled[r];
            let (candidates, slope) = angles(i, r);
            let angle = match best {
                // The smallest position: below half a turn, the candidate of the
                // position's sign.
                None => {
                    let a = candidates[0].rem_euclid(TAU);
                    let a = if a > PI { a - TAU } else { a };
                    if kind.is_some_and(|(_, part)| part == CachePart::Cos) {
                        a.abs() * p.signum()
                    } else {
                        a
                    }
                }
                Some((theta, _)) => nearest_turn(&candidates, p * theta),
            };
            let score = p.abs() * slope;
            if best.is_none_or(|(_, s)| score > s) {
                best = Some((angle / p, score));
            }
        }
        match best {
            Some((theta, _)) if theta.is_finite() => frequencies.push(theta),
            _ => return,
        }
    }
    if frequencies[0] <= 0.0 {
        return;
    }
    let furthest = scaled.iter().fold(0.0f64, |m, p| m.max(p.abs()));
    let base_pair = (1..pairs)
        .rev()
        .find(|&i| frequencies[i] * furthest > 0.5)
        .unwrap_or(1);
    let make = |theta: &[f64], attention: f64, at: &[usize], torch: bool| {
        Array2::from_shape_fn((at.len(), cols), |(k, col)| {
            let r = at[k];
            let (pair, is_sin) = match kind {
                None => (col, false),
                Some((layout, part)) => {
                    let (_, pair, is_sin) = rope::cache_element(layout, part, cols, (0, 0, col));
                    (pair, is_sin)
                }
            };
            if torch {
                let angle = positions.angle_f32(r, theta[pair]);
                if kind.is_none() {
                    return f64::from(angle);
                }
                let (sin, cos) = torch_f32::sin_cos(angle);
                f64::from(if is_sin { sin } else { cos } * attention as f32)
            } else {
                let angle = positions.angle(r, DoubleF64::from_f64(theta[pair]));
                if kind.is_none() {
                    return angle;
                }
                let (sin, cos) = angle.sin_cos();
                attention * if is_sin { sin } else { cos }
            }
        })
        .into_dyn()
    };
    let orient = |table: ArrayD<f64>| table;
    let target = FrequencyTarget {
        label: format!(
            "{what}, dim {rotary}, at the {}{}",
            positions.describe(),
            if (amplitude - 1.0).abs() > 1e-6 {
                format!(", times {amplitude:.7}")
            } else {
                String::new()
            }
        ),
        table: view.view().into_dyn(),
        tolerance: search.tolerance,
        make: &make,
        orient: &orient,
        plain: false,
        rows,
        length: positions.current_length(),
        words: Some(positioned_words(kind, rotary, positions)),
        base_pair,
        amplitude: kind.map(|_| amplitude),
        torch: search.float32,
        layout: kind
            .filter(|&(_, part)| part != CachePart::CosSin)
            .map(|(layout, _)| layout),
    };
    scaled_frequencies(search, &frequencies, &target);
}
