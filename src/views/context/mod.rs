//! Context extension, in two halves. Language models: a RoPE model trained on `L` positions
//! run at `L'` under each scaling method (wavelength of every pair against `L` and `L'`, the
//! engine's map of distances and pairs whose rotation angle training never produced, a summary
//! per method, and as tabs the fitted attention score, the long-term decay, ALiBi at `L'` and
//! the survey's ViT accuracies). Vision transformers: a ViT's MAE table resampled to a larger
//! grid against the table made for it, beside the 2D encodings that need no resampling.

use egui_plot::{HLine, Line, Plot, PlotPoints, VLine};

use crate::encoding::grid::GridParams;
use crate::encoding::rope_scaling::{RopeFrequencies, RopeScaling, ScalingKind};
use crate::engine::TableSpec;
use crate::export::figure::context::{
    AlibiSettings, ContextChart, ContextFigure, ContextModelSource, FIT_SEED, VisionFigure,
};
use crate::scene::context::{
    self, LearnedMaps, LearnedTable, METHODS, MethodOverrides, PATCH_PIXELS, PairReach, RopeModel,
    SURVEY_TRAINING_RESOLUTION, VisionMaps, VisionParams, method_label,
};
use crate::ui::dialogs::{DialogAnswer, PendingDialog};
use crate::views::{View, ViewContext};
use crate::widgets::grid_map::GridMap;
use crate::widgets::heatmap::TableHeatmap;

mod charts;
mod lab_job;
mod methods;
mod vision;

use methods::{method_tip, number_ui};

use charts::*;
pub use lab_job::LabJob;
use vision::VisionKey;
pub use vision::{OpenedTable, VisionPanels};

/// The longest target length the slider offers.
pub const MAX_TARGET: usize = *crate::options::ranges::TARGET.range.end() as usize;

/// A method as the user set it: drawn or not, and the parameters they edited (the rest are
/// the method's own: the model's config, or the usual ones for `L -> L'`).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct MethodEdit {
    pub shown: bool,
    pub overrides: MethodOverrides,
}

/// One method as drawn: its scaling, frequencies and per-pair reach, or why it cannot be.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct MethodCurves {
    pub kind: ScalingKind,
    pub freqs: Result<RopeFrequencies, String>,
    pub reach: Vec<PairReach>,
    /// The inverse frequencies at `L'`, and the attention factor.
    pub theta: Vec<f64>,
    pub attention: f64,
}

/// Which half of the lab is on screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum LabMode {
    /// RoPE models run past their training length, and ALiBi.
    #[default]
    Text,
    /// A ViT's position table at a larger image than it was trained on.
    Vision,
}

/// What the view keeps between frames (its settings also between runs).
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct ContextView {
    /// The shipped model (assets/models) by file stem, when no config file was opened.
    pub model_file: String,
    /// `L'`.
    pub target: usize,
    /// Per method of [`METHODS`], in order.
    pub methods: Vec<MethodEdit>,
    /// The method whose unseen angles the map shows.
    pub map_method: ScalingKind,
    pub lower: ContextChart,
    pub mode: LabMode,
    pub vision: VisionParams,
    /// The vision half's bottom row shows the survey's accuracies instead of the encodings.
    pub vision_survey: bool,
    #[serde(skip)]
    vision_maps: Option<(VisionKey, Result<VisionPanels, String>)>,
    /// The vision half's maps being computed on a worker thread.
    #[serde(skip)]
    vision_job: crate::jobs::Latest<VisionKey, Result<VisionPanels, String>>,
    /// A learned position table opened (not kept between runs: the file may be gone).
    #[serde(skip)]
    learned: Option<OpenedTable>,
    /// Whether the learned table is drawn rather than MAE's.
    #[serde(skip)]
    pub use_learned: bool,
    #[serde(skip)]
    pub table_path_text: String,
    #[serde(skip)]
    pub tensor_text: String,
    #[serde(skip)]
    pub learned_error: Option<String>,
    #[serde(skip)]
    table_dialog: Option<PendingDialog>,
    #[serde(skip)]
    grid_maps: [GridMap; 6],
    pub alibi: AlibiSettings,
    /// A config opened from a file, and its path (not kept between runs: the file may be
    /// gone).
    #[serde(skip)]
    opened: Option<(std::path::PathBuf, RopeModel)>,
    #[serde(skip)]
    pending_dialog: Option<PendingDialog>,
    /// A config path being typed.
    #[serde(skip)]
    pub path_text: String,
    /// Why the last file opened was refused.
    #[serde(skip)]
    pub file_error: Option<String>,
    #[serde(skip)]
    heatmap: TableHeatmap,
    #[serde(skip)]
    curves: Option<(CurvesKey, Vec<MethodCurves>)>,
    /// The fitted score of the model it was fitted for.
    #[serde(skip)]
    fit: Option<(RopeModel, Result<context::FittedScore, String>)>,
    /// The charts' contents, computed on a worker thread (a fitted score is an SVD, the
    /// curves at L' = 1,048,576 millions of sines), and those on screen.
    #[serde(skip)]
    lab: crate::jobs::Latest<LabKey, LabResults>,
    #[serde(skip)]
    shown_lab: Option<(LabKey, std::sync::Arc<LabResults>)>,
}

