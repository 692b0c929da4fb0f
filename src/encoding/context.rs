//! Context extension: a RoPE model pre-trained on `L` positions, run at `L' > L`. Each method
//! (extrapolation, Position Interpolation, NTK-aware, dynamic NTK, YaRN, Llama 3, LongRoPE) is
//! one of Hugging Face's scalings with the parameters that take the model from `L` to `L'`;
//! what it does to each frequency pair is read off its wavelength and off the rotation angles
//! it needs at `L'` that training never produced.
//!
//! Which angles training saw: pair `i` turns by `θ_i` per position, so over `L` positions it
//! reaches every angle in `[0, (L-1)θ_i]`, which is every angle when that span is a full turn
//! or more. At distance `p` under a method's frequency `θ'_i` the angle is `p θ'_i` modulo a
//! turn; it is unseen when it lies beyond the trained span. Angles are compared as 64-bit
//! fractions of a turn (the exact frequency rounded once, then integer arithmetic), which both
//! engines evaluate identically.
//!
//! Here: the model, the methods and their parameters, and the unseen-angle table (a table the
//! engines compute). The lab built on them (the fitted score, the vision half, the survey) is
//! in `scene::context`.

use super::exact_angle::TurnsPerStep;
use super::rope::inv_freq;
use super::rope_scaling::{RopeFrequencies, RopeScaling, ScalingKind};
use super::{ParamError, SEQ_RANGE, check_base, check_count};

/// The methods the lab compares, in the order it lists them.
pub const METHODS: [ScalingKind; 7] = [
    ScalingKind::None,
    ScalingKind::Linear,
    ScalingKind::Ntk,
    ScalingKind::Dynamic,
    ScalingKind::Yarn,
    ScalingKind::Llama3,
    ScalingKind::Longrope,
];

/// A method's name as the lab shows it.
pub fn method_label(kind: ScalingKind) -> &'static str {
    match kind {
        ScalingKind::None => "Extrapolation (none)",
        ScalingKind::Linear => "Position Interpolation",
        ScalingKind::Ntk => "NTK-aware",
        ScalingKind::Dynamic => "Dynamic NTK",
        ScalingKind::Yarn => "YaRN",
        ScalingKind::Llama3 => "Llama 3",
        ScalingKind::Longrope => "LongRoPE",
    }
}

/// What the lab needs of a RoPE model: its rotary frequencies before any extension, the length
/// it was pre-trained on, and the scaling its config carries (whose parameters that method
/// starts from).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RopeModel {
    pub name: String,
    pub head_dim: usize,
    pub base: f64,
    /// Rotated dimensions when fewer than the head's.
    pub rotary_dim: Option<usize>,
    /// `L`: the pre-training context (`original_max_position_embeddings` where the config
    /// extends it, else `max_position_embeddings`).
    pub trained: usize,
    pub scaling: RopeScaling,
}

impl RopeModel {
    pub fn rotary(&self) -> usize {
        self.rotary_dim.unwrap_or(self.head_dim)
    }

    pub fn validate(&self) -> Result<(), ParamError> {
        check_base("base", self.base)?;
        check_count("train-len", self.trained, 2..=*SEQ_RANGE.end())?;
        self.frequencies(RopeScaling::default())
            .validate(self.head_dim, self.base)
    }

    /// The frequency setting of a method's `scaling` for this model.
    pub fn frequencies(&self, scaling: RopeScaling) -> RopeFrequencies {
        RopeFrequencies {
            rotary_dim: self.rotary_dim,
            scaling,
            ..Default::default()
        }
    }

