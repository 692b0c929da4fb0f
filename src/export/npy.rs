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

/// The NumPy 1.0 header of a C-order array of `shape` and type `descr` (`<f4`, `<f8`, `<i4`):
/// what precedes the values when a table is streamed block by block.
pub fn header(shape: &[usize], descr: &str) -> Vec<u8> {
    let shape_text = match shape {
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape_text}, }}");
    // Magic (6), version (2), length (2), the dictionary, spaces, a newline: a multiple of 64.
    let unpadded = 10 + dict.len() + 1;
    let padding = unpadded.next_multiple_of(64) - unpadded;
    let length = (dict.len() + padding + 1) as u16;
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&length.to_le_bytes());
    bytes.extend_from_slice(dict.as_bytes());
    bytes.extend(std::iter::repeat_n(b' ', padding));
    bytes.push(b'\n');
    bytes
}

/// The values of a block of a table, little-endian in C order, as `dtype` (index tables as
/// `<i4`).
pub fn write_values(
    writer: &mut impl Write,
    table: &Table,
    dtype: RealDtype,
) -> std::io::Result<()> {
    // Reused from block to block: a fresh buffer would fault in its pages each time.
    thread_local! {
        static BYTES: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    BYTES.with_borrow_mut(|bytes| {
        bytes.clear();
        encode(bytes, table, dtype);
        writer.write_all(bytes)
    })
}

fn encode(bytes: &mut Vec<u8>, table: &Table, dtype: RealDtype) {
    match (table, dtype) {
        (Table::Real(values), RealDtype::F64) => values
            .iter()
            .for_each(|v| bytes.extend_from_slice(&v.to_le_bytes())),
        (Table::Real(values), RealDtype::F32) => values
            .iter()
            .for_each(|&v| bytes.extend_from_slice(&(v as f32).to_le_bytes())),
        (Table::Index(values), _) => values
            .iter()
            .for_each(|v| bytes.extend_from_slice(&v.to_le_bytes())),
    }
}
