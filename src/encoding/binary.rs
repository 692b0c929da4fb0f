//! The binary position code: bit `j` of the position in column `j`, least significant first.
//! A baseline that shows why transformers prefer smooth encodings.

use ndarray::{Array2, Zip};

use super::{DIM_RANGE, ParamError, SEQ_RANGE, check_count, check_start};

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
}

/// The `[seq, dim]` table of 0.0 and 1.0.
pub fn table(params: &BinaryParams) -> Result<Array2<f64>, ParamError> {
    params.validate()?;
    let mut table = Array2::<f64>::zeros((params.seq, params.dim));
    Zip::indexed(table.rows_mut()).par_for_each(|row, mut out| {
        let position = params.start + row as u64;
        for (bit, value) in out.iter_mut().enumerate().take(u64::BITS as usize) {
            *value = ((position >> bit) & 1) as f64;
        }
    });
    Ok(table)
}
