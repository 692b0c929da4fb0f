//! The RoPE corkscrew: each selected frequency pair's rotation of a query vector along the
//! positions, drawn as helices in 3D; a marker at the query position `m` (and a ring at the key
//! position `n`) on every helix; per-pair insets with the rotated query and key and their score;
//! the pairing convention of both layouts; and the spectrum of frequencies against the context.

mod insets;
mod pairing;
mod spectrum;

use crate::encoding::PairLayout;
use pairing::pairing_ui;
use spectrum::spectrum_ui;

use std::sync::Arc;

use crate::encoding::rope::{PairScore, pair_scores};
use crate::scene::camera::OrbitCamera;
use crate::scene::corkscrew::{
    self, CorkscrewParams, CorkscrewScene, HelixVertex, MAX_DRAWN_POSITIONS, MAX_HELICES,
    PairSelection, ProbeVector, SceneLayout,
};
use crate::views::{View, ViewContext};
use crate::widgets::canvas3d::{CameraChange, CanvasFrame, CanvasRenderer, KEY_FLAG, canvas_ui};

/// How the pairs to draw are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
enum SelectionMode {
    All,
    EveryKth,
    List,
}

/// What the scene was built from, to rebuild it only when that changes; also the job that
/// builds it on a worker (a Web Worker on the web: millions of vertices take seconds there).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SceneKey {
    dim: usize,
    base: f64,
    layout: PairLayout,
    pairs: Vec<usize>,
    first_position: u64,
    position_count: usize,
    query: ProbeVector,
    key: ProbeVector,
}

impl crate::jobs::remote::RemoteJob for SceneKey {
    const NAME: &'static str = "corkscrew-scene";
    type Output = Result<CorkscrewScene, String>;

    fn run(
        self,
        _progress: &crate::jobs::remote::Progress<Self::Output>,
    ) -> Result<Self::Output, crate::jobs::Cancelled> {
        let query = self.query.values(self.dim, self.layout);
        let key_vector = self.key.values(self.dim, self.layout);
        let params = CorkscrewParams {
            dim: self.dim,
            base: self.base,
            layout: self.layout,
            pairs: &self.pairs,
            first_position: self.first_position,
            position_count: self.position_count,
            query: &query,
            key: Some(&key_vector),
        };
        Ok(corkscrew::build(&params).map_err(|e| e.to_string()))
    }
}

/// What the view keeps between frames (its settings and positions also between runs).
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct CorkscrewView {
    mode: SelectionMode,
    every: usize,
    list: String,
    pub layout: PairLayout,
    query: ProbeVector,
    key: ProbeVector,
    /// Positions drawn along the axis, from the context's start.
    drawn_limit: usize,
    /// The query's position `m` and the key's `n`.
    pub query_position: u64,
    pub key_position: u64,
    /// Moves `m` and `n` together, keeping `m - n`.
    pub lock_offset: bool,
    #[serde(skip)]
    playing: bool,
    /// Play speed, positions per second.
    speed: f64,
    /// Fractional position while playing.
    #[serde(skip)]
    play_phase: f64,
    /// When the last frame while playing was drawn (egui's clock, seconds).
    #[serde(skip)]
    play_clock: Option<f64>,
    #[serde(skip)]
    camera: OrbitCamera,
    #[serde(skip)]
    /// The extent and aspect the camera was framed for, and the camera framed: a new window
    /// shape frames again unless the camera has been moved since.
    framed_for: Option<(glam::Vec3, f32, OrbitCamera)>,
    #[serde(skip)]
    scene: Option<(SceneKey, Arc<CorkscrewScene>, u64)>,
    /// The scene being built on a worker thread.
    #[serde(skip)]
    scene_job: crate::jobs::Latest<SceneKey, Result<CorkscrewScene, String>>,
    #[serde(skip)]
    next_scene_id: u64,
    #[serde(skip)]
    error: Option<String>,
    /// The last pairs a valid selection gave, drawn while the list typed is not valid.
    #[serde(skip)]
    last_valid_pairs: Option<(Vec<usize>, bool)>,
    #[serde(skip)]
    shown_scores: Option<Vec<PairScore>>,
}

