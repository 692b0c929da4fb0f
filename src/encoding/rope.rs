//! Rotary position embedding (RoPE, Su et al. 2021): inverse frequencies, angles, and the
//! rotation applied to a `[seq, dim]` array in either pairing convention.

use super::PairLayout;
use super::exact_angle::{self, DoubleF64};
use ndarray::{Array1, Array2, ArrayView2, Zip};

use super::{ParamError, check_base, check_count, check_even_dim, check_start};

/// Which cache a `rope-cos` / `rope-sin` / `rope-cos-sin` table is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CachePart {
    Cos,
    Sin,
    /// Both, the cosine of each angle before its sine: vLLM's `cos_sin_cache` (`[seq, R]`,
    /// the `R/2` cosines then the `R/2` sines: the half layout) or (cos, sin) pairs
    /// (`[seq, R/2, 2]`: the interleaved layout, as torchtune's cache and Meta's
    /// `view_as_real(freqs_cis)` store them).
    CosSin,
    /// Both caches whole, side by side, each in the half layout: `[cos | sin]`, `[seq, 2R]`
    /// (torchtune's Qwen2 cache, `cat([emb.cos(), emb.sin()], -1)` with
    /// `emb = cat([angles, angles], -1)`).
    CosSinHalves,
}

impl CachePart {
    /// Whether a table of this part in `layout` has three axes (`[seq, R/2, 2]` pairs).
    pub fn is_pairs(self, layout: PairLayout) -> bool {
        self == CachePart::CosSin && layout == PairLayout::Interleaved
    }
}

/// Where element `(head, row, col)` of a cos, sin or cos-sin cache of `rotary` dimensions
/// stands: its row (its position's index), its frequency, and whether it holds the sine.
/// Pairs (`[seq, R/2, 2]`) put the row on the first axis and the pair on the second.
pub fn cache_element(
    layout: PairLayout,
    part: CachePart,
    rotary: usize,
    (head, row, col): (usize, usize, usize),
) -> (usize, usize, bool) {
    match part {
        CachePart::Cos => (row, cache_pair(layout, col, rotary), false),
        CachePart::Sin => (row, cache_pair(layout, col, rotary), true),
        CachePart::CosSin if part.is_pairs(layout) => (head, row, col == 1),
        CachePart::CosSin => (row, col % (rotary / 2), col >= rotary / 2),
        CachePart::CosSinHalves => (row, col % (rotary / 2), col >= rotary),
    }
}

/// The frequency index that column `col` of a `[seq, R]` cos/sin cache holds: HF and GPT-NeoX
/// store `cat(freqs, freqs)` (`half`), GPT-J and Meta's expanded complex form repeat each
/// frequency twice in a row (`interleaved`).
pub fn cache_pair(layout: PairLayout, col: usize, rotary: usize) -> usize {
    layout.pair_of_column(col, rotary)
}

/// Row `row` and column `col` of `input` (`[seq, dim]`) after rotating its first `rotary`
/// dimensions in `layout`'s pairs, the rest passed through; `rotate(a, b, i)` rotates the pair
/// of frequency `i`.
pub fn rotated_element(
    input: ArrayView2<f64>,
    layout: PairLayout,
    rotary: usize,
    row: usize,
    col: usize,
    rotate: impl Fn(f64, f64, usize) -> (f64, f64),
) -> f64 {
    if col >= rotary {
        return input[[row, col]];
    }
    let i = layout.pair_of_column(col, rotary);
    let (a, b) = layout.pair(i, rotary);
    let (first, second) = rotate(input[[row, a]], input[[row, b]], i);
    if col == a { first } else { second }
}

/// Parameters of the RoPE frequency tables.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RopeParams {
    /// Number of positions.
    pub seq: usize,
    /// Head dimension, even.
    pub dim: usize,
    /// 10000 in RoFormer and Llama 2, 500000 in Llama 3.
    pub base: f64,
    /// First position.
    pub start: u64,
}

impl Default for RopeParams {
    fn default() -> Self {
        Self {
            seq: 128,
            dim: 128,
            base: 10_000.0,
            start: 0,
        }
    }
}

impl RopeParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        check_count("seq", self.seq, super::SEQ_RANGE)?;
        check_even_dim("dim", self.dim)?;
        check_base("base", self.base)?;
        check_start(self.start, self.seq)
    }
}

/// `theta_i = 1 / base^(2i/dim)` for `i < dim/2`, as Hugging Face
/// `_compute_default_rope_parameters` and Llama's `precompute_freqs_cis` write it.
pub fn inv_freq(dim: usize, base: f64) -> Result<Array1<f64>, ParamError> {
    check_even_dim("dim", dim)?;
    check_base("base", base)?;
    Ok(Array1::from_shape_fn(dim / 2, |i| {
        1.0 / base.powf((2 * i) as f64 / dim as f64)
    }))
}

/// [`inv_freq`] to about 104 bits (for a valid `dim` and `base`): exact angles at any position.
pub fn exact_inv_freq(dim: usize, base: f64) -> Vec<DoubleF64> {
    let ln_base = DoubleF64::ln(base);
    (0..dim / 2)
        .map(|i| DoubleF64::power(ln_base, -2 * i as i64, dim as u64))
        .collect()
}

