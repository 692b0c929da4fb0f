//! The sinusoidal table as a heatmap; clicking a column plots that dimension against position
//! with its wavelength marked.

use egui_plot::{Line, Plot, PlotPoints, VLine};

use crate::encoding::sinusoidal::SinusoidalParams;
use crate::engine::{Strided, Table, TableSpec, Window};
use crate::ui::engine::AppEngine;
use crate::views::{View, ViewContext};
use crate::widgets::heatmap::{HeatmapData, TableHeatmap};
use crate::widgets::layout::NiceAxes;

/// What the view keeps between frames (the column chosen also between runs).
#[derive(Default, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct SinusoidalView {
    #[serde(skip)]
    heatmap: TableHeatmap,
    /// The column whose curve is plotted.
    pub selected_column: Option<usize>,
    #[serde(skip)]
    column_curve: Option<(SinusoidalParams, usize, ColumnCurve)>,
    /// The column curve being computed on a worker thread.
    #[serde(skip)]
    column_job: crate::jobs::Latest<(SinusoidalParams, usize), Option<ColumnCurve>>,
}

/// A curve's `(position, value)` points.
type Points = Vec<[f64; 2]>;

/// A curve as drawn: its `(position, value)` points, and the min and max lines where a point
/// stands for several rows.
pub type ShownCurve<'a> = (&'a [[f64; 2]], Option<(&'a [[f64; 2]], &'a [[f64; 2]])>);

/// A column against position: one point per row, or, where a point stands for several rows,
/// their mean with the band from their min to their max.
#[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ColumnCurve {
    #[serde(with = "crate::jobs::remote::bulk")]
    mean: Vec<[f64; 2]>,
    /// The min and max of the rows each point stands for.
    #[serde(with = "crate::jobs::remote::bulk_option")]
    envelope: Option<(Points, Points)>,
}

/// Column `col` of a sinusoidal table as a curve: a job for a worker (on the web, a Web
/// Worker with the CPU engine; on the desktop, a thread with the app's engine).
#[derive(serde::Serialize, serde::Deserialize)]
pub struct ColumnJob {
    pub params: SinusoidalParams,
    pub col: usize,
    #[serde(skip)]
    pub engine: crate::ui::engine::EngineHandle,
}

impl crate::jobs::remote::RemoteJob for ColumnJob {
    const NAME: &'static str = "sinusoidal-column";
    type Output = Option<ColumnCurve>;

    fn run(
        self,
        _progress: &crate::jobs::remote::Progress<Self::Output>,
    ) -> Result<Self::Output, crate::jobs::Cancelled> {
        let (spec, window) = column_window(&self.params, self.col);
        let values = self.engine.window(&spec, &every_row(&window));
        Ok(column_curve(&spec, &window, values))
    }
}

impl ColumnJob {
    /// As the job runs, the column computed by the browser's WebGPU device and read back
    /// without waiting (the web page's thread is the page's own).
    async fn run_on_browser_gpu(self) -> Option<ColumnCurve> {
        let (spec, window) = column_window(&self.params, self.col);
        let values = self.engine.window_async(&spec, &every_row(&window)).await;
        crate::jobs::note_finished(<Self as crate::jobs::remote::RemoteJob>::NAME, "WebGPU");
        column_curve(&spec, &window, values)
    }
}

/// `window` with every row: a column is computed whole, then each point's rows reduced.
fn every_row(window: &Window) -> Window {
    Window {
        rows: Strided {
            step: 1,
            ..window.rows
        },
        ..*window
    }
}

/// The table and window of column `col`: every row, or one point per [`window_rows`] rows.
fn column_window(params: &SinusoidalParams, col: usize) -> (TableSpec, Window) {
    let window = Window {
        rows: Strided {
            step: window_rows(params),
            ..Strided::all(params.seq)
        },
        cols: Strided {
            start: col,
            end: col + 1,
            step: 1,
        },
        heads: Strided::all(1),
    };
    (TableSpec::Sinusoidal(*params), window)
}

/// Rows one point of a column's curve stands for (at most 4096 points).
fn window_rows(params: &SinusoidalParams) -> usize {
    params.seq.div_ceil(4096).max(1)
}