impl Default for CorkscrewView {
    fn default() -> Self {
        Self {
            mode: SelectionMode::EveryKth,
            every: 8,
            list: "0, 4, 8, 16, 32".to_owned(),
            layout: PairLayout::Interleaved,
            query: ProbeVector::UnitPairs,
            key: ProbeVector::UnitPairs,
            drawn_limit: 256,
            query_position: 12,
            key_position: 4,
            lock_offset: false,
            playing: false,
            speed: 8.0,
            play_phase: 0.0,
            play_clock: None,
            last_valid_pairs: None,
            camera: OrbitCamera::framing(glam::Vec3::ONE, 1.0),
            framed_for: None,
            scene: None,
            scene_job: crate::jobs::Latest::default(),
            next_scene_id: 0,
            error: None,
            shown_scores: None,
        }
    }
}

/// The colour of the `k`-th of `n` drawn helices, shared by the helix, its inset, its cells in
/// the pairing diagram, its point in the spectrum and the exported figure.
fn helix_color(k: usize, n: usize) -> egui::Color32 {
    crate::colormap::rgb(crate::export::figure::helix_color(k, n))
}

impl CorkscrewView {
    /// The score `q_m · k_n` shown now, the sum of every pair's term.
    pub fn shown_score(&self) -> Option<f64> {
        self.shown_scores
            .as_ref()
            .map(|scores| scores.iter().map(|s| s.score).sum())
    }

    /// The scene drawn now.
    pub fn scene(&self) -> Option<&CorkscrewScene> {
        self.scene.as_ref().map(|(_, scene, _)| scene.as_ref())
    }

    fn selection(&self) -> PairSelection {
        match self.mode {
            SelectionMode::All => PairSelection::All,
            SelectionMode::EveryKth => PairSelection::EveryKth(self.every),
            SelectionMode::List => PairSelection::List(self.list.clone()),
        }
    }

    fn controls_ui(&mut self, ui: &mut egui::Ui, seq: usize) {
        ui.horizontal_wrapped(|ui| {
            ui.label("Pairs:");
            ui.radio_value(&mut self.mode, SelectionMode::All, "all")
                .on_hover_text(format!("Every pair (at most {MAX_HELICES} are drawn)"));
            ui.radio_value(&mut self.mode, SelectionMode::EveryKth, "every k-th")
                .on_hover_text("Pairs 0, k, 2k, ...");
            if self.mode == SelectionMode::EveryKth {
                ui.add(
                    crate::widgets::number_box::NumberBox::drag(&mut self.every)
                        .range(1..=2048)
                        .prefix("k = "),
                )
                .on_hover_text("The step between drawn pairs");
            }
            ui.radio_value(&mut self.mode, SelectionMode::List, "list")
                .on_hover_text("Pair numbers and ranges, e.g. 0, 4, 8-12");
            if self.mode == SelectionMode::List {
                crate::widgets::number_box::committed_text(
                    ui,
                    "corkscrew pairs",
                    &mut self.list,
                    |edit| edit.desired_width(120.0).hint_text("0, 4, 8-12"),
                )
                .0
                .on_hover_text("Pair numbers and ranges, e.g. 0, 4, 8-12: applied on Enter");
            }
            ui.separator();
            ui.label(match self.layout {
                PairLayout::Interleaved => "Pairing: interleaved (2i, 2i+1)",
                PairLayout::Half => "Pairing: half (i, i + d/2)",
            })
            .on_hover_text(
                "The side panel's layout (interleaved / split) sets it, or click a row of the pairing diagram",
            );
        });
        ui.horizontal_wrapped(|ui| {
            probe_ui(ui, "Query q", &mut self.query);
            probe_ui(ui, "Key k", &mut self.key);
            ui.separator();
            let most = seq.clamp(1, MAX_DRAWN_POSITIONS);
            self.drawn_limit = self.drawn_limit.clamp(1, most);
            ui.add_enabled(
                most > 1,
                crate::widgets::number_box::NumberBox::slider(&mut self.drawn_limit, 1..=most)
                    .logarithmic(true)
                    .text("Positions drawn"),
            )
            .on_hover_text(format!(
                "How many positions of the context the helices run along, from its start (at most {MAX_DRAWN_POSITIONS})"
            ));
        });
    }

