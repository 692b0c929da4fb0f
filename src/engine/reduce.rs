//! Drawing a table on fewer pixels than it has cells. When one pixel of a heatmap covers several
//! rows or columns, it shows the mean (or the minimum, or the maximum) of every cell it covers:
//! picking one cell per pixel would draw aliasing (moiré, false stripes) as if it were signal.
//!
//! A binned window is a [`Window`] whose steps are bin sizes: pixel `k` of an axis covers the
//! cells `start + k·step .. min(start + (k+1)·step, end)`. Masked cells (`-inf`) are not values:
//! a pixel reduces its finite cells, and is masked only when all of its cells are.

use std::ops::Range;

use ndarray::Array2;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::{EngineError, Strided, Table, TableSpec, Window, cpu};

/// How the cells under one pixel become its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
pub enum Reduce {
    /// The average: what the eye would see if the pixel were a window onto the cells.
    #[default]
    Mean,
    /// The smallest cell: the lower edge of the min/max envelope.
    Min,
    /// The largest cell: the upper edge of the min/max envelope.
    Max,
}

impl Reduce {
    pub const ALL: [Reduce; 3] = [Reduce::Mean, Reduce::Min, Reduce::Max];

    pub fn label(self) -> &'static str {
        match self {
            Reduce::Mean => "mean",
            Reduce::Min => "min",
            Reduce::Max => "max",
        }
    }

    /// The code the shaders read (keep in sync with shaders/reduce.wgsl).
    pub fn code(self) -> u32 {
        match self {
            Reduce::Mean => 0,
            Reduce::Min => 1,
            Reduce::Max => 2,
        }
    }
}

/// The most cells a reduction visits one by one (2^29: a 1,048,576 x 512 table); beyond it a
/// heatmap samples one cell per pixel and says so. Sinusoidal, dot-product and similarity means
/// and ALiBi biases have a closed form and no such limit.
pub const MAX_REDUCED_CELLS: usize = 1 << 29;

/// How a window reached the screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sampling {
    /// One cell per pixel, every cell shown.
    Exact,
    /// Each pixel reduces the cells it covers.
    Reduced(Reduce),
    /// Too many cells to reduce: one cell per pixel, the rest skipped.
    PointSampled,
}

/// The cells of pixel `k` of a binned axis.
pub fn bin(range: &Strided, k: usize) -> Range<usize> {
    let first = range.at(k);
    first..(first + range.step).min(range.end)
}

/// Cells a binned window covers, all of them.
pub fn covered_cells(window: &Window) -> usize {
    let span = |s: &Strided| s.end.saturating_sub(s.start);
    window
        .heads
        .len()
        .saturating_mul(span(&window.rows))
        .saturating_mul(span(&window.cols))
}

/// How `window` of `spec` will be drawn: exactly, reduced, or (too large) point-sampled.
pub fn sampling(spec: &TableSpec, window: &Window, reduce: Reduce) -> Sampling {
    if window.rows.step <= 1 && window.cols.step <= 1 {
        Sampling::Exact
    } else if has_closed_form(spec, reduce) || covered_cells(window) <= MAX_REDUCED_CELLS {
        Sampling::Reduced(reduce)
    } else {
        Sampling::PointSampled
    }
}

/// Whether the reduction of `spec` is computed in closed form rather than cell by cell.
pub fn has_closed_form(spec: &TableSpec, reduce: Reduce) -> bool {
    matches!(
        (spec, reduce),
        (TableSpec::Sinusoidal(_), Reduce::Mean)
            | (TableSpec::Alibi { .. }, _)
            | (TableSpec::DotDecay { .. }, Reduce::Mean)
            | (TableSpec::Similarity(_), Reduce::Mean)
    )
}

/// Whether the CPU engine reduces `spec` faster than a GPU would: a closed form, or a patch
/// similarity matrix, whose cells are a few thousand offsets' sums looked up (a GPU sums every
/// cell's pairs again: 10^9 cosines at 64 x 64 patches).
pub fn cpu_reduces_faster(spec: &TableSpec, reduce: Reduce) -> bool {
    has_closed_form(spec, reduce) || matches!(spec, TableSpec::PatchSimilarity(_))
}

/// A table already in memory reduced to the bins of `rows` x `cols`: each bin's `reduce`
/// (a table a view holds itself, drawn at about one value per pixel).
pub fn reduce_array(
    values: &ndarray::Array2<f64>,
    rows: &Strided,
    cols: &Strided,
    reduce: Reduce,
) -> ndarray::Array2<f64> {
    ndarray::Array2::from_shape_fn((rows.len(), cols.len()), |(r, c)| {
        let mut acc = Accumulator::default();
        for row in bin(rows, r) {
            for col in bin(cols, c) {
                acc.add(values[[row, col]]);
            }
        }
        acc.value(reduce)
    })
}

