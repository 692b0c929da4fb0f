//! Fixed sinusoidal encodings (Vaswani et al. 2017; tensor2tensor's `get_timing_signal_1d`),
//! and the dot products between their rows.

use super::PairLayout;
use ndarray::{Array1, Array2};
use rayon::prelude::*;

use super::exact_angle::{self, DoubleF64, TurnsPerStep};
use super::{ParamError, check_count, check_even_dim, check_start, fill_2d};

/// Which of a frequency's sine and cosine comes first: in the pair (interleaved) or as the first
/// half of the row (split).
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
pub enum FirstOfPair {
    /// The sine first (Vaswani et al., tensor2tensor, fairseq).
    #[default]
    Sin,
    /// The cosine first (diffusers `flip_sin_to_cos=True`, MLX `cos_first=True`).
    Cos,
}

/// How the frequencies are spaced between 1 and `1/base`.
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
pub enum Spacing {
    /// w_i = base^(-2i/dim): the last frequency stops short of 1/base.
    #[default]
    Vaswani,
    /// w_i = base^(-i/max(dim/2-1, 1)): the last frequency is exactly 1/base.
    T2t,
}

/// Parameters of a sinusoidal table.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SinusoidalParams {
    /// Number of positions (rows).
    pub seq: usize,
    /// Embedding width (columns), even.
    pub dim: usize,
    /// Wavelength scale; 10000 in the original transformer.
    pub base: f64,
    /// First position.
    pub start: u64,
    pub layout: PairLayout,
    pub spacing: Spacing,
    pub first: FirstOfPair,
    /// What every value is multiplied by (x-transformers' `ScaledSinusoidalEmbedding`, MLX's
    /// `scale`); 1 in the original transformer. Dot products scale by its square.
    pub amplitude: f64,
}

impl Default for SinusoidalParams {
    fn default() -> Self {
        Self {
            seq: 128,
            dim: 512,
            base: 10_000.0,
            start: 0,
            layout: PairLayout::Interleaved,
            spacing: Spacing::Vaswani,
            first: FirstOfPair::Sin,
            amplitude: 1.0,
        }
    }
}

impl SinusoidalParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        check_count("seq", self.seq, super::SEQ_RANGE)?;
        check_even_dim("dim", self.dim)?;
        super::check_base("base", self.base)?;
        if !(self.amplitude.is_finite() && self.amplitude > 0.0) {
            return Err(ParamError::new(
                "scale",
                self.amplitude,
                "must be a positive finite number (what every value is multiplied by)",
            ));
        }
        check_start(self.start, self.seq)
    }

    /// The `dim / 2` angular frequencies `w_i`, in radians per position.
    pub fn frequencies(&self) -> Array1<f64> {
        let pairs = self.dim / 2;
        match self.spacing {
            Spacing::Vaswani => Array1::from_shape_fn(pairs, |i| {
                self.base.powf(-((2 * i) as f64) / self.dim as f64)
            }),
            Spacing::T2t => {
                // tensor2tensor: exp(-i * log(max/min) / max(n - 1, 1)) with min = 1, max = base.
                let increment = self.base.ln() / (pairs.saturating_sub(1).max(1)) as f64;
                Array1::from_shape_fn(pairs, |i| (-(i as f64) * increment).exp())
            }
        }
    }

    /// The frequencies to about 104 bits: what exact angles at large positions are made from.
    pub fn exact_frequencies(&self) -> Vec<DoubleF64> {
        let pairs = self.dim / 2;
        let ln_base = DoubleF64::ln(self.base);
        match self.spacing {
            Spacing::Vaswani => (0..pairs)
                .map(|i| DoubleF64::power(ln_base, -2 * i as i64, self.dim as u64))
                .collect(),
            Spacing::T2t => (0..pairs)
                .map(|i| {
                    DoubleF64::power(ln_base, -(i as i64), pairs.saturating_sub(1).max(1) as u64)
                })
                .collect(),
        }
    }

    /// Each frequency as a fraction of a turn per position (see [`exact_angle`]).
    pub fn turns(&self) -> Vec<TurnsPerStep> {
        exact_angle::turns_of(self.exact_frequencies())
    }

    /// The frequency index of column `col`, and whether the column holds its cosine.
    pub fn column_pair(&self, col: usize) -> (usize, bool) {
        let (pair, second) = match self.layout {
            PairLayout::Interleaved => (col / 2, col % 2 == 1),
            PairLayout::Half => (col % (self.dim / 2), col >= self.dim / 2),
        };
        (pair, second != (self.first == FirstOfPair::Cos))
    }

    /// The columns of frequency `pair`'s sine and cosine.
    pub fn pair_columns(&self, pair: usize) -> (usize, usize) {
        let (first, second) = match self.layout {
            PairLayout::Interleaved => (2 * pair, 2 * pair + 1),
            PairLayout::Half => (pair, self.dim / 2 + pair),
        };
        match self.first {
            FirstOfPair::Sin => (first, second),
            FirstOfPair::Cos => (second, first),
        }
    }
}

