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
//!
//! This module holds the search (its hypotheses, tried on probe rows first, and the ranking);
//! each family is read in a module of its own: `read_sinusoidal`, `read_frequencies` (RoPE
//! frequencies and the float32 readings), `read_rope` (angles and caches), `read_alibi`,
//! `read_grid2d`, and [`relative`].

use crate::encoding::PairLayout;
use ndarray::{Array2, ArrayD, Ix1, Ix2, Ix3};

use super::{Comparison, Tolerance, compare, into_squeezed};
use crate::encoding::alibi::{self, Alibi2dParams, AlibiMode, AlibiParams};
use crate::encoding::grid::{DistanceMetric, GridParams};
use crate::encoding::rope::{self, CachePart, RopeParams};
use crate::encoding::rope_scaling::{RopeFrequencies, RopeScaling, ScalingKind};
use crate::encoding::sinusoidal::{FirstOfPair, SinusoidalParams, Spacing};
use crate::encoding::torch_f32::libraries::FrequencyRecipe;
use crate::encoding::torch_f32::{self, FreqForm, TorchMode};
use crate::engine::{TableSpec, cpu};
use crate::import::StoredFloat;
use crate::import::model_config::{MODEL_CONFIGS, ModelConfig, PositionEncoding};

mod by_shape;
mod fit;
mod read_alibi;
mod read_axes;
mod read_frequencies;
mod read_grid2d;
mod read_longrope;
mod read_rope;
mod read_rope_positions;
mod read_sinusoidal;
mod relative;

use by_shape::{search_by_shape, two_dimensional};
use fit::{angle_rate, base_choices, base_choices_to, best_conditioned, resolve_start};

use read_alibi::*;
use read_frequencies::*;
use read_grid2d::*;
use read_rope::*;
use read_rope_positions::*;
use read_sinusoidal::*;

/// The most elements a table may have to be identified (each hypothesis computes one).
pub const MAX_ELEMENTS: usize = 1 << 24;

/// Hypotheses are first tried on this many rows; only those that match there are computed
/// whole.
const PROBE_ROWS: usize = 32;

/// The largest error of a base's first rows, as a fraction of the file's largest value there,
/// that float32 arithmetic might still explain (its angles at position 10^5 are off by about
/// 4e-3 rad): beyond it no float32 reading of that base is tried.
const FLOAT32_PROBE_MISS: f64 = 0.02;

/// The value of an option that is the identification's own (`--positions`, `--position-scale`
/// given to identify): whoever passes the words on puts the call's value in its place.
pub const FROM_THE_CALL: &str = "@call";

