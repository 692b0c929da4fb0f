//! LongRoPE read back from a table's frequencies for a model poslab does not ship: one factor
//! per pair, `1 / (factor_i · base^(2i/R))`, recovered under the round base that LongRoPE's own
//! constraints and roundness single out, each factor the roundest that still reproduces the
//! file, and named as the short or the long factors for the file's length.
//!
//! Free per-pair factors explain any frequencies, so the reading is held to what LongRoPE's
//! search keeps: factors of at least 1 (it only interpolates) that do not fall from one pair to
//! the next. Those rule out every base above the right one; below it the factors stay valid
//! but stop being round, which is what tells the right base from a smaller one.

use super::*;

/// Relative changes of a frequency tried, smallest first, to find how finely the file pins it
/// (a float32 cos cache pins its slowest pairs only to a few percent).
const PIN_STEPS: [f64; 9] = [1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.03, 0.1, 0.3];

/// How far a frequency may be from its factor's exact one when the library held it in float32
/// (two float32 steps): equal factors' frequencies differ by that much in a PyTorch table.
const FLOAT32_FREQUENCY: f64 = 2.4e-7;

/// How loosely (relative, either way) the file may pin a factor before the reading says so.
const LOOSE_PIN: f64 = 1e-3;

/// The most significant digits a factor counts as round with (Phi-3's 11.13, 54.94).
const ROUND_DIGITS: i32 = 4;

/// The longest context a reading of the attention factor may imply (LongRoPE's paper reaches
/// 2048k positions).
const LONGEST_CONTEXT: f64 = 2_097_152.0;

/// A LongRoPE reading of a table's frequencies.
pub(super) struct LongropeReading {
    pub(super) base: f64,
    /// One factor per pair, each the roundest that reproduces the file.
    pub(super) factors: Vec<f64>,
    /// Whether every factor is round (else some are the fitted values).
    pub(super) all_round: bool,
    /// How many factors are round under `base`.
    pub(super) round_count: usize,
    /// The frequencies to compute it with (both lists are `factors`).
    pub(super) freqs: RopeFrequencies,
    /// What the file's length makes of the factors, and what the attention factor says.
    pub(super) length_note: String,
    /// The factors are those of a float32 file, held as float32 values.
    pub(super) float32: bool,
    /// Pairs whose factor the file pins only loosely (to 0.1% or worse either way): their
    /// angles turn too little over its positions.
    pub(super) loose: Vec<usize>,
}

/// `values` (each pair's frequency as read) read as LongRoPE; `None` where no round base gives
/// factors LongRoPE's search would keep with at least a quarter of them (and two) round, or
/// where they are all equal (a plain or linear scaling, read elsewhere). `strict` is how closely a rounded factor must reproduce the file.
/// The most pairs a LongRoPE reading is tried for: its factors are fitted pair by pair, each
/// trial remaking the table (time grows with the square of the pairs), and real models rotate
/// at most 256 pairs (a head of 512).
const MAX_PAIRS: usize = 1024;

