//! Reading a table someone else computed, to check it: `.npy` (floats or integers), `.csv`
//! (numbers, infinities allowed, an optional header line) and `.safetensors` (one tensor of
//! F64, F32, F16, BF16, I32 or I64). Every size is checked against the file before anything is
//! allocated from it, so hostile files get a message, not a crash.

use std::path::Path;

use ndarray::{ArrayD, IxDyn};

use super::{ImportError, Values, parse_npy, problem, read_bytes};

/// The file formats a table can be read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFormat {
    Npy,
    Csv,
    Safetensors,
}

impl TableFormat {
    pub fn from_path(path: &Path) -> Option<Self> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "npy" => Some(Self::Npy),
            "csv" => Some(Self::Csv),
            "safetensors" => Some(Self::Safetensors),
            _ => None,
        }
    }
}

/// A tensor of a `.safetensors` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorInfo {
    pub name: String,
    pub dtype: String,
    pub shape: Vec<usize>,
}

/// Reads a table from `path` (its format from the extension); `tensor` names the tensor of a
/// `.safetensors` file holding several.
pub fn read_table(
    path: &Path,
    tensor: Option<&str>,
    max_bytes: u64,
) -> Result<ArrayD<f64>, ImportError> {
    read_table_typed(path, tensor, max_bytes).map(|(table, _)| table)
}

/// [`read_table`], with the float type the file stores (`None` for a `.csv`, whose text says
/// nothing of it, and for integers).
pub fn read_table_typed(
    path: &Path,
    tensor: Option<&str>,
    max_bytes: u64,
) -> Result<(ArrayD<f64>, Option<crate::import::StoredFloat>), ImportError> {
    let format = TableFormat::from_path(path).ok_or_else(|| {
        problem(
            path,
            "is not a table poslab reads: use a .npy, .csv or .safetensors file",
        )
    })?;
    let bytes = read_bytes(path, max_bytes)?;
    let table = parse_table(&bytes, format, tensor).map_err(|p| problem(path, p))?;
    let stored = match format {
        TableFormat::Npy => crate::import::npy_float_type(&bytes),
        TableFormat::Csv => None,
        TableFormat::Safetensors => safetensors_float_type(&bytes, tensor),
    };
    Ok((table, stored))
}

/// The float type of the tensor a `.safetensors` file's table comes from.
fn safetensors_float_type(
    bytes: &[u8],
    tensor: Option<&str>,
) -> Option<crate::import::StoredFloat> {
    use crate::import::StoredFloat;
    let tensors = safetensors_tensors(bytes).ok()?;
    let info = match tensor {
        Some(name) => tensors.iter().find(|t| t.name == name)?,
        None => tensors.first()?,
    };
    match info.dtype.as_str() {
        "F64" => Some(StoredFloat::F64),
        "F32" => Some(StoredFloat::F32),
        "F16" => Some(StoredFloat::F16),
        "BF16" => Some(StoredFloat::Bf16),
        _ => None,
    }
}

/// The tensors of a `.safetensors` file.
pub fn list_tensors(path: &Path, max_bytes: u64) -> Result<Vec<TensorInfo>, ImportError> {
    let bytes = read_bytes(path, max_bytes)?;
    safetensors_tensors(&bytes).map_err(|p| problem(path, p))
}

/// Parses a table's bytes.
pub fn parse_table(
    bytes: &[u8],
    format: TableFormat,
    tensor: Option<&str>,
) -> Result<ArrayD<f64>, String> {
    if tensor.is_some() && format != TableFormat::Safetensors {
        return Err("holds one table; --tensor is for .safetensors files".to_owned());
    }
    match format {
        TableFormat::Npy => parse_npy(bytes, Values::Tables),
        TableFormat::Csv => parse_csv(bytes),
        TableFormat::Safetensors => parse_safetensors(bytes, tensor),
    }
}