    /// The scaling `kind` uses to take this model from `L` to `target`: the model's own
    /// parameters where its config uses that method, else the method's usual ones with the
    /// factor `L'/L` (at least 1). LongRoPE has no usual parameters (its factors are fitted per
    /// model): without the config's lists it is an error saying so.
    pub fn method_scaling(&self, kind: ScalingKind, target: usize) -> Result<RopeScaling, String> {
        let factor = (target as f64 / self.trained as f64).max(1.0);
        if self.scaling.kind == kind && kind != ScalingKind::None {
            let mut own = self.scaling.clone();
            // The lengths the formulas read are the lab's: L, and L' where a method grows
            // with the sequence.
            own.original_max_position_embeddings = Some(self.trained);
            if kind == ScalingKind::Dynamic {
                own.max_position_embeddings = Some(self.trained);
            }
            return Ok(own);
        }
        let trained = Some(self.trained);
        let scaling = match kind {
            ScalingKind::None => RopeScaling::default(),
            ScalingKind::Linear | ScalingKind::Ntk => RopeScaling {
                kind,
                factor: Some(factor),
                ..Default::default()
            },
            // HF's dynamic NTK grows the base with the current length beyond
            // max_position_embeddings; a factor of 1 makes that growth L'/L itself.
            ScalingKind::Dynamic => RopeScaling {
                kind,
                factor: Some(1.0),
                max_position_embeddings: trained,
                ..Default::default()
            },
            ScalingKind::Yarn => RopeScaling {
                kind,
                factor: Some(factor),
                original_max_position_embeddings: trained,
                ..Default::default()
            },
            // Meta's Llama 3.1 band edges: wavelengths beyond L/1 interpolated, below L/4 kept.
            ScalingKind::Llama3 => RopeScaling {
                kind,
                factor: Some(factor),
                original_max_position_embeddings: trained,
                low_freq_factor: Some(1.0),
                high_freq_factor: Some(4.0),
                ..Default::default()
            },
            ScalingKind::Longrope => {
                return Err(
                    "LongRoPE's per-pair factors are fitted for each model: pick a model whose config has them (Phi-3)"
                        .to_owned(),
                );
            }
        };
        Ok(scaling)
    }
}

/// Parameters of a method the user set, over the method's own (`None` keeps it).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct MethodOverrides {
    pub factor: Option<f64>,
    pub low_freq_factor: Option<f64>,
    pub high_freq_factor: Option<f64>,
    pub beta_fast: Option<f64>,
    pub beta_slow: Option<f64>,
}

impl MethodOverrides {
    /// The parameters by their Hugging Face names, in a fixed order.
    fn fields(&self) -> [(&'static str, Option<f64>); 5] {
        [
            ("factor", self.factor),
            ("low_freq_factor", self.low_freq_factor),
            ("high_freq_factor", self.high_freq_factor),
            ("beta_fast", self.beta_fast),
            ("beta_slow", self.beta_slow),
        ]
    }

    fn field_mut(&mut self, name: &str) -> Option<&mut Option<f64>> {
        Some(match name {
            "factor" => &mut self.factor,
            "low_freq_factor" => &mut self.low_freq_factor,
            "high_freq_factor" => &mut self.high_freq_factor,
            "beta_fast" => &mut self.beta_fast,
            "beta_slow" => &mut self.beta_slow,
            _ => return None,
        })
    }

    pub fn is_empty(&self) -> bool {
        self.fields().iter().all(|(_, v)| v.is_none())
    }

    /// Sets each given parameter on `scaling`.
    pub fn apply(&self, scaling: &mut RopeScaling) {
        let set = |slot: &mut Option<f64>, value: Option<f64>| {
            if value.is_some() {
                *slot = value;
            }
        };
        set(&mut scaling.factor, self.factor);
        set(&mut scaling.low_freq_factor, self.low_freq_factor);
        set(&mut scaling.high_freq_factor, self.high_freq_factor);
        set(&mut scaling.beta_fast, self.beta_fast);
        set(&mut scaling.beta_slow, self.beta_slow);
    }

    /// `method.name=value` for each parameter given (`yarn.beta_fast=16`).
    pub fn words(&self, kind: ScalingKind) -> Vec<String> {
        self.fields()
            .iter()
            // Only what the method reads: the rest would change nothing.
            .filter(|(name, _)| kind.options().contains(name))
            .filter_map(|(name, value)| value.map(|v| format!("{}.{name}={v}", kind.name())))
            .collect()
    }
}

/// Reads `method.name=value` items, comma-separated, as [`MethodOverrides::words`] writes them.
pub fn parse_overrides(text: &str) -> Result<Vec<(ScalingKind, MethodOverrides)>, String> {
    let mut all: Vec<(ScalingKind, MethodOverrides)> = Vec::new();
    for item in text.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let problem = |why: &str| {
            format!(
                "{item}: {why}; write METHOD.NAME=VALUE, e.g. yarn.factor=8 or llama3.low_freq_factor=2"
            )
        };
        let (key, value) = item.split_once('=').ok_or_else(|| problem("no ="))?;
        let (method, name) = key.split_once('.').ok_or_else(|| problem("no method"))?;
        let kind = METHODS
            .iter()
            .copied()
            .find(|k| k.name() == method)
            .ok_or_else(|| problem("no such method"))?;
        let value: f64 = value
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v > 0.0)
            .ok_or_else(|| problem("the value must be a finite number above 0"))?;
        let position = match all.iter().position(|(k, _)| *k == kind) {
            Some(p) => p,
            None => {
                all.push((kind, MethodOverrides::default()));
                all.len() - 1
            }
        };
        let slot = all[position]
            .1
            .field_mut(name)
            .ok_or_else(|| problem("the parameters are factor, low_freq_factor, high_freq_factor, beta_fast, beta_slow"))?;
        // A parameter the method does not read would be accepted and change nothing.
        if !kind.options().contains(&name) {
            let reads: Vec<&str> = kind
                .options()
                .iter()
                .copied()
                .filter(|o| {
                    [
                        "factor",
                        "low_freq_factor",
                        "high_freq_factor",
                        "beta_fast",
                        "beta_slow",
                    ]
                    .contains(o)
                })
                .collect();
            return Err(problem(&if reads.is_empty() {
                format!("{method} reads no parameter")
            } else {
                format!(
                    "{method} does not read {name}; it reads {}",
                    reads.join(", ")
                )
            }));
        }
        *slot = Some(value);
    }
    all.sort_by_key(|(kind, _)| METHODS.iter().position(|k| k == kind));
    Ok(all)
}

