//! Reading a table someone else computed, to check it: `.npy` (floats or integers), `.csv`
//! (numbers, infinities allowed, an optional header line) and `.safetensors` (one tensor of
//! F64, F32, F16, BF16, I32 or I64). Every size is checked against the file before anything is
//! allocated from it, so hostile files get a message, not a crash.

use std::io::{BufRead, Cursor, Read};
use std::path::{Path, PathBuf};

use ndarray::{ArrayD, IxDyn};

use super::stream::{Element, StoredTable, read_values};
use super::{
    ImportError, Selection, StoredFloat, Values, name_list, npy_table, open_file, parse_npy,
    problem,
};

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
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TensorInfo {
    pub name: String,
    pub dtype: String,
    pub shape: Vec<usize>,
}

/// A table file opened for reading: its header read and checked against the file, its
/// values not yet read (those of a `.csv`, whose text must be read to know its shape, are).
#[derive(Debug)]
pub struct OpenedTable {
    path: PathBuf,
    /// The table's shape in the file.
    pub shape: Vec<usize>,
    /// The float type the file stores (`None` for a `.csv`, whose text says nothing of it,
    /// and for integers).
    pub stored: Option<StoredFloat>,
    source: Source,
}

#[derive(Debug)]
enum Source {
    File {
        reader: super::FileReader,
        table: StoredTable,
    },
    Parsed(ArrayD<f64>),
}

impl OpenedTable {
    /// Opens the table of `path` (its format from the extension); `tensor` names the tensor
    /// of a `.safetensors` file holding several. A `.csv` is read here, its values held to
    /// `max_bytes`.
    pub fn open(path: &Path, tensor: Option<&str>, max_bytes: u64) -> Result<Self, ImportError> {
        let format = TableFormat::from_path(path).ok_or_else(|| {
            problem(
                path,
                "is not a table poslab reads: use a .npy, .csv or .safetensors file",
            )
        })?;
        if tensor.is_some() && format != TableFormat::Safetensors {
            return Err(problem(
                path,
                "holds one table; --tensor is for .safetensors files",
            ));
        }
        let (mut reader, size) = open_file(path)?;
        let table = match format {
            TableFormat::Npy => npy_table(&mut reader, size, Values::Tables),
            TableFormat::Safetensors => {
                safetensors_header(&mut reader, size).and_then(|h| h.table(tensor))
            }
            TableFormat::Csv => {
                let values = read_csv(&mut reader, max_bytes).map_err(|p| problem(path, p))?;
                return Ok(Self {
                    path: path.to_owned(),
                    shape: values.shape().to_vec(),
                    stored: None,
                    source: Source::Parsed(values),
                });
            }
        }
        .map_err(|p| problem(path, p))?;
        Ok(Self {
            path: path.to_owned(),
            shape: table.shape.clone(),
            stored: table.element.float(),
            source: Source::File { reader, table },
        })
    }

    /// The number of values in the file's table.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Reads the values `selection` keeps, refusing more than `max_bytes` of them.
    pub fn read(self, selection: Selection, max_bytes: u64) -> Result<ArrayD<f64>, ImportError> {
        let path = self.path;
        match self.source {
            Source::File { mut reader, table } => {
                read_values(&mut reader, &table, selection, Values::Tables, max_bytes)
                    .map_err(|p| problem(&path, p))
            }
            Source::Parsed(values) => Ok(selection.of(values)),
        }
    }
}

impl OpenedTable {
    /// A fingerprint of each row (its first axis), values rounded to `round_to` when given:
    /// two files' rows compared without holding either (see [`super::stream::row_prints`]).
    pub fn row_prints(self, round_to: Option<StoredFloat>) -> Result<Vec<u128>, ImportError> {
        let path = self.path;
        match self.source {
            Source::File { mut reader, table } => {
                super::stream::row_prints(&mut reader, &table, round_to)
                    .map_err(|p| problem(&path, p))
            }
            Source::Parsed(_) => Err(problem(
                &path,
                "is a .csv: weights are compared from .npy or .safetensors files, which say how they store their values",
            )),
        }
    }
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
    let opened = OpenedTable::open(path, tensor, max_bytes)?;
    let stored = opened.stored;
    Ok((opened.read(Selection::default(), max_bytes)?, stored))
}

