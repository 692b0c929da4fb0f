//! A `.gguf` file (llama.cpp's model format) read as far as positions go: the header, every
//! metadata key (values kept only where they are numbers, short text or short number lists)
//! and the tensor infos, and then only the RoPE tensors' data (`rope_freqs`,
//! `rope_factors_long`, `rope_factors_short`). The weights are never read: the file is read
//! front to back through a small buffer, skipping what is not kept, and every count and length
//! is checked against the bytes that are left before anything is skipped or allocated, so a
//! 100 GB model or a hostile file costs the same bounded memory.

use std::collections::BTreeMap;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

/// What went wrong reading a GGUF file, in one sentence.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct GgufError(pub String);

/// A metadata value as kept.
#[derive(Debug, Clone, PartialEq)]
pub enum MetaValue {
    Unsigned(u64),
    Signed(i64),
    Float(f64),
    Bool(bool),
    Text(String),
    /// A list of numbers of at most [`KEPT_LIST`] items.
    Numbers(Vec<f64>),
    /// A value not kept (long text, a long list, a list of text): what it is, in words.
    Skipped(String),
}

impl MetaValue {
    /// The value as a number, if it is one.
    pub fn number(&self) -> Option<f64> {
        match self {
            MetaValue::Unsigned(n) => Some(*n as f64),
            MetaValue::Signed(n) => Some(*n as f64),
            MetaValue::Float(x) => Some(*x),
            _ => None,
        }
    }

    /// The value's type in words, for messages.
    pub fn kind(&self) -> String {
        match self {
            MetaValue::Unsigned(_) | MetaValue::Signed(_) => "a whole number".to_owned(),
            MetaValue::Float(_) => "a number".to_owned(),
            MetaValue::Bool(_) => "a boolean".to_owned(),
            MetaValue::Text(_) => "text".to_owned(),
            MetaValue::Numbers(n) => format!("a list of {} numbers", n.len()),
            MetaValue::Skipped(what) => what.clone(),
        }
    }
}

/// One tensor's entry in the file's table of tensors.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorInfo {
    pub name: String,
    pub dims: Vec<u64>,
    /// ggml's type number (0 F32, 1 F16, 30 BF16, ...).
    pub ggml_type: u32,
    /// From the start of the data section.
    pub offset: u64,
}

/// A GGUF file's header: its metadata and the tensors it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct GgufHeader {
    pub version: u32,
    pub metadata: BTreeMap<String, MetaValue>,
    /// How many tensors the file holds.
    pub tensor_count: u64,
    /// The tensors whose data poslab reads (the RoPE ones), by name.
    pub rope_tensors: BTreeMap<String, TensorInfo>,
    /// Where the data section starts.
    pub data_start: u64,
    /// The file's size in bytes.
    pub file_len: u64,
}

/// The RoPE tensors llama.cpp's converters write.
pub const ROPE_TENSORS: &[&str] = &[
    "rope_freqs.weight",
    "rope_factors_long.weight",
    "rope_factors_short.weight",
];

/// The longest list of numbers kept (M-RoPE sections, per-layer head counts).
const KEPT_LIST: u64 = 1024;
/// The longest text kept; longer text (a chat template) is skipped.
const KEPT_TEXT: u64 = 4096;
/// The longest key: GGUF limits keys to 65535 bytes.
const LONGEST_KEY: u64 = 65_535;
/// ggml's most dimensions of a tensor.
const MOST_DIMS: u32 = 4;
/// How deep lists of lists may nest.
const DEEPEST: u32 = 4;
/// The most elements of a RoPE tensor read (a head has at most a few thousand pairs).
const LARGEST_ROPE_TENSOR: u64 = 1 << 20;

/// The file, read through a buffer, with its position and size always known.
struct Cursor<R> {
    inner: R,
    pos: u64,
    len: u64,
}

impl<R: Read + Seek> Cursor<R> {
    fn left(&self) -> u64 {
        self.len.saturating_sub(self.pos)
    }

    /// Refuses to go `n` bytes on when fewer are left, saying what was being read.
    fn need(&self, n: u64, what: &str) -> Result<(), GgufError> {
        if n > self.left() {
            return Err(GgufError(format!(
                "is cut short: {what} at byte {} needs {n} bytes, and only {} are left in the file of {} bytes",
                self.pos,
                self.left(),
                self.len
            )));
        }
        Ok(())
    }

    fn bytes<const N: usize>(&mut self, what: &str) -> Result<[u8; N], GgufError> {
        self.need(N as u64, what)?;
        let mut buffer = [0u8; N];
        self.inner
            .read_exact(&mut buffer)
            .map_err(|e| GgufError(format!("cannot be read at byte {}: {e}", self.pos)))?;
        self.pos += N as u64;
        Ok(buffer)
    }