/// The `poslab table` kind and options (by clap id, each value as the command line writes
/// it) that make a hypothesis's table, where identify can say them (RoPE's frequency, angle
/// and cache readings).
#[derive(Debug, Clone, PartialEq)]
pub struct TableWords {
    pub kind: &'static str,
    pub options: Vec<(&'static str, String)>,
}

/// One hypothesis and how well it fits.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// The table this hypothesis makes, as `poslab table` words, where identify can say them.
    pub table: Option<TableWords>,
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
            table: None,
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

/// How close a miss is, for ranking misses: the share of its elements outside the tolerance
/// first (a table right but for two swapped columns or one bad element is nearer than one off
/// everywhere by less), then its largest error, counted in steps of `strict` at its size, so
/// that errors float32 noise apart (one bad element outweighs a base's last digits) tie. A
/// partial candidate counts its first rows.
fn closer_miss(a: &Comparison, b: &Comparison, strict: Tolerance) -> std::cmp::Ordering {
    let share = |c: &Comparison| {
        let elements: usize = c.loaded_shape.iter().product();
        c.outside as f64 / elements.max(1) as f64
    };
    // Increasing in the error, and whole: a total order in which near-equal errors tie.
    let steps = |c: &Comparison| {
        let error = c.max_abs_error();
        let step = strict.abs + strict.rel * error;
        if step > 0.0 {
            (error / step).round()
        } else {
            error
        }
    };
    share(a)
        .total_cmp(&share(b))
        .then(steps(a).total_cmp(&steps(b)))
}

/// The order of two misses in a report: the closer (see [`closer_miss`]); of misses as close
/// as each other, the one with round parameters, then the one that assumes least, then the
/// smaller largest error.
fn miss_order(a: &Candidate, b: &Candidate, strict: Tolerance) -> std::cmp::Ordering {
    closer_miss(&a.comparison, &b.comparison, strict)
        .then(a.fitted.cmp(&b.fitted))
        .then(a.departures.cmp(&b.departures))
        .then(
            a.comparison
                .max_abs_error()
                .total_cmp(&b.comparison.max_abs_error()),
        )
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

thread_local! {
    /// Why a hypothesis's table could not be made during the search on this thread (the CPU
    /// engine refused it for lack of memory), if one could not.
    static CUT_SHORT: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// The engine's result as the search uses it: `None` when the table cannot be made. A refusal
/// for lack of memory is noted, so that a search that could not try every reading says so
/// rather than answer "no match".
pub(super) fn noted<T>(result: Result<T, crate::engine::EngineError>) -> Option<T> {
    match result {
        Ok(value) => Some(value),
        Err(crate::engine::EngineError::Memory(reason)) => {
            CUT_SHORT.with(|cut| {
                cut.borrow_mut()
                    .get_or_insert_with(|| reason.without_advice());
            });
            None
        }
        Err(_) => None,
    }
}

/// Every hypothesis tried, the closest first.
#[derive(Debug, Clone)]
pub struct Identification {
    pub shape: Vec<usize>,
    pub candidates: Vec<Candidate>,
    /// For a float16 or bfloat16 file, the type its values were compared at the precision of.
    pub narrow: Option<StoredFloat>,
    /// Why some readings could not be tried (a table too large for the memory left), if so:
    /// without a match, the search has no answer to give.
    pub cut_short: Option<String>,
    /// How a file of three or more axes was read when its leading axes were taken as the
    /// table's rows (`[H, W, D]` as `[H*W, D]`).
    pub read_as: Option<String>,
    /// Without a match: where the file differs from the closest reading (its elements outside
    /// the tolerance, and a diagnosis such as two columns swapped).
    pub closest_differs: Option<crate::check::locate::Located>,
}

impl Identification {
    pub fn best(&self) -> Option<&Candidate> {
        self.candidates.first()
    }

    /// Whether the closest hypothesis matches within the tolerance.
    pub fn found(&self) -> bool {
        self.best().is_some_and(|c| c.comparison.matches())
    }

    /// Without a match, why there is no answer when some readings could not be tried.
    pub fn cut_short_text(&self) -> Option<String> {
        let reason = self.cut_short.as_ref().filter(|_| !self.found())?;
        Some(format!(
            "no answer: identify could not try every reading, for lack of memory ({reason}); free memory, or identify part of the table (--rows, --cols)"
        ))
    }

    /// What a terminal says: [`Identification::summary`], and without a match where the file
    /// differs from the closest reading.
    pub fn report(&self) -> String {
        self.text(true)
    }

    /// The reading, the runner-up and the notes, without where the file differs (the Check
    /// view shows that apart).
    pub fn summary(&self) -> String {
        self.text(false)
    }

    /// The lines said before the reading: how the file was read.
    pub fn preface(&self) -> Vec<String> {
        let mut lines = Vec::new();
        lines.extend(self.read_as.clone());
        if let Some(narrow) = self.narrow {
            lines.push(format!(
                "compared at the precision a {} file holds: within 2^-{} of each value (2^-{} near zero), so parameters closer than that read alike",
                narrow.name(),
                narrow.fraction_bits(),
                narrow.fraction_bits() + 1
            ));
        }
        lines
    }

    /// The reading's own line: `identified: ...`, or why there is none.
    pub fn reading_line(&self) -> String {
        let preface = self.preface().len();
        self.text(false)
            .lines()
            .nth(preface)
            .unwrap_or_default()
            .to_owned()
    }

    fn text(&self, with_where: bool) -> String {
        let describe = |c: &Candidate| {
            format!(
                "{}, max error {}{:.1e}",
                c.description,
                if c.partial { "≥ " } else { "" },
                c.comparison.max_abs_error()
            )
        };
        let mut lines = self.preface();
        match self.best() {
            Some(best) if best.comparison.matches() => {
                lines.push(format!("identified: {}", describe(best)))
            }
            _ if self.cut_short.is_some() => {
                lines.push(self.cut_short_text().unwrap_or_default());
                return lines.join("\n");
            }
            Some(best) => {
                lines.push(format!(
                    "no match within the tolerance; closest: {}",
                    describe(best)
                ));
                if let Some(located) = self.closest_differs.as_ref().filter(|_| with_where) {
                    lines.push(located.report().trim_end().to_owned());
                }
            }
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
        if let Some(reason) = self.cut_short.as_ref().filter(|_| self.found()) {
            lines.push(format!(
                "note: some other readings were not tried, for lack of memory ({reason}); the file matches the one identified, and a runner-up may be closer than the one shown"
            ));
        }
        lines.join("\n")
    }
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
    /// The description of the one hypothesis computed whole even where its first rows miss:
    /// the closest miss of a first search, made whole so that its maps and diagnosis show.
    whole_of: Option<String>,
    /// The `poslab table` words of hypotheses, by description, where a reading says them
    /// beside its description (a reading that fits its parameters names them as it goes).
    words: std::collections::HashMap<String, TableWords>,
}

impl Search {
    /// Records the words that make the table `description` names.
    fn name_words(&mut self, description: String, words: TableWords) {
        self.words.insert(description, words);
    }

    fn consider(&mut self, description: String, reference: ArrayD<f64>) {
        let comparison = compare(&reference, &self.table, self.tolerance);
        if comparison.shapes_match() {
            self.candidates.push(Candidate::new(
                description,
                into_squeezed(reference),
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
        let whole_anyway = self.whole_of.as_deref() == Some(description.as_str());
        if probe < rows && self.table.ndim() == first_rows.ndim() && !whole_anyway {
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
            .min_by(|(_, a), (_, b)| miss_order(a, b, self.strict))
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
        let file_magnitude = crate::check::largest_magnitude(&first_rows);
        // The table `make_rows` makes for a base, first on the probe rows: `Ok` with the whole
        // table when it matches there, else the probe's reference and comparison.
        let tolerance = self.tolerance;
        let attempt = |make_rows: &dyn Fn(usize) -> Option<Array2<f64>>, whole_anyway: bool| {
            if probe < rows && !whole_anyway {
                let prefix = make_rows(probe)?;
                let comparison = compare(&prefix.clone().into_dyn(), &first_rows, tolerance);
                if !comparison.matches() {
                    return Some(Err((prefix, comparison)));
                }
            }
            make_rows(rows).map(Ok)
        };
        'bases: for choice in base_choices(base) {
            let whole_anyway = self
                .whole_of
                .as_ref()
                .is_some_and(|whole| *whole == describe(choice));
            let exact = attempt(&|n| make(choice, n), whole_anyway);
            let exact_miss = match exact {
                None => continue,
                Some(Err((prefix, comparison))) => {
                    // Float32 angles at late positions (diffusion timesteps near 1000) are
                    // off by more than the tolerance from the first row on; a wrong base is
                    // off by a good part of the table's range.
                    let far = comparison.max_abs_error() > FLOAT32_PROBE_MISS * file_magnitude;
                    ruled_out.push(Candidate::new(
                        describe(choice),
                        orient(prefix),
                        comparison,
                        true,
                    ));
                    far
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
            // Ruled out on its first rows by more than float32 could explain: no float32
            // reading either.
            if exact_miss {
                continue;
            }
            let readings = TorchMode::all()
                .map(Float32Reading::Torch)
                .into_iter()
                .chain([Float32Reading::OwnFrequencies])
                .chain(FrequencyRecipe::ALL.map(Float32Reading::Recipe));
            for reading in readings {
                let Some(Ok(reference)) = attempt(&|n| twin(choice, n, reading), false) else {
                    continue;
                };
                let comparison = crate::check::compare_views(
                    reference.view().into_dyn(),
                    view.view().into_dyn(),
                    tolerance,
                );
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
                        Float32Reading::Recipe(recipe) => {
                            format!("in float32 as {} forms it", recipe.library_function())
                        }
                    };
                    self.candidates.push(Candidate::new(
                        format!("{}, {how}", describe(choice)),
                        into_squeezed(orient(reference)),
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
        // Of misses as close as each other (see `closer_miss`) the first tried is kept: the
        // roundest base, since a fitted 10000.0000075 says nothing 10000 does not.
        let strict = self.strict;
        if let Some(kept) = tried.into_iter().min_by(|a, b| {
            b.comparison
                .matches()
                .cmp(&a.comparison.matches())
                .then(a.partial.cmp(&b.partial))
                .then(closer_miss(&a.comparison, &b.comparison, strict))
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
    identify_owned(table.clone(), tolerance, stored)
}

/// [`identify`], taking the table: a large one is searched without a copy of it.
pub fn identify_owned(
    table: ArrayD<f64>,
    tolerance: Tolerance,
    stored: Option<StoredFloat>,
) -> Identification {
    identify_by(table, tolerance, stored, None)
}

/// Identifies a table of RoPE over several position axes given each token's positions
/// (`[seq, axes]`, as `rope-axes --ids` or `--grid` gives them): which scheme (Flux's per-axis
/// RoPE, Qwen2-VL's M-RoPE), its widths or sections, its base, what it holds (angles, cos or
/// sin) and how it is laid out. The other kinds do not read positions and are not tried.
pub fn identify_with_positions(
    table: ArrayD<f64>,
    ids: &Array2<f64>,
    tolerance: Tolerance,
    stored: Option<StoredFloat>,
) -> Identification {
    identify_by(table, tolerance, stored, Some(Given::Axes(ids)))
}

/// Identifies a `[rows, dim]` sinusoidal table, or plain RoPE angles or caches, whose rows
/// sit at `positions` (`identify --positions`, `--position-scale`): diffusion timesteps,
/// position ids. The other kinds are not tried.
pub fn identify_at_positions(
    table: ArrayD<f64>,
    positions: &crate::encoding::positions::Positions,
    tolerance: Tolerance,
    stored: Option<StoredFloat>,
) -> Identification {
    identify_by(table, tolerance, stored, Some(Given::Rows(positions)))
}

/// Positions the user gave with the file.
enum Given<'a> {
    /// Each token's positions on several axes (`--ids`, `--grid`).
    Axes(&'a Array2<f64>),
    /// One position per row (`--positions`, `--position-scale`).
    Rows(&'a crate::encoding::positions::Positions),
}

/// Searches once; when nothing matches and the closest miss was ruled out on its first rows
/// alone, searches again with that hypothesis made whole, so that the closest reading has a
/// table of the file's shape (the Check view's maps, the diagnosis of where it differs).
fn identify_by(
    table: ArrayD<f64>,
    tolerance: Tolerance,
    stored: Option<StoredFloat>,
    given: Option<Given<'_>>,
) -> Identification {
    let (mut identification, mut table) =
        search_once(table, tolerance, stored, given.as_ref(), None);
    if identification.found() || identification.cut_short.is_some() {
        return identification;
    }
    if let Some(closest) = identification
        .best()
        .filter(|best| best.partial)
        .map(|best| best.description.clone())
    {
        let (again, same) = search_once(
            table,
            tolerance,
            stored,
            given.as_ref(),
            Some(closest.clone()),
        );
        table = same;
        if let Some(whole) = again
            .candidates
            .into_iter()
            .find(|c| c.description == closest && !c.partial)
        {
            identification.candidates[0] = whole;
        }
    }
    identification.closest_differs =
        identification
            .best()
            .filter(|best| !best.partial)
            .and_then(|best| {
                crate::check::locate(
                    &best.comparison,
                    &best.reference,
                    &table,
                    stored,
                    crate::check::locate::DEFAULT_SHOWN,
                )
            });
    identification
}

/// One search of `table`; gives the table back (squeezed) for another.
fn search_once(
    table: ArrayD<f64>,
    tolerance: Tolerance,
    stored: Option<StoredFloat>,
    given: Option<&Given<'_>>,
    whole_of: Option<String>,
) -> (Identification, ArrayD<f64>) {
    let table = into_squeezed(table);
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
    CUT_SHORT.with(|cut| cut.borrow_mut().take());
    let mut search = Search {
        table,
        tolerance,
        strict,
        noise,
        subnormal_step: match narrow {
            Some(StoredFloat::F16) => 2f64.powi(-24),
            _ => 0.0,
        },
        float32: stored == Some(StoredFloat::F32),
        candidates: Vec::new(),
        whole_of,
        words: std::collections::HashMap::new(),
    };
    if let Some(given) = given {
        if search.table.len() <= MAX_ELEMENTS {
            match given {
                Given::Axes(ids) => read_axes::rope_axes(&mut search, ids),
                Given::Rows(positions) => {
                    sinusoidal_at_positions(&mut search, positions);
                    rope_at_positions(&mut search, positions);
                }
            }
        }
        return finished(search, None, narrow);
    }
    if search.table.len() <= MAX_ELEMENTS {
        search_by_shape(&mut search);
    }
    let shape = search.table.shape().to_vec();
    // A file of [H, W, D] (a grid's rows kept as a grid) is also read as the [H*W, D] table
    // its leading axes make, when nothing matched it as it is.
    let mut read_as = None;
    if search.table.ndim() >= 3
        && search.table.len() <= MAX_ELEMENTS
        && !search.candidates.iter().any(|c| c.comparison.matches())
        && let Some(rows) = crate::check::leading_rows(&shape)
    {
        let table = std::mem::take(&mut search.table);
        search.table = crate::check::as_rows(table, rows);
        if kept_if_matched(&mut search, two_dimensional) {
            read_as = Some(crate::check::read_as_rows_note(&shape, rows));
        } else {
            // Back to the file's own axes for the readings after this one.
            let table = std::mem::take(&mut search.table);
            search.table = table
                .into_shape_clone(ndarray::IxDyn(&shape))
                .unwrap_or_else(|e| unreachable!("the same values on their own axes: {e}"));
        }
    }
    // A table with one row of zeros, a padding row, is read from the others.
    if let Some(note) = read_past_zero_row(&mut search) {
        read_as = Some(note);
    }
    // A mask written with the float32 minimum (-3.4e38) rather than -inf, as many attention
    // kernels write it, is read as the mask it stands for when nothing matched the file.
    if search.table.len() <= MAX_ELEMENTS
        && !search.candidates.iter().any(|c| c.comparison.matches())
        && let Some(masked) = crate::check::with_float32_minimum_as_masked(&search.table)
    {
        let as_stored = std::mem::replace(&mut search.table, masked);
        if kept_if_matched(&mut search, search_by_shape) {
            let note = "read its float32-minimum cells (-3.4e38) as masked (-inf): the same attention after softmax";
            read_as = Some(match read_as {
                Some(first) => format!("{first}\n{note}"),
                None => note.to_owned(),
            });
        } else {
            search.table = as_stored;
        }
    }
    finished(search, read_as, narrow)
}

/// A table with one row of zeros (fairseq's and M2M100's padding_idx row), when nothing
/// matched it whole, read from its other rows at their own positions, or else from the rows
/// after it: what the reading says of the file, when either matched.
fn read_past_zero_row(search: &mut Search) -> Option<String> {
    if search.table.len() <= MAX_ELEMENTS
        && !search.candidates.iter().any(|c| c.comparison.matches())
        && let Some((zero_row, rows)) = single_zero_row(&search.table)
        && rows - zero_row > 2
    {
        let whole = std::mem::take(&mut search.table);
        // First the whole table: every other row at its own position, 0 to the last (fairseq's
        // table is positions 0..N-1 with its padding row zeroed).
        let kept: Vec<usize> = (0..rows).filter(|&r| r != zero_row).collect();
        search.table = whole.select(ndarray::Axis(0), &kept);
        let positions = crate::encoding::positions::Positions {
            list: crate::encoding::positions::PositionList::Given(
                kept.iter().map(|&r| r as f64).collect(),
            ),
            scale: 1.0,
            scale_at: crate::encoding::positions::ScaleAt::Position,
        };
        let whole_matched = kept_if_matched(search, |search| {
            sinusoidal_at_positions(search, &positions);
            rope_at_positions(search, &positions);
        });
        if whole_matched {
            // Said as the whole table it is, not as positions skipping one.
            let given = positions.describe();
            let said = format!(
                "positions 0..{}, row {zero_row} zeroed (--zero-row {zero_row})",
                rows - 1
            );
            for candidate in &mut search.candidates {
                candidate.description = candidate
                    .description
                    .replace(&format!("at the {given}"), &said);
                // Its table with the zero row back in place: the file's shape, to draw.
                if candidate.reference.shape() == search.table.shape() {
                    let mut full = ArrayD::zeros(whole.raw_dim());
                    for (k, &r) in kept.iter().enumerate() {
                        full.index_axis_mut(ndarray::Axis(0), r)
                            .assign(&candidate.reference.index_axis(ndarray::Axis(0), k));
                    }
                    candidate.reference = full;
                }
            }
            let note = format!(
                "row {zero_row} is all zeros, a padding row (fairseq's and M2M100's padding_idx): the other rows are the table's at their own positions; `check --zero-row {zero_row}` checks the file against it"
            );
            search.table = whole;
            return Some(note);
        } else {
            // Else the rows after it on their own, at the positions the reading gives.
            search.table = whole
                .slice_axis(ndarray::Axis(0), ndarray::Slice::from(zero_row + 1..))
                .to_owned();
            if kept_if_matched(search, two_dimensional) {
                return Some(format!(
                    "row {zero_row} is all zeros, a padding row (fairseq's and M2M100's padding_idx): read rows {} to {} on their own, whose positions the reading gives; `check --zero-row {zero_row}` checks the whole file against it",
                    zero_row + 1,
                    rows - 1
                ));
            }
            search.table = whole;
        }
    }
    None
}

/// The one all-zero row of a 2-D table and its number of rows, if it has exactly one (and
/// other rows): a padding row.
fn single_zero_row(table: &ArrayD<f64>) -> Option<(usize, usize)> {
    let rows = table.view().into_dimensionality::<Ix2>().ok()?;
    let mut zero = rows
        .outer_iter()
        .enumerate()
        .filter(|(_, row)| row.iter().all(|&v| v == 0.0))
        .map(|(k, _)| k);
    let first = zero.next()?;
    zero.next().is_none().then_some((first, rows.nrows()))
}

/// The search's candidates in the order a report names them.
fn finished(
    search: Search,
    read_as: Option<String>,
    narrow: Option<StoredFloat>,
) -> (Identification, ArrayD<f64>) {
    let shape = search.table.shape().to_vec();
    let strict = search.strict;
    let mut candidates = search.candidates;
    // Words recorded by description: the reading's own, or the one it extends (a float32
    // reading's description adds how it was computed to its reading's).
    for candidate in candidates.iter_mut().filter(|c| c.table.is_none()) {
        candidate.table = search
            .words
            .iter()
            .filter(|(description, _)| candidate.description.starts_with(description.as_str()))
            .max_by_key(|(description, _)| description.len())
            .map(|(_, words)| words.clone());
    }
    // Matches first; among them, round parameters before fitted ones, then the closest; then
    // the misses, closest first.
    candidates.sort_by(|a, b| {
        let (a_match, b_match) = (a.comparison.matches(), b.comparison.matches());
        let order = b_match
            .cmp(&a_match)
            .then((a_match && a.fitted).cmp(&(b_match && b.fitted)));
        if a_match && b_match {
            order.then(
                a.comparison
                    .max_abs_error()
                    .total_cmp(&b.comparison.max_abs_error()),
            )
        } else {
            order.then(miss_order(a, b, strict))
        }
    });
    // The best of each hypothesis: the same one with another base is not a runner-up.
    let mut seen = std::collections::HashSet::new();
    candidates.retain(|c| seen.insert(c.hypothesis.clone()));
    name_the_plainest_first(&mut candidates);
    let identification = Identification {
        shape,
        read_as,
        candidates,
        narrow,
        cut_short: CUT_SHORT.with(|cut| cut.borrow_mut().take()),
        closest_differs: None,
    };
    (identification, search.table)
}

/// Runs `search_with` on the search's table, another reading of the file: when one of the
/// candidates it adds matches, they replace the earlier ones (which matched nothing) and
/// `true` is returned; else they are dropped.
fn kept_if_matched(search: &mut Search, search_with: impl FnOnce(&mut Search)) -> bool {
    let before = search.candidates.len();
    search_with(search);
    let matched = search.candidates[before..]
        .iter()
        .any(|c| c.comparison.matches());
    if matched {
        search.candidates.drain(..before);
    } else {
        search.candidates.truncate(before);
    }
    matched
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

/// A table made from frequencies: `(theta, attention, rows, torch)` as [`FrequencyTarget`]
/// says.
type MadeTable<'a> = dyn Fn(&[f64], f64, &[usize], bool) -> ArrayD<f64> + 'a;

/// A table of a base in float32 arithmetic: `(base, rows, reading)`; for
/// The table of `spec` under a float32 `reading`, laid out as `file` (the file's rows it
/// covers): PyTorch's own computation, the file's library's frequencies fitted to it, or a
/// library's recipe (sinusoidal tables only); `None` where the reading does not apply or does
/// not reproduce the file (the fitted readings).
fn float32_table(
    spec: &TableSpec,
    reading: Float32Reading,
    file: &ArrayD<f64>,
) -> Option<ArrayD<f64>> {
    match reading {
        Float32Reading::Torch(mode) => Some(
            noted(cpu::compute_arith(
                spec,
                torch_f32::Arithmetic::TorchF32(mode),
            ))?
            .into_real(),
        ),
        Float32Reading::OwnFrequencies => crate::check::verdict::own_frequencies_table(spec, file),
        Float32Reading::Recipe(recipe) => match spec.unpositioned() {
            TableSpec::Sinusoidal(params) => {
                crate::check::verdict::recipe_table(spec, params, recipe, file)
            }
            _ => None,
        },
    }
}

/// [`Float32Reading::OwnFrequencies`], only when every column of the file's first `rows` rows
/// matches one of the frequencies tried.
type TwinTable<'a> = dyn Fn(f64, usize, Float32Reading) -> Option<Array2<f64>> + 'a;