/// The column of `window` as a curve, from `values`, its [`every_row`] window: exact where
/// a point is one row, reduced otherwise (a million rows are computed in tens of
/// milliseconds, then each point's rows reduced here, rather than a reduction per point).
fn column_curve(
    spec: &TableSpec,
    window: &Window,
    values: Result<Table, crate::engine::EngineError>,
) -> Option<ColumnCurve> {
    use crate::engine::reduce::{Reduce, bin};
    let first = match spec {
        TableSpec::Sinusoidal(p) => p.start,
        _ => 0,
    };
    let centre = |k: usize| {
        let cells = bin(&window.rows, k);
        (first + cells.start as u64) as f64 + (cells.len() - 1) as f64 / 2.0
    };
    let Ok(Table::Real(values)) = values else {
        return None;
    };
    if window.rows.step == 1 {
        let mean = values
            .iter()
            .enumerate()
            .map(|(k, &v)| [centre(k), v])
            .collect();
        return Some(ColumnCurve {
            mean,
            envelope: None,
        });
    }
    let Ok(column) = values.into_shape_with_order((window.rows.end - window.rows.start, 1)) else {
        return None;
    };
    // The bins counted from the column's first row, as the column is.
    let bins = Strided {
        start: 0,
        end: window.rows.end - window.rows.start,
        step: window.rows.step,
    };
    let reduced = |reduce: Reduce| {
        crate::engine::reduce::reduce_array(&column, &bins, &Strided::all(1), reduce)
    };
    let [mean, low, high] = [Reduce::Mean, Reduce::Min, Reduce::Max].map(reduced);
    let points = |values: &ndarray::Array2<f64>| -> Vec<[f64; 2]> {
        values
            .iter()
            .enumerate()
            .map(|(k, &v)| [centre(k), v])
            .collect()
    };
    Some(ColumnCurve {
        mean: points(&mean),
        envelope: Some((points(&low), points(&high))),
    })
}

impl SinusoidalView {
    /// The value range the heatmap's colours (and colour bar) span now.
    pub fn shown_range(&self) -> (f64, f64) {
        self.heatmap.range()
    }

    /// Whether the heatmap on screen is a coarse preview.
    pub fn shows_preview(&self) -> bool {
        self.heatmap.shows_preview()
    }

    /// How the heatmap on screen relates to the settings asked for.
    pub fn freshness(&self) -> Option<crate::widgets::heatmap::Freshness> {
        self.heatmap.freshness_now()
    }

    /// The window of the table on screen, with its values.
    pub fn shown(&self, engine: &AppEngine) -> Option<HeatmapData> {
        self.heatmap.shown(engine)
    }

