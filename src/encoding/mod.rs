//! The math: one encoding family per module, each with its parameter struct, its validation
//! and its f64 reference table. No GPU and no UI live here.
//!
//! Parameter fields are named after the command-line options that set them (`seq`, `dim`,
//! `grid-h`, ...), so an error can name what the user typed.

pub mod alibi;
pub mod defaults {
    //! The parameters poslab starts from: the app's first launch and `poslab figure` without
    //! options.
    pub const SEQ: usize = 512;
    pub const DIM: usize = 128;
    pub const BASE: f64 = 10_000.0;
    pub const HEADS: usize = 8;
}
pub mod binary;
pub mod context;
pub mod exact_angle;
pub mod grid;
pub mod guesses;
pub mod learned;
pub mod pair_permutation;
pub mod pairs;
pub mod positions;
pub mod precision;
pub mod random;
pub mod relative;
pub mod resample;
pub mod rope;
pub mod rope2d;
pub mod rope_axes;
pub mod rope_scaling;
pub mod similarity2d;
pub mod sinusoidal;
pub mod skew;
pub mod torch_f32;

pub use pairs::PairLayout;

use std::fmt::Display;
use std::ops::RangeInclusive;

/// Longest sequence any table accepts; a `[seq, seq]` table is further limited by memory.
pub const SEQ_RANGE: RangeInclusive<usize> = 1..=1 << 30;
/// Widest embedding (or bit count) any table accepts.
pub const DIM_RANGE: RangeInclusive<usize> = 1..=1 << 20;
/// Attention heads for the ALiBi tables.
pub const HEADS_RANGE: RangeInclusive<usize> = 1..=1 << 16;
/// Patches along one side of a grid.
pub const GRID_SIDE_RANGE: RangeInclusive<usize> = 1..=1 << 16;
/// Positions stay below 2^53 so that every position is an exact f64.
pub const MAX_POSITION: u64 = (1 << 53) - 1;

/// A parameter outside what its encoding allows.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("--{} {value} is not allowed: {allowed}", .field.replace('_', "-"))]
pub struct ParamError {
    /// The parameter, spelled as its command-line option without dashes.
    pub field: &'static str,
    /// The value that was given, as text.
    pub value: String,
    /// What the parameter accepts.
    pub allowed: String,
}

impl ParamError {
    pub fn new(field: &'static str, value: impl Display, allowed: impl Into<String>) -> Self {
        Self {
            field,
            value: value.to_string(),
            allowed: allowed.into(),
        }
    }
}

/// Checks that a count lies in `range`.
pub fn check_count(
    field: &'static str,
    value: usize,
    range: RangeInclusive<usize>,
) -> Result<(), ParamError> {
    if range.contains(&value) {
        Ok(())
    } else {
        Err(ParamError::new(field, value, range_text(&range)))
    }
}

/// Checks that a dimension is even (it is made of pairs) and in range.
pub fn check_even_dim(field: &'static str, dim: usize) -> Result<(), ParamError> {
    let max = *DIM_RANGE.end();
    if dim >= 2 && dim <= max && dim.is_multiple_of(2) {
        Ok(())
    } else {
        Err(ParamError::new(
            field,
            dim,
            format!("must be even (pairs of sin/cos or rotated pairs), from 2 to {max}"),
        ))
    }
}

/// Checks that a dimension is a multiple of four (two axes of pairs) and in range.
pub fn check_dim_multiple_of_4(field: &'static str, dim: usize) -> Result<(), ParamError> {
    let max = *DIM_RANGE.end();
    if dim >= 4 && dim <= max && dim.is_multiple_of(4) {
        Ok(())
    } else {
        Err(ParamError::new(
            field,
            dim,
            format!("must be a multiple of 4 (two axes of pairs), from 4 to {max}"),
        ))
    }
}

/// Checks a frequency base such as RoPE's `base` or rope-vit's `theta`.
pub fn check_base(field: &'static str, base: f64) -> Result<(), ParamError> {
    if base.is_finite() && base > 1.0 {
        Ok(())
    } else {
        Err(ParamError::new(
            field,
            base,
            "must be a finite number greater than 1",
        ))
    }
}

/// Checks that positions `start .. start + seq` are all exact in f64.
pub fn check_start(start: u64, seq: usize) -> Result<(), ParamError> {
    let last = start.checked_add(seq as u64 - 1);
    match last {
        Some(last) if last <= MAX_POSITION => Ok(()),
        _ => Err(ParamError::new(
            "start",
            start,
            format!(
                "must be at least 0 with start + seq - 1 at most {MAX_POSITION} (2^53 - 1), \
                 so every position is exact"
            ),
        )),
    }
}

/// Fills a `[rows, cols]` table from `value(row, col)`, in parallel over rows.
pub fn fill_2d<T: Clone + Default + Send + Sync>(
    rows: usize,
    cols: usize,
    value: impl Fn(usize, usize) -> T + Sync,
) -> ndarray::Array2<T> {
    let mut table = ndarray::Array2::<T>::default((rows, cols));
    ndarray::Zip::indexed(table.rows_mut()).par_for_each(|row, mut out| {
        for (col, slot) in out.iter_mut().enumerate() {
            *slot = value(row, col);
        }
    });
    table
}

fn range_text(range: &RangeInclusive<usize>) -> String {
    format!("must be from {} to {}", range.start(), range.end())
}
