//! The bridge between RoPE's two pair layouts. Interleaved RoPE rotates dims `(2i, 2i+1)` of
//! each head, half RoPE (`rotate_half`) dims `(i, i + d/2)`. Reordering the rows of `q_proj`
//! and `k_proj` within each head, so that row `2i` moves to `i` and row `2i+1` to `i + d/2`,
//! makes a model written for one layout compute the same scores under the other: conversion
//! scripts (Meta's weights to Hugging Face's, Hugging Face's to llama.cpp's) do exactly this.
//! Here: the row order, the rotation of one head's vector, and the score `q·k` under RoPE.

use super::PairLayout;
use super::rope::{exact_inv_freq, rotate_by};

/// Which way a projection's rows are reordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Direction {
    /// Rows of interleaved pairs become rows of half pairs: Meta's weights to Hugging Face's
    /// (transformers' convert_llama_weights_to_hf `permute`), a GGUF's to Hugging Face's
    /// (transformers' GGUF loader's reverse permute).
    #[default]
    InterleavedToHalf,
    /// Rows of half pairs become rows of interleaved pairs: Hugging Face's weights to
    /// llama.cpp's (convert_hf_to_gguf's `permute`).
    HalfToInterleaved,
}

impl Direction {
    /// As the command line and Python spell it.
    pub fn name(self) -> &'static str {
        match self {
            Direction::InterleavedToHalf => "interleaved-to-half",
            Direction::HalfToInterleaved => "half-to-interleaved",
        }
    }

    /// The direction named `name`, as [`Direction::name`] writes it.
    pub fn from_name(name: &str) -> Option<Self> {
        [Direction::InterleavedToHalf, Direction::HalfToInterleaved]
            .into_iter()
            .find(|d| d.name() == name)
    }

    pub fn reversed(self) -> Self {
        match self {
            Direction::InterleavedToHalf => Direction::HalfToInterleaved,
            Direction::HalfToInterleaved => Direction::InterleavedToHalf,
        }
    }

    /// The layout the original rows are written for.
    pub fn from_layout(self) -> PairLayout {
        match self {
            Direction::InterleavedToHalf => PairLayout::Interleaved,
            Direction::HalfToInterleaved => PairLayout::Half,
        }
    }

    /// The layout the permuted rows are written for.
    pub fn to_layout(self) -> PairLayout {
        self.reversed().from_layout()
    }
}

/// What a permuted projection should be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Question {
    /// The model's query heads.
    pub query_heads: usize,
    /// The key/value heads, when the projection is a key's (grouped-query attention).
    pub kv_heads: Option<usize>,
    /// Each head's rows, when stated (otherwise the rows divided by the heads).
    pub head_dim: Option<usize>,
    pub direction: Direction,
}

impl Question {
    /// The projection's own head count.
    pub fn heads(&self) -> usize {
        self.kv_heads.unwrap_or(self.query_heads)
    }

    /// Each head's rows for a projection of `rows` rows, or why the rows do not split so.
    pub fn head_dim_of(&self, rows: usize) -> Result<usize, String> {
        let heads = self.heads();
        let whose = if self.kv_heads.is_some() {
            "--kv-heads"
        } else {
            "--heads"
        };
        if rows == 0 {
            return Err("has no rows: there is nothing to permute".to_owned());
        }
        if heads == 0 || !rows.is_multiple_of(heads) {
            return Err(format!(
                "has {rows} rows, which {whose} {heads} does not divide into heads"
            ));
        }
        let dim = rows / heads;
        if let Some(stated) = self.head_dim
            && stated != dim
        {
            return Err(format!(
                "has {rows} rows: {heads} heads of --head-dim {stated} would be {} rows",
                heads as u128 * stated as u128
            ));
        }
        if !dim.is_multiple_of(2) {
            return Err(format!(
                "has {rows} rows, {heads} heads of {dim}: a head's rows pair up, so its dim must be even"
            ));
        }
        Ok(dim)
    }
}

/// Within one group of `size` rows (even), the row of the original that row `row` of the
/// permuted group holds.
pub fn source_in_group(row: usize, size: usize, direction: Direction) -> usize {
    let half = size / 2;
    match direction {
        // Half row t*half + j holds interleaved row 2j + t.
        Direction::InterleavedToHalf => 2 * (row % half) + row / half,
        // Interleaved row 2j + t holds half row t*half + j.
        Direction::HalfToInterleaved => (row % 2) * half + row / 2,
    }
}

/// For each row of a matrix of `rows` rows permuted as `groups` equal groups (heads), the row
/// of the original it holds; `None` when the rows do not split into groups of an even size.
pub fn source_rows(rows: usize, groups: usize, direction: Direction) -> Option<Vec<usize>> {
    if groups == 0 || !rows.is_multiple_of(groups) || !(rows / groups).is_multiple_of(2) {
        return None;
    }
    let size = rows / groups;
    Some(
        (0..rows)
            .map(|r| (r / size) * size + source_in_group(r % size, size, direction))
            .collect(),
    )
}

