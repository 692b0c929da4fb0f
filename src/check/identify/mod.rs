//! Which table is this? Hypotheses from the table's shape (sinusoidal in either layout, sin or
//! cos first, either spacing, transposed or not, at any start; RoPE inverse frequencies,
//! angles and cos/sin caches in either pairing, plain or under linear, NTK-aware, dynamic NTK,
//! Llama 3 or YaRN scaling, with the attention factor a cache is multiplied by; ALiBi slopes,
//! biases and the per-key forms of BLOOM and MPT, and CROMA's 2D biases; 2D sin-cos tables in MAE's and timm's
//! orders, with or without a CLS row; patch distances; T5 buckets and clipped offsets, in
//! [`relative`]), their parameters fitted from the data,
//! each computed by the CPU engine and compared element by element (frequencies relative to
//! each value); the closest wins. For a float32 file, the kinds PyTorch computes in float32
//! are also computed that way (`--arith torch-f32`), since at long lengths the float32 angle
//! alone is further from the exact table than any tolerance that still tells conventions apart.

use ndarray::{Array2, ArrayD, Ix1, Ix2, Ix3};

use super::{Comparison, Tolerance, compare, squeezed};
use crate::encoding::alibi::{self, Alibi2dParams, AlibiMode, AlibiParams};
use crate::encoding::grid::{DistanceMetric, GridParams};
use crate::encoding::rope::{self, CachePart, RopeLayout, RopeParams};
use crate::encoding::rope_scaling::{RopeFrequencies, RopeScaling, ScalingKind};
use crate::encoding::sinusoidal::{SinusoidalLayout, SinusoidalParams, Spacing};
use crate::encoding::torch_f32::{self, FreqForm, TorchMode};
use crate::engine::{TableSpec, cpu};
use crate::import::StoredFloat;
use crate::import::model_config::{MODEL_CONFIGS, ModelConfig, PositionEncoding};

mod relative;

/// The most elements a table may have to be identified (each hypothesis computes one).
pub const MAX_ELEMENTS: usize = 1 << 24;
/// Hypotheses are first tried on this many rows; only those that match there are computed
/// whole.
const PROBE_ROWS: usize = 32;

/// One hypothesis and how well it fits.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// The kind and convention, without the fitted parameters: one candidate per hypothesis.
    pub hypothesis: String,
    pub description: String,
    /// The hypothesis's table, laid out as the loaded one (squeezed); only its first rows
    /// when `partial`. Kept for the candidate named first only: others hold an empty table.
    pub reference: ArrayD<f64>,
    pub comparison: Comparison,
    /// Ruled out on the first rows alone: its error is at least the one given.
    pub partial: bool,
    /// Its parameters are as fitted, not round: where another hypothesis fits too, that one
    /// is named first.
    pub fitted: bool,
    /// How many of its kind's defaults it departs from (a base other than 10000, a
    /// context-extension scaling): of hypotheses that fit equally well, the one that assumes
    /// least is named first.
    pub departures: usize,
}

impl Candidate {
    fn new(
        description: String,
        reference: ArrayD<f64>,
        comparison: Comparison,
        partial: bool,
    ) -> Self {
        // The fitted base is the parameter that varies within one hypothesis.
        let hypothesis = description
            .split(", base ")
            .next()
            .unwrap_or(&description)
            .to_owned();
        let fitted = description.contains("a base that is not round");
        let departures = departures(&description);
        Self {
            hypothesis,
            description,
            reference,
            comparison,
            partial,
            fitted,
            departures,
        }
    }
}

/// What a description assumes beyond its kind's defaults: a base other than 10000, and a
/// context-extension scaling. ALiBi's slopes for 2 heads are also RoPE's frequencies at base
/// 256 under linear scaling by 16, and a tensor2tensor table at base 10000 with d = 4 is also a
/// Vaswani one at base 10^8; the plainer reading is the likelier.
fn departures(description: &str) -> usize {
    let base = description.split(", base ").nth(1).map(|rest| {
        rest.split([',', ' '])
            .next()
            .is_some_and(|number| number != "10000")
    });
    usize::from(base.unwrap_or(false)) + usize::from(description.contains(" scaling"))
}

/// Every hypothesis tried, the closest first.
#[derive(Debug, Clone)]
pub struct Identification {
    pub shape: Vec<usize>,
    pub candidates: Vec<Candidate>,
    /// For a float16 or bfloat16 file, the type its values were compared at the precision of.
    pub narrow: Option<StoredFloat>,
}

impl Identification {
    pub fn best(&self) -> Option<&Candidate> {
        self.candidates.first()
    }

    /// Whether the closest hypothesis matches within the tolerance.
    pub fn found(&self) -> bool {
        self.best().is_some_and(|c| c.comparison.matches())
    }

    /// What a terminal (and the Check view) says.
    pub fn report(&self) -> String {
        let describe = |c: &Candidate| {
            format!(
                "{}, max error {}{:.1e}",
                c.description,
                if c.partial { "≥ " } else { "" },
                c.comparison.max_abs_error()
            )
        };
        let mut lines = Vec::new();
        if let Some(narrow) = self.narrow {
            lines.push(format!(
                "compared at the precision a {} file holds: within 2^-{} of each value (2^-{} near zero), so parameters closer than that read alike",
                narrow.name(),
                narrow.fraction_bits(),
                narrow.fraction_bits() + 1
            ));
        }
        match self.best() {
            Some(best) if best.comparison.matches() => {
                lines.push(format!("identified: {}", describe(best)))
            }
            Some(best) => lines.push(format!(
                "no match within the tolerance; closest: {}",
                describe(best)
            )),
            None => lines.push(format!(
                "no match: no kind poslab knows has a table of shape {:?}",
                self.shape
            )),
        }
        if let Some(second) = self.candidates.get(1) {
            let both = self.found() && second.comparison.matches();
            lines.push(format!(
                "runner-up: {}{}",
                describe(second),
                if both {
                    " (also within the tolerance: for these parameters the two give the same table)"
                } else {
                    ""
                }
            ));
        }
        lines.join("\n")
    }
}

/// The base rounded to 1, 2 and 3 significant digits, then as fitted: a fitted 9999.7 is
/// reported as 10000 when 10000 fits too.
fn base_choices(base: f64) -> Vec<f64> {
    base_choices_to(base, 3)
}