/// A `.csv` of numbers, one row a line; a first line of which no field is a number is a
/// header. A UTF-8 byte-order mark (as spreadsheet programs write) is skipped.
pub fn parse_csv(bytes: &[u8]) -> Result<ArrayD<f64>, String> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| format!("is not text (invalid UTF-8 at byte {})", e.valid_up_to()))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut values = Vec::new();
    let mut width: Option<(usize, usize)> = None;
    let mut rows = 0usize;
    for (index, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        let parsed: Result<Vec<f64>, usize> = fields
            .iter()
            .enumerate()
            .map(|(col, field)| field.parse::<f64>().map_err(|_| col))
            .collect();
        let parsed = match parsed {
            Ok(row) => row,
            // A header names columns: a line with a number among its fields is data, and a
            // field that fails to parse there is an error, not a header.
            Err(_) if index == 0 && fields.iter().all(|field| field.parse::<f64>().is_err()) => {
                continue;
            }
            Err(col) => {
                return Err(format!(
                    "line {}, column {}: '{}' is not a number",
                    index + 1,
                    col + 1,
                    fields[col]
                ));
            }
        };
        if let Some(col) = parsed.iter().position(|v| v.is_nan()) {
            return Err(format!(
                "line {}, column {}: NaN; values must be numbers (infinities are allowed)",
                index + 1,
                col + 1
            ));
        }
        match width {
            None => width = Some((parsed.len(), index + 1)),
            Some((expected, first_line)) if expected != parsed.len() => {
                return Err(format!(
                    "line {} has {} values, line {first_line} has {expected}",
                    index + 1,
                    parsed.len()
                ));
            }
            Some(_) => {}
        }
        values.extend(parsed);
        rows += 1;
    }
    let Some((cols, _)) = width else {
        return Err("holds no numbers".to_owned());
    };
    ArrayD::from_shape_vec(IxDyn(&[rows, cols]), values).map_err(|e| e.to_string())
}

pub(crate) fn safetensors_tensors(bytes: &[u8]) -> Result<Vec<TensorInfo>, String> {
    let tensors = safetensors::SafeTensors::deserialize(bytes)
        .map_err(|e| format!("is not a valid .safetensors file ({e})"))?;
    let mut list: Vec<TensorInfo> = tensors
        .tensors()
        .into_iter()
        .map(|(name, view)| TensorInfo {
            name,
            dtype: format!("{:?}", view.dtype()),
            shape: view.shape().to_vec(),
        })
        .collect();
    list.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(list)
}

fn parse_safetensors(bytes: &[u8], tensor: Option<&str>) -> Result<ArrayD<f64>, String> {
    use safetensors::Dtype;
    let tensors = safetensors::SafeTensors::deserialize(bytes)
        .map_err(|e| format!("is not a valid .safetensors file ({e})"))?;
    let mut names: Vec<String> = tensors.names().into_iter().map(str::to_owned).collect();
    names.sort();
    let name = match (tensor, names.as_slice()) {
        (Some(name), _) => name.to_owned(),
        (None, [only]) => only.clone(),
        (None, []) => return Err("holds no tensors".to_owned()),
        (None, many) => {
            return Err(format!(
                "holds {} tensors ({}); choose one with --tensor",
                many.len(),
                super::name_list(many)
            ));
        }
    };
    let view = tensors.tensor(&name).map_err(|_| {
        format!(
            "has no tensor '{}'; it holds {}",
            super::name_list(&[name.as_str()]),
            if names.is_empty() {
                "none".to_owned()
            } else {
                super::name_list(&names)
            }
        )
    })?;
    let data = view.data();
    let values: Vec<f64> = match view.dtype() {
        Dtype::F64 => data
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
            .collect(),
        Dtype::F32 => data
            .chunks_exact(4)
            .map(|c| f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])))
            .collect(),
        Dtype::F16 => data
            .chunks_exact(2)
            .map(|c| half::f16::from_le_bytes([c[0], c[1]]).to_f64())
            .collect(),
        Dtype::BF16 => data
            .chunks_exact(2)
            .map(|c| half::bf16::from_le_bytes([c[0], c[1]]).to_f64())
            .collect(),
        Dtype::I32 => data
            .chunks_exact(4)
            .map(|c| f64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])))
            .collect(),
        Dtype::I64 => data
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]) as f64)
            .collect(),
        other => {
            return Err(format!(
                "tensor '{name}' holds {other:?} values; poslab reads F64, F32, F16, BF16, I32 and I64"
            ));
        }
    };
    if let Some(flat) = values.iter().position(|v| v.is_nan()) {
        return Err(format!(
            "tensor '{name}' holds NaN at flat index {flat}; values must be numbers"
        ));
    }
    ArrayD::from_shape_vec(IxDyn(view.shape()), values).map_err(|e| format!("tensor '{name}': {e}"))
}
