//! RoPE inverse frequencies, angles and caches read back to their frequencies: the base, the scaling and its parameters fitted from the values, and the float32 readings of frequencies another library formed.

use super::*;

/// Round values near `fitted`: 1, 2 and 3 significant digits, then the value as fitted.
pub(super) fn round_choices(fitted: f64) -> Vec<f64> {
    round_choices_to(fitted, 3)
}

/// [`round_choices`] with up to `max_digits` significant digits.
pub(super) fn round_choices_to(fitted: f64, max_digits: i32) -> Vec<f64> {
    if !(fitted.is_finite() && fitted > 0.0) {
        return Vec::new();
    }
    let mut choices = Vec::new();
    for digits in 1..=max_digits {
        let exponent = fitted.log10().floor() as i32 - (digits - 1);
        // Divided by an exact power of ten where the step is below 1, so that 1.15 is the
        // double nearest 1.15, not 115 · 0.01.
        let rounded = if exponent < 0 {
            let scale = 10f64.powi(-exponent);
            (fitted * scale).round() / scale
        } else {
            let magnitude = 10f64.powi(exponent);
            (fitted / magnitude).round() * magnitude
        };
        if !choices.contains(&rounded) {
            choices.push(rounded);
        }
    }
    choices.push(fitted);
    choices
}

/// RoPE bases models use, most common first.
pub(super) const ROUND_BASES: [f64; 8] = [
    10_000.0,
    500_000.0,
    1_000_000.0,
    100_000.0,
    50_000.0,
    5_000_000.0,
    10_000_000.0,
    1_000.0,
];

/// Context lengths models are trained with, most common first.
pub(super) const TRAINED_LENGTHS: [usize; 8] =
    [8192, 4096, 32_768, 2048, 16_384, 65_536, 131_072, 1024];

/// Factors of Llama 3 and YaRN scaling in released models (Llama 3.1 and 3.2: 8 and 32;
/// Qwen2.5 and DeepSeek: 4 and 40), tried where the fitted factor does not reproduce a file.
const MODEL_FACTORS: [f64; 5] = [8.0, 32.0, 4.0, 40.0, 2.0];

/// Original contexts of Llama 3 and YaRN scaling tried after [`TRAINED_LENGTHS`]: the short
/// ones of small models and tests (vLLM's YaRN from 64 positions).
pub(super) const SHORT_ORIGINALS: [usize; 5] = [512, 256, 128, 64, 32];

/// RoPE inverse frequencies `[R/2]`: plain (any base), or under a scaling: linear, Llama 3,
/// YaRN; NTK-aware and dynamic NTK only change the base, which the report says when the base
/// is not round. Compared element by element relative to each frequency (a loose `--atol`
/// would otherwise let a factor of 8 on the smallest frequencies through).
pub(super) fn inverse_frequencies(search: &mut Search, values: &[f64]) {
    let n = values.len();
    let table = ndarray::ArrayView1::from(values).into_dyn();
    let target = FrequencyTarget {
        label: format!("RoPE inverse frequencies, dim {}", 2 * n),
        table,
        tolerance: Tolerance {
            abs: search.subnormal_step,
            rel: search.tolerance.abs.max(search.tolerance.rel),
        },
        make: &|theta: &[f64], _, _: &[usize], _| ndarray::Array1::from(theta.to_vec()).into_dyn(),
        orient: &|table| table,
        plain: true,
        rows: 0,
        length: 0,
        words: Some(super::TableWords {
            kind: "rope-inv-freq",
            options: vec![("dim", (2 * n).to_string())],
        }),
        base_pair: n - 1,
        amplitude: None,
        layout: None,
        // Frequencies are compared relative to each value: float32 rounding is within that.
        torch: false,
    };
    scaled_frequencies(search, values, &target);
}

