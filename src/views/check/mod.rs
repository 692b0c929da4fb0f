//! Check an implementation: open a table computed elsewhere (`.npy`, `.csv`, `.safetensors`,
//! by dialog, typed path or dropped on the window), say what it should be or let poslab
//! identify it, and see the reference, the loaded table and their difference as three aligned
//! heatmaps, with the largest errors, where they are, and a verdict; for a file that does not
//! match, a map of every element outside the tolerance, the worst listed, and the error curves.
//! A model's `config.json` or `.gguf` opened here shows the RoPE it runs per layer type.

mod model;
pub mod outcome;
mod where_ui;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ndarray::ArrayD;

use crate::check::Tolerance;
use crate::colormap::Colormap;
use crate::engine::reduce::Reduce;
use crate::import::tables::{TableFormat, TensorInfo};
use crate::ui::dialogs::{DialogAnswer, PendingDialog};
use crate::ui::params::SharedParams;
use crate::views::{View, ViewContext, ViewExport};
use crate::widgets::heatmap::{HeatmapData, HeatmapTexture, Outline, colorbar_ui, heatmap_ui};
pub use outcome::{Envelopes, Outcome};

/// Heatmaps show at most this many cells a side (every k-th row or column beyond).
const MAX_SHOWN: usize = 1024;

/// What the loaded table is compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    /// The closest kind and convention poslab finds.
    Identify,
    /// A kind with the side panel's parameters.
    Sinusoidal,
    RopeAngles,
    RopeInvFreq,
    AlibiSlopes,
    Alibi,
    /// Any kind of `poslab table` with its options, typed.
    Options,
}

impl Expected {
    const ALL: [Expected; 7] = [
        Self::Identify,
        Self::Sinusoidal,
        Self::RopeAngles,
        Self::RopeInvFreq,
        Self::AlibiSlopes,
        Self::Alibi,
        Self::Options,
    ];

    fn label(self) -> &'static str {
        match self {
            Self::Identify => "identify it",
            Self::Sinusoidal => "sinusoidal",
            Self::RopeAngles => "RoPE angles",
            Self::RopeInvFreq => "RoPE inverse frequencies",
            Self::AlibiSlopes => "ALiBi slopes",
            Self::Alibi => "ALiBi biases (all heads)",
            Self::Options => "a kind and options of poslab table…",
        }
    }
}

/// A file that was read.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Loaded {
    path: PathBuf,
    tensors: Vec<TensorInfo>,
    tensor: Option<String>,
    #[serde(with = "crate::jobs::remote::bulk")]
    values: Arc<ArrayD<f64>>,
    /// The float type the file stores its values in, when it says (not a .csv).
    stored: Option<crate::import::StoredFloat>,
    /// Counts loads, so that reloading the same path recomputes.
    generation: u64,
}

/// What an outcome depends on: the file, the choice, the parameters, the tolerance.
#[derive(Debug, Clone, PartialEq)]
struct OutcomeKey {
    file: u64,
    expected: Expected,
    options: String,
    shared: SharedParams,
    causal: bool,
    tolerance: (f64, f64),
    type_tolerance: bool,
}

/// What the pictures were made for: the outcome, the slice, the colours, the reduction.
type PictureKey = (OutcomeKey, usize, Colormap, Reduce);

struct Picture {
    data: HeatmapData,
    texture: HeatmapTexture,
    colormap: Colormap,
    /// The outside map's lit blocks `(row bin, column bin)`, each marked on screen; empty for
    /// the other pictures, and for a map with too many to mark (found once, not each frame).
    marks: Vec<(usize, usize)>,
}