    fn u32(&mut self, what: &str) -> Result<u32, GgufError> {
        self.bytes::<4>(what).map(u32::from_le_bytes)
    }

    fn u64(&mut self, what: &str) -> Result<u64, GgufError> {
        self.bytes::<8>(what).map(u64::from_le_bytes)
    }

    fn skip(&mut self, n: u64, what: &str) -> Result<(), GgufError> {
        self.need(n, what)?;
        let step = i64::try_from(n)
            .map_err(|_| GgufError(format!("{what} at byte {} is too long", self.pos)))?;
        self.inner
            .seek(SeekFrom::Current(step))
            .map_err(|e| GgufError(format!("cannot be read at byte {}: {e}", self.pos)))?;
        self.pos += n;
        Ok(())
    }

    /// A GGUF string: a u64 length, then that many bytes. Longer than `keep`: skipped, and
    /// `None`.
    fn string(&mut self, what: &str, keep: u64) -> Result<Option<String>, GgufError> {
        let start = self.pos;
        let len = self.u64(what)?;
        if len > self.left() {
            return Err(GgufError(format!(
                "has {what} at byte {start} of length {len}, past the end of the file ({} bytes left)",
                self.left()
            )));
        }
        if len > keep {
            self.skip(len, what)?;
            return Ok(None);
        }
        let mut bytes = vec![0u8; len as usize];
        self.inner
            .read_exact(&mut bytes)
            .map_err(|e| GgufError(format!("cannot be read at byte {}: {e}", self.pos)))?;
        self.pos += len;
        Ok(Some(crate::import::printable(&String::from_utf8_lossy(
            &bytes,
        ))))
    }
}

/// A value type's size in bytes, for the fixed-size ones.
fn fixed_size(value_type: u32) -> Option<u64> {
    Some(match value_type {
        0 | 1 | 7 => 1,
        2 | 3 => 2,
        4..=6 => 4,
        10..=12 => 8,
        _ => return None,
    })
}

const STRING: u32 = 8;
const ARRAY: u32 = 9;

fn type_name(value_type: u32) -> &'static str {
    match value_type {
        0 => "uint8",
        1 => "int8",
        2 => "uint16",
        3 => "int16",
        4 => "uint32",
        5 => "int32",
        6 => "float32",
        7 => "bool",
        8 => "string",
        9 => "array",
        10 => "uint64",
        11 => "int64",
        12 => "float64",
        _ => "unknown",
    }
}

/// One fixed-size value.
fn scalar<R: Read + Seek>(
    cursor: &mut Cursor<R>,
    value_type: u32,
    what: &str,
) -> Result<MetaValue, GgufError> {
    Ok(match value_type {
        0 => MetaValue::Unsigned(cursor.bytes::<1>(what)?[0] as u64),
        1 => MetaValue::Signed(cursor.bytes::<1>(what)?[0] as i8 as i64),
        2 => MetaValue::Unsigned(u16::from_le_bytes(cursor.bytes::<2>(what)?) as u64),
        3 => MetaValue::Signed(i16::from_le_bytes(cursor.bytes::<2>(what)?) as i64),
        4 => MetaValue::Unsigned(cursor.u32(what)? as u64),
        5 => MetaValue::Signed(i32::from_le_bytes(cursor.bytes::<4>(what)?) as i64),
        6 => MetaValue::Float(f32::from_le_bytes(cursor.bytes::<4>(what)?) as f64),
        7 => match cursor.bytes::<1>(what)?[0] {
            0 => MetaValue::Bool(false),
            1 => MetaValue::Bool(true),
            other => {
                return Err(GgufError(format!(
                    "has {what} holding the boolean byte {other}; a GGUF boolean is 0 or 1"
                )));
            }
        },
        10 => MetaValue::Unsigned(cursor.u64(what)?),
        11 => MetaValue::Signed(i64::from_le_bytes(cursor.bytes::<8>(what)?)),
        12 => MetaValue::Float(f64::from_le_bytes(cursor.bytes::<8>(what)?)),
        other => {
            return Err(GgufError(format!(
                "has {what} of value type {other}, which GGUF does not define (0 to 12)"
            )));
        }
    })
}

