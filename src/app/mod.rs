//! The desktop app: a side panel with the view picker and the parameters, the current view, and
//! a status bar. Settings survive a restart.

pub mod export;
pub mod frame_log;
#[cfg(target_arch = "wasm32")]
pub mod page;
pub mod presentation;
pub mod remote_jobs;
pub mod side_panel;

use eframe::egui_wgpu;
use serde::{Deserialize, Serialize};

use crate::colormap::Colormap;
use crate::ui::engine::AppEngine;
use crate::ui::params::SharedParams;
use crate::ui::status::{self, Status};
use crate::views::alibi::AlibiView;
use crate::views::check::CheckView;
use crate::views::context::ContextView;
use crate::views::corkscrew::CorkscrewView;
use crate::views::dot_decay::DotDecayView;
use crate::views::learned::LearnedView;
use crate::views::patches::PatchView;
use crate::views::relative::RelativeView;
use crate::views::sinusoidal::SinusoidalView;
use crate::views::tour::TourView;
use crate::views::{Registered, View, ViewContext, ViewKind};
use side_panel::shared_params_ui;

/// What is saved between runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AppState {
    pub view: ViewKind,
    pub shared: SharedParams,
    pub colormap: Colormap,
    /// What a heatmap pixel covering several cells shows.
    pub reduce: crate::engine::reduce::Reduce,
    /// The preset chosen last (the menu says "modified" once a control has moved).
    pub preset: Option<String>,
    /// The theme, and presentation mode.
    pub appearance: presentation::Appearance,
}

pub use crate::ui::STATE_KEY;

pub use crate::views::view_key;

pub struct PoslabApp {
    pub state: AppState,
    engine: AppEngine,
    /// Every view, in the picker's order (see [`crate::views::registry`]).
    views: Vec<Registered>,
    export: export::ExportWindow,
    /// The central panel's size last frame: the export's default figure size.
    view_size: egui::Vec2,
    /// One status per view, so that switching views shows each view's own facts.
    statuses: Vec<Status>,
    /// Whether the status bar names the adapter and shows timings (off for snapshot tests,
    /// where both differ from machine to machine).
    show_machine_details: bool,
    /// Where the view drew last frame (the central panel): its snapshots show this alone.
    view_pane: egui::Rect,
    /// One line per frame, when `POSLAB_FRAME_LOG` names a file.
    frame_log: Option<frame_log::FrameLog>,
    /// How long the last frame's own work took (update and UI), as the frame log records it.
    last_frame_work: std::time::Duration,
    /// egui's context, so that work started outside a frame can wake the app.
    egui_ctx: egui::Context,
    /// A message the status bar keeps until it is dismissed.
    notice: Option<String>,
    /// The web page's dropped files, read before the views see them.
    #[cfg(target_arch = "wasm32")]
    dropped: page::DroppedFiles,
    /// What `window.poslabState` says, as last written.
    #[cfg(target_arch = "wasm32")]
    page_state: Option<page::PageState>,
    /// Where each view's button was drawn last frame (the web page's test clicks them).
    #[cfg(target_arch = "wasm32")]
    view_buttons: Vec<page::ViewButton>,
}

impl PoslabApp {
    pub fn new(cc: &eframe::CreationContext<'_>) -> Self {
        cc.egui_ctx.set_fonts(fonts());
        let mut app = Self {
            state: AppState::default(),
            engine: AppEngine::from_render_state(cc.wgpu_render_state.as_ref()),
            views: crate::views::registry(None),
            export: export::ExportWindow::default(),
            view_size: egui::vec2(1000.0, 700.0),
            statuses: Vec::new(),
            show_machine_details: true,
            view_pane: egui::Rect::NOTHING,
            frame_log: frame_log::FrameLog::from_environment(),
            egui_ctx: cc.egui_ctx.clone(),
            last_frame_work: std::time::Duration::ZERO,
            notice: None,
            #[cfg(target_arch = "wasm32")]
            dropped: Default::default(),
            #[cfg(target_arch = "wasm32")]
            page_state: None,
            #[cfg(target_arch = "wasm32")]
            view_buttons: Vec::new(),
        };
        app.statuses = app.views.iter().map(|_| Status::default()).collect();
        if let Some(storage) = cc.storage {
            app.restore(storage);
        }
        app
    }