pub struct CheckView {
    pub expected: Expected,
    pub causal: bool,
    /// The slice shown of a 3-D table.
    pub head: usize,
    pub tolerance: Tolerance,
    /// Whether the file's float type decides the tolerance (as `poslab check` without
    /// `--atol`/`--rtol`), rather than `tolerance`.
    pub type_tolerance: bool,
    /// `poslab table` words for `Expected::Options`, e.g. `rope-angles --seq 4096 --dim 128`.
    pub options: String,
    /// Why the options do not name a table.
    options_error: Option<String>,
    /// The side panel's parameters, as last drawn.
    shared: SharedParams,
    pub path_text: String,
    loaded: Option<Loaded>,
    pub error: Option<String>,
    pending_dialog: Option<PendingDialog>,
    /// Why no file came from the dialog, shown beside the path box until the next load.
    pub dialog_note: Option<String>,
    /// Puts the keyboard in the path box next frame.
    focus_path: bool,
    loads: u64,
    outcome: Option<(OutcomeKey, Outcome)>,
    /// Identification or comparison in progress, off the UI thread.
    outcome_job: crate::jobs::Latest<OutcomeKey, Result<Outcome, String>>,
    /// The pictures (reference, file, difference and, for a mismatch, the elements outside),
    /// for the outcome's key, the slice and the colour map.
    pictures: Option<(PictureKey, Vec<Picture>)>,
    /// The pictures being made on a worker thread.
    pictures_job: crate::jobs::Latest<PictureKey, Vec<outcome::SentPicture>>,
    /// The element outside the tolerance last clicked in the list, outlined in every picture.
    focused_cell: Option<Vec<usize>>,
    /// The file being read on a worker thread: its path and tensor.
    load_job: crate::jobs::Latest<(PathBuf, Option<String>), Result<Loaded, String>>,
    /// egui's context, to wake the app when a file read outside a frame arrives.
    egui_ctx: Option<egui::Context>,
    /// A model's config.json or .gguf opened here: its RoPE per layer type, drawn.
    model: Option<crate::table_args::model_file::ModelFile>,
    /// The model file being read on a worker thread.
    model_job:
        crate::jobs::Latest<PathBuf, Result<crate::table_args::model_file::ModelFile, String>>,
}

impl Default for CheckView {
    fn default() -> Self {
        Self {
            expected: Expected::Identify,
            causal: true,
            head: 0,
            tolerance: Tolerance::default(),
            type_tolerance: true,
            options: String::new(),
            options_error: None,
            shared: SharedParams::default(),
            path_text: String::new(),
            loaded: None,
            error: None,
            pending_dialog: None,
            dialog_note: None,
            focus_path: false,
            loads: 0,
            outcome: None,
            outcome_job: crate::jobs::Latest::default(),
            pictures: None,
            pictures_job: crate::jobs::Latest::default(),
            focused_cell: None,
            load_job: crate::jobs::Latest::default(),
            egui_ctx: None,
            model: None,
            model_job: crate::jobs::Latest::default(),
        }
    }
}

impl CheckView {
    /// Reads `path` (for a `.safetensors` file, `tensor` or its only tensor).
    /// Reads `path` (its tensor `tensor`, or its first) on a worker thread: a large file takes
    /// seconds to read. What the view shows stays until it has arrived.
    pub fn load(&mut self, path: &Path, tensor: Option<String>) {
        self.dialog_note = None;
        let (job_path, job_tensor) = (path.to_owned(), tensor.clone());
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        // A model's config or GGUF file: its RoPE is drawn, not compared as a table.
        if crate::table_args::model_file::is_model_file(path) {
            self.model_job.forget();
            self.model_job.request(
                self.egui_ctx.as_ref(),
                job_path.clone(),
                format!("reading {name}"),
                move |_| Ok(crate::table_args::model_file::read(&job_path)),
            );
            self.path_text = path.display().to_string();
            if let Some(ctx) = &self.egui_ctx {
                ctx.request_repaint();
            }
            return;
        }
        // Loading the same file again reads it again (it may have changed on disk).
        self.load_job.forget();
        let job = outcome::LoadJob {
            handed_over: crate::import::handed_over::get(path).map(|bytes| bytes.shared()),
            path: job_path,
            tensor: job_tensor,
        };
        self.load_job.request_remote(
            self.egui_ctx.as_ref(),
            (path.to_owned(), tensor),
            format!("reading {name}"),
            job,
        );
        self.path_text = path.display().to_string();
        // The next frame says the file is being read.
        if let Some(ctx) = &self.egui_ctx {
            ctx.request_repaint();
        }
    }

    /// Takes a file read on a worker thread once it has arrived.
    fn poll_load(&mut self, ctx: &egui::Context, status: &mut crate::ui::status::Status) {
        for update in self.load_job.poll(Some(ctx)) {
            match update {
                crate::jobs::Update::Done(Ok(read), _) => {
                    self.model = None;
                    self.path_text = read.path.display().to_string();
                    self.loads += 1;
                    self.loaded = Some(Loaded {
                        generation: self.loads,
                        ..read
                    });
                    self.error = None;
                    self.head = 0;
                }
                crate::jobs::Update::Done(Err(error), _) | crate::jobs::Update::Failed(error) => {
                    self.error = Some(error);
                }
                crate::jobs::Update::Preview(_) => {}
            }
        }
        if let Some(pending) = self.load_job.pending() {
            status.pending(pending.clone());
            ctx.request_repaint();
        }
        for update in self.model_job.poll(Some(ctx)) {
            match update {
                crate::jobs::Update::Done(Ok(model), _) => {
                    self.path_text = model.path.display().to_string();
                    self.model = Some(model);
                    self.loaded = None;
                    self.outcome = None;
                    self.pictures = None;
                    self.error = None;
                }
                crate::jobs::Update::Done(Err(error), _) | crate::jobs::Update::Failed(error) => {
                    self.error = Some(error);
                }
                crate::jobs::Update::Preview(_) => {}
            }
        }
        if let Some(pending) = self.model_job.pending() {
            status.pending(pending.clone());
            ctx.request_repaint();
        }
    }