    /// Sets how many positions the helices run along, as the "Positions drawn" slider does.
    pub fn draw_positions(&mut self, positions: usize) {
        self.drawn_limit = positions.clamp(1, MAX_DRAWN_POSITIONS);
    }

    /// Asks a worker to rebuild the scene when its parameters changed (64 helices of 65,536
    /// positions are millions of vertices) and takes it once built; returns the scene to draw,
    /// the previous one until then.
    fn update_scene(
        &mut self,
        ctx: &egui::Context,
        key: SceneKey,
        status: &mut crate::ui::status::Status,
    ) -> Option<(Arc<CorkscrewScene>, u64)> {
        let built = self.scene.as_ref().is_some_and(|(k, _, _)| *k == key);
        if !built && !self.scene_job.wants(&key) {
            let what = format!(
                "building {} helices × {} positions",
                key.pairs.len(),
                key.position_count
            );
            self.scene_job
                .request_remote(Some(ctx), key.clone(), what, key.clone());
        }
        for update in self.scene_job.poll(Some(ctx)) {
            match update {
                crate::jobs::Update::Done(Ok(scene), took) => {
                    status.built_scene(
                        format!(
                            "{} helices × {} positions ({} vertices)",
                            scene.helices.len(),
                            scene.position_count,
                            scene.vertices.len()
                        ),
                        took,
                    );
                    self.next_scene_id += 1;
                    let asked = self
                        .scene_job
                        .wanted()
                        .cloned()
                        .unwrap_or_else(|| key.clone());
                    self.scene = Some((asked, Arc::new(scene), self.next_scene_id));
                    self.error = None;
                }
                crate::jobs::Update::Done(Err(error), _) | crate::jobs::Update::Failed(error) => {
                    status.error(error.clone());
                    self.error = Some(error);
                    self.scene = None;
                }
                crate::jobs::Update::Preview(_) => {}
            }
        }
        if let Some(pending) = self.scene_job.pending() {
            status.pending(pending.clone());
            ctx.request_repaint();
        }
        self.scene
            .as_ref()
            .map(|(_, scene, id)| (scene.clone(), *id))
    }

    /// Keeps `m` and `n` inside the context, and `m - n` fixed when locked.
    fn positions_ui(&mut self, ui: &mut egui::Ui, first: u64, last: u64) {
        let offset = self.query_position as i64 - self.key_position as i64;
        ui.horizontal_wrapped(|ui| {
            let play_label = if self.playing { "Pause" } else { "Play" };
            if ui
                .button(play_label)
                .on_hover_text("Move the query position along the helices (Space)")
                .clicked()
                || ui.input(|i| i.key_pressed(egui::Key::Space))
                    && !ui.ctx().egui_wants_keyboard_input()
            {
                self.playing = !self.playing;
                self.play_phase = 0.0;
            }
            // The arrow keys step m when no widget takes the keyboard.
            if !ui.ctx().egui_wants_keyboard_input() {
                let (back, forward) = ui.input(|i| {
                    (
                        i.key_pressed(egui::Key::ArrowLeft),
                        i.key_pressed(egui::Key::ArrowRight),
                    )
                });
                if back {
                    self.query_position = self.query_position.saturating_sub(1).max(first);
                }
                if forward {
                    self.query_position = (self.query_position + 1).min(last);
                }
            }
            ui.add(
                crate::widgets::number_box::NumberBox::slider(
                    &mut self.query_position,
                    first..=last.max(first),
                )
                .text("Query position m"),
            )
            .on_hover_text(
                "The position the query is rotated to: the marker on every helix (← and → step it)",
            );
            ui.add_enabled(
                !self.lock_offset,
                crate::widgets::number_box::NumberBox::slider(
                    &mut self.key_position,
                    first..=last.max(first),
                )
                .text("Key position n"),
            )
            .on_hover_text("The position the key is rotated to: the ring on every helix");
            ui.checkbox(&mut self.lock_offset, "Lock the offset")
                .on_hover_text(
                    "Move m and n together: the score depends only on m - n, so it stays put",
                );
            ui.add(
                crate::widgets::number_box::NumberBox::drag(&mut self.speed)
                    .range(1.0..=1000.0)
                    .speed(1.0)
                    .suffix(" positions/s"),
            )
            .on_hover_text("Play speed");
        });
        if self.playing {
            // The time since the last frame as it passed: egui's frame time estimate is capped
            // for slow frames, which would play a software renderer at half the speed shown.
            // A gap of over a second (the window hidden) does not jump.
            let now = ui.input(|i| i.time);
            let dt = self
                .play_clock
                .map_or(0.0, |last| (now - last).clamp(0.0, 1.0));
            self.play_clock = Some(now);
            self.play_phase += dt * self.speed;
            let steps = self.play_phase.floor();
            self.play_phase -= steps;
            let span = last - first + 1;
            self.query_position = first + (self.query_position - first + steps as u64) % span;
            ui.ctx().request_repaint();
        } else {
            self.play_clock = None;
        }
        if self.lock_offset {
            // The key follows the query; keep both inside the context.
            let lowest = first as i64 + offset.max(0);
            let highest = last as i64 + offset.min(0);
            let m = (self.query_position as i64).clamp(lowest, highest.max(lowest));
            self.query_position = m as u64;
            self.key_position = (m - offset).clamp(first as i64, last as i64) as u64;
        }
        self.query_position = self.query_position.clamp(first, last);
        self.key_position = self.key_position.clamp(first, last);
    }