    /// Takes the settings saved in `storage`: the shared ones, and each view's own, saved under
    /// a key of its own so that one that no longer reads back costs only that view its
    /// settings.
    pub fn restore(&mut self, storage: &dyn eframe::Storage) {
        self.state = eframe::get_value(storage, STATE_KEY).unwrap_or_default();
        if let Some(zoom) = self.state.appearance.desk_zoom {
            self.egui_ctx.set_zoom_factor(zoom);
        }
        self.views = crate::views::registry(Some(storage));
    }

    /// Opens on the view and settings the command line gave (`poslab app`), over those saved.
    pub fn launched(mut self, launch: &crate::cli::app::AppLaunch) -> Self {
        if let Some(view) = launch.view {
            self.state.view = view;
        }
        // The preset menu says "(modified)" itself where these differ from the preset's.
        launch.apply(&mut self.state.shared);
        if let Some(theme) = launch.theme {
            self.state.appearance.theme = theme;
        }
        if let Some(target) = launch.target {
            self.view_mut::<crate::views::context::ContextView>().target = target;
        }
        if launch.present {
            let ctx = self.egui_ctx.clone();
            self.state.appearance.set_presenting(&ctx, true);
        }
        if let Some(path) = &launch.check {
            // A missing or bad file is said in the view, as for a file opened there.
            self.view_mut::<CheckView>().load(path, None);
            if launch.view.is_none() {
                self.state.view = crate::views::ViewKind::Check;
            }
        }
        self
    }

    /// Opens with `message` in the status bar until it is dismissed (a web link whose settings
    /// could not be used).
    pub fn with_message(mut self, message: String) -> Self {
        self.notice = Some(message);
        self
    }

    /// A slower engine: every block of a window takes at least `delay` longer (tests watch the
    /// app while its results are pending).
    pub fn with_slow_engine(mut self, delay: std::time::Duration) -> Self {
        let engine = std::mem::replace(&mut self.engine, AppEngine::cpu("replaced"));
        self.engine = engine.slowed(delay);
        self
    }

    /// Where the current view drew last frame: the central panel (beside the side panel, above
    /// the status bar) below the presentation bar.
    pub fn view_pane(&self) -> egui::Rect {
        self.view_pane
    }

    /// Hides the adapter's name and the timings, which differ between machines.
    pub fn hide_machine_details(mut self) -> Self {
        self.show_machine_details = false;
        self
    }

    /// The dot-product decay view, for tests.
    pub fn dot_decay_view(&self) -> &DotDecayView {
        self.view::<DotDecayView>()
    }

    /// The dot-decay curve the view shows now: `(offset, value)`.
    pub fn shown_dot_decay(&self) -> Option<&[[f64; 2]]> {
        self.view::<DotDecayView>().shown_curve()
    }

    /// The dot-product view's pinned curves as drawn: `(label, points)`.
    pub fn shown_pins(&self) -> Vec<(String, Vec<[f64; 2]>)> {
        self.view::<DotDecayView>().shown_pins()
    }

    /// The patch maps' view, for tests.
    pub fn patch_view(&self) -> &PatchView {
        self.view::<PatchView>()
    }

    /// The patch maps' view, to set up benchmarks.
    pub fn patch_view_mut(&mut self) -> &mut PatchView {
        self.view_mut::<PatchView>()
    }

    /// Opens a learned position table in the Learned tables view (read on a worker thread).
    pub fn open_learned_table(&mut self, path: &std::path::Path) {
        self.state.view = ViewKind::Learned;
        let ctx = self.egui_ctx.clone();
        self.view_mut::<LearnedView>().open(
            &ctx,
            crate::scene::learned::LearnedSource::path(path.to_path_buf()),
        );
    }

    /// The ALiBi view, for tests.
    pub fn alibi_view(&self) -> &AlibiView {
        self.view::<AlibiView>()
    }

    /// The context-extension view, for tests.
    pub fn context_view(&mut self) -> &mut ContextView {
        self.view_mut::<ContextView>()
    }

    /// The Relative positions view, for tests.
    pub fn relative_view(&mut self) -> &mut RelativeView {
        self.view_mut::<RelativeView>()
    }

    /// The Learned tables view, for tests.
    pub fn learned_view(&mut self) -> &mut LearnedView {
        self.view_mut::<LearnedView>()
    }

    /// The tour "From counting to sinusoids", for tests.
    pub fn tour_view(&mut self) -> &mut TourView {
        self.view_mut::<TourView>()
    }

