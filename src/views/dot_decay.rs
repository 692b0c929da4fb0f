//! Dot-product decay: `PE[a]·PE[a+k]` against the offset `k` (raw or normalised), pinned curves
//! to compare bases and dimensions, the `[seq, seq]` similarity heatmap that shows the product
//! depends only on the distance, and RoFormer's long-term decay bound for RoPE.

use egui_plot::{Line, Plot, PlotPoints};

use crate::encoding::rope;
use crate::encoding::sinusoidal::SinusoidalParams;
use crate::engine::TableSpec;
use crate::ui::engine::AppEngine;
use crate::ui::status::Status;
use crate::views::{View, ViewContext};
use crate::widgets::heatmap::TableHeatmap;
use crate::widgets::layout::NiceAxes;
use crate::widgets::layout::{split_columns, split_rows};

/// A curve kept on the plot while the parameters change: its raw values and the dimension they
/// belong to, so that it follows the Normalised toggle like the live curve.
#[derive(serde::Serialize, serde::Deserialize)]
struct PinnedCurve {
    label: String,
    dim: usize,
    raw: Vec<[f64; 2]>,
}

impl PinnedCurve {
    /// Its points, divided by `d/2` (its own `d`) when `normalised`.
    fn points(&self, normalised: bool) -> Vec<[f64; 2]> {
        let scale = if normalised {
            2.0 / self.dim as f64
        } else {
            1.0
        };
        self.raw.iter().map(|&[k, v]| [k, v * scale]).collect()
    }
}

/// The decay curve on screen and what it was computed for.
struct Curve {
    params: SinusoidalParams,
    anchor: usize,
    normalised: bool,
    /// Offsets per point (the mean of them where more than one).
    per_point: usize,
    points: Vec<[f64; 2]>,
    /// Where a point covers several offsets: their least and largest value, per point (`None`
    /// until computed, a few seconds after the means at a million rows).
    envelope: Option<Vec<[f64; 2]>>,
}

/// A curve's means, and the min/max envelope of the offsets each point covers where a point
/// covers several (`None` in the preview that carries the means alone).
pub type CurveValues = (Vec<[f64; 2]>, Option<Vec<[f64; 2]>>);

/// The share of the view's width the curves take (the similarity matrix the rest), and the gap
/// between them.
const CURVE_SHARE: f32 = 0.5;
const COLUMN_GAP: f32 = 12.0;

/// Offsets one point of the curve stands for, in a plot `pixels` physical pixels wide: about
/// one point per pixel (in powers of two, so that resizing the window by a few pixels does not
/// recompute), at least 256 and at most 4096 points.
fn offsets_per_point(seq: usize, pixels: f32) -> usize {
    // Clamped first: a power of two above usize's range would overflow.
    let points = (pixels.clamp(1.0, 4096.0) as usize)
        .next_power_of_two()
        .clamp(256, 4096);
    seq.div_ceil(points).max(1)
}

/// What a decay curve is computed for: the table, the anchor, whether normalised, and the
/// offsets one point stands for.
type CurveKey = (SinusoidalParams, usize, bool, usize);

/// What the view keeps between frames (its settings and pins also between runs).
#[derive(Default, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct DotDecayView {
    /// Row of the anchor `a`.
    pub anchor: usize,
    pub normalised: bool,
    pub show_rope_bound: bool,
    #[serde(skip)]
    similarity: TableHeatmap,
    #[serde(skip)]
    curve: Option<Curve>,
    /// The curve being computed: `(params, anchor, normalised, offsets per point)`.
    #[serde(skip)]
    curve_job: crate::jobs::Latest<CurveKey, Result<CurveValues, String>>,
    pinned: Vec<PinnedCurve>,
}

/// The decay curve, and where a point covers several offsets their least and largest
/// products: a job for a worker (a Web Worker on the web: the envelope takes seconds at a
/// million rows). The means come first, as a preview.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct DecayJob {
    params: SinusoidalParams,
    anchor: usize,
    normalised: bool,
    per_point: usize,
    #[serde(skip)]
    engine: crate::ui::engine::EngineHandle,
}