/// What the charts are computed for: the curves' settings, and the lower chart when it has
/// lines (the score or the decay).
type LabKey = (CurvesKey, Option<ContextChart>);

/// The lines of the lower chart: per shown method, its kind (its colour), label and points.
type ChartLines = Vec<(ScalingKind, String, Vec<[f64; 2]>)>;

/// Every chart's contents for one [`LabKey`].
#[derive(serde::Serialize, serde::Deserialize)]
pub struct LabResults {
    curves: Vec<MethodCurves>,
    /// The fitted score, when the score chart is shown.
    fit: Option<Result<context::FittedScore, String>>,
    lines: ChartLines,
}

impl LabResults {
    /// Computes what `key` draws (on a worker thread); `fit` is the model's fitted score when
    /// it is already known.
    fn compute(key: &LabKey, fit: Option<Result<context::FittedScore, String>>) -> Self {
        let (curves_key, chart) = key;
        let curves = compute_curves(curves_key);
        let (model, target) = (&curves_key.model, curves_key.target);
        let shown: Vec<bool> = curves_key.methods.iter().map(|m| m.shown).collect();
        let fit = match chart {
            Some(ContextChart::Score) => {
                Some(fit.unwrap_or_else(|| context::FittedScore::fit(model, FIT_SEED)))
            }
            _ => None,
        };
        let lines = match (chart, &fit) {
            (Some(ContextChart::Score), Some(Ok(fit))) => {
                score_lines(fit, &curves, &shown, model, target)
            }
            (Some(ContextChart::Decay), _) => decay_lines(&curves, &shown, target),
            _ => Vec::new(),
        };
        Self { curves, fit, lines }
    }
}

/// Every method's curves (shown or not) for `key`.
fn compute_curves(key: &CurvesKey) -> Vec<MethodCurves> {
    METHODS
        .iter()
        .enumerate()
        .map(|(index, &kind)| {
            let overrides = key
                .methods
                .get(index)
                .cloned()
                .unwrap_or_default()
                .overrides;
            let freqs = key
                .model
                .resolved_scaling(kind, key.target, &overrides)
                .map(|scaling| key.model.frequencies(scaling));
            let reach = freqs
                .as_ref()
                .map(|f| context::pair_reach(&key.model, f, key.target))
                .unwrap_or_default();
            let theta = freqs
                .as_ref()
                .map(|f| f.inv_freq(key.model.head_dim, key.model.base, key.target))
                .unwrap_or_default();
            let attention = freqs.as_ref().map_or(1.0, |f| f.attention_factor());
            MethodCurves {
                kind,
                freqs,
                reach,
                theta,
                attention,
            }
        })
        .collect()
}

/// What the curves were computed for.
#[derive(Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CurvesKey {
    model: RopeModel,
    target: usize,
    methods: Vec<MethodEdit>,
}

impl Default for ContextView {
    fn default() -> Self {
        let shown = [
            ScalingKind::None,
            ScalingKind::Linear,
            ScalingKind::Ntk,
            ScalingKind::Yarn,
        ];
        Self {
            model_file: "llama-2-7b".to_owned(),
            target: 16_384,
            methods: METHODS
                .iter()
                .map(|kind| MethodEdit {
                    shown: shown.contains(kind),
                    ..Default::default()
                })
                .collect(),
            map_method: ScalingKind::None,
            lower: ContextChart::default(),
            mode: LabMode::default(),
            vision: VisionParams::default(),
            vision_survey: false,
            vision_maps: None,
            vision_job: crate::jobs::Latest::default(),
            learned: None,
            use_learned: false,
            table_path_text: String::new(),
            tensor_text: String::new(),
            learned_error: None,
            table_dialog: None,
            grid_maps: Default::default(),
            alibi: AlibiSettings::default(),
            opened: None,
            pending_dialog: None,
            path_text: String::new(),
            file_error: None,
            heatmap: TableHeatmap::default(),
            curves: None,
            lab: crate::jobs::Latest::default(),
            shown_lab: None,
            fit: None,
        }
    }
}

