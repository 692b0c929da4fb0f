//! The skew trick (Huang et al.'s Music Transformer, as Phil Wang's `relative_to_absolute`
//! writes it): relative logits `[L, 2L-1]`, where row `i` holds `q_i · r_o` for every offset
//! `o = -(L-1) ..= L-1`, become the `[L, L]` logits `q_i · r_{j-i}` of query `i` and key `j` by
//! padding, flattening, padding, reshaping and slicing: no gather, and no `[L, L, d]` tensor of
//! embeddings per pair. The stages are modelled cell by cell so that the app can animate them.

use ndarray::Array2;

use super::{ParamError, check_count};

/// The longest sequence the stage-by-stage model is built for (the arithmetic works for any).
pub const MAX_SKEW_LEN: usize = 4096;

/// The steps of the trick, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum SkewStage {
    /// `[L, 2L-1]`: `q_i · r_o`, offset `o` at column `o + L - 1`.
    Relative,
    /// `[L, 2L]`: a column of zeros appended.
    ColumnPadded,
    /// `[2L²]`: the rows one after another.
    Flattened,
    /// `[2L² + L - 1]`: `L - 1` zeros appended.
    FlatPadded,
    /// `[L + 1, 2L - 1]`: read again in rows of `2L - 1`.
    Reshaped,
    /// `[L, L]`: the first `L` rows, the last `L` columns.
    Sliced,
}

impl SkewStage {
    pub const ALL: [SkewStage; 6] = [
        SkewStage::Relative,
        SkewStage::ColumnPadded,
        SkewStage::Flattened,
        SkewStage::FlatPadded,
        SkewStage::Reshaped,
        SkewStage::Sliced,
    ];

    /// The stage's number, 0 to 5.
    pub fn index(self) -> usize {
        Self::ALL.iter().position(|&s| s == self).unwrap_or(0)
    }

    /// The stage numbered `index` (the last for a larger one).
    pub fn from_index(index: usize) -> Self {
        Self::ALL[index.min(Self::ALL.len() - 1)]
    }

    /// The stage's name, with the operation that makes it.
    pub fn title(self) -> &'static str {
        match self {
            SkewStage::Relative => "1. Relative logits q_i · r_(j-i)",
            SkewStage::ColumnPadded => "2. Pad one column of zeros",
            SkewStage::Flattened => "3. Flatten the rows",
            SkewStage::FlatPadded => "4. Pad L - 1 zeros",
            SkewStage::Reshaped => "5. Reshape to rows of 2L - 1",
            SkewStage::Sliced => "6. Keep L rows, the last L columns",
        }
    }

    /// Where a stage's cells are drawn, as `(rows, cols)`: its shape, but for the flat stages,
    /// which are one row of up to 2L² + L - 1 cells, laid out in lines of two padded rows
    /// (4L cells) so that each cell is large enough to read, and the reader sees the matrix's
    /// rows placed end to end.
    pub fn layout(self, len: usize) -> (usize, usize) {
        match self.shape(len) {
            (1, cells) => {
                let wrap = flat_line(len).min(cells);
                (cells.div_ceil(wrap), wrap)
            }
            shape => shape,
        }
    }

    /// The shape of the array at this stage, as `(rows, cols)` (flat stages are one row).
    pub fn shape(self, len: usize) -> (usize, usize) {
        match self {
            SkewStage::Relative => (len, 2 * len - 1),
            SkewStage::ColumnPadded => (len, 2 * len),
            SkewStage::Flattened => (1, 2 * len * len),
            SkewStage::FlatPadded => (1, padded_len(len)),
            SkewStage::Reshaped => (len + 1, 2 * len - 1),
            SkewStage::Sliced => (len, len),
        }
    }
}

/// Cells in one line of a flat stage as drawn: two padded rows of the matrix, `4L`.
pub fn flat_line(len: usize) -> usize {
    4 * len
}

/// The flat padded array's length, `2L² + L - 1 = (L + 1)(2L - 1)`.
fn padded_len(len: usize) -> usize {
    2 * len * len + len - 1
}

/// What a cell holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkewContent {
    /// `q_query · r_offset`.
    Logit { query: usize, offset: i64 },
    /// A padding zero.
    Zero,
}

/// A cell of one stage: which element it is (its index in the flat padded array, which every
/// stage keeps, so a cell can be followed from stage to stage) and where it sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SkewCell {
    pub id: usize,
    pub row: usize,
    pub col: usize,
    pub content: SkewContent,
}

/// Refuses a length the stage model is not built for.
pub fn check_len(len: usize) -> Result<(), ParamError> {
    check_count("tokens", len, 1..=MAX_SKEW_LEN)
}