    fn canvas_area_ui(
        &mut self,
        ui: &mut egui::Ui,
        size: egui::Vec2,
        ctx: &ViewContext<'_>,
        scene: Option<(Arc<CorkscrewScene>, u64)>,
        colors: &[egui::Color32],
    ) {
        let render_state = ctx.engine.render_state();
        let (Some(render_state), Some((scene, scene_id))) = (render_state, scene) else {
            ui.allocate_ui(size, |ui| {
                ui.label(if ctx.engine.render_state().is_none() {
                    "The 3D view needs eframe's wgpu device; the insets and the spectrum below still work."
                } else if self.error.is_some() {
                    "No pairs to draw: give a valid pair list above."
                } else {
                    "Building the helices…"
                });
            });
            return;
        };
        CanvasRenderer::install(render_state);
        let layout = SceneLayout::of(&scene);
        let extent = layout.half_extent();
        let aspect = size.x / size.y.max(1.0);
        let reframe = match self.framed_for {
            None => true,
            Some((framed_extent, framed_aspect, framed_camera)) => {
                framed_extent != extent
                    || (framed_camera == self.camera && (aspect / framed_aspect - 1.0).abs() > 0.02)
            }
        };
        if reframe {
            self.camera = OrbitCamera::framing(extent, aspect);
            self.framed_for = Some((extent, aspect, self.camera));
        }
        let relative = |p: u64| (p - scene.first_position) as f32;
        let markers: Vec<HelixVertex> = self
            .shown_scores
            .iter()
            .flat_map(|scores| {
                scene
                    .helices
                    .iter()
                    .enumerate()
                    .filter_map(|(index, helix)| {
                        // A scene of a previous, wider head may hold pairs the scores lack.
                        let score = scores.get(helix.pair)?;
                        // The scene may be of later positions than m and n (a new start).
                        let inside = |p: u64| {
                            p >= scene.first_position
                                && p - scene.first_position < scene.position_count as u64
                        };
                        let query = inside(self.query_position).then(|| HelixVertex {
                            position: [
                                relative(self.query_position),
                                score.query.0 as f32,
                                score.query.1 as f32,
                            ],
                            helix: index as u32,
                        });
                        // The key's ring sits on the key's helix: the query's when the two
                        // vectors agree, its own (drawn fainter) otherwise.
                        let key = inside(self.key_position).then(|| HelixVertex {
                            position: [
                                relative(self.key_position),
                                score.key.0 as f32,
                                score.key.1 as f32,
                            ],
                            helix: index as u32 | KEY_FLAG,
                        });
                        Some(query.into_iter().chain(key))
                    })
            })
            .flatten()
            .collect();
        let visuals = ui.visuals();
        let frame = CanvasFrame {
            scene: scene.clone(),
            scene_id,
            camera: self.camera,
            colors: colors.to_vec(),
            axis_color: visuals.weak_text_color(),
            background: visuals.extreme_bg_color,
            markers,
            marker_radius_px: 5.0,
            size_px: [1, 1],
        };
        let (response, change) = canvas_ui(ui, size, &mut self.camera, frame);
        if change == CameraChange::Reset {
            self.camera = OrbitCamera::framing(extent, aspect);
        }
        self.canvas_labels_ui(ui, response.rect, &scene, &layout, colors);
        response.on_hover_text(
            "Drag to orbit, scroll to zoom, right-drag to pan, double-click to reset the camera",
        );
    }