/// The `[seq, dim/2]` angles `p * theta_i` for positions `start .. start + seq`.
pub fn angles(params: &RopeParams) -> Result<Array2<f64>, ParamError> {
    params.validate()?;
    let theta = exact_inv_freq(params.dim, params.base);
    let mut angles = Array2::<f64>::zeros((params.seq, params.dim / 2));
    Zip::indexed(angles.rows_mut()).par_for_each(|row, mut out| {
        let position = params.start + row as u64;
        out.iter_mut()
            .zip(&theta)
            .for_each(|(angle, &t)| *angle = exact_angle::angle(position, t));
    });
    Ok(angles)
}

/// Rotates row `r` of `input` (`[seq, dim]`) by position `start + r`.
///
/// Each pair `(a, b)` of `layout` becomes `(a cos - b sin, a sin + b cos)` with angle
/// `p * theta_i`: the complex product of Llama, and `x cos + rotate_half(x) sin` of Hugging Face.
pub fn apply(
    input: ArrayView2<f64>,
    layout: PairLayout,
    base: f64,
    start: u64,
) -> Result<Array2<f64>, ParamError> {
    let (seq, dim) = input.dim();
    let params = RopeParams {
        seq,
        dim,
        base,
        start,
    };
    params.validate()?;
    let turns = exact_angle::turns_of(exact_inv_freq(dim, base));
    let mut output = Array2::<f64>::zeros((seq, dim));
    Zip::indexed(output.rows_mut())
        .and(input.rows())
        .par_for_each(|row, mut out, x| {
            let position = start + row as u64;
            for (i, t) in turns.iter().enumerate() {
                let (a, b) = layout.pair(i, dim);
                let (sin, cos) = exact_angle::sin_cos(t.at(position));
                (out[a], out[b]) = rotate_by(x[a], x[b], sin, cos);
            }
        });
    Ok(output)
}

/// `(a cos - b sin, a sin + b cos)`: the pair `(a, b)` rotated by `angle`.
pub fn rotate_pair(a: f64, b: f64, angle: f64) -> (f64, f64) {
    let (sin, cos) = angle.sin_cos();
    rotate_by(a, b, sin, cos)
}

/// The pair `(a, b)` rotated by the angle whose sine and cosine are given.
pub fn rotate_by(a: f64, b: f64, sin: f64, cos: f64) -> (f64, f64) {
    (a * cos - b * sin, a * sin + b * cos)
}

/// Checks the shape of an array handed to [`apply`].
pub fn check_apply_shape(shape: &[usize]) -> Result<(), ParamError> {
    let shape_text = format!("{shape:?}");
    match shape {
        [seq, dim] => {
            check_count("seq", *seq, super::SEQ_RANGE)
                .map_err(|e| ParamError::new("input", &shape_text, e.allowed))?;
            check_even_dim("dim", *dim).map_err(|e| {
                ParamError::new("input", &shape_text, format!("its last axis {}", e.allowed))
            })
        }
        _ => Err(ParamError::new(
            "input",
            shape_text,
            "must be a 2-D array [seq, dim] with dim even",
        )),
    }
}

/// RoFormer's long-term decay bound on `|q_m · k_n|` against the relative distance `r`:
/// `(1/(d/2)) Σ_j |S_j|` with `S_j = Σ_{k<j} exp(i r θ_k)` (Su et al. 2021, section 3.4.3),
/// for each distance in `distances`.
pub fn long_term_decay(dim: usize, base: f64, distances: &[f64]) -> Result<Vec<f64>, ParamError> {
    let theta = inv_freq(dim, base)?;
    Ok(long_term_decay_of(
        theta.as_slice().unwrap_or(&[]),
        distances,
    ))
}

/// [`long_term_decay`] for any frequencies `theta` (a scaled RoPE's), in their order.
pub fn long_term_decay_of(theta: &[f64], distances: &[f64]) -> Vec<f64> {
    let pairs = theta.len().max(1);
    distances
        .iter()
        .map(|&r| {
            let (mut re, mut im, mut total) = (0.0f64, 0.0f64, 0.0f64);
            for &t in theta {
                let (s, c) = (r * t).sin_cos();
                re += c;
                im += s;
                total += re.hypot(im);
            }
            total / pairs as f64
        })
        .collect()
}

/// One frequency pair's part of a RoPE attention score `q_m · k_n`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairScore {
    /// The query's pair rotated to position `m`.
    pub query: (f64, f64),
    /// The key's pair rotated to position `n`.
    pub key: (f64, f64),
    /// Their dot product: this pair's term of the score.
    pub score: f64,
}

/// The score `q_m · k_n` term by term: every pair of `query` rotated by `m θ_i` and of `key` by
/// `n θ_i`, then multiplied. Evaluated from the two absolute positions, not from `m - n`, so
/// that the relative-position property is something to observe, not something assumed.
pub fn pair_scores(
    query: &[f64],
    key: &[f64],
    layout: PairLayout,
    base: f64,
    query_position: u64,
    key_position: u64,
) -> Result<Vec<PairScore>, ParamError> {
    let dim = query.len();
    if key.len() != dim {
        return Err(ParamError::new(
            "key",
            format!("of length {}", key.len()),
            format!("must have the query's length {dim}"),
        ));
    }
    let theta = inv_freq(dim, base)?;
    let (m, n) = (query_position as f64, key_position as f64);
    Ok(theta
        .iter()
        .enumerate()
        .map(|(i, &t)| {
            let (a, b) = layout.pair(i, dim);
            let q = rotate_pair(query[a], query[b], m * t);
            let k = rotate_pair(key[a], key[b], n * t);
            PairScore {
                query: q,
                key: k,
                score: q.0 * k.0 + q.1 * k.1,
            }
        })
        .collect())
}
