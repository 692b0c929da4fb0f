//! RoPE angles and cos/sin caches: the pairing, the part and the attention factor a cache is multiplied by.

use super::*;
use crate::engine::TableSpec;

/// RoPE's angle table `[seq, dim/2]`, and its cos and sin caches `[seq, dim]` in either
/// pairing (Hugging Face repeats the frequencies as two halves; Llama-style caches repeat each
/// one twice).
pub(super) fn rope_tables(
    search: &mut Search,
    view: &Array2<f64>,
    orient: &dyn Fn(Array2<f64>) -> ArrayD<f64>,
    suffix: &str,
) {
    let (seq, width) = view.dim();
    if seq < 2 {
        return;
    }
    // Angles: column 0 turns by 1 radian a position, so it is the position itself.
    if width >= 2 {
        // + 0.0 turns a -0 into 0.
        let start = view[[0, 0]].round() + 0.0;
        // theta_i = base^(-i/width): pick the column that pins the base best.
        let rates: Vec<(usize, f64, f64)> = (1..width)
            .map(|i| {
                let total = view[[seq - 1, i]] - view[[0, i]];
                (i, total / (seq - 1) as f64, total)
            })
            .collect();
        let exponent = |i: usize| width as f64 / i as f64;
        if let Some((i, rate)) = best_conditioned(&rates, exponent)
            && (0.0..1e12).contains(&start)
        {
            let base = rate.powf(-exponent(i));
            search.consider_bases(
                base,
                |b| {
                    format!(
                        "RoPE angles p·θ_i, dim {}, base {b}, positions {start}..{}{suffix}",
                        2 * width,
                        start as u64 + seq as u64 - 1
                    )
                },
                view,
                orient,
                |b, rows| {
                    let params = RopeParams {
                        seq: rows,
                        dim: 2 * width,
                        base: b,
                        start: start as u64,
                    };
                    // Refused first where the table would not fit (and noted: the search
                    // then says it was cut short), as the engine refuses it.
                    let spec = TableSpec::RopeAngles {
                        params,
                        freqs: Default::default(),
                    };
                    super::noted(
                        spec.check_fits(crate::engine::available_memory_bytes())
                            .map_err(crate::engine::EngineError::from),
                    )?;
                    rope::angles(&params).ok()
                },
                None,
            );
        }
    }
    // Angles of scaled frequencies: each column's rate is its frequency.
    if width >= 2 && seq >= 2 {
        let theta: Vec<f64> = (0..width)
            .map(|i| (view[[seq - 1, i]] - view[[0, i]]) / (seq - 1) as f64)
            .collect();
        let start = (view[[0, 0]] / theta[0]).round() + 0.0;
        if theta[0] > 0.0 && (0.0..1e12).contains(&start) {
            let first = start as u64;
            let make = |theta: &[f64], _, rows: &[usize], torch: bool| {
                Array2::from_shape_fn((rows.len(), theta.len()), |(r, i)| {
                    let position = first + rows[r] as u64;
                    if torch {
                        f64::from(torch_f32::angle(position, theta[i]))
                    } else {
                        position as f64 * theta[i]
                    }
                })
                .into_dyn()
            };
            let layout = |table: ArrayD<f64>| match table.into_dimensionality::<Ix2>() {
                Ok(table) => orient(table),
                Err(e) => unreachable!("angle tables are 2-D: {e}"),
            };
            let target = FrequencyTarget {
                label: format!(
                    "RoPE angles p·θ_i, dim {}, positions {first}..{}{suffix}",
                    2 * width,
                    first + seq as u64 - 1
                ),
                table: view.view().into_dyn(),
                tolerance: search.tolerance,
                make: &make,
                orient: &layout,
                plain: false,
                rows: seq,
                length: usize::try_from(first)
                    .unwrap_or(usize::MAX)
                    .saturating_add(seq),
                words: Some(super::TableWords {
                    kind: "rope-angles",
                    options: vec![
                        ("seq", seq.to_string()),
                        ("dim", (2 * width).to_string()),
                        ("start", first.to_string()),
                    ],
                }),
                base_pair: width - 1,
                amplitude: None,
                torch: search.float32,
                layout: None,
            };
            scaled_frequencies(search, &theta, &target);
        }
    }
    if width < 4 || width % 2 != 0 {
        return;
    }
    for layout in [PairLayout::Half, PairLayout::Interleaved] {
        for part in [CachePart::Cos, CachePart::Sin] {
            rope_cache(search, view, orient, suffix, layout, part);
        }
    }
    // vLLM's cos_sin_cache: every cosine, then every sine (pairs come as [seq, R/2, 2]); and
    // torchtune's Qwen2 cache, the half layout's cos cache then its sin cache.
    for part in [CachePart::CosSin, CachePart::CosSinHalves] {
        rope_cache(search, view, orient, suffix, PairLayout::Half, part);
    }
}

