//! RoPE as real models configure it: a rotary width below the head width (partial rotary) and
//! the context-extension scalings of Hugging Face transformers' `modeling_rope_utils`
//! (linear / Position Interpolation, NTK-aware, dynamic NTK, YaRN, Llama 3, LongRoPE), each with
//! HF's option names and its attention factor.
//!
//! Two evaluations of the same formulas: [`RopeFrequencies::inv_freq`] in f64 (the exact
//! reference) and [`RopeFrequencies::inv_freq_torch`] step by step in float32, as HF's PyTorch
//! code rounds each operation on the CPU.

use super::exact_angle::DoubleF64;
use super::torch_f32::{self, TorchMode};
use super::{ParamError, check_base};

/// Which context-extension scaling the inverse frequencies carry (`--scaling`).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
pub enum ScalingKind {
    /// No scaling: theta_i = base^(-2i/R).
    #[default]
    None,
    /// Position Interpolation: every frequency divided by --factor.
    Linear,
    /// Static NTK-aware: the base becomes base * factor^(R/(R-2)).
    Ntk,
    /// Dynamic NTK: NTK-aware with the factor grown from --seq beyond --max-position-embeddings.
    Dynamic,
    /// YaRN: frequencies ramped between interpolated and kept, and an attention factor.
    Yarn,
    /// Llama 3.1: low frequencies divided by --factor, high ones kept, a smooth band between.
    Llama3,
    /// LongRoPE: one rescale factor per frequency (--long-factor / --short-factor).
    Longrope,
}

impl ScalingKind {
    /// The name Hugging Face's `rope_type` uses.
    pub fn name(self) -> &'static str {
        match self {
            ScalingKind::None => "none",
            ScalingKind::Linear => "linear",
            ScalingKind::Ntk => "ntk",
            ScalingKind::Dynamic => "dynamic",
            ScalingKind::Yarn => "yarn",
            ScalingKind::Llama3 => "llama3",
            ScalingKind::Longrope => "longrope",
        }
    }

    /// Whether the frequencies depend on the current length (dynamic NTK, LongRoPE).
    pub fn reads_current_length(self) -> bool {
        matches!(self, ScalingKind::Dynamic | ScalingKind::Longrope)
    }

    /// The options (by their clap ids) this scaling reads.
    pub fn options(self) -> &'static [&'static str] {
        match self {
            ScalingKind::None => &[],
            ScalingKind::Linear | ScalingKind::Ntk => &["factor"],
            ScalingKind::Dynamic => &["factor", "max_position_embeddings"],
            ScalingKind::Yarn => &[
                "factor",
                "original_max_position_embeddings",
                "max_position_embeddings",
                "beta_fast",
                "beta_slow",
                "mscale",
                "mscale_all_dim",
                "attention_factor",
                "truncate",
            ],
            ScalingKind::Llama3 => &[
                "factor",
                "original_max_position_embeddings",
                "low_freq_factor",
                "high_freq_factor",
            ],
            ScalingKind::Longrope => &[
                "factor",
                "original_max_position_embeddings",
                "max_position_embeddings",
                "attention_factor",
                "long_factor",
                "short_factor",
            ],
        }
    }
}

/// A scaling and its parameters, named as in Hugging Face's `rope_scaling`.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct RopeScaling {
    pub kind: ScalingKind,
    pub factor: Option<f64>,
    pub original_max_position_embeddings: Option<usize>,
    pub max_position_embeddings: Option<usize>,
    pub low_freq_factor: Option<f64>,
    pub high_freq_factor: Option<f64>,
    /// YaRN's ramp bounds in rotations; HF's defaults 32 and 1 when absent.
    pub beta_fast: Option<f64>,
    pub beta_slow: Option<f64>,
    pub mscale: Option<f64>,
    pub mscale_all_dim: Option<f64>,
    pub attention_factor: Option<f64>,
    /// YaRN: round the ramp's bounds to whole dimensions (HF's default, true).
    pub truncate: Option<bool>,
    pub long_factor: Option<Vec<f64>>,
    pub short_factor: Option<Vec<f64>>,
}