    /// The model file opened here, if the last file was one.
    pub fn model_file(&self) -> Option<&crate::table_args::model_file::ModelFile> {
        self.model.as_ref()
    }

    fn file_ui(&mut self, ui: &mut egui::Ui) {
        if let Some(dialog) = &self.pending_dialog {
            match dialog.poll() {
                DialogAnswer::Waiting => {}
                DialogAnswer::Chosen(path) => {
                    self.pending_dialog = None;
                    self.load(&path, None);
                }
                DialogAnswer::Cancelled => {
                    // rfd answers the same for a cancel and for no dialog at all: either way,
                    // the path box is the way on.
                    self.pending_dialog = None;
                    self.dialog_note = Some(crate::ui::dialogs::no_file_chosen(
                        "type a path and press Enter",
                    ));
                    self.focus_path = true;
                }
            }
        }
        let dropped: Option<PathBuf> = ui.ctx().input(|i| {
            i.raw
                .dropped_files
                .iter()
                .map(|f| f.path().to_path_buf())
                .find(|p| {
                    TableFormat::from_path(p).is_some()
                        || crate::table_args::model_file::is_model_file(p)
                })
        });
        if let Some(path) = dropped {
            self.load(&path, None);
        }
        ui.horizontal_wrapped(|ui| {
            if ui
                .add_enabled(self.pending_dialog.is_none(), egui::Button::new("Open…"))
                .on_hover_text(
                    "Open a .npy, .csv or .safetensors table to compare or identify, or a model's config.json or .gguf file to see the RoPE it runs per layer type (or drop one on the window)",
                )
                .clicked()
            {
                self.open_dialog(ui.ctx());
            }
            let label = ui.label("or file:");
            let field = ui
                .add(
                    egui::TextEdit::singleline(&mut self.path_text)
                        .hint_text(crate::ui::dialogs::path_hint("type a path"))
                        .desired_width(260.0),
                )
                .labelled_by(label.id);
            if std::mem::take(&mut self.focus_path) {
                field.request_focus();
            }
            let enter = field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            if (ui.button("Load").clicked() || enter) && !self.path_text.trim().is_empty() {
                let path = PathBuf::from(self.path_text.trim());
                self.load(&path, None);
            }
            if let Some(note) = &self.dialog_note {
                ui.colored_label(ui.visuals().warn_fg_color, note);
            }
            let mut pick = None;
            if let Some(loaded) = &self.loaded
                && loaded.tensors.len() > 1
            {
                egui::ComboBox::from_label("Tensor")
                    .selected_text(loaded.tensor.clone().unwrap_or_default())
                    .show_ui(ui, |ui| {
                        for tensor in &loaded.tensors {
                            let text =
                                format!("{} {} {:?}", tensor.name, tensor.dtype, tensor.shape);
                            let selected = loaded.tensor.as_deref() == Some(tensor.name.as_str());
                            if ui.selectable_label(selected, text).clicked() && !selected {
                                pick = Some((loaded.path.clone(), tensor.name.clone()));
                            }
                        }
                    });
            }
            if let Some((path, tensor)) = pick {
                self.load(&path, Some(tensor));
            }
        });
        // A model file shown: nothing to compare it with.
        if self.loaded.is_none() && self.model.is_some() {
            return;
        }
        ui.horizontal_wrapped(|ui| {
            egui::ComboBox::from_label("Compare with")
                .selected_text(self.expected.label())
                .show_ui(ui, |ui| {
                    for expected in Expected::ALL {
                        ui.selectable_value(&mut self.expected, expected, expected.label());
                    }
                })
                .response
                .on_hover_text("A kind with the side panel's parameters, or let poslab find the kind, convention and parameters");
            if self.expected == Expected::Alibi {
                ui.checkbox(&mut self.causal, "causal");
            }
            if self.expected == Expected::Options {
                let label = ui.label("poslab table");
                crate::widgets::number_box::committed_text(ui, "check options", &mut self.options, |edit| {
                    edit.hint_text("rope-angles --seq 4096 --dim 128 --base 500000")
                        .desired_width(320.0)
                })
                .0
                .labelled_by(label.id)
                .on_hover_text("A kind and its options, as poslab table takes them (poslab table --help): applied on Enter");
            }
            ui.separator();
            ui.checkbox(&mut self.type_tolerance, "tolerance by file type")
                .on_hover_text("As poslab check without --atol/--rtol: a float64 file within 1e-10 of each value, a float32, float16 or bfloat16 file within 8 units in the last place of its type, or PyTorch's own float32 computation to 2 ulp (a .csv: the tolerance beside)");
            ui.add_enabled_ui(!self.type_tolerance, |ui| {
                ui.add(
                    crate::widgets::number_box::NumberBox::drag(&mut self.tolerance.abs)
                        .range(0.0..=1.0)
                        .speed(1e-6)
                        .prefix("abs tol ")
                        .custom_formatter(|v, _| format!("{v:.0e}")),
                )
                .on_hover_text("Every element must lie within abs + rel × |reference|");
                ui.add(
                    crate::widgets::number_box::NumberBox::drag(&mut self.tolerance.rel)
                        .range(0.0..=1.0)
                        .speed(1e-6)
                        .prefix("rel tol ")
                        .custom_formatter(|v, _| format!("{v:.0e}")),
                );
            });
        });
        if let Some(note) = self.sizes_note() {
            ui.label(egui::RichText::new(note).small().weak());
        }
    }