impl RopeModel {
    /// [`Self::method_scaling`] with `overrides` applied, checked against the model.
    pub fn resolved_scaling(
        &self,
        kind: ScalingKind,
        target: usize,
        overrides: &MethodOverrides,
    ) -> Result<RopeScaling, String> {
        let mut scaling = self.method_scaling(kind, target)?;
        overrides.apply(&mut scaling);
        self.frequencies(scaling.clone())
            .validate(self.head_dim, self.base)
            .map_err(|e| e.to_string())?;
        Ok(scaling)
    }
}

/// A frequency as a 64-bit fraction of a turn per position: the exact frequency rounded once
/// (what the GPU kernels hold as two words).
fn turn_word(turns: TurnsPerStep) -> u64 {
    let [hi, lo] = turns.words();
    (u64::from(hi) << 32) | u64::from(lo)
}

/// Angles beyond the trained span by less than this (2^-32 of a turn, 1.5e-9 radians) count
/// as seen: the 64-bit words round the frequencies, and an angle exactly on the span's end
/// (Position Interpolation maps distance `k L'/L` onto trained distance `k`) must not fall
/// on either side by a rounding.
pub const SEEN_SLACK: u64 = 1 << 32;

/// How far each pair turned in training, as a 64-bit fraction of a turn: `(L-1) θ_i` plus
/// [`SEEN_SLACK`], or `u64::MAX` (no angle lies beyond it) where training covered a full turn.
pub fn seen_limits(rotary: usize, base: f64, trained: usize) -> Result<Vec<u64>, ParamError> {
    let steps = trained.saturating_sub(1) as u128;
    Ok(inv_freq(rotary, base)?
        .iter()
        .map(|&w| {
            let per_step = u128::from(turn_word(TurnsPerStep::of(
                super::exact_angle::DoubleF64::from_f64(w),
            )));
            // θ_i <= 1 radian, under a turn, so the word is the whole turn count per step.
            let reached = steps * per_step;
            if reached >= 1 << 64 {
                u64::MAX
            } else {
                (reached as u64).saturating_add(SEEN_SLACK)
            }
        })
        .collect())
}

/// The method's frequencies as 64-bit fractions of a turn per position.
pub fn turn_words(frequencies: &[super::exact_angle::DoubleF64]) -> Vec<u64> {
    frequencies
        .iter()
        .map(|&w| turn_word(TurnsPerStep::of(w)))
        .collect()
}

/// Whether the angle at distance `p` of a pair turning `per_step` per position lies beyond
/// the angles training reached (`limit`).
pub fn is_unseen(p: u64, per_step: u64, limit: u64) -> bool {
    p.wrapping_mul(per_step) > limit
}

/// The smallest distance below `seq` whose angle lies beyond `limit`, if any: in each turn
/// the angles grow, so the first distance of turn `k` beyond the limit is found by division,
/// and it counts if it comes before the turn ends.
pub fn first_unseen(per_step: u64, limit: u64, seq: u64) -> Option<u64> {
    if limit == u64::MAX || per_step == 0 || seq == 0 {
        return None;
    }
    let (step, seq) = (u128::from(per_step), u128::from(seq));
    let turn = 1u128 << 64;
    let turns = (seq - 1) * step / turn + 1;
    (0..turns).find_map(|k| {
        let first = (k * turn + u128::from(limit)) / step + 1;
        (first * step < (k + 1) * turn && first < seq).then_some(first as u64)
    })
}

