//! Reading the `.npy` arrays that some tables take as input (`--input`, `--freqs`), and, in
//! [`tables`], tables computed elsewhere, to check them.
//!
//! A header is checked against the size of its file before any array is allocated from what
//! it claims, so a truncated or hostile file gets a message, never a crash or a huge
//! allocation; the values then stream from the file into their array ([`stream`]).

pub mod gguf;
pub mod handed_over;
pub mod model_config;
mod stream;
pub use stream::prints_of_rows;
pub mod tables;

pub use stream::Selection;
use stream::{Element, StoredTable};

use std::io::Read;
use std::path::{Path, PathBuf};

use ndarray::{Array3, ArrayD};
use ndarray_npy::npy::header::{Header, Layout};

/// Headers this large are not tables (NumPy itself refuses headers over 10 kB by default).
const MAX_HEADER_BYTES: usize = 1 << 20;

/// Why an input array could not be read.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {problem}")]
pub struct ImportError {
    pub path: PathBuf,
    pub problem: String,
}

fn problem(path: &Path, problem: impl Into<String>) -> ImportError {
    ImportError {
        path: path.to_owned(),
        problem: problem.into(),
    }
}

/// Names as a message lists them: the first ten, then how many more (a file of 100,000
/// tensors does not make a 789 KB line), each cut to 80 characters.
pub fn name_list<S: AsRef<str>>(names: &[S]) -> String {
    const SHOWN: usize = 10;
    let mut list: Vec<String> = names
        .iter()
        .take(SHOWN)
        .map(|name| {
            let name = name.as_ref();
            let cut: String = name.chars().take(80).collect();
            if cut.len() < name.len() {
                format!("{cut}…")
            } else {
                cut
            }
        })
        .collect();
    if names.len() > SHOWN {
        list.push(format!("and {} more", names.len() - SHOWN));
    }
    list.join(", ")
}

/// `text` with its control characters written as escapes (`\u{1b}`, `\n`), for a message or a
/// terminal: a name read from a file must not move the cursor, retitle the terminal or split a
/// one-line error.
pub fn printable(text: &str) -> String {
    if !text.chars().any(char::is_control) {
        return text.to_owned();
    }
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Reads a learned position table (a ViT's `pos_embed`, `[1, rows, dim]` or `[rows, dim]`) from
/// a `.npy` or `.safetensors` file. Of a file holding several tensors, `tensor` names one; by
/// default the one whose name says it is a position embedding. Returns the `[rows, dim]`
/// table and the tensor read, if named.
pub fn read_position_table(
    path: &Path,
    tensor: Option<&str>,
    max_bytes: u64,
) -> Result<(ndarray::Array2<f64>, Option<String>), ImportError> {
    let format = tables::TableFormat::from_path(path).ok_or_else(|| {
        problem(
            path,
            "is not a table poslab reads: use a .npy, .csv or .safetensors file",
        )
    })?;
    let tensor = match (tensor, format) {
        (Some(name), _) => Some(name.to_owned()),
        (None, tables::TableFormat::Safetensors) => {
            Some(position_tensor(&tables::list_tensors(path)?).map_err(|p| problem(path, p))?)
        }
        _ => None,
    };
    let values = tables::OpenedTable::open(path, tensor.as_deref(), max_bytes)?
        .read(Selection::default(), max_bytes)?;
    let table = as_position_table(values).map_err(|p| problem(path, p))?;
    Ok((table, tensor))
}

/// [`read_position_table`] of bytes already read (the example table poslab ships).
pub fn position_table_from_bytes(
    bytes: &[u8],
    format: tables::TableFormat,
    tensor: Option<&str>,
) -> Result<(ndarray::Array2<f64>, Option<String>), String> {
    let tensor = match (tensor, format) {
        (Some(name), _) => Some(name.to_owned()),
        (None, tables::TableFormat::Safetensors) => {
            Some(position_tensor(&tables::safetensors_tensors(bytes)?)?)
        }
        _ => None,
    };
    let values = tables::parse_table(bytes, format, tensor.as_deref())?;
    Ok((as_position_table(values)?, tensor))
}

/// The tensor of a file's that holds its position embedding: the one named like one, or the
/// only one.
fn position_tensor(tensors: &[tables::TensorInfo]) -> Result<String, String> {
    let is_position = |name: &str| {
        let name = name.to_ascii_lowercase();
        name.contains("pos_embed") || name.contains("position_embedding")
    };
    match tensors.iter().find(|t| is_position(&t.name)) {
        Some(t) => Ok(t.name.clone()),
        None if tensors.len() == 1 => Ok(tensors[0].name.clone()),
        None => {
            let names: Vec<&str> = tensors.iter().map(|t| t.name.as_str()).collect();
            Err(format!(
                "holds no tensor named like a position embedding (pos_embed, position_embeddings): name one of {}",
                name_list(&names)
            ))
        }
    }
}

/// `values` as a `[rows, dim]` table: timm stores `[1, rows, dim]`, whose leading ones go.
fn as_position_table(values: ArrayD<f64>) -> Result<ndarray::Array2<f64>, String> {
    let shape: Vec<usize> = values.shape().to_vec();
    let kept: Vec<usize> = match shape.iter().position(|&n| n != 1) {
        Some(first) if shape.len() - first >= 2 => shape[first..].to_vec(),
        _ => shape.clone(),
    };
    if kept.len() != 2 {
        return Err(format!(
            "holds a table of shape {shape:?}: a position table is [rows, dim] (or timm's [1, rows, dim])"
        ));
    }
    values
        .into_shape_with_order((kept[0], kept[1]))
        .map_err(|e| e.to_string())
}

/// Reads a `<f2`, `<f4` or `<f8` (or big-endian) `.npy` array as f64, refusing NaN and infinities.
pub fn read_npy_f64(path: &Path, max_bytes: u64) -> Result<ArrayD<f64>, ImportError> {
    let (mut file, size) = open_file(path)?;
    let table = npy_table(&mut file, size, Values::InputsOnly).map_err(|p| problem(path, p))?;
    stream::read_values(
        &mut file,
        &table,
        Selection::default(),
        Values::InputsOnly,
        max_bytes,
    )
    .map_err(|p| problem(path, p))
}

/// An opened file: on disk, or handed over by the browser (see [`handed_over`]).
pub(crate) enum FileReader {
    Disk(std::io::BufReader<std::fs::File>),
    Memory(std::io::Cursor<handed_over::Bytes>),
}

impl std::fmt::Debug for FileReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FileReader::Disk(_) => "FileReader::Disk",
            FileReader::Memory(_) => "FileReader::Memory",
        })
    }
}

