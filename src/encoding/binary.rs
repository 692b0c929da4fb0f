//! The binary position code: bit `j` of the position in column `j`, least significant first.
//! A baseline that shows why transformers prefer smooth encodings.

use ndarray::Array2;

use super::{DIM_RANGE, ParamError, SEQ_RANGE, check_count, check_start, fill_2d};

/// Parameters of the binary table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BinaryParams {
    pub seq: usize,
    /// Number of bits (columns); bits above 63 are 0.
    pub dim: usize,
    pub start: u64,
}

impl Default for BinaryParams {
    fn default() -> Self {
        Self {
            seq: 64,
            dim: 8,
            start: 0,
        }
    }
}

impl BinaryParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        check_count("seq", self.seq, SEQ_RANGE)?;
        check_count("dim", self.dim, DIM_RANGE)?;
        check_start(self.start, self.seq)
    }

    /// Bit `bit` of position `start + row`.
    pub fn value(&self, row: usize, bit: usize) -> f64 {
        let position = self.start + row as u64;
        if bit < u64::BITS as usize {
            ((position >> bit) & 1) as f64
        } else {
            0.0
        }
    }
}

/// The `[seq, dim]` table of 0.0 and 1.0.
pub fn table(params: &BinaryParams) -> Result<Array2<f64>, ParamError> {
    params.validate()?;
    Ok(fill_2d(params.seq, params.dim, |row, bit| {
        params.value(row, bit)
    }))
}