/// A table made from RoPE inverse frequencies, to identify through them: its label (kind and
/// the parameters read off the table), the table as loaded, how close a reading must come,
/// and how the frequencies make the table.
pub(super) struct FrequencyTarget<'a> {
    pub(super) label: String,
    /// The table with positions along its first axis.
    pub(super) table: ndarray::ArrayViewD<'a, f64>,
    pub(super) tolerance: Tolerance,
    /// The table that frequencies `theta` make, times `attention` where the kind has it, at
    /// rows `rows` of `table`; with `torch`, in PyTorch's float32 steps (`theta` then holds
    /// torch's float32 frequencies).
    pub(super) make: &'a MadeTable<'a>,
    /// Lays a made table out as the loaded one, for the report.
    pub(super) orient: &'a dyn Fn(ArrayD<f64>) -> ArrayD<f64>,
    /// Whether to try unscaled frequencies too (a table whose plain reading is tried
    /// elsewhere leaves them out).
    pub(super) plain: bool,
    /// Rows (positions) of `table`; 0 for a table of the frequencies themselves.
    pub(super) rows: usize,
    /// The current length the length-dependent scalings (dynamic NTK, LongRoPE) see, as Hugging
    /// Face reads it from the position ids: the largest position + 1 (`rows` for a table from
    /// position 0, more for one starting later); 0 for a table of the frequencies themselves.
    pub(super) length: usize,
    /// The pair whose frequency pins a plain base best (the table read it most precisely).
    pub(super) base_pair: usize,
    /// The factor a cache's values are multiplied by, as read off it.
    pub(super) amplitude: Option<f64>,
    /// Whether a float32 file may be PyTorch's float32 computation of a hypothesis.
    pub(super) torch: bool,
    /// How a cos or sin cache pairs its columns, which a model's code fixes: only models that
    /// pair them so are named ("as configured for"). `None` where the table does not say.
    pub(super) layout: Option<PairLayout>,
    /// The `poslab table` kind and shape options (length, start, width, layout) whose table
    /// this is, the frequencies' options left to each reading; `None` where no options say
    /// it (a table at positions given by a file).
    pub(super) words: Option<super::TableWords>,
}

/// How a float32 file's sin/cos table may have been computed.
#[derive(Debug, Clone, Copy)]
pub(super) enum Float32Reading {
    /// Exactly as PyTorch's CPU kernels compute it.
    Torch(TorchMode),
    /// From frequencies its own library's `exp` or `pow` formed
    /// ([`crate::check::verdict::own_frequencies_table`]).
    OwnFrequencies,
    /// With the frequencies another library forms in float32 (sinusoidal tables only).
    Recipe(crate::encoding::torch_f32::libraries::FrequencyRecipe),
}

/// Rows a long table's hypotheses are first tried on: spread over the whole table, since
/// scalings show on the slow pairs, late.
pub(super) fn probe_rows(rows: usize) -> Option<Vec<usize>> {
    (rows > 2 * PROBE_ROWS).then(|| {
        (0..PROBE_ROWS)
            .map(|k| k * (rows - 1) / (PROBE_ROWS - 1))
            .collect()
    })
}

/// What the readings of one table of frequencies share: the table and its tolerances, and
/// what has been tried.
struct Readings<'t, 'a> {
    target: &'t FrequencyTarget<'a>,
    rotary: usize,
    tolerance: Tolerance,
    /// What a rounded parameter must fit to: the file's own precision.
    strict: Tolerance,
    /// Whether the user's tolerance is looser than the file's precision.
    loosened: bool,
    /// How far a float32 computation of a reading can miss the exact one.
    float32_reach: f64,
    all_rows: Vec<usize>,
    /// The rows a long table's readings are first tried on, and the table's values there.
    probe: Option<(Vec<usize>, ArrayD<f64>)>,
    /// The reading a second search makes whole (`Search::whole_of`).
    whole_of: Option<String>,
    tried: Vec<Candidate>,
    /// Rounded parameters that fit within a tolerance the user loosened but not to the
    /// file's precision: named in place of a fit that does no better (10000 and 16, not
    /// 9999.98 and 15.998), or, when nothing fits, as the roundest reading within the
    /// tolerance.
    round_misses: Vec<Candidate>,
    /// Whether any hypothesis matched or fitted as a rounded miss: LongRoPE's free factors
    /// are tried only when nothing else explains the table.
    explained: bool,
}

impl Readings<'_, '_> {
    /// A reading's candidate, its table laid out as the file's.
    fn candidate(
        &self,
        description: String,
        reference: ArrayD<f64>,
        comparison: Comparison,
        partial: bool,
    ) -> Candidate {
        Candidate::new(
            description,
            (self.target.orient)(reference),
            comparison,
            partial,
        )
    }

    fn error_of(&self, c: &Comparison) -> f64 {
        if self.tolerance.abs == 0.0 {
            c.max_rel_error()
        } else {
            c.max_abs_error()
        }
    }

