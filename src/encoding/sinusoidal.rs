//! Fixed sinusoidal encodings (Vaswani et al. 2017; tensor2tensor's `get_timing_signal_1d`),
//! and the dot products between their rows.

use ndarray::{Array1, Array2, Zip};
use rayon::prelude::*;

use super::{ParamError, check_count, check_even_dim, check_start, fill_2d};

/// Where the sine and cosine of one frequency sit in a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum SinusoidalLayout {
    /// [p, 2i] = sin, [p, 2i+1] = cos (Vaswani et al., the annotated transformer).
    #[default]
    Interleaved,
    /// [p, i] = sin, [p, dim/2 + i] = cos (tensor2tensor, fairseq).
    Split,
}

/// How the frequencies are spaced between 1 and `1/base`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Spacing {
    /// w_i = base^(-2i/dim): the last frequency stops short of 1/base.
    #[default]
    Vaswani,
    /// w_i = base^(-i/max(dim/2-1, 1)): the last frequency is exactly 1/base.
    T2t,
}

/// Parameters of a sinusoidal table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SinusoidalParams {
    /// Number of positions (rows).
    pub seq: usize,
    /// Embedding width (columns), even.
    pub dim: usize,
    /// Wavelength scale; 10000 in the original transformer.
    pub base: f64,
    /// First position.
    pub start: u64,
    pub layout: SinusoidalLayout,
    pub spacing: Spacing,
}

impl Default for SinusoidalParams {
    fn default() -> Self {
        Self {
            seq: 128,
            dim: 512,
            base: 10_000.0,
            start: 0,
            layout: SinusoidalLayout::Interleaved,
            spacing: Spacing::Vaswani,
        }
    }
}

impl SinusoidalParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        check_count("seq", self.seq, super::SEQ_RANGE)?;
        check_even_dim("dim", self.dim)?;
        super::check_base("base", self.base)?;
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

    /// The frequency index of column `col`, and whether the column holds its cosine.
    pub fn column_pair(&self, col: usize) -> (usize, bool) {
        match self.layout {
            SinusoidalLayout::Interleaved => (col / 2, col % 2 == 1),
            SinusoidalLayout::Split => (col % (self.dim / 2), col >= self.dim / 2),
        }
    }
}

/// Values of a sinusoidal table, with its frequencies computed once.
pub struct SinusoidalValues {
    params: SinusoidalParams,
    freqs: Array1<f64>,
}

impl SinusoidalValues {
    pub fn new(params: &SinusoidalParams) -> Result<Self, ParamError> {
        params.validate()?;
        Ok(Self {
            params: *params,
            freqs: params.frequencies(),
        })
    }

    /// Row `row`, column `col` of the table.
    pub fn value(&self, row: usize, col: usize) -> f64 {
        let position = (self.params.start + row as u64) as f64;
        let (pair, is_cos) = self.params.column_pair(col);
        let angle = position * self.freqs[pair];
        if is_cos { angle.cos() } else { angle.sin() }
    }

    /// The mean of column `col` over the `count` rows from `first_row`, in closed form: the
    /// sum of `sin(a + k w)` over `k < n` is `sin(a + (n-1) w/2) · sin(n w/2) / sin(w/2)`
    /// (and likewise for cos), so a pixel covering a thousand rows costs one evaluation.
    pub fn column_mean(&self, first_row: usize, count: usize, col: usize) -> f64 {
        if count <= 1 {
            return self.value(first_row, col);
        }
        let (pair, is_cos) = self.params.column_pair(col);
        let w = self.freqs[pair];
        let n = count as f64;
        let first = (self.params.start + first_row as u64) as f64;
        let centre = first * w + (n - 1.0) * w / 2.0;
        let ratio = (n * w / 2.0).sin() / (n * (w / 2.0).sin());
        ratio * if is_cos { centre.cos() } else { centre.sin() }
    }

    /// The mean of `PE[p] · PE[p + k]` over the `count` offsets `k` from `first_offset`, in
    /// closed form frequency by frequency (as [`Self::column_mean`]): one cosine per frequency
    /// however many offsets the mean spans.
    pub fn dot_mean(&self, first_offset: i64, count: usize) -> f64 {
        if count <= 1 {
            return self.dot_at_offset(first_offset);
        }
        let n = count as f64;
        let centre = first_offset as f64 + (n - 1.0) / 2.0;
        self.freqs
            .iter()
            .map(|&w| (n * w / 2.0).sin() / (n * (w / 2.0).sin()) * (centre * w).cos())
            .sum()
    }

    /// `PE[p] · PE[p + offset]`: `Σ_i cos(offset w_i)`.
    ///
    /// Because `sin a sin b + cos a cos b = cos(a - b)`, the product depends only on the offset;
    /// evaluating it this way is exact where summing row products loses digits to rounding.
    pub fn dot_at_offset(&self, offset: i64) -> f64 {
        let offset = offset as f64;
        self.freqs.iter().map(|&w| (offset * w).cos()).sum()
    }
}

/// The `[seq, dim]` table: row `r` encodes position `start + r`.
pub fn table(params: &SinusoidalParams) -> Result<Array2<f64>, ParamError> {
    let values = SinusoidalValues::new(params)?;
    let pairs = params.dim / 2;
    let mut table = Array2::<f64>::zeros((params.seq, params.dim));
    // Pair by pair rather than through `value`: with sin and cos of one angle side by side the
    // compiler calls sincos, which reduces the angle once (about 1.5x faster).
    Zip::indexed(table.rows_mut()).par_for_each(|row, mut out| {
        let position = (params.start + row as u64) as f64;
        for (i, &w) in values.freqs.iter().enumerate() {
            let (sin, cos) = (position * w).sin_cos();
            let (sin_col, cos_col) = match params.layout {
                SinusoidalLayout::Interleaved => (2 * i, 2 * i + 1),
                SinusoidalLayout::Split => (i, pairs + i),
            };
            out[sin_col] = sin;
            out[cos_col] = cos;
        }
    });
    Ok(table)
}

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
