//! The tour "From counting to sinusoids": a step list, Prev and Next (and the arrow keys), the
//! settings every step shares, and the step's formula, text, measured line and panels, all
//! built by `scene::tour`.

use egui_plot::{Line, Plot, PlotPoint, PlotPoints, Points};

use crate::colormap::rgb;
use crate::engine::{Strided, TableSpec};
use crate::scene::tour::{
    self, BASE_RANGE, DELTA_RANGE, DIM_RANGE, LENGTH_RANGE, TourCurves, TourFrame, TourHeatmap,
    TourPanel, TourSettings, TourStep,
};
use crate::views::{View, ViewContext, ViewExport};
use crate::widgets::array_heatmap::ArrayHeatmap;

/// What the view keeps between frames (the step and settings also between runs).
/// A step's frame for some settings: a job for a worker (a Web Worker on the web).
#[derive(serde::Serialize, serde::Deserialize)]
pub struct FrameJob(TourStep, TourSettings);

impl crate::jobs::remote::RemoteJob for FrameJob {
    const NAME: &'static str = "tour-frame";
    type Output = Result<TourFrame, String>;

    fn run(
        self,
        _progress: &crate::jobs::remote::Progress<Self::Output>,
    ) -> Result<Self::Output, crate::jobs::Cancelled> {
        Ok(tour::frame(self.0, &self.1).map_err(|e| e.to_string()))
    }
}

#[derive(Default, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct TourView {
    pub step: TourStep,
    pub settings: TourSettings,
    /// The frame drawn, the settings it was built for, and a number that changes with it.
    #[serde(skip)]
    shown: Option<(TourStep, TourSettings, TourFrame, u64)>,
    #[serde(skip)]
    error: Option<String>,
    #[serde(skip)]
    heatmaps: [ArrayHeatmap; 2],
    /// The frame being built on a worker thread, for its step and settings.
    #[serde(skip)]
    frame_job: crate::jobs::Latest<(TourStep, TourSettings), Result<TourFrame, String>>,
}

impl TourView {
    /// The frame drawn now.
    pub fn shown_frame(&self) -> Option<&TourFrame> {
        self.shown.as_ref().map(|(_, _, frame, _)| frame)
    }

    /// The bins of rows and columns each heatmap panel shows now, for tests.
    pub fn shown_bins(&self) -> [Option<(Strided, Strided)>; 2] {
        [self.heatmaps[0].shown_bins(), self.heatmaps[1].shown_bins()]
    }

    /// Why the settings could not be drawn, if they could not.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Asks a worker for the frame of the step and settings now (a 4096 x 512 table and its
    /// checks take tens of milliseconds), and takes it once it has arrived.
    fn update(&mut self, ctx: &egui::Context, status: &mut crate::ui::status::Status) {
        let key = (self.step, self.settings);
        let shown = self
            .shown
            .as_ref()
            .is_some_and(|(step, s, _, _)| (*step, *s) == key);
        if !shown && !self.frame_job.wants(&key) {
            self.frame_job.request_remote(
                Some(ctx),
                key,
                format!("computing \"{}\"", key.0.title()),
                FrameJob(key.0, key.1),
            );
        }
        for update in self.frame_job.poll(Some(ctx)) {
            match update {
                crate::jobs::Update::Done(Ok(frame), _) => {
                    let generation = self.shown.as_ref().map_or(0, |(_, _, _, g)| g + 1);
                    // The frame of the step asked for last, which need not be this frame's.
                    let (step, settings) = self.frame_job.wanted().copied().unwrap_or(key);
                    self.shown = Some((step, settings, frame, generation));
                    self.error = None;
                }
                crate::jobs::Update::Done(Err(error), _) | crate::jobs::Update::Failed(error) => {
                    self.error = Some(error);
                }
                crate::jobs::Update::Preview(_) => {}
            }
        }
        if let Some(pending) = self.frame_job.pending() {
            status.pending(pending.clone());
            ctx.request_repaint();
        }
    }