/// [`base_choices`] with up to `digits` significant digits.
fn base_choices_to(base: f64, digits: i32) -> Vec<f64> {
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
fn best_conditioned(
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
fn angle_rate(sin: &[f64], cos: &[f64]) -> Option<(f64, f64)> {
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
fn resolve_start(freqs: &[f64], phases: &[f64]) -> Option<u64> {
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

struct Search {
    table: ArrayD<f64>,
    tolerance: Tolerance,
    /// How closely a rounded parameter (base 10000 for a fitted 9999.8) must fit, at most:
    /// float32 noise, or a narrow file's own precision, which pins nothing more finely.
    strict: Tolerance,
    /// How far a narrow file's rounding may move a value near 1 (0 for float32 and float64).
    noise: f64,
    /// The spacing of a narrow file's smallest (subnormal) values: float16 holds frequencies
    /// below 6e-5 only to this absolute step.
    subnormal_step: f64,
    /// The file holds float32 values: a hypothesis PyTorch computes in float32 is also tried
    /// that way.
    float32: bool,
    candidates: Vec<Candidate>,
}

impl Search {
    fn consider(&mut self, description: String, reference: ArrayD<f64>) {
        let comparison = compare(&reference, &self.table, self.tolerance);
        if comparison.shapes_match() {
            self.candidates.push(Candidate::new(
                description,
                squeezed(&reference),
                comparison,
                false,
            ));
            self.drop_unneeded_tables();
        }
    }

    /// A hypothesis whose whole table is costly: its first rows, `first_rows` (at most
    /// [`PROBE_ROWS`], made by formula), are compared with the file's first; only when they
    /// match is the whole table made (`whole`) and compared. A miss on the first rows is kept
    /// as a partial candidate (its error is at least the one found).
    fn consider_probed(
        &mut self,
        description: String,
        first_rows: ArrayD<f64>,
        whole: impl FnOnce() -> Option<ArrayD<f64>>,
    ) {
        let probe = first_rows.shape().first().copied().unwrap_or(0);
        let rows = self.table.shape().first().copied().unwrap_or(0);
        if probe < rows && self.table.ndim() == first_rows.ndim() {
            let table_rows = self
                .table
                .slice_axis(ndarray::Axis(0), ndarray::Slice::from(..probe))
                .to_owned();
            let comparison = compare(&first_rows, &table_rows, self.tolerance);
            if comparison.shapes_match() && !comparison.matches() {
                self.candidates
                    .push(Candidate::new(description, first_rows, comparison, true));
                self.drop_unneeded_tables();
                return;
            }
        }
        if let Some(reference) = whole() {
            self.consider(description, reference);
        }
    }

    /// Only the hypothesis named first keeps its table (the Check view draws it, a figure
    /// plots it): that is a match, or the closest miss. Every other miss lets its table go as
    /// soon as a closer one is found, so a 4096 x 4096 file is not held forty times over.
    fn drop_unneeded_tables(&mut self) {
        let closest_miss = self
            .candidates
            .iter()
            .enumerate()
            .filter(|(_, c)| !c.comparison.matches())
            .min_by(|(_, a), (_, b)| {
                a.comparison
                    .max_abs_error()
                    .total_cmp(&b.comparison.max_abs_error())
            })
            .map(|(k, _)| k);
        for (k, candidate) in self.candidates.iter_mut().enumerate() {
            if !candidate.comparison.matches() && Some(k) != closest_miss {
                candidate.reference = ArrayD::zeros(ndarray::IxDyn(&[0]));
            }
        }
    }

    /// Tries the bases of `base_choices`, roundest first, for a table made by `make` (its
    /// first `rows` positions, laid out as `view`; `orient` lays it out as the loaded table);
    /// keeps the first that matches, or the closest when none does. A base whose first
    /// [`PROBE_ROWS`] rows already miss is ruled out without computing the whole table.
    fn consider_bases(
        &mut self,
        base: f64,
        describe: impl Fn(f64) -> String,
        view: &Array2<f64>,
        orient: &dyn Fn(Array2<f64>) -> ArrayD<f64>,
        make: impl Fn(f64, usize) -> Option<Array2<f64>>,
        twin: Option<&TwinTable<'_>>,
    ) {
        if !(base.is_finite() && base > 1.0 && base < 1e12) {
            return;
        }
        // PyTorch's float32 computation of a base, for a float32 file: `make` in float32.
        let twin = twin.filter(|_| self.float32);
        let before = self.candidates.len();
        let rows = view.nrows();
        let probe = rows.min(PROBE_ROWS);
        let mut ruled_out: Vec<Candidate> = Vec::new();
        let first_rows = view.slice(ndarray::s![..probe, ..]).to_owned().into_dyn();
        let whole = view.clone().into_dyn();
        // The table `make_rows` makes for a base, first on the probe rows: `Ok` with the whole
        // table when it matches there, else the probe's reference and comparison.
        let tolerance = self.tolerance;
        let attempt = |make_rows: &dyn Fn(usize) -> Option<Array2<f64>>| {
            if probe < rows {
                let prefix = make_rows(probe)?;
                let comparison = compare(&prefix.clone().into_dyn(), &first_rows, tolerance);
                if !comparison.matches() {
                    return Some(Err((prefix, comparison)));
                }
            }
            make_rows(rows).map(Ok)
        };
        'bases: for choice in base_choices(base) {
            let exact = attempt(&|n| make(choice, n));
            let exact_miss = match exact {
                None => continue,
                Some(Err((prefix, comparison))) => {
                    ruled_out.push(Candidate::new(
                        describe(choice),
                        orient(prefix),
                        comparison,
                        true,
                    ));
                    true
                }
                Some(Ok(reference)) => {
                    self.consider(describe(choice), orient(reference));
                    if self
                        .candidates
                        .last()
                        .is_some_and(|c| c.comparison.matches())
                    {
                        break;
                    }
                    false
                }
            };
            let Some(twin) = twin else {
                continue;
            };
            // Ruled out on its first rows, which float32 holds well: no float32 reading either.
            if exact_miss {
                continue;
            }
            let readings = TorchMode::all()
                .map(Float32Reading::Torch)
                .into_iter()
                .chain([Float32Reading::OwnFrequencies]);
            for reading in readings {
                let Some(Ok(reference)) = attempt(&|n| twin(choice, n, reading)) else {
                    continue;
                };
                let comparison = compare(&reference.clone().into_dyn(), &whole, tolerance);
                if comparison.matches() {
                    let how = match reading {
                        Float32Reading::Torch(mode) => format!(
                            "as PyTorch computes it in float32 (--arith torch-f32 --freq-form {})",
                            match mode.form {
                                FreqForm::Pow => "pow",
                                FreqForm::Exp => "exp",
                            }
                        ),
                        Float32Reading::OwnFrequencies => format!(
                            "in float32 from float32 frequencies its library's exp or pow \
                             formed (each within {} ulp of PyTorch's or of the exact one)",
                            crate::check::verdict::OWN_FREQUENCY_ULPS
                        ),
                    };
                    self.candidates.push(Candidate::new(
                        format!("{}, {how}", describe(choice)),
                        squeezed(&orient(reference)),
                        comparison,
                        false,
                    ));
                    break 'bases;
                }
            }
        }
        self.candidates.extend(ruled_out);
        // Keep one: the match, or the closest.
        let tried = self.candidates.split_off(before);
        if let Some(kept) = tried.into_iter().rev().min_by(|a, b| {
            b.comparison
                .matches()
                .cmp(&a.comparison.matches())
                .then(a.partial.cmp(&b.partial))
                .then(
                    a.comparison
                        .max_abs_error()
                        .total_cmp(&b.comparison.max_abs_error()),
                )
        }) {
            self.candidates.push(kept);
        }
        self.drop_unneeded_tables();
    }
}

/// Identifies `table`.
/// Identifies `table` within `tolerance`. `stored` is the float type the file says it holds,
/// given when the tolerance is the default rather than the user's: a float32 file is also
/// tried as PyTorch's float32 computation of each hypothesis, and a float16 or bfloat16 file
/// is compared at the precision its type holds (no closer tolerance could match it).
pub fn identify(
    table: &ArrayD<f64>,
    tolerance: Tolerance,
    stored: Option<StoredFloat>,
) -> Identification {
    let table = squeezed(table);
    let narrow = stored.filter(|s| matches!(s, StoredFloat::F16 | StoredFloat::Bf16));
    let noise = narrow.map_or(0.0, |narrow| 2f64.powi(-(narrow.fraction_bits() + 1)));
    let (tolerance, strict) = match narrow {
        Some(narrow) => {
            // Rounding to the type moves a value by half a unit in its last place, at most
            // 2^-(fraction bits + 1) of it; twice that leaves room for the float32 arithmetic
            // that made the values before they were rounded.
            let precision = Tolerance {
                abs: 2f64.powi(-(narrow.fraction_bits() + 1)),
                rel: 2f64.powi(-narrow.fraction_bits()),
            };
            let widened = Tolerance {
                abs: tolerance.abs.max(precision.abs),
                rel: tolerance.rel.max(precision.rel),
            };
            (widened, widened)
        }
        None => (
            tolerance,
            Tolerance {
                abs: tolerance.abs.min(1e-6),
                rel: tolerance.rel.min(1e-5),
            },
        ),
    };
    let mut search = Search {
        table: table.clone(),
        tolerance,
        strict,
        noise,
        subnormal_step: match narrow {
            Some(StoredFloat::F16) => 2f64.powi(-24),
            _ => 0.0,
        },
        float32: stored == Some(StoredFloat::F32),
        candidates: Vec::new(),
    };
    if table.len() <= MAX_ELEMENTS {
        match table.ndim() {
            1 => one_dimensional(&mut search),
            2 => two_dimensional(&mut search),
            3 => three_dimensional(&mut search),
            _ => {}
        }
    }
    let mut candidates = search.candidates;
    // Matches first; among them, round parameters before fitted ones; then the closest.
    candidates.sort_by(|a, b| {
        let (a_match, b_match) = (a.comparison.matches(), b.comparison.matches());
        b_match
            .cmp(&a_match)
            .then((a_match && a.fitted).cmp(&(b_match && b.fitted)))
            .then(
                a.comparison
                    .max_abs_error()
                    .total_cmp(&b.comparison.max_abs_error()),
            )
    });
    // The best of each hypothesis: the same one with another base is not a runner-up.
    let mut seen = std::collections::HashSet::new();
    candidates.retain(|c| seen.insert(c.hypothesis.clone()));
    name_the_plainest_first(&mut candidates);
    Identification {
        shape: table.shape().to_vec(),
        candidates,
        narrow,
    }
}

/// Of the matches as close as the closest (within twice its error: the same table, computed
/// another way), the one with the fewest [`departures`] goes first.
fn name_the_plainest_first(candidates: &mut [Candidate]) {
    let Some(best) = candidates
        .first()
        .filter(|c| c.comparison.matches() && !c.fitted)
    else {
        return;
    };
    let error = best.comparison.max_abs_error();
    let tied = candidates
        .iter()
        .take_while(|c| {
            c.comparison.matches() && !c.fitted && c.comparison.max_abs_error() <= 2.0 * error
        })
        .count();
    if let Some(plainest) = (0..tied).min_by_key(|&k| candidates[k].departures) {
        candidates[..=plainest].rotate_right(1);
    }
}

fn one_dimensional(search: &mut Search) {
    let Ok(values) = search.table.clone().into_dimensionality::<Ix1>() else {
        return;
    };
    let n = values.len();
    if n >= 2 {
        inverse_frequencies(search, values.as_slice().unwrap_or(&[]));
    }
    if let Ok(slopes) = alibi::slopes(n) {
        search.consider(
            if n == 1 {
                "ALiBi slope of 1 head (2^-8)".to_owned()
            } else {
                format!("ALiBi slopes of {n} heads")
            },
            ndarray::Array1::from(slopes).into_dyn(),
        );
    }
}

/// Round values near `fitted`: 1, 2 and 3 significant digits, then the value as fitted.
fn round_choices(fitted: f64) -> Vec<f64> {
    round_choices_to(fitted, 3)
}

/// [`round_choices`] with up to `max_digits` significant digits.
fn round_choices_to(fitted: f64, max_digits: i32) -> Vec<f64> {
    if !(fitted.is_finite() && fitted > 0.0) {
        return Vec::new();
    }
    let mut choices = Vec::new();
    for digits in 1..=max_digits {
        let magnitude = 10f64.powi(fitted.log10().floor() as i32 - (digits - 1));
        let rounded = (fitted / magnitude).round() * magnitude;
        if !choices.contains(&rounded) {
            choices.push(rounded);
        }
    }
    choices.push(fitted);
    choices
}

/// RoPE bases models use, most common first.
const ROUND_BASES: [f64; 8] = [
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
const TRAINED_LENGTHS: [usize; 8] = [8192, 4096, 32_768, 2048, 16_384, 65_536, 131_072, 1024];

/// RoPE inverse frequencies `[R/2]`: plain (any base), or under a scaling: linear, Llama 3,
/// YaRN; NTK-aware and dynamic NTK only change the base, which the report says when the base
/// is not round. Compared element by element relative to each frequency (a loose `--atol`
/// would otherwise let a factor of 8 on the smallest frequencies through).
fn inverse_frequencies(search: &mut Search, values: &[f64]) {
    let n = values.len();
    let target = FrequencyTarget {
        label: format!("RoPE inverse frequencies, dim {}", 2 * n),
        table: ndarray::Array1::from(values.to_vec()).into_dyn(),
        tolerance: Tolerance {
            abs: search.subnormal_step,
            rel: search.tolerance.abs.max(search.tolerance.rel),
        },
        make: &|theta: &[f64], _, _: &[usize], _| ndarray::Array1::from(theta.to_vec()).into_dyn(),
        orient: &|table| table,
        plain: true,
        rows: 0,
        base_pair: n - 1,
        amplitude: None,
        // Frequencies are compared relative to each value: float32 rounding is within that.
        torch: false,
    };
    scaled_frequencies(search, values, &target);
}

/// A table made from RoPE inverse frequencies, to identify through them: its label (kind and
/// the parameters read off the table), the table as loaded, how close a reading must come,
/// and how the frequencies make the table.
struct FrequencyTarget<'a> {
    label: String,
    /// The table with positions along its first axis.
    table: ArrayD<f64>,
    tolerance: Tolerance,
    /// The table that frequencies `theta` make, times `attention` where the kind has it, at
    /// rows `rows` of `table`; with `torch`, in PyTorch's float32 steps (`theta` then holds
    /// torch's float32 frequencies).
    make: &'a MadeTable<'a>,
    /// Lays a made table out as the loaded one, for the report.
    orient: &'a dyn Fn(ArrayD<f64>) -> ArrayD<f64>,
    /// Whether to try unscaled frequencies too (a table whose plain reading is tried
    /// elsewhere leaves them out).
    plain: bool,
    /// Rows (positions) of `table`; 0 for a table of the frequencies themselves.
    rows: usize,
    /// The pair whose frequency pins a plain base best (the table read it most precisely).
    base_pair: usize,
    /// The factor a cache's values are multiplied by, as read off it.
    amplitude: Option<f64>,
    /// Whether a float32 file may be PyTorch's float32 computation of a hypothesis.
    torch: bool,
}

/// A table made from frequencies: `(theta, attention, rows, torch)` as [`FrequencyTarget`]
/// says.
type MadeTable<'a> = dyn Fn(&[f64], f64, &[usize], bool) -> ArrayD<f64> + 'a;

/// A table of a base in float32 arithmetic: `(base, rows, reading)`; for
/// [`Float32Reading::OwnFrequencies`], only when every column of the file's first `rows` rows
/// matches one of the frequencies tried.
type TwinTable<'a> = dyn Fn(f64, usize, Float32Reading) -> Option<Array2<f64>> + 'a;

/// How a float32 file's sin/cos table may have been computed.
#[derive(Debug, Clone, Copy)]
enum Float32Reading {
    /// Exactly as PyTorch's CPU kernels compute it.
    Torch(TorchMode),
    /// From frequencies its own library's `exp` or `pow` formed
    /// ([`crate::check::verdict::own_frequencies_table`]).
    OwnFrequencies,
}

/// Rows a long table's hypotheses are first tried on: spread over the whole table, since
/// scalings show on the slow pairs, late.
fn probe_rows(rows: usize) -> Option<Vec<usize>> {
    (rows > 2 * PROBE_ROWS).then(|| {
        (0..PROBE_ROWS)
            .map(|k| k * (rows - 1) / (PROBE_ROWS - 1))
            .collect()
    })
}

/// Readings of inverse frequencies `values` (as loaded, or read off a table made from them):
/// plain with any base, linear, Llama 3 or YaRN scaling; each is checked on `target`.
fn scaled_frequencies(search: &mut Search, values: &[f64], target: &FrequencyTarget<'_>) {
    let n = values.len();
    let rotary = 2 * n;
    if n < 2 || values.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
        return;
    }
    let table = &target.table;
    let tolerance = target.tolerance;
    let label = &target.label;
    // A rounded parameter (base 10000 for a fitted 9999.8) must fit as well as the file's
    // precision allows, whatever the tolerance: a loose one would otherwise round 52664 to
    // 52700. Frequencies compared relative to each value are held to the relative part.
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
    let mut tried: Vec<Candidate> = Vec::new();
    let all_rows: Vec<usize> = (0..target.rows).collect();
    let probe = probe_rows(target.rows).map(|rows| {
        let table = table.select(ndarray::Axis(0), &rows);
        (rows, table)
    });
    // The table of frequencies `theta` (exact, or torch's float32 ones with `torch`), tried on
    // the probe rows first: the comparison, its reference and whether only the probe was made.
    let evaluate = |theta: &[f64], attention: f64, torch: bool, needed: Tolerance| {
        if let Some((rows, probe_table)) = &probe {
            let reference = (target.make)(theta, attention, rows, torch);
            let comparison = compare(&reference, probe_table, needed);
            if !comparison.matches() {
                return (reference, comparison, true);
            }
        }
        let reference = (target.make)(theta, attention, &all_rows, torch);
        let comparison = compare(&reference, table, needed);
        (reference, comparison, false)
    };
    let mut consider = |description: String,
                        freqs: &RopeFrequencies,
                        base: f64,
                        rounded: bool|
     -> bool {
        if freqs.validate(rotary, base).is_err() {
            return false;
        }
        let needed = if rounded { strict } else { tolerance };
        let attention = freqs.attention_factor();
        let (reference, comparison, partial) = evaluate(
            &freqs.inv_freq(rotary, base, target.rows),
            attention,
            false,
            needed,
        );
        if comparison.matches() {
            let full = compare(&reference, table, tolerance);
            tried.push(Candidate::new(
                description,
                (target.orient)(reference),
                full,
                false,
            ));
            return true;
        }
        if target.torch {
            for mode in TorchMode::all() {
                let theta: Vec<f64> = freqs
                    .inv_freq_torch(rotary, base, target.rows, mode)
                    .into_iter()
                    .map(f64::from)
                    .collect();
                let (reference, comparison, _) =
                    evaluate(&theta, f64::from(attention as f32), true, needed);
                if comparison.matches() {
                    let form = match mode.form {
                        FreqForm::Pow => "pow",
                        FreqForm::Exp => "exp",
                    };
                    let full = compare(&reference, table, tolerance);
                    tried.push(Candidate::new(
                            format!("{description}, as PyTorch computes it in float32 (--arith torch-f32 --freq-form {form})"),
                            (target.orient)(reference),
                            full,
                            false,
                        ));
                    return true;
                }
            }
        }
        // Frequencies another library's exp or pow formed: searched on the probe rows, then
        // confirmed on the whole table.
        if target.torch {
            let exact = freqs.inv_freq(rotary, base, target.rows);
            let centers: Vec<Vec<f64>> = std::iter::once(exact)
                .chain(TorchMode::all().into_iter().map(|mode| {
                    freqs
                        .inv_freq_torch(rotary, base, target.rows, mode)
                        .into_iter()
                        .map(f64::from)
                        .collect()
                }))
                .collect();
            let attention = f64::from(attention as f32);
            let fit = |rows: &[usize], loaded: &ArrayD<f64>| {
                crate::check::verdict::fit_own_frequencies(
                    centers.clone(),
                    loaded,
                    |scale| scale / 4096.0,
                    |theta| Some((target.make)(&theta, attention, rows, true)),
                )
            };
            let on_probe = match &probe {
                Some((rows, probe_table)) => fit(rows, probe_table).is_some(),
                None => true,
            };
            if let Some(reference) = on_probe.then(|| fit(&all_rows, table)).flatten() {
                let full = compare(&reference, table, tolerance);
                if full.matches() {
                    tried.push(Candidate::new(
                        format!(
                            "{description}, in float32 from float32 frequencies its library's \
                             exp or pow formed (each within {} ulp of PyTorch's or of the exact \
                             one)",
                            crate::check::verdict::OWN_FREQUENCY_ULPS
                        ),
                        (target.orient)(reference),
                        full,
                        false,
                    ));
                    return true;
                }
            }
        }
        if rounded {
            return false;
        }
        tried.push(Candidate::new(
            description,
            (target.orient)(reference),
            comparison,
            partial,
        ));
        false
    };
    let plain = |scaling: RopeScaling| RopeFrequencies {
        rotary_dim: None,
        scaling,
    };
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
        if consider(format!("{label}, base {base}{note}"), &default, base, round) {
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
                if consider(description, &freqs, base, true) {
                    break 'ntk;
                }
            }
            let seq = target.rows as f64;
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
                        "{label}, base {base}, dynamic NTK scaling, factor {factor}, max_position_embeddings {trained} (at {} positions)",
                        target.rows
                    );
                    if consider(description, &freqs, base, true) {
                        break 'ntk;
                    }
                }
            }
        }
    }
    // The scalings below keep the fastest frequencies (or divide all of them by one factor):
    // the base comes from theta_1.
    let high_base = values[1].powf(-(n as f64));
    let bases: Vec<f64> = match plain_match {
        Some(_) => Vec::new(),
        None => base_choices(high_base),
    };
    // Linear: theta_0 = 1 / factor.
    let linear_factor = 1.0 / values[0];
    if plain_match.is_none() && linear_factor > 1.0 + 1e-6 {
        let fitted_base = (values[k] * linear_factor).powf(-(n as f64) / k as f64);
        'linear: for factor in round_choices(linear_factor) {
            for base in base_choices(fitted_base) {
                let rounded = factor != linear_factor || base != fitted_base;
                let freqs = plain(RopeScaling {
                    kind: ScalingKind::Linear,
                    factor: Some(factor),
                    ..Default::default()
                });
                if consider(
                    format!(
                        "{label}, base {base}, linear scaling (Position Interpolation), factor {factor}"
                    ),
                    &freqs,
                    base,
                    rounded,
                ) {
                    break 'linear;
                }
            }
        }
    }
    // Llama 3 and YaRN: the slowest frequency is divided by the factor.
    'scaled: for &base in &bases {
        let unscaled = 1.0 / base.powf((rotary - 2) as f64 / rotary as f64);
        let factor_fit = unscaled / values[n - 1];
        if factor_fit <= 1.0 + 1e-6 {
            continue;
        }
        for factor in round_choices(factor_fit) {
            // The trained lengths and factor ratios of the grid below are parameters, not
            // rounding; a rounded base or factor must fit closely.
            let rounded = factor != factor_fit || base != high_base;
            for original in TRAINED_LENGTHS {
                for (low, high) in [(1.0, 4.0), (1.0, 8.0), (2.0, 4.0)] {
                    let freqs = plain(RopeScaling {
                        kind: ScalingKind::Llama3,
                        factor: Some(factor),
                        original_max_position_embeddings: Some(original),
                        low_freq_factor: Some(low),
                        high_freq_factor: Some(high),
                        ..Default::default()
                    });
                    if consider(
                        format!(
                            "{label}, base {base}, Llama 3 scaling, factor {factor}, original context {original}, low_freq_factor {low}, high_freq_factor {high} (wavelengths beyond {} divided by the factor, below {} kept: any original context and factors with these two ratios give the same table)",
                            original as f64 / low,
                            original as f64 / high
                        ),
                        &freqs,
                        base,
                        rounded,
                    ) {
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
                        if consider(
                            format!(
                                "{label}, base {base}, YaRN scaling, factor {factor}, original context {original}, beta_fast 32, beta_slow 1{truncated}{factor_text}"
                            ),
                            &yarn(attention),
                            base,
                            rounded,
                        ) {
                            break 'scaled;
                        }
                    }
                }
            }
        }
    }
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
                ..
            } = &config.encoding
            else {
                continue;
            };
            if freqs.rotary(*head_dim) != rotary {
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
                if consider(description, &freqs, *base, true) {
                    break;
                }
            }
        }
    }
    // Keep per hypothesis kind the match or the closest, as consider_bases does.
    let kinds = [
        "linear scaling",
        "Llama 3 scaling",
        "YaRN scaling",
        "NTK-aware scaling",
        "dynamic NTK scaling",
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
                let better = (candidate.comparison.matches() && !kept.comparison.matches())
                    || (candidate.comparison.matches() == kept.comparison.matches()
                        && candidate.comparison.max_rel_error() < kept.comparison.max_rel_error()
                        && !kept.comparison.matches());
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

fn two_dimensional(search: &mut Search) {
    let Ok(table) = search.table.clone().into_dimensionality::<Ix2>() else {
        return;
    };
    for transposed in [false, true] {
        let view = if transposed {
            table.t().to_owned()
        } else {
            table.clone()
        };
        let orient = |reference: Array2<f64>| {
            if transposed {
                reference.reversed_axes().into_dyn()
            } else {
                reference.into_dyn()
            }
        };
        let suffix = if transposed { ", transposed" } else { "" };
        sinusoidal(search, &view, &orient, suffix);
        rope_tables(search, &view, &orient, suffix);
    }
    let (rows, cols) = table.dim();
    if rows == cols && rows >= 2 {
        alibi_head(search, &table);
        alibi_2d_head(search, &table);
        patch_distances(search, rows);
        relative::relative_indices(search, &table);
    }
    alibi_per_key(search, &table);
    sincos_2d_tables(search, &table);
}

/// ALiBi as BLOOM and MPT store it, `[heads, 1, seq]` (squeezed to `[heads, seq]`): one bias
/// per key, `m_h j` or `m_h (j - (seq - 1))`, with the reference rule's slopes.
fn alibi_per_key(search: &mut Search, table: &Array2<f64>) {
    let (heads, seq) = table.dim();
    if seq < 2 || heads > 1 << 16 || table.iter().any(|v| !v.is_finite()) {
        return;
    }
    let Ok(slopes) = alibi::slopes(heads) else {
        return;
    };
    for (form, name) in [
        (
            alibi::AlibiForm::Bloom,
            "BLOOM's build_alibi_tensor, m_h · j",
        ),
        (
            alibi::AlibiForm::Mpt,
            "MPT's build_alibi_bias, m_h · (j - (seq - 1))",
        ),
    ] {
        let reference = Array2::from_shape_fn((heads, seq), |(h, j)| {
            alibi::key_bias(slopes[h], form, j, seq)
        });
        search.consider(
            format!(
                "ALiBi as {name} per key, {heads} heads, {seq} keys (--form {})",
                match form {
                    alibi::AlibiForm::Bloom => "bloom",
                    _ => "mpt",
                }
            ),
            reference.into_dyn(),
        );
    }
}

/// 2D sin-cos tables `[N + P, dim]` at base 10000: every grid of `P` patches, MAE's and
/// timm's block orders, either raster, with or without a zero CLS row first.
fn sincos_2d_tables(search: &mut Search, table: &Array2<f64>) {
    use crate::encoding::grid::{MAE_ORDER, Raster, SinCos2dParams, parse_order};
    let (rows, dim) = table.dim();
    if dim < 4 || !dim.is_multiple_of(4) || !(2..=1 << 14).contains(&rows) {
        return;
    }
    let orders = [
        ("MAE order sin-x,cos-x,sin-y,cos-y", MAE_ORDER),
        (
            "timm order sin-y,sin-x,cos-y,cos-x",
            parse_order("sin-y,sin-x,cos-y,cos-x").unwrap_or(MAE_ORDER),
        ),
        (
            "timm interleaved order sin-y,cos-y,sin-x,cos-x",
            parse_order("sin-y,cos-y,sin-x,cos-x").unwrap_or(MAE_ORDER),
        ),
    ];
    for prefix_rows in [0usize, 1] {
        if prefix_rows == 1 && table.row(0).iter().any(|v| *v != 0.0) {
            continue;
        }
        let patches = rows - prefix_rows;
        // The first patch sits at (0, 0): its sines are 0 and its cosines 1 in every order,
        // so a table whose first patch row is not that is no 2D sin-cos table.
        let quarter = dim / 4;
        let first = table.row(prefix_rows);
        let fits_first = |order: &[crate::encoding::grid::SinCosBlock; 4]| {
            first.iter().enumerate().all(|(col, &v)| {
                let expected = if order[col / quarter].code() & 1 == 1 {
                    1.0
                } else {
                    0.0
                };
                (v - expected).abs() <= search.tolerance.abs + search.tolerance.rel + 1e-6
            })
        };
        if !orders.iter().any(|(_, order)| fits_first(order)) {
            continue;
        }
        for grid_h in (1..=patches).filter(|h| patches.is_multiple_of(*h)) {
            let grid = GridParams {
                grid_h,
                grid_w: patches / grid_h,
            };
            for (order_name, order) in orders {
                for raster in [Raster::Rows, Raster::Columns] {
                    let params = SinCos2dParams {
                        grid,
                        dim,
                        base: 10_000.0,
                        order,
                        raster,
                        prefix_rows,
                    };
                    let Ok(reference) = cpu::compute(&TableSpec::SinCos2d(params)) else {
                        continue;
                    };
                    let raster_name = match raster {
                        Raster::Rows => "patches row by row",
                        Raster::Columns => "patches column by column",
                    };
                    let cls = if prefix_rows > 0 {
                        ", after a zero CLS row"
                    } else {
                        ""
                    };
                    search.consider(
                        format!(
                            "2D sin-cos, {} x {} grid, dim {dim}, base 10000, {order_name}, {raster_name}{cls}",
                            grid.grid_h, grid.grid_w
                        ),
                        reference.into_real(),
                    );
                }
            }
        }
    }
}

/// Sinusoidal tables in both layouts, sin or cos first, both spacings.
fn sinusoidal(
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
    for layout in [SinusoidalLayout::Interleaved, SinusoidalLayout::Split] {
        let columns = |i: usize| match layout {
            SinusoidalLayout::Interleaved => (2 * i, 2 * i + 1),
            SinusoidalLayout::Split => (i, i + pairs),
        };
        for cos_first in [false, true] {
            // Swapping sin and cos columns turns a cos-first table into a sin-first one.
            let swap = |mut a: Array2<f64>| {
                if cos_first {
                    for i in 0..pairs {
                        let (s, c) = columns(i);
                        for row in 0..a.nrows() {
                            a.swap([row, s], [row, c]);
                        }
                    }
                }
                a
            };
            let sin_first = swap(view.clone());
            let rates: Vec<(usize, f64, f64)> = (0..pairs)
                .filter_map(|i| {
                    let (s, c) = columns(i);
                    let sin: Vec<f64> = sin_first.column(s).to_vec();
                    let cos: Vec<f64> = sin_first.column(c).to_vec();
                    let (rate, _) = angle_rate(&sin, &cos)?;
                    Some((i, rate, rate * (seq - 1) as f64))
                })
                .collect();
            // Each pair's angle in the first row.
            let phases: Vec<f64> = (0..pairs)
                .map(|i| {
                    let (s, c) = columns(i);
                    sin_first[[0, s]].atan2(sin_first[[0, c]])
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
                            seq: 1,
                            dim,
                            base: b,
                            start: 0,
                            layout,
                            spacing,
                        };
                        resolve_start(params.frequencies().as_slice()?, &phases)
                    })
                };
                let order = if cos_first { "cos first" } else { "sin first" };
                let layout_name = match layout {
                    SinusoidalLayout::Interleaved => "interleaved",
                    SinusoidalLayout::Split => "split",
                };
                let spacing_name = match spacing {
                    Spacing::Vaswani => "Vaswani",
                    Spacing::T2t => "tensor2tensor",
                };
                search.consider_bases(
                    base,
                    |b| {
                        let positions = match start_for(b) {
                            Some(start) => format!("{start}..{}", start + seq as u64 - 1),
                            None => "unknown".to_owned(),
                        };
                        let base = if any_base {
                            "any base (its one pair turns 1 radian per position)".to_owned()
                        } else {
                            format!("base {b}")
                        };
                        format!(
                            "sinusoidal, {layout_name} layout, {order}, {spacing_name} spacing, {base}, d = {dim}, positions {positions}{suffix}"
                        )
                    },
                    view,
                    orient,
                    |b, rows| {
                        let params = SinusoidalParams {
                            seq: rows,
                            dim,
                            base: b,
                            start: start_for(b)?,
                            layout,
                            spacing,
                        };
                        let table = cpu::compute(&TableSpec::Sinusoidal(params)).ok()?;
                        let table = table.into_real().into_dimensionality::<Ix2>().ok()?;
                        Some(swap(table))
                    },
                    Some(&|b, rows, reading| {
                        let params = SinusoidalParams {
                            seq: rows,
                            dim,
                            base: b,
                            start: start_for(b)?,
                            layout,
                            spacing,
                        };
                        let spec = TableSpec::Sinusoidal(params);
                        let table = match reading {
                            Float32Reading::Torch(mode) => {
                                let torch = crate::encoding::torch_f32::Arithmetic::TorchF32(mode);
                                cpu::compute_arith(&spec, torch).ok()?.into_real()
                            }
                            // Against the file's rows laid out as the spec's (a sin-first
                            // table: swapping twice is no swap).
                            Float32Reading::OwnFrequencies => {
                                let target = swap(view.slice(ndarray::s![..rows, ..]).to_owned());
                                crate::check::verdict::own_frequencies_table(
                                    &spec,
                                    &target.into_dyn(),
                                )?
                            }
                        };
                        let table = table.into_dimensionality::<Ix2>().ok()?;
                        Some(swap(table))
                    }),
                );
            }
        }
    }
}

