//! One query patch's row of a `[P, P]` table (or any values over a patch grid) drawn as the
//! patch grid, square patches, the query outlined, a colour bar beside it; a click picks a
//! patch.

use ndarray::Array2;

use crate::colormap::Colormap;
use crate::encoding::grid::GridParams;
use crate::engine::{Strided, Table, TableSpec, Window};
use crate::ui::engine::AppEngine;
use crate::widgets::heatmap::{
    Freshness, HeatmapData, HeatmapTexture, Outline, colorbar_ui, colour_image, heatmap_ui,
    pending_overlay,
};

/// What a map was last drawn from.
#[derive(Clone, PartialEq)]
enum MapSource {
    Table(Box<TableSpec>),
    Values(Array2<f64>),
}

/// A map's values for one query, colour-mapped, from a worker thread.
type ComputedMap = (Array2<f64>, egui::ColorImage, (f64, f64));

/// A patch-grid map and what it keeps between frames.
#[derive(Default)]
pub struct GridMap {
    texture: HeatmapTexture,
    pub data: Option<HeatmapData>,
    computed_for: Option<(MapSource, usize, Colormap)>,
    /// The row of a table being computed off the UI thread (a query of a 64 x 64 grid is 4096
    /// cells, each a dot product of encodings on some maps).
    job: crate::jobs::Latest<(MapSource, usize, Colormap), Result<ComputedMap, String>>,
    /// Where the map was drawn last frame, so that tests can click a patch.
    pub transform: Option<egui_plot::PlotTransform>,
    /// The colour scale given for the values shown (`None`: their own range).
    shown_range: Option<(f64, f64)>,
}