    /// The outcome shown, once computed for the current file and choices.
    pub fn outcome(&self) -> Option<&Outcome> {
        let key = self.outcome_key()?;
        self.outcome
            .as_ref()
            .filter(|(k, _)| *k == key)
            .map(|(_, outcome)| outcome)
    }

    /// The element outside the tolerance last clicked in the list (outlined in the pictures).
    pub fn focused_cell(&self) -> Option<&Vec<usize>> {
        self.focused_cell.as_ref()
    }

    /// Asks for a table to open with the file dialog (Ctrl+O).
    pub fn open_dialog(&mut self, ctx: &egui::Context) {
        if self.pending_dialog.is_none() {
            self.pending_dialog = Some(PendingDialog::open_file(
                ctx,
                "Table or model file to check",
                "Tables and model files",
                &["npy", "csv", "safetensors", "json", "gguf"],
            ));
        }
    }

    /// The sizes the file's shape gives the kind picked (`--seq 512 --dim 128` for a
    /// `[512, 128]` sinusoidal table), or `None` when its shape is not one of that kind's.
    fn sizes_from_file(&self) -> Option<Vec<(&'static str, usize)>> {
        let shape = self.loaded.as_ref()?.values.shape();
        match (self.expected, shape) {
            (Expected::Sinusoidal, &[seq, dim]) if dim % 2 == 0 => {
                Some(vec![("seq", seq), ("dim", dim)])
            }
            (Expected::RopeAngles, &[seq, pairs]) => Some(vec![("seq", seq), ("dim", 2 * pairs)]),
            (Expected::RopeInvFreq, &[pairs]) => Some(vec![("dim", 2 * pairs)]),
            (Expected::AlibiSlopes, &[heads]) => Some(vec![("heads", heads)]),
            (Expected::Alibi, &[heads, queries, keys]) if queries == keys => {
                Some(vec![("heads", heads), ("seq", keys)])
            }
            (Expected::Alibi, &[queries, keys]) if queries == keys => {
                Some(vec![("heads", 1), ("seq", keys)])
            }
            _ => None,
        }
    }

    /// What the comparison takes from the file's shape and what from the side panel, in a line.
    fn sizes_note(&self) -> Option<String> {
        if matches!(self.expected, Expected::Identify | Expected::Options) {
            return None;
        }
        let shape = self.loaded.as_ref()?.values.shape().to_vec();
        Some(match self.sizes_from_file() {
            Some(sizes) => {
                let words: Vec<String> = sizes.iter().map(|(n, v)| format!("--{n} {v}")).collect();
                format!(
                    "{} from the file's shape {shape:?}; the side panel gives the rest",
                    words.join(" ")
                )
            }
            None => format!(
                "the file's shape {shape:?} is not one of this kind's: the side panel's sizes are used"
            ),
        })
    }

