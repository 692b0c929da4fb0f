//! Writing tables to files (`.npy`, `.csv`) and figures (`.svg`, `.png`, in [`figure`]), always
//! through a temporary file that is renamed into place only when complete, so no half-written
//! file is ever left behind.

mod atomic;
mod csv;
pub mod figure;
mod npy;

use std::io::Write;
use std::path::Path;

pub use atomic::{AtomicFile, check_writable, free_bytes, remove_temporary_files, space_problem};

use crate::engine::Table;

/// File formats a table can be written in, chosen by the output's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    Npy,
    Csv,
}

impl OutputFormat {
    /// The format named by `path`'s extension, if poslab writes it.
    pub fn from_path(path: &Path) -> Option<Self> {
        let extension = path.extension()?.to_str()?.to_ascii_lowercase();
        match extension.as_str() {
            "npy" => Some(Self::Npy),
            "csv" => Some(Self::Csv),
            _ => None,
        }
    }

    /// The fewest bytes a file of `values` values of `value_bytes` each takes: a `.npy` holds
    /// them in binary, a `.csv` takes at least a digit and a separator for each.
    pub fn least_bytes(self, values: u64, value_bytes: u64) -> u64 {
        match self {
            Self::Npy => values.saturating_mul(value_bytes),
            Self::Csv => values.saturating_mul(2),
        }
    }

    /// Whether a table with `ndim` axes can be written in this format.
    pub fn holds_ndim(self, ndim: usize) -> bool {
        match self {
            Self::Npy => true,
            Self::Csv => ndim <= 2,
        }
    }
}

pub use crate::engine::RealDtype;

/// Why a table could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("{}", io_text(.0))]
    Io(#[from] std::io::Error),
    #[error("a .csv file holds 1-D or 2-D tables; this one has shape {0:?}")]
    CsvNeeds2d(Vec<usize>),
}

/// An I/O error while writing, as a person reads it: the file size limit (`ulimit -f`), a
/// full disk and a quota said so, not as "File too large (os error 27)", and never naming
/// the temporary file, which is gone by the time the message is read.
pub fn io_text(error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::FileTooLarge => {
            "file size limit exceeded (ulimit -f): nothing was written".to_owned()
        }
        std::io::ErrorKind::StorageFull => {
            "no space left on the device: nothing was written".to_owned()
        }
        std::io::ErrorKind::QuotaExceeded => {
            "the disk quota is exceeded: nothing was written".to_owned()
        }
        _ => error.to_string(),
    }
}

/// Writes `table` in `format` to `writer`.
pub fn write_table(
    writer: &mut impl Write,
    table: &Table,
    format: OutputFormat,
    dtype: RealDtype,
) -> Result<(), ExportError> {
    match format {
        OutputFormat::Npy => npy::write(writer, table, dtype),
        OutputFormat::Csv => csv::write(writer, table, dtype),
    }
}

/// The `.npy` header of a table of `shape` written as `dtype` (index tables as `<i4`): what
/// precedes its values when they are written block by block ([`write_block`]).
pub fn npy_header(shape: &[usize], index: bool, dtype: RealDtype) -> Vec<u8> {
    let descr = match (index, dtype) {
        (true, _) => "<i4",
        (false, RealDtype::F32) => "<f4",
        (false, RealDtype::F64) => "<f8",
    };
    npy::header(shape, descr)
}

/// Writes one block of a table (consecutive values in C order) in `format`: raw values after
/// an [`npy_header`], or the block's lines of a `.csv` (whole rows, or values of a 1-D table).
pub fn write_block(
    writer: &mut impl Write,
    block: &Table,
    format: OutputFormat,
    dtype: RealDtype,
) -> Result<(), ExportError> {
    match format {
        OutputFormat::Npy => Ok(npy::write_values(writer, block, dtype)?),
        OutputFormat::Csv => csv::write(writer, block, dtype),
    }
}

/// Writes `table` to `path` atomically.
pub fn write_table_to_path(
    path: &Path,
    table: &Table,
    format: OutputFormat,
    dtype: RealDtype,
) -> Result<(), ExportError> {
    let mut file = AtomicFile::create(path)?;
    write_table(file.writer(), table, format, dtype)?;
    file.commit()?;
    Ok(())
}