impl GridMap {
    /// Draws row `query` of `spec` (computed by the app's engine) as the grid; returns the
    /// patch clicked, if any.
    #[allow(clippy::too_many_arguments)]
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        id: &str,
        spec: &TableSpec,
        grid: GridParams,
        query: usize,
        colormap: Colormap,
        engine: &AppEngine,
    ) -> Option<usize> {
        let key = (MapSource::Table(Box::new(spec.clone())), query, colormap);
        if self.computed_for.as_ref() != Some(&key) && !self.job.wants(&key) {
            let window = Window::one_row(query, grid.patches());
            let (handle, spec) = (engine.handle(), spec.clone());
            self.job.request(
                Some(ui.ctx()),
                key.clone(),
                format!("computing a {} x {} map", grid.grid_h, grid.grid_w),
                move |_| {
                    let values = match handle.window(&spec, &window) {
                        Ok(Table::Real(values)) => values
                            .into_shape_with_order((grid.grid_h, grid.grid_w))
                            .map_err(|e| e.to_string()),
                        Ok(Table::Index(_)) => Err("an index table has no map".to_owned()),
                        Err(error) => Err(error.to_string()),
                    };
                    Ok(values.map(|values| {
                        let data = HeatmapData {
                            values,
                            rows: Strided::all(grid.grid_h),
                            cols: Strided::all(grid.grid_w),
                        };
                        let (image, range) = colour_image(&data, colormap, None);
                        (data.values, image, range)
                    }))
                },
            );
        }
        for update in self.job.poll(Some(ui.ctx())) {
            if let crate::jobs::Update::Done(Ok((values, image, range)), _) = update {
                let (rows, cols) = values.dim();
                self.texture.set(ui.ctx(), image, range);
                self.data = Some(HeatmapData {
                    values,
                    rows: Strided::all(rows),
                    cols: Strided::all(cols),
                });
                self.computed_for = self.job.wanted().cloned();
            }
        }
        if self.job.is_pending() {
            ui.ctx().request_repaint();
        }
        let stale = self.computed_for.as_ref() != Some(&key);
        self.draw(ui, id, grid, query, colormap, stale)
    }

    /// Draws `values` (`[grid_h, grid_w]`) as the grid, `query` outlined, coloured over
    /// `range` (a scale shared with another map) or the values' own; returns the patch clicked,
    /// if any.
    #[allow(clippy::too_many_arguments)]
    pub fn ui_values(
        &mut self,
        ui: &mut egui::Ui,
        id: &str,
        values: &Array2<f64>,
        grid: GridParams,
        query: usize,
        colormap: Colormap,
        range: Option<(f64, f64)>,
    ) -> Option<usize> {
        let key = (MapSource::Values(values.clone()), query, colormap);
        if self.computed_for.as_ref() != Some(&key) || self.shown_range != range {
            self.show(ui.ctx(), values.clone(), colormap, range);
            self.computed_for = Some(key);
            self.shown_range = range;
        }
        self.draw(ui, id, grid, query, colormap, false)
    }

    /// The map on its way, if any.
    pub fn pending(&self) -> Option<&crate::jobs::Pending> {
        self.job.pending()
    }

    /// Where the centre of patch `(x, y)` was on screen last frame.
    pub fn patch_on_screen(&self, x: usize, y: usize) -> Option<egui::Pos2> {
        let transform = self.transform.as_ref()?;
        Some(transform.position_from_point(&egui_plot::PlotPoint::new(
            x as f64 + 0.5,
            -(y as f64 + 0.5),
        )))
    }

    fn show(
        &mut self,
        ctx: &egui::Context,
        values: Array2<f64>,
        colormap: Colormap,
        range: Option<(f64, f64)>,
    ) {
        let (rows, cols) = values.dim();
        let data = HeatmapData {
            values,
            rows: Strided::all(rows),
            cols: Strided::all(cols),
        };
        self.texture.update(ctx, &data, colormap, range);
        self.data = Some(data);
    }

    fn draw(
        &mut self,
        ui: &mut egui::Ui,
        id: &str,
        grid: GridParams,
        query: usize,
        colormap: Colormap,
        stale: bool,
    ) -> Option<usize> {
        let data = self.data.as_ref()?;
        // The map as large as square patches allow, its colour bar beside it, as in the
        // exported figure.
        let area = ui.available_rect_before_wrap();
        let colorbar_width = 84.0;
        let (axes_x, axes_y) = (56.0, 44.0);
        let scale = ((area.width() - colorbar_width - axes_x) / grid.grid_w as f32)
            .min((area.height() - axes_y) / grid.grid_h as f32)
            .max(1.0);
        // A long thin grid (14 x 64) still leaves its axis names room at their size (they are
        // larger when presenting): the plot is at least as long as each name, and the patches
        // stay square within it.
        let (x_name, y_name) = ("patch column x", "patch row y");
        let name_length = |name: &str| {
            let font = egui::TextStyle::Body.resolve(ui.style());
            ui.painter()
                .layout_no_wrap(name.to_owned(), font, egui::Color32::WHITE)
                .size()
                .x
                + 16.0
        };
        let inner = egui::vec2(
            (grid.grid_w as f32 * scale)
                .max(name_length(x_name))
                .min(area.width() - colorbar_width - axes_x),
            (grid.grid_h as f32 * scale)
                .max(name_length(y_name))
                .min(area.height() - axes_y),
        );
        let map_rect = egui::Rect::from_min_size(area.min, inner + egui::vec2(axes_x, axes_y));
        let colorbar_rect = egui::Rect::from_min_max(
            egui::pos2(map_rect.right() + 8.0, map_rect.top()),
            egui::pos2(map_rect.right() + colorbar_width, map_rect.bottom()),
        );
        let (qx, qy) = grid.patch_xy(query);
        let response = ui
            .scope_builder(egui::UiBuilder::new().max_rect(map_rect), |ui| {
                let response = heatmap_ui(
                    ui,
                    id,
                    (data.rows, data.cols),
                    self.texture.id(),
                    (x_name, y_name),
                    (grid.grid_h, grid.grid_w),
                    Some(Outline::Cell(qy, qx)),
                    None,
                    true,
                );
                if stale {
                    let rect = response.response.rect;
                    pending_overlay(ui, rect, Freshness::Stale, self.job.pending());
                }
                response
            })
            .inner;
        ui.scope_builder(egui::UiBuilder::new().max_rect(colorbar_rect), |ui| {
            ui.horizontal_top(|ui| {
                colorbar_ui(
                    ui,
                    colormap,
                    self.texture.range(),
                    colorbar_rect.height() - 8.0,
                );
            });
        });
        ui.allocate_rect(map_rect.union(colorbar_rect), egui::Sense::hover());
        self.transform = Some(response.transform);
        if let Some((y, x)) = response.hovered {
            let patch = y * grid.grid_w + x;
            // The map on screen may still be of the previous grid while this one's is computed.
            let text = match data.values.get((y, x)) {
                Some(value) if data.values.dim() == (grid.grid_h, grid.grid_w) => format!(
                    "patch {patch} (column {x}, row {y}): {value:.6}\nclick to make it the query"
                ),
                _ => format!("patch {patch} (column {x}, row {y}): computing…"),
            };
            response.response.clone().on_hover_text_at_pointer(text);
        }
        response.clicked.map(|(y, x)| y * grid.grid_w + x)
    }
}
