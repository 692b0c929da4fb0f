//! The precision lab: what a model's RoPE computes in float32, bfloat16 and float16 against the
//! exact value, as position grows. Above, how far a query-key score at a fixed offset drifts
//! with absolute position (exactly, it would not move); below, how far the cos cache is from
//! the exact one, and what casting positions to bfloat16 does (they collide above 256).

use egui_plot::{Line, Plot, PlotPoints, Points, VLine};

use crate::encoding::precision::ComputeType;
use crate::scene::precision::{
    ErrorCurve, PrecisionCurves, PrecisionSettings, compute_color, curves,
};
use crate::ui::params::SharedParams;
use crate::views::{View, ViewContext, ViewExport};
use crate::widgets::number_box::NumberBox;

/// The lab's own settings (the side panel gives positions, width and base).
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct PrecisionView {
    /// The query sits this far after the key.
    pub offset: u64,
    /// Random q and k (from `seed`) instead of all ones.
    pub random_vectors: bool,
    pub seed: u64,
    #[serde(skip)]
    shown: Option<(PrecisionSettings, PrecisionCurves)>,
    #[serde(skip)]
    job: crate::jobs::Latest<PrecisionSettings, Result<PrecisionCurves, String>>,
}

impl Default for PrecisionView {
    fn default() -> Self {
        let defaults = PrecisionSettings::default();
        Self {
            offset: defaults.offset,
            random_vectors: false,
            seed: 0,
            shown: None,
            job: crate::jobs::Latest::default(),
        }
    }
}

impl PrecisionView {
    /// The lab's settings with the side panel's positions, width and base.
    pub fn settings(&self, shared: &SharedParams) -> PrecisionSettings {
        PrecisionSettings {
            seq: shared.seq,
            dim: shared.dim,
            base: shared.base,
            offset: self.offset.min(max_offset(shared.seq)),
            seed: self.random_vectors.then_some(self.seed),
        }
    }

    /// The curves on screen and what they were computed for.
    pub fn shown(&self) -> Option<&(PrecisionSettings, PrecisionCurves)> {
        self.shown.as_ref()
    }

    /// Asks a worker for the curves of these settings; the previous ones stay meanwhile.
    fn update(
        &mut self,
        ctx: &egui::Context,
        settings: PrecisionSettings,
        status: &mut crate::ui::status::Status,
    ) {
        let current = self.shown.as_ref().is_some_and(|(s, _)| *s == settings);
        if !current && !self.job.wants(&settings) {
            self.job.request_remote(
                Some(ctx),
                settings,
                "computing RoPE in float32, bfloat16 and float16",
                PrecisionJob(settings),
            );
        }
        for update in self.job.poll(Some(ctx)) {
            match update {
                // Superseded results are dropped: what arrives is of the settings asked for.
                crate::jobs::Update::Done(Ok(curves), _) => {
                    let asked = self.job.wanted().cloned().unwrap_or(settings);
                    self.shown = Some((asked, curves));
                }
                crate::jobs::Update::Done(Err(error), _) | crate::jobs::Update::Failed(error) => {
                    status.error(error)
                }
                crate::jobs::Update::Preview(_) => {}
            }
        }
        if let Some(pending) = self.job.pending() {
            status.pending(pending.clone());
            ctx.request_repaint();
        }
    }
}

/// The largest offset whose queries stay below 2^24 (float32's exact positions).
fn max_offset(seq: usize) -> u64 {
    (1u64 << 24).saturating_sub(seq as u64)
}

/// A log-log plot of error curves against position.
/// The lab's curves for some settings: a job for a worker (a Web Worker on the web).
#[derive(serde::Serialize, serde::Deserialize)]
pub struct PrecisionJob(PrecisionSettings);

impl crate::jobs::remote::RemoteJob for PrecisionJob {
    const NAME: &'static str = "precision-curves";
    type Output = Result<PrecisionCurves, String>;

    fn run(
        self,
        progress: &crate::jobs::remote::Progress<Self::Output>,
    ) -> Result<Self::Output, crate::jobs::Cancelled> {
        curves(&self.0, progress.cancel()).map(|r| r.map_err(|e| e.to_string()))
    }
}