    /// The table of frequencies `theta` (exact, or torch's float32 ones with `torch`), tried
    /// on the probe rows first: the comparison, its reference and whether only the probe was
    /// made. The closest miss of a first search is made whole in a second.
    fn evaluate(
        &self,
        theta: &[f64],
        attention: f64,
        torch: bool,
        needed: Tolerance,
        whole: bool,
    ) -> (ArrayD<f64>, Comparison, bool) {
        if let Some((rows, probe_table)) = self.probe.as_ref().filter(|_| !whole) {
            let reference = (self.target.make)(theta, attention, rows, torch);
            let comparison = compare(&reference, probe_table, needed);
            if !comparison.matches() {
                return (reference, comparison, true);
            }
        }
        let reference = (self.target.make)(theta, attention, &self.all_rows, torch);
        let comparison =
            crate::check::compare_views(reference.view(), self.target.table.view(), needed);
        (reference, comparison, false)
    }

    /// Tries a reading; whether it matched.
    fn consider(
        &mut self,
        description: String,
        freqs: &RopeFrequencies,
        base: f64,
        rounded: bool,
    ) -> bool {
        let (tried, misses) = (self.tried.len(), self.round_misses.len());
        let matched = self.consider_once(description, freqs, base, rounded);
        if matched {
            self.explained = true;
        }
        // The candidate this reading added (tried, or a rounded miss kept aside) says the
        // table's words.
        let words = self.words_for(freqs, base);
        // (A rounded miss moved over from aside keeps the words of its own reading.)
        if self.tried.len() > tried
            && let Some(candidate) = self.tried.last_mut()
            && candidate.table.is_none()
        {
            candidate.table = words.clone();
        }
        if self.round_misses.len() > misses
            && let Some(candidate) = self.round_misses.last_mut()
            && candidate.table.is_none()
        {
            candidate.table = words;
        }
        matched
    }

    /// The target's words with the reading's frequencies: its base and scaling, or the
    /// frequencies themselves where they are given outright.
    fn words_for(&self, freqs: &RopeFrequencies, base: f64) -> Option<super::TableWords> {
        let mut words = self.target.words.clone()?;
        match &freqs.given {
            Some(given) => words.options.push((
                "inv_freq",
                crate::encoding::rope_scaling::number_list(given),
            )),
            None => {
                words.options.push(("base", format!("{base}")));
                words.options.extend(freqs.scaling.as_options());
            }
        }
        Some(words)
    }

    fn consider_once(
        &mut self,
        description: String,
        freqs: &RopeFrequencies,
        base: f64,
        rounded: bool,
    ) -> bool {
        if freqs.validate(self.rotary, base).is_err() {
            return false;
        }
        let needed = if rounded { self.strict } else { self.tolerance };
        let attention = freqs.attention_factor();
        let whole = self.whole_of.as_deref() == Some(description.as_str());
        let (reference, comparison, partial) = self.evaluate(
            &freqs.inv_freq(self.rotary, base, self.target.length),
            attention,
            false,
            needed,
            whole,
        );
        if comparison.matches() {
            let full = crate::check::compare_views(
                reference.view(),
                self.target.table.view(),
                self.tolerance,
            );
            // A fit whose error a rounded reading already matches (to twice it) is that
            // rounded reading.
            let fitted_error = self.error_of(&full);
            if let Some(k) = (!rounded)
                .then(|| {
                    self.round_misses
                        .iter()
                        .position(|c| self.error_of(&c.comparison) <= 2.0 * fitted_error)
                })
                .flatten()
            {
                self.tried.push(self.round_misses.swap_remove(k));
                return true;
            }
            self.tried
                .push(self.candidate(description, reference, full, false));
            return true;
        }
        // Float32 arithmetic moves an angle by a few float32 steps of the largest position:
        // a table that misses by more than that (or than FLOAT32_PROBE_MISS of the file's
        // range) is no float32 reading of these parameters, and its readings are not tried.
        if self.target.torch
            && self.error_of(&comparison) <= self.float32_reach
            && let Some(candidate) =
                self.float32_reading(&description, freqs, base, attention, needed)
        {
            self.tried.push(candidate);
            return true;
        }
        if rounded {
            // Held to the tolerance, as every other reading is: within it, a rounded reading
            // the user's loosened tolerance admits; outside it, a miss like any other (of
            // misses as close as a fit, the rounded one is named).
            let (reference, comparison, partial) = self.evaluate(
                &freqs.inv_freq(self.rotary, base, self.target.length),
                attention,
                false,
                self.tolerance,
                whole,
            );
            if !comparison.matches() {
                self.tried
                    .push(self.candidate(description, reference, comparison, partial));
            } else if self.loosened && !partial {
                self.explained = true;
                self.round_misses
                    .push(self.candidate(description, reference, comparison, false));
            }
            return false;
        }
        self.tried
            .push(self.candidate(description, reference, comparison, partial));
        false
    }