    /// Pair names at the start of every helix and the first and last drawn positions, drawn
    /// over the canvas where the camera puts them.
    fn canvas_labels_ui(
        &self,
        ui: &egui::Ui,
        canvas: egui::Rect,
        scene: &CorkscrewScene,
        layout: &SceneLayout,
        colors: &[egui::Color32],
    ) {
        let painter = ui.painter_at(canvas);
        let size = [canvas.width(), canvas.height()];
        let at = |point: glam::Vec3| {
            self.camera
                .project(point, size)
                .map(|[x, y]| canvas.min + egui::vec2(x, y))
        };
        let font = egui::FontId::proportional(12.0);
        // Every helix gets a label where they are far enough apart on screen; otherwise every
        // k-th does, so that the labels stay legible.
        let mut last_label_y: Option<f32> = None;
        for (index, helix) in scene.helices.iter().enumerate() {
            let start = layout.world(index, [0.0, 0.0, 0.0]) - glam::Vec3::X * 0.4;
            let Some(pos) = at(start) else { continue };
            if last_label_y.is_some_and(|y| (pos.y - y).abs() < 14.0) {
                continue;
            }
            last_label_y = Some(pos.y);
            painter.text(
                pos,
                egui::Align2::RIGHT_CENTER,
                format!("pair {}", helix.pair),
                font.clone(),
                colors.get(index).copied().unwrap_or(egui::Color32::GRAY),
            );
        }
        for (point, text) in layout.position_labels(scene) {
            if let Some(pos) = at(point) {
                painter.text(
                    pos,
                    egui::Align2::CENTER_TOP,
                    text,
                    font.clone(),
                    ui.visuals().text_color(),
                );
            }
        }
    }
}

fn probe_ui(ui: &mut egui::Ui, label: &str, probe: &mut ProbeVector) {
    let text = |p: &ProbeVector| match p {
        ProbeVector::UnitPairs => "(1, 0) in every pair".to_owned(),
        ProbeVector::Ones => "all ones".to_owned(),
        ProbeVector::Random(_) => "random".to_owned(),
    };
    egui::ComboBox::from_label(label)
        .selected_text(text(probe))
        .show_ui(ui, |ui| {
            for option in [
                ProbeVector::UnitPairs,
                ProbeVector::Ones,
                ProbeVector::Random(1),
            ] {
                let selected = std::mem::discriminant(probe) == std::mem::discriminant(&option);
                if ui.selectable_label(selected, text(&option)).clicked() && !selected {
                    *probe = option;
                }
            }
        })
        .response
        .on_hover_text("The vector that is rotated: (1, 0) pairs trace exactly (cos pθ, sin pθ)");
    if let ProbeVector::Random(seed) = probe {
        ui.add(crate::widgets::number_box::NumberBox::drag(seed).prefix("seed "))
            .on_hover_text("Components uniform in [-1, 1] from this seed");
    }
}

impl CorkscrewView {
    /// The pairs drawn: the selection, thinned evenly to at most [`MAX_HELICES`]; and whether
    /// it was thinned.
    fn drawn_pairs(
        &self,
        pair_count: usize,
    ) -> Result<(Vec<usize>, bool), crate::encoding::ParamError> {
        Ok(corkscrew::thin_pairs(self.selection().pairs(pair_count)?))
    }
}

impl View for CorkscrewView {
    fn export(&self, shared: &crate::ui::params::SharedParams) -> Option<crate::views::ViewExport> {
        let pairs = self
            .drawn_pairs(shared.dim / 2)
            .map(|(pairs, _)| pairs)
            .unwrap_or_default();
        let position_count = self.drawn_limit.min(shared.seq).max(1);
        Some(crate::views::ViewExport {
            figure: crate::export::figure::FigureSpec::Corkscrew(
                crate::export::figure::CorkscrewFigure {
                    dim: shared.dim,
                    base: shared.base,
                    layout: shared.layout,
                    pairs,
                    first_position: shared.start,
                    position_count,
                    query: self.query,
                    key: self.key,
                    query_position: self.query_position,
                    key_position: self.key_position,
                    seq: shared.seq,
                    camera: Some(self.camera),
                },
            ),
            // The angles p θ_i of the drawn positions: helix i turns by column i.
            data: Some(crate::engine::TableSpec::RopeAngles {
                params: crate::encoding::rope::RopeParams {
                    seq: position_count,
                    dim: shared.dim,
                    base: shared.base,
                    start: shared.start,
                },
                freqs: Default::default(),
            }),
            name: format!("rope_corkscrew_d{}", shared.dim),
        })
    }