impl Read for FileReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            FileReader::Disk(reader) => reader.read(buf),
            FileReader::Memory(reader) => reader.read(buf),
        }
    }
}

impl std::io::BufRead for FileReader {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        match self {
            FileReader::Disk(reader) => reader.fill_buf(),
            FileReader::Memory(reader) => reader.fill_buf(),
        }
    }

    fn consume(&mut self, amount: usize) {
        match self {
            FileReader::Disk(reader) => reader.consume(amount),
            FileReader::Memory(reader) => reader.consume(amount),
        }
    }
}

impl std::io::Seek for FileReader {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        match self {
            FileReader::Disk(reader) => reader.seek(to),
            FileReader::Memory(reader) => reader.seek(to),
        }
    }
}

/// Opens a regular file for reading, with its size: one the browser handed over under that
/// name, else one on disk.
pub(crate) fn open_file(path: &Path) -> Result<(FileReader, u64), ImportError> {
    if let Some(bytes) = handed_over::get(path) {
        let size = bytes.as_ref().len() as u64;
        return Ok((FileReader::Memory(std::io::Cursor::new(bytes)), size));
    }
    if cfg!(target_arch = "wasm32") {
        return Err(problem(path, handed_over::NOT_HELD));
    }
    // Before opening: a FIFO would block the open, and a device (/dev/zero) says it holds 0
    // bytes and never ends. Links are followed.
    let metadata = std::fs::metadata(path).map_err(|e| problem(path, io_text(&e)))?;
    if !metadata.is_file() {
        return Err(problem(
            path,
            "is not a regular file (a folder, device or pipe): give the path of a file",
        ));
    }
    let file = std::fs::File::open(path).map_err(|e| problem(path, io_text(&e)))?;
    Ok((
        FileReader::Disk(std::io::BufReader::new(file)),
        metadata.len(),
    ))
}

/// Parses the bytes of a `.npy` file holding floats, all finite (an input to a table).
pub fn parse_npy_f64(bytes: &[u8]) -> Result<ArrayD<f64>, String> {
    parse_npy(bytes, Values::InputsOnly)
}

/// The float type a table file stores its values in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum StoredFloat {
    F64,
    F32,
    F16,
    Bf16,
}