pub(super) fn longrope_reading(
    values: &[f64],
    target: &FrequencyTarget<'_>,
    strict: Tolerance,
) -> Option<LongropeReading> {
    let n = values.len();
    if !(2..=MAX_PAIRS).contains(&n) || values.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
        return None;
    }
    let attention = target.amplitude.unwrap_or(1.0);
    let rows: Vec<usize> = probe_rows(target.rows).unwrap_or_else(|| (0..target.rows).collect());
    let loaded = if target.rows == 0 {
        target.table.to_owned()
    } else {
        target.table.select(ndarray::Axis(0), &rows)
    };
    let make = |theta: &[f64]| (target.make)(theta, attention, &rows, target.torch);
    // A table the frequencies as read do not nearly reproduce is no RoPE table of per-pair
    // frequencies at all (their reading is off by float32 steps, not by the table's range).
    let largest = loaded.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let as_read = make(values);
    let read_error = as_read
        .iter()
        .zip(&loaded)
        .fold(0.0f64, |m, (r, l)| m.max((r - l).abs()));
    if read_error.is_nan() || read_error > FLOAT32_PROBE_MISS * largest {
        return None;
    }
    let pins = pins(values, &as_read, &make, &loaded, strict);
    let mut best: Option<(usize, f64, Vec<f64>, Vec<f64>)> = None;
    for base in ROUND_BASES {
        let form = FactorForm::new(base, n, target.torch);
        let fitted: Vec<f64> = form.powers.iter().zip(values).map(|(p, v)| p / v).collect();
        // At least 1 and non-decreasing, as far as the file pins each factor (a factor
        // divides its frequency: a lower frequency is a larger factor).
        let highest_allowed = |i: usize| fitted[i] / (1.0 - pins[i].0.max(FLOAT32_FREQUENCY));
        let lowest_allowed = |i: usize| fitted[i] / (1.0 + pins[i].1.max(FLOAT32_FREQUENCY));
        let valid = fitted.iter().all(|f| f.is_finite())
            && (0..n).all(|i| highest_allowed(i) >= 1.0)
            && (1..n).all(|i| highest_allowed(i) >= lowest_allowed(i - 1));
        let (lowest, highest) = fitted.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &f| {
            (lo.min(f), hi.max(f))
        });
        // Equal factors are plain RoPE or linear scaling, read elsewhere.
        if !valid || highest <= lowest * (1.0 + 1e-4) {
            continue;
        }
        let theta_of = |factors: &[f64]| form.frequencies(factors);
        let (factors, round_count) = roundest_factors(&fitted, &theta_of, &make, &loaded, strict);
        if best
            .as_ref()
            .is_none_or(|(count, _, _, _)| round_count > *count)
        {
            best = Some((round_count, base, fitted, factors));
        }
    }
    let (round_count, base, mut fitted, factors) = best?;
    let form = FactorForm::new(base, n, target.torch);
    let theta_of = |factors: &[f64]| form.frequencies(factors);
    // A float32 file pins its fast pairs' factors to the float32 value the library held
    // (Phi-3's configs hold 1.5999999, not 1.6): each fit moved to the float32 factor that
    // reproduces its pair best, before any is rounded.
    // (An exact file's factors were rounded in the search already.)
    let (factors, round_count) = if target.torch {
        nearest_float32_factors(&mut fitted, &theta_of, &make, &loaded);
        roundest_factors(&fitted, &theta_of, &make, &loaded, strict)
    } else {
        (factors, round_count)
    };
    // Factors that are round under no round base are any frequencies at all, not a searched
    // LongRoPE list (Phi-3's long lists are round for about half their pairs).
    if round_count < (n / 4).max(2) {
        return None;
    }
    let all_round = round_count == n;
    let explanations = attention_explanations(attention);
    let (factor, attention_factor, original) = match explanations.first() {
        Some(&(original, factor)) => (Some(factor), None, original),
        // No round context explains the factor (or there is none): given as it is, with an
        // original context that picks the one list both fields hold.
        None => (None, Some(attention), target.rows.max(1)),
    };
    let length_note = length_note(target.rows, attention, &explanations);
    let freqs = RopeFrequencies {
        rotary_dim: None,
        scaling: RopeScaling {
            kind: ScalingKind::Longrope,
            factor,
            attention_factor,
            original_max_position_embeddings: Some(original),
            long_factor: Some(factors.clone()),
            short_factor: Some(factors.clone()),
            ..Default::default()
        },
        given: None,
    };
    Some(LongropeReading {
        base,
        factors,
        all_round,
        round_count,
        freqs,
        length_note,
        float32: target.torch,
        loose: (0..n)
            .filter(|&i| pins[i].0.min(pins[i].1) >= LOOSE_PIN)
            .collect(),
    })
}