/// A `[seq, 2R]` table whose quarters repeat as torchtune's Qwen2 cache repeats them (`[c, c,
/// s, s]`, each `R/2` wide) as vLLM's `[seq, R]` (`[c, s]`), or `None`.
fn halves_as_vllm(view: &Array2<f64>) -> Option<Array2<f64>> {
    let width = view.ncols();
    if width < 8 || !width.is_multiple_of(4) {
        return None;
    }
    let q = width / 4;
    let same = |a: usize, b: usize| {
        view.slice(ndarray::s![.., a..a + q]) == view.slice(ndarray::s![.., b..b + q])
    };
    if !(same(0, q) && same(2 * q, 3 * q)) {
        return None;
    }
    let kept: Vec<usize> = (0..q).chain(2 * q..3 * q).collect();
    Some(view.select(ndarray::Axis(1), &kept))
}

/// A cos or sin cache `[seq, R]` of positions `0..seq` in `layout`, read as its amplitude (the
/// attention factor it was multiplied by) and each pair's frequency, then identified through
/// The `poslab table` words of a table at the positions the identification was given: its
/// kind, width and layout or format, the positions (and their scale) the call's own.
pub(super) fn positioned_words(
    kind: Option<(PairLayout, CachePart)>,
    rotary: usize,
    positions: &crate::encoding::positions::Positions,
) -> super::TableWords {
    let mut words = match kind {
        None => super::TableWords {
            kind: "rope-angles",
            options: vec![("dim", rotary.to_string())],
        },
        Some((layout, part)) => {
            let mut words = cache_words(part, layout, 1, rotary, 0);
            words.options.retain(|(id, _)| *id != "seq");
            words
        }
    };
    words
        .options
        .push(("positions", super::FROM_THE_CALL.to_owned()));
    if positions.scale != 1.0 {
        words
            .options
            .push(("position_scale", super::FROM_THE_CALL.to_owned()));
    }
    words
}

/// The `poslab table` words of a cache's shape: its kind, format or layout, length, width and
/// start.
fn cache_words(
    part: CachePart,
    layout: PairLayout,
    seq: usize,
    rotary: usize,
    first: u64,
) -> super::TableWords {
    let (kind, format) = match part {
        CachePart::Cos => ("rope-cos", None),
        CachePart::Sin => ("rope-sin", None),
        CachePart::CosSin if part.is_pairs(layout) => ("rope-cos-sin", Some("pairs")),
        CachePart::CosSin => ("rope-cos-sin", Some("vllm")),
        CachePart::CosSinHalves => ("rope-cos-sin", Some("halves")),
    };
    let mut options = vec![("seq", seq.to_string()), ("dim", rotary.to_string())];
    match format {
        Some(format) => options.push(("format", format.to_owned())),
        None => options.push((
            "layout",
            match layout {
                PairLayout::Half => "half",
                PairLayout::Interleaved => "interleaved",
            }
            .to_owned(),
        )),
    }
    if first > 0 {
        options.push(("start", first.to_string()));
    }
    super::TableWords { kind, options }
}

