//! 2D patch maps for vision transformers: for a query patch (click one), what every other patch
//! gets under a distance or 2D ALiBi, two methods side by side, and the full `[P, P]` matrix in
//! raster order with the query's row outlined.

use crate::encoding::grid::GridParams;
use crate::engine::patch_maps::{PatchMapSettings, PatchMethod};
use crate::ui::dialogs::{DialogAnswer, PendingDialog};
use crate::views::{View, ViewContext};
use crate::widgets::grid_map::GridMap;
use crate::widgets::heatmap::{HeatmapData, Outline, TableHeatmap};

/// Mixed RoPE frequencies loaded from a `.npy` file.
pub struct LoadedFreqs {
    /// The file's name, for the label.
    pub name: String,
    /// `[2, heads, n]`.
    pub freqs: ndarray::Array3<f64>,
    /// The head whose frequencies are used.
    pub head: usize,
}

/// What the view keeps between frames (the grid, query, methods, head and seed also between
/// runs; frequencies from a file are loaded again by the user).
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct PatchView {
    pub grid: GridParams,
    /// The query patch, in raster order.
    pub query: usize,
    pub methods: [PatchMethod; 2],
    pub head: usize,
    /// Seed of the mixed RoPE frequencies' random initialisation.
    pub seed: u64,
    /// Frequencies from a file; used while `use_loaded` is on.
    #[serde(skip)]
    pub loaded: Option<LoadedFreqs>,
    #[serde(skip)]
    pub use_loaded: bool,
    /// The path field, for typing a path where no dialog can be shown.
    path_text: String,
    #[serde(skip)]
    load_error: Option<String>,
    #[serde(skip)]
    pending_dialog: Option<PendingDialog>,
    #[serde(skip)]
    maps: [GridMap; 2],
    #[serde(skip)]
    matrix: TableHeatmap,
}

impl Default for PatchView {
    fn default() -> Self {
        Self {
            grid: GridParams::default(),
            query: 7 * 14 + 7,
            methods: [PatchMethod::Euclidean, PatchMethod::Alibi2d],
            head: 0,
            seed: 0,
            loaded: None,
            use_loaded: false,
            path_text: String::new(),
            load_error: None,
            pending_dialog: None,
            maps: Default::default(),
            matrix: TableHeatmap::default(),
        }
    }
}

impl PatchView {
    /// Where the centre of patch `(x, y)` of map `side` was on screen last frame.
    pub fn patch_on_screen(&self, side: usize, x: usize, y: usize) -> Option<egui::Pos2> {
        self.maps[side].patch_on_screen(x, y)
    }

    /// The values of map `side` (0 or 1) as shown: `[grid_h, grid_w]`.
    pub fn shown_map(&self, side: usize) -> Option<&HeatmapData> {
        self.maps[side].data.as_ref()
    }

    /// Reads mixed RoPE frequencies from `path` and uses them; a bad file leaves the current
    /// frequencies in place and says why.
    pub fn load_freqs(&mut self, path: &std::path::Path) {
        let max_bytes = crate::engine::available_memory_bytes().unwrap_or(u64::MAX);
        match crate::import::read_mixed_freqs(path, max_bytes) {
            Ok(freqs) => {
                let name = path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| path.display().to_string());
                self.loaded = Some(LoadedFreqs {
                    name,
                    freqs,
                    head: 0,
                });
                self.use_loaded = true;
                self.load_error = None;
            }
            Err(error) => self.load_error = Some(error.to_string()),
        }
    }

    /// Where the mixed RoPE frequencies come from: a seed, or a file (by dialog, typed path,
    /// or dropped on the window).
    fn mixed_freqs_ui(&mut self, ui: &mut egui::Ui) {
        if let Some(pending) = &self.pending_dialog {
            match pending.poll() {
                DialogAnswer::Waiting => {}
                DialogAnswer::Chosen(path) => {
                    self.pending_dialog = None;
                    self.path_text = path.display().to_string();
                    self.load_freqs(&path);
                }
                DialogAnswer::Cancelled => self.pending_dialog = None,
            }
        }
        let dropped: Option<std::path::PathBuf> = ui.ctx().input(|i| {
            i.raw
                .dropped_files
                .iter()
                .map(|f| f.path().to_path_buf())
                .find(|p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("npy")))
        });
        if let Some(path) = dropped {
            self.path_text = path.display().to_string();
            self.load_freqs(&path);
        }
        ui.horizontal_wrapped(|ui| {
            ui.label("Mixed RoPE frequencies:");
            ui.radio_value(&mut self.use_loaded, false, "random")
                .on_hover_text("rope-vit's init_random_2d_freqs with theta 100, from a seed (our own generator, not torch's)");
            ui.add_enabled(
                !self.use_loaded,
                crate::widgets::number_box::NumberBox::drag(&mut self.seed).prefix("seed "),
            )
            .on_hover_text("Seed of the random initialisation of the mixed RoPE frequencies");
            ui.add_enabled(
                self.loaded.is_some(),
                egui::RadioButton::new(self.use_loaded, "from file"),
            )
            .on_hover_text("Learned frequencies from a .npy file: [2, n] or rope-vit's [2, heads, n]")
            .clicked()
            .then(|| self.use_loaded = true);
            if let Some(loaded) = &mut self.loaded {
                let heads = loaded.freqs.shape()[1];
                ui.label(format!("{} {:?}", loaded.name, loaded.freqs.shape()));
                if heads > 1 {
                    ui.add(crate::widgets::number_box::NumberBox::slider(&mut loaded.head, 0..=heads - 1).text("file head"))
                        .on_hover_text("Which head of the file's [2, heads, n] frequencies to use");
                }
            }
            let waiting = self.pending_dialog.is_some();
            if ui
                .add_enabled(!waiting, egui::Button::new("Open .npy…"))
                .on_hover_text("Load mixed RoPE frequencies (you can also drop a .npy file on the window)")
                .clicked()
            {
                self.pending_dialog = Some(PendingDialog::open_file(
                    ui.ctx(),
                    "Mixed RoPE frequencies",
                    "NumPy array",
                    &["npy"],
                ));
            }
            let field = ui.add(
                egui::TextEdit::singleline(&mut self.path_text)
                    .desired_width(180.0)
                    .hint_text(crate::ui::dialogs::path_hint("or type a path to a .npy")),
            );
            let enter = field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            if (ui.button("Load").clicked() || enter) && !self.path_text.trim().is_empty() {
                let path = std::path::PathBuf::from(self.path_text.trim());
                self.load_freqs(&path);
            }
        });
        if let Some(error) = &self.load_error {
            ui.colored_label(ui.visuals().error_fg_color, error);
        }
    }

    /// The loaded frequencies of the chosen head, `[2, n]`, when they are in use.
    fn loaded_head(&self) -> Option<ndarray::Array2<f64>> {
        let loaded = self.loaded.as_ref().filter(|_| self.use_loaded)?;
        let head = loaded.head.min(loaded.freqs.shape()[1] - 1);
        Some(loaded.freqs.index_axis(ndarray::Axis(1), head).to_owned())
    }
}