    fn steps_ui(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            if ui
                .add_enabled(self.step.previous().is_some(), egui::Button::new("Prev"))
                .on_hover_text("The previous step (←)")
                .clicked()
                && let Some(step) = self.step.previous()
            {
                self.step = step;
            }
            if ui
                .add_enabled(self.step.next().is_some(), egui::Button::new("Next"))
                .on_hover_text("The next step (→)")
                .clicked()
                && let Some(step) = self.step.next()
            {
                self.step = step;
            }
        });
        ui.add_space(4.0);
        for step in TourStep::ALL {
            ui.selectable_value(&mut self.step, step, step.title());
        }
    }

    /// ← and → move between steps, unless a control has the keys.
    fn keys(&mut self, ui: &egui::Ui) {
        if ui.ctx().memory(|m| m.focused().is_some()) {
            return;
        }
        ui.input(|i| {
            if i.key_pressed(egui::Key::ArrowRight)
                && let Some(step) = self.step.next()
            {
                self.step = step;
            }
            if i.key_pressed(egui::Key::ArrowLeft)
                && let Some(step) = self.step.previous()
            {
                self.step = step;
            }
        });
    }

    fn controls_ui(&mut self, ui: &mut egui::Ui) {
        let uses = self.step.uses();
        let s = &mut self.settings;
        // Length, width and base are always there (disabled where a step ignores them), so
        // that the controls do not jump between steps.
        let mut shown = vec![TourControl::Length, TourControl::Dim, TourControl::Base];
        shown.extend(
            [
                (uses.delta, TourControl::Delta),
                (uses.anchor, TourControl::Anchor),
                (uses.pair, TourControl::Pair),
            ]
            .into_iter()
            .filter_map(|(used, control)| used.then_some(control)),
        );
        ui.spacing_mut().slider_width = 110.0;
        // A slider with its value and name takes about this much; rows hold what fits.
        let across = ((ui.available_width() / 260.0).floor() as usize).clamp(1, 3);
        for row in shown.chunks(across) {
            ui.horizontal(|ui| {
                for control in row {
                    control.ui(ui, s, uses);
                }
            });
        }
    }
}

/// Panel `index` of step `step` as a heatmap, drawn by `heatmap`.
fn heatmap_ui(
    ui: &mut egui::Ui,
    heatmap: &mut ArrayHeatmap,
    (step, index): (TourStep, usize),
    map: &TourHeatmap,
    generation: u64,
    ctx: &ViewContext<'_>,
) {
    ui.label(egui::RichText::new(&map.title).strong());
    let id = format!("tour_{}_{index}", step.index());
    let (rows, cols) = map.values.dim();
    // A square matrix (T) keeps square cells, so that its blocks read as 2 x 2.
    heatmap.square_cells = rows == cols;
    let Some(response) = heatmap.ui(
        ui,
        &id,
        &map.values,
        generation,
        map.range,
        (&map.col_name, &map.row_name),
        ctx.reduce,
        ctx.colormap,
    ) else {
        return;
    };
    if map.overlay.len() >= 2 {
        let points: Vec<egui::Pos2> = map
            .overlay
            .iter()
            .map(|&[x, y]| {
                response
                    .transform
                    .position_from_point(&PlotPoint::new(x, -y))
            })
            .collect();
        // Within the table, where the line means something.
        let table = egui::Rect::from_two_pos(
            response
                .transform
                .position_from_point(&PlotPoint::new(0.0, 0.0)),
            response
                .transform
                .position_from_point(&PlotPoint::new(cols as f64, -(rows as f64))),
        );
        ui.painter()
            .with_clip_rect(response.transform.frame().intersect(table))
            .add(egui::Shape::line(
                points,
                egui::Stroke::new(2.0, egui::Color32::WHITE),
            ));
    }
    if let Some((row, col)) = response.hovered {
        let value = map.values[[row, col]];
        response.show_hover(format!(
            "{} {row}, {} {col}: {value:.6}",
            map.row_name, map.col_name
        ));
    }
}

fn curves_ui(ui: &mut egui::Ui, index: usize, curves: &TourCurves) {
    ui.label(egui::RichText::new(&curves.title).strong());
    let mut plot = Plot::new(format!("tour_curves_{index}"))
        .legend(crate::widgets::layout::legend())
        .x_axis_label(curves.x_name.clone())
        .y_axis_label(curves.y_name.clone());
    if curves.equal_aspect {
        plot = plot
            .data_aspect(1.0)
            .include_x(-1.1)
            .include_x(1.1)
            .include_y(-1.1)
            .include_y(1.1);
    }
    let response = plot.show(ui, |plot_ui| {
        for curve in &curves.curves {
            let points = PlotPoints::from(curve.points.clone());
            if curve.dots {
                plot_ui.points(
                    Points::new(curve.name.clone(), points)
                        .radius(2.5)
                        .color(rgb(curve.color)),
                );
            } else {
                plot_ui.line(
                    Line::new(curve.name.clone(), points)
                        .width(2.0)
                        .color(rgb(curve.color)),
                );
            }
        }
    });
    crate::widgets::layout::record_plot(
        ui.ctx(),
        &format!("tour_curves_{index}"),
        &response.transform,
    );
}