    /// The expected table as `poslab table` words; empty to identify. The sizes come from the
    /// file's shape where it is one of the kind's, the rest from the side panel.
    fn expected_words(&self) -> Vec<String> {
        let words = |text: String| text.split_whitespace().map(str::to_owned).collect();
        let from_file = self.sizes_from_file().unwrap_or_default();
        let size = |name: &str, panel: usize| {
            from_file
                .iter()
                .find(|(n, _)| *n == name)
                .map_or(panel, |(_, v)| *v)
        };
        let shared = &self.shared;
        match self.expected {
            Expected::Identify => Vec::new(),
            Expected::Options => words(self.options.clone()),
            Expected::Sinusoidal => {
                let p = shared.sinusoidal();
                words(format!(
                    "sinusoidal --seq {} --dim {} --base {} --start {} --layout {} --spacing {}",
                    size("seq", p.seq),
                    size("dim", p.dim),
                    p.base,
                    p.start,
                    shared.layout.sinusoidal_name(),
                    crate::options::value_name(shared.spacing)
                ))
            }
            Expected::RopeAngles => words(format!(
                "rope-angles --seq {} --dim {} --base {} --start {}",
                size("seq", shared.seq),
                size("dim", shared.dim),
                shared.base,
                shared.start
            )),
            Expected::RopeInvFreq => words(format!(
                "rope-inv-freq --dim {} --base {}",
                size("dim", shared.dim),
                shared.base
            )),
            Expected::AlibiSlopes => words(format!(
                "alibi-slopes --heads {}",
                size("heads", shared.heads)
            )),
            Expected::Alibi => words(format!(
                "alibi --heads {} --seq {} --mode {}",
                size("heads", shared.heads),
                size("seq", shared.seq),
                if self.causal { "causal" } else { "symmetric" }
            )),
        }
    }

    /// Whether an identification or comparison is running.
    pub fn busy(&self) -> bool {
        self.outcome_job.is_pending() || self.load_job.is_pending() || self.model_job.is_pending()
    }

    fn outcome_key(&self) -> Option<OutcomeKey> {
        let loaded = self.loaded.as_ref()?;
        Some(OutcomeKey {
            file: loaded.generation,
            expected: self.expected,
            options: if self.expected == Expected::Options {
                self.options.trim().to_owned()
            } else {
                String::new()
            },
            shared: self.shared,
            causal: self.causal,
            tolerance: (self.tolerance.abs, self.tolerance.rel),
            type_tolerance: self.type_tolerance,
        })
    }

    /// Starts the comparison (or identification) when the file, the choice or the parameters
    /// changed, on a thread of its own; picks its outcome up when it is done.
    fn update(&mut self, ctx: &egui::Context) {
        let (Some(loaded), Some(key)) = (&self.loaded, self.outcome_key()) else {
            return;
        };
        for update in self.outcome_job.poll(Some(ctx)) {
            match update {
                crate::jobs::Update::Done(Ok(outcome), _) => {
                    if let Some(asked) = self.outcome_job.wanted() {
                        self.outcome = Some((asked.clone(), outcome));
                    }
                }
                crate::jobs::Update::Done(Err(error), _) | crate::jobs::Update::Failed(error) => {
                    self.error = Some(error);
                }
                crate::jobs::Update::Preview(_) => {}
            }
        }
        if self.outcome_job.wants(&key) {
            return;
        }
        if self.outcome.as_ref().is_some_and(|(k, _)| *k == key) {
            return;
        }
        let name = match &loaded.tensor {
            Some(tensor) => format!("{} [{tensor}]", loaded.path.display()),
            None => loaded.path.display().to_string(),
        };
        // Every expectation goes through poslab table's own parser, as the CLI's --as does.
        let words = self.expected_words();
        let spec = if self.expected == Expected::Identify {
            self.options_error = None;
            None
        } else if words.is_empty() {
            self.options_error = Some(
                "type a kind and its options, e.g. rope-angles --seq 4096 --dim 128 --base 500000"
                    .to_owned(),
            );
            return;
        } else {
            match crate::table_args::table_spec_from_words(&words) {
                Ok(spec) => {
                    self.options_error = None;
                    Some(spec)
                }
                Err(error) => {
                    self.options_error = Some(error);
                    return;
                }
            }
        };
        let (values, stored, tolerance) = (loaded.values.clone(), loaded.stored, self.tolerance);
        // A .csv says nothing of its type: the tolerance beside serves.
        let explicit = (!self.type_tolerance || stored.is_none()).then_some(tolerance);
        let what = if self.expected == Expected::Identify {
            "identifying the table"
        } else {
            "comparing the table"
        };
        let job = outcome::CheckJob {
            name,
            words: spec.is_some().then_some(words),
            values,
            stored,
            explicit,
        };
        self.outcome_job.request_remote(Some(ctx), key, what, job);
    }

