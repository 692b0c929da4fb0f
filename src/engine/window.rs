//! Windows: the part of a table to compute, as strided ranges of heads, rows and columns.
//!
//! Every table is seen as `[heads, rows, cols]`: a 1-D table is one row, a 2-D table one head.
//! Views compute only what is on screen by asking for a window at screen resolution.

use std::fmt;

/// Indices `start, start + step, ...` below `end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Strided {
    pub start: usize,
    pub end: usize,
    pub step: usize,
}

impl Strided {
    /// Every index below `n`.
    pub fn all(n: usize) -> Self {
        Self {
            start: 0,
            end: n,
            step: 1,
        }
    }

    /// How many indices the range holds.
    pub fn len(&self) -> usize {
        if self.end <= self.start || self.step == 0 {
            0
        } else {
            (self.end - self.start).div_ceil(self.step)
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `k`-th index of the range.
    pub fn at(&self, k: usize) -> usize {
        self.start + k * self.step
    }

    /// The last index of the range (for a non-empty range).
    pub fn last(&self) -> usize {
        self.at(self.len() - 1)
    }

    /// The `k`-th through `k + count - 1`-th indices, as a range of their own.
    pub fn sub(&self, k: usize, count: usize) -> Self {
        Self {
            start: self.at(k),
            end: self.at(k) + (count - 1) * self.step + 1,
            step: self.step,
        }
    }
}

impl fmt::Display for Strided {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{} step {}", self.start, self.end, self.step)
    }
}

/// A window of a `[heads, rows, cols]` table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub heads: Strided,
    pub rows: Strided,
    pub cols: Strided,
}

impl Window {
    /// The whole of a table of `[heads, rows, cols]`.
    pub fn all(matrix_shape: [usize; 3]) -> Self {
        Self {
            heads: Strided::all(matrix_shape[0]),
            rows: Strided::all(matrix_shape[1]),
            cols: Strided::all(matrix_shape[2]),
        }
    }

    /// Row `row` of a one-head table `cols` wide, every column (a patch map: one query's row
    /// of a `[P, P]` table).
    pub fn one_row(row: usize, cols: usize) -> Self {
        Self {
            heads: Strided::all(1),
            rows: Strided {
                start: row,
                end: row + 1,
                step: 1,
            },
            cols: Strided::all(cols),
        }
    }

    /// Number of values in the window.
    pub fn len(&self) -> usize {
        self.heads.len() * self.rows.len() * self.cols.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Checks that the window lies inside a table of `[heads, rows, cols]` and is not empty.
    pub fn check(&self, matrix_shape: [usize; 3]) -> Result<(), WindowError> {
        let axes = [
            ("heads", self.heads, matrix_shape[0]),
            ("rows", self.rows, matrix_shape[1]),
            ("cols", self.cols, matrix_shape[2]),
        ];
        for (axis, range, size) in axes {
            if range.step == 0 || range.is_empty() || range.end > size {
                return Err(WindowError { axis, range, size });
            }
        }
        Ok(())
    }

    /// The shape of the computed window, with as many axes as the table has.
    pub fn output_shape(&self, ndim: usize) -> Vec<usize> {
        let full = [self.heads.len(), self.rows.len(), self.cols.len()];
        full[3 - ndim..].to_vec()
    }
}

/// A window that does not fit its table.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "window {axis} {range} does not fit a table with {size} {axis} (it must be non-empty, with a step of 1 or more)"
)]
pub struct WindowError {
    pub axis: &'static str,
    pub range: Strided,
    pub size: usize,
}