fn short_name(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

impl ContextView {
    /// The chosen shipped model, by stem (the first if that name is unknown).
    fn shipped(&self) -> Option<&'static (String, RopeModel)> {
        let models = context::shipped_models();
        models
            .iter()
            .find(|(stem, _)| *stem == self.model_file)
            .or_else(|| models.first())
    }

    /// Ticks the method a model was released with (Llama 3.1's llama3, Qwen's YaRN), so that
    /// choosing it shows its own scaling beside the others.
    fn show_own_method(&mut self, model: &RopeModel) {
        let own = model.scaling.kind;
        if own == ScalingKind::None {
            return;
        }
        if let Some(index) = METHODS.iter().position(|&kind| kind == own)
            && let Some(edit) = self.methods.get_mut(index)
        {
            edit.shown = true;
        }
    }

    /// The model drawn: the opened config, else the chosen shipped one.
    pub fn model(&self) -> RopeModel {
        if let Some((_, model)) = &self.opened {
            return model.clone();
        }
        self.shipped()
            .map(|(_, model)| model.clone())
            .unwrap_or_else(|| RopeModel {
                name: "RoPE, head dim 128".to_owned(),
                head_dim: 128,
                base: 10_000.0,
                rotary_dim: None,
                trained: 4096,
                scaling: RopeScaling::default(),
            })
    }

    /// `L'` as drawn: at least 2 and at most [`MAX_TARGET`].
    pub fn shown_target(&self) -> usize {
        self.target.clamp(2, MAX_TARGET)
    }

    fn edit(&self, kind: ScalingKind) -> MethodEdit {
        METHODS
            .iter()
            .position(|&k| k == kind)
            .and_then(|i| self.methods.get(i).cloned())
            .unwrap_or_default()
    }

    /// The scaling `kind` uses for the model at `L'`, with the user's edits.
    pub fn method_scaling(&self, kind: ScalingKind) -> Result<RopeScaling, String> {
        self.model()
            .resolved_scaling(kind, self.shown_target(), &self.edit(kind).overrides)
    }

    /// The view as a figure: what the export writes and `poslab figure context` draws.
    pub fn figure(&self) -> ContextFigure {
        let source = match &self.opened {
            Some((path, _)) => ContextModelSource::File(path.clone()),
            None => ContextModelSource::Shipped(
                self.shipped()
                    .map(|(stem, _)| stem.clone())
                    .unwrap_or_default(),
            ),
        };
        let chosen: Vec<(ScalingKind, &MethodEdit)> =
            METHODS.iter().copied().zip(&self.methods).collect();
        // What the command line reads back: ALiBi settings only with the ALiBi chart, and one
        // head only when not all.
        let alibi = match self.lower {
            ContextChart::Alibi => AlibiSettings {
                head: if self.alibi.all_heads {
                    self.alibi.heads - 1
                } else {
                    self.alibi.head.min(self.alibi.heads - 1)
                },
                ..self.alibi
            },
            _ => AlibiSettings::default(),
        };
        ContextFigure {
            source,
            model: self.model(),
            target: self.shown_target(),
            shown: chosen
                .iter()
                .filter(|(kind, edit)| edit.shown && self.method_scaling(*kind).is_ok())
                .map(|(kind, _)| *kind)
                .collect(),
            overrides: chosen
                .iter()
                .filter(|(kind, edit)| {
                    !edit.overrides.is_empty() && self.method_scaling(*kind).is_ok()
                })
                .map(|(kind, edit)| (*kind, edit.overrides.clone()))
                .collect(),
            map: self.map_method,
            chart: self.lower,
            alibi,
        }
    }

    /// The settings the curves are drawn for now.
    fn curves_key(&self) -> CurvesKey {
        CurvesKey {
            model: self.model(),
            target: self.shown_target(),
            methods: self.methods.clone(),
        }
    }

    /// Every method's curves (shown or not) for the settings now, computed on this thread when
    /// the view has not drawn them yet (for tests and exports; the view asks a worker).
    pub fn curves(&mut self) -> &[MethodCurves] {
        let key = self.curves_key();
        if self.curves.as_ref().map(|(k, _)| k) != Some(&key) {
            let curves = compute_curves(&key);
            self.curves = Some((key, curves));
        }
        self.curves.as_ref().map_or(&[], |(_, c)| c.as_slice())
    }

    /// The fitted score of the current model (fitted once per model, on this thread when the
    /// view has not fitted it yet).
    pub fn fitted_score(&mut self) -> Result<&context::FittedScore, String> {
        let model = self.model();
        if self.fit.as_ref().map(|(m, _)| m) != Some(&model) {
            let fit = context::FittedScore::fit(&model, FIT_SEED);
            self.fit = Some((model, fit));
        }
        match self.fit.as_ref().map(|(_, fit)| fit) {
            Some(Ok(fit)) => Ok(fit),
            Some(Err(reason)) => Err(reason.clone()),
            None => Err("no model".to_owned()),
        }
    }

    /// Whether the charts on screen are of other settings than those asked for.
    pub fn charts_pending(&self) -> bool {
        self.lab.is_pending()
    }

    /// The lower chart of the text half: its tabs, then the chart chosen, from `drawn` (the
    /// results on screen, whether they are current, and their settings).
    fn lower_chart_ui(
        &mut self,
        ui: &mut egui::Ui,
        drawn: Option<&(std::sync::Arc<LabResults>, bool, CurvesKey)>,
    ) {
        // Wrapped: in a narrow column the tabs take two rows rather than widen the column
        // over the table beside it.
        ui.horizontal_wrapped(|ui| {
                let choices = [
                    (ContextChart::Score, "Attention score", "The score q·k of a query and key at distance s is a(s) = Re Σ h_j exp(i s θ_j). Here the weights h_j are fitted to random values at distances in [0, L) (the worst case of Chen et al.'s Position Interpolation paper), then evaluated under each method up to L': extrapolated, nothing holds them; interpolated, every distance maps back into [0, L). Methods that change some frequencies and not others change the score even within L."),
                    (ContextChart::Decay, "Long-term decay", "RoFormer's bound on |q·k| against distance under each method's frequencies, times the attention factor squared"),
                    (ContextChart::Alibi, "ALiBi at L'", "An ALiBi model trained on L positions run at L': what its last query attends to with equal content scores, with the trained slopes and with every slope times L/L' (Al-Khateeb et al.'s slope scaling)"),
                    (ContextChart::Survey, "ViT accuracy", "The survey's ImageNet-100 top-1 accuracy of four ViTs trained at 224 px, tested from 96 to 512 px"),
                ];
                for (chart, label, tip) in choices {
                    ui.selectable_value(&mut self.lower, chart, label).on_hover_text(tip);
                }
            });
        let height = ui.available_height();
        let model = self.model();
        let target = self.shown_target();
        // A line chart of other settings than the tab's is not drawn as if it were its.
        let drawn_chart = self.shown_lab.as_ref().map(|(k, _)| k.1);
        let lines = drawn
            .as_ref()
            .filter(|_| drawn_chart == Some(Some(self.lower)));
        match self.lower {
            ContextChart::Survey => survey_ui(ui, height),
            ContextChart::Alibi => alibi_ui(ui, &mut self.alibi, model.trained, target),
            ContextChart::Decay => match lines {
                Some((results, _, key)) => decay_ui(ui, &results.lines, &key.model, height),
                None => {
                    ui.spinner();
                }
            },
            ContextChart::Score => match lines {
                Some((results, _, key)) => match &results.fit {
                    Some(Ok(fit)) => {
                        fitted_score_ui(ui, fit, &results.lines, &key.model, key.target, height)
                    }
                    Some(Err(reason)) => {
                        ui.label(reason);
                    }
                    None => {
                        ui.spinner();
                    }
                },
                None => {
                    ui.spinner();
                }
            },
        }
    }

    /// Asks a worker for the charts of the settings now, and takes what has arrived: the
    /// charts to draw (the last arrived, perhaps of earlier settings) and whether they are the
    /// settings' own.
    fn lab_results(
        &mut self,
        ctx: &egui::Context,
        status: &mut crate::ui::status::Status,
    ) -> Option<(std::sync::Arc<LabResults>, bool)> {
        let chart = match self.lower {
            ContextChart::Score | ContextChart::Decay => Some(self.lower),
            ContextChart::Alibi | ContextChart::Survey => None,
        };
        let key: LabKey = (self.curves_key(), chart);
        let shown_is_current = self.shown_lab.as_ref().is_some_and(|(k, _)| *k == key);
        if !shown_is_current && !self.lab.wants(&key) {
            let known_fit = self
                .fit
                .as_ref()
                .filter(|(model, _)| *model == key.0.model)
                .map(|(_, fit)| fit.clone());
            let what = format!(
                "computing {} at L' = {}",
                short_name(&key.0.model.name),
                key.0.target
            );
            let job = LabJob {
                key: key.clone(),
                fit: known_fit,
            };
            self.lab.request_remote(Some(ctx), key.clone(), what, job);
        }
        for update in self.lab.poll(Some(ctx)) {
            match update {
                crate::jobs::Update::Done(results, _) => {
                    let asked = self.lab.wanted().cloned().unwrap_or_else(|| key.clone());
                    if let Some(fit) = &results.fit {
                        self.fit = Some((asked.0.model.clone(), fit.clone()));
                    }
                    self.shown_lab = Some((asked, std::sync::Arc::new(results)));
                }
                crate::jobs::Update::Preview(_) => {}
                crate::jobs::Update::Failed(reason) => status.error(reason),
            }
        }
        if let Some(pending) = self.lab.pending() {
            status.pending(pending.clone());
            ctx.request_repaint();
        }
        self.shown_lab
            .as_ref()
            .map(|(k, results)| (results.clone(), *k == key))
    }

    /// The table the unseen-angle map draws, or why there is none.
    pub fn unseen_spec(&self) -> Result<TableSpec, String> {
        self.figure().unseen_spec()
    }

    /// Reads a config file as the model; a file that is not a RoPE model's config is refused
    /// with its reason and the view keeps its model.
    pub fn open_config(&mut self, path: &std::path::Path) {
        // A model with a RoPE per layer type is refused naming them, not read as one.
        let config = crate::table_args::config::read_config(path).and_then(|c| {
            c.one_rope()
                .map_err(|e| crate::table_args::CliError::usage(format!("{} {e}", path.display())))
        });
        match config {
            Ok(config) => match RopeModel::of(&config) {
                Some(model) if let Err(problem) = model.validate() => {
                    self.file_error = Some(format!("{}: {problem}", path.display()));
                }
                Some(model) => {
                    self.show_own_method(&model);
                    self.opened = Some((path.to_owned(), model));
                    self.file_error = None;
                }
                None => {
                    self.file_error = Some(format!(
                        "{}: {} does not use RoPE (or gives no trained length), so it has no rotation angles to extend",
                        path.display(),
                        config.name
                    ));
                }
            },
            Err(error) => self.file_error = Some(error.message),
        }
    }

    fn controls_ui(&mut self, ui: &mut egui::Ui) {
        let model = self.model();
        ui.horizontal_wrapped(|ui| {
            let label = match &self.opened {
                Some((_, model)) => format!("{} (opened)", short_name(&model.name)),
                None => short_name(&model.name).to_owned(),
            };
            egui::ComboBox::from_label("Model")
                .selected_text(label)
                .show_ui(ui, |ui| {
                    for (file, rope) in context::shipped_models() {
                        let chosen = self.opened.is_none() && self.model_file == *file;
                        if ui
                            .selectable_label(chosen, short_name(&rope.name))
                            .on_hover_text(format!(
                                "head dim {}, rotary {}, base {}, trained on {} positions",
                                rope.head_dim,
                                rope.rotary(),
                                rope.base,
                                rope.trained
                            ))
                            .clicked()
                        {
                            self.model_file = file.clone();
                            self.opened = None;
                            self.show_own_method(rope);
                        }
                    }
                })
                .response
                .on_hover_text("A model's head width, rotary width, base and the length L it was pre-trained on");
            if ui
                .add_enabled(self.pending_dialog.is_none(), egui::Button::new("Open config…"))
                .on_hover_text("A Hugging Face config.json of a RoPE model (or drop one on the window)")
                .clicked()
            {
                self.pending_dialog = Some(PendingDialog::open_file(
                    ui.ctx(),
                    "Model config",
                    "config.json",
                    &["json"],
                ));
            }
            let path_box = ui
                .add(
                    egui::TextEdit::singleline(&mut self.path_text)
                        .desired_width(160.0)
                        .hint_text(crate::ui::dialogs::path_hint("or a config path, Enter")),
                )
                .on_hover_text("Type the path of a config.json and press Enter");
            if path_box.lost_focus()
                && ui.input(|i| i.key_pressed(egui::Key::Enter))
                && !self.path_text.trim().is_empty()
            {
                let path = std::path::PathBuf::from(self.path_text.trim());
                self.open_config(&path);
            }
            let mut target = self.shown_target();
            let slider = crate::widgets::number_box::NumberBox::slider(&mut target, 2..=MAX_TARGET)
                .logarithmic(true)
                .text("Target length L'");
            if ui
                .add(slider)
                .on_hover_text("The context the model is run at; L is where its training stopped")
                .changed()
            {
                self.target = target;
            }
            ui.label(format!(
                "L = {}   L'/L = {:.3}",
                model.trained,
                self.shown_target() as f64 / model.trained as f64
            ));
        });
        ui.horizontal_wrapped(|ui| {
            ui.label("Methods:");
            for (k, &kind) in METHODS.iter().enumerate() {
                let available = self.method_scaling(kind);
                let Some(edit) = self.methods.get_mut(k) else {
                    continue;
                };
                let response = ui.add_enabled(
                    available.is_ok(),
                    egui::Checkbox::new(&mut edit.shown, method_label(kind)),
                );
                match available {
                    Ok(_) => response.on_hover_text(method_tip(kind)),
                    Err(reason) => response.on_disabled_hover_text(reason),
                };
            }
        });
        egui::CollapsingHeader::new("Method parameters")
            .id_salt("context_method_parameters")
            .show(ui, |ui| self.parameters_ui(ui));
    }

    /// A grid of each shown method's parameters; an empty box keeps the method's own.
    fn parameters_ui(&mut self, ui: &mut egui::Ui) {
        egui::Grid::new("context_parameters")
            .striped(true)
            .show(ui, |ui| {
                ui.label("method");
                ui.label("factor");
                ui.label("other parameters");
                ui.end_row();
                for (k, &kind) in METHODS.iter().enumerate() {
                    if kind == ScalingKind::None {
                        continue;
                    }
                    // The method's own values show in the boxes; an edit that makes the
                    // method invalid keeps its row, with the reason, so it can be undone.
                    let model = self.model();
                    let Ok(own) = model.method_scaling(kind, self.shown_target()) else {
                        continue;
                    };
                    let problem = self.method_scaling(kind).err();
                    let Some(edit) = self.methods.get_mut(k) else {
                        continue;
                    };
                    let mut current = own;
                    edit.overrides.apply(&mut current);
                    ui.label(method_label(kind));
                    number_ui(
                        ui,
                        &mut edit.overrides.factor,
                        current.factor,
                        "factor",
                        1.0..=1024.0,
                    );
                    ui.horizontal(|ui| match kind {
                        ScalingKind::Llama3 => {
                            number_ui(
                                ui,
                                &mut edit.overrides.low_freq_factor,
                                current.low_freq_factor,
                                "low_freq_factor",
                                0.01..=1e3,
                            );
                            number_ui(
                                ui,
                                &mut edit.overrides.high_freq_factor,
                                current.high_freq_factor,
                                "high_freq_factor",
                                0.01..=1e3,
                            );
                        }
                        ScalingKind::Yarn => {
                            number_ui(
                                ui,
                                &mut edit.overrides.beta_fast,
                                current.beta_fast.or(Some(32.0)),
                                "beta_fast",
                                0.01..=1e3,
                            );
                            number_ui(
                                ui,
                                &mut edit.overrides.beta_slow,
                                current.beta_slow.or(Some(1.0)),
                                "beta_slow",
                                0.01..=1e3,
                            );
                        }
                        ScalingKind::Dynamic => {
                            ui.label("the base grows with L' beyond L");
                        }
                        ScalingKind::Longrope => {
                            ui.label("per-pair factors from the model's config");
                        }
                        _ => {}
                    });
                    if let Some(problem) = problem {
                        ui.colored_label(ui.visuals().error_fg_color, problem);
                    }
                    ui.end_row();
                }
            });
        if ui
            .button("Reset parameters")
            .on_hover_text(
                "Back to each method's own parameters: the model's config, or factor L'/L",
            )
            .clicked()
        {
            for edit in &mut self.methods {
                edit.overrides = MethodOverrides::default();
            }
        }
    }

    /// Picks up a dialog's answer or a dropped config.
    fn poll_files(&mut self, ui: &egui::Ui) {
        if let Some(dialog) = &self.pending_dialog {
            match dialog.poll() {
                DialogAnswer::Waiting => {}
                DialogAnswer::Chosen(path) => {
                    self.pending_dialog = None;
                    self.open_config(&path);
                }
                DialogAnswer::Cancelled => self.pending_dialog = None,
            }
        }
        let dropped = ui.ctx().input(|i| {
            i.raw
                .dropped_files
                .iter()
                .map(|f| f.path().to_path_buf())
                .find(|path| crate::table_args::model_file::is_model_file(path))
        });
        if let Some(path) = dropped {
            self.open_config(&path);
        }
    }
}