    /// The reading as PyTorch's float32 computes it (in any of the ways a CPU build forms its
    /// frequencies), or from float32 frequencies another library's exp or pow formed
    /// (searched on the probe rows, then confirmed on the whole table).
    fn float32_reading(
        &self,
        description: &str,
        freqs: &RopeFrequencies,
        base: f64,
        attention: f64,
        needed: Tolerance,
    ) -> Option<Candidate> {
        {
            for mode in TorchMode::all() {
                let theta: Vec<f64> = freqs
                    .inv_freq_torch(self.rotary, base, self.target.length, mode)
                    .into_iter()
                    .map(f64::from)
                    .collect();
                let (reference, comparison, _) =
                    self.evaluate(&theta, f64::from(attention as f32), true, needed, false);
                if comparison.matches() {
                    let form = match mode.form {
                        FreqForm::Pow => "pow",
                        FreqForm::Exp => "exp",
                    };
                    let full = crate::check::compare_views(
                        reference.view(),
                        self.target.table.view(),
                        self.tolerance,
                    );
                    return Some(Candidate::new(
                        format!(
                            "{description}, as PyTorch computes it in float32 (--arith torch-f32 --freq-form {form})"
                        ),
                        (self.target.orient)(reference),
                        full,
                        false,
                    ));
                }
            }
        }
        // Frequencies another library's exp or pow formed: searched on the probe rows, then
        // confirmed on the whole table.
        {
            let exact = freqs.inv_freq(self.rotary, base, self.target.length);
            let centers: Vec<Vec<f64>> = std::iter::once(exact)
                .chain(TorchMode::all().into_iter().map(|mode| {
                    freqs
                        .inv_freq_torch(self.rotary, base, self.target.length, mode)
                        .into_iter()
                        .map(f64::from)
                        .collect()
                }))
                .collect();
            let attention = f64::from(attention as f32);
            let fit = |rows: &[usize], loaded: ndarray::ArrayViewD<'_, f64>| {
                crate::check::verdict::fit_own_frequencies(
                    centers.clone(),
                    loaded,
                    |scale| scale / 4096.0,
                    |theta| Some((self.target.make)(&theta, attention, rows, true)),
                )
            };
            let on_probe = match &self.probe {
                Some((rows, probe_table)) => fit(rows, probe_table.view()).is_some(),
                None => true,
            };
            if let Some(reference) = on_probe
                .then(|| fit(&self.all_rows, self.target.table.view()))
                .flatten()
            {
                let full = crate::check::compare_views(
                    reference.view(),
                    self.target.table.view(),
                    self.tolerance,
                );
                if full.matches() {
                    return Some(Candidate::new(
                        format!(
                            "{description}, in float32 from float32 frequencies its library's \
                             exp or pow formed (each within {} ulp of PyTorch's or of the exact \
                             one)",
                            crate::check::verdict::OWN_FREQUENCY_ULPS
                        ),
                        (self.target.orient)(reference),
                        full,
                        false,
                    ));
                }
            }
        }
        None
    }
}

/// Frequencies with this scaling, the whole head rotated.
fn plain(scaling: RopeScaling) -> RopeFrequencies {
    RopeFrequencies {
        rotary_dim: None,
        scaling,
        ..Default::default()
    }
}