/// How a base's factors become frequencies: `base^(-2i/R) / factor` exactly, or for a float32
/// file as PyTorch forms them, `1 / (f32(factor) · base^(2i/R))` in float32, so that its
/// float32 angles are reproduced rather than approximated.
struct FactorForm {
    powers: Vec<f64>,
    /// PyTorch's float32 powers, for a float32 file.
    powers32: Option<Vec<f32>>,
}

impl FactorForm {
    fn new(base: f64, pairs: usize, torch: bool) -> Self {
        Self {
            powers: (0..pairs)
                .map(|i| base.powf(-(i as f64) / pairs as f64))
                .collect(),
            powers32: torch
                .then(|| torch_f32::powers(pairs, 2 * pairs, base, torch_f32::AVX2_BLOCK)),
        }
    }

    fn frequencies(&self, factors: &[f64]) -> Vec<f64> {
        match &self.powers32 {
            Some(powers32) => factors
                .iter()
                .zip(powers32)
                .map(|(&f, &p)| f64::from(1.0 / (f as f32 * p)))
                .collect(),
            None => factors
                .iter()
                .zip(&self.powers)
                .map(|(f, p)| p / f)
                .collect(),
        }
    }
}

/// The most float32 steps a factor's fit is moved by in search of the float32 value that
/// reproduces its pair best.
const FLOAT32_SEARCH: usize = 16;

/// Moves each factor to the float32 value within [`FLOAT32_SEARCH`] steps of its fit that
/// reproduces the file's columns of its pair best (the nearest of equals).
fn nearest_float32_factors(
    factors: &mut [f64],
    theta_of: &dyn Fn(&[f64]) -> Vec<f64>,
    make: &dyn Fn(&[f64]) -> ArrayD<f64>,
    loaded: &ArrayD<f64>,
) {
    for factor in factors.iter_mut() {
        *factor = f64::from(*factor as f32);
    }
    let mut reference = make(&theta_of(factors));
    for i in 0..factors.len() {
        let center = (factors[i] as f32).to_bits();
        let mut best: Option<(f64, ArrayD<f64>, f64)> = None;
        let mut best_error = f64::INFINITY;
        for distance in 1..=FLOAT32_SEARCH as u32 {
            for bits in [center.wrapping_add(distance), center.wrapping_sub(distance)] {
                let value = f64::from(f32::from_bits(bits));
                if !(value.is_finite() && value > 0.0) {
                    continue;
                }
                let mut trial = factors.to_vec();
                trial[i] = value;
                let made = make(&theta_of(&trial));
                let (trial_error, current_error) = errors_where_changed(&made, &reference, loaded);
                if trial_error < current_error.min(best_error) {
                    best_error = trial_error;
                    best = Some((value, made, trial_error));
                }
            }
        }
        if let Some((value, made, _)) = best {
            factors[i] = value;
            reference = made;
        }
    }
}

/// The largest errors against `loaded` of `made` and of `reference` over the elements where
/// they differ (one pair's columns when one factor changed).
fn errors_where_changed(
    made: &ArrayD<f64>,
    reference: &ArrayD<f64>,
    loaded: &ArrayD<f64>,
) -> (f64, f64) {
    let (mut made_error, mut reference_error) = (0.0f64, 0.0f64);
    for ((m, r), l) in made.iter().zip(reference).zip(loaded) {
        if m != r {
            made_error = made_error.max((m - l).abs());
            reference_error = reference_error.max((r - l).abs());
        }
    }
    (made_error, reference_error)
}

