//! ALiBi: the bias matrix of one head (or all heads as small multiples), causal or symmetric;
//! the slopes per head on a log axis; and what a query attends to when content scores are equal
//! (the softmax of its bias row) for each head.

use egui_plot::{Line, Plot, PlotPoints, Points};

use crate::colormap::Colormap;
use crate::encoding::alibi::{self, AlibiMode, AlibiParams};
use crate::engine::TableSpec;
use crate::ui::engine::AppEngine;
use crate::ui::status::Status;
use crate::views::{View, ViewContext};
use crate::widgets::heatmap::TableHeatmap;

/// What the view keeps between frames (its settings also between runs).
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct AlibiView {
    pub causal: bool,
    pub head: usize,
    /// The query row whose attention is plotted.
    pub query: usize,
    /// Every head as a small multiple on one shared scale, instead of one head large.
    pub all_heads: bool,
    #[serde(skip)]
    heatmap: TableHeatmap,
    #[serde(skip)]
    thumbnails: Vec<TableHeatmap>,
}

impl Default for AlibiView {
    fn default() -> Self {
        Self {
            causal: true,
            head: 0,
            // Clamped to the last row: in causal mode it sees every key.
            query: usize::MAX,
            all_heads: false,
            heatmap: TableHeatmap::default(),
            thumbnails: Vec::new(),
        }
    }
}

impl AlibiView {
    /// The query row drawn: the one asked for, limited to the sequence shown.
    /// The colour bar's range of the one-head matrix.
    pub fn shown_range(&self) -> (f64, f64) {
        self.heatmap.range()
    }

    pub fn shown_query(&self, shared: &crate::ui::params::SharedParams) -> usize {
        self.query.min(self.params(shared).seq - 1)
    }
}

impl AlibiView {
    /// Every head's bias, small, on the scale of the steepest head, in a grid.
    #[allow(clippy::too_many_arguments)]
    fn small_multiples_ui(
        &mut self,
        ui: &mut egui::Ui,
        params: &AlibiParams,
        slopes: &[f64],
        reduce: crate::engine::reduce::Reduce,
        colormap: Colormap,
        engine: &AppEngine,
        status: &mut Status,
    ) {
        let steepest = slopes.iter().copied().fold(0.0, f64::max);
        let scale = (-steepest * (params.seq - 1) as f64, 0.0);
        // The first head's thumbnail tells the status bar what one pixel holds.
        self.thumbnails
            .resize_with(params.heads.max(1), TableHeatmap::secondary);
        self.thumbnails[0].reports_status = true;
        let size = 96.0;
        let colorbar_width = 90.0;
        let per_row =
            (((ui.available_width() - colorbar_width) / (size + 12.0)).floor() as usize).max(1);
        let area = ui.available_rect_before_wrap();
        // The one colour scale of every head, beside the grid.
        let colorbar_rect = egui::Rect::from_min_max(
            egui::pos2(area.right() - colorbar_width + 8.0, area.top() + 24.0),
            egui::pos2(
                area.right(),
                area.top() + 24.0 + 300.0_f32.min(area.height() - 24.0),
            ),
        );
        // A child that takes no room in the grid's layout.
        ui.new_child(egui::UiBuilder::new().max_rect(colorbar_rect))
            .horizontal_top(|ui| {
                crate::widgets::heatmap::colorbar_ui(
                    ui,
                    colormap,
                    scale,
                    colorbar_rect.height() - 8.0,
                );
            });
        ui.set_max_width(area.width() - colorbar_width);
        // The bar always shown: with many heads, the ones below the fold must be seen to be
        // there.
        egui::ScrollArea::vertical()
            .scroll_bar_visibility(egui::scroll_area::ScrollBarVisibility::AlwaysVisible)
            .show(ui, |ui| {
                ui.set_width(ui.available_width());
                ui.label(format!(
                    "One colour scale for every head: {} (steepest head, farthest key) to 0{}",
                    crate::widgets::heatmap::tick_text(scale.0, scale.0),
                    if slopes.len() > 16 {
                        format!(" · all {} heads: scroll for the rest", slopes.len())
                    } else {
                        String::new()
                    }
                ));
                egui::Grid::new("alibi_small_multiples")
                    .spacing([12.0, 8.0])
                    .show(ui, |ui| {
                        for (head, thumbnail) in self.thumbnails.iter_mut().enumerate() {
                            thumbnail.fixed_range = Some(scale);
                            ui.vertical(|ui| {
                                ui.colored_label(
                                    head_color(head, slopes.len()),
                                    format!(
                                        "head {head}: m = {}",
                                        crate::numbers::slope(slopes[head])
                                    ),
                                )
                                .on_hover_text(format!("slope m = {}", slopes[head]));
                                let spec = TableSpec::Alibi {
                                    params: *params,
                                    head: Some(head),
                                };
                                let response = thumbnail
                                    .thumbnail_ui(
                                        ui, &spec, 0, size, reduce, colormap, engine, status,
                                    )
                                    .interact(egui::Sense::click())
                                    .on_hover_text("Click to see this head large");
                                if response.clicked() {
                                    self.head = head;
                                    self.all_heads = false;
                                }
                            });
                            if (head + 1) % per_row == 0 {
                                ui.end_row();
                            }
                        }
                    });
            });
    }
}

