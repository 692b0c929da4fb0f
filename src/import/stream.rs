//! Reading a table's values straight from its file into the f64 array that holds them, a
//! chunk at a time: only the header is read whole, so a 256 MB float32 `.npy` costs the
//! 512 MB of its f64 values and one chunk, not a copy of the file besides. Rows and columns
//! left out (`--rows`, `--cols`) are skipped on the way, so part of a table too large for
//! memory can still be read.

use std::io::{Read, Seek, SeekFrom};

use ndarray::{ArrayD, IxDyn, ShapeBuilder};

use super::{StoredFloat, Values};

/// How one value is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Element {
    F16 { little: bool },
    Bf16,
    F32 { little: bool },
    F64 { little: bool },
    I32,
    I64,
}

impl Element {
    pub(crate) fn width(self) -> usize {
        match self {
            Element::F16 { .. } | Element::Bf16 => 2,
            Element::F32 { .. } | Element::I32 => 4,
            Element::F64 { .. } | Element::I64 => 8,
        }
    }

    /// The float type, for values stored as floats.
    pub(crate) fn float(self) -> Option<StoredFloat> {
        match self {
            Element::F16 { .. } => Some(StoredFloat::F16),
            Element::Bf16 => Some(StoredFloat::Bf16),
            Element::F32 { .. } => Some(StoredFloat::F32),
            Element::F64 { .. } => Some(StoredFloat::F64),
            Element::I32 | Element::I64 => None,
        }
    }

    /// Appends the values of `bytes` (whole elements) to `out`.
    fn decode(self, bytes: &[u8], out: &mut Vec<f64>) {
        fn each<const N: usize>(bytes: &[u8], out: &mut Vec<f64>, f: impl Fn([u8; N]) -> f64) {
            out.extend(bytes.chunks_exact(N).map(|c| {
                let mut b = [0u8; N];
                b.copy_from_slice(c);
                f(b)
            }));
        }
        match self {
            Element::F16 { little: true } => {
                each(bytes, out, |b| half::f16::from_le_bytes(b).to_f64())
            }
            Element::F16 { little: false } => {
                each(bytes, out, |b| half::f16::from_be_bytes(b).to_f64());
            }
            Element::Bf16 => each(bytes, out, |b| half::bf16::from_le_bytes(b).to_f64()),
            Element::F32 { little: true } => each(bytes, out, |b| f64::from(f32::from_le_bytes(b))),
            Element::F32 { little: false } => {
                each(bytes, out, |b| f64::from(f32::from_be_bytes(b)));
            }
            Element::F64 { little: true } => each(bytes, out, f64::from_le_bytes),
            Element::F64 { little: false } => each(bytes, out, f64::from_be_bytes),
            Element::I32 => each(bytes, out, |b| f64::from(i32::from_le_bytes(b))),
            Element::I64 => each(bytes, out, |b| i64::from_le_bytes(b) as f64),
        }
    }
}

/// Where a table's values lie in its file and how they are stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StoredTable {
    pub element: Element,
    pub shape: Vec<usize>,
    /// Column-major (a `.npy` with `fortran_order: True`).
    pub fortran: bool,
    /// The byte where the values start.
    pub offset: u64,
}

impl StoredTable {
    /// The number of values (the shape was checked against the file, so it does not overflow).
    pub(crate) fn len(&self) -> usize {
        self.shape.iter().product()
    }
}

/// Which rows (first axis) and columns (last axis) to keep, each in increasing order; `None`
/// keeps all. A one-axis table has columns only.
#[derive(Debug, Clone, Copy, Default)]
pub struct Selection<'a> {
    pub rows: Option<&'a [usize]>,
    pub cols: Option<&'a [usize]>,
}