impl crate::jobs::remote::RemoteJob for DecayJob {
    const NAME: &'static str = "dot-decay-curve";
    type Output = Result<CurveValues, String>;

    fn run(
        self,
        progress: &crate::jobs::remote::Progress<Self::Output>,
    ) -> Result<Self::Output, crate::jobs::Cancelled> {
        let (params, anchor, normalised, per_point) =
            (self.params, self.anchor, self.normalised, self.per_point);
        let means = crate::scene::dot_decay::decay_curve(
            &params,
            anchor,
            normalised,
            per_point,
            |spec, window| self.engine.window(spec, window),
        );
        let means = match means {
            Ok(means) => means,
            Err(error) => return Ok(Err(error.to_string())),
        };
        if per_point == 1 {
            return Ok(Ok((means, None)));
        }
        // The means first (closed form, milliseconds), then each point's min and max, which
        // visit every offset.
        progress.preview(Ok((means.clone(), None)));
        let envelope = crate::scene::dot_decay::decay_envelope(
            &params,
            anchor,
            normalised,
            per_point,
            progress.cancel(),
        )?;
        Ok(envelope
            .map(|envelope| (means, Some(envelope)))
            .map_err(|e| e.to_string()))
    }
}

impl DecayJob {
    /// As the job runs where each point is one offset (no envelope), the products computed
    /// by the browser's WebGPU device and read back without waiting.
    async fn run_on_browser_gpu(self) -> Result<CurveValues, String> {
        let (spec, window) =
            crate::scene::dot_decay::decay_window(&self.params, self.anchor, self.per_point);
        let values: Vec<f64> = self
            .engine
            .window_async(&spec, &window)
            .await
            .map_err(|e| e.to_string())?
            .into_real()
            .into_iter()
            .collect();
        crate::jobs::note_finished(<Self as crate::jobs::remote::RemoteJob>::NAME, "WebGPU");
        let points = crate::scene::dot_decay::decay_points(
            &self.params,
            self.anchor,
            self.normalised,
            &window,
            &values,
        );
        Ok((points, None))
    }
}

impl DotDecayView {
    /// The pinned curves as drawn now: `(label, points)`.
    pub fn shown_pins(&self) -> Vec<(String, Vec<[f64; 2]>)> {
        self.pinned
            .iter()
            .map(|pin| (pin.label.clone(), pin.points(self.normalised)))
            .collect()
    }

    /// The decay curve on screen: `(offset k, value)`.
    /// The similarity matrix's colour bar range.
    pub fn shown_similarity_range(&self) -> (f64, f64) {
        self.similarity.range()
    }

    /// The least and largest value of the offsets each point of the curve covers, once
    /// computed.
    pub fn shown_envelope(&self) -> Option<&[[f64; 2]]> {
        self.curve.as_ref()?.envelope.as_deref()
    }

    pub fn shown_curve(&self) -> Option<&[[f64; 2]]> {
        self.curve.as_ref().map(|curve| curve.points.as_slice())
    }