    /// The column curve shown: `(position, mean)` points, and the min and max lines where a
    /// point stands for several rows.
    pub fn shown_column_curve(&self) -> Option<ShownCurve<'_>> {
        self.column_curve.as_ref().map(|(_, _, curve)| {
            (
                curve.mean.as_slice(),
                curve
                    .envelope
                    .as_ref()
                    .map(|(low, high)| (low.as_slice(), high.as_slice())),
            )
        })
    }

    /// Column `col` against position, with its wavelength marked.
    fn column_ui(
        &mut self,
        ui: &mut egui::Ui,
        params: &SinusoidalParams,
        col: usize,
        engine: &AppEngine,
        status: &mut crate::ui::status::Status,
    ) {
        let stale = self
            .column_curve
            .as_ref()
            .is_none_or(|(p, c, _)| p != params || *c != col);
        if stale && !self.column_job.wants(&(*params, col)) {
            let job = ColumnJob {
                params: *params,
                col,
                engine: engine.handle(),
            };
            let what = format!("computing column {col}");
            if job.engine.is_browser_gpu() {
                self.column_job
                    .request_async(Some(ui.ctx()), (*params, col), what, move |_| {
                        Box::pin(async move { Ok(job.run_on_browser_gpu().await) })
                    });
            } else {
                self.column_job
                    .request_remote(Some(ui.ctx()), (*params, col), what, job);
            }
        }
        for update in self.column_job.poll(Some(ui.ctx())) {
            if let crate::jobs::Update::Done(Some(curve), _) = update {
                let (asked, asked_col) =
                    self.column_job.wanted().copied().unwrap_or((*params, col));
                self.column_curve = Some((asked, asked_col, curve));
            }
        }
        if let Some(pending) = self.column_job.pending() {
            status.pending(pending.clone());
            ui.ctx().request_repaint();
        }
        let (pair, is_cos) = params.column_pair(col);
        let frequency = params.frequencies()[pair];
        let wavelength = std::f64::consts::TAU / frequency;
        ui.horizontal(|ui| {
            ui.label(format!(
                "Column {col}: {} of frequency {} rad/position, wavelength {} positions",
                if is_cos { "cos" } else { "sin" },
                crate::numbers::scientific(frequency, 5),
                crate::numbers::fixed(wavelength, 1)
            ));
            if ui.button("Close").clicked() {
                self.selected_column = None;
            }
        });
        if let Some((shown_params, shown_col, curve)) = &self.column_curve {
            if shown_params != params || *shown_col != col {
                ui.label(
                    egui::RichText::new(
                        "computing the new column; the curve below is of the previous settings",
                    )
                    .color(ui.visuals().warn_fg_color),
                );
            }
            if window_rows(params) > 1 {
                ui.label(format!(
                    "Each point is the mean of {} rows, with their min and max as faint lines (a curve through one row in {} would draw aliasing).",
                    window_rows(params),
                    window_rows(params)
                ));
            }
            Plot::new("sinusoidal_column")
                .height(150.0)
                .x_axis_label("position")
                .y_axis_label("value")
                .nice_axes()
                .show(ui, |plot_ui| {
                    if let Some((low, high)) = &curve.envelope {
                        // The envelope as two faint lines (a filled band would need a convex
                        // outline).
                        let faint = egui::Color32::from_rgb(120, 120, 140);
                        for (name, points) in [("min", low), ("max", high)] {
                            plot_ui.line(
                                Line::new(name, PlotPoints::from(points.clone()))
                                    .color(faint)
                                    .width(1.0),
                            );
                        }
                    }
                    plot_ui.line(Line::new(
                        format!("column {col}"),
                        PlotPoints::from(curve.mean.clone()),
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
    // Numbers as the rest of the app prints them (1,048,576; 8.659643 × 10⁻³).
    let frequency_text = crate::numbers::scientific(frequency, 7);
    format!(
        "position {}, dimension {col}\n{}({} × {frequency_text}) = {value:.9}\nfrequency {frequency_text} rad/position, wavelength {} positions",
        crate::numbers::thousands(position),
        if is_cos { "cos" } else { "sin" },
        crate::numbers::thousands(position),
        crate::numbers::fixed(std::f64::consts::TAU / frequency, 2)
    )
}

impl View for SinusoidalView {
    fn export(&self, shared: &crate::ui::params::SharedParams) -> Option<crate::views::ViewExport> {
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
            self.column_ui(ui, &params, col, engine, status);
        }
    }
}

/// The view in the picker: its name, first hint, explanation and the shared controls it leaves
/// unused.
pub const INFO: crate::views::ViewInfo = crate::views::ViewInfo {
    label: "Sinusoidal table",
    hint: "Click a column to plot it · scroll to zoom, drag to pan, double-click to reset · hover a cell for its value",
    explanation: crate::widgets::explainer::Explanation {
        formula: "PE[p, 2i] = sin(p·ω_i),  PE[p, 2i+1] = cos(p·ω_i),  ω_i = base^(−2i/d)",
        reading: "Rows are positions p (from Start down), columns the d dimensions; colour is the value, from −1 to +1. \
              Each sine/cosine pair turns like a clock hand at its own speed ω_i: the left columns flicker every few rows, \
              the right ones change so slowly that they look constant. Where a pixel covers several rows, it shows their mean, min or max (side panel).",
        convention: "Interleaved layout with Vaswani spacing is the formula of \"Attention Is All You Need\". \
                 Split layout (all sines, then all cosines) with t2t spacing base^(−i/(d/2−1)) is tensor2tensor's get_timing_signal_1d and fairseq's.",
        try_these: &[
            "Drag the base to 500000 and watch the right-hand columns freeze: their wavelength 2π·base^(2i/d) is far longer than the sequence.",
            "Click a column to plot it against position; its wavelength is marked.",
            "Set Start to 1000000: the table still looks the same, because a position only sets angles, and angles wrap.",
        ],
    },
    unused: unused_controls,
};

/// Why this view does not use a shared control, or `None` where it does (its control is then
/// disabled with this as the tooltip).
fn unused_controls(param: crate::ui::params::SharedParam) -> Option<&'static str> {
    use crate::ui::params::SharedParam::*;
    match param {
        Heads => Some("Sinusoidal tables have no heads: every head adds the same table"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A column of every row and one of a million rows reduced to points give the same
    /// through a Web Worker's parcels as here.
    #[test]
    fn the_column_job_gives_the_same_through_parcels() {
        for (seq, col) in [(300, 5), (1 << 20, 63)] {
            crate::jobs::remote::same_through_parcels(|| ColumnJob {
                params: SinusoidalParams {
                    seq,
                    dim: 64,
                    ..Default::default()
                },
                col,
                engine: crate::ui::engine::EngineHandle::default(),
            })
            .expect("the same curve");
        }
    }
}