impl Selection<'_> {
    /// What is kept of a table already in memory.
    pub fn of(&self, mut table: ArrayD<f64>) -> ArrayD<f64> {
        if let (Some(rows), true) = (self.rows, table.ndim() >= 2) {
            table = table.select(ndarray::Axis(0), rows);
        }
        if let (Some(cols), Some(last)) = (self.cols, table.ndim().checked_sub(1)) {
            table = table.select(ndarray::Axis(last), cols);
        }
        table
    }

    /// The shape of what is kept of a table of `shape`.
    pub fn kept_shape(&self, shape: &[usize]) -> Vec<usize> {
        let mut kept = shape.to_vec();
        if let (Some(rows), true) = (self.rows, kept.len() >= 2) {
            kept[0] = rows.len();
        }
        if let (Some(cols), Some(last)) = (self.cols, kept.last_mut()) {
            *last = cols.len();
        }
        kept
    }
}

/// Values decoded at a time: a chunk of 1 MiB of f64s at most.
const CHUNK_VALUES: usize = 1 << 17;

/// Reads the values `selection` keeps of `table` from `reader`, refusing (by `accepted`) NaN
/// or non-finite values with the index of the first in the file, and more than `max_bytes`
/// of values. The array is in standard (row-major) layout.
pub(crate) fn read_values<R: Read + Seek>(
    reader: &mut R,
    table: &StoredTable,
    selection: Selection,
    accepted: Values,
    max_bytes: u64,
) -> Result<ArrayD<f64>, String> {
    let kept_shape = selection.kept_shape(&table.shape);
    if table.fortran && table.shape.len() >= 2 {
        // Column-major files are rare (a transposed array saved as it lay): read whole, then
        // keep the selection.
        let mut all = reserve(table.len(), max_bytes)?;
        read_run(reader, table, 0, table.len(), None, accepted, &mut all)?;
        let array = ArrayD::from_shape_vec(IxDyn(&table.shape).f(), all)
            .map_err(|e| format!("shape {:?} does not match its data ({e})", table.shape))?;
        return Ok(selection.of(array).as_standard_layout().into_owned());
    }
    let mut values = reserve(kept_shape.iter().product(), max_bytes)?;
    let last = table.shape.last().copied().unwrap_or(1);
    let mask: Option<Vec<bool>> = selection.cols.map(|cols| {
        let mut mask = vec![false; last];
        for &c in cols {
            mask[c] = true;
        }
        mask
    });
    let row_len = if table.shape.len() >= 2 {
        table.shape[1..].iter().product()
    } else {
        table.len()
    };
    match (selection.rows, table.shape.len() >= 2) {
        (Some(rows), true) => {
            for &row in rows {
                read_run(
                    reader,
                    table,
                    row * row_len,
                    row_len,
                    mask.as_deref(),
                    accepted,
                    &mut values,
                )?;
            }
        }
        _ => read_run(
            reader,
            table,
            0,
            table.len(),
            mask.as_deref(),
            accepted,
            &mut values,
        )?,
    }
    ArrayD::from_shape_vec(IxDyn(&kept_shape), values)
        .map_err(|e| format!("shape {kept_shape:?} does not match its data ({e})"))
}

/// An empty vector with room for `count` values, or why there is none.
fn reserve(count: usize, max_bytes: u64) -> Result<Vec<f64>, String> {
    let bytes = (count as u128) * 8;
    let refuse = || {
        format!(
            "holds {count} values, {} as f64, more than the {} of memory available",
            crate::engine::human_bytes(bytes),
            crate::engine::human_bytes(u128::from(max_bytes))
        )
    };
    if bytes > u128::from(max_bytes) {
        return Err(refuse());
    }
    let mut values = Vec::new();
    values.try_reserve_exact(count).map_err(|_| refuse())?;
    Ok(values)
}