/// those frequencies: plain at any base (NTK-aware and dynamic NTK give unround bases), or
/// linear, Llama 3 or YaRN scaling, each exactly or as PyTorch computes it in float32.
pub(super) fn rope_cache(
    search: &mut Search,
    view: &Array2<f64>,
    orient: &dyn Fn(Array2<f64>) -> ArrayD<f64>,
    suffix: &str,
    layout: PairLayout,
    part: CachePart,
) {
    let (seq, width) = view.dim();
    // torchtune's Qwen2 cache is vLLM's with each half repeated: read as that, compared whole.
    let (read_view, read_part, rotary) = if part == CachePart::CosSinHalves {
        let Some(reduced) = halves_as_vllm(view) else {
            return;
        };
        (
            std::borrow::Cow::Owned(reduced),
            CachePart::CosSin,
            width / 2,
        )
    } else {
        (std::borrow::Cow::Borrowed(view), part, width)
    };
    let Some((reading, first)) = read_cache(&read_view, layout, read_part, search.noise)
        .map(|reading| (reading, 0))
        .or_else(|| read_offset_cache(&read_view, layout, read_part, search.noise))
    else {
        return;
    };
    let name = match part {
        CachePart::Cos => "cos",
        CachePart::Sin => "sin",
        CachePart::CosSin | CachePart::CosSinHalves => "cos-sin",
    };
    // Laid out as `[seq, R]` (pairs too: the caller gives them back their third axis).
    let make = |theta: &[f64], attention: f64, rows: &[usize], torch: bool| {
        Array2::from_shape_fn((rows.len(), width), |(r, col)| {
            let (_, pair, is_sin) = rope::cache_element(layout, part, rotary, (0, 0, col));
            let (pair, is_sin) = if part.is_pairs(layout) {
                (col / 2, col % 2 == 1)
            } else {
                (pair, is_sin)
            };
            let position = first + rows[r] as u64;
            if torch {
                let (sin, cos) = torch_f32::sin_cos(torch_f32::angle(position, theta[pair]));
                f64::from(if is_sin { sin } else { cos } * attention as f32)
            } else {
                let (sin, cos) = (position as f64 * theta[pair]).sin_cos();
                attention * if is_sin { sin } else { cos }
            }
        })
        .into_dyn()
    };
    let layout_of = |table: ArrayD<f64>| match table.into_dimensionality::<Ix2>() {
        Ok(table) => orient(table),
        Err(e) => unreachable!("caches are 2-D: {e}"),
    };
    let layout_name = match (part, layout) {
        (CachePart::CosSinHalves, _) => {
            "the half layout's cos cache, then its sin cache (--format halves: torchtune's Qwen2)"
        }
        (CachePart::CosSin, PairLayout::Half) => {
            "vLLM's layout (every cosine, then every sine: --format vllm)"
        }
        (CachePart::CosSin, PairLayout::Interleaved) => {
            "(cos, sin) pairs (--format pairs: torchtune, Meta's view_as_real)"
        }
        (_, PairLayout::Half) => "half layout (Hugging Face: frequencies repeated as two halves)",
        (_, PairLayout::Interleaved) => "interleaved layout (each frequency twice in a row)",
    };
    let scaled = if (reading.amplitude - 1.0).abs() > 1e-6 {
        // As many digits as the file holds.
        let digits = if search.noise > 0.0 { 3 } else { 7 };
        format!(", times {:.digits$}", reading.amplitude)
    } else {
        String::new()
    };
    let target = FrequencyTarget {
        label: format!(
            "RoPE {name} cache{scaled}, {layout_name}, dim {rotary} (the rotary part of a head), positions {first}..{}{starts}{suffix}",
            first + seq as u64 - 1,
            starts = if first > 0 {
                format!(" (--start {first})")
            } else {
                String::new()
            }
        ),
        table: view.view().into_dyn(),
        tolerance: search.tolerance,
        make: &make,
        orient: &layout_of,
        plain: true,
        rows: seq,
        length: usize::try_from(first)
            .unwrap_or(usize::MAX)
            .saturating_add(seq),
        words: Some(cache_words(part, layout, seq, rotary, first)),
        base_pair: reading.base_pair,
        amplitude: Some(reading.amplitude),
        torch: search.float32,
        // vLLM's cos-sin cache keeps its layout whatever the model's pairing.
        layout: (!matches!(part, CachePart::CosSin | CachePart::CosSinHalves)).then_some(layout),
    };
    scaled_frequencies(search, &reading.frequencies, &target);
}

/// What a cache says about itself.
pub(super) struct CacheReading {
    /// The factor every value is multiplied by (YaRN's and LongRoPE's attention factor).
    pub(super) amplitude: f64,
    /// Each pair's frequency, in radians per position.
    pub(super) frequencies: Vec<f64>,
    /// The slowest pair whose angle turned far enough to be read well.
    pub(super) base_pair: usize,
}