/// The slope of every head on a log2 axis.
fn slopes_ui(ui: &mut egui::Ui, slopes: &[f64], selected: usize, height: f32) {
    let points: Vec<[f64; 2]> = slopes
        .iter()
        .enumerate()
        .map(|(h, m)| [h as f64, m.log2()])
        .collect();
    let response = Plot::new("alibi_slopes")
        .height(height)
        .x_axis_label("head")
        .x_grid_spacer(crate::widgets::layout::nice_ticks)
        .x_axis_formatter(|mark, _| crate::widgets::layout::tick_label(mark))
        .y_grid_spacer(crate::widgets::layout::decade_ticks)
        .y_axis_label("slope m (log scale)")
        .y_axis_formatter(|mark, _| crate::widgets::layout::power_label(2, mark))
        .show(ui, |plot_ui| {
            for (head, &point) in points.iter().enumerate() {
                plot_ui.points(
                    Points::new(format!("head {head}"), PlotPoints::from(vec![point]))
                        .radius(3.5)
                        .color(head_color(head, points.len())),
                );
            }
            if let Some(&p) = points.get(selected) {
                plot_ui.points(
                    Points::new("selected head", PlotPoints::from(vec![p]))
                        .radius(7.0)
                        .filled(false)
                        .color(head_color(selected, points.len())),
                );
            }
        });
    crate::widgets::layout::record_plot(ui.ctx(), "alibi_slopes", &response.transform);
}

/// What query `query` attends to with equal content scores: softmax of its bias row, per head.
fn attention_ui(
    ui: &mut egui::Ui,
    slopes: &[f64],
    params: &AlibiParams,
    query: usize,
    height: f32,
) {
    // A handful of heads keeps the plot readable: first, last and evenly between.
    let shown = 8.min(slopes.len());
    let heads: Vec<usize> = (0..shown)
        .map(|k| {
            if shown == 1 {
                0
            } else {
                k * (slopes.len() - 1) / (shown - 1)
            }
        })
        .collect();
    let curves: Vec<(usize, f64, Vec<[f64; 2]>)> = heads
        .iter()
        .map(|&head| {
            let (on_query, points) = attention_curve(slopes[head], params, query);
            (head, on_query, points)
        })
        .collect();
    // The curves reach every corner at some length: the legend sits above the chart.
    let mut entries: Vec<(egui::Color32, String)> = curves
        .iter()
        .map(|(head, on_query, _)| {
            (
                head_color(*head, slopes.len()),
                format!("head {head}: {on_query:.3}"),
            )
        })
        .collect();
    entries.push((
        ui.visuals().weak_text_color(),
        "(the weight on the query itself)".to_owned(),
    ));
    let legend_height = crate::widgets::layout::legend_row(ui, &entries);
    let response = Plot::new("alibi_attention")
        .height(height - legend_height)
        // Log axes: the weights fall over decades, and at thousands of keys a linear key axis
        // squeezes every curve into the few pixels next to the query.
        .x_axis_label("distance from the query |i − j| (log scale)")
        .x_grid_spacer(crate::widgets::layout::decade_ticks)
        .x_axis_formatter(|mark, _| crate::widgets::layout::power_label(10, mark))
        .y_axis_label("attention weight of one key (log scale)")
        .y_grid_spacer(crate::widgets::layout::decade_ticks)
        .y_axis_formatter(|mark, _| crate::widgets::layout::power_label(10, mark))
        .show(ui, |plot_ui| {
            for (head, on_query, points) in curves {
                plot_ui.line(
                    Line::new(
                        format!("head {head}: {on_query:.3} on the query itself"),
                        PlotPoints::from(points),
                    )
                    .color(head_color(head, slopes.len())),
                );
            }
        });
    crate::widgets::layout::record_plot(ui.ctx(), "alibi_attention", &response.transform);
}