/// The reduction of some cells: finite ones only.
#[derive(Debug, Clone, Copy)]
pub struct Accumulator {
    sum: f64,
    count: usize,
    min: f64,
    max: f64,
}

impl Default for Accumulator {
    fn default() -> Self {
        Self {
            sum: 0.0,
            count: 0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
        }
    }
}

impl Accumulator {
    pub fn add(&mut self, value: f64) {
        if value.is_finite() {
            self.sum += value;
            self.count += 1;
            self.min = self.min.min(value);
            self.max = self.max.max(value);
        }
    }

    /// How many finite cells were added.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The reduction; `-inf` when no cell was finite (a masked pixel).
    pub fn value(&self, reduce: Reduce) -> f64 {
        if self.count == 0 {
            return f64::NEG_INFINITY;
        }
        match reduce {
            Reduce::Mean => self.sum / self.count as f64,
            Reduce::Min => self.min,
            Reduce::Max => self.max,
        }
    }
}

/// A binned window of the similarity matrix, each pixel the closed-form mean of its block. A
/// block's mean depends only on its two lengths and the offset between its first row and
/// column, so the square bins of the Toeplitz matrix repeat along its diagonals: each distinct
/// block is computed once (about twice rows + cols of them).
fn similarity_block_means(
    params: &crate::encoding::sinusoidal::SinusoidalParams,
    window: &Window,
) -> Result<Array2<f64>, EngineError> {
    let values = crate::encoding::sinusoidal::SinusoidalValues::new(params)?;
    let (rows, cols) = (window.rows.len(), window.cols.len());
    let mut index = std::collections::HashMap::new();
    let mut blocks: Vec<(i64, usize, usize)> = Vec::new();
    let mut pixel_blocks = Vec::with_capacity(rows * cols);
    for y in 0..rows {
        let cells = bin(&window.rows, y);
        for x in 0..cols {
            let columns = bin(&window.cols, x);
            let block = (
                columns.start as i64 - cells.start as i64,
                cells.len(),
                columns.len(),
            );
            let next = blocks.len();
            let k = *index.entry(block).or_insert(next);
            if k == next {
                blocks.push(block);
            }
            pixel_blocks.push(k);
        }
    }
    let mut ratios = std::collections::HashMap::new();
    for &(_, row_count, col_count) in &blocks {
        for count in [row_count, col_count] {
            ratios
                .entry(count)
                .or_insert_with(|| values.mean_ratios(count));
        }
    }
    let means: Vec<f64> = blocks
        .par_iter()
        .map(|&(offset, row_count, col_count)| {
            values.block_dot_mean_with(
                offset,
                (&ratios[&row_count], row_count),
                (&ratios[&col_count], col_count),
            )
        })
        .collect();
    Array2::from_shape_vec(
        (rows, cols),
        pixel_blocks.iter().map(|&k| means[k]).collect(),
    )
    .map_err(|e| EngineError::TooLarge(e.to_string()))
}