impl View for ContextView {
    /// The vision half takes a learned position table dropped on the window.
    fn takes_dropped_tables(&self) -> bool {
        self.mode == LabMode::Vision
    }

    fn export(&self, _: &crate::ui::params::SharedParams) -> Option<crate::views::ViewExport> {
        if self.mode == LabMode::Vision {
            let figure = self.vision_figure();
            let p = figure.params;
            return Some(crate::views::ViewExport {
                name: format!("vit_{}_to_{}_query{}", p.train_side, p.target_side, p.query),
                // The data: the training grid's table resampled, as a model would hold it.
                data: Some(match self.learned_in_use() {
                    Some(opened) => opened.table.resample_spec(&p),
                    None => p.resample_spec(),
                }),
                figure: crate::export::figure::FigureSpec::ContextVision(figure),
            });
        }
        let figure = self.figure();
        let data = figure.unseen_spec().ok();
        let stem = match &figure.source {
            ContextModelSource::Shipped(stem) => stem.clone(),
            ContextModelSource::File(_) => "model".to_owned(),
        };
        Some(crate::views::ViewExport {
            name: format!("context_{stem}_{}_{}", figure.target, figure.map.name()),
            figure: crate::export::figure::FigureSpec::Context(Box::new(figure)),
            data,
        })
    }