impl StoredFloat {
    /// The name NumPy and safetensors give the type.
    pub fn name(self) -> &'static str {
        match self {
            StoredFloat::F64 => "float64",
            StoredFloat::F32 => "float32",
            StoredFloat::F16 => "float16",
            StoredFloat::Bf16 => "bfloat16",
        }
    }

    /// Bits of the significand after the leading one.
    pub fn fraction_bits(self) -> i32 {
        match self {
            StoredFloat::F64 => 52,
            StoredFloat::F32 => 23,
            StoredFloat::F16 => 10,
            StoredFloat::Bf16 => 7,
        }
    }

    /// The exponent of this type's smallest normal value.
    fn min_exponent(self) -> i32 {
        match self {
            StoredFloat::F64 => -1022,
            StoredFloat::F32 | StoredFloat::Bf16 => -126,
            StoredFloat::F16 => -14,
        }
    }

    /// The spacing of this type's values at `magnitude` (its ulp); below the smallest normal
    /// value, the fixed spacing of the subnormals (float16's 2^-24 from 6.1e-5 down).
    pub fn ulp(self, magnitude: f64) -> f64 {
        let magnitude = magnitude.abs().max(f64::MIN_POSITIVE);
        let exponent = (magnitude.log2().floor() as i32).max(self.min_exponent());
        2f64.powi(exponent - self.fraction_bits())
    }
}

/// One line for a header that does not parse: the parser's message draws the header with a
/// caret under the fault over several lines; the column and what was expected say the same.
fn header_error(message: &str) -> String {
    let mut lines = message.lines();
    let first = lines.next().unwrap_or_default();
    let Some((before, location)) = first.split_once("-->") else {
        return format!("not a valid .npy file ({first})");
    };
    let column = location.trim().split(':').nth(1).unwrap_or("?");
    let expected = lines
        .filter_map(|line| line.trim().strip_prefix("= "))
        .next_back()
        .map(|e| e.trim_end_matches(')'))
        .unwrap_or("something else");
    format!(
        "not a valid .npy file ({} at character {column} of its header: {expected})",
        before.trim().trim_end_matches(':')
    )
}

/// What a reader accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Values {
    /// Finite floats: inputs to a table.
    InputsOnly,
    /// Floats with infinities (a causal mask's -inf) and integers (index tables): a table to
    /// check. NaN is refused either way.
    Tables,
}

/// Parses the bytes of a `.npy` file.
pub fn parse_npy(bytes: &[u8], accepted: Values) -> Result<ArrayD<f64>, String> {
    let mut reader = std::io::Cursor::new(bytes);
    let table = npy_table(&mut reader, bytes.len() as u64, accepted)?;
    stream::read_values(
        &mut reader,
        &table,
        Selection::default(),
        accepted,
        u64::MAX,
    )
}

/// Reads a `.npy` file's header (the file is `size` bytes) and says where its values lie,
/// checking that the file holds exactly the values its header describes.
pub(crate) fn npy_table<R: Read>(
    reader: &mut R,
    size: u64,
    accepted: Values,
) -> Result<StoredTable, String> {
    const MAGIC: &[u8] = b"\x93NUMPY";
    let mut start = Vec::with_capacity(12);
    reader
        .take(12)
        .read_to_end(&mut start)
        .map_err(|e| e.to_string())?;
    if start.len() < 10 || &start[..6] != MAGIC {
        return Err("not a .npy file (no \\x93NUMPY magic string at the start)".to_owned());
    }
    let (length, prefix) = match start[6] {
        1 => (u16::from_le_bytes([start[8], start[9]]) as usize, 10),
        2 | 3 if start.len() >= 12 => (
            u32::from_le_bytes([start[8], start[9], start[10], start[11]]) as usize,
            12,
        ),
        major => {
            return Err(format!(
                "uses .npy format version {major}.{}, which poslab does not read (1.0 to 3.0)",
                start[7]
            ));
        }
    };
    if length > MAX_HEADER_BYTES {
        return Err(format!(
            "has a header of {length} bytes, more than the {MAX_HEADER_BYTES} a table needs"
        ));
    }
    let header_end = prefix + length;
    if header_end as u64 > size {
        return Err(format!(
            "is truncated: its header claims {length} bytes, the file has {}",
            size - prefix as u64
        ));
    }
    let mut header_bytes = start;
    header_bytes.truncate(header_end);
    let more = header_end - header_bytes.len();
    reader
        .take(more as u64)
        .read_to_end(&mut header_bytes)
        .map_err(|e| e.to_string())?;
    if header_bytes.len() < header_end {
        return Err("is truncated: it ended inside its header".to_owned());
    }
    let header =
        Header::from_reader(&mut &header_bytes[..]).map_err(|e| header_error(&e.to_string()))?;
    let descriptor = header.type_descriptor.to_string();
    let descriptor = descriptor.trim_matches('\'');
    let integers = accepted == Values::Tables;
    let element = match descriptor {
        "<f2" | "=f2" | "f2" => Element::F16 { little: true },
        "<f4" | "=f4" | "f4" => Element::F32 { little: true },
        "<f8" | "=f8" | "f8" => Element::F64 { little: true },
        ">f2" => Element::F16 { little: false },
        ">f4" => Element::F32 { little: false },
        ">f8" => Element::F64 { little: false },
        "<i4" | "=i4" | "i4" if integers => Element::I32,
        "<i8" | "=i8" | "i8" if integers => Element::I64,
        other => {
            return Err(format!(
                "holds {other} values; poslab reads {}",
                if integers {
                    "float arrays (<f2, <f4, <f8) and integer arrays (<i4, <i8)"
                } else {
                    "float arrays, <f2, <f4 or <f8"
                }
            ));
        }
    };
    let data_bytes = header
        .shape
        .iter()
        .try_fold(1usize, |n, &axis| n.checked_mul(axis))
        .and_then(|n| n.checked_mul(element.width()))
        .filter(|&n| n <= isize::MAX as usize)
        .ok_or_else(|| {
            format!(
                "header claims shape {:?}, too large to be real",
                header.shape
            )
        })? as u64;
    let present = size - header_end as u64;
    if present < data_bytes {
        return Err(format!(
            "is truncated: shape {:?} of {descriptor} needs {data_bytes} data bytes, the file has {present}",
            header.shape
        ));
    }
    if present > data_bytes {
        return Err(format!(
            "has {} bytes after the data that shape {:?} of {descriptor} describes",
            present - data_bytes,
            header.shape
        ));
    }
    Ok(StoredTable {
        element,
        shape: header.shape,
        fortran: matches!(header.layout, Layout::Fortran),
        offset: header_end as u64,
    })
}