fn curves_plot(
    ui: &mut egui::Ui,
    id: &str,
    y_label: &str,
    curves: &[ErrorCurve],
    collisions: &[(ComputeType, u64)],
    height: f32,
) {
    let log = |points: &[[f64; 2]]| -> Vec<[f64; 2]> {
        points
            .iter()
            .filter(|p| p[0] >= 1.0)
            .map(|p| [p[0].log10(), p[1].log10()])
            .collect()
    };
    let response = Plot::new(id)
        .height(height)
        .legend(crate::widgets::layout::legend().position(egui_plot::Corner::LeftTop))
        .x_axis_label("position (log scale)")
        .y_axis_label(y_label)
        .x_grid_spacer(crate::widgets::layout::decade_ticks)
        .y_grid_spacer(crate::widgets::layout::decade_ticks)
        .x_axis_formatter(|mark, _| crate::widgets::layout::power_label(10, mark))
        .y_axis_formatter(|mark, _| crate::widgets::layout::power_label(10, mark))
        .show(ui, |plot_ui| {
            // One hue per type, three shades: a type's computed curve in its colour, its cast
            // positions' points lighter, where its positions collide darker, so that the legend
            // tells the three apart. The points first, so that no line hides under them.
            let shade = |compute: ComputeType, toward: u8, share: f32| {
                let [r, g, b] = compute_color(compute);
                let mix = |c: u8| (f32::from(c) * (1.0 - share) + f32::from(toward) * share) as u8;
                egui::Color32::from_rgb(mix(r), mix(g), mix(b))
            };
            for curve in curves.iter().filter(|c| c.cast_positions) {
                // Neighbouring positions alternate between exact and collided: points, not a
                // line that would fill the band between them.
                plot_ui.points(
                    Points::new(curve.label.clone(), PlotPoints::from(log(&curve.points)))
                        .color(shade(curve.compute, 255, 0.45))
                        .radius(1.5),
                );
            }
            for curve in curves.iter().filter(|c| !c.cast_positions) {
                plot_ui.line(
                    Line::new(curve.label.clone(), PlotPoints::from(log(&curve.points)))
                        .color(shade(curve.compute, 0, 0.0))
                        .width(2.2),
                );
            }
            for (compute, position) in collisions {
                plot_ui.vline(
                    VLine::new(
                        format!("{} positions collide from {position}", compute.name()),
                        (*position as f64).log10(),
                    )
                    .color(shade(*compute, 0, 0.45))
                    .width(1.5)
                    .style(egui_plot::LineStyle::dotted_dense()),
                );
            }
        });
    crate::widgets::layout::record_plot(ui.ctx(), id, &response.transform);
}

impl View for PrecisionView {
    fn export(&self, shared: &SharedParams) -> Option<ViewExport> {
        let settings = self.settings(shared);
        Some(ViewExport {
            figure: crate::export::figure::FigureSpec::Precision(
                crate::export::figure::precision::PrecisionFigure { settings },
            ),
            data: Some(crate::engine::TableSpec::RopeScoreDrift(
                settings.score_params(ComputeType::Bf16),
            )),
            name: format!("score_drift_bf16_offset{}", settings.offset),
        })
    }