/// RoPE's angle table `[seq, dim/2]`, and its cos and sin caches `[seq, dim]` in either
/// pairing (Hugging Face repeats the frequencies as two halves; Llama-style caches repeat each
/// one twice).
fn rope_tables(
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
                table: view.clone().into_dyn(),
                tolerance: search.tolerance,
                make: &make,
                orient: &layout,
                plain: false,
                rows: seq,
                base_pair: width - 1,
                amplitude: None,
                torch: search.float32,
            };
            scaled_frequencies(search, &theta, &target);
        }
    }
    if width < 4 || width % 2 != 0 {
        return;
    }
    for layout in [RopeLayout::Half, RopeLayout::Interleaved] {
        for part in [CachePart::Cos, CachePart::Sin] {
            rope_cache(search, view, orient, suffix, layout, part);
        }
    }
}

/// A cos or sin cache `[seq, R]` of positions `0..seq` in `layout`, read as its amplitude (the
/// attention factor it was multiplied by) and each pair's frequency, then identified through
/// those frequencies: plain at any base (NTK-aware and dynamic NTK give unround bases), or
/// linear, Llama 3 or YaRN scaling, each exactly or as PyTorch computes it in float32.
fn rope_cache(
    search: &mut Search,
    view: &Array2<f64>,
    orient: &dyn Fn(Array2<f64>) -> ArrayD<f64>,
    suffix: &str,
    layout: RopeLayout,
    part: CachePart,
) {
    let (seq, width) = view.dim();
    let Some(reading) = read_cache(view, layout, part, search.noise) else {
        return;
    };
    let (name, function): (&str, fn(f64) -> f64) = match part {
        CachePart::Cos => ("cos", f64::cos),
        CachePart::Sin => ("sin", f64::sin),
    };
    let make = |theta: &[f64], attention: f64, rows: &[usize], torch: bool| {
        Array2::from_shape_fn((rows.len(), width), |(r, col)| {
            let pair = layout.pair_of_column(col, width);
            let position = rows[r] as u64;
            if torch {
                let (sin, cos) = torch_f32::sin_cos(torch_f32::angle(position, theta[pair]));
                let value = if part == CachePart::Cos { cos } else { sin };
                f64::from(value * attention as f32)
            } else {
                attention * function(position as f64 * theta[pair])
            }
        })
        .into_dyn()
    };
    let layout_of = |table: ArrayD<f64>| match table.into_dimensionality::<Ix2>() {
        Ok(table) => orient(table),
        Err(e) => unreachable!("caches are 2-D: {e}"),
    };
    let layout_name = match layout {
        RopeLayout::Half => "half layout (Hugging Face: frequencies repeated as two halves)",
        RopeLayout::Interleaved => "interleaved layout (each frequency twice in a row)",
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
            "RoPE {name} cache{scaled}, {layout_name}, dim {width} (the rotary part of a head), positions 0..{}{suffix}",
            seq - 1
        ),
        table: view.clone().into_dyn(),
        tolerance: search.tolerance,
        make: &make,
        orient: &layout_of,
        plain: true,
        rows: seq,
        base_pair: reading.base_pair,
        amplitude: Some(reading.amplitude),
        torch: search.float32,
    };
    scaled_frequencies(search, &reading.frequencies, &target);
}