/// Mixed 2D RoPE frequencies as rope-vit keeps them: `[2, n]` for one head, or a layer's
/// `[2, heads, n]` parameter (`freqs` of `RoPEAttention`); returned as `[2, heads, n]`, row 0
/// of the first axis `theta_x`, row 1 `theta_y`.
pub fn read_mixed_freqs(path: &Path, max_bytes: u64) -> Result<Array3<f64>, ImportError> {
    let array = read_npy_f64(path, max_bytes)?;
    let shape = array.shape().to_vec();
    let wrong = || {
        problem(
            path,
            format!(
                "has shape {shape:?}; mixed RoPE frequencies are [2, n] (one head) or [2, heads, n] (rope-vit's freqs parameter)"
            ),
        )
    };
    let array = match shape.as_slice() {
        [2, n] if *n > 0 => array
            .into_shape_with_order((2, 1, *n))
            .map_err(|_| wrong())?,
        [2, heads, n] if *heads > 0 && *n > 0 => array
            .into_dimensionality::<ndarray::Ix3>()
            .map_err(|_| wrong())?,
        _ => return Err(wrong()),
    };
    Ok(array)
}

/// The multi-index of element `flat` in storage order.
fn unravel(mut flat: usize, shape: &[usize], fortran: bool) -> Vec<usize> {
    let mut index = vec![0; shape.len()];
    let axes: Vec<usize> = if fortran {
        (0..shape.len()).collect()
    } else {
        (0..shape.len()).rev().collect()
    };
    for axis in axes {
        index[axis] = flat % shape[axis];
        flat /= shape[axis];
    }
    index
}

fn io_text(error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::NotFound => "no such file".to_owned(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => error.to_string(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use ndarray::array;
    use ndarray_npy::WriteNpyExt;

    /// The `.npy` file ndarray-npy writes of `array`.
    pub(crate) fn bytes_of<A: WriteNpyExt>(array: &A) -> Vec<u8> {
        let mut bytes = Vec::new();
        array.write_npy(&mut bytes).unwrap();
        bytes
    }

    #[test]
    fn reads_both_float_widths_and_both_orders() {
        let c_order = array![[1.0f64, 2.0, 3.0], [4.0, 5.0, 6.0]];
        let from_f8 = parse_npy_f64(&bytes_of(&c_order)).unwrap();
        assert_eq!(from_f8, c_order.clone().into_dyn());
        let from_f4 = parse_npy_f64(&bytes_of(&c_order.mapv(|v| v as f32))).unwrap();
        assert_eq!(from_f4, c_order.clone().into_dyn());
        // A transposed view is Fortran-contiguous and is written with fortran_order True.
        let fortran = c_order.t();
        let bytes = bytes_of(&fortran);
        assert!(String::from_utf8_lossy(&bytes).contains("'fortran_order': True"));
        assert_eq!(parse_npy_f64(&bytes).unwrap(), fortran.into_dyn());
    }

    #[test]
    fn names_the_first_non_finite_value_by_its_index() {
        let mut a = ndarray::Array2::<f64>::zeros((3, 4));
        a[[2, 1]] = f64::NEG_INFINITY;
        let message = parse_npy_f64(&bytes_of(&a)).unwrap_err();
        assert!(message.contains("-inf at index [2, 1]"), "{message}");
    }
}