    fn ui(&mut self, ui: &mut egui::Ui, ctx: &mut ViewContext<'_>) {
        let most = max_offset(ctx.shared.seq);
        ui.horizontal_wrapped(|ui| {
            ui.add(NumberBox::drag(&mut self.offset).range(0..=most).prefix("offset D = "))
                .on_hover_text("The query sits D positions after the key: the score q_(n+D)·k_n depends only on D in exact arithmetic");
            ui.checkbox(&mut self.random_vectors, "random q and k")
                .on_hover_text("q and k drawn uniformly from [-1, 1) with the seed (off: all ones, the largest score)");
            ui.add_enabled(
                self.random_vectors,
                NumberBox::drag(&mut self.seed).range(0..=u64::from(u32::MAX)).prefix("seed "),
            );
        });
        let settings = self.settings(ctx.shared);
        self.update(ui.ctx(), settings, ctx.status);
        let Some((shown_settings, shown)) = &self.shown else {
            ui.label("Computing the scores and caches in float32, bfloat16 and float16…");
            return;
        };
        let stale = *shown_settings != settings;
        ui.label(
            egui::RichText::new(format!(
                "exact score q_(n+{})·k_n = {:.6} at every position n{}",
                shown_settings.offset,
                shown.exact_score,
                if stale {
                    " (the curves are of the previous settings)"
                } else {
                    ""
                }
            ))
            .small(),
        );
        let height = ((ui.available_height() - 12.0) / 2.0).max(120.0);
        curves_plot(
            ui,
            "precision_drift",
            "|score − exact score| (log)",
            &shown.drift,
            &[],
            height,
        );
        curves_plot(
            ui,
            "precision_cache",
            "largest |cos − exact cos| over pairs (log)",
            &shown.cache,
            &shown.collisions,
            height,
        );
    }
}

/// Why this view does not use a shared control.
fn unused_controls(param: crate::ui::params::SharedParam) -> Option<&'static str> {
    use crate::ui::params::SharedParam::*;
    match param {
        Start => Some("The lab counts positions from 0, as a model's cache does"),
        Heads => Some("Every head rotates its q and k the same way: one head shows them all"),
        Layout => Some(
            "The lab rotates Hugging Face's half pairs (i, i + d/2); the pairing does not change the rounding",
        ),
        Spacing => Some("RoPE's frequencies are base^(-2i/d) (Vaswani's spacing)"),
        _ => None,
    }
}

/// The view in the picker: its name, first hint, explanation and the shared controls it leaves
/// unused.
pub const INFO: crate::views::ViewInfo = crate::views::ViewInfo {
    label: "Precision lab",
    hint: "Raise Sequence length and watch bfloat16's score drift with position · change the offset · tick random q and k",
    explanation: crate::widgets::explainer::Explanation {
        formula: "drift(n) = score computed in the type, q_(n+D)·k_n, minus the exact Σ_i (q_i·k_i + q_(i+d/2)·k_(i+d/2)) cos(Dθ_i) + (q_i·k_(i+d/2) − q_(i+d/2)·k_i) sin(Dθ_i)",
        reading: "Above: for a key at position n and a query D positions later, how far the score a model computes is from the exact one, per type, on log axes. \
              Exactly, RoPE's score depends only on D, so it would be the same at every n. \
              Below: the largest error of the cos cache over its pairs per position, made as Hugging Face makes it (float32 angles, then cast to the type); as points, the float32 cache with positions cast to bfloat16 first, and dotted lines where bfloat16 (257) and float16 (2049) stop telling positions apart.",
        convention: "Hugging Face transformers: inv_freq = 1/base^(arange(0, d, 2)/d) in float32, freqs = t·inv_freq rounded once, cos and sin in float32 then .to(dtype), \
                 q·cos + rotate_half(q)·sin with each product and sum rounded to the type, the dot product accumulated in float32 and rounded to the type (round to nearest even). \
                 The drift in bfloat16 is Wang et al.'s 2024 finding (\"When Precision Meets Position: BFloat16 Breaks Down RoPE in Long-Context Training\").",
        try_these: &[
            "Set Sequence length to 65536: float32's drift grows with position but stays small; bfloat16's is far larger at every position, and different at each, so one offset no longer gives one score.",
            "Tick random q and k: the score is smaller and bfloat16's drift with it, but it still wanders from position to position.",
            "Look at the dotted curve below: past 256 bfloat16 positions round to even numbers, then to multiples of 4, 8, …: neighbouring tokens get the same rotation.",
        ],
    },
    unused: unused_controls,
};

#[cfg(test)]
mod tests {
    use super::*;

    /// The lab's curves at its defaults give the same through a Web Worker's parcels.
    #[test]
    fn the_precision_job_gives_the_same_through_parcels() {
        crate::jobs::remote::same_through_parcels(|| PrecisionJob(PrecisionSettings::default()))
            .expect("the same curves");
    }
}