/// Values of a sinusoidal table, with its frequencies computed once.
pub struct SinusoidalValues {
    params: SinusoidalParams,
    freqs: Array1<f64>,
    turns: Vec<TurnsPerStep>,
    /// sin and cos of `k w_i` for `k <` [`ROWS_PER_ANCHOR`], row-major by `k`: the same for
    /// every block [`Self::fill_rows`] fills, so computed once, when first needed.
    steps: std::sync::OnceLock<Vec<(f64, f64)>>,
}

impl SinusoidalValues {
    pub fn new(params: &SinusoidalParams) -> Result<Self, ParamError> {
        params.validate()?;
        Ok(Self {
            params: *params,
            freqs: params.frequencies(),
            turns: params.turns(),
            steps: std::sync::OnceLock::new(),
        })
    }

    pub fn params(&self) -> &SinusoidalParams {
        &self.params
    }

    /// Row `row`, column `col` of the table.
    pub fn value(&self, row: usize, col: usize) -> f64 {
        let position = self.params.start + row as u64;
        let (pair, is_cos) = self.params.column_pair(col);
        let (sin, cos) = exact_angle::sin_cos(self.turns[pair].at(position));
        self.params.amplitude * if is_cos { cos } else { sin }
    }

    /// `(sin, cos)` of row `row`'s angle for frequency `pair`, before the amplitude.
    pub fn unit_sin_cos(&self, row: usize, pair: usize) -> (f64, f64) {
        exact_angle::sin_cos(self.turns[pair].at(self.params.start + row as u64))
    }

    /// `sin(n w/2) / (n sin(w/2))` for each frequency `w`: what a mean over `n = count`
    /// consecutive positions (or offsets) multiplies the value at their centre by. The same for
    /// every bin of a heatmap or curve but the last, so callers compute it once.
    pub fn mean_ratios(&self, count: usize) -> Vec<f64> {
        let n = count as f64;
        self.freqs
            .iter()
            .map(|&w| {
                if count <= 1 {
                    1.0
                } else {
                    (n * w / 2.0).sin() / (n * (w / 2.0).sin())
                }
            })
            .collect()
    }