/// Appends the `count` values from the `first`-th of the file (in storage order), keeping
/// those whose column `mask` marks.
fn read_run<R: Read + Seek>(
    reader: &mut R,
    table: &StoredTable,
    first: usize,
    count: usize,
    mask: Option<&[bool]>,
    accepted: Values,
    out: &mut Vec<f64>,
) -> Result<(), String> {
    let width = table.element.width();
    reader
        .seek(SeekFrom::Start(table.offset + (first * width) as u64))
        .map_err(|e| e.to_string())?;
    let last = table.shape.last().copied().unwrap_or(1).max(1);
    let mut chunks = Chunks::new(table.element, count);
    chunks.read(reader, count, |done, decoded| {
        let start = first + done;
        if let Some(bad) = decoded.iter().position(|v| refused(*v, accepted)) {
            let flat = start + bad;
            return Err(format!(
                "holds {} at index {:?}; values must be {}",
                decoded[bad],
                super::unravel(flat, &table.shape, table.fortran),
                match accepted {
                    Values::InputsOnly => "finite",
                    Values::Tables => "numbers (infinities are allowed, NaN is not)",
                }
            ));
        }
        match mask {
            None => out.extend_from_slice(decoded),
            Some(mask) => out.extend(
                decoded
                    .iter()
                    .enumerate()
                    .filter(|(k, _)| mask[(start + k) % last])
                    .map(|(_, v)| *v),
            ),
        }
        Ok(())
    })
}

/// A buffer that reads values of one element type a chunk at a time and decodes them.
struct Chunks {
    element: Element,
    raw: Vec<u8>,
    decoded: Vec<f64>,
}

impl Chunks {
    /// Room for runs of up to `longest` values, a chunk at most.
    fn new(element: Element, longest: usize) -> Self {
        let chunk = CHUNK_VALUES.min(longest.max(1));
        Self {
            element,
            raw: vec![0u8; chunk * element.width()],
            decoded: Vec::with_capacity(chunk),
        }
    }

    /// Reads the next `count` values from `reader`, handing each chunk decoded to `each` with
    /// how many values of the run came before it.
    fn read<R: Read>(
        &mut self,
        reader: &mut R,
        count: usize,
        mut each: impl FnMut(usize, &[f64]) -> Result<(), String>,
    ) -> Result<(), String> {
        let width = self.element.width();
        let chunk = self.raw.len() / width;
        let mut done = 0;
        while done < count {
            let n = chunk.min(count - done);
            let bytes = &mut self.raw[..n * width];
            reader.read_exact(bytes).map_err(|e| {
                if e.kind() == std::io::ErrorKind::UnexpectedEof {
                    "is truncated: it ended while its values were read (did it shrink?)".to_owned()
                } else {
                    e.to_string()
                }
            })?;
            self.decoded.clear();
            self.element.decode(bytes, &mut self.decoded);
            each(done, &self.decoded)?;
            done += n;
        }
        Ok(())
    }
}

fn refused(value: f64, accepted: Values) -> bool {
    match accepted {
        Values::InputsOnly => !value.is_finite(),
        Values::Tables => value.is_nan(),
    }
}

/// A 128-bit fingerprint of each row of `table` (its first axis; each value of a one-axis
/// table), read a chunk at a time so a file of any size costs 16 bytes a row. Values are
/// rounded to `round_to` first when given, so a tensor and its copy cast to a narrower type
/// have the same rows. Two rows have one fingerprint only when they hold the same values
/// (two independent 64-bit mixes: a chance collision of distinct rows is below 2^-100 for
/// any file that fits on a disk).
pub(crate) fn row_prints<R: Read + Seek>(
    reader: &mut R,
    table: &StoredTable,
    round_to: Option<StoredFloat>,
) -> Result<Vec<u128>, String> {
    if table.fortran && table.shape.len() >= 2 {
        return Err("is stored column-major (fortran_order): save it row-major \
             (numpy.ascontiguousarray) to compare its rows"
            .to_owned());
    }
    let rows = table.shape.first().copied().unwrap_or(1);
    let row_len = if table.shape.len() >= 2 {
        table.shape[1..].iter().product()
    } else {
        1
    };
    reader
        .seek(SeekFrom::Start(table.offset))
        .map_err(|e| e.to_string())?;
    let mut prints = Vec::new();
    prints
        .try_reserve_exact(rows)
        .map_err(|_| format!("has {rows} rows, more than memory holds"))?;
    let mut chunks = Chunks::new(table.element, row_len);
    for _ in 0..rows {
        let mut print = RowPrint::default();
        chunks.read(reader, row_len, |_, decoded| {
            decoded
                .iter()
                .for_each(|&value| print.add(rounded(value, round_to)));
            Ok(())
        })?;
        prints.push(print.finish());
    }
    Ok(prints)
}