    fn ui(&mut self, ui: &mut egui::Ui, ctx: &mut ViewContext<'_>) {
        let shared = *ctx.shared;
        // The pairing is the side panel's layout: one setting, whichever control moves it.
        self.layout = shared.layout;
        self.error = None;
        // Measured before the control rows, which may overflow a narrow window.
        let panel_width = ui.available_width();
        self.controls_ui(ui, shared.seq);
        let pair_count = shared.dim / 2;
        let (pairs, more_than_drawn) = match self.drawn_pairs(pair_count) {
            Ok(drawn) => {
                self.last_valid_pairs = Some(drawn.clone());
                drawn
            }
            Err(error) => {
                // A half-typed or wrong list keeps the last valid pairs on screen.
                let kept = self.last_valid_pairs.clone().filter(|(pairs, _)| {
                    !pairs.is_empty() && pairs.iter().all(|&p| p < pair_count)
                });
                self.error = Some(if kept.is_some() {
                    format!("{error} (still drawing the last valid pairs)")
                } else {
                    error.to_string()
                });
                kept.unwrap_or_default()
            }
        };
        let first = shared.start;
        let last = shared.start + shared.seq as u64 - 1;
        let before = (self.query_position, self.key_position);
        self.positions_ui(ui, first, last);
        // Moving m or n past the drawn positions draws more of them, so that the markers
        // never silently vanish.
        let needed = (self.query_position.max(self.key_position) - first + 1) as usize;
        if before != (self.query_position, self.key_position) && needed > self.drawn_limit {
            self.drawn_limit = needed.min(MAX_DRAWN_POSITIONS).min(shared.seq);
        }
        let position_count = self.drawn_limit.min(shared.seq).max(1);
        let scene = if pairs.is_empty() {
            None
        } else {
            self.update_scene(
                ui.ctx(),
                SceneKey {
                    dim: shared.dim,
                    base: shared.base,
                    layout: self.layout,
                    pairs: pairs.clone(),
                    first_position: first,
                    position_count,
                    query: self.query,
                    key: self.key,
                },
                ctx.status,
            )
        };
        let colors: Vec<egui::Color32> = (0..pairs.len())
            .map(|k| helix_color(k, pairs.len()))
            .collect();
        let drawn: Vec<(usize, egui::Color32)> =
            pairs.iter().copied().zip(colors.iter().copied()).collect();

        let drawn_last = first + position_count as u64 - 1;
        for (name, position) in [
            ("query m", self.query_position),
            ("key n", self.key_position),
        ] {
            if position > drawn_last {
                ui.colored_label(
                    ui.visuals().warn_fg_color,
                    format!(
                        "The {name} = {position} lies beyond the positions drawn ({first} to {drawn_last}): its marker is not shown. Raise Positions drawn (at most {MAX_DRAWN_POSITIONS})."
                    ),
                );
            }
        }
        let query = self.query.values(shared.dim, self.layout);
        let key = self.key.values(shared.dim, self.layout);
        self.shown_scores = pair_scores(
            &query,
            &key,
            self.layout,
            shared.base,
            self.query_position,
            self.key_position,
        )
        .ok();
        if more_than_drawn {
            ui.label(format!(
                "{MAX_HELICES} of the selected pairs are drawn, evenly spaced among them."
            ));
        }
        if let Some(error) = &self.error {
            ui.colored_label(ui.visuals().error_fg_color, error);
        }

        // The scene on screen may still be the one of the previous pairs (the new one is built
        // off the UI thread): its helices are coloured by its own count, not the new pairs'.
        let scene_colors: Vec<egui::Color32> = scene.as_ref().map_or(Vec::new(), |(scene, _)| {
            let count = scene.helices.len();
            (0..count).map(|k| helix_color(k, count)).collect()
        });
        let full = egui::vec2(panel_width, ui.available_height());
        let canvas_size = egui::vec2(full.x * 0.62, full.y * 0.56);
        let top_down = egui::Layout::top_down(egui::Align::Min);
        ui.horizontal_top(|ui| {
            self.canvas_area_ui(ui, canvas_size, ctx, scene.clone(), &scene_colors);
            let rest = egui::vec2(full.x - canvas_size.x - 8.0, canvas_size.y);
            ui.allocate_ui_with_layout(rest, top_down, |ui| {
                ui.set_max_width(rest.x);
                self.insets_ui(ui, scene.as_ref().map(|(s, _)| s.as_ref()), &scene_colors);
            });
        });
        ui.separator();
        let below = ui.available_size();
        ui.horizontal_top(|ui| {
            ui.allocate_ui_with_layout(egui::vec2(full.x * 0.62, below.y), top_down, |ui| {
                spectrum_ui(
                    ui,
                    shared.dim,
                    shared.base,
                    shared.seq,
                    &drawn,
                    (below.y - 44.0).max(80.0),
                );
            });
            let rest = egui::vec2(full.x * 0.38 - 8.0, below.y);
            ui.allocate_ui_with_layout(rest, top_down, |ui| {
                ui.set_max_width(rest.x);
                ui.label("Which dimensions form a pair (click one to use it)");
                pairing_ui(ui, &mut self.layout, shared.dim, &drawn);
            });
        });
        if self.layout != shared.layout {
            ctx.shared_edit = Some(crate::ui::params::SharedParams {
                layout: self.layout,
                ..shared
            });
        }
    }
}