/// The tensors of a `.safetensors` file (its header only is read).
pub fn list_tensors(path: &Path) -> Result<Vec<TensorInfo>, ImportError> {
    let (mut reader, size) = open_file(path)?;
    safetensors_header(&mut reader, size)
        .map(|header| header.infos())
        .map_err(|p| problem(path, p))
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
    let mut reader = Cursor::new(bytes);
    let size = bytes.len() as u64;
    let table = match format {
        TableFormat::Npy => return parse_npy(bytes, Values::Tables),
        TableFormat::Csv => return parse_csv(bytes),
        TableFormat::Safetensors => safetensors_header(&mut reader, size)?.table(tensor)?,
    };
    read_values(
        &mut reader,
        &table,
        Selection::default(),
        Values::Tables,
        u64::MAX,
    )
}

/// A `.csv` of numbers, one row a line; a first line of which no field is a number is a
/// header. A UTF-8 byte-order mark (as spreadsheet programs write) is skipped.
pub fn parse_csv(bytes: &[u8]) -> Result<ArrayD<f64>, String> {
    read_csv(&mut Cursor::new(bytes), u64::MAX)
}

/// The longest line a `.csv` may have: a row of a million values written with 20 digits
/// each is 21 MB.
const MAX_LINE_BYTES: u64 = 256 << 20;

/// [`parse_csv`] a line at a time, refusing more than `max_bytes` of values.
fn read_csv<R: BufRead>(reader: &mut R, max_bytes: u64) -> Result<ArrayD<f64>, String> {
    let max_values = usize::try_from(max_bytes / 8).unwrap_or(usize::MAX);
    let mut values: Vec<f64> = Vec::new();
    let mut width: Option<(usize, usize)> = None;
    let mut rows = 0usize;
    let mut line_bytes = Vec::new();
    let mut offset = 0usize;
    for index in 0.. {
        line_bytes.clear();
        let read = reader
            .by_ref()
            .take(MAX_LINE_BYTES + 1)
            .read_until(b'\n', &mut line_bytes)
            .map_err(|e| e.to_string())?;
        if read == 0 {
            break;
        }
        if read as u64 > MAX_LINE_BYTES {
            return Err(format!(
                "line {} is longer than {} MiB: a row of a table is not that long (is it a .csv of numbers, one row a line?)",
                index + 1,
                MAX_LINE_BYTES >> 20
            ));
        }
        let text = std::str::from_utf8(&line_bytes).map_err(|e| {
            format!(
                "is not text (invalid UTF-8 at byte {})",
                offset + e.valid_up_to()
            )
        })?;
        offset += read;
        let text = if index == 0 {
            text.strip_prefix('\u{feff}').unwrap_or(text)
        } else {
            text
        };
        let line = text.trim();
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
                    super::printable(&name_list(&[fields[col]]))
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
        if values.len() + parsed.len() > max_values || values.try_reserve(parsed.len()).is_err() {
            return Err(format!(
                "holds more values than fit in the {} of memory available (line {} already passes it)",
                crate::engine::human_bytes(u128::from(max_bytes)),
                index + 1
            ));
        }
        values.extend(parsed);
        rows += 1;
    }
    let Some((cols, _)) = width else {
        return Err("holds no numbers".to_owned());
    };
    ArrayD::from_shape_vec(IxDyn(&[rows, cols]), values).map_err(|e| e.to_string())
}

/// The tensors of a `.safetensors` file's bytes.
pub(crate) fn safetensors_tensors(bytes: &[u8]) -> Result<Vec<TensorInfo>, String> {
    safetensors_header(&mut Cursor::new(bytes), bytes.len() as u64).map(|h| h.infos())
}

/// A `.safetensors` file's header: its tensors and where its data starts.
struct SafetensorsHeader {
    tensors: Vec<(String, safetensors::tensor::TensorInfo)>,
    data_start: u64,
}

/// The longest header the safetensors library reads.
const MAX_SAFETENSORS_HEADER: u64 = 100_000_000;

