//! A heatmap of a table a view already holds (a tour step's table, a learned table's
//! similarity matrix): zoom and pan as the engine's heatmaps do, each pixel the reduction of
//! the cells it covers (so that a fast-flipping column is not drawn as a pattern it does not
//! have), and the hover reads the cell itself.

use egui_plot::PlotBounds;
use ndarray::Array2;

use super::colormap::Colormap;
use super::heatmap::{
    HeatmapData, HeatmapResponse, HeatmapTexture, colorbar_ui, heatmap_layout, heatmap_ui,
    visible_range,
};
use crate::engine::Strided;
use crate::engine::reduce::{Reduce, reduce_array};

/// What the texture shows: the table's generation, the bins, the reduction, the colours.
type ComputedFor = (u64, Strided, Strided, Reduce, Colormap, (f64, f64));

/// The heatmap's texture and the part of the table on screen, kept between frames.
#[derive(Default)]
pub struct ArrayHeatmap {
    texture: HeatmapTexture,
    computed_for: Option<ComputedFor>,
    shown: Option<(Strided, Strided)>,
    visible: Option<(PlotBounds, egui::Vec2)>,
    visible_shape: Option<(usize, usize)>,
    /// Cells as wide as they are tall.
    pub square_cells: bool,
}

impl ArrayHeatmap {
    /// A heatmap whose cells stay square.
    pub fn square() -> Self {
        Self {
            square_cells: true,
            ..Self::default()
        }
    }

    /// Draws `values` (whose contents change only with `generation`) on `range`, with a colour
    /// bar on the right.
    #[allow(clippy::too_many_arguments)]
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        id: &str,
        values: &Array2<f64>,
        generation: u64,
        range: (f64, f64),
        axis_labels: (&str, &str),
        reduce: Reduce,
        colormap: Colormap,
    ) -> Option<HeatmapResponse> {
        let (rows, cols) = values.dim();
        if rows == 0 || cols == 0 {
            return None;
        }
        if self.visible_shape != Some((rows, cols)) {
            self.visible = self.visible.map(|(_, size)| {
                let all = PlotBounds::from_min_max([0.0, -(rows as f64)], [cols as f64, 0.0]);
                (all, size)
            });
            self.visible_shape = Some((rows, cols));
        }
        let (row_bins, col_bins) = self.bins(rows, cols);
        let key = (generation, row_bins, col_bins, reduce, colormap, range);
        if self.computed_for != Some(key) {
            let reduced = reduce_array(values, &row_bins, &col_bins, reduce);
            let data = HeatmapData {
                values: reduced,
                rows: row_bins,
                cols: col_bins,
            };
            self.texture.update(ui.ctx(), &data, colormap, Some(range));
            self.computed_for = Some(key);
            self.shown = Some((row_bins, col_bins));
        }
        let full = ui.available_rect_before_wrap();
        let (heatmap_rect, colorbar_rect) = heatmap_layout(full, (rows, cols), self.square_cells);
        let mut result = None;
        ui.scope_builder(egui::UiBuilder::new().max_rect(heatmap_rect), |ui| {
            if let Some(shown) = self.shown {
                let response = heatmap_ui(
                    ui,
                    id,
                    shown,
                    self.texture.id(),
                    axis_labels,
                    (rows, cols),
                    None,
                    None,
                    self.square_cells,
                );
                self.visible = Some((response.visible, response.size_px));
                result = Some(response);
            }
        });
        if self.bins(rows, cols) != (row_bins, col_bins) {
            ui.ctx().request_repaint();
        }
        ui.scope_builder(egui::UiBuilder::new().max_rect(colorbar_rect), |ui| {
            ui.horizontal_top(|ui| {
                colorbar_ui(ui, colormap, range, colorbar_rect.height().min(400.0));
            });
        });
        ui.allocate_rect(full, egui::Sense::hover());
        result
    }

    /// The rows and columns on screen, at about one bin of cells per pixel.
    fn bins(&self, rows: usize, cols: usize) -> (Strided, Strided) {
        match self.visible {
            None => (
                Strided {
                    step: rows.div_ceil(1024).max(1),
                    ..Strided::all(rows)
                },
                Strided {
                    step: cols.div_ceil(1024).max(1),
                    ..Strided::all(cols)
                },
            ),
            Some((bounds, size)) => (
                visible_range(-bounds.max()[1], -bounds.min()[1], rows, size.y),
                visible_range(bounds.min()[0], bounds.max()[0], cols, size.x),
            ),
        }
    }
}