    fn ui(&mut self, ui: &mut egui::Ui, ctx: &mut ViewContext<'_>) {
        let (colormap, engine, reduce) = (ctx.colormap, ctx.engine, ctx.reduce);
        let status = &mut *ctx.status;
        ui.horizontal(|ui| {
            ui.selectable_value(&mut self.mode, LabMode::Text, "Language models: RoPE, ALiBi")
                .on_hover_text("A model trained on L positions run at L'");
            ui.selectable_value(&mut self.mode, LabMode::Vision, "Vision transformers: larger images")
                .on_hover_text("A ViT trained at one resolution run at a larger one: its position table resampled, against encodings that need none");
        });
        if self.mode == LabMode::Vision {
            // The status bar speaks of the text half's map: not of these.
            *status = crate::ui::status::Status::default();
            self.vision_ui(ui, colormap, engine, status);
            return;
        }
        self.poll_files(ui);
        self.controls_ui(ui);
        if let Some(error) = &self.file_error {
            ui.colored_label(ui.visuals().error_fg_color, error);
        }
        let results = self.lab_results(ui.ctx(), status);
        let full = ui.available_rect_before_wrap();
        let (left, right) = crate::widgets::layout::split_columns(full, 0.5, 12.0);
        // The lower chart carries its tabs and a legend row: in a short window the wavelengths
        // give it half the column, not 40% (its plot was a strip at 720 px).
        let wave_share = if left.height() < 560.0 { 0.5 } else { 0.6 };
        let (wave_rect, survey_rect) = crate::widgets::layout::split_rows(left, wave_share, 8.0);
        let (map_rect, summary_rect) = crate::widgets::layout::split_rows(right, 0.66, 8.0);
        ui.allocate_rect(full, egui::Sense::hover());
        // The charts on screen were computed for these settings (the shown ones when the new
        // ones are still on their way: their model, L' and methods, said in a line above).
        let drawn = results.as_ref().and_then(|(r, current)| {
            let key = self.shown_lab.as_ref().map(|(k, _)| k.0.clone())?;
            Some((r.clone(), *current, key))
        });
        ui.scope_builder(
            egui::UiBuilder::new().max_rect(wave_rect),
            |ui| match &drawn {
                Some((results, current, key)) => {
                    if !current {
                        stale_charts_note(ui, key);
                    }
                    let shown: Vec<bool> = key.methods.iter().map(|m| m.shown).collect();
                    wavelength_ui(
                        ui,
                        &results.curves,
                        &shown,
                        &key.model,
                        key.target,
                        wave_rect.height(),
                    );
                }
                None => {
                    ui.spinner();
                }
            },
        );
        ui.scope_builder(egui::UiBuilder::new().max_rect(survey_rect), |ui| {
            self.lower_chart_ui(ui, drawn.as_ref())
        });
        ui.scope_builder(egui::UiBuilder::new().max_rect(summary_rect), |ui| {
            if let Some((results, _, key)) = &drawn {
                let shown: Vec<bool> = key.methods.iter().map(|m| m.shown).collect();
                egui::ScrollArea::both().show(ui, |ui| {
                    summary_ui(ui, &results.curves, &shown, &key.model, key.target)
                });
            }
        });
        let ui = &mut ui.new_child(egui::UiBuilder::new().max_rect(map_rect));
        ui.horizontal(|ui| {
            egui::ComboBox::from_label("Map: its unseen angles")
                .selected_text(method_label(self.map_method))
                .show_ui(ui, |ui| {
                    for kind in METHODS {
                        ui.selectable_value(&mut self.map_method, kind, method_label(kind));
                    }
                })
                .response
                .on_hover_text("Distance p down, pair i across: light where the pair's angle p·θ'_i (mod a turn) lies beyond every angle (L-1)·θ_i it reached in training");
        });
        let spec = match self.unseen_spec() {
            Ok(spec) => spec,
            Err(reason) => {
                ui.label(reason);
                return;
            }
        };
        self.heatmap.fixed_range = Some((0.0, 1.0));
        let response = self.heatmap.ui(
            ui,
            "context_unseen",
            &spec,
            0,
            ("pair i", "distance p"),
            reduce,
            colormap,
            engine,
            status,
        );
        if let Some(response) = response
            && let Some((p, i)) = response.hovered
            && let TableSpec::RopeUnseen(params) = &spec
            && let Some(&(per_step, limit)) = params.pairs().get(i)
        {
            let turns = |word: u64| word as f64 / 2f64.powi(64);
            let angle = turns((p as u64).wrapping_mul(per_step));
            let text = if limit == u64::MAX {
                format!(
                    "pair {i}, distance {p}: angle {angle:.6} turn\nseen: the pair turned a full turn or more in training"
                )
            } else {
                let span = turns(limit - context::SEEN_SLACK);
                format!(
                    "pair {i}, distance {p}: angle {angle:.6} turn (mod 1)\ntraining reached {span:.6} turn: {}",
                    if context::is_unseen(p as u64, per_step, limit) {
                        "UNSEEN"
                    } else {
                        "seen"
                    }
                )
            };
            response.show_hover(text);
        }
    }
}