/// Reads a cache of positions from 0: the amplitude from the first rows, and each pair's
/// frequency from the row where its angle is read best (where cos or sin is steep enough for
/// float32 noise to matter least), within the first stretch where the column is monotonic so
/// that acos or asin inverts it.
/// `noise` is how far the file's rounding may move a value (0 for float32 and float64): with
/// it, pairs too slow for their angle to be read (a float16 cos stays 1.0 where the angle is
/// below 0.03) are continued geometrically from the pairs read well, and an amplitude within
/// the noise of 1 is read as 1.
pub(super) fn read_cache(
    view: &Array2<f64>,
    layout: PairLayout,
    part: CachePart,
    noise: f64,
) -> Option<CacheReading> {
    let (seq, width) = view.dim();
    if seq < 3 || width < 4 {
        return None;
    }
    let pairs = width / 2;
    let column = |i: usize| view.column(layout.pair(i, width).0);
    let first = view.row(0);
    let amplitude = match part {
        // Position 0 is cos 0 times the factor, in every column.
        CachePart::Cos => {
            let a = first[0];
            if !(a > 0.0 && first.iter().all(|&v| (v - a).abs() <= 1e-5 * a)) {
                return None;
            }
            a
        }
        // The factor in every cosine's column, 0 in every sine's.
        CachePart::CosSin => {
            let a = first[0];
            let holds = (0..pairs).all(|i| {
                let (cos, sin) = layout.pair(i, width);
                (first[cos] - a).abs() <= 1e-5 * a && first[sin].abs() <= 1e-5
            });
            if !(a > 0.0 && holds) {
                return None;
            }
            a
        }
        // Not read off a file yet: torchtune's Qwen2 layout is made and checked, not identified.
        CachePart::CosSinHalves => return None,
        // sin 0 = 0 everywhere; the fastest pair gives s1 = A sin θ, s2 = A sin 2θ = 2 s1 cos θ.
        CachePart::Sin => {
            if first.iter().any(|v| v.abs() > 1e-5) {
                return None;
            }
            let fastest = column(0);
            let (s1, s2) = (fastest[1], fastest[2]);
            let cos_theta = s2 / (2.0 * s1);
            if !(s1 > 1e-3 && cos_theta.abs() < 1.0) {
                return None;
            }
            s1 / (1.0 - cos_theta * cos_theta).sqrt()
        }
    };
    if !(amplitude.is_finite() && amplitude > 0.0) {
        return None;
    }
    // No factor at all, as far as a narrow file can tell.
    let amplitude = if (amplitude - 1.0).abs() <= 4.0 * noise {
        1.0
    } else {
        amplitude
    };
    // A cos-sin cache is read through its cosines.
    let is_cos = part != CachePart::Sin;
    // Pairs from the first whose angle reads worse than 5% (narrow files only).
    let mut unreadable_from = None;
    let mut frequencies = Vec::with_capacity(pairs);
    let mut base_pair = 1;
    for i in 0..pairs {
        let values = column(i);
        // (angle read, its position), at the best-conditioned row so far.
        let mut best: Option<(f64, usize, f64)> = None;
        if part == CachePart::CosSin {
            // Both halves of the pair: atan2 reads any angle to the file's precision, the
            // slowest pairs' too, whose cosine alone stays 1.0 in float32 over a short cache.
            let (cos_column, sin_column) = layout.pair(i, width);
            let mut previous = 0.0;
            for p in 1..seq {
                let angle = view[[p, sin_column]].atan2(view[[p, cos_column]]);
                if angle < previous - 1e-6 {
                    break;
                }
                previous = angle;
                // Its relative error goes as 1 / angle.
                if best.is_none_or(|(_, _, s)| angle > s) {
                    best = Some((angle, p, angle));
                }
            }
        }
        for p in (1..seq).filter(|_| part != CachePart::CosSin) {
            let step = values[p] - values[p - 1];
            let monotonic = if is_cos {
                step <= 1e-5 * amplitude
            } else {
                step >= -1e-5 * amplitude
            };
            if !monotonic {
                break;
            }
            let ratio = (values[p] / amplitude).clamp(-1.0, 1.0);
            let angle = if is_cos { ratio.acos() } else { ratio.asin() };
            // The relative error of the angle goes as 1 / (angle |d value / d angle|).
            let score = angle * if is_cos { angle.sin() } else { angle.cos() };
            if best.is_none_or(|(_, _, s)| score > s) {
                best = Some((angle, p, score));
            }
        }
        let (angle, p, score) = best?;
        // The angle's relative error is about noise / score.
        if noise > 0.0 && unreadable_from.is_none() && noise > 0.05 * score {
            unreadable_from = Some(i);
        }
        if angle > 0.5 && i > 0 {
            base_pair = i;
        }
        frequencies.push(angle / p as f64);
    }
    let (frequencies, base_pair) = continued(frequencies, unreadable_from, base_pair)?;
    Some(CacheReading {
        amplitude,
        frequencies,
        base_pair,
    })
}