/// Head `window.heads.start` of `spec`, one value per bin of `window`, on the CPU engine (f64):
/// `[rows.len(), cols.len()]`. Refuses a window of more than [`MAX_REDUCED_CELLS`] cells that has
/// no closed form.
pub fn compute_reduced_cpu(
    spec: &TableSpec,
    window: &Window,
    reduce: Reduce,
) -> Result<Array2<f64>, EngineError> {
    spec.validate()?;
    window.check(spec.matrix_shape())?;
    let (rows, cols) = (window.rows.len(), window.cols.len());
    if let (TableSpec::Sinusoidal(params), Reduce::Mean) = (spec, reduce) {
        let values = crate::encoding::sinusoidal::SinusoidalValues::new(params)?;
        // Every row bin but the last holds a full step of rows: one ratio per frequency.
        let full_bin = values.mean_ratios(window.rows.step);
        let mut out = Array2::zeros((rows, cols));
        out.axis_iter_mut(ndarray::Axis(0))
            .into_par_iter()
            .enumerate()
            .for_each(|(y, mut row)| {
                let cells = bin(&window.rows, y);
                let ratios = values.bin_ratios(&full_bin, window.rows.step, cells.len());
                for (x, value) in row.iter_mut().enumerate() {
                    let columns = bin(&window.cols, x);
                    let count = columns.len() as f64;
                    *value = columns
                        .map(|c| values.column_mean_with(&ratios, cells.start, cells.len(), c))
                        .sum::<f64>()
                        / count;
                }
            });
        return Ok(out);
    }
    if let (TableSpec::DotDecay { params, anchor }, Reduce::Mean) = (spec, reduce) {
        let values = crate::encoding::sinusoidal::SinusoidalValues::new(params)?;
        let full_bin = values.mean_ratios(window.cols.step);
        let means: Vec<f64> = (0..cols)
            .into_par_iter()
            .map(|x| {
                let keys = bin(&window.cols, x);
                let ratios = values.bin_ratios(&full_bin, window.cols.step, keys.len());
                values.dot_mean_with(&ratios, keys.start as i64 - *anchor as i64, keys.len())
            })
            .collect();
        return Array2::from_shape_vec((rows, cols), means)
            .map_err(|e| EngineError::TooLarge(e.to_string()));
    }
    if let (TableSpec::Similarity(params), Reduce::Mean) = (spec, reduce) {
        return similarity_block_means(params, window);
    }
    if let TableSpec::Alibi { params, head } = spec {
        let slopes = crate::encoding::alibi::slopes(params.heads)?;
        let slope = slopes[head.unwrap_or(0) + window.heads.start];
        let pick = match reduce {
            Reduce::Mean => 0,
            Reduce::Min => 1,
            Reduce::Max => 2,
        };
        return Ok(Array2::from_shape_fn((rows, cols), |(y, x)| {
            crate::encoding::alibi::block_distances(
                params.mode,
                bin(&window.rows, y),
                bin(&window.cols, x),
            )
            .biases(slope)[pick]
        }));
    }
    if let TableSpec::PatchSimilarity(params) = spec {
        let offsets = crate::encoding::similarity2d::OffsetSimilarities::shared(params);
        let reduced: Vec<f64> = (0..rows)
            .into_par_iter()
            .flat_map_iter(|y| {
                let offsets = &offsets;
                (0..cols).map(move |x| {
                    let mut acc = Accumulator::default();
                    for query in bin(&window.rows, y) {
                        for key in bin(&window.cols, x) {
                            acc.add(offsets.value(query, key));
                        }
                    }
                    acc.value(reduce)
                })
            })
            .collect();
        return Array2::from_shape_vec((rows, cols), reduced)
            .map_err(|e| EngineError::TooLarge(e.to_string()));
    }
    if covered_cells(window) > MAX_REDUCED_CELLS {
        return Err(EngineError::TooLarge(format!(
            "reducing {} cells to {rows} x {cols} pixels is beyond the {MAX_REDUCED_CELLS} cells a reduction visits",
            covered_cells(window)
        )));
    }
    let columns = Strided {
        start: window.cols.start,
        end: window.cols.end,
        step: 1,
    };
    let reduced_rows: Result<Vec<Vec<f64>>, EngineError> = (0..rows)
        .into_par_iter()
        .map(|y| {
            let cells = bin(&window.rows, y);
            let block = Window {
                heads: Strided {
                    start: window.heads.start,
                    end: window.heads.start + 1,
                    step: 1,
                },
                rows: Strided {
                    start: cells.start,
                    end: cells.end,
                    step: 1,
                },
                cols: columns,
            };
            let Table::Real(block) = cpu::compute_window(spec, &block)? else {
                return Err(EngineError::TooLarge(
                    "index tables are drawn one cell per pixel".to_owned(),
                ));
            };
            let block = block
                .into_shape_with_order((cells.len(), columns.len()))
                .map_err(|e| EngineError::TooLarge(e.to_string()))?;
            Ok((0..cols)
                .map(|x| {
                    let mut acc = Accumulator::default();
                    for c in bin(&window.cols, x) {
                        for r in 0..cells.len() {
                            acc.add(block[[r, c - columns.start]]);
                        }
                    }
                    acc.value(reduce)
                })
                .collect())
        })
        .collect();
    let flat: Vec<f64> = reduced_rows?.into_iter().flatten().collect();
    Array2::from_shape_vec((rows, cols), flat).map_err(|e| EngineError::TooLarge(e.to_string()))
}

/// The mean, minimum and maximum of the cells one pixel covers, and how many there are: what
/// a reduced heatmap's hover says. Computed on the CPU engine.
pub fn pixel_summary(
    spec: &TableSpec,
    head: usize,
    rows: Range<usize>,
    cols: Range<usize>,
) -> Result<(Accumulator, usize), EngineError> {
    let cells = rows.len().saturating_mul(cols.len());
    if cells > 1 << 22 {
        return Err(EngineError::TooLarge(format!(
            "a pixel of {cells} cells is too many to summarise on hover"
        )));
    }
    let block = Window {
        heads: Strided {
            start: head,
            end: head + 1,
            step: 1,
        },
        rows: Strided {
            start: rows.start,
            end: rows.end,
            step: 1,
        },
        cols: Strided {
            start: cols.start,
            end: cols.end,
            step: 1,
        },
    };
    let mut acc = Accumulator::default();
    if let Table::Real(values) = cpu::compute_window(spec, &block)? {
        values.iter().for_each(|&v| acc.add(v));
    }
    Ok((acc, cells))
}
