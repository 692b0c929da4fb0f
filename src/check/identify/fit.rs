//! Parameters fitted from a table's values: the round bases near a fitted one, the best
//! conditioned columns to fit from, a pair's angle per row, and the start position its phases
//! give.

use super::*;

/// The base rounded to 1, 2 and 3 significant digits, then as fitted: a fitted 9999.7 is
/// reported as 10000 when 10000 fits too.
pub(super) fn base_choices(base: f64) -> Vec<f64> {
    base_choices_to(base, 3)
}

/// [`base_choices`] with up to `digits` significant digits.
pub(super) fn base_choices_to(base: f64, digits: i32) -> Vec<f64> {
    let mut choices = round_choices_to(base, digits);
    // The fitted value comes last and stays whatever it is; a rounding to 1 or below is no base.
    choices.pop();
    choices.retain(|&b| b > 1.0);
    choices.push(base);
    choices
}

/// Of pairs `(index, rate, total angle over the table)`, the one whose rate pins the base best:
/// the base is `rate^(-exponent(index))`, so its relative error is the rate's (noise over the
/// total angle) times the exponent.
pub(super) fn best_conditioned(
    rates: &[(usize, f64, f64)],
    exponent: impl Fn(usize) -> f64,
) -> Option<(usize, f64)> {
    rates
        .iter()
        .filter(|(i, rate, total)| *i >= 1 && *rate > 0.0 && *total > 1e-9)
        .min_by(|a, b| {
            let cost = |(i, _, total): &(usize, f64, f64)| exponent(*i).abs() / total;
            cost(a).total_cmp(&cost(b))
        })
        .map(|&(i, rate, _)| (i, rate))
}

/// The mean step of an angle sequence `atan2(s, c)`, unwrapped; and its first angle in
/// `(-π, π]`.
pub(super) fn angle_rate(sin: &[f64], cos: &[f64]) -> Option<(f64, f64)> {
    if sin.len() < 2 {
        return None;
    }
    let angles: Vec<f64> = sin.iter().zip(cos).map(|(s, c)| s.atan2(*c)).collect();
    let total: f64 = angles
        .windows(2)
        .map(|w| {
            let step = w[1] - w[0];
            step - std::f64::consts::TAU * (step / std::f64::consts::TAU).round()
        })
        .sum();
    Some((total / (angles.len() - 1) as f64, angles[0]))
}

/// Turns of the slowest pair searched for a sinusoidal table's start: starts up to this many
/// of its wavelengths (2.3 * 10^8 positions at base 10000 and d = 64) are found.
const MAX_START_TURNS: i64 = 5000;

/// The first position of a table whose pairs turn by `freqs` and stand at `phases` (their
/// angles in the first row). The slowest pair gives the position within one of its turns;
/// for each candidate turn the position is refined pair by pair, slow to fast (each pins it
/// closer than the next one's wavelength), and kept when it ends on a whole number that
/// every pair agrees with, most closely of all such numbers.
pub(super) fn resolve_start(freqs: &[f64], phases: &[f64]) -> Option<u64> {
    let tau = std::f64::consts::TAU;
    let mut order: Vec<usize> = (0..freqs.len()).filter(|&i| freqs[i] > 0.0).collect();
    order.sort_by(|&a, &b| freqs[a].total_cmp(&freqs[b]));
    // At most 16 pairs, spread from the slowest to the fastest.
    let count = order.len();
    if count == 0 {
        return None;
    }
    let chain: Vec<usize> = if count <= 16 {
        order
    } else {
        let mut picked: Vec<usize> = (0..16).map(|k| order[k * (count - 1) / 15]).collect();
        picked.dedup();
        picked
    };
    let wrap = |angle: f64| {
        let a = angle.rem_euclid(tau);
        if a > std::f64::consts::PI { a - tau } else { a }
    };
    let slow = chain[0];
    let period = tau / freqs[slow];
    let within = phases[slow].rem_euclid(tau) / freqs[slow];
    // The candidate every pair agrees with best: with few pairs, near-whole numbers of turns
    // (710 positions are 113.00001 turns at 1 radian per position) make several candidates
    // agree roughly, and only the true start agrees to the table's precision.
    let mut best: Option<(u64, f64)> = None;
    for k in -1..=MAX_START_TURNS {
        let mut position = within + k as f64 * period;
        for &i in &chain[1..] {
            position += wrap(phases[i] - position * freqs[i]) / freqs[i];
        }
        let whole = position.round();
        if whole < 0.0 || (position - whole).abs() > 0.1 {
            continue;
        }
        let residual = chain
            .iter()
            .map(|&i| wrap(whole * freqs[i] - phases[i]).abs())
            .fold(0.0, f64::max);
        if residual < 2e-3 && best.is_none_or(|(_, least)| residual < least) {
            best = Some((whole as u64, residual));
        }
    }
    best.map(|(start, _)| start)
}