/// The view in the picker: its name, first hint, explanation and the shared controls it leaves
/// unused.
pub const INFO: crate::views::ViewInfo = crate::views::ViewInfo {
    label: "RoPE corkscrew (3D)",
    hint: "Drag to orbit, scroll to zoom · Play (Space) or the arrow keys move the query · lock the offset to see the score stay put",
    explanation: crate::widgets::explainer::Explanation {
        formula: "RoPE rotates pair i of a query at position m by m·θ_i, θ_i = base^(−2i/d); \
              q_m·k_n = Re Σ_i q_i conj(k_i) e^{i(m−n)θ_i}, so the score depends only on m − n",
        reading: "Each helix is one frequency pair: position runs along its axis, the rotated pair's two coordinates go round it. \
              The marker is the query's position m, the ring the key's position n. The insets show each pair's rotated query and key \
              and what they add to the score; the spectrum shows every pair's frequency against the sequence.",
        convention: "Interleaved pairs (2i, 2i+1) as Meta's Llama apply_rotary_emb and RoFormer; half pairs (i, i + d/2) as Hugging Face rotate_half and GPT-NeoX. \
                 Both rotate the same way; they pair different coordinates.",
        try_these: &[
            "Lock the offset and press Play: query and key travel together, and the score stays put.",
            "Drag the base up to 500000: the slow pairs barely turn over the whole sequence.",
            "Switch the layout and watch the pairing diagram: which coordinates rotate together changes, the geometry does not.",
        ],
    },
    unused: unused_controls,
};

/// Why this view does not use a shared control, or `None` where it does (its control is then
/// disabled with this as the tooltip).
fn unused_controls(param: crate::ui::params::SharedParam) -> Option<&'static str> {
    use crate::ui::params::SharedParam::*;
    match param {
        Heads => Some("RoPE rotates every head's query and key the same way"),
        Spacing => Some("RoPE's frequencies are base^(-2i/d) (Vaswani spacing) in every reference"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scene of 4 helices over 4096 positions, query and key, gives the same vertices
    /// through a Web Worker's parcels as here.
    #[test]
    fn the_scene_job_gives_the_same_through_parcels() {
        crate::jobs::remote::same_through_parcels(|| SceneKey {
            dim: 64,
            base: 10_000.0,
            layout: PairLayout::Half,
            pairs: vec![0, 5, 17, 31],
            first_position: 100,
            position_count: 4096,
            query: ProbeVector::UnitPairs,
            key: ProbeVector::Random(7),
        })
        .expect("the same scene");
    }
}