/// Reads a `.safetensors` file's header (the file is `size` bytes), checking, as the
/// safetensors library does, that its tensors cover its data exactly.
fn safetensors_header<R: Read>(reader: &mut R, size: u64) -> Result<SafetensorsHeader, String> {
    use safetensors::SafeTensorError;
    let invalid = |e: SafeTensorError| format!("is not a valid .safetensors file ({e})");
    let mut length = [0u8; 8];
    if size < 8 {
        return Err(invalid(SafeTensorError::HeaderTooSmall));
    }
    reader.read_exact(&mut length).map_err(|e| e.to_string())?;
    let length = u64::from_le_bytes(length);
    if length > MAX_SAFETENSORS_HEADER {
        return Err(invalid(SafeTensorError::HeaderTooLarge));
    }
    if 8 + length > size {
        return Err(format!(
            "is not a valid .safetensors file: it is cut short (its header says {length} bytes of header, and the file holds {} after the length); a download or copy that did not finish?",
            size - 8
        ));
    }
    let mut header = Vec::new();
    reader
        .take(length)
        .read_to_end(&mut header)
        .map_err(|e| e.to_string())?;
    let text =
        std::str::from_utf8(&header).map_err(|e| invalid(SafeTensorError::InvalidHeader(e)))?;
    let metadata: safetensors::tensor::Metadata = serde_json::from_str(text)
        .map_err(|e| invalid(SafeTensorError::InvalidHeaderDeserialization(e)))?;
    let tensors: Vec<(String, safetensors::tensor::TensorInfo)> = metadata
        .tensors()
        .into_iter()
        .map(|(name, info)| (name, info.clone()))
        .collect();
    // Deserialising checked that the tensors lie end to end from 0.
    let data_end = tensors
        .iter()
        .map(|(_, info)| info.data_offsets.1 as u64)
        .max()
        .unwrap_or(0);
    if 8 + length + data_end > size {
        return Err(format!(
            "is not a valid .safetensors file: it is cut short (its tensors' data ends at byte {} and the file has {size} bytes); a download or copy that did not finish?",
            8 + length + data_end
        ));
    }
    if 8 + length + data_end != size {
        return Err(invalid(SafeTensorError::MetadataIncompleteBuffer));
    }
    Ok(SafetensorsHeader {
        tensors,
        data_start: 8 + length,
    })
}

impl SafetensorsHeader {
    /// The tensors, by name.
    fn infos(&self) -> Vec<TensorInfo> {
        let mut list: Vec<TensorInfo> = self
            .tensors
            .iter()
            .map(|(name, info)| TensorInfo {
                name: name.clone(),
                dtype: format!("{:?}", info.dtype),
                shape: info.shape.clone(),
            })
            .collect();
        list.sort_by(|a, b| a.name.cmp(&b.name));
        list
    }

    /// Where the values of `tensor` (by default the only one) lie.
    fn table(&self, tensor: Option<&str>) -> Result<StoredTable, String> {
        use safetensors::Dtype;
        let mut names: Vec<&str> = self.tensors.iter().map(|(n, _)| n.as_str()).collect();
        names.sort_unstable();
        let name = match (tensor, names.as_slice()) {
            (Some(name), _) => name,
            (None, [only]) => only,
            (None, []) => return Err("holds no tensors".to_owned()),
            (None, many) => {
                return Err(format!(
                    "holds {} tensors ({}); choose one with --tensor",
                    many.len(),
                    name_list(many)
                ));
            }
        };
        let Some((_, info)) = self.tensors.iter().find(|(n, _)| n == name) else {
            return Err(format!(
                "has no tensor '{}'; it holds {}",
                name_list(&[name]),
                if names.is_empty() {
                    "none".to_owned()
                } else {
                    name_list(&names)
                }
            ));
        };
        let element = match info.dtype {
            Dtype::F64 => Element::F64 { little: true },
            Dtype::F32 => Element::F32 { little: true },
            Dtype::F16 => Element::F16 { little: true },
            Dtype::BF16 => Element::Bf16,
            Dtype::I32 => Element::I32,
            Dtype::I64 => Element::I64,
            other => {
                return Err(format!(
                    "tensor '{}' holds {other:?} values; poslab reads F64, F32, F16, BF16, I32 and I64",
                    name_list(&[name])
                ));
            }
        };
        Ok(StoredTable {
            element,
            shape: info.shape.clone(),
            fortran: false,
            offset: self.data_start + info.data_offsets.0 as u64,
        })
    }
}
