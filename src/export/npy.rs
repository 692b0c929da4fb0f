//! `.npy` output: NumPy format 1.0, little-endian, C order.

use std::io::Write;

use ndarray_npy::{WriteNpyError, WriteNpyExt};

use super::{ExportError, RealDtype};
use crate::engine::Table;

pub(super) fn write(
    writer: &mut impl Write,
    table: &Table,
    dtype: RealDtype,
) -> Result<(), ExportError> {
    let result = match (table, dtype) {
        (Table::Real(values), RealDtype::F64) => values.write_npy(writer),
        (Table::Real(values), RealDtype::F32) => values.mapv(|v| v as f32).write_npy(writer),
        (Table::Index(values), _) => values.write_npy(writer),
    };
    result.map_err(|e| match e {
        WriteNpyError::Io(io) => ExportError::Io(io),
        other => ExportError::Io(std::io::Error::other(other.to_string())),
    })
}