    /// Asks a worker for the curve of these settings (millions of cosines at d = 4096), and
    /// takes it once it has arrived; the previous curve stays on screen meanwhile.
    fn update_curve(
        &mut self,
        ui: &egui::Ui,
        params: &SinusoidalParams,
        per_point: usize,
        engine: &AppEngine,
        status: &mut Status,
    ) {
        let key = (*params, self.anchor, self.normalised, per_point);
        let current = self.curve.as_ref().is_some_and(|curve| {
            (
                curve.params,
                curve.anchor,
                curve.normalised,
                curve.per_point,
            ) == key
        });
        let complete = self
            .curve
            .as_ref()
            .is_some_and(|curve| curve.per_point == 1 || curve.envelope.is_some());
        let shown_whole = current && complete;
        if !shown_whole && !self.curve_job.wants(&key) {
            let job = DecayJob {
                params: *params,
                anchor: self.anchor,
                normalised: self.normalised,
                per_point,
                engine: engine.handle(),
            };
            let what = format!("computing PE[{}]·PE[{}+k]", self.anchor, self.anchor);
            if per_point == 1 && job.engine.is_browser_gpu() {
                self.curve_job
                    .request_async(Some(ui.ctx()), key, what, move |_| {
                        Box::pin(async move { Ok(job.run_on_browser_gpu().await) })
                    });
            } else {
                self.curve_job
                    .request_remote(Some(ui.ctx()), key, what, job);
            }
        }
        for update in self.curve_job.poll(Some(ui.ctx())) {
            match update {
                crate::jobs::Update::Done(Ok((points, envelope)), _)
                | crate::jobs::Update::Preview(Ok((points, envelope))) => {
                    let (params, anchor, normalised, per_point) =
                        self.curve_job.wanted().copied().unwrap_or(key);
                    self.curve = Some(Curve {
                        params,
                        anchor,
                        normalised,
                        per_point,
                        points,
                        envelope,
                    });
                }
                crate::jobs::Update::Done(Err(error), _)
                | crate::jobs::Update::Preview(Err(error))
                | crate::jobs::Update::Failed(error) => status.error(error),
            }
        }
        if let Some(pending) = self.curve_job.pending() {
            status.pending(pending.clone());
            ui.ctx().request_repaint();
        }
    }

    fn curve_ui(&self, ui: &mut egui::Ui, params: &SinusoidalParams, height: f32) {
        let response = Plot::new("dot_decay")
            .height(height)
            .legend(crate::widgets::layout::legend())
            .x_axis_label("offset k = j - a (positions)")
            .nice_axes()
            .y_axis_label(if self.normalised {
                "PE[a]·PE[a+k] / (d/2)"
            } else {
                "PE[a]·PE[a+k]"
            })
            .show(ui, |plot_ui| {
                for pin in &self.pinned {
                    plot_ui.line(Line::new(
                        pin.label.clone(),
                        PlotPoints::from(pin.points(self.normalised)),
                    ));
                }
                if let Some(curve) = &self.curve {
                    let label = format!("d {} base {}", params.dim, params.base);
                    let colour = egui::Color32::from_rgb(31, 119, 180);
                    if let Some(envelope) = &curve.envelope {
                        // The offsets' extremes as thin lines in the curve's colour, lighter:
                        // a point is the mean of many offsets, and the peak at k = 0 (d/2) lives
                        // in the maximum, not the mean.
                        let edge = |pick: usize| -> Vec<[f64; 2]> {
                            curve
                                .points
                                .iter()
                                .zip(envelope)
                                .map(|(&[k, _], bounds)| [k, bounds[pick]])
                                .collect()
                        };
                        let name = format!(
                            "min and max of the {} offsets each point covers",
                            crate::numbers::thousands(curve.per_point as u64)
                        );
                        for pick in [0, 1] {
                            plot_ui.line(
                                Line::new(name.clone(), PlotPoints::from(edge(pick)))
                                    .color(colour.gamma_multiply(0.45))
                                    .width(1.0),
                            );
                        }
                    }
                    plot_ui.line(
                        Line::new(label, PlotPoints::from(curve.points.clone()))
                            .color(colour)
                            .width(2.0),
                    );
                }
            });
        crate::widgets::layout::record_plot(ui.ctx(), "dot_decay", &response.transform);
    }
}