/// Numbers as a comma list, each written so that it reads back as the same f64.
pub fn number_list(values: &[f64]) -> String {
    values
        .iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

impl RopeScaling {
    /// The scaling and its parameters as `poslab table`'s options (by clap id, with the
    /// values as the command line writes them): only the parameters this scaling reads;
    /// nothing for no scaling.
    pub fn as_options(&self) -> Vec<(&'static str, String)> {
        let scaling = self;
        let number = |v: f64| format!("{v}");
        let list = number_list;
        let mut options = Vec::new();
        if scaling.kind == ScalingKind::None {
            return options;
        }
        options.push(("scaling", scaling.kind.name().to_owned()));
        let numbers = [
            ("factor", scaling.factor),
            ("low_freq_factor", scaling.low_freq_factor),
            ("high_freq_factor", scaling.high_freq_factor),
            ("beta_fast", scaling.beta_fast),
            ("beta_slow", scaling.beta_slow),
            ("mscale", scaling.mscale),
            ("mscale_all_dim", scaling.mscale_all_dim),
            ("attention_factor", scaling.attention_factor),
        ];
        let counts = [
            (
                "original_max_position_embeddings",
                scaling.original_max_position_embeddings,
            ),
            ("max_position_embeddings", scaling.max_position_embeddings),
        ];
        let own = scaling.kind.options();
        for (id, value) in numbers {
            if let Some(v) = value
                && own.contains(&id)
            {
                options.push((id, number(v)));
            }
        }
        for (id, value) in counts {
            if let Some(v) = value
                && own.contains(&id)
            {
                options.push((id, v.to_string()));
            }
        }
        if let Some(truncate) = scaling.truncate
            && own.contains(&"truncate")
        {
            options.push(("truncate", truncate.to_string()));
        }
        for (id, value) in [
            ("long_factor", &scaling.long_factor),
            ("short_factor", &scaling.short_factor),
        ] {
            if let Some(values) = value {
                options.push((id, list(values)));
            }
        }
        options
    }
}

/// Everything that decides a model's RoPE frequencies besides the head width and the base.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct RopeFrequencies {
    /// Dimensions rotated, even and at most the head width; `None`: all of them.
    pub rotary_dim: Option<usize>,
    pub scaling: RopeScaling,
    /// The inverse frequencies themselves (`--inv-freq`: LongRoPE's rescaled ones,
    /// rotary-embedding-torch's pixel frequencies, learned ones), in place of any formula: the
    /// rotary width is twice their count, and no scaling applies.
    pub given: Option<Vec<f64>>,
}

/// YaRN's and DeepSeek's `get_mscale`.
fn get_mscale(scale: f64, mscale: f64) -> f64 {
    if scale <= 1.0 {
        1.0
    } else {
        0.1 * mscale * scale.ln() + 1.0
    }
}

/// HF's `find_correction_dim`: the dimension whose frequency turns `rotations` times in
/// `positions`.
fn correction_dim(rotations: f64, rotary_dim: usize, base: f64, positions: f64) -> f64 {
    (rotary_dim as f64 * (positions / (rotations * 2.0 * std::f64::consts::PI)).ln())
        / (2.0 * base.ln())
}

fn required<T: Copy>(
    value: Option<T>,
    field: &'static str,
    kind: ScalingKind,
) -> Result<T, ParamError> {
    value.ok_or_else(|| {
        ParamError::new(
            field,
            "(missing)",
            format!("--scaling {} needs --{field}", kind.name()),
        )
    })
}