/// Frequencies with the pairs from `unreadable_from` on (or from the first read as 0 or
/// less) continued geometrically from the pairs read well, and the base pair kept among
/// those. A pair whose cosine never left the amplitude in float32 (LongRoPE's slowest pairs
/// over a short cache turn by 1e-4 rad) is unread, not of frequency 0.
fn continued(
    mut frequencies: Vec<f64>,
    unreadable_from: Option<usize>,
    base_pair: usize,
) -> Option<(Vec<f64>, usize)> {
    let unreadable_from = unreadable_from.or_else(|| frequencies.iter().position(|&f| f <= 0.0));
    let Some(from) = unreadable_from else {
        return Some((frequencies, base_pair));
    };
    // The ratio between neighbouring frequencies, over the pairs read well.
    let last = from.checked_sub(1).filter(|&last| last >= 2)?;
    let ratio = (frequencies[last] / frequencies[0]).powf(1.0 / last as f64);
    if !(ratio.is_finite() && ratio > 0.0 && ratio < 1.0) {
        return None;
    }
    for i in from..frequencies.len() {
        frequencies[i] = frequencies[last] * ratio.powi((i - last) as i32);
    }
    Some((frequencies, base_pair.min(last)))
}

/// Reads a cache whose first row is not position 0 (a window of a longer cache: a chunk of
/// prompt after a KV-cache offset) as [`read_cache`] reads one from 0, with its first
/// position. Each pair's frequency comes from the identity `v[p-k] + v[p+k] = 2 cos(kθ) v[p]`,
/// which holds at any start (steps doubling, each unwrapped by the last reading); its phase
/// at the first row from two rows; the start from the phases, slow pairs first, each pinning
/// it well enough for the next faster pair to refine. Only an integer start is a reading
/// (fractional positions are `identify --positions`'s). Float32 and float64 files only.
pub(super) fn read_offset_cache(
    view: &Array2<f64>,
    layout: PairLayout,
    part: CachePart,
    noise: f64,
) -> Option<(CacheReading, u64)> {
    use std::f64::consts::{FRAC_PI_2, TAU};
    let (seq, width) = view.dim();
    if seq < 4 || width < 4 || noise > 0.0 {
        return None;
    }
    let pairs = width / 2;
    // Each pair's values as the cosine of a phase (a sine is a cosine a quarter turn behind),
    // the two columns of a cos or sin pair holding the same value.
    let mut columns = Vec::with_capacity(pairs);
    for i in 0..pairs {
        let (a, b) = layout.pair(i, width);
        let (a, b) = (view.column(a), view.column(b));
        columns.push(match part {
            CachePart::CosSin => None,
            _ => {
                let scale = a.iter().fold(0.0f64, |m, v| m.max(v.abs()));
                if scale.is_nan()
                    || scale <= 0.0
                    || a.iter().zip(b).any(|(x, y)| (x - y).abs() > 1e-6 * scale)
                {
                    return None;
                }
                Some(a)
            }
        });
    }
    let mut frequencies = Vec::with_capacity(pairs);
    let mut phases = Vec::with_capacity(pairs);
    let mut amplitudes = Vec::with_capacity(pairs);
    for (i, column) in columns.iter().enumerate() {
        let (theta, phase, amplitude) = match column {
            // vLLM's and the pairs' caches hold both values: the phase of each row is read
            // directly, and unwrapped along the rows.
            None => {
                let (c, s) = layout.pair(i, width);
                let phase = |r: usize| pair_angles(view, layout, part, 1.0, i, r).0[0];
                let mut total = 0.0;
                for r in 1..seq {
                    total += (phase(r) - phase(r - 1) + std::f64::consts::PI).rem_euclid(TAU)
                        - std::f64::consts::PI;
                }
                let amplitude = view[[0, c]].hypot(view[[0, s]]);
                (total / (seq - 1) as f64, phase(0), amplitude)
            }
            Some(v) => {
                let theta = recurrence_frequency(v.view())?;
                // v[0] = A cos φ and v[k] = A cos(φ + kθ), at the k whose kθ is furthest
                // from a multiple of π.
                let k = (1..seq)
                    .max_by(|&a, &b| {
                        (a as f64 * theta)
                            .sin()
                            .abs()
                            .total_cmp(&(b as f64 * theta).sin().abs())
                    })
                    .unwrap_or(1);
                let (cos_k, sin_k) = ((k as f64 * theta).cos(), (k as f64 * theta).sin());
                let a_sin = (v[0] * cos_k - v[k]) / sin_k;
                let phase = a_sin.atan2(v[0]);
                let phase = if part == CachePart::Sin {
                    phase + FRAC_PI_2
                } else {
                    phase
                };
                (theta, phase, v[0].hypot(a_sin))
            }
        };
        frequencies.push(theta);
        phases.push(phase.rem_euclid(TAU));
        amplitudes.push(amplitude);
    }
    let amplitude = amplitudes[0];
    if !(amplitude.is_finite() && amplitude > 0.0 && frequencies[0].is_finite())
        || frequencies[0] <= 0.0
    {
        return None;
    }
    // Pairs that turned far enough over the file to be read, slowest last.
    let span = (seq - 1) as f64;
    let readable = frequencies
        .iter()
        .take_while(|&&f| f.is_finite() && f * span > 1e-3)
        .count();
    let rounded = offset_start(&frequencies, &phases, readable, span)?;
    // With the start known, each pair's angle at a row over that row's position is its
    // frequency, far more precisely than the recurrence reads it over a short window (a
    // slow pair at position 5000 turned 1000 times further than over 64 rows): at the row
    // where its value pins the angle best, the turn and sign nearest the reading so far.
    let last = rounded + span;
    let mut unreadable_from = None;
    for (i, frequency) in frequencies.iter_mut().enumerate() {
        // Rows far apart hardly differ in position here; the one the value reads best.
        let (r, (candidates, _)) = (0..seq)
            .map(|r| (r, pair_angles(view, layout, part, amplitude, i, r)))
            .max_by(|(_, (_, a)), (_, (_, b))| a.total_cmp(b))?;
        let position = rounded + r as f64;
        let nearest = nearest_turn(&candidates, position * *frequency);
        // A cosine that stays within a few ulps of its amplitude tells no angle.
        if part == CachePart::Cos && last * nearest / position < 3e-3 {
            unreadable_from.get_or_insert(i);
        }
        *frequency = nearest / position;
    }
    let base_pair = (1..pairs)
        .rev()
        .find(|&i| frequencies[i] * last > 0.5)
        .unwrap_or(1);
    let (frequencies, base_pair) = continued(frequencies, unreadable_from, base_pair)?;
    // The amplitude within float32 noise of 1 is 1.
    let amplitude = if (amplitude - 1.0).abs() <= 1e-6 {
        1.0
    } else {
        amplitude
    };
    Some((
        CacheReading {
            amplitude,
            frequencies,
            base_pair,
        },
        rounded as u64,
    ))
}