/// Readings of inverse frequencies `values` (as loaded, or read off a table made from them):
/// plain with any base, linear, Llama 3 or YaRN scaling; each is checked on `target`.
pub(super) fn scaled_frequencies(
    search: &mut Search,
    values: &[f64],
    target: &FrequencyTarget<'_>,
) {
    let n = values.len();
    if n < 2 || values.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
        return;
    }
    let table = &target.table;
    let tolerance = target.tolerance;
    let strict = if tolerance.abs == 0.0 {
        Tolerance {
            abs: 0.0,
            rel: tolerance.rel.min(search.strict.rel.max(search.strict.abs)),
        }
    } else {
        Tolerance {
            abs: tolerance.abs.min(search.strict.abs),
            rel: tolerance.rel.min(search.strict.rel),
        }
    };
    let float32_reach = if tolerance.abs == 0.0 {
        // Frequencies compared relative to each value.
        FLOAT32_PROBE_MISS
    } else {
        let steps = 8.0 * target.rows as f64 * f64::from(f32::EPSILON);
        crate::check::largest_magnitude(table) * FLOAT32_PROBE_MISS.max(steps)
    };
    let mut r = Readings {
        target,
        rotary: 2 * n,
        tolerance,
        strict,
        loosened: tolerance != strict,
        float32_reach,
        all_rows: (0..target.rows).collect(),
        probe: probe_rows(target.rows).map(|rows| {
            let table = table.select(ndarray::Axis(0), &rows);
            (rows, table)
        }),
        whole_of: search.whole_of.clone(),
        tried: Vec::new(),
        round_misses: Vec::new(),
        explained: search.candidates.iter().any(|c| c.comparison.matches()),
    };
    let plain_match = plain_readings(&mut r, values);
    scaled_readings(&mut r, values, plain_match, false);
    configured_readings(&mut r, values);
    // Only when neither the fit nor a released model's configuration explains the file with
    // round parameters (LongRoPE's fitted factors explain any frequencies), within the
    // tolerance or the loosened one.
    let longrope = |c: &Candidate| c.description.contains(", LongRoPE scaling");
    let explained = |c: &Candidate| c.comparison.matches() && !longrope(c);
    if !r.tried.iter().any(explained) && r.round_misses.iter().all(longrope) {
        scaled_readings(&mut r, values, plain_match, true);
    }
    let (label, mut tried) = (&target.label, r.tried);
    // Nothing fits but rounded readings within the loosened tolerance: those are the readings.
    if !tried.iter().any(|c| c.comparison.matches()) {
        tried.extend(r.round_misses);
    }
    // Keep per hypothesis kind the match or the closest, as consider_bases does.
    let kinds = [
        "linear scaling",
        "Llama 3 scaling",
        "YaRN scaling",
        "NTK-aware scaling",
        "dynamic NTK scaling",
        "LongRoPE scaling",
        "as configured for",
    ];
    let kind_of = |c: &Candidate| {
        kinds
            .iter()
            // As a clause of its own: a plain base's note names scalings too.
            .find(|k| c.description.contains(&format!(", {k}")))
            .copied()
            .unwrap_or("plain")
    };
    let mut best: Vec<Candidate> = Vec::new();
    for candidate in tried {
        let kind = kind_of(&candidate);
        match best.iter_mut().find(|b| kind_of(b) == kind) {
            Some(kept) => {
                // Of misses as close as each other, the first tried: the roundest.
                let better = (candidate.comparison.matches() && !kept.comparison.matches())
                    || (!candidate.comparison.matches()
                        && !kept.comparison.matches()
                        && super::miss_order(&candidate, kept, search.strict).is_lt());
                if better {
                    *kept = candidate;
                }
            }
            None => best.push(candidate),
        }
    }
    for mut candidate in best {
        // One hypothesis per kind, whatever its parameters.
        candidate.hypothesis = format!("{label}, {}", kind_of(&candidate));
        search.candidates.push(candidate);
    }
    search.drop_unneeded_tables();
}