impl RopeScaling {
    /// Each parameter given is in its range.
    fn validate_values(&self) -> Result<(), ParamError> {
        let s = self;
        let positive = |value: Option<f64>, field: &'static str| match value {
            Some(v) if !(v.is_finite() && v > 0.0) => Err(ParamError::new(
                field,
                v,
                "must be a finite number greater than 0",
            )),
            _ => Ok(()),
        };
        if let Some(factor) = s.factor
            && !(factor.is_finite() && factor >= 1.0)
        {
            return Err(ParamError::new(
                "factor",
                factor,
                "must be a finite number of at least 1 (a context extension)",
            ));
        }
        for (value, field) in [
            (s.low_freq_factor, "low-freq-factor"),
            (s.high_freq_factor, "high-freq-factor"),
            (s.beta_fast, "beta-fast"),
            (s.beta_slow, "beta-slow"),
            (s.attention_factor, "attention-factor"),
        ] {
            positive(value, field)?;
        }
        for (value, field) in [(s.mscale, "mscale"), (s.mscale_all_dim, "mscale-all-dim")] {
            if let Some(v) = value
                && !(v.is_finite() && v >= 0.0)
            {
                return Err(ParamError::new(
                    field,
                    v,
                    "must be a finite number, 0 or more",
                ));
            }
        }
        for (value, field) in [
            (
                s.original_max_position_embeddings,
                "original-max-position-embeddings",
            ),
            (s.max_position_embeddings, "max-position-embeddings"),
        ] {
            if value == Some(0) {
                return Err(ParamError::new(field, 0, "must be 1 or more"));
            }
        }
        Ok(())
    }

    /// The parameters the scaling needs are given and agree, for a rotary width `rotary`.
    fn validate_needs(&self, rotary: usize) -> Result<(), ParamError> {
        let s = self;
        let kind = s.kind;
        if matches!(kind, ScalingKind::Ntk | ScalingKind::Dynamic) && rotary < 4 {
            return Err(ParamError::new(
                "rotary-dim",
                rotary,
                "must be at least 4 for NTK scaling (its exponent is R / (R - 2))",
            ));
        }
        match kind {
            ScalingKind::None => {}
            ScalingKind::Linear | ScalingKind::Ntk => {
                required(s.factor, "factor", kind)?;
            }
            ScalingKind::Dynamic => {
                required(s.factor, "factor", kind)?;
                required(s.max_position_embeddings, "max-position-embeddings", kind)?;
            }
            ScalingKind::Yarn => {
                if s.factor.is_none() {
                    required(s.original_max_position_embeddings, "factor", kind)?;
                    required(s.max_position_embeddings, "factor", kind)?;
                }
                if s.original_max_position_embeddings.is_none() {
                    required(
                        s.max_position_embeddings,
                        "original-max-position-embeddings",
                        kind,
                    )?;
                }
                let (fast, slow) = (s.beta_fast.unwrap_or(32.0), s.beta_slow.unwrap_or(1.0));
                if fast < slow {
                    return Err(ParamError::new(
                        "beta-fast",
                        fast,
                        format!("must be at least --beta-slow {slow}"),
                    ));
                }
            }
            ScalingKind::Llama3 => {
                required(s.factor, "factor", kind)?;
                required(
                    s.original_max_position_embeddings,
                    "original-max-position-embeddings",
                    kind,
                )?;
                let low = required(s.low_freq_factor, "low-freq-factor", kind)?;
                let high = required(s.high_freq_factor, "high-freq-factor", kind)?;
                if low >= high {
                    return Err(ParamError::new(
                        "low-freq-factor",
                        low,
                        format!("must be below --high-freq-factor {high}"),
                    ));
                }
            }
            ScalingKind::Longrope => {
                required(
                    s.original_max_position_embeddings,
                    "original-max-position-embeddings",
                    kind,
                )?;
                for (list, field) in [
                    (&s.long_factor, "long-factor"),
                    (&s.short_factor, "short-factor"),
                ] {
                    let Some(list) = list else {
                        return Err(ParamError::new(
                            field,
                            "(missing)",
                            "--scaling longrope needs --long-factor and --short-factor",
                        ));
                    };
                    if list.len() != rotary / 2 {
                        return Err(ParamError::new(
                            field,
                            format!("of {} values", list.len()),
                            format!("must hold one factor per rotated pair, {}", rotary / 2),
                        ));
                    }
                    if let Some(bad) = list.iter().find(|v| !(v.is_finite() && **v > 0.0)) {
                        return Err(ParamError::new(
                            field,
                            format!("holding {bad}"),
                            "must hold finite numbers greater than 0",
                        ));
                    }
                }
                if s.attention_factor.is_none() && s.factor.is_none() {
                    required(s.max_position_embeddings, "factor", kind)?;
                }
            }
        }
        Ok(())
    }
}

impl RopeFrequencies {
    /// The rotary width `R` for a head of `dim`.
    pub fn rotary(&self, dim: usize) -> usize {
        match &self.given {
            Some(given) => 2 * given.len(),
            None => self.rotary_dim.unwrap_or(dim),
        }
    }

    /// Checks the rotary width against a head of `dim` and the scaling's parameters; `seq` is
    /// the current sequence length (dynamic NTK, LongRoPE).
    pub fn validate(&self, dim: usize, base: f64) -> Result<(), ParamError> {
        check_base("base", base)?;
        if let Some(given) = &self.given {
            self.validate_given(given, dim)?;
        }
        let rotary = self.rotary(dim);
        if rotary < 2 || rotary > dim || !rotary.is_multiple_of(2) {
            return Err(ParamError::new(
                "rotary-dim",
                rotary,
                format!("must be even, from 2 to the head width {dim}"),
            ));
        }
        self.scaling.validate_values()?;
        self.scaling.validate_needs(rotary)
    }