/// RoFormer's long-term decay bound for the current dimension and base.
fn rope_bound_ui(ui: &mut egui::Ui, params: &SinusoidalParams, height: f32) {
    let distances: Vec<f64> = (0..=512)
        .map(|k| k as f64 * params.seq.max(2) as f64 / 512.0)
        .collect();
    let Ok(bound) = rope::long_term_decay(params.dim, params.base, &distances) else {
        return;
    };
    let points: Vec<[f64; 2]> = distances.iter().zip(bound).map(|(&r, b)| [r, b]).collect();
    let response = Plot::new("rope_long_term_decay")
        .height(height)
        .legend(crate::widgets::layout::legend())
        .x_axis_label("relative distance r (positions)")
        .nice_axes()
        .y_axis_label("bound on |q·k| (RoFormer)")
        .show(ui, |plot_ui| {
            // A colour of its own: plots colour their first line alike, and this is not the
            // decay curve or a pin.
            plot_ui.line(
                Line::new(
                    format!(
                        "RoPE long-term decay bound, d {} base {}",
                        params.dim, params.base
                    ),
                    PlotPoints::from(points),
                )
                .color(egui::Color32::from_rgb(148, 103, 189))
                .width(1.8),
            );
        });
    crate::widgets::layout::record_plot(ui.ctx(), "rope_long_term_decay", &response.transform);
}

impl View for DotDecayView {
    fn export(&self, shared: &crate::ui::params::SharedParams) -> Option<crate::views::ViewExport> {
        let params = shared.sinusoidal();
        let anchor = self.anchor.min(params.seq - 1);
        Some(crate::views::ViewExport {
            figure: crate::export::figure::FigureSpec::DotDecay(
                crate::export::figure::DotDecayFigure {
                    params,
                    anchor,
                    normalised: self.normalised,
                },
            ),
            data: Some(TableSpec::DotDecay { params, anchor }),
            name: format!("dot_decay_anchor{anchor}"),
        })
    }