    /// The tour's settings, for tests.
    pub fn tour_settings(&self) -> &crate::scene::tour::TourSettings {
        &self.view::<TourView>().settings
    }

    /// The RoPE corkscrew's view, to set up benchmarks.
    pub fn corkscrew_view_mut(&mut self) -> &mut CorkscrewView {
        self.view_mut::<CorkscrewView>()
    }

    /// The RoPE corkscrew's view, for tests.
    pub fn corkscrew_view(&self) -> &CorkscrewView {
        self.view::<CorkscrewView>()
    }

    /// Opens (or closes) the sinusoidal view's column plot, as a click on a column does.
    pub fn select_sinusoidal_column(&mut self, column: Option<usize>) {
        self.view_mut::<SinusoidalView>().selected_column = column;
    }

    /// The sinusoidal view's column curve: its points and, where reduced, its min and max.
    pub fn shown_column_curve(&self) -> Option<crate::views::sinusoidal::ShownCurve<'_>> {
        self.view::<SinusoidalView>().shown_column_curve()
    }

    /// How the sinusoidal heatmap on screen relates to the settings asked for.
    pub fn sinusoidal_freshness(&self) -> Option<crate::widgets::heatmap::Freshness> {
        self.view::<SinusoidalView>().freshness()
    }

    /// Whether the sinusoidal heatmap on screen is a coarse preview.
    pub fn sinusoidal_shows_preview(&self) -> bool {
        self.view::<SinusoidalView>().shows_preview()
    }

    /// The range of the sinusoidal heatmap's colour bar.
    pub fn shown_sinusoidal_range(&self) -> (f64, f64) {
        self.view::<SinusoidalView>().shown_range()
    }

    /// The sinusoidal table the view shows now (a window of it at screen resolution).
    pub fn shown_sinusoidal(&self) -> Option<crate::widgets::heatmap::HeatmapData> {
        self.view::<SinusoidalView>().shown(&self.engine)
    }

    /// What the current view exports now.
    pub fn view_export(&self) -> Option<crate::views::ViewExport> {
        self.current_view().export(&self.state.shared)
    }

    /// The Check view, for tests.
    pub fn precision_view(&self) -> &crate::views::precision::PrecisionView {
        self.view::<crate::views::precision::PrecisionView>()
    }

    pub fn layouts_view(&self) -> &crate::views::layouts::LayoutsView {
        self.view::<crate::views::layouts::LayoutsView>()
    }

    pub fn layouts_view_mut(&mut self) -> &mut crate::views::layouts::LayoutsView {
        self.view_mut::<crate::views::layouts::LayoutsView>()
    }

    pub fn axes_view(&self) -> &crate::views::axes::AxesView {
        self.view::<crate::views::axes::AxesView>()
    }

    pub fn check_view(&self) -> &CheckView {
        self.view::<CheckView>()
    }

    /// The Check view, to open files in tests.
    pub fn check_view_mut(&mut self) -> &mut CheckView {
        self.view_mut::<CheckView>()
    }

    /// The export window, for tests.
    pub fn export_window(&self) -> &export::ExportWindow {
        &self.export
    }

    fn current_view(&self) -> &dyn View {
        self.views[self.status_index()].view.as_ref()
    }

    /// The view of type `V` (each view type is registered once).
    fn view<V: View>(&self) -> &V {
        self.views
            .iter()
            .find_map(|entry| (entry.view.as_ref() as &dyn std::any::Any).downcast_ref::<V>())
            .unwrap_or_else(|| unreachable!("every view type is in the registry"))
    }

    fn view_mut<V: View>(&mut self) -> &mut V {
        self.views
            .iter_mut()
            .find_map(|entry| (entry.view.as_mut() as &mut dyn std::any::Any).downcast_mut::<V>())
            .unwrap_or_else(|| unreachable!("every view type is in the registry"))
    }

    fn side_panel_ui(&mut self, ui: &mut egui::Ui) {
        ui.heading("poslab");
        ui.label("View");
        #[cfg(target_arch = "wasm32")]
        self.view_buttons.clear();
        for entry in &self.views {
            let _button = ui.selectable_value(&mut self.state.view, entry.kind, entry.kind.label());
            #[cfg(target_arch = "wasm32")]
            {
                // In the page's CSS pixels, which a click there uses: egui's points times
                // its zoom (presentation mode, Ctrl+plus).
                let zoom = ui.ctx().zoom_factor();
                self.view_buttons.push(page::ViewButton {
                    label: entry.kind.label().to_owned(),
                    x: _button.rect.center().x * zoom,
                    y: _button.rect.center().y * zoom,
                });
            }
        }
        ui.separator();
        let view = self.state.view;
        shared_params_ui(
            ui,
            &mut self.state.shared,
            &mut self.state.preset,
            |param| view.unused_reason(param),
        );
        ui.separator();
        if ui
            .button("Export…")
            .on_hover_text("Save this view's figure (SVG, PNG) or its data (.npy, .csv): Ctrl+S")
            .clicked()
        {
            self.export.open(self.view_size);
        }
        ui.separator();
        self.appearance_ui(ui);
        ui.separator();
        egui::ComboBox::from_label("Colour map")
            .selected_text(self.state.colormap.label())
            .show_ui(ui, |ui| {
                for colormap in Colormap::ALL {
                    ui.selectable_value(&mut self.state.colormap, colormap, colormap.label());
                }
            });
        ui.horizontal(|ui| {
            use crate::engine::reduce::Reduce;
            let tips = [
                (Reduce::Mean, "Each pixel shows the mean of the cells it covers: what the table looks like from afar"),
                (Reduce::Min, "Each pixel shows the smallest of the cells it covers: the lower edge of the envelope"),
                (Reduce::Max, "Each pixel shows the largest of the cells it covers: the upper edge of the envelope"),
            ];
            for (reduce, tip) in tips {
                ui.radio_value(&mut self.state.reduce, reduce, reduce.label())
                    .on_hover_text(tip);
            }
            ui.label("per pixel").on_hover_text(
                "When a heatmap has more rows or columns than pixels, each pixel reduces the cells it covers (the status bar says how many); picking one of them would draw aliasing as if it were a pattern",
            );
        });
    }

    /// The theme and presentation controls of the side panel.
    fn appearance_ui(&mut self, ui: &mut egui::Ui) {
        use presentation::{CONTROLS_KEY, PRESENT_KEY, ThemeChoice};
        ui.horizontal(|ui| {
            let presenting = self.state.appearance.present;
            if ui
                .selectable_label(presenting, "Present")
                .on_hover_text(format!(
                    "Presentation mode ({PRESENT_KEY}; Esc leaves): large type and thick lines for a projector, the light theme, these controls folded away ({CONTROLS_KEY} brings them back). Page Down and Page Up step through the tour's steps and then the views."
                ))
                .clicked()
            {
                let ctx = ui.ctx().clone();
                self.state.appearance.set_presenting(&ctx, !presenting);
            }
            ui.separator();
            for theme in [ThemeChoice::Dark, ThemeChoice::Light] {
                ui.radio_value(&mut self.state.appearance.theme, theme, theme.label());
            }
            ui.label("theme").on_hover_text(
                "Light suits a projector (and is what presentation mode uses); dark suits a desk",
            );
        });
        if ui
            .button("Hide controls")
            .on_hover_text(format!(
                "Fold this panel away so that the view fills the window ({CONTROLS_KEY}, or Show controls, brings it back)"
            ))
            .clicked()
        {
            self.state.appearance.controls_hidden = true;
        }
    }

    /// Does what a key asked.
    fn run_command(&mut self, ctx: &egui::Context, command: presentation::Command) {
        use presentation::Command;
        let step_view = |app: &mut Self, forward: bool| {
            let index = app.status_index();
            let count = app.views.len();
            let next = if forward {
                (index + 1) % count
            } else {
                (index + count - 1) % count
            };
            app.state.view = app.views[next].kind;
        };
        match command {
            Command::TogglePresenting => {
                let present = !self.state.appearance.present;
                self.state.appearance.set_presenting(ctx, present);
            }
            Command::StopPresenting => self.state.appearance.set_presenting(ctx, false),
            Command::ToggleControls => {
                self.state.appearance.controls_hidden = !self.state.appearance.controls_hidden;
            }
            Command::Forward | Command::Back => {
                let forward = command == Command::Forward;
                let index = self.status_index();
                if !self.views[index].view.step(forward) {
                    step_view(self, forward);
                    let entered = self.status_index();
                    self.views[entered].view.enter(forward);
                }
            }
            Command::NextView => step_view(self, true),
            Command::PreviousView => step_view(self, false),
        }
    }

    /// The bar above a view whose controls are folded away: the way back to them, the views
    /// one by one, and the way out of presentation mode.
    fn view_bar_ui(&mut self, ui: &mut egui::Ui) {
        use presentation::{CONTROLS_KEY, PRESENT_KEY};
        let ctx = ui.ctx().clone();
        ui.horizontal(|ui| {
            if ui
                .button("Show controls")
                .on_hover_text(format!("Show the side panel again ({CONTROLS_KEY})"))
                .clicked()
            {
                self.state.appearance.controls_hidden = false;
            }
            ui.separator();
            let index = self.status_index();
            if ui
                .button("Previous view")
                .on_hover_text("The previous view (Ctrl+Page Up)")
                .clicked()
            {
                self.run_command(&ctx, presentation::Command::PreviousView);
            }
            ui.label(
                egui::RichText::new(format!(
                    "{}  ({} of {})",
                    self.views[index].kind.label(),
                    index + 1,
                    self.views.len()
                ))
                .strong(),
            );
            if ui
                .button("Next view")
                .on_hover_text(
                    "The next view (Ctrl+Page Down; Page Down steps through a view's steps first)",
                )
                .clicked()
            {
                self.run_command(&ctx, presentation::Command::NextView);
            }
            if self.state.appearance.present {
                ui.separator();
                if ui
                    .button("Stop presenting")
                    .on_hover_text(format!("Back to the desk layout (Esc or {PRESENT_KEY})"))
                    .clicked()
                {
                    self.state.appearance.set_presenting(&ctx, false);
                }
            }
        });
        ui.add_space(2.0);
    }

    /// Where the current view sits in the registry (and its status in `statuses`).
    fn status_index(&self) -> usize {
        self.views
            .iter()
            .position(|entry| entry.kind == self.state.view)
            .unwrap_or(0)
    }

    fn status_bar_ui(&mut self, ui: &mut egui::Ui) {
        let status = &self.statuses[self.status_index()];
        ui.horizontal(|ui| {
            if let Some(notice) = &self.notice {
                ui.colored_label(ui.visuals().error_fg_color, notice);
                if ui.small_button("×").on_hover_text("Dismiss").clicked() {
                    self.notice = None;
                }
                ui.separator();
            }
            if self.show_machine_details {
                ui.label(self.engine.description());
                ui.separator();
            }
            if let Some(pending) = status.pending_text() {
                let text = egui::RichText::new(pending).strong();
                ui.label(text).on_hover_text(
                    "Computed apart from the drawing: the window keeps answering, and a change of settings cancels what is no longer wanted",
                );
                ui.separator();
            }
            // While a newer result is on its way, the figures below are those of the picture
            // on screen: greyed, so that nobody reads them as the new settings'.
            let stale = !status.pending.is_empty();
            let fact = |ui: &mut egui::Ui, text: String| {
                if stale {
                    ui.label(egui::RichText::new(text).color(ui.visuals().weak_text_color()))
                        .on_hover_text("Of the picture on screen, computed for the previous settings")
                } else {
                    ui.label(text)
                }
            };
            if let Some(scene) = &status.scene {
                fact(ui, scene.clone());
            }
            if let Some(shape) = &status.last_table {
                let sizes: Vec<String> = shape
                    .iter()
                    .map(|&n| crate::numbers::thousands(n as u64))
                    .collect();
                fact(ui, format!("table {}", sizes.join(" × ")));
            }
            if let Some((rows, cols)) = status.last_window {
                fact(
                    ui,
                    format!(
                        "(computed {} × {} on screen)",
                        crate::numbers::thousands(rows as u64),
                        crate::numbers::thousands(cols as u64)
                    ),
                );
            }
            if let Some((sampling, rows, cols)) = status.last_sampling {
                ui.separator();
                fact(ui, status::sampling_text(sampling, rows, cols));
            }
            if let Some(took) = status.last_compute.filter(|_| self.show_machine_details) {
                ui.separator();
                fact(ui, format!("{:.1} ms", took.as_secs_f64() * 1e3));
            }
            if let Some(error) = &status.error {
                ui.separator();
                ui.colored_label(ui.visuals().error_fg_color, error);
            }
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                ui.add(
                    egui::Label::new(
                        egui::RichText::new(self.state.view.hint())
                            .color(ui.visuals().weak_text_color()),
                    )
                    .truncate(),
                );
            });
        });
    }

    /// How long the last frame's own work took: update and UI, not the renderer's (what
    /// `POSLAB_FRAME_LOG` records).
    pub fn last_frame_work(&self) -> std::time::Duration {
        self.last_frame_work
    }

    /// Whether a result the current view shows is being computed.
    pub fn is_computing(&self) -> bool {
        !self.statuses[self.status_index()].pending.is_empty()
    }

    /// Writes what the page shows into `window.poslabState` when it has changed.
    #[cfg(target_arch = "wasm32")]
    fn publish_page_state(&mut self, computing: bool) {
        let sinusoidal_drawn = self.sinusoidal_freshness()
            == Some(crate::widgets::heatmap::Freshness::Current)
            && !self.sinusoidal_shows_preview();
        let first_picture_ms = self
            .page_state
            .as_ref()
            .and_then(|state| state.first_picture_ms)
            .or_else(|| {
                let picture = match self.state.view {
                    ViewKind::Sinusoidal => sinusoidal_drawn,
                    _ => !computing,
                };
                picture.then(page::page_time_ms)
            });
        let state = page::PageState {
            engine: self.engine.description(),
            backend: if self.engine.render_state().is_some() {
                "WebGPU"
            } else {
                "CPU"
            },
            view: self.state.view.label().to_owned(),
            computing,
            sinusoidal_drawn,
            error: self
                .notice
                .clone()
                .or_else(|| self.statuses[self.status_index()].error.clone()),
            present: self.state.appearance.present,
            check: self
                .check_view()
                .outcome()
                .map(|outcome| (outcome.title.clone(), outcome.matches)),
            views: self.view_buttons.clone(),
            zoom: self.egui_ctx.zoom_factor(),
            column_curve: self
                .view::<SinusoidalView>()
                .shown_column_curve()
                .map(|(points, _)| {
                    points
                        .iter()
                        .fold((f64::INFINITY, f64::NEG_INFINITY), |(low, high), p| {
                            (low.min(p[1]), high.max(p[1]))
                        })
                }),
            first_picture_ms,
            workers: crate::jobs::web_worker::state(),
        };
        if self.page_state.as_ref() != Some(&state) {
            page::publish(&state);
            self.page_state = Some(state);
        }
    }
}