/// What the element with flat index `id` holds (`id < (L + 1)(2L - 1)`).
pub fn content(len: usize, id: usize) -> SkewContent {
    let width = 2 * len;
    if id >= width * len {
        return SkewContent::Zero;
    }
    let (query, col) = (id / width, id % width);
    if col == width - 1 {
        SkewContent::Zero
    } else {
        SkewContent::Logit {
            query,
            offset: col as i64 - (len as i64 - 1),
        }
    }
}

/// Every cell of `stage` for `len` tokens, in row-major order, at its place in the stage's
/// [`SkewStage::layout`] (a flat stage's index `k` at line `k / 4L`, column `k % 4L`).
pub fn stage_cells(len: usize, stage: SkewStage) -> Result<Vec<SkewCell>, ParamError> {
    check_len(len)?;
    let cell = |id: usize, row: usize, col: usize| SkewCell {
        id,
        row,
        col,
        content: content(len, id),
    };
    let (rows, cols) = stage.shape(len);
    let width = 2 * len;
    Ok(match stage {
        // Columns 0 .. 2L-2 of each padded row of width 2L.
        SkewStage::Relative => (0..rows)
            .flat_map(|r| (0..cols).map(move |c| (r, c)))
            .map(|(r, c)| cell(r * width + c, r, c))
            .collect(),
        SkewStage::ColumnPadded => (0..rows * cols)
            .map(|id| cell(id, id / cols, id % cols))
            .collect(),
        SkewStage::Flattened | SkewStage::FlatPadded => {
            let wrap = flat_line(len);
            (0..cols).map(|id| cell(id, id / wrap, id % wrap)).collect()
        }
        SkewStage::Reshaped => (0..rows * cols)
            .map(|id| cell(id, id / cols, id % cols))
            .collect(),
        SkewStage::Sliced => {
            let step = 2 * len - 1;
            (0..rows)
                .flat_map(|r| (0..cols).map(move |c| (r, c)))
                .map(|(r, c)| cell(r * step + (len - 1) + c, r, c))
                .collect()
        }
    })
}

/// The trick on numbers: `[L, 2L-1]` relative logits to `[L, L]` absolute ones, by the same
/// pad, flatten, pad, reshape and slice as the reference (each step an array of its own).
pub fn relative_to_absolute(logits: &Array2<f64>) -> Result<Array2<f64>, ParamError> {
    let (len, width) = logits.dim();
    check_count("tokens", len, 1..=usize::MAX / 4)?;
    if width != 2 * len - 1 {
        return Err(ParamError::new(
            "relative logits",
            width,
            format!(
                "must have 2L - 1 = {} columns for L = {len} rows",
                2 * len - 1
            ),
        ));
    }
    let mut padded = Array2::<f64>::zeros((len, 2 * len));
    padded.slice_mut(ndarray::s![.., ..width]).assign(logits);
    let mut flat: Vec<f64> = padded.iter().copied().collect();
    flat.extend(std::iter::repeat_n(0.0, len - 1));
    let reshaped = Array2::from_shape_vec((len + 1, width), flat)
        .map_err(|e| ParamError::new("relative logits", width, e.to_string()))?;
    Ok(reshaped.slice(ndarray::s![..len, len - 1..]).to_owned())
}

/// What the trick computes, written as the gather it replaces: `out[i, j] = logits[i, j - i +
/// L - 1]`.
pub fn gather(logits: &Array2<f64>) -> Array2<f64> {
    let len = logits.nrows();
    Array2::from_shape_fn((len, len), |(i, j)| logits[[i, j + len - 1 - i]])
}

/// Memory of the two ways, in values, for `len` tokens and head width `dim`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SkewCost {
    /// The naive way: an embedding `r_(j-i)` gathered for every pair, `[L, L, d]`.
    pub gathered_embeddings: u128,
    /// The skew trick: `q · Rᵀ` as `[L, 2L - 1]`, its padded copy `(L + 1)(2L - 1)`.
    pub skew_values: u128,
}

impl SkewCost {
    pub fn new(len: usize, dim: usize) -> Self {
        let (l, d) = (len as u128, dim as u128);
        Self {
            gathered_embeddings: l * l * d,
            skew_values: l * (2 * l - 1) + (l + 1) * (2 * l - 1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stage_holds_each_element_once_in_its_shape() {
        for len in 1..=9 {
            for stage in SkewStage::ALL {
                let cells = stage_cells(len, stage).unwrap();
                let (rows, cols) = stage.shape(len);
                assert_eq!(cells.len(), rows * cols, "{stage:?} at L = {len}");
                let (rows, cols) = stage.layout(len);
                let mut ids: Vec<usize> = cells.iter().map(|c| c.id).collect();
                ids.sort_unstable();
                ids.dedup();
                assert_eq!(ids.len(), cells.len());
                assert!(cells.iter().all(|c| c.row < rows && c.col < cols));
            }
        }
    }
}