/// Each factor replaced by its roundest value (1 to [`ROUND_DIGITS`] significant digits) that
/// reproduces the file's columns of its pair as well as the fit does (within `strict`, or to
/// twice the fit's own error), and how many were round. `theta_of` gives the frequencies of
/// a list of factors, as the file's library formed them.
fn roundest_factors(
    fitted: &[f64],
    theta_of: &dyn Fn(&[f64]) -> Vec<f64>,
    make: &dyn Fn(&[f64]) -> ArrayD<f64>,
    loaded: &ArrayD<f64>,
    strict: Tolerance,
) -> (Vec<f64>, usize) {
    let mut factors = fitted.to_vec();
    // The table of the factors chosen so far: a trial differs from it in its own pair only.
    let mut reference = make(&theta_of(&factors));
    let mut round_count = 0;
    for i in 0..fitted.len() {
        // The previous pair's factor first (LongRoPE's lists repeat values, and a pair the
        // file hardly pins takes it), then the roundest values near the fit; none below the
        // previous factor, since the list does not fall.
        let floor = if i == 0 { 1.0 } else { factors[i - 1] };
        let mut choices = round_choices_to(fitted[i], ROUND_DIGITS);
        // The last choice is the fitted value itself.
        choices.pop();
        if i > 0 {
            choices.insert(0, floor);
        }
        for choice in choices.into_iter().filter(|&c| c >= floor) {
            let mut trial = factors.clone();
            trial[i] = choice;
            let made = make(&theta_of(&trial));
            if reproduces(&made, &reference, loaded, strict) {
                factors[i] = choice;
                reference = made;
                round_count += 1;
                break;
            }
        }
    }
    (factors, round_count)
}

/// How far each pair's frequency can move down and up (relative steps from [`PIN_STEPS`]) and
/// still reproduce the file: `(down, up)`, 0 where even the smallest step does not. A read
/// value need not sit in the middle of what the file allows, so each side is its own.
/// `reference` is the table of the values as read.
fn pins(
    values: &[f64],
    reference: &ArrayD<f64>,
    make: &dyn Fn(&[f64]) -> ArrayD<f64>,
    loaded: &ArrayD<f64>,
    strict: Tolerance,
) -> Vec<(f64, f64)> {
    (0..values.len())
        .map(|i| {
            let reach = |sign: f64| {
                PIN_STEPS
                    .into_iter()
                    .take_while(|&step| {
                        let mut moved = values.to_vec();
                        moved[i] *= 1.0 + sign * step;
                        reproduces(&make(&moved), reference, loaded, strict)
                    })
                    .last()
                    .unwrap_or(0.0)
            };
            (reach(-1.0), reach(1.0))
        })
        .collect()
}

/// Whether `made` (one factor changed from `reference`) is as close to `loaded` where they
/// differ as the file allows: within `strict`, or within twice `reference`'s own error there.
fn reproduces(
    made: &ArrayD<f64>,
    reference: &ArrayD<f64>,
    loaded: &ArrayD<f64>,
    strict: Tolerance,
) -> bool {
    let within = made
        .iter()
        .zip(reference)
        .zip(loaded)
        .all(|((m, r), l)| m == r || (m - l).abs() <= strict.abs + strict.rel * l.abs());
    let (made_error, reference_error) = errors_where_changed(made, reference, loaded);
    within || made_error <= 2.0 * reference_error
}

/// Original contexts and factors (HF's `max / original`, or a config's `factor`) whose
/// attention factor `sqrt(1 + ln factor / ln original)` is `attention`: round ones only, whose
/// extended context stays within [`LONGEST_CONTEXT`], the most common original first.
fn attention_explanations(attention: f64) -> Vec<(usize, f64)> {
    if !(attention.is_finite() && attention > 1.0 + 1e-6) {
        return Vec::new();
    }
    let exponent = attention * attention - 1.0;
    TRAINED_LENGTHS
        .iter()
        .chain(&SHORT_ORIGINALS)
        .filter_map(|&original| {
            let exact = (original as f64).powf(exponent);
            let choices = round_choices_to(exact, 3);
            // The last choice is the value itself, which is no explanation; a float32
            // attention factor pins the factor to about 2e-6.
            let factor = choices[..choices.len().saturating_sub(1)]
                .iter()
                .copied()
                .find(|f| (f - exact).abs() <= 1e-5 * exact)?;
            (factor * original as f64 <= LONGEST_CONTEXT).then_some((original, factor))
        })
        .collect()
}

