//! A heatmap of a table a view already holds (a tour step's table, a learned table's
//! similarity matrix): zoom and pan as the engine's heatmaps do, each pixel the reduction of
//! the cells it covers (so that a fast-flipping column is not drawn as a pattern it does not
//! have), and the hover reads the cell itself.

use egui_plot::PlotBounds;
use ndarray::Array2;

use super::heatmap::{
    Freshness, HeatmapData, HeatmapResponse, HeatmapTexture, colorbar_ui, colour_image,
    heatmap_layout, heatmap_ui, pending_overlay, visible_range,
};
use crate::colormap::Colormap;
use crate::engine::Strided;
use crate::engine::reduce::{Reduce, reduce_array};

/// What the texture shows: the table's generation, the bins, the reduction, the colours.
type ComputedFor = (u64, Strided, Strided, Reduce, Colormap, (f64, f64));

/// The bins of a table reduced and colour-mapped on a worker thread.
type Reduced = (Strided, Strided, egui::ColorImage, (f64, f64));

/// The heatmap's texture and the part of the table on screen, kept between frames. Reducing a
/// large table to its bins takes tens of milliseconds: it runs on a worker thread, from a copy
/// of the table made once per generation.
#[derive(Default)]
pub struct ArrayHeatmap {
    texture: HeatmapTexture,
    computed_for: Option<ComputedFor>,
    /// The table's copy the worker reads, and its generation.
    source: Option<(u64, std::sync::Arc<Array2<f64>>)>,
    job: crate::jobs::Latest<ComputedFor, Reduced>,
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

    /// The bins of rows and columns the picture on screen shows, if any.
    pub fn shown_bins(&self) -> Option<(Strided, Strided)> {
        self.shown
    }

    /// The picture on its way, if any.
    pub fn pending(&self) -> Option<&crate::jobs::Pending> {
        self.job.pending()
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
        if self.computed_for != Some(key) && !self.job.wants(&key) {
            if self.source.as_ref().is_none_or(|(g, _)| *g != generation) {
                self.source = Some((generation, std::sync::Arc::new(values.clone())));
            }
            if let Some((_, source)) = &self.source {
                let source = source.clone();
                self.job.request(
                    Some(ui.ctx()),
                    key,
                    format!("drawing {rows} × {cols}"),
                    move |_| {
                        let data = HeatmapData {
                            values: reduce_array(&source, &row_bins, &col_bins, reduce),
                            rows: row_bins,
                            cols: col_bins,
                        };
                        let (image, range) = colour_image(&data, colormap, Some(range));
                        Ok((row_bins, col_bins, image, range))
                    },
                );
            }
        }
        for update in self.job.poll(Some(ui.ctx())) {
            if let crate::jobs::Update::Done((row_bins, col_bins, image, colour_range), _) = update
            {
                self.texture.set(ui.ctx(), image, colour_range);
                self.shown = Some((row_bins, col_bins));
                // The result is of what was asked for last, which need not be this frame's
                // bins: labelled with this frame's, a coarse picture asked for in between
                // would stay on screen as if it were current.
                self.computed_for = self.job.wanted().copied();
            }
        }
        let freshness = match &self.computed_for {
            Some(shown) if *shown == key => Freshness::Current,
            Some(shown) if shown.0 == generation && shown.3 == reduce && shown.4 == colormap => {
                Freshness::Resampling
            }
            Some(_) => Freshness::Stale,
            None => Freshness::Empty,
        };
        if self.job.is_pending() {
            ui.ctx().request_repaint();
        }
        let full = ui.available_rect_before_wrap();
        let (heatmap_rect, colorbar_rect) = heatmap_layout(full, (rows, cols), self.square_cells);
        let mut result = None;
        ui.scope_builder(egui::UiBuilder::new().max_rect(heatmap_rect), |ui| {
            if let Some(shown) = self.shown {
                let mut response = heatmap_ui(
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
                pending_overlay(ui, response.response.rect, freshness, self.job.pending());
                response.stale = freshness == Freshness::Stale;
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