    /// The ratios of a bin of `count` steps: `full` (the ratios of `full_count`) when it is
    /// a full bin, computed afresh for the short last one.
    pub fn bin_ratios<'a>(
        &self,
        full: &'a [f64],
        full_count: usize,
        count: usize,
    ) -> std::borrow::Cow<'a, [f64]> {
        if count == full_count {
            std::borrow::Cow::Borrowed(full)
        } else {
            std::borrow::Cow::Owned(self.mean_ratios(count))
        }
    }

    /// The mean of column `col` over the `count` rows from `first_row`, in closed form: the
    /// sum of `sin(a + k w)` over `k < n` is `sin(a + (n-1) w/2) · sin(n w/2) / sin(w/2)`
    /// (and likewise for cos), so a pixel covering a thousand rows costs one evaluation.
    pub fn column_mean(&self, first_row: usize, count: usize, col: usize) -> f64 {
        self.column_mean_with(&self.mean_ratios(count), first_row, count, col)
    }

    /// [`Self::column_mean`] with `ratios = self.mean_ratios(count)` computed by the caller.
    pub fn column_mean_with(
        &self,
        ratios: &[f64],
        first_row: usize,
        count: usize,
        col: usize,
    ) -> f64 {
        if count <= 1 {
            return self.value(first_row, col);
        }
        let (pair, is_cos) = self.params.column_pair(col);
        let first = self.params.start + first_row as u64;
        let centre = self.turns[pair]
            .at(first)
            .wrapping_add(half_steps(self.turns[pair], count as u64 - 1));
        let (sin, cos) = exact_angle::sin_cos(centre);
        self.params.amplitude * ratios[pair] * if is_cos { cos } else { sin }
    }

    /// The mean of `PE[p] · PE[p + k]` over the `count` offsets `k` from `first_offset`, in
    /// closed form frequency by frequency (as [`Self::column_mean`]): one cosine per frequency
    /// however many offsets the mean spans.
    pub fn dot_mean(&self, first_offset: i64, count: usize) -> f64 {
        self.dot_mean_with(&self.mean_ratios(count), first_offset, count)
    }

    /// [`Self::dot_mean`] with `ratios = self.mean_ratios(count)` computed by the caller.
    pub fn dot_mean_with(&self, ratios: &[f64], first_offset: i64, count: usize) -> f64 {
        if count <= 1 {
            return self.dot_at_offset(first_offset);
        }
        // Twice the centre offset, an integer; cos is even, so its magnitude is enough.
        let twice_centre = (2 * first_offset + count as i64 - 1).unsigned_abs();
        let sum: f64 = ratios
            .iter()
            .zip(&self.turns)
            .map(|(&ratio, &turns)| ratio * exact_angle::sin_cos(half_steps(turns, twice_centre)).1)
            .sum();
        self.dot_scale() * sum
    }

    /// The mean of `PE[i] · PE[j]` over a block of the similarity matrix: `row_count` rows and
    /// `col_count` columns whose first column is `offset` after its first row, with
    /// `row_ratios` and `col_ratios` the [`Self::mean_ratios`] of those counts. In closed form:
    /// the double sum of `cos((j - i) w)` factors into a sum over `j` times the conjugate of one
    /// over `i`, each a run's ratio times its centre's phase, so a block costs one cosine per
    /// frequency, at the offset between the two centres, however many cells it holds.
    pub fn block_dot_mean_with(
        &self,
        offset: i64,
        (row_ratios, row_count): (&[f64], usize),
        (col_ratios, col_count): (&[f64], usize),
    ) -> f64 {
        // Twice the offset between the centres, an integer; cos is even.
        let twice_centre = (2 * offset + col_count as i64 - row_count as i64).unsigned_abs();
        let sum: f64 = row_ratios
            .iter()
            .zip(col_ratios)
            .zip(&self.turns)
            .map(|((&r, &c), &turns)| {
                r * c * exact_angle::sin_cos(half_steps(turns, twice_centre)).1
            })
            .sum();
        self.dot_scale() * sum
    }

    /// `PE[p] · PE[p + offset]`: `Σ_i cos(offset w_i)`.
    ///
    /// Because `sin a sin b + cos a cos b = cos(a - b)`, the product depends only on the offset;
    /// evaluating it this way is exact where summing row products loses digits to rounding.
    pub fn dot_at_offset(&self, offset: i64) -> f64 {
        let distance = offset.unsigned_abs();
        let sum: f64 = self
            .turns
            .iter()
            .map(|turns| exact_angle::sin_cos(turns.at(distance)).1)
            .sum();
        self.dot_scale() * sum
    }

    /// What the amplitude multiplies a dot product of two rows by: its square.
    pub fn dot_scale(&self) -> f64 {
        self.params.amplitude * self.params.amplitude
    }
}