    /// The three pictures of the outcome shown, made on a worker thread when it, the slice or
    /// the colours change (a 4096 x 4096 table is 16M differences and three reductions); the
    /// previous pictures stay until they arrive.
    fn update_pictures(
        &mut self,
        ctx: &egui::Context,
        colormap: Colormap,
        reduce: Reduce,
        status: &mut crate::ui::status::Status,
    ) {
        let (Some(loaded), Some((key, outcome))) = (&self.loaded, &self.outcome) else {
            return;
        };
        let picture_key = (key.clone(), self.head, colormap, reduce);
        let shown = self
            .pictures
            .as_ref()
            .is_some_and(|(k, _)| *k == picture_key);
        if !shown && !self.pictures_job.wants(&picture_key) {
            match outcome
                .reference
                .as_ref()
                .filter(|r| r.shape() == loaded.values.shape())
            {
                Some(reference) => {
                    // A mismatch adds the map of the elements outside the tolerance.
                    let outside = outcome
                        .comparison
                        .clone()
                        .filter(|_| outcome.located.is_some());
                    let job = outcome::PicturesJob {
                        values: loaded.values.clone(),
                        reference: reference.clone(),
                        head: self.head,
                        colormap,
                        reduce,
                        outside,
                    };
                    self.pictures_job.request_remote(
                        Some(ctx),
                        picture_key.clone(),
                        "drawing the reference, the file and their difference",
                        job,
                    );
                }
                None => {
                    self.pictures = None;
                    return;
                }
            }
        }
        for update in self.pictures_job.poll(Some(ctx)) {
            if let crate::jobs::Update::Done(drawn, _) = update {
                let pictures = drawn
                    .into_iter()
                    .map(outcome::SentPicture::drawn)
                    .enumerate()
                    .map(|(index, (data, image, range, colormap))| {
                        let mut texture = HeatmapTexture::default();
                        texture.set(ctx, image, range);
                        // The fourth picture is the map of elements outside.
                        let marks = if index == 3 {
                            lit_blocks(&data)
                        } else {
                            Vec::new()
                        };
                        Picture {
                            data,
                            texture,
                            colormap,
                            marks,
                        }
                    })
                    .collect();
                let asked = self
                    .pictures_job
                    .wanted()
                    .cloned()
                    .unwrap_or_else(|| picture_key.clone());
                self.pictures = Some((asked, pictures));
            }
        }
        if let Some(pending) = self.pictures_job.pending() {
            status.pending(pending.clone());
            ctx.request_repaint();
        }
    }
}

/// The most lit blocks of the outside map marked one by one; beyond, the map alone shows them
/// (so many are a pattern, not needles to find).
const MARKED_BLOCKS: usize = 4096;

/// The lit blocks of the map of elements outside the tolerance, or none where there are more
/// than [`MARKED_BLOCKS`].
fn lit_blocks(data: &crate::widgets::heatmap::HeatmapData) -> Vec<(usize, usize)> {
    let lit: Vec<(usize, usize)> = data
        .values
        .indexed_iter()
        .filter(|(_, v)| **v > 0.5)
        .map(|(index, _)| index)
        .take(MARKED_BLOCKS + 1)
        .collect();
    if lit.len() > MARKED_BLOCKS {
        Vec::new()
    } else {
        lit
    }
}

/// Marks each of the outside map's `lit` blocks with at least a few pixels, where it lies: one
/// bad element among a million cells is a visible dot unzoomed, and exactly its cell once
/// zoomed in.
fn mark_outside(
    ui: &egui::Ui,
    transform: &egui_plot::PlotTransform,
    data: &crate::widgets::heatmap::HeatmapData,
    lit: &[(usize, usize)],
) {
    let painter = ui.painter().with_clip_rect(*transform.frame());
    let colour = crate::colormap::Colormap::Magma.color(1.0);
    for &(r, c) in lit {
        let rows = crate::engine::reduce::bin(&data.rows, r);
        let cols = crate::engine::reduce::bin(&data.cols, c);
        let corner = |row: usize, col: usize| {
            transform.position_from_point(&egui_plot::PlotPoint::new(col as f64, -(row as f64)))
        };
        let cell =
            egui::Rect::from_two_pos(corner(rows.start, cols.start), corner(rows.end, cols.end));
        let at_least = 5.0;
        let marked = egui::Rect::from_center_size(
            cell.center(),
            egui::vec2(cell.width().max(at_least), cell.height().max(at_least)),
        );
        painter.rect_filled(marked, 0.0, colour);
    }
}

