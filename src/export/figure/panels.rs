//! What several figures build their panels from: heatmap panels of a table (reduced as the
//! app's heatmaps are), their colour bars, strided cells and value ranges.

use crate::engine::reduce::{self, Reduce, Sampling};
use crate::engine::{Strided, TableSpec, Window, cpu};

use super::{Axis, ColorBar, Content, FigureError, FigureStyle, Panel};

/// Heatmaps get at most this many cells along a side: more than a page shows.
pub(super) const MAX_CELLS: usize = 2048;

/// Every k-th of `0..n`, at most `max_cells` of them.
pub(super) fn strided(n: usize, max_cells: usize) -> Strided {
    Strided {
        step: n.div_ceil(max_cells.max(1)).max(1),
        ..Strided::all(n)
    }
}

/// The axis a strided range of cells spans, cells centred on their indices.
pub(super) fn cell_axis(label: &str, range: Strided) -> Axis {
    let first = range.start as f64 - range.step as f64 / 2.0;
    Axis::new(label, first, first + (range.len() * range.step) as f64)
}

pub(super) fn finite_range(values: &[f64]) -> (f64, f64) {
    values
        .iter()
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        })
}

/// A heatmap panel of `spec`'s `[rows, cols]` (of one head), at most `max_cells` a side; a
/// cell standing for several of the table's shows their `reduce`, as the app's heatmaps do.
pub(super) fn heatmap_panel(
    spec: &TableSpec,
    head: usize,
    title: String,
    labels: (&str, &str),
    max_cells: usize,
    reduce: Reduce,
) -> Result<(Panel, (f64, f64)), FigureError> {
    spec.validate()?;
    let [_, rows, cols] = spec.matrix_shape();
    let window = Window {
        heads: Strided {
            start: head,
            end: head + 1,
            step: 1,
        },
        rows: strided(rows, max_cells),
        cols: strided(cols, max_cells),
    };
    // Decided on the whole window: its parts, timed first, are computed the same way.
    let sampling = reduce::sampling(spec, &window, reduce);
    let compute = |window: &Window| -> Result<Vec<f64>, FigureError> {
        Ok(match sampling {
            Sampling::Reduced(reduce) => reduce::compute_reduced_cpu(spec, window, reduce)?
                .into_iter()
                .collect::<Vec<f64>>(),
            Sampling::Exact | Sampling::PointSampled => cpu::compute_window(spec, window)?
                .into_real()
                .into_iter()
                .collect::<Vec<f64>>(),
        })
    };
    let values = super::budget::computed(spec, &window, &compute)?;
    let range = finite_range(&values);
    let panel = Panel {
        title,
        equal_aspect: false,
        colorbar: None,
        x: cell_axis(labels.0, window.cols),
        y: cell_axis(labels.1, window.rows).downwards(),
        content: Content::Heatmap {
            values,
            rows: window.rows.len(),
            cols: window.cols.len(),
            outlined: Vec::new(),
            overlay: Vec::new(),
        },
    };
    Ok((panel, range))
}

pub(super) fn colorbar(
    style: &FigureStyle,
    (min, max): (f64, f64),
    label: &str,
) -> Option<ColorBar> {
    let (min, max) = if min.is_finite() && max.is_finite() {
        style.colormap.range(min, max)
    } else {
        (0.0, 1.0)
    };
    Some(ColorBar {
        colormap: style.colormap,
        min,
        max,
        label: label.to_owned(),
    })
}

/// The finite values' range, padded by 5% (a range of 0 to 1 when none is finite).
pub(super) fn span(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (low, high) = finite_range(&values.collect::<Vec<f64>>());
    if low.is_finite() {
        let pad = (high - low).abs().max(1e-9) * 0.05;
        (low - pad, high + pad)
    } else {
        (0.0, 1.0)
    }
}

/// A board as a panel: a square grid with its colour bar, or a list with neither axes nor bar.
/// A strip (one row) has its column numbers and neither row numbers nor a bar: its cells carry
/// their labels.
pub(super) fn board_panel(board: crate::scene::board::Board, style: &FigureStyle) -> Panel {
    let list = board.cols == 1;
    let strip = board.rows == 1 && !list;
    let x = Axis::new(board.col_name.clone(), -0.5, board.cols as f64 - 0.5);
    let y = Axis::new(board.row_name.clone(), -0.5, board.rows as f64 - 0.5).downwards();
    let (low, high) = style.colormap.range(board.range.0, board.range.1);
    Panel {
        title: board.title.clone(),
        equal_aspect: !list,
        colorbar: (!list && !strip).then(|| ColorBar {
            colormap: style.colormap,
            min: low,
            max: high,
            label: board.value_name.clone(),
        }),
        x: if list || !board.numbered && board.col_name.is_empty() {
            x.hidden()
        } else {
            x
        },
        y: if list || strip || !board.numbered {
            y.hidden()
        } else {
            y
        },
        content: Content::Board(board),
    }
}