impl eframe::App for PoslabApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        let frame_started = web_time::Instant::now();
        crate::widgets::layout::clear_plots(ui.ctx());

        let ctx = ui.ctx().clone();
        if let Some(command) = presentation::command(&ctx, self.state.appearance.present) {
            self.run_command(&ctx, command);
        }
        self.state.appearance.apply(&ctx);
        let open = egui::KeyboardShortcut::new(egui::Modifiers::COMMAND, egui::Key::O);
        if ui.input_mut(|i| i.consume_shortcut(&open)) {
            self.state.view = ViewKind::Check;
            self.view_mut::<CheckView>().open_dialog(ui.ctx());
        }
        self.export.reduce = self.state.reduce;
        let save = egui::KeyboardShortcut::new(egui::Modifiers::COMMAND, egui::Key::S);
        if ui.input_mut(|i| i.consume_shortcut(&save)) {
            self.export.open(self.view_size);
            if let Some(export) = self.current_view().export(&self.state.shared) {
                self.export.save_as(ui.ctx(), &export, self.state.colormap);
            }
        }
        // A table dropped on the window opens in the Check view (the patch maps take .npy
        // frequencies themselves, the context lab's vision half a learned position table).
        let dropped_table = ui.input(|i| {
            i.raw
                .dropped_files
                .iter()
                .any(|f| crate::import::tables::TableFormat::from_path(f.path()).is_some())
        });
        let takes_tables = self.current_view().takes_dropped_tables();
        if dropped_table && !takes_tables {
            self.state.view = ViewKind::Check;
        }
        // A model's config or .gguf file opens in the Check view too, but for one dropped on
        // the context lab, which takes it as the model to extend.
        let dropped_model = ui.input(|i| {
            i.raw
                .dropped_files
                .iter()
                .any(|f| crate::table_args::model_file::is_model_file(f.path()))
        });
        if dropped_model && self.state.view != ViewKind::Context {
            self.state.view = ViewKind::Check;
        }
        // What was pending at the end of the last frame: the views say again below.
        egui::Panel::bottom("status").show(ui, |ui| self.status_bar_ui(ui));
        if !self.state.appearance.controls_hidden {
            egui::Panel::left("controls")
                .resizable(true)
                .default_size(300.0)
                .show(ui, |ui| {
                    egui::ScrollArea::vertical().show(ui, |ui| self.side_panel_ui(ui));
                });
        }
        let pane = egui::CentralPanel::default().show(ui, |ui| {
            if self.state.appearance.controls_hidden {
                self.view_bar_ui(ui);
            }
            // Below the presentation bar (which counts the views) the view has the pane.
            let view_top = ui.cursor().min.y;
            let status_index = self.status_index();
            let kind = self.state.view;
            crate::widgets::explainer::explainer_ui(ui, kind.label(), &kind.explanation());
            self.view_size = ui.available_size();
            let view: &mut dyn View = self.views[status_index].view.as_mut();
            self.statuses[status_index].pending.clear();
            let mut ctx = ViewContext {
                shared: &self.state.shared,
                colormap: self.state.colormap,
                reduce: self.state.reduce,
                engine: &self.engine,
                status: &mut self.statuses[status_index],
                shared_edit: None,
            };
            view.ui(ui, &mut ctx);
            if let Some(edit) = ctx.shared_edit {
                self.state.shared = edit;
            }
            view_top
        });
        self.view_pane = pane.response.rect.with_min_y(pane.inner);
        if self.export.open {
            let export = self.current_view().export(&self.state.shared);
            self.export
                .ui(ui.ctx(), export.as_ref(), self.state.colormap);
        }
        let computing = self.is_computing();
        #[cfg(target_arch = "wasm32")]
        self.publish_page_state(computing);
        self.last_frame_work = frame_started.elapsed();
        if let Some(log) = &mut self.frame_log {
            log.record(self.last_frame_work, computing);
        }
    }

    /// On the web, a dropped file is read (asynchronously, as browsers read files) before the
    /// views see it: they open it by its name once its bytes are held.
    #[cfg(target_arch = "wasm32")]
    fn raw_input_hook(&mut self, ctx: &egui::Context, raw_input: &mut egui::RawInput) {
        self.dropped.exchange(ctx, raw_input);
    }

    /// On the web, settings are saved every few seconds as well as when the page loses focus:
    /// a closed tab may not say so first.
    #[cfg(target_arch = "wasm32")]
    fn auto_save_interval(&self) -> std::time::Duration {
        std::time::Duration::from_secs(5)
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        let state = AppState {
            appearance: self.state.appearance.at_rest(),
            ..self.state.clone()
        };
        eframe::set_value(storage, STATE_KEY, &state);
        for entry in &self.views {
            entry.save(storage);
        }
    }
}