impl PatchView {
    fn settings(&self, shared: &crate::ui::params::SharedParams) -> PatchMapSettings {
        PatchMapSettings {
            dim: (shared.dim / 4 * 4).max(4),
            base: shared.base,
            seed: self.seed,
            loaded_freqs: self.loaded_head(),
        }
    }
}

impl View for PatchView {
    /// Mixed RoPE frequencies dropped as a `.npy` are the patch maps'.
    fn takes_dropped_tables(&self) -> bool {
        true
    }

    fn export(&self, shared: &crate::ui::params::SharedParams) -> Option<crate::views::ViewExport> {
        let settings = self.settings(shared);
        let head = self.head.min(shared.heads - 1);
        let query = self.query.min(self.grid.patches() - 1);
        Some(crate::views::ViewExport {
            data: Some(self.methods[0].spec(self.grid, shared.heads, head, &settings)),
            figure: crate::export::figure::FigureSpec::Patches(
                crate::export::figure::PatchesFigure {
                    grid: self.grid,
                    query,
                    methods: self.methods,
                    heads: shared.heads,
                    head,
                    settings,
                },
            ),
            name: format!(
                "patches_{}x{}_query{query}",
                self.grid.grid_h, self.grid.grid_w
            ),
        })
    }

    fn ui(&mut self, ui: &mut egui::Ui, ctx: &mut ViewContext<'_>) {
        let heads = ctx.shared.heads;
        self.head = self.head.min(heads - 1);
        let grid_before = self.grid;
        ui.horizontal(|ui| {
            ui.add(
                crate::widgets::number_box::NumberBox::slider(&mut self.grid.grid_h, 1..=64)
                    .text("Grid rows"),
            )
            .on_hover_text("Patches down the image (14 for ViT-B/16 at 224 px)");
            ui.add(
                crate::widgets::number_box::NumberBox::slider(&mut self.grid.grid_w, 1..=64)
                    .text("Grid columns"),
            )
            .on_hover_text("Patches across the image");
            ui.add(
                crate::widgets::number_box::NumberBox::slider(&mut self.head, 0..=heads - 1)
                    .text("ALiBi head"),
            )
            .on_hover_text("The head whose 2D ALiBi bias the maps and the matrix show");
        });
        if self.grid != grid_before {
            // The query keeps its column and row (clamped to the new grid), not its raster
            // index, which names another patch once the width changes.
            let (x, y) = grid_before.patch_xy(self.query.min(grid_before.patches() - 1));
            self.query =
                y.min(self.grid.grid_h - 1) * self.grid.grid_w + x.min(self.grid.grid_w - 1);
        }
        self.mixed_freqs_ui(ui);
        let encoding = self.settings(ctx.shared);
        let patches = self.grid.patches();
        self.query = self.query.min(patches - 1);
        let (qx, qy) = self.grid.patch_xy(self.query);
        ui.label(format!(
            "Query patch {} at column {qx}, row {qy} (click a patch to move it). Raster order: patch k sits at column k % {}, row k / {}.",
            self.query, self.grid.grid_w, self.grid.grid_w
        ));
        // The two maps stacked on the left, each as tall as half the view, the [P, P] matrix
        // filling the rest: every picture square and as large as the window allows, none
        // leaving a band empty beside or under it.
        let full = ui.available_rect_before_wrap();
        ui.allocate_rect(full, egui::Sense::hover());
        let maps_width = (full.height() / 2.0 + 40.0).min(full.width() * 0.42);
        let (maps_rect, matrix_rect) =
            crate::widgets::layout::split_columns(full, maps_width / full.width(), 16.0);
        let (top, bottom) = crate::widgets::layout::split_rows(maps_rect, 0.5, 8.0);
        for (side, rect) in [top, bottom].into_iter().enumerate() {
            ui.scope_builder(egui::UiBuilder::new().max_rect(rect), |ui| {
                egui::ComboBox::from_label(["Upper map", "Lower map"][side])
                    .selected_text(self.methods[side].label())
                    .show_ui(ui, |ui| {
                        for method in PatchMethod::ALL {
                            ui.selectable_value(&mut self.methods[side], method, method.label());
                        }
                    })
                    .response
                    .on_hover_text(
                        [
                            "What the upper map shows (the figure's left map, --left)",
                            "What the lower map shows (the figure's right map, --right)",
                        ][side],
                    );
                let spec = self.methods[side].spec(self.grid, heads, self.head, &encoding);
                if let Some(clicked) = self.maps[side].ui(
                    ui,
                    &format!("patch_map_{side}"),
                    &spec,
                    self.grid,
                    self.query,
                    ctx.colormap,
                    ctx.engine,
                ) {
                    self.query = clicked;
                }
            });
        }
        for map in &self.maps {
            if let Some(pending) = map.pending() {
                ctx.status.pending(pending.clone());
            }
        }
        let ui = &mut ui.new_child(egui::UiBuilder::new().max_rect(matrix_rect));
        ui.label(format!(
            "The full [P, P] matrix of {} (the upper map); the query's row is outlined",
            self.methods[0].label()
        ));
        let spec = self.methods[0].spec(self.grid, heads, self.head, &encoding);
        self.matrix.outline = Some(Outline::Row(self.query));
        self.matrix.square_cells = true;
        let grid = self.grid;
        if let Some(response) = self.matrix.ui(
            ui,
            "patch_matrix",
            &spec,
            0,
            ("key patch j", "query patch i"),
            ctx.reduce,
            ctx.colormap,
            ctx.engine,
            ctx.status,
        ) && let Some((i, j)) = response.hovered
        {
            let (ix, iy) = grid.patch_xy(i);
            let (jx, jy) = grid.patch_xy(j);
            response.show_hover(format!(
                "query patch {i} (column {ix}, row {iy}), key patch {j} (column {jx}, row {jy})\nraster order: patch k at column k % {w}, row k / {w}",
                w = grid.grid_w
            ));
        }
    }
}