/// How many distances below `seq` have an angle beyond `limit`: turn by turn, the distances
/// whose angle lies between the limit and the next whole turn, counted by division.
pub fn unseen_count(per_step: u64, limit: u64, seq: u64) -> u64 {
    if limit == u64::MAX || per_step == 0 || seq == 0 {
        return 0;
    }
    let (step, seq) = (u128::from(per_step), u128::from(seq));
    let turn = 1u128 << 64;
    // Turns started by distance seq - 1.
    let turns = (seq - 1) * step / turn + 1;
    (0..turns)
        .map(|k| {
            // Distances p with k turn + limit < p step < (k + 1) turn.
            let first = (k * turn + u128::from(limit)) / step + 1;
            let last = ((k + 1) * turn - 1) / step;
            let last = last.min(seq - 1);
            if last >= first {
                (last - first + 1) as u64
            } else {
                0
            }
        })
        .sum()
}

/// The table behind the unseen-angle map: `[seq, R/2]`, 1 where the angle at distance `p` in
/// pair `i` lies beyond what training reached, else 0; `seq` is `L'`.
#[derive(Debug, Clone, PartialEq)]
pub struct UnseenParams {
    pub model: RopeModel,
    pub freqs: RopeFrequencies,
    pub seq: usize,
}

impl UnseenParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        self.model.validate()?;
        check_count("seq", self.seq, SEQ_RANGE)?;
        self.freqs.validate(self.model.head_dim, self.model.base)
    }

    /// Per pair, `(turns per position under the method, trained limit)`.
    pub fn pairs(&self) -> Vec<(u64, u64)> {
        let model = &self.model;
        let exact = self
            .freqs
            .exact_inv_freq(model.head_dim, model.base, self.seq);
        let limits = seen_limits(model.rotary(), model.base, model.trained).unwrap_or_default();
        turn_words(&exact).into_iter().zip(limits).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_unseen_distance_is_the_first_beyond_the_limit() {
        for (per_step, limit, seq) in [
            (1u64 << 40, 5u64 << 40, 100u64),
            (3, 10, 100),
            (u64::MAX / 3, u64::MAX / 2, 50),
            (1 << 62, (1 << 62) + 1, 50),
            // The first multiple past the limit wraps: found in a later turn.
            (u64::MAX / 7 + 12345, u64::MAX - 100, 1000),
            (u64::MAX / 7 + 12345, u64::MAX - 100, 5),
        ] {
            let scanned = (0..seq).find(|&p| is_unseen(p, per_step, limit));
            assert_eq!(first_unseen(per_step, limit, seq), scanned);
        }
    }

    #[test]
    fn overrides_read_back_what_they_write() {
        let yarn = MethodOverrides {
            factor: Some(8.5),
            beta_fast: Some(16.0),
            ..Default::default()
        };
        let llama3 = MethodOverrides {
            low_freq_factor: Some(0.125),
            ..Default::default()
        };
        let mut words = llama3.words(ScalingKind::Llama3);
        words.extend(yarn.words(ScalingKind::Yarn));
        assert_eq!(
            words,
            [
                "llama3.low_freq_factor=0.125",
                "yarn.factor=8.5",
                "yarn.beta_fast=16"
            ]
        );
        let parsed = parse_overrides(&words.join(",")).unwrap();
        assert_eq!(
            parsed,
            [(ScalingKind::Yarn, yarn), (ScalingKind::Llama3, llama3)]
        );
        for bad in [
            "yarn.factor",
            "yarn=2",
            "rope.factor=2",
            "yarn.gamma=2",
            "yarn.factor=-1",
            "yarn.factor=nan",
        ] {
            assert!(parse_overrides(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn unseen_distances_are_counted_as_a_scan_counts_them() {
        for (per_step, limit, seq) in [
            (1u64 << 40, 5u64 << 40, 100u64),
            (3, 10, 100),
            (u64::MAX / 3, u64::MAX / 2, 50),
            (u64::MAX / 7 + 12345, u64::MAX / 3, 1000),
            ((1 << 62) + 1, (1 << 62) + 1, 50),
            (1 << 50, u64::MAX - 5, 100_000),
        ] {
            let scanned = (0..seq).filter(|&p| is_unseen(p, per_step, limit)).count() as u64;
            assert_eq!(
                unseen_count(per_step, limit, seq),
                scanned,
                "{per_step} {limit}"
            );
        }
    }
}