impl View for TourView {
    fn step(&mut self, forward: bool) -> bool {
        let next = if forward {
            self.step.next()
        } else {
            self.step.previous()
        };
        next.map(|step| self.step = step).is_some()
    }

    fn enter(&mut self, forward: bool) {
        self.step = if forward {
            TourStep::ALL[0]
        } else {
            TourStep::ALL[TourStep::ALL.len() - 1]
        };
    }

    fn export(&self, _shared: &crate::ui::params::SharedParams) -> Option<ViewExport> {
        let settings = self.settings.clamped();
        let params = settings.sinusoidal();
        let data = match self.step {
            TourStep::Binary => Some(TableSpec::Binary(crate::encoding::binary::BinaryParams {
                seq: settings.length,
                dim: settings.dim,
                start: 0,
            })),
            TourStep::Pairs | TourStep::Dials => Some(TableSpec::Sinusoidal(params)),
            TourStep::DotProduct => Some(TableSpec::DotDecay {
                params,
                anchor: settings.anchor,
            }),
            _ => None,
        };
        Some(ViewExport {
            figure: crate::export::figure::FigureSpec::Tour(
                crate::export::figure::tour::TourFigure {
                    step: self.step,
                    settings,
                },
            ),
            data,
            name: format!("tour_step{}", self.step.index() + 1),
        })
    }

    fn ui(&mut self, ui: &mut egui::Ui, ctx: &mut ViewContext<'_>) {
        self.settings = self.settings.clamped();
        self.keys(ui);
        let area = ui.available_rect_before_wrap();
        let list_width = 195.0_f32.min(area.width() * 0.3);
        let list_rect = egui::Rect::from_min_size(area.min, egui::vec2(list_width, area.height()));
        let main_rect = egui::Rect::from_min_max(
            egui::pos2(area.left() + list_width + 12.0, area.top()),
            area.max,
        );
        ui.scope_builder(egui::UiBuilder::new().max_rect(list_rect), |ui| {
            self.steps_ui(ui);
        });
        ui.scope_builder(egui::UiBuilder::new().max_rect(main_rect), |ui| {
            self.controls_ui(ui);
            self.update(ui.ctx(), ctx.status);
            if let Some(error) = &self.error {
                ui.colored_label(ui.visuals().error_fg_color, error);
            }
            if self.frame_job.is_pending() && self.shown.is_some() {
                ui.colored_label(
                    ui.visuals().warn_fg_color,
                    "computing… what is below is still of the previous settings",
                );
            }
            let Some((step, _, frame, generation)) = &self.shown else {
                return;
            };
            let (step, generation) = (*step, *generation);
            ui.heading(frame.step.title());
            ui.add(
                egui::Label::new(egui::RichText::new(&frame.formula).monospace().strong()).wrap(),
            );
            ui.add(egui::Label::new(frame.text.as_str()).wrap());
            ui.label(egui::RichText::new(&frame.measured).color(ui.visuals().warn_fg_color));
            ui.add_space(4.0);
            let panels_rect = ui.available_rect_before_wrap();
            ui.allocate_rect(panels_rect, egui::Sense::hover());
            let count = frame.panels.len().max(1);
            let width = panels_rect.width() / count as f32;
            for (index, panel) in frame.panels.iter().enumerate() {
                let rect = egui::Rect::from_min_size(
                    egui::pos2(panels_rect.left() + index as f32 * width, panels_rect.top()),
                    egui::vec2(width - 12.0, panels_rect.height()),
                );
                ui.scope_builder(egui::UiBuilder::new().max_rect(rect), |ui| match panel {
                    TourPanel::Heatmap(map) => heatmap_ui(
                        ui,
                        &mut self.heatmaps[index],
                        (step, index),
                        map,
                        generation,
                        ctx,
                    ),
                    TourPanel::Curves(curves) => curves_ui(ui, index, curves),
                });
            }
        });
        for heatmap in &self.heatmaps {
            if let Some(pending) = heatmap.pending() {
                ctx.status.pending(pending.clone());
            }
        }
        ui.allocate_rect(area, egui::Sense::hover());
    }
}

/// The tour's controls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TourControl {
    Length,
    Dim,
    Base,
    Delta,
    Anchor,
    Pair,
}