/// What a table of `rows` positions (0: a table of frequencies) makes of its factors: the
/// short ones within the original context, the long ones beyond it (HF picks them by the
/// length), for each original context that explains the attention factor.
fn length_note(rows: usize, attention: f64, explanations: &[(usize, f64)]) -> String {
    if rows == 0 {
        return "a table of frequencies does not say whether these are the short factors or \
                the long ones (used beyond the original context)"
            .to_owned();
    }
    if explanations.is_empty() {
        let given = if attention == 1.0 {
            String::new()
        } else {
            format!(
                ", attention factor {attention} as configured (no round original context and factor give it)"
            )
        };
        return format!(
            "the factors used at {rows} positions: the short ones (--short-factor) if the \
             original context is at least {rows}, else the long ones (--long-factor){given}"
        );
    }
    let pairs = |beyond: bool| {
        let listed: Vec<String> = explanations
            .iter()
            .filter(|&&(original, _)| (rows > original) == beyond)
            .map(|&(original, factor)| format!("L {original} and s {factor}"))
            .collect();
        match listed.split_last() {
            None => None,
            Some((last, [])) => Some(last.clone()),
            Some((last, rest)) => Some(format!("{} or {last}", rest.join(", "))),
        }
    };
    let mut readings = Vec::new();
    if let Some(within) = pairs(false) {
        readings.push(format!(
            "{within} (the file's {rows} positions within L: these are the short factors, \
             --short-factor)"
        ));
    }
    if let Some(beyond) = pairs(true) {
        readings.push(format!(
            "{beyond} (its {rows} positions beyond L: these are the long factors, \
             --long-factor)"
        ));
    }
    format!(
        "attention factor {attention:.7} = sqrt(1 + ln s / ln L) for an original context L \
         (--original-max-position-embeddings) and factor s (--factor): {}",
        readings.join("; or ")
    )
}

/// The reading's description after `label`.
pub(super) fn longrope_description(label: &str, reading: &LongropeReading) -> String {
    let factors = reading
        .factors
        .iter()
        .map(|&f| {
            // A float32 file's factors are float32 values: the shortest text that names one.
            if reading.float32 {
                return format!("{}", f as f32);
            }
            // Seven significant digits at most: a fitted factor's last bits are not news.
            let decimals = (6 - f.log10().floor() as i32).max(0) as usize;
            let text = format!("{f:.decimals$}");
            if text.contains('.') {
                text.trim_end_matches('0').trim_end_matches('.').to_owned()
            } else {
                text
            }
        })
        .collect::<Vec<_>>()
        .join(",");
    let n = reading.factors.len();
    let roundness = if reading.all_round {
        "each the roundest that reproduces the file".to_owned()
    } else {
        format!(
            "{} of {n} round, each the roundest that reproduces the file, the others as fitted",
            reading.round_count
        )
    };
    let loose = match (reading.loose.first(), reading.loose.last()) {
        (Some(first), Some(last)) => {
            let pairs = if first == last {
                format!("pair {first}")
            } else if reading.loose.len() == last - first + 1 {
                format!("pairs {first} to {last}")
            } else {
                format!("{} of the pairs {first} to {last}", reading.loose.len())
            };
            format!(
                "; {pairs} turn too little over these positions to pin their factors closer \
                 than {:.1}%, so theirs are the roundest within that",
                100.0 * LOOSE_PIN
            )
        }
        _ => String::new(),
    };
    format!(
        "{label}, base {base}, LongRoPE scaling, factors {factors} ({roundness}{loose}; base {base} is \
         the round base under which they are at least 1, non-decreasing and roundest, as \
         LongRoPE's search keeps them: a smaller base gives the same table with factors times \
         ({base}/b)^(2i/R), which are not round), {note}",
        base = reading.base,
        note = reading.length_note,
    )
}