/// The turn `steps / 2` positions make, for a frequency below a turn per position (every
/// sinusoidal frequency is at most 1 radian).
fn half_steps(turns: TurnsPerStep, steps: u64) -> u128 {
    TurnsPerStep(turns.0 >> 1).at(steps)
}

/// The `[seq, dim]` table: row `r` encodes position `start + r`.
pub fn table(params: &SinusoidalParams) -> Result<Array2<f64>, ParamError> {
    let values = SinusoidalValues::new(params)?;
    let mut table = Array2::<f64>::zeros((params.seq, params.dim));
    values.fill_rows(0, table.view_mut());
    Ok(table)
}

impl SinusoidalValues {
    /// Rows `first_row ..` of the table into `out` (`[rows, dim]`), a block of
    /// [`ROWS_PER_ANCHOR`] rows at a time: `sin((p0 + k) w)` is `sin(p0 w) cos(k w) +
    /// cos(p0 w) sin(k w)`, with both angles' sines and cosines exact (one evaluation per block
    /// row and per block start), so each value is a sum of two products of exact values, off by
    /// about an ulp, never accumulating: some twenty times fewer `sin`/`cos` evaluations.
    pub fn fill_rows(&self, first_row: usize, mut out: ndarray::ArrayViewMut2<f64>) {
        let params = &self.params;
        let pairs = params.dim / 2;
        let amplitude = params.amplitude;
        let block = ROWS_PER_ANCHOR.min(out.nrows().max(1));
        let steps = self.steps.get_or_init(|| {
            (0..ROWS_PER_ANCHOR as u64)
                .flat_map(|k| {
                    self.turns
                        .iter()
                        .map(move |turns| exact_angle::sin_cos(turns.at(k)))
                })
                .collect()
        });
        out.axis_chunks_iter_mut(ndarray::Axis(0), block)
            .into_par_iter()
            .enumerate()
            .for_each(|(b, mut rows)| {
                let anchor = params.start + (first_row + b * block) as u64;
                let anchors: Vec<(f64, f64)> = self
                    .turns
                    .iter()
                    .map(|turns| exact_angle::sin_cos(turns.at(anchor)))
                    .collect();
                for (k, mut row) in rows.rows_mut().into_iter().enumerate() {
                    let steps = &steps[k * pairs..(k + 1) * pairs];
                    for (i, (&(s0, c0), &(sk, ck))) in anchors.iter().zip(steps).enumerate() {
                        let (sin_col, cos_col) = params.pair_columns(i);
                        row[sin_col] = amplitude * (s0 * ck + c0 * sk);
                        row[cos_col] = amplitude * (c0 * ck - s0 * sk);
                    }
                }
            });
    }
}

/// Rows computed from one exactly evaluated row by angle addition in [`SinusoidalValues::fill_rows`].
pub const ROWS_PER_ANCHOR: usize = 64;

/// `PE[anchor] · PE[j]` for every row `j`; `anchor` is a row index (0-based).
pub fn dot_decay(params: &SinusoidalParams, anchor: usize) -> Result<Array1<f64>, ParamError> {
    let values = SinusoidalValues::new(params)?;
    check_anchor(anchor, params.seq)?;
    let decay: Vec<f64> = (0..params.seq)
        .into_par_iter()
        .map(|row| values.dot_at_offset(row as i64 - anchor as i64))
        .collect();
    Ok(Array1::from(decay))
}

/// The `[seq, seq]` matrix `PE[i] · PE[j]` (a Toeplitz matrix: it depends on `j - i` only).
pub fn similarity(params: &SinusoidalParams) -> Result<Array2<f64>, ParamError> {
    let values = SinusoidalValues::new(params)?;
    let seq = params.seq;
    // One value per offset, then a fill: O(seq·dim + seq²), not O(seq²·dim).
    let by_offset = offsets_table(&values, -(seq as i64 - 1), seq as i64 - 1);
    Ok(fill_2d(seq, seq, |i, j| by_offset[j + seq - 1 - i]))
}