/// egui's fonts, with Hack behind Ubuntu in the proportional family: Ubuntu has no
/// superscript minus, which every 10⁻³ on an axis needs.
fn fonts() -> egui::FontDefinitions {
    let mut fonts = egui::FontDefinitions::default();
    if fonts.font_data.contains_key("Hack") {
        fonts
            .families
            .entry(egui::FontFamily::Proportional)
            .or_default()
            .insert(1, "Hack".to_owned());
    }
    fonts
}

/// eframe's wgpu set-up, asking for the adapter's own limits: the default (WebGL2's limits on
/// the GL backend) has no compute shaders.
pub fn wgpu_setup() -> egui_wgpu::WgpuSetup {
    let mut setup = egui_wgpu::WgpuSetupCreateNew::without_display_handle();
    setup.device_descriptor =
        std::sync::Arc::new(
            |adapter: &eframe::wgpu::Adapter| eframe::wgpu::DeviceDescriptor {
                label: Some("poslab"),
                required_features: adapter.features() & eframe::wgpu::Features::TIMESTAMP_QUERY,
                required_limits: adapter.limits(),
                ..Default::default()
            },
        );
    egui_wgpu::WgpuSetup::CreateNew(setup)
}

/// Opens the app window, on what `launch` sets, and runs until it is closed.
#[cfg(not(target_arch = "wasm32"))]
pub fn run(launch: crate::cli::app::AppLaunch) -> eframe::Result {
    let mut options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("poslab")
            .with_inner_size([1280.0, 800.0]),
        ..Default::default()
    };
    options.wgpu_options.wgpu_setup = wgpu_setup();
    eframe::run_native(
        "poslab",
        options,
        Box::new(move |cc| Ok(Box::new(PoslabApp::new(cc).launched(&launch)))),
    )
}