/// One value of `value_type` (lists kept or skipped).
fn value<R: Read + Seek>(
    cursor: &mut Cursor<R>,
    value_type: u32,
    what: &str,
    depth: u32,
) -> Result<MetaValue, GgufError> {
    match value_type {
        STRING => Ok(match cursor.string(what, KEPT_TEXT)? {
            Some(text) => MetaValue::Text(text),
            None => MetaValue::Skipped("long text".to_owned()),
        }),
        ARRAY => {
            if depth >= DEEPEST {
                return Err(GgufError(format!(
                    "has {what} nesting lists more than {DEEPEST} deep"
                )));
            }
            let item_type = cursor.u32(what)?;
            let count = cursor.u64(what)?;
            let start = cursor.pos;
            match fixed_size(item_type) {
                Some(size) => {
                    let bytes = count.checked_mul(size).ok_or_else(|| {
                        GgufError(format!(
                            "has {what} at byte {start} of {count} items, more than any file holds"
                        ))
                    })?;
                    cursor.need(bytes, what)?;
                    if count <= KEPT_LIST && item_type != 7 {
                        let numbers = (0..count)
                            .map(|_| {
                                scalar(cursor, item_type, what)
                                    .map(|v| v.number().unwrap_or(f64::NAN))
                            })
                            .collect::<Result<Vec<f64>, _>>()?;
                        Ok(MetaValue::Numbers(numbers))
                    } else {
                        cursor.skip(bytes, what)?;
                        Ok(MetaValue::Skipped(format!(
                            "a list of {count} {}",
                            type_name(item_type)
                        )))
                    }
                }
                None if item_type == STRING || item_type == ARRAY => {
                    // Each item takes at least its 8-byte length (or 12-byte list header).
                    let least = if item_type == STRING { 8 } else { 12 };
                    cursor.need(count.saturating_mul(least), what)?;
                    for _ in 0..count {
                        if item_type == STRING {
                            cursor.string(what, 0)?;
                        } else {
                            value(cursor, ARRAY, what, depth + 1)?;
                        }
                    }
                    Ok(MetaValue::Skipped(format!(
                        "a list of {count} {}",
                        type_name(item_type)
                    )))
                }
                None => Err(GgufError(format!(
                    "has {what} listing items of value type {item_type}, which GGUF does not define (0 to 12)"
                ))),
            }
        }
        _ => scalar(cursor, value_type, what),
    }
}

/// Reads a GGUF file's header and tensor table (never the tensors' data).
pub fn read_header(path: &Path) -> Result<GgufHeader, GgufError> {
    let file = std::fs::File::open(path).map_err(|e| GgufError(format!("cannot be read: {e}")))?;
    let metadata = file
        .metadata()
        .map_err(|e| GgufError(format!("cannot be read: {e}")))?;
    if !metadata.is_file() {
        return Err(GgufError("is not a regular file".to_owned()));
    }
    let mut cursor = Cursor {
        inner: BufReader::with_capacity(64 << 10, file),
        pos: 0,
        len: metadata.len(),
    };
    read_from(&mut cursor)
}

/// Reads a header from bytes held in memory (the web page's dropped files, tests).
pub fn read_header_bytes(bytes: &[u8]) -> Result<GgufHeader, GgufError> {
    let mut cursor = Cursor {
        inner: std::io::Cursor::new(bytes),
        pos: 0,
        len: bytes.len() as u64,
    };
    read_from(&mut cursor)
}