/// Head `head` of `heads` in the slopes, the attention curves and the thumbnails' titles.
fn head_color(head: usize, heads: usize) -> egui::Color32 {
    crate::colormap::rgb(crate::scene::series_color(head, heads))
}

/// The weight query `query` gives itself, and its weights at each distance `(log10 d,
/// log10 w)`, with equal content scores: softmax of its bias row.
fn attention_curve(slope: f64, params: &AlibiParams, query: usize) -> (f64, Vec<[f64; 2]>) {
    let keys = params.seq;
    let row: Vec<f64> = (0..keys)
        .map(|j| alibi::bias_value(slope, params.mode, query, j))
        .collect();
    let peak = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let total: f64 = row.iter().map(|b| (b - peak).exp()).sum();
    let weight = |j: usize| (row[j] - peak).exp() / total;
    // One key per distance (both sides weigh alike in symmetric mode): the keys before the
    // query, or after it where there are none before.
    let points = (1..keys)
        .filter_map(|d| {
            let j = query.checked_sub(d).or_else(|| {
                (params.mode == AlibiMode::Symmetric && query + d < keys).then_some(query + d)
            })?;
            let w = weight(j);
            (w >= MIN_WEIGHT).then(|| [(d as f64).log10(), w.log10()])
        })
        .collect();
    (weight(query), points)
}

impl AlibiView {
    /// The parameters drawn: the matrix is `[seq, seq]`, so sizes stay to what a screen can
    /// show usefully.
    fn params(&self, shared: &crate::ui::params::SharedParams) -> AlibiParams {
        AlibiParams {
            heads: shared.heads,
            seq: shared.seq.min(MAX_SEQ),
            mode: if self.causal {
                AlibiMode::Causal
            } else {
                AlibiMode::Symmetric
            },
        }
    }
}

/// Attention weights below this are left off the curves (they would reach 1e-300).
const MIN_WEIGHT: f64 = 1e-12;

/// The longest sequence the view draws.
pub const MAX_SEQ: usize = 8192;

impl View for AlibiView {
    fn export(&self, shared: &crate::ui::params::SharedParams) -> Option<crate::views::ViewExport> {
        let params = self.params(shared);
        let head = (!self.all_heads).then_some(self.head.min(params.heads - 1));
        Some(crate::views::ViewExport {
            figure: crate::export::figure::FigureSpec::Alibi(crate::export::figure::AlibiFigure {
                params,
                head,
            }),
            data: Some(TableSpec::Alibi { params, head }),
            name: match head {
                Some(h) => format!("alibi_head{h}"),
                None => "alibi_heads".to_owned(),
            },
        })
    }