/// The row order of a projection permuted between the layouts, as a table (`poslab table
/// rope-permutation`): `[heads * head_dim]` indices, entry `r` the original row that row `r` of
/// the permuted projection holds, so that `w[table]` permutes `w` (NumPy, PyTorch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PermutationParams {
    pub heads: usize,
    pub head_dim: usize,
    pub direction: Direction,
}

impl PermutationParams {
    pub fn validate(&self) -> Result<(), super::ParamError> {
        super::check_count("heads", self.heads, super::HEADS_RANGE)?;
        super::check_even_dim("head_dim", self.head_dim)?;
        let rows = self.heads as u128 * self.head_dim as u128;
        if rows > i32::MAX as u128 {
            return Err(super::ParamError::new(
                "head_dim",
                self.head_dim,
                format!(
                    "{} heads of it are {rows} rows, more than int32 indices hold (2147483647)",
                    self.heads
                ),
            ));
        }
        Ok(())
    }

    pub fn rows(&self) -> usize {
        self.heads * self.head_dim
    }

    /// The original row that row `row` of the permuted projection holds.
    pub fn source(&self, row: usize) -> usize {
        let d = self.head_dim;
        (row / d) * d + source_in_group(row % d, d, self.direction)
    }
}

/// One head's vector rotated by RoPE at `position` with pairs of `layout` and
/// `theta_i = base^(-2i/d)`, the angles exact at any position.
pub fn rotate(vector: &[f64], layout: PairLayout, base: f64, position: u64) -> Vec<f64> {
    let dim = vector.len();
    let mut out = vector.to_vec();
    let turns = super::exact_angle::turns_of(exact_inv_freq(dim, base));
    for (i, t) in turns.iter().enumerate() {
        let (a, b) = layout.pair(i, dim);
        let (sin, cos) = super::exact_angle::sin_cos(t.at(position));
        (out[a], out[b]) = rotate_by(vector[a], vector[b], sin, cos);
    }
    out
}

/// The attention score `RoPE(q, m) · RoPE(k, n)` of one head.
pub fn score(q: &[f64], k: &[f64], layout: PairLayout, base: f64, m: u64, n: u64) -> f64 {
    rotate(q, layout, base, m)
        .iter()
        .zip(rotate(k, layout, base, n))
        .map(|(a, b)| a * b)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// transformers' convert_llama_weights_to_hf: `w.view(n_heads, d // 2, 2, cols)
    /// .transpose(1, 2)`: permuted row (h, t, j) is original row (h, j, t).
    #[test]
    fn interleaved_to_half_is_the_view_and_transpose_of_the_conversion_script() {
        let (heads, d) = (3, 8);
        let rows = source_rows(heads * d, heads, Direction::InterleavedToHalf).unwrap();
        for h in 0..heads {
            for t in 0..2 {
                for j in 0..d / 2 {
                    assert_eq!(rows[h * d + t * d / 2 + j], h * d + j * 2 + t);
                }
            }
        }
        // llama.cpp's permute: reshape(n_head, 2, d // 2, cols).swapaxes(1, 2).
        let back = source_rows(heads * d, heads, Direction::HalfToInterleaved).unwrap();
        for h in 0..heads {
            for j in 0..d / 2 {
                for t in 0..2 {
                    assert_eq!(back[h * d + j * 2 + t], h * d + t * d / 2 + j);
                }
            }
        }
        // Each undoes the other.
        for (r, &s) in rows.iter().enumerate() {
            assert_eq!(back[s], r);
        }
        assert!(source_rows(24, 5, Direction::InterleavedToHalf).is_none());
        assert!(source_rows(6, 2, Direction::InterleavedToHalf).is_none());
    }

    /// The scores are equal both ways, and differ when the rows are not permuted.
    #[test]
    fn permuted_rows_under_the_other_layout_give_the_same_scores() {
        let mut random = crate::encoding::random::SplitMix64::new(5);
        let d = 16;
        let q: Vec<f64> = (0..d).map(|_| random.next_unit() - 0.5).collect();
        let k: Vec<f64> = (0..d).map(|_| random.next_unit() - 0.5).collect();
        let rows = source_rows(d, 1, Direction::InterleavedToHalf).unwrap();
        let (q2, k2): (Vec<f64>, Vec<f64>) = rows.iter().map(|&s| (q[s], k[s])).unzip();
        for (m, n) in [(0, 0), (7, 3), (100_000, 99_000), (131_071, 5)] {
            let a = score(&q, &k, PairLayout::Interleaved, 10_000.0, m, n);
            let b = score(&q2, &k2, PairLayout::Half, 10_000.0, m, n);
            assert!((a - b).abs() < 1e-12, "{m} {n}: {a} {b}");
        }
        let a = score(&q, &k, PairLayout::Interleaved, 10_000.0, 9, 2);
        let wrong = score(&q, &k, PairLayout::Half, 10_000.0, 9, 2);
        assert!((a - wrong).abs() > 1e-3);
    }
}