impl View for CheckView {
    /// The figure of the comparison shown (the data is the user's own file).
    fn export(&self, _shared: &SharedParams) -> Option<ViewExport> {
        let loaded = self.loaded.as_ref()?;
        let stem = loaded
            .path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        Some(ViewExport {
            figure: crate::export::figure::FigureSpec::Check(crate::export::figure::CheckFigure {
                file: loaded.path.clone(),
                tensor: loaded.tensor.clone(),
                expected: self.expected_words(),
                tolerance: self.tolerance,
            }),
            data: None,
            name: format!("check_{stem}"),
        })
    }

    fn ui(&mut self, ui: &mut egui::Ui, ctx: &mut ViewContext<'_>) {
        if self.egui_ctx.is_none() {
            self.egui_ctx = Some(ui.ctx().clone());
        }
        self.poll_load(ui.ctx(), ctx.status);
        if let Some(pending) = self.outcome_job.pending() {
            ctx.status.pending(pending.clone());
        }
        self.file_ui(ui);
        if let Some(error) = &self.error {
            ui.colored_label(ui.visuals().error_fg_color, error);
        }
        if let Some(error) = self
            .options_error
            .as_ref()
            .filter(|_| self.expected != Expected::Identify)
        {
            ui.colored_label(ui.visuals().error_fg_color, error);
        }
        if self.loaded.is_none() {
            if let Some(model) = &self.model {
                model::model_ui(ui, model);
                return;
            }
            ui.add_space(20.0);
            ui.label("Open a table computed elsewhere (.npy, .csv or .safetensors), or drop one on the window: poslab compares it with its own, or finds what it is. Open a model's config.json or .gguf file to see the RoPE it runs, layer type by layer type.");
            return;
        }
        self.shared = *ctx.shared;
        self.update(ui.ctx());
        self.update_pictures(ui.ctx(), ctx.colormap, ctx.reduce, ctx.status);
        if self.busy() {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label(if self.expected == Expected::Identify {
                    "Identifying…"
                } else {
                    "Comparing…"
                });
            });
        }
        let Some(outcome) = self.outcome() else {
            return;
        };
        ui.separator();
        ui.label(egui::RichText::new(&outcome.title).strong());
        let color = if outcome.matches {
            egui::Color32::from_rgb(90, 190, 110)
        } else {
            ui.visuals().error_fg_color
        };
        ui.label(
            egui::RichText::new(&outcome.summary)
                .monospace()
                .color(color),
        );
        // Per file: a new file's pictures start whole, not at the zoom the last file had
        // (egui_plot keeps a plot's bounds by its id).
        let file = self.loaded.as_ref().map_or(0, |loaded| loaded.generation);
        let link = ui.scope_id().with(("check_heatmaps", file));
        let (located, envelopes) = (outcome.located.clone(), outcome.envelopes.clone());
        if let Some(located) = &located
            && let Some(index) = where_ui::located_ui(ui, located, self.focused_cell.as_ref(), link)
        {
            if index.len() >= 3 {
                self.head = index[0];
            }
            self.focused_cell = Some(index);
        }
        if let Some(loaded) = &self.loaded
            && loaded.values.ndim() == 3
        {
            let heads = loaded.values.shape()[0];
            ui.add(
                crate::widgets::number_box::NumberBox::slider(&mut self.head, 0..=heads - 1)
                    .text("Slice (first axis)"),
            );
        }
        let Some((_, pictures)) = &self.pictures else {
            return;
        };
        // A mismatch keeps room under the pictures for the error curves.
        let curves_height = if located.is_some() { 170.0 } else { 0.0 };
        let width = (ui.available_width() - 8.0 * pictures.len() as f32) / pictures.len() as f32;
        let height = (ui.available_height() - 28.0 - curves_height).max(120.0);
        // The element last clicked in the list, outlined where this slice holds it.
        let outline = self.focused_cell.as_ref().and_then(|index| {
            let n = index.len();
            match n {
                1 => Some(Outline::Cell(0, index[0])),
                2 => Some(Outline::Cell(index[0], index[1])),
                _ if n >= 3 && index[0] == self.head => {
                    Some(Outline::Cell(index[n - 2], index[n - 1]))
                }
                _ => None,
            }
        });
        ui.horizontal_top(|ui| {
            for (picture, title) in pictures.iter().zip([
                "reference",
                "file",
                "file − reference",
                "outside the tolerance",
            ]) {
                ui.allocate_ui_with_layout(
                    egui::vec2(width, height),
                    egui::Layout::top_down(egui::Align::Min),
                    |ui| picture_ui(ui, picture, title, (width, height), file, outline, link),
                );
            }
        });
        crate::widgets::heatmap::zoom_done(ui.ctx(), link);
        if located.is_some() {
            where_ui::error_curves_ui(ui, &envelopes, curves_height - 10.0);
        }
    }
}