/// [`row_prints`] of a matrix in memory.
pub fn prints_of_rows(matrix: ndarray::ArrayView2<f64>) -> Vec<u128> {
    matrix
        .rows()
        .into_iter()
        .map(|row| {
            let mut print = RowPrint::default();
            row.iter().for_each(|&v| print.add(v));
            print.finish()
        })
        .collect()
}

/// `value` rounded to the nearest of `to`'s values, ties to even, through float32 as PyTorch
/// casts (c10's half types are made from a float).
fn rounded(value: f64, to: Option<StoredFloat>) -> f64 {
    match to {
        None | Some(StoredFloat::F64) => value,
        Some(StoredFloat::F32) => f64::from(value as f32),
        Some(StoredFloat::F16) => half::f16::from_f32(value as f32).to_f64(),
        Some(StoredFloat::Bf16) => half::bf16::from_f32(value as f32).to_f64(),
    }
}

/// Two running 64-bit mixes of a row's values.
#[derive(Default)]
struct RowPrint(u64, u64);

impl RowPrint {
    fn add(&mut self, value: f64) {
        // One NaN, whatever its payload; -0 stays apart from +0 (a permutation keeps signs).
        let bits = if value.is_nan() {
            f64::NAN.to_bits()
        } else {
            value.to_bits()
        };
        self.0 = (self.0 ^ bits)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(29);
        self.1 = (self.1.rotate_left(17) ^ bits.wrapping_mul(0xff51_afd7_ed55_8ccd))
            .wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    }

