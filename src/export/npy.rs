//! `.npy` output: NumPy format 1.0, little-endian, C order.

use std::io::Write;

use super::{ExportError, RealDtype};
use crate::engine::Table;

/// Bytes written at a time.
const PIECE: usize = 1 << 16;

pub(super) fn write(
    writer: &mut impl Write,
    table: &Table,
    dtype: RealDtype,
) -> Result<(), ExportError> {
    // The header the streamed writer uses too, so that a table saved whole and the same
    // table written block by block are the same bytes.
    let descr = match (table, dtype) {
        (Table::Index(_), _) => "<i4",
        (Table::Real(_), RealDtype::F32) => "<f4",
        (Table::Real(_), RealDtype::F64) => "<f8",
    };
    writer.write_all(&header(table.shape(), descr))?;
    // In pieces, so that a large table is not held twice.
    let mut piece = Vec::with_capacity(PIECE);
    let mut put = |value: &[u8]| -> std::io::Result<()> {
        piece.extend_from_slice(value);
        if piece.len() >= PIECE {
            writer.write_all(&piece)?;
            piece.clear();
        }
        Ok(())
    };
    match (table, dtype) {
        (Table::Real(values), RealDtype::F64) => {
            values.iter().try_for_each(|v| put(&v.to_le_bytes()))?
        }
        (Table::Real(values), RealDtype::F32) => values
            .iter()
            .try_for_each(|v| put(&(*v as f32).to_le_bytes()))?,
        (Table::Index(values), _) => values.iter().try_for_each(|v| put(&v.to_le_bytes()))?,
    }
    writer.write_all(&piece)?;
    Ok(())
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