fn read_from<R: Read + Seek>(cursor: &mut Cursor<R>) -> Result<GgufHeader, GgufError> {
    let magic = cursor.bytes::<4>("the magic number")?;
    if &magic != b"GGUF" {
        return Err(GgufError(
            "is not a GGUF file: it does not start with the bytes GGUF".to_owned(),
        ));
    }
    let version = cursor.u32("the version")?;
    if !(2..=3).contains(&version) {
        return Err(GgufError(format!(
            "is GGUF version {version}; poslab reads versions 2 and 3 (version 1, of 2023, counted in 32 bits)"
        )));
    }
    let tensor_count = cursor.u64("the tensor count")?;
    let key_count = cursor.u64("the metadata count")?;
    // A key takes at least 8 bytes of length, 4 of type and 1 of value; a tensor entry 24.
    for (count, least, what) in [
        (key_count, 13u64, "metadata keys"),
        (tensor_count, 24, "tensors"),
    ] {
        if count.saturating_mul(least) > cursor.left() {
            return Err(GgufError(format!(
                "says it holds {count} {what}, more than its {} bytes can",
                cursor.len
            )));
        }
    }
    let mut metadata = BTreeMap::new();
    for index in 0..key_count {
        let at = cursor.pos;
        let key = cursor
            .string(&format!("metadata key {index}"), LONGEST_KEY)?
            .ok_or_else(|| {
                GgufError(format!(
                    "has metadata key {index} at byte {at} longer than GGUF's {LONGEST_KEY} bytes"
                ))
            })?;
        let value_type = cursor.u32(&format!("the type of {key}"))?;
        let value = value(cursor, value_type, &format!("the value of {key}"), 0)?;
        metadata.insert(key, value);
    }
    let mut rope_tensors = BTreeMap::new();
    for index in 0..tensor_count {
        let what = format!("tensor {index}'s entry");
        let name = cursor.string(&what, LONGEST_KEY)?.ok_or_else(|| {
            GgufError(format!(
                "has tensor {index} with a name longer than {LONGEST_KEY} bytes"
            ))
        })?;
        let n_dims = cursor.u32(&what)?;
        if n_dims > MOST_DIMS {
            return Err(GgufError(format!(
                "has tensor {name} of {n_dims} dimensions; ggml tensors have at most {MOST_DIMS}"
            )));
        }
        let dims = (0..n_dims)
            .map(|_| cursor.u64(&what))
            .collect::<Result<Vec<u64>, _>>()?;
        let ggml_type = cursor.u32(&what)?;
        let offset = cursor.u64(&what)?;
        if ROPE_TENSORS.contains(&name.as_str()) {
            rope_tensors.insert(
                name.clone(),
                TensorInfo {
                    name,
                    dims,
                    ggml_type,
                    offset,
                },
            );
        }
    }
    let alignment = match metadata.get("general.alignment") {
        None => 32,
        Some(MetaValue::Unsigned(a)) if *a > 0 && a.is_power_of_two() && *a <= 1 << 20 => *a,
        Some(other) => {
            return Err(GgufError(format!(
                "has general.alignment {}; it must be a power of two, at most 1048576",
                other
                    .number()
                    .map_or_else(|| other.kind(), |n| n.to_string())
            )));
        }
    };
    let data_start = cursor.pos.div_ceil(alignment) * alignment;
    Ok(GgufHeader {
        version,
        metadata,
        tensor_count,
        rope_tensors,
        data_start,
        file_len: cursor.len,
    })
}

impl GgufHeader {
    /// A RoPE tensor's values (F32, F16 or BF16), read from `path`, checked against the file.
    pub fn read_tensor(&self, path: &Path, name: &str) -> Result<Option<Vec<f64>>, GgufError> {
        if !self.rope_tensors.contains_key(name) {
            return Ok(None);
        }
        let file =
            std::fs::File::open(path).map_err(|e| GgufError(format!("cannot be read: {e}")))?;
        self.read_tensor_from(file, name)
    }

    /// The same from the file's bytes held in memory.
    pub fn read_tensor_bytes(
        &self,
        bytes: &[u8],
        name: &str,
    ) -> Result<Option<Vec<f64>>, GgufError> {
        self.read_tensor_from(std::io::Cursor::new(bytes), name)
    }

    fn read_tensor_from(
        &self,
        mut source: impl Read + Seek,
        name: &str,
    ) -> Result<Option<Vec<f64>>, GgufError> {
        let Some(info) = self.rope_tensors.get(name) else {
            return Ok(None);
        };
        let count = info
            .dims
            .iter()
            .try_fold(1u64, |n, d| n.checked_mul(*d))
            .filter(|n| *n <= LARGEST_ROPE_TENSOR)
            .ok_or_else(|| {
                GgufError(format!(
                    "has {name} of shape {:?}, larger than a RoPE tensor ({LARGEST_ROPE_TENSOR} values at most)",
                    info.dims
                ))
            })?;
        let size = match info.ggml_type {
            0 => 4,
            1 | 30 => 2,
            other => {
                return Err(GgufError(format!(
                    "has {name} stored as ggml type {other}; poslab reads F32, F16 and BF16 RoPE tensors"
                )));
            }
        };
        let start = self.data_start.checked_add(info.offset);
        let end = start.and_then(|s| s.checked_add(count * size));
        let (Some(start), Some(end)) = (start, end) else {
            return Err(GgufError(format!("has {name} at an offset past any file")));
        };
        if end > self.file_len {
            return Err(GgufError(format!(
                "has {name} at bytes {start} to {end}, past the end of the file ({} bytes)",
                self.file_len
            )));
        }
        source
            .seek(SeekFrom::Start(start))
            .map_err(|e| GgufError(format!("cannot be read at byte {start}: {e}")))?;
        let mut bytes = vec![0u8; (count * size) as usize];
        source
            .read_exact(&mut bytes)
            .map_err(|e| GgufError(format!("cannot be read at byte {start}: {e}")))?;
        let values = match info.ggml_type {
            0 => bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64)
                .collect(),
            1 => bytes
                .chunks_exact(2)
                .map(|b| half::f16::from_le_bytes([b[0], b[1]]).to_f64())
                .collect(),
            _ => bytes
                .chunks_exact(2)
                .map(|b| half::bf16::from_le_bytes([b[0], b[1]]).to_f64())
                .collect(),
        };
        Ok(Some(values))
    }
}