/// `dot_at_offset(k)` for `k` in `lowest..=highest`.
pub fn offsets_table(values: &SinusoidalValues, lowest: i64, highest: i64) -> Vec<f64> {
    (lowest..=highest)
        .into_par_iter()
        .map(|k| values.dot_at_offset(k))
        .collect()
}

/// The `[dim, dim]` matrix `T(Δ)` that moves every row by `delta` positions, acting on rows
/// from the right: `PE[p + Δ] = PE[p] · T(Δ)`. Each frequency's sine and cosine columns form a
/// 2 x 2 rotation by `w_i·Δ` (angle addition), every other entry is 0; the angles are exact,
/// as the table's own.
pub fn translation_matrix(
    params: &SinusoidalParams,
    delta: u64,
) -> Result<Array2<f64>, ParamError> {
    params.validate()?;
    let mut t = Array2::<f64>::zeros((params.dim, params.dim));
    for (i, turns) in params.turns().iter().enumerate() {
        let (sin, cos) = exact_angle::sin_cos(turns.at(delta));
        let (s, c) = params.pair_columns(i);
        // new sin = sin·cos φ + cos·sin φ; new cos = cos·cos φ - sin·sin φ.
        t[[s, s]] = cos;
        t[[c, s]] = sin;
        t[[s, c]] = -sin;
        t[[c, c]] = cos;
    }
    Ok(t)
}

/// `PE[p] · T` for the rows of `table` (`[seq, dim]`), skipping the entries of `t` that are 0
/// (a block-diagonal `T` costs `4·dim` products a row instead of `dim²`).
pub fn shifted_rows(table: &Array2<f64>, t: &Array2<f64>) -> Array2<f64> {
    let dim = t.nrows();
    let nonzero: Vec<Vec<(usize, f64)>> = (0..dim)
        .map(|col| {
            (0..dim)
                .filter(|&k| t[[k, col]] != 0.0)
                .map(|k| (k, t[[k, col]]))
                .collect()
        })
        .collect();
    fill_2d(table.nrows(), dim, |p, col| {
        nonzero[col].iter().map(|&(k, v)| table[[p, k]] * v).sum()
    })
}

/// `T(Δ)` applied to the table, next to the table computed at the shifted positions.
pub struct Translation {
    pub matrix: Array2<f64>,
    /// `PE[p + Δ]`, computed directly.
    pub shifted: Array2<f64>,
    /// `PE[p] · T(Δ)`.
    pub via_matrix: Array2<f64>,
    /// The largest `|PE[p + Δ] - PE[p] · T(Δ)|`: 0 but for rounding, at any `Δ`.
    pub error: f64,
}

/// Moves every row of the table by `delta` with `T(Δ)` and compares with the shifted table.
pub fn translate(params: &SinusoidalParams, delta: u64) -> Result<Translation, ParamError> {
    let start = params.start.checked_add(delta).ok_or_else(|| {
        ParamError::new("delta", delta, "the shifted positions must stay below 2^53")
    })?;
    let moved = table(params)?;
    let shifted = table(&SinusoidalParams { start, ..*params })?;
    let matrix = translation_matrix(params, delta)?;
    let via_matrix = shifted_rows(&moved, &matrix);
    let error = shifted
        .iter()
        .zip(via_matrix.iter())
        .fold(0.0f64, |worst, (a, b)| worst.max((a - b).abs()));
    Ok(Translation {
        matrix,
        shifted,
        via_matrix,
        error,
    })
}

/// The largest `|PE[p + Δ] - PE[p] · T(Δ)|` over the table's rows and columns.
pub fn translation_error(params: &SinusoidalParams, delta: u64) -> Result<f64, ParamError> {
    translate(params, delta).map(|t| t.error)
}

/// Checks that a dot-decay anchor names a row of the table.
pub fn check_anchor(anchor: usize, seq: usize) -> Result<(), ParamError> {
    if anchor < seq {
        Ok(())
    } else {
        Err(ParamError::new(
            "anchor",
            anchor,
            format!(
                "must be a row of the table, from 0 to {} (seq - 1)",
                seq - 1
            ),
        ))
    }
}