/// One of the check's pictures, `title` over it, in a `size` box: its heatmap (the cells
/// outside the tolerance marked, the hovered cell's value said) and its colour bar.
fn picture_ui(
    ui: &mut egui::Ui,
    picture: &Picture,
    title: &str,
    (width, height): (f32, f32),
    file: u64,
    outline: Option<Outline>,
    link: egui::Id,
) {
    ui.horizontal(|ui| {
        ui.label(title);
        let (lo, hi) = picture.texture.range();
        ui.label(
            egui::RichText::new(format!(
                "{} … {}",
                crate::numbers::scientific(lo, 4),
                crate::numbers::scientific(hi, 4)
            ))
            .small()
            .weak(),
        );
    });
    ui.horizontal_top(|ui| {
        ui.allocate_ui(egui::vec2(width - 80.0, height - 20.0), |ui| {
            let data = &picture.data;
            let response = heatmap_ui(
                ui,
                &format!("check_{title}_{file}"),
                (data.rows, data.cols),
                picture.texture.id(),
                ("column", "row"),
                (data.rows.end, data.cols.end),
                outline,
                Some(link),
                false,
            );
            mark_outside(ui, &response.transform, data, &picture.marks);
            if let Some((row, col)) = response.hovered {
                let (r, c) = (row / data.rows.step, col / data.cols.step);
                if let Some(value) = data.values.get([r, c]) {
                    response
                        .response
                        .clone()
                        .on_hover_text_at_pointer(format!("row {row}, column {col}: {value}"));
                }
            }
        });
        colorbar_ui(ui, picture.colormap, picture.texture.range(), height - 40.0);
    });
}

/// The view in the picker: its name, first hint, explanation and the shared controls it leaves
/// unused.
pub const INFO: crate::views::ViewInfo = crate::views::ViewInfo {
    label: "Check a table",
    hint: "Open (Ctrl+O) or drop a .npy, .csv or .safetensors table · Identify it, or compare it with a kind · or a config.json or .gguf: its RoPE",
    explanation: crate::widgets::explainer::Explanation {
        formula: "difference = loaded − reference; a file matches when |loaded − reference| ≤ atol + rtol·|reference| everywhere \
              (or, for float32, when it equals PyTorch's own float32 computation to the contract's ulps)",
        reading: "Three aligned heatmaps on the same axes: poslab's reference, the loaded table, and their difference, \
              with the largest errors and where they are. Identify tries every kind and convention and names the closest. \
              When the file does not match, a fourth map lights every block holding an element outside the tolerance, the worst elements are listed \
              (click one to zoom to it), a diagnosis names the pattern, and two curves give the largest error of each row and column against what is allowed. \
              A model file draws each layer type's wavelength per pair (solid, as the model runs it; dashed, the same RoPE unscaled) against its context (dotted): \
              pairs below the line turn at least once within the context, pairs above it never complete a turn; under the curves, every setting with the field it came from, and the warnings.",
        convention: "The references are the table contract's: Hugging Face transformers and Meta's Llama for RoPE (scaling and partial rotary included), \
                 ofirpress for ALiBi (and BLOOM's and MPT's stored forms), MAE for 2D sin-cos, tensor2tensor for t2t spacing. \
                 A model's config.json is read as transformers 5 reads it (both dialects, one RoPE per layer type); a .gguf as llama.cpp runs it.",
        try_these: &[
            "Write a table with poslab table sinusoidal --layout split -o t.npy, open it and press Identify.",
            "Open a cos cache saved from a transformers model: Identify names its scaling and rotary width.",
            "Compare a table with the wrong layout on purpose and read where the errors sit.",
            "Compare a float32 table made with a slightly wrong base: the error curve climbs with position, past the float32 angle line.",
            "Open a Gemma 3 config.json: each layer type's wavelengths, the scaled global layers' above their unscaled curve, the local layers' far below the context line.",
        ],
    },
    unused: crate::views::uses_every_control,
};