/// The first position of a cache whose pairs turn at `frequencies` with `phases` at its first
/// row, the first `readable` of them far enough over its `span` rows to be read.
fn offset_start(frequencies: &[f64], phases: &[f64], readable: usize, span: f64) -> Option<f64> {
    use std::f64::consts::TAU;
    // The start: the slowest readable pair's phase over its frequency, after some whole
    // turns, then each faster pair's turns counted from it. Each count of the slowest pair's
    // turns (up to positions of 2^25) gives a start; the one the pairs read well agree on is
    // the reading.
    let slowest = readable.checked_sub(1)?;
    let start_after = |turns: f64| {
        let mut start = (phases[slowest] + TAU * turns) / frequencies[slowest];
        for i in (0..readable).rev() {
            let turns = ((start * frequencies[i] - phases[i]) / TAU).round();
            start = (phases[i] + TAU * turns) / frequencies[i];
        }
        start
    };
    let disagreement = |start: f64| -> f64 {
        (0..readable)
            .filter(|&i| frequencies[i] * span > 0.5)
            .map(|i| {
                let off = (start * frequencies[i] - phases[i]).rem_euclid(TAU);
                off.min(TAU - off).powi(2)
            })
            .sum()
    };
    let most_turns = ((f64::from(1u32 << 25) * frequencies[slowest]) / TAU)
        .floor()
        .min(4096.0);
    let start = (0..=most_turns as u32)
        .map(|turns| start_after(f64::from(turns)))
        .min_by(|a, b| disagreement(*a).total_cmp(&disagreement(*b)))?;
    let rounded = start.round();
    ((1.0..1e12).contains(&rounded) && (start - rounded).abs() <= 0.05).then_some(rounded)
}

