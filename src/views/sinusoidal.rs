//! The sinusoidal table as a heatmap; clicking a column plots that dimension against position
//! with its wavelength marked.

use egui_plot::{Line, Plot, PlotPoints, VLine};

use crate::app::engine::AppEngine;
use crate::encoding::sinusoidal::SinusoidalParams;
use crate::engine::{Strided, Table, TableSpec, Window};
use crate::views::{View, ViewContext};
use crate::widgets::heatmap::{HeatmapData, TableHeatmap};

/// What the view keeps between frames (the column chosen also between runs).
#[derive(Default, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct SinusoidalView {
    #[serde(skip)]
    heatmap: TableHeatmap,
    /// The column whose curve is plotted.
    pub selected_column: Option<usize>,
    #[serde(skip)]
    column_curve: Option<(SinusoidalParams, usize, Vec<[f64; 2]>)>,
}

impl SinusoidalView {
    /// The window of the table on screen, with its values.
    pub fn shown(&self, engine: &AppEngine) -> Option<HeatmapData> {
        self.heatmap.shown(engine)
    }

    /// Column `col` against position, with its wavelength marked.
    fn column_ui(
        &mut self,
        ui: &mut egui::Ui,
        params: &SinusoidalParams,
        col: usize,
        engine: &AppEngine,
    ) {
        let stale = self
            .column_curve
            .as_ref()
            .is_none_or(|(p, c, _)| p != params || *c != col);
        if stale {
            let spec = TableSpec::Sinusoidal(*params);
            let window = Window {
                rows: Strided {
                    step: params.seq.div_ceil(4096).max(1),
                    ..Strided::all(params.seq)
                },
                cols: Strided {
                    start: col,
                    end: col + 1,
                    step: 1,
                },
                heads: Strided::all(1),
            };
            if let Ok((Table::Real(values), _)) = engine.compute_window(&spec, &window) {
                let points = values
                    .iter()
                    .enumerate()
                    .map(|(k, &v)| [(params.start + window.rows.at(k) as u64) as f64, v])
                    .collect();
                self.column_curve = Some((*params, col, points));
            }
        }
        let (pair, is_cos) = params.column_pair(col);
        let frequency = params.frequencies()[pair];
        let wavelength = std::f64::consts::TAU / frequency;
        ui.horizontal(|ui| {
            ui.label(format!(
                "Column {col}: {} of frequency {frequency:.4e} rad/position, wavelength {wavelength:.1} positions",
                if is_cos { "cos" } else { "sin" }
            ));
            if ui.button("Close").clicked() {
                self.selected_column = None;
            }
        });
        if let Some((_, _, points)) = &self.column_curve {
            Plot::new("sinusoidal_column")
                .height(150.0)
                .x_axis_label("position")
                .y_axis_label("value")
                .x_grid_spacer(crate::widgets::layout::nice_ticks)
                .x_axis_formatter(|mark, _| crate::widgets::layout::tick_label(mark))
                .y_grid_spacer(crate::widgets::layout::nice_ticks)
                .y_axis_formatter(|mark, _| crate::widgets::layout::tick_label(mark))
                .show(ui, |plot_ui| {
                    plot_ui.line(Line::new(
                        format!("column {col}"),
                        PlotPoints::from(points.clone()),
                    ));
                    let first = params.start as f64;
                    plot_ui.vline(VLine::new("one wavelength", first + wavelength));
                });
        }
    }
}

/// What a hovered cell means.
fn hover_text(params: &SinusoidalParams, row: usize, col: usize) -> String {
    let (pair, is_cos) = params.column_pair(col);
    let frequency = params.frequencies()[pair];
    let position = params.start + row as u64;
    let value = crate::encoding::sinusoidal::SinusoidalValues::new(params)
        .map(|v| v.value(row, col))
        .unwrap_or(f64::NAN);
    format!(
        "position {position}, dimension {col}\n{}({position} × {frequency:.6e}) = {value:.9}\nfrequency {frequency:.6e} rad/position, wavelength {:.2} positions",
        if is_cos { "cos" } else { "sin" },
        std::f64::consts::TAU / frequency
    )
}

impl View for SinusoidalView {
    fn export(
        &self,
        shared: &crate::app::params::SharedParams,
    ) -> Option<crate::views::ViewExport> {
        let params = shared.sinusoidal();
        Some(crate::views::ViewExport {
            figure: crate::export::figure::FigureSpec::Sinusoidal(params),
            data: Some(TableSpec::Sinusoidal(params)),
            name: format!("sinusoidal_{}x{}", params.seq, params.dim),
        })
    }

    fn ui(&mut self, ui: &mut egui::Ui, ctx: &mut ViewContext<'_>) {
        let (shared, colormap, engine, reduce) = (ctx.shared, ctx.colormap, ctx.engine, ctx.reduce);
        let status = &mut *ctx.status;
        let params = shared.sinusoidal();
        let spec = TableSpec::Sinusoidal(params);
        let curve_height = if self.selected_column.is_some() {
            200.0
        } else {
            0.0
        };
        let height = (ui.available_height() - curve_height).max(200.0);
        let width = ui.available_width();
        ui.allocate_ui(egui::vec2(width, height), |ui| {
            let response = self.heatmap.ui(
                ui,
                "sinusoidal_table",
                &spec,
                0,
                ("dimension", "position (row)"),
                reduce,
                colormap,
                engine,
                status,
            );
            if let Some(response) = response {
                if let Some((row, col)) = response.hovered {
                    let text = hover_text(&params, row, col);
                    response.show_hover(text);
                }
                if let Some((_, col)) = response.clicked {
                    self.selected_column = Some(col);
                }
            }
        });
        if let Some(col) = self.selected_column.filter(|&c| c < params.dim) {
            self.column_ui(ui, &params, col, engine);
        }
    }
}