impl TourControl {
    fn ui(self, ui: &mut egui::Ui, s: &mut TourSettings, uses: tour::Uses) {
        let unused = "This step does not depend on it; it is kept for the steps that do";
        match self {
            TourControl::Length => {
                ui.add(
                    crate::widgets::number_box::NumberBox::slider(&mut s.length, LENGTH_RANGE)
                        .logarithmic(true)
                        .text("Length L"),
                )
                .on_hover_text("Positions 0 to L - 1: the rows of every table");
            }
            TourControl::Dim => {
                ui.add_enabled_ui(uses.dim, |ui| {
                    ui.add(
                        crate::widgets::number_box::NumberBox::slider(&mut s.dim, DIM_RANGE)
                            .step_by(2.0)
                            .text("Width d"),
                    )
                    .on_hover_text(
                        "Columns of the tables (even: the final table is made of sine-cosine pairs)",
                    )
                    .on_disabled_hover_text(unused);
                });
            }
            TourControl::Base => {
                ui.add_enabled_ui(uses.base, |ui| {
                    ui.add(
                        crate::widgets::number_box::NumberBox::slider(&mut s.base, BASE_RANGE)
                            .logarithmic(true)
                            .text("Frequency base"),
                    )
                    .on_hover_text(
                        "The slowest frequency is about 1/base: 10000 in the original transformer",
                    )
                    .on_disabled_hover_text(unused);
                });
            }
            TourControl::Delta => {
                ui.add(
                    crate::widgets::number_box::NumberBox::slider(&mut s.delta, DELTA_RANGE)
                        .logarithmic(true)
                        .text("Shift Δ"),
                )
                .on_hover_text("How far T(Δ) moves every row");
            }
            TourControl::Anchor => {
                let last = s.length - 1;
                ui.add(
                    crate::widgets::number_box::NumberBox::slider(&mut s.anchor, 0..=last)
                        .text("Row a"),
                )
                .on_hover_text("The row compared with the others (the article anchors at 128)");
            }
            TourControl::Pair => {
                let last = s.dim / 2 - 1;
                ui.add(
                    crate::widgets::number_box::NumberBox::slider(&mut s.pair, 0..=last)
                        .text("Pair i"),
                )
                .on_hover_text("The frequency whose circle is drawn: columns 2i and 2i+1");
            }
        }
    }
}

/// The view in the picker: its name, first hint, explanation and the shared controls it leaves
/// unused.
pub const INFO: crate::views::ViewInfo = crate::views::ViewInfo {
    label: "From counting to sinusoids",
    hint: "Step with Prev and Next, the step list or the arrow keys · every slider works in every step that uses it · hover a cell for its value",
    explanation: crate::widgets::explainer::Explanation {
        formula: "from PE[p] = p, through bits and sines, to PE[p, 2i] = sin(p·ω_i), PE[p, 2i+1] = cos(p·ω_i), ω_i = base^(−2i/d), with PE[p + Δ] = PE[p]·T(Δ)",
        reading: "Nine steps, each a guess at a position code and what is wrong with it, or a property of the final table. \
              Curves: position or offset across, the code's value up. Heatmaps: positions down, columns across, colour the value \
              (−1 to +1 for sines, 0 to 1 for bits; T(Δ)'s rows and columns are the table's columns). The orange line under the text is measured on the settings above.",
        convention: "The final table is Vaswani et al.'s (sine and cosine interleaved, frequencies base^(−2i/d)), as poslab's sinusoidal table and the annotated transformer; \
                 the binary table is poslab's binary table, least significant bit first. The steps follow Kernes' \"Master Positional Encoding: Part I\", \
                 whose figure is the dot product at d = 128, L = 256 anchored at 128 (step 8's defaults).",
        try_these: &[
            "Step 3: raise L past a power of two and watch one more column start to flip.",
            "Step 7: drag Δ to 10000; the largest error of PE[p]·T(Δ) stays at the last bits of a float64.",
            "Step 9: drag the base down to 100 and the white edge sweeps right: more dials turn within the same length.",
        ],
    },
    unused: unused_controls,
};

/// Why this view leaves the side panel's controls unused: all of them, for one reason.
fn unused_controls(_: crate::ui::params::SharedParam) -> Option<&'static str> {
    Some(
        "The tour sets its own length, width and base above its pictures, so that they stay with the lesson",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every step's frame gives the same through a Web Worker's parcels as here.
    #[test]
    fn the_frame_job_gives_the_same_through_parcels() {
        for step in TourStep::ALL {
            crate::jobs::remote::same_through_parcels(|| FrameJob(step, TourSettings::default()))
                .expect("the same frame");
        }
    }
}
