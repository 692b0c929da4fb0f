//! The tour "From counting to sinusoids" as a figure: one step's panels, heatmaps with their
//! own colour bar (and the line over the cells where the step draws one), curves with their
//! legend. Built from the same [`TourFrame`] the app draws.

use super::panels::{MAX_CELLS, finite_range, strided};
use super::{Axis, ColorBar, Content, FigureError, FigureStyle, Panel, Series, SeriesStyle};
use crate::engine::reduce::reduce_array;
use crate::scene::tour::{self, TourCurves, TourHeatmap, TourPanel, TourSettings, TourStep};

/// What the view shows: the step and the settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TourFigure {
    pub step: TourStep,
    pub settings: TourSettings,
}

/// The figure's title and panels (each heatmap with its own colour bar).
pub fn build(
    figure: &TourFigure,
    style: &FigureStyle,
) -> Result<(String, Vec<Panel>, Option<ColorBar>), FigureError> {
    let frame = tour::frame(figure.step, &figure.settings)?;
    let panels = frame
        .panels
        .iter()
        .map(|panel| match panel {
            TourPanel::Heatmap(map) => heatmap_panel(map, style),
            TourPanel::Curves(curves) => curves_panel(curves),
        })
        .collect();
    let title = format!("From counting to sinusoids, step {}", figure.step.title());
    Ok((title, panels, None))
}

fn heatmap_panel(map: &TourHeatmap, style: &FigureStyle) -> Panel {
    let (rows, cols) = map.values.dim();
    let (row_bins, col_bins) = (strided(rows, MAX_CELLS), strided(cols, MAX_CELLS));
    let values = reduce_array(&map.values, &row_bins, &col_bins, style.reduce);
    // A bin of cells drawn as one: the axes keep the table's own coordinates.
    let (row_step, col_step) = (row_bins.step as f64, col_bins.step as f64);
    let overlay = if map.overlay.is_empty() {
        Vec::new()
    } else {
        vec![Series {
            name: map.overlay_name.clone(),
            // Cells are centred on whole coordinates of the axes: an edge at e is at e - 1/2.
            points: map
                .overlay
                .iter()
                .map(|&[x, y]| [x / col_step - 0.5, y / row_step - 0.5])
                .collect(),
            color: [255, 255, 255],
            style: SeriesStyle::Line { width: 2.0 },
        }]
    };
    let (low, high) = map.range;
    Panel {
        title: map.title.clone(),
        equal_aspect: false,
        colorbar: Some(ColorBar {
            colormap: style.colormap,
            min: low,
            max: high,
            label: "value".into(),
        }),
        x: Axis::new(map.col_name.clone(), -0.5, values.ncols() as f64 - 0.5),
        y: Axis::new(map.row_name.clone(), -0.5, values.nrows() as f64 - 0.5).downwards(),
        content: Content::Heatmap {
            values: values.iter().copied().collect(),
            rows: values.nrows(),
            cols: values.ncols(),
            outlined: Vec::new(),
            overlay,
        },
    }
}

fn curves_panel(curves: &TourCurves) -> Panel {
    let points = || curves.curves.iter().flat_map(|c| c.points.iter());
    let ((x0, x1), (y0, y1)) = if curves.equal_aspect {
        ((-1.1, 1.1), (-1.1, 1.1))
    } else {
        (
            finite_range(&points().map(|p| p[0]).collect::<Vec<f64>>()),
            super::context::span(points().map(|p| p[1])),
        )
    };
    Panel {
        title: curves.title.clone(),
        equal_aspect: curves.equal_aspect,
        colorbar: None,
        x: Axis::new(curves.x_name.clone(), x0, x1),
        y: Axis::new(curves.y_name.clone(), y0, y1),
        content: Content::Plot(
            curves
                .curves
                .iter()
                .map(|c| Series {
                    name: c.name.clone(),
                    points: c.points.clone(),
                    color: c.color,
                    style: if c.dots {
                        SeriesStyle::Dots { radius: 2.0 }
                    } else {
                        SeriesStyle::Line { width: 1.8 }
                    },
                })
                .collect(),
        ),
    }
}