    fn finish(self) -> u128 {
        fn avalanche(mut z: u64) -> u64 {
            z = (z ^ (z >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
            z = (z ^ (z >> 33)).wrapping_mul(0xc4ce_b9fe_1a85_ec53);
            z ^ (z >> 33)
        }
        (u128::from(avalanche(self.0)) << 64) | u128::from(avalanche(self.1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::npy_table;
    use crate::import::tests::bytes_of as npy;
    use ndarray::{Array2, Array3, Axis};
    use std::io::Cursor;

    /// A float16 `.npy`: a float32 one's header with its type changed, and half the data.
    fn f16_npy(table: &Array3<f64>) -> Vec<u8> {
        let bytes = npy(&table.mapv(|v| v as f32));
        let start = bytes.windows(3).position(|w| w == b"<f4").unwrap();
        let data = bytes.len() - table.len() * 4;
        let mut out = bytes[..data].to_vec();
        out[start..start + 3].copy_from_slice(b"<f2");
        for v in table {
            out.extend_from_slice(&half::f16::from_f64(*v).to_le_bytes());
        }
        out
    }

    fn read(bytes: &[u8], selection: Selection, accepted: Values) -> Result<ArrayD<f64>, String> {
        let mut reader = Cursor::new(bytes);
        let table = npy_table(&mut reader, bytes.len() as u64, accepted)?;
        read_values(&mut reader, &table, selection, accepted, u64::MAX)
    }

    /// Rows and columns picked while reading are those ndarray's `select` picks from the
    /// whole table, for every stored type, in both memory orders, across chunk boundaries.
    #[test]
    fn a_selection_read_from_the_file_is_the_selection_of_the_whole_table() {
        // 3 x 700 x 301 values: a row is 210,700 values, more than a chunk.
        let whole = Array3::from_shape_fn((3, 700, 301), |(h, r, c)| {
            (h * 1_000_000 + r * 1000 + c) as f64
        });
        let rows: Vec<usize> = vec![0, 2];
        let cols: Vec<usize> = (0..301).step_by(7).collect();
        let expected = whole
            .select(Axis(0), &rows)
            .select(Axis(2), &cols)
            .into_dyn();
        let small = whole.mapv(|v| v % 2048.0);
        let small_expected = small
            .select(Axis(0), &rows)
            .select(Axis(2), &cols)
            .into_dyn();
        let selection = Selection {
            rows: Some(&rows),
            cols: Some(&cols),
        };
        let files: Vec<(Vec<u8>, &ArrayD<f64>)> = vec![
            (npy(&whole), &expected),
            (npy(&whole.mapv(|v| v as f32)), &expected),
            (npy(&whole.mapv(|v| v as i64)), &expected),
            (npy(&whole.mapv(|v| v as i32)), &expected),
            (f16_npy(&small), &small_expected),
        ];
        for (bytes, expected) in &files {
            let read = read(bytes, selection, Values::Tables).unwrap();
            assert_eq!(&read, *expected);
        }
        // Column-major: a transposed view is written with fortran_order True.
        let fortran = whole.t().as_standard_layout().into_owned();
        let bytes = npy(&fortran.t());
        let header = String::from_utf8_lossy(&bytes[..128]).into_owned();
        assert!(header.contains("'fortran_order': True"), "{header}");
        assert_eq!(read(&bytes, selection, Values::Tables).unwrap(), expected);
        // Nothing selected reads everything.
        assert_eq!(
            read(&npy(&whole), Selection::default(), Values::Tables).unwrap(),
            whole.clone().into_dyn()
        );
    }

    /// A bad value is named by its index in the file; one in a row left out is not read.
    #[test]
    fn a_bad_value_is_named_where_it_lies_in_the_file() {
        let mut table = Array2::<f64>::zeros((5, 4));
        table[[3, 2]] = f64::NAN;
        let bytes = npy(&table);
        let message = read(&bytes, Selection::default(), Values::Tables).unwrap_err();
        assert!(message.contains("NaN at index [3, 2]"), "{message}");
        let rows = [0, 1, 4];
        let read_around = read(
            &bytes,
            Selection {
                rows: Some(&rows),
                cols: None,
            },
            Values::Tables,
        )
        .unwrap();
        assert_eq!(read_around.shape(), &[3, 4]);
        table[[3, 2]] = f64::INFINITY;
        let message = read(&npy(&table), Selection::default(), Values::InputsOnly).unwrap_err();
        assert!(message.contains("inf at index [3, 2]"), "{message}");
        assert!(read(&npy(&table), Selection::default(), Values::Tables).is_ok());
    }

    /// More values than memory allows are refused before any is read.
    #[test]
    fn values_beyond_the_memory_allowed_are_refused_before_reading() {
        let table = Array2::<f32>::zeros((64, 64));
        let bytes = npy(&table);
        let mut reader = Cursor::new(&bytes[..]);
        let stored = npy_table(&mut reader, bytes.len() as u64, Values::Tables).unwrap();
        let message = read_values(
            &mut reader,
            &stored,
            Selection::default(),
            Values::Tables,
            64 * 64 * 8 - 1,
        )
        .unwrap_err();
        assert!(
            message.contains("holds 4096 values, 32.0 KiB as f64"),
            "{message}"
        );
        let rows: Vec<usize> = (0..32).collect();
        let half = read_values(
            &mut reader,
            &stored,
            Selection {
                rows: Some(&rows),
                cols: None,
            },
            Values::Tables,
            64 * 64 * 8 - 1,
        )
        .unwrap();
        assert_eq!(half.shape(), &[32, 64]);
    }
}