    /// Frequencies given outright: finite and positive, no more than the head rotates, and
    /// with no scaling or other rotary width beside them.
    fn validate_given(&self, given: &[f64], dim: usize) -> Result<(), ParamError> {
        if let Some(bad) = given.iter().find(|w| !(w.is_finite() && **w > 0.0)) {
            return Err(ParamError::new(
                "inv-freq",
                bad,
                "every inverse frequency must be a finite number greater than 0",
            ));
        }
        if given.is_empty() {
            return Err(ParamError::new(
                "inv-freq",
                "[]",
                "give at least one frequency",
            ));
        }
        if self.scaling.kind != ScalingKind::None {
            return Err(ParamError::new(
                "scaling",
                self.scaling.kind.name(),
                "must be none with --inv-freq, which gives the frequencies themselves",
            ));
        }
        if 2 * given.len() > dim {
            return Err(ParamError::new(
                "inv-freq",
                format!("({} frequencies)", given.len()),
                format!(
                    "rotates {} dimensions, more than the head width {dim}: give at most {} frequencies",
                    2 * given.len(),
                    dim / 2
                ),
            ));
        }
        if let Some(rotary) = self.rotary_dim.filter(|&r| r != 2 * given.len()) {
            return Err(ParamError::new(
                "rotary-dim",
                rotary,
                format!(
                    "must be twice the {} frequencies of --inv-freq ({}), or left out",
                    given.len(),
                    2 * given.len()
                ),
            ));
        }
        Ok(())
    }

    /// YaRN's and LongRoPE's factor: `--factor`, or `max / original` where it is missing.
    fn effective_factor(&self) -> Option<f64> {
        let s = &self.scaling;
        s.factor.or_else(|| {
            let (max, original) = (
                s.max_position_embeddings?,
                s.original_max_position_embeddings?,
            );
            Some(max as f64 / original as f64)
        })
    }

    /// What `cos` and `sin` are multiplied by (HF's `attention_scaling`): 1 but for YaRN and
    /// LongRoPE. Call on validated parameters.
    pub fn attention_factor(&self) -> f64 {
        let s = &self.scaling;
        if let Some(given) = s.attention_factor {
            return given;
        }
        match s.kind {
            ScalingKind::Yarn => {
                let factor = self.effective_factor().unwrap_or(1.0);
                match (s.mscale, s.mscale_all_dim) {
                    // Python's `if mscale and mscale_all_dim`: zero counts as absent.
                    (Some(m), Some(all)) if m != 0.0 && all != 0.0 => {
                        get_mscale(factor, m) / get_mscale(factor, all)
                    }
                    _ => get_mscale(factor, 1.0),
                }
            }
            ScalingKind::Longrope => {
                let factor = self.effective_factor().unwrap_or(1.0);
                let original = s.original_max_position_embeddings.unwrap_or(1) as f64;
                if factor <= 1.0 {
                    1.0
                } else {
                    (1.0 + factor.ln() / original.ln()).sqrt()
                }
            }
            _ => 1.0,
        }
    }

    /// Dynamic NTK's base for a current length `seq` (HF: unchanged up to
    /// max_position_embeddings), or static NTK's.
    fn ntk_base(&self, base: f64, rotary: usize, seq: usize) -> f64 {
        let s = &self.scaling;
        let factor = s.factor.unwrap_or(1.0);
        let exponent = rotary as f64 / (rotary as f64 - 2.0);
        match s.kind {
            ScalingKind::Dynamic => {
                let max = s.max_position_embeddings.unwrap_or(1);
                let seq_len = if seq > max { seq } else { max } as f64;
                base * ((factor * seq_len / max as f64) - (factor - 1.0)).powf(exponent)
            }
            _ => base * factor.powf(exponent),
        }
    }

    /// YaRN's ramp bounds `(low, high)` in pair indices.
    fn yarn_range(&self, base: f64, rotary: usize) -> (f64, f64) {
        let s = &self.scaling;
        let positions = s
            .original_max_position_embeddings
            .or(s.max_position_embeddings)
            .unwrap_or(1) as f64;
        let fast = s.beta_fast.unwrap_or(32.0);
        let slow = s.beta_slow.unwrap_or(1.0);
        let mut low = correction_dim(fast, rotary, base, positions);
        let mut high = correction_dim(slow, rotary, base, positions);
        if s.truncate.unwrap_or(true) {
            low = low.floor();
            high = high.ceil();
        }
        (low.max(0.0), high.min(rotary as f64 - 1.0))
    }