/// The view in the picker: its name, first hint, explanation and the shared controls it leaves
/// unused.
pub const INFO: crate::views::ViewInfo = crate::views::ViewInfo {
    label: "Context extension",
    hint: "Pick a model and a target length L' · tick methods to compare · hover a pair for its wavelengths, the map for its angle",
    explanation: crate::widgets::explainer::Explanation {
        formula: "Pair i turns θ_i per position. A method changes it to θ'_i (PI: θ_i/s; NTK-aware: base·s^(d/(d−2)); YaRN and Llama 3: by wavelength band). \
              A cell (p, i) is unseen when p·θ'_i mod 2π lies beyond the angles (L−1)·θ_i that training reached",
        reading: "Wavelengths: pair across, 2π/θ'_i up on a log axis, the training length L and the target L' marked. \
              The map: distance p down, pair across, coloured where the angle was never seen. \
              The tabs: a score fitted within L evaluated past it, RoFormer's decay, ALiBi at L', the survey's accuracies. \
              The vision half: a ViT's table resampled to a bigger grid against the table made for it.",
        convention: "Scalings as Hugging Face transformers' rope initialisers (linear, dynamic, yarn, llama3, longrope), from the model's config.json; \
                 resampling as timm's resample_abs_pos_embed on MAE's table.",
        try_these: &[
            "Llama 2 at L' = 16384: with extrapolation the slow pairs are unseen from distance 4096; tick PI and the map all but empties: only distances 16,381 to 16,383, which PI maps to 4,095.25 to 4,095.75, reach past the last trained distance, 4,095 (the table's 0.005%).",
            "Open the score tab: a score fitted within L explodes past it when extrapolated, and stays bounded under PI.",
            "Switch to Vision and raise the grid to 24: the resampled table is not the one the formula gives for that grid.",
        ],
    },
    unused: unused_controls,
};

/// Why this view leaves the side panel's controls unused: all of them, for one reason.
fn unused_controls(_: crate::ui::params::SharedParam) -> Option<&'static str> {
    Some(
        "The context-extension lab takes the head width, base and lengths from the model chosen in the view",
    )
}