/// What a cache says about itself.
struct CacheReading {
    /// The factor every value is multiplied by (YaRN's and LongRoPE's attention factor).
    amplitude: f64,
    /// Each pair's frequency, in radians per position.
    frequencies: Vec<f64>,
    /// The slowest pair whose angle turned far enough to be read well.
    base_pair: usize,
}

/// Reads a cache of positions from 0: the amplitude from the first rows, and each pair's
/// frequency from the row where its angle is read best (where cos or sin is steep enough for
/// float32 noise to matter least), within the first stretch where the column is monotonic so
/// that acos or asin inverts it.
/// `noise` is how far the file's rounding may move a value (0 for float32 and float64): with
/// it, pairs too slow for their angle to be read (a float16 cos stays 1.0 where the angle is
/// below 0.03) are continued geometrically from the pairs read well, and an amplitude within
/// the noise of 1 is read as 1.
fn read_cache(
    view: &Array2<f64>,
    layout: RopeLayout,
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
    let is_cos = part == CachePart::Cos;
    // Pairs from the first whose angle reads worse than 5% (narrow files only).
    let mut unreadable_from = None;
    let mut frequencies = Vec::with_capacity(pairs);
    let mut base_pair = 1;
    for i in 0..pairs {
        let values = column(i);
        // (angle read, its position), at the best-conditioned row so far.
        let mut best: Option<(f64, usize, f64)> = None;
        for p in 1..seq {
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
    if let Some(from) = unreadable_from {
        // The ratio between neighbouring frequencies, over the pairs read well.
        let last = from.checked_sub(1).filter(|&last| last >= 2)?;
        let ratio = (frequencies[last] / frequencies[0]).powf(1.0 / last as f64);
        if !(ratio.is_finite() && ratio > 0.0 && ratio < 1.0) {
            return None;
        }
        for i in from..pairs {
            frequencies[i] = frequencies[last] * ratio.powi((i - last) as i32);
        }
        base_pair = base_pair.min(last);
    }
    Some(CacheReading {
        amplitude,
        frequencies,
        base_pair,
    })
}

/// One ALiBi head `[seq, seq]`, causal or symmetric, its slope read off `[1, 0]`.
fn alibi_head(search: &mut Search, table: &Array2<f64>) {
    let seq = table.nrows();
    // Least squares over the lower triangle: bias = -m (i - j).
    let below_diagonal = table
        .indexed_iter()
        .filter(|((i, j), _)| j < i)
        .map(|((i, j), &bias)| ((i - j) as f64, bias));
    let Some(fitted) = fitted_slope(below_diagonal) else {
        return;
    };
    let (slope, owners) = named_slope(fitted);
    for mode in [AlibiMode::Causal, AlibiMode::Symmetric] {
        let reference =
            Array2::from_shape_fn((seq, seq), |(i, j)| alibi::bias_value(slope, mode, i, j));
        let mode_name = match mode {
            AlibiMode::Causal => "causal",
            AlibiMode::Symmetric => "symmetric",
        };
        search.consider(
            format!(
                "ALiBi bias of one head, {mode_name}, slope {slope} = 2^{:.3} ({owners}), {seq} positions",
                slope.log2()
            ),
            reference.into_dyn(),
        );
    }
}

/// One head of CROMA's 2D ALiBi, `[P, P]`: `-m` times the Euclidean distance between
/// patches, on every grid of `P` patches at least 2 wide and 2 high (a 1 x P grid is the
/// symmetric 1D head), with `m` fitted on the first row.
fn alibi_2d_head(search: &mut Search, table: &Array2<f64>) {
    let patches = table.nrows();
    if patches > 4096 {
        return;
    }
    for grid_h in (2..patches).filter(|h| patches.is_multiple_of(*h) && patches / h >= 2) {
        let grid = GridParams {
            grid_h,
            grid_w: patches / grid_h,
        };
        let first_row = table
            .row(0)
            .into_iter()
            .enumerate()
            .map(|(key, &bias)| (grid.distance(0, key, DistanceMetric::Euclidean), bias));
        let Some(fitted) = fitted_slope(first_row) else {
            continue;
        };
        let (slope, owners) = named_slope(fitted);
        let bias = |query: usize, key: usize| alibi::bias_2d_value(slope, &grid, query, key);
        search.consider_probed(
            format!(
                "2D ALiBi bias of one head (CROMA), slope {slope} = 2^{:.3} ({owners}), \
                 {grid_h} x {} grid, -m · Euclidean distance between patches",
                slope.log2(),
                grid.grid_w
            ),
            Array2::from_shape_fn((patches.min(PROBE_ROWS), patches), |(q, k)| bias(q, k))
                .into_dyn(),
            || Some(Array2::from_shape_fn((patches, patches), |(q, k)| bias(q, k)).into_dyn()),
        );
    }
}

/// The slope `m > 0` of `bias = -m · distance` fitted by least squares to `(distance, bias)`
/// pairs (infinite biases, masked cells, left out); `None` when none fits.
fn fitted_slope(points: impl Iterator<Item = (f64, f64)>) -> Option<f64> {
    let (weighted, squares) = points
        .filter(|(_, bias)| bias.is_finite())
        .fold((0.0, 0.0), |(w, s), (distance, bias)| {
            (w - bias * distance, s + distance * distance)
        });
    let fitted = weighted / squares;
    (fitted.is_finite() && fitted > 0.0).then_some(fitted)
}

/// The reference rule's slope nearest `fitted` and the (heads, head) that have it, as the
/// rule assigns them ("head 3 of 8, or head 1 of 4"); `fitted` itself when no head count
/// up to 128 gives a slope within 1e-4 of it.
fn named_slope(fitted: f64) -> (f64, String) {
    let mut slope = None;
    // Powers of two first: the head counts models use.
    let counts = (0..8)
        .map(|k| 1usize << k)
        .chain((1..=128usize).filter(|n| !n.is_power_of_two()));
    let owners: Vec<String> = counts
        .filter_map(|heads| {
            let slopes = alibi::slopes(heads).ok()?;
            let head = slopes
                .iter()
                .position(|&m| (m - fitted).abs() <= 1e-4 * fitted)?;
            slope.get_or_insert(slopes[head]);
            Some(format!("head {head} of {heads}"))
        })
        .take(3)
        .collect();
    let slope = slope.unwrap_or(fitted);
    let owners = if owners.is_empty() {
        "a slope no head count gives".to_owned()
    } else {
        owners.join(", or ")
    };
    (slope, owners)
}

/// Distances between the patches of every grid with `patches` patches.
fn patch_distances(search: &mut Search, patches: usize) {
    if patches > 4096 {
        return;
    }
    for grid_h in (1..=patches).filter(|h| patches.is_multiple_of(*h)) {
        let grid = GridParams {
            grid_h,
            grid_w: patches / grid_h,
        };
        for metric in [
            DistanceMetric::Euclidean,
            DistanceMetric::Manhattan,
            DistanceMetric::Chebyshev,
        ] {
            let probe = patches.min(PROBE_ROWS);
            let first_rows =
                Array2::from_shape_fn((probe, patches), |(a, b)| grid.distance(a, b, metric));
            search.consider_probed(
                format!(
                    "{metric:?} distance between patches of a {grid_h} x {} grid",
                    grid.grid_w
                ),
                first_rows.into_dyn(),
                || {
                    cpu::compute(&TableSpec::PatchDistance { grid, metric })
                        .ok()
                        .map(|table| table.into_real())
                },
            );
        }
    }
}

/// ALiBi biases of every head `[heads, seq, seq]`; Meta's rotary table `[seq, dim/2, 2]`.
fn three_dimensional(search: &mut Search) {
    let Ok(table) = search.table.clone().into_dimensionality::<Ix3>() else {
        return;
    };
    let (heads, seq, keys) = table.dim();
    if keys == 2 {
        complex_pairs(search, &table);
    }
    if seq != keys {
        return;
    }
    for mode in [AlibiMode::Causal, AlibiMode::Symmetric] {
        let params = AlibiParams { heads, seq, mode };
        if let Ok(reference) = cpu::compute(&TableSpec::Alibi { params, head: None }) {
            search.consider(
                format!(
                    "ALiBi biases, {heads} heads, {seq} positions, {}",
                    match mode {
                        AlibiMode::Causal => "causal",
                        AlibiMode::Symmetric => "symmetric",
                    }
                ),
                reference.into_real(),
            );
        }
    }
    alibi_2d(search, &table);
}

/// Meta's `freqs_cis` (`torch.polar(1, outer(t, freqs))`, complex64) as
/// `torch.view_as_real` stores it: `[seq, dim/2, 2]`, each pair's cos then sin. Laid out as
/// `[seq, dim]` that is a sinusoidal table, interleaved and cos first, so it is tried as one.
fn complex_pairs(search: &mut Search, table: &ndarray::Array3<f64>) {
    let (positions, pairs, _) = table.dim();
    let Ok(flat) = table
        .as_standard_layout()
        .to_owned()
        .into_shape_with_order((positions, 2 * pairs))
    else {
        return;
    };
    let orient = |reference: Array2<f64>| {
        reference
            .into_shape_with_order((positions, pairs, 2))
            .map(|r| r.into_dyn())
            // Not reached: the reference has the flattened table's shape. An empty table
            // would only make the hypothesis a shape mismatch.
            .unwrap_or_else(|_| ArrayD::zeros(ndarray::IxDyn(&[0])))
    };
    sinusoidal(
        search,
        &flat,
        &orient,
        ", stored as [seq, dim/2, 2] (cos, sin) pairs: Meta's freqs_cis through torch.view_as_real",
    );
}

/// CROMA's 2D ALiBi of every head, `[heads, P, P]`: `-m_h` times the Euclidean distance
/// between patches, on every grid of `P` patches at least 2 wide and 2 high; a grid is ruled
/// out on the first head before the whole table is made.
fn alibi_2d(search: &mut Search, table: &ndarray::Array3<f64>) {
    let (heads, patches, _) = table.dim();
    if patches > 4096 {
        return;
    }
    let Ok(slopes) = alibi::slopes(heads) else {
        return;
    };
    for grid_h in (2..patches).filter(|h| patches.is_multiple_of(*h) && patches / h >= 2) {
        let grid = GridParams {
            grid_h,
            grid_w: patches / grid_h,
        };
        let description = format!(
            "2D ALiBi biases (CROMA), {heads} heads, {grid_h} x {} grid, -m_h · Euclidean \
             distance between patches",
            grid.grid_w
        );
        // The first head, as the first "row" of the table's first axis.
        let first_head = ndarray::Array3::from_shape_fn((1, patches, patches), |(_, q, k)| {
            alibi::bias_2d_value(slopes[0], &grid, q, k)
        });
        let params = Alibi2dParams { heads, grid };
        search.consider_probed(description, first_head.into_dyn(), || {
            cpu::compute(&TableSpec::Alibi2d { params, head: None })
                .ok()
                .map(|reference| reference.into_real())
        });
    }
}