/// The view in the picker: its name, first hint, explanation and the shared controls it leaves
/// unused.
pub const INFO: crate::views::ViewInfo = crate::views::ViewInfo {
    label: "2D patch maps",
    hint: "Click a patch to make it the query · pick what each map shows · hover a patch for its value",
    explanation: crate::widgets::explainer::Explanation {
        formula: "For the query patch and a patch at offset (Δx, Δy): distances √(Δx²+Δy²), |Δx|+|Δy|, max(|Δx|, |Δy|); \
              2D ALiBi −m_h·√(Δx²+Δy²); the similarities are the mean over frequency pairs of cos(f_x·Δx + f_y·Δy)",
        reading: "Each map is the patch grid: colour is the value that patch gets with the outlined query. \
              The matrix beside them holds every query's row at once, [P, P] with patches in raster order (patch k at column k mod W, row k div W).",
        convention: "2D ALiBi as CROMA; axial and mixed RoPE as naver-ai/rope-vit (axial theta 100; mixed frequencies from its random initialisation or a file); \
                 sin-cos as MAE's get_2d_sincos_pos_embed.",
        try_these: &[
            "Compare Euclidean distance with axial RoPE: axial RoPE sees x and y separately, so its similarity is a cross, not a disc.",
            "Click a corner patch and look at the matrix: raster order splits neighbours in the same column W entries apart.",
            "Pick mixed RoPE: its frequencies mix x and y, so the stripes turn oblique.",
        ],
    },
    unused: unused_controls,
};

/// Why this view does not use a shared control, or `None` where it does (its control is then
/// disabled with this as the tooltip).
fn unused_controls(param: crate::ui::params::SharedParam) -> Option<&'static str> {
    use crate::ui::params::SharedParam::*;
    match param {
        Seq | Start => {
            Some("The patch maps take their positions from the patch grid set in the view")
        }
        Layout | Spacing => {
            Some("2D encodings fix their own layout (MAE: sin then cos; rope-vit: x then y)")
        }
        _ => None,
    }
}