    /// LongRoPE's per-pair factors for a current length `seq`.
    fn longrope_factors(&self, seq: usize) -> &[f64] {
        let s = &self.scaling;
        let original = s.original_max_position_embeddings.unwrap_or(usize::MAX);
        let list = if seq > original {
            &s.long_factor
        } else {
            &s.short_factor
        };
        list.as_deref().unwrap_or(&[])
    }

    /// The `R/2` inverse frequencies in f64, HF's formulas evaluated exactly; `seq` is the
    /// current sequence length. Call on validated parameters.
    /// [`Self::inv_freq`] to about 104 bits where its formula is a power of the base (none,
    /// linear, NTK and dynamic NTK, the NTK base taken as the f64 it is computed to); the other
    /// scalings' frequencies are defined by their f64 formulas and taken as exact.
    pub fn exact_inv_freq(&self, dim: usize, base: f64, seq: usize) -> Vec<DoubleF64> {
        if let Some(given) = &self.given {
            return given.iter().copied().map(DoubleF64::from_f64).collect();
        }
        let rotary = self.rotary(dim);
        let powers = |base: f64| super::rope::exact_inv_freq(rotary, base);
        let s = &self.scaling;
        match s.kind {
            ScalingKind::None => powers(base),
            ScalingKind::Linear => {
                let factor = DoubleF64::from_f64(s.factor.unwrap_or(1.0));
                powers(base).into_iter().map(|w| w / factor).collect()
            }
            ScalingKind::Ntk | ScalingKind::Dynamic => powers(self.ntk_base(base, rotary, seq)),
            _ => self
                .inv_freq(dim, base, seq)
                .into_iter()
                .map(DoubleF64::from_f64)
                .collect(),
        }
    }

    /// How many times slower each of the `R/2` pairs turns under the scaling than without it:
    /// the unscaled inverse frequency over the scaled one, `theta_i / theta'_i` (so also how
    /// many times longer its wavelength is). 1 for a pair the scaling leaves alone, the factor
    /// for one it interpolates fully; LongRoPE's is its factor list. Call on validated
    /// parameters without given frequencies.
    pub fn stretch(&self, dim: usize, base: f64, seq: usize) -> Vec<f64> {
        let unscaled = RopeFrequencies {
            rotary_dim: self.rotary_dim,
            ..Default::default()
        };
        unscaled
            .exact_inv_freq(dim, base, seq)
            .into_iter()
            .zip(self.exact_inv_freq(dim, base, seq))
            .map(|(plain, scaled)| (plain / scaled).to_f64())
            .collect()
    }

    pub fn inv_freq(&self, dim: usize, base: f64, seq: usize) -> Vec<f64> {
        if let Some(given) = &self.given {
            return given.clone();
        }
        let rotary = self.rotary(dim);
        let pairs = rotary / 2;
        let s = &self.scaling;
        let default = |base: f64| -> Vec<f64> {
            (0..pairs)
                .map(|i| 1.0 / base.powf((2 * i) as f64 / rotary as f64))
                .collect()
        };
        let factor = s.factor.unwrap_or(1.0);
        match s.kind {
            ScalingKind::None => default(base),
            ScalingKind::Linear => default(base).iter().map(|w| w / factor).collect(),
            ScalingKind::Ntk | ScalingKind::Dynamic => default(self.ntk_base(base, rotary, seq)),
            ScalingKind::Yarn => {
                let factor = self.effective_factor().unwrap_or(1.0);
                let (low, mut high) = self.yarn_range(base, rotary);
                if low == high {
                    high += 0.001;
                }
                (0..pairs)
                    .map(|i| {
                        let power = base.powf((2 * i) as f64 / rotary as f64);
                        let (extrapolation, interpolation) = (1.0 / power, 1.0 / (factor * power));
                        let ramp = ((i as f64 - low) / (high - low)).clamp(0.0, 1.0);
                        let keep = 1.0 - ramp;
                        interpolation * (1.0 - keep) + extrapolation * keep
                    })
                    .collect()
            }
            ScalingKind::Llama3 => {
                let original = s.original_max_position_embeddings.unwrap_or(1) as f64;
                let (low, high) = (
                    s.low_freq_factor.unwrap_or(1.0),
                    s.high_freq_factor.unwrap_or(4.0),
                );
                let (low_wavelength, high_wavelength) = (original / low, original / high);
                default(base)
                    .into_iter()
                    .map(|w| {
                        let wavelength = 2.0 * std::f64::consts::PI / w;
                        if wavelength < high_wavelength {
                            w
                        } else if wavelength > low_wavelength {
                            w / factor
                        } else {
                            let smooth = (original / wavelength - low) / (high - low);
                            (1.0 - smooth) * w / factor + smooth * w
                        }
                    })
                    .collect()
            }
            ScalingKind::Longrope => self
                .longrope_factors(seq)
                .iter()
                .enumerate()
                .map(|(i, ext)| 1.0 / (ext * base.powf((2 * i) as f64 / rotary as f64)))
                .collect(),
        }
    }