/// Plain frequencies of any base, or a round base raised by NTK-aware or dynamic NTK scaling:
/// the base that matched.
fn plain_readings(r: &mut Readings, values: &[f64]) -> Option<f64> {
    let n = values.len();
    let (target, rotary) = (r.target, r.rotary);
    let label = &target.label;
    // Plain: theta_k = base^(-k/n); the slowest pair pins the base best (its error is not
    // amplified) unless the table could not show it (a cache too short for it to turn).
    let k = target.base_pair.clamp(1, n - 1);
    let plain_base = values[k].powf(-(n as f64) / k as f64);
    let default = plain(RopeScaling::default());
    let mut plain_match = None;
    // Up to 6 digits: a float32 cache pins its base that well, and PyTorch's float32 table of
    // base 12345 is not that of 12344.998.
    let plain_bases = if target.plain {
        base_choices_to(plain_base, 6)
    } else {
        Vec::new()
    };
    // PyTorch rounds the base to float32: where the fit lands a few float32 steps off, the
    // float32 values around it are the candidates.
    let float32_neighbours: Vec<f64> = if target.torch && target.plain {
        let nearest = plain_base as f32;
        (-4i32..=4)
            .filter(|&k| k != 0)
            .filter_map(|k| {
                let bits = nearest.to_bits().checked_add_signed(k)?;
                Some(f64::from(f32::from_bits(bits)))
            })
            .chain(std::iter::once(f64::from(nearest)))
            .collect()
    } else {
        Vec::new()
    };
    // Bases of 1 to 3 significant digits are round; finer roundings are fits.
    let round_plain = base_choices(plain_base);
    let mut plain_bases = plain_bases;
    // Before the fitted value itself, which comes last.
    let fitted_last = plain_bases.pop();
    plain_bases.extend(float32_neighbours);
    plain_bases.extend(fitted_last);
    for base in plain_bases {
        let round = base != plain_base;
        // Neither the fit nor a float32 step from it is a round base.
        let note = if round && round_plain.contains(&base) {
            String::new()
        } else {
            ", a base that is not round (NTK-aware and dynamic NTK scaling give such bases: base · s^(R/(R-2)))".to_owned()
        };
        if r.consider(format!("{label}, base {base}{note}"), &default, base, round) {
            plain_match = Some(base);
            break;
        }
    }
    // A base that is not round may be a round one that NTK-aware scaling raised by
    // s^(R/(R-2)), or dynamic NTK by (s·seq/L - (s-1))^(R/(R-2)) for a table of seq positions.
    let round_base = plain_match.is_some_and(|b| !ROUND_BASES.contains(&b));
    if target.plain && (plain_match.is_none() || round_base) {
        let exponent = (rotary - 2) as f64 / rotary as f64;
        'ntk: for base in ROUND_BASES.into_iter().filter(|&b| b < plain_base) {
            let growth = (plain_base / base).powf(exponent);
            let close = |value: f64| (value - growth).abs() <= 2e-3 * growth;
            if let Some(factor) = round_choices(growth).into_iter().find(|&f| close(f)) {
                let freqs = plain(RopeScaling {
                    kind: ScalingKind::Ntk,
                    factor: Some(factor),
                    ..Default::default()
                });
                let description =
                    format!("{label}, base {base}, NTK-aware scaling, factor {factor}");
                if r.consider(description, &freqs, base, true) {
                    break 'ntk;
                }
            }
            let seq = target.length as f64;
            for factor in [2.0, 4.0, 8.0, 16.0, 32.0, 64.0] {
                for trained in TRAINED_LENGTHS {
                    if seq <= trained as f64
                        || !close(factor * seq / trained as f64 - (factor - 1.0))
                    {
                        continue;
                    }
                    let freqs = plain(RopeScaling {
                        kind: ScalingKind::Dynamic,
                        factor: Some(factor),
                        max_position_embeddings: Some(trained),
                        ..Default::default()
                    });
                    let description = format!(
                        "{label}, base {base}, dynamic NTK scaling, factor {factor}, max_position_embeddings {trained} (at length {})",
                        target.length
                    );
                    if r.consider(description, &freqs, base, true) {
                        break 'ntk;
                    }
                }
            }
        }
    }
    plain_match
}