    fn ui(&mut self, ui: &mut egui::Ui, ctx: &mut ViewContext<'_>) {
        let (shared, colormap, engine, reduce) = (ctx.shared, ctx.colormap, ctx.engine, ctx.reduce);
        let status = &mut *ctx.status;
        let params = shared.sinusoidal();
        self.anchor = self.anchor.min(params.seq - 1);
        let curve_pixels =
            (ui.available_width() - COLUMN_GAP) * CURVE_SHARE * ui.ctx().pixels_per_point();
        let per_point = offsets_per_point(params.seq, curve_pixels);
        ui.horizontal_wrapped(|ui| {
            ui.add(crate::widgets::number_box::NumberBox::slider(&mut self.anchor, 0..=params.seq - 1).text("Anchor row"))
                .on_hover_text("The row a whose dot product with every row j is plotted against k = j - a");
            ui.checkbox(&mut self.normalised, "Normalised")
                .on_hover_text("Divide by PE[a]·PE[a] = d/2, so the curve starts at 1");
            ui.checkbox(&mut self.show_rope_bound, "RoPE long-term decay")
                .on_hover_text("RoFormer's bound (1/(d/2)) Σ_j |S_j|, S_j = Σ_{k<j} exp(i r θ_k), against the distance r");
            let pin = ui
                .button("Pin curve")
                .on_hover_text("Keep this curve to compare with other bases or dimensions");
            if pin.clicked()
                && let Some(Curve {
                    normalised, points, ..
                }) = &self.curve
            {
                let unscale = if *normalised {
                    params.dim as f64 / 2.0
                } else {
                    1.0
                };
                self.pinned.push(PinnedCurve {
                    label: format!("d {} base {}", params.dim, params.base),
                    dim: params.dim,
                    raw: points.iter().map(|&[k, v]| [k, v * unscale]).collect(),
                });
            }
            if ui.add_enabled(!self.pinned.is_empty(), egui::Button::new("Clear pins")).clicked() {
                self.pinned.clear();
            }
            if per_point > 1 {
                let enveloped = self.curve.as_ref().is_some_and(|c| c.envelope.is_some());
                ui.label(format!(
                    "{} offsets a point (light: {})",
                    crate::numbers::thousands(per_point as u64),
                    if enveloped { "min, max" } else { "min, max computing…" }
                ))
                    .on_hover_text("A point per sampled offset would draw the fast terms' aliasing as wiggles: each point is the mean of the offsets it stands for (exact, closed form), and the light lines their least and largest value, so that no peak (d/2 at k = 0) is hidden by the mean");
            }
        });
        // Curves on the left (the bound below the decay, each half the height), the square
        // similarity matrix on the right.
        let full = ui.available_rect_before_wrap();
        let (left, right) = split_columns(full, CURVE_SHARE, COLUMN_GAP);
        self.update_curve(ui, &params, per_point, engine, status);
        let (curve_rect, bound_rect) = if self.show_rope_bound {
            let (top, bottom) = split_rows(left, 0.5, 8.0);
            (top, Some(bottom))
        } else {
            (left, None)
        };
        ui.scope_builder(egui::UiBuilder::new().max_rect(curve_rect), |ui| {
            self.curve_ui(ui, &params, curve_rect.height());
        });
        if let Some(rect) = bound_rect {
            ui.scope_builder(egui::UiBuilder::new().max_rect(rect), |ui| {
                rope_bound_ui(ui, &params, rect.height());
            });
        }
        ui.allocate_rect(full, egui::Sense::hover());
        {
            let ui = &mut ui.new_child(egui::UiBuilder::new().max_rect(right));
            {
                self.similarity.square_cells = true;
                let spec = TableSpec::Similarity(params);
                let response = self.similarity.ui(
                    ui,
                    "similarity",
                    &spec,
                    0,
                    ("row j", "row i"),
                    reduce,
                    colormap,
                    engine,
                    status,
                );
                if let Some(response) = response
                    && let Some((i, j)) = response.hovered
                {
                    let value = crate::encoding::sinusoidal::SinusoidalValues::new(&params)
                        .map(|v| v.dot_at_offset(j as i64 - i as i64))
                        .unwrap_or(f64::NAN);
                    response.show_hover(format!(
                        "PE[{i}]·PE[{j}] = {value:.9}\ndistance j - i = {}",
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
    label: "Dot-product decay",
    hint: "Move the anchor row · pin a curve, then change the base or dimension to compare · hover the matrix for PE[i]·PE[j]",
    explanation: crate::widgets::explainer::Explanation {
        formula: "PE[a]·PE[a+k] = Σ_i (sin(aω_i) sin((a+k)ω_i) + cos(aω_i) cos((a+k)ω_i)) = Σ_i cos(k·ω_i)",
        reading: "The curve: offset k across, the dot product up (normalised: divided by d/2, its value at k = 0). \
              The matrix: PE[i]·PE[j] for every pair of rows; it is constant along each diagonal because it depends only on j − i.",
        convention: "The same sinusoidal table as the Sinusoidal view (its layout and spacing do not change dot products). \
                 \"RoPE long-term decay\" is RoFormer's bound (section 3.4.3): the mean of the partial sums |Σ e^{i k θ_j}|, which shrinks with distance.",
        try_these: &[
            "Move the anchor row: the curve does not move, since the product only sees the offset.",
            "Pin the curve, then set the base to 100: every frequency is faster, so the curve falls sooner and ripples.",
            "Halve the dimension and compare with the pinned curve: fewer frequencies, a rougher decay.",
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

    /// The curve of one offset a point, and the means with their envelope at 64 offsets a
    /// point, give the same through a Web Worker's parcels as here.
    #[test]
    fn the_decay_job_gives_the_same_through_parcels() {
        for (seq, per_point) in [(512, 1), (16_384, 64)] {
            crate::jobs::remote::same_through_parcels(|| DecayJob {
                params: SinusoidalParams {
                    seq,
                    dim: 64,
                    ..Default::default()
                },
                anchor: 3,
                normalised: true,
                per_point,
                engine: crate::ui::engine::EngineHandle::default(),
            })
            .expect("the same curve");
        }
    }
}