    /// The same frequencies as HF's PyTorch code computes them in float32 on the CPU, each
    /// operation rounded as torch rounds it (powers and reciprocals as in
    /// [`torch_f32::frequencies`], Python scalars rounded to f32 where they meet a tensor,
    /// `a / tensor` as `tensor.reciprocal() * a`). Call on validated parameters.
    pub fn inv_freq_torch(&self, dim: usize, base: f64, seq: usize, mode: TorchMode) -> Vec<f32> {
        // Given frequencies are the tensor itself, in float32.
        if let Some(given) = &self.given {
            return given.iter().map(|&w| w as f32).collect();
        }
        let rotary = self.rotary(dim);
        let pairs = rotary / 2;
        let s = &self.scaling;
        // Only unscaled tables come from other libraries; every scaling is HF's `pow` form.
        let form = match s.kind {
            ScalingKind::None => mode.form,
            _ => torch_f32::FreqForm::Pow,
        };
        let default =
            |base: f64| torch_f32::frequencies(pairs, rotary, base, form, false, mode.block);
        let factor = s.factor.unwrap_or(1.0);
        match s.kind {
            ScalingKind::None => default(base),
            // `inv_freq /= factor`.
            ScalingKind::Linear => default(base).iter().map(|w| w / factor as f32).collect(),
            ScalingKind::Ntk | ScalingKind::Dynamic => default(self.ntk_base(base, rotary, seq)),
            ScalingKind::Yarn => {
                let factor = self.effective_factor().unwrap_or(1.0) as f32;
                // pos_freqs = base ** (arange(0, R, 2).float() / R); the reciprocals of
                // default() are exactly 1.0 / pos_freqs, so recover pos_freqs from the powers.
                let powers = torch_f32::powers(pairs, rotary, base, mode.block);
                let (low, mut high) = self.yarn_range(base, rotary);
                if low == high {
                    high += 0.001;
                }
                let (low32, span32) = (low as f32, (high - low) as f32);
                powers
                    .iter()
                    .enumerate()
                    .map(|(i, &power)| {
                        let extrapolation = 1.0 / power;
                        let interpolation = 1.0 / (factor * power);
                        let ramp = ((i as f32 - low32) / span32).clamp(0.0, 1.0);
                        let keep = 1.0 - ramp;
                        interpolation * (1.0 - keep) + extrapolation * keep
                    })
                    .collect()
            }
            ScalingKind::Llama3 => {
                let original = s.original_max_position_embeddings.unwrap_or(1) as f64;
                let (low, high) = (
                    s.low_freq_factor.unwrap_or(1.0),
                    s.high_freq_factor.unwrap_or(4.0),
                );
                let (low_wavelength, high_wavelength) =
                    ((original / low) as f32, (original / high) as f32);
                let factor = factor as f32;
                let (low32, span32) = (low as f32, (high - low) as f32);
                default(base)
                    .into_iter()
                    .map(|w| {
                        // `2 * math.pi / inv_freq` is `inv_freq.reciprocal() * (2 * math.pi)`.
                        let wavelength = (1.0 / w) * std::f64::consts::TAU as f32;
                        let scaled = if wavelength > low_wavelength {
                            w / factor
                        } else {
                            w
                        };
                        // HF's `~(wavelen < high) * ~(wavelen > low)` (wavelengths are finite).
                        let medium = wavelength >= high_wavelength && wavelength <= low_wavelength;
                        if !medium {
                            return scaled;
                        }
                        let smooth = ((1.0 / wavelength) * original as f32 - low32) / span32;
                        (1.0 - smooth) * scaled / factor + smooth * scaled
                    })
                    .collect()
            }
            ScalingKind::Longrope => {
                let powers = torch_f32::powers(pairs, rotary, base, mode.block);
                self.longrope_factors(seq)
                    .iter()
                    .zip(powers)
                    .map(|(&ext, power)| 1.0 / (ext as f32 * power))
                    .collect()
            }
        }
    }
}