/// Readings that keep the fastest frequencies or divide all by one factor (linear, Llama 3,
/// YaRN), their base from theta_1.
/// `model_factors`: instead of the factor fitted from the slowest pair, the factors of released
/// models (the slowest pair of a cache at late positions turns too little to pin its
/// frequency, a cos cache being flat there, so the fit can miss the factor).
fn scaled_readings(
    r: &mut Readings,
    values: &[f64],
    plain_match: Option<f64>,
    model_factors: bool,
) {
    let n = values.len();
    let (target, rotary) = (r.target, r.rotary);
    let label = &target.label;
    // The scalings below keep the fastest frequencies (or divide all of them by one factor):
    // the base comes from theta_1.
    let high_base = values[1].powf(-(n as f64));
    // Each base tried with the original contexts it is tried with: first the fit's bases with
    // the common contexts; then, only when nothing has matched, the short contexts and the
    // common round bases (where the ramp reaches the fastest pairs, YaRN from a short original
    // context, theta_1 is scaled too and the fit misses).
    let fitted_bases = match plain_match {
        Some(_) => Vec::new(),
        None => base_choices(high_base),
    };
    let mut later: Vec<(f64, Vec<usize>)> = fitted_bases
        .iter()
        .map(|&b| (b, SHORT_ORIGINALS.to_vec()))
        .collect();
    if plain_match.is_none() {
        let every: Vec<usize> = TRAINED_LENGTHS.into_iter().chain(SHORT_ORIGINALS).collect();
        later.extend(
            ROUND_BASES
                .into_iter()
                .filter(|b| !fitted_bases.contains(b))
                .map(|b| (b, every.clone())),
        );
    }
    let first: Vec<(f64, Vec<usize>)> = fitted_bases
        .iter()
        .map(|&b| (b, TRAINED_LENGTHS.to_vec()))
        .collect();
    let mut found = plain_match.is_some();
    if plain_match.is_none() && !model_factors && linear_readings(r, values) {
        found = true;
    }
    // Llama 3 and YaRN: the slowest frequency is divided by the factor.
    for (pass, bases) in [first, later].into_iter().enumerate() {
        if pass == 1 && (found || model_factors) {
            break;
        }
        'scaled: for (base, originals) in bases {
            let unscaled = 1.0 / base.powf((rotary - 2) as f64 / rotary as f64);
            let factor_fit = unscaled / values[n - 1];
            if factor_fit <= 1.0 + 1e-6 {
                continue;
            }
            let fitted = round_choices(factor_fit);
            let factors = match model_factors {
                false => fitted,
                true => MODEL_FACTORS
                    .into_iter()
                    .filter(|f| !fitted.contains(f))
                    .collect(),
            };
            for factor in factors {
                // The trained lengths and factor ratios of the grid below are parameters, not
                // rounding; a rounded base or factor must fit closely.
                let rounded = factor != factor_fit || base != high_base;
                for &original in &originals {
                    for (low, high) in [(1.0, 4.0), (1.0, 8.0), (2.0, 4.0)] {
                        let freqs = plain(RopeScaling {
                            kind: ScalingKind::Llama3,
                            factor: Some(factor),
                            original_max_position_embeddings: Some(original),
                            low_freq_factor: Some(low),
                            high_freq_factor: Some(high),
                            ..Default::default()
                        });
                        if r.consider(
                            format!(
                                "{label}, base {base}, Llama 3 scaling, factor {factor}, original context {original}, low_freq_factor {low}, high_freq_factor {high} (wavelengths beyond {} divided by the factor, below {} kept: any original context and factors with these two ratios give the same table)",
                                original as f64 / low,
                                original as f64 / high
                            ),
                            &freqs,
                            base,
                            rounded,
                        ) {
                            found = true;
                            break 'scaled;
                        }
                    }
                    for truncate in [true, false] {
                        let yarn = |attention_factor: Option<f64>| {
                            plain(RopeScaling {
                                kind: ScalingKind::Yarn,
                                factor: Some(factor),
                                original_max_position_embeddings: Some(original),
                                truncate: Some(truncate),
                                attention_factor,
                                ..Default::default()
                            })
                        };
                        // A cache multiplied by another factor than YaRN's own (given as
                        // attention_factor, or mscale / mscale_all_dim as DeepSeek-V2 has them).
                        let default = yarn(None).attention_factor();
                        let mut attentions = vec![None];
                        if let Some(amplitude) = target.amplitude
                            && (amplitude - default).abs() > 1e-6 * amplitude
                        {
                            let close = round_choices(amplitude)
                                .into_iter()
                                .find(|a| (a - amplitude).abs() <= 1e-5 * amplitude)
                                .unwrap_or(amplitude);
                            attentions.push(Some(close));
                        }
                        for attention in attentions {
                            let truncated = if truncate { "" } else { ", truncate false" };
                            let factor_text = match attention {
                                Some(a) => format!(", attention factor {a}"),
                                None => String::new(),
                            };
                            if r.consider(
                                format!(
                                    "{label}, base {base}, YaRN scaling, factor {factor}, original context {original}, beta_fast 32, beta_slow 1{truncated}{factor_text}"
                                ),
                                &yarn(attention),
                                base,
                                rounded,
                            ) {
                                found = true;
                                break 'scaled;
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Linear scaling (theta_0 = 1 / factor), or vLLM's fixed NTK said as its power: whether a
/// reading matched.
fn linear_readings(r: &mut Readings, values: &[f64]) -> bool {
    let n = values.len();
    let (target, rotary) = (r.target, r.rotary);
    let label = &target.label;
    let k = target.base_pair.clamp(1, n - 1);
    // Linear: theta_0 = 1 / factor.
    let linear_factor = 1.0 / values[0];
    if linear_factor > 1.0 + 1e-6 {
        let fitted_base = (values[k] * linear_factor).powf(-(n as f64) / k as f64);
        // vLLM's fixed NTK divides every frequency by s^(2/R) for a round s (and multiplies
        // the base by s): such a factor is said as that power, before the fitted one.
        let exponent = 2.0 / rotary as f64;
        let mut ntk_powers = round_choices(linear_factor.powf(1.0 / exponent));
        ntk_powers.pop();
        let mut factors: Vec<(f64, String)> = round_choices(linear_factor)
            .into_iter()
            .map(|factor| (factor, format!("{factor}")))
            .collect();
        let fitted_factor = factors.pop();
        // Only a power the fit lands on to float32's precision: with a wide rotary part every
        // s in a broad range gives nearly the same power (300^(2/80000) = 1.00014).
        let lands = |s: f64| (s.powf(exponent) - linear_factor).abs() <= 1e-7 * linear_factor;
        factors.extend(ntk_powers.into_iter().filter(|&s| s > 1.0 && lands(s)).map(|s| {
            let power = s.powf(exponent);
            (
                power,
                format!(
                    "{power} = {s}^(2/{rotary}) (vLLM's fixed NTK by {s}: the base times {s}, every frequency divided by {s}^(2/{rotary}))"
                ),
            )
        }));
        factors.extend(fitted_factor);
        for (factor, factor_text) in factors {
            // Up to 6 digits, as for a plain base: a float32 cache pins it that well.
            for base in base_choices_to(fitted_base, 6) {
                let rounded = factor != linear_factor || base != fitted_base;
                let freqs = plain(RopeScaling {
                    kind: ScalingKind::Linear,
                    factor: Some(factor),
                    ..Default::default()
                });
                if r.consider(
                    format!(
                        "{label}, base {base}, linear scaling (Position Interpolation), factor {factor_text}"
                    ),
                    &freqs,
                    base,
                    rounded,
                ) {
                    return true;
                }
            }
        }
    }
    false
}

/// The models poslab ships, by name, then LongRoPE's free factors where nothing else
/// explains the table.
fn configured_readings(r: &mut Readings, values: &[f64]) {
    let (target, rotary, strict) = (r.target, r.rotary, r.strict);
    let label = &target.label;
    // The models poslab ships (assets/models): LongRoPE's per-pair factors can only be named
    // this way, and any other match is worth a model's name.
    if target.plain {
        for config in MODEL_CONFIGS
            .iter()
            .filter_map(|(_, text)| ModelConfig::parse(text).ok())
        {
            let PositionEncoding::Rope {
                head_dim,
                base,
                freqs,
                layout,
            } = &config.encoding
            else {
                continue;
            };
            if freqs.rotary(*head_dim) != rotary || target.layout.is_some_and(|l| l != *layout) {
                continue;
            }
            let mut readings = vec![(String::new(), (**freqs).clone())];
            // A frequency table alone says nothing of the length: LongRoPE's long factors are
            // the other reading.
            if target.rows == 0 && freqs.scaling.kind == ScalingKind::Longrope {
                let mut long = (**freqs).clone();
                long.scaling.short_factor = long.scaling.long_factor.clone();
                readings.push((
                    " (its long factors, beyond the original context)".to_owned(),
                    long,
                ));
            }
            for (note, freqs) in readings {
                let description = format!(
                    "{label}, base {base}, as configured for {} ({} scaling){note}",
                    config.name,
                    freqs.scaling.kind.name()
                );
                if r.consider(description, &freqs, *base, true) {
                    break;
                }
            }
        }
    }
    // LongRoPE for a model poslab does not ship: its per-pair factors are free, so it is read
    // only where nothing else explains the table; rounded factors first, then as fitted.
    if !r.explained
        && let Some(reading) = super::read_longrope::longrope_reading(values, target, strict)
    {
        let description = super::read_longrope::longrope_description(label, &reading);
        if !r.consider(description.clone(), &reading.freqs, reading.base, true) {
            r.consider(description, &reading.freqs, reading.base, false);
        }
    }
}