    fn ui(&mut self, ui: &mut egui::Ui, ctx: &mut ViewContext<'_>) {
        let (shared, colormap, engine, reduce) = (ctx.shared, ctx.colormap, ctx.engine, ctx.reduce);
        let status = &mut *ctx.status;
        let heads = shared.heads;
        let params = self.params(shared);
        let seq = params.seq;
        // The view keeps the head and query asked for; a shorter sequence or fewer heads only
        // limit what is drawn, so that going back restores them.
        let (mut head, mut query) = (self.head.min(heads - 1), self.shown_query(shared));
        let Ok(slopes) = alibi::slopes(heads) else {
            return;
        };
        ui.horizontal_wrapped(|ui| {
            ui.checkbox(&mut self.all_heads, "All heads")
                .on_hover_text("Every head as a small multiple, all on one colour scale; click one to see it large");
            ui.checkbox(&mut self.causal, "Causal").on_hover_text(
                "Mask keys after the query with -inf (decoders); off: -m|i-j| both ways",
            );
            if ui
                .add(crate::widgets::number_box::NumberBox::slider(&mut head, 0..=heads - 1).text("Head"))
                .on_hover_text("The head whose bias matrix is drawn")
                .changed()
            {
                self.head = head;
            }
            if ui
                .add(
                    crate::widgets::number_box::NumberBox::slider(&mut query, 0..=seq - 1)
                        .text("Query position")
                )
                .on_hover_text(
                    "The query whose attention weights (softmax of its bias row) are plotted",
                )
                .changed()
            {
                self.query = query;
            }
            // Each note whole, on the next row when the window is too narrow for it.
            ui.add(
                egui::Label::new(format!(
                    "slope m = {:.6} = {}",
                    slopes[head],
                    crate::numbers::slope(slopes[head])
                ))
                .extend(),
            );
            if shared.seq > seq {
                ui.add(egui::Label::new(format!("(showing the first {seq} positions)")).extend());
            }
        });
        // The matrix (or the small multiples) on the left, slopes above attention on the right:
        // each in a rectangle of its own, so that none pushes another off the window.
        // The matrix (or the small multiples) takes the left column, as tall as its width
        // allows, the slopes the room under it; the attention curves, the other half of the
        // lesson, the whole right column. Nothing is left empty at 1280 x 800 or 1920 x 1080.
        let full = ui.available_rect_before_wrap();
        let (left, attention_rect) = crate::widgets::layout::split_columns(full, 0.58, 12.0);
        let (left, slopes_rect) = if self.all_heads {
            crate::widgets::layout::split_rows(left, 0.8, 8.0)
        } else {
            // A square matrix needs its width (less the colour bar) plus its axes in height.
            let matrix_height = (left.width() - 100.0).min(left.height() * 0.72);
            crate::widgets::layout::split_rows(left, matrix_height / left.height(), 8.0)
        };
        ui.allocate_rect(full, egui::Sense::hover());
        ui.scope_builder(egui::UiBuilder::new().max_rect(slopes_rect), |ui| {
            slopes_ui(ui, &slopes, head, slopes_rect.height());
        });
        ui.scope_builder(egui::UiBuilder::new().max_rect(attention_rect), |ui| {
            attention_ui(ui, &slopes, &params, query, attention_rect.height());
        });
        let ui = &mut ui.new_child(egui::UiBuilder::new().max_rect(left));
        {
            {
                if self.all_heads {
                    ui.vertical(|ui| {
                        self.small_multiples_ui(
                            ui, &params, &slopes, reduce, colormap, engine, status,
                        );
                    });
                    return;
                }
                self.heatmap.square_cells = true;
                let spec = TableSpec::Alibi {
                    params,
                    head: Some(head),
                };
                let response = self.heatmap.ui(
                    ui,
                    "alibi_bias",
                    &spec,
                    0,
                    ("key j", "query i"),
                    reduce,
                    colormap,
                    engine,
                    status,
                );
                if let Some(response) = response
                    && let Some((i, j)) = response.hovered
                {
                    let value = alibi::bias_value(slopes[head], params.mode, i, j);
                    response.show_hover(format!(
                        "head {}, query {i}, key {j}, distance {}\nbias = {value}",
                        head,
                        j as i64 - i as i64
                    ));
                }
            }
        }
    }
}

/// The view in the picker: its name, first hint, explanation and the shared controls it leaves
/// unused.
pub const INFO: crate::views::ViewInfo = crate::views::ViewInfo {
    label: "ALiBi",
    hint: "Pick a head, or All heads to compare them · move the query to see what it attends to · hover for the bias",
    explanation: crate::widgets::explainer::Explanation {
        formula: "bias[h, i, j] = −m_h·|i − j|,  m_h = 2^(−8(h+1)/H) for H heads (H a power of two)",
        reading: "The matrix: query i down, key j across, colour the bias added to the attention logit (0 on the diagonal, more negative further away; \
              causal mode masks keys after the query). The slopes: one per head on a log axis. \
              The curves: the query's attention over the keys when every content score is equal, i.e. the softmax of its bias row, \
              against the distance from the query, both on log axes (one key per distance; the weight on the query itself is in the legend).",
        convention: "Slopes as get_slopes in ofirpress/attention_with_linear_biases, including its rule for a head count that is not a power of two \
                 (the slopes of the next power down, then every other slope of twice that many).",
        try_these: &[
            "Tick All heads: the first head looks only a few tokens back, the last one almost everywhere.",
            "Set Heads to 12 and look at the slopes: not one geometric series, but two interleaved.",
            "Move the query to the last position and compare the heads' attention curves.",
        ],
    },
    unused: unused_controls,
};

/// Why this view does not use a shared control, or `None` where it does (its control is then
/// disabled with this as the tooltip).
fn unused_controls(param: crate::ui::params::SharedParam) -> Option<&'static str> {
    use crate::ui::params::SharedParam::*;
    match param {
        Dim | Base | Layout | Spacing => {
            Some("ALiBi has no frequencies: its bias is -m·|i - j| with one slope m per head")
        }
        Start => Some("ALiBi depends only on the distance i - j, not on where the sequence starts"),
        _ => None,
    }
}