/// The frequency of a sinusoid sampled at whole steps, `v[p] = A cos(φ + pθ)` with
/// `0 < θ < π`, whatever its phase: from `cos(kθ) = (v[p-k] + v[p+k]) / (2 v[p])` at `k = 1`,
/// then at doubling `k`, each reading's `kθ` unwrapped by the best so far, the best being the
/// one with the largest `kθ |sin kθ|` (its relative error goes as the inverse), each at the
/// `p` of the largest `|v[p]|`.
fn recurrence_frequency(v: ndarray::ArrayView1<'_, f64>) -> Option<f64> {
    let seq = v.len();
    let largest = v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let mut best: Option<(f64, f64)> = None;
    let mut k = 1;
    while 2 * k < seq {
        let p = (k..seq - k).max_by(|&a, &b| v[a].abs().total_cmp(&v[b].abs()))?;
        if v[p].abs() >= 0.5 * largest {
            let c = ((v[p - k] + v[p + k]) / (2.0 * v[p])).clamp(-1.0, 1.0);
            let principal = c.acos();
            let angle = match best {
                None => principal,
                Some((theta, _)) => nearest_turn(&[principal, -principal], k as f64 * theta),
            };
            let score = angle * angle.sin().abs();
            if best.is_none_or(|(_, s)| score > s) {
                best = Some((angle / k as f64, score));
            }
        }
        k *= 2;
    }
    best.map(|(theta, _)| theta).filter(|t| t.is_finite())
}

/// Of `candidates`, each give or take a whole turn or two around `guess`, the angle nearest
/// `guess`: how an angle known but for its turns (and sign) is unwrapped by an estimate.
pub(super) fn nearest_turn(candidates: &[f64], guess: f64) -> f64 {
    use std::f64::consts::TAU;
    let turns = (guess / TAU).round();
    [turns - 1.0, turns, turns + 1.0]
        .into_iter()
        .flat_map(|n| candidates.iter().map(move |a| a + TAU * n))
        .min_by(|a, b| (a - guess).abs().total_cmp(&(b - guess).abs()))
        .unwrap_or(guess)
}

/// The angles pair `i` of a cache in `layout` may have at row `r`, given the cache's
/// amplitude: ±acos of a cosine, asin and π - asin of a sine, a cos-sin pair's atan2 (twice);
/// and how well the value pins them (the slope of the value against the angle).
pub(super) fn pair_angles(
    view: &Array2<f64>,
    layout: PairLayout,
    part: CachePart,
    amplitude: f64,
    i: usize,
    r: usize,
) -> ([f64; 2], f64) {
    let (first, second) = layout.pair(i, view.ncols());
    let value = || (view[[r, first]] / amplitude).clamp(-1.0, 1.0);
    match part {
        // The pair's cosine and sine side by side, or R apart (the half layout of 2R columns).
        CachePart::CosSin | CachePart::CosSinHalves => {
            let a = view[[r, second]].atan2(view[[r, first]]);
            ([a, a], 1.0)
        }
        CachePart::Cos => {
            let a = value().acos();
            ([a, -a], a.sin().abs())
        }
        CachePart::Sin => {
            let a = value().asin();
            ([a, std::f64::consts::PI - a], a.cos().abs())
        }
    }
}
