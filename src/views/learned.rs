//! Learned tables: open, type or drop a `.npy` or `.safetensors` position table, pick its
//! tensor, and see its similarity matrix, its rows on their first principal components (2D, or
//! 3D to orbit) and chosen columns against position, with the sinusoidal table of the same size
//! beside it. The reading and the decomposition run on a worker thread (seconds for a
//! thousand rows); a file that cannot be used says why and leaves the view as it was.

use crate::widgets::layout::NiceAxes;
use egui_plot::{Line, Plot, PlotPoints, Points};

use crate::colormap::rgb;
use crate::scene::camera::OrbitCamera;
use crate::scene::learned::{
    self, COLUMN_COLORS, LearnedAnalysis, LearnedSource, TableAnalysis, TableFile,
};
use crate::ui::dialogs::{DialogAnswer, PendingDialog};
use crate::views::{View, ViewContext, ViewExport};
use crate::widgets::array_heatmap::ArrayHeatmap;

/// What a worker sends back: the file's candidate tensors, and the analysis or why not.
pub type Answer = (Vec<String>, Result<LearnedAnalysis, String>);

/// Reading a learned table and analysing it with the sinusoidal table of its size: a job for
/// a worker (a Web Worker on the web, with the file's bytes: the worker holds no file).
#[derive(serde::Serialize, serde::Deserialize)]
pub struct AnalysisJob {
    source: LearnedSource,
    #[serde(with = "crate::jobs::remote::bytes_option")]
    handed_over: Option<std::sync::Arc<[u8]>>,
}

impl crate::jobs::remote::RemoteJob for AnalysisJob {
    const NAME: &'static str = "learned-analysis";
    type Output = Answer;

    fn run(
        self,
        _progress: &crate::jobs::remote::Progress<Self::Output>,
    ) -> Result<Self::Output, crate::jobs::Cancelled> {
        if let (TableFile::Path(path), Some(bytes)) = (&self.source.file, self.handed_over) {
            crate::import::handed_over::add(&path.to_string_lossy(), bytes);
        }
        let tensors = learned::table_tensors(&self.source.file);
        Ok((tensors, learned::analyse(&self.source)))
    }
}

/// What the view keeps between frames (the file, tensor and columns also between runs).
#[derive(Default, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct LearnedView {
    /// The file last opened, reopened when the app starts again.
    pub path: Option<std::path::PathBuf>,
    /// The example table was the last opened (reopened when the app starts again, as is the
    /// example on the first run, when no file was ever opened).
    pub example: bool,
    pub tensor: Option<String>,
    /// The columns drawn against position, as typed.
    pub columns_text: String,
    /// Principal components in 3D (dragged to orbit) rather than 2D.
    pub three_d: bool,
    #[serde(skip)]
    path_text: String,
    #[serde(skip)]
    tensors: Vec<String>,
    #[serde(skip)]
    analysis: Option<(LearnedAnalysis, u64)>,
    /// The file being read and decomposed on a worker thread, and what it was.
    #[serde(skip)]
    pending: Option<LearnedSource>,
    #[serde(skip)]
    job: crate::jobs::Latest<LearnedSource, Answer>,
    #[serde(skip)]
    error: Option<String>,
    #[serde(skip)]
    dialog: Option<PendingDialog>,
    /// Why no file came from the dialog, shown beside the path box until the next open.
    #[serde(skip)]
    pub dialog_note: Option<String>,
    /// Puts the keyboard in the path box next frame.
    #[serde(skip)]
    focus_path: bool,
    #[serde(skip)]
    heatmaps: [ArrayHeatmap; 2],
    #[serde(skip)]
    camera: Option<OrbitCamera>,
    #[serde(skip)]
    reopened: bool,
}

impl LearnedView {
    /// The analysis drawn now.
    pub fn shown(&self) -> Option<&LearnedAnalysis> {
        self.analysis.as_ref().map(|(a, _)| a)
    }

    /// Why the last file could not be used, if it could not.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// The tensors offered for the file.
    pub fn tensors(&self) -> &[String] {
        &self.tensors
    }

    /// Whether a file is being read.
    pub fn is_loading(&self) -> bool {
        self.pending.is_some()
    }

    /// Waits for the file being read (tests).
    pub fn wait(&mut self) {
        while self.pending.is_some() {
            self.poll(None);
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }

    /// Reads `source` on a worker thread; the view keeps what it shows until it is done.
    pub fn open(&mut self, ctx: &egui::Context, source: LearnedSource) {
        let job = source.clone();
        let what = format!(
            "reading {} and its principal components",
            source.file_name()
        );
        // Opening the same file again reads it again (it may have changed on disk).
        self.job.forget();
        let handed_over = match &source.file {
            TableFile::Path(path) => {
                crate::import::handed_over::get(path).map(|bytes| bytes.shared())
            }
            TableFile::Example => None,
        };
        let job = AnalysisJob {
            source: job,
            handed_over,
        };
        self.job
            .request_remote(Some(ctx), source.clone(), what, job);
        self.path_text = source.shown();
        self.pending = Some(source);
    }

    fn take(&mut self, (tensors, result): Answer) {
        match result {
            Ok(analysis) => {
                let generation = self.analysis.as_ref().map_or(0, |(_, g)| g + 1);
                match &analysis.source.file {
                    TableFile::Path(path) => {
                        self.path = Some(path.clone());
                        self.example = false;
                    }
                    TableFile::Example => self.example = true,
                }
                self.tensor = analysis.tensor.clone();
                self.path_text = analysis.source.shown();
                let (positions, dim) = analysis.learned.table.dim();
                let new_table = self.analysis.as_ref().is_none_or(|(shown, _)| {
                    shown.learned.table.dim() != analysis.learned.table.dim()
                });
                if new_table || learned::parse_columns(&self.columns_text, dim).is_err() {
                    self.columns_text = columns_text(&learned::default_columns(positions, dim));
                }
                self.analysis = Some((analysis, generation));
                self.tensors = tensors;
                self.error = None;
            }
            Err(reason) => {
                // The tensors of a file that names none as a position table are the choice.
                if !tensors.is_empty() {
                    self.tensors = tensors;
                }
                self.error = Some(reason);
            }
        }
    }

    /// Takes the analysis once it has arrived (never waiting for it).
    fn poll(&mut self, ctx: Option<&egui::Context>) {
        for update in self.job.poll(ctx) {
            match update {
                crate::jobs::Update::Done(answer, _) => self.take(answer),
                crate::jobs::Update::Preview(_) => {}
                crate::jobs::Update::Failed(reason) => self.error = Some(reason),
            }
        }
        if !self.job.is_pending() {
            self.pending = None;
        }
    }

    fn source_ui(&mut self, ui: &mut egui::Ui) {
        if let Some(dialog) = &self.dialog {
            match dialog.poll() {
                DialogAnswer::Waiting => {}
                DialogAnswer::Chosen(path) => {
                    self.dialog = None;
                    self.dialog_note = None;
                    self.open(ui.ctx(), LearnedSource::path(path));
                }
                DialogAnswer::Cancelled => {
                    // rfd answers the same for a cancel and for no dialog at all: either way,
                    // the path box is the way on.
                    self.dialog = None;
                    self.dialog_note = Some(crate::ui::dialogs::no_file_chosen(
                        "type a path and press Enter",
                    ));
                    self.focus_path = true;
                }
            }
        }
        let dropped = ui.ctx().input(|i| {
            i.raw
                .dropped_files
                .iter()
                .map(|f| f.path().to_path_buf())
                .find(|path| learned::is_table_file(path))
        });
        if let Some(path) = dropped {
            self.open(ui.ctx(), LearnedSource::path(path));
        }
        ui.horizontal(|ui| {
            if ui
                .add_enabled(self.dialog.is_none(), egui::Button::new("Open table…"))
                .on_hover_text("A learned position table, [positions, dim] (or timm's [1, positions, dim]), from a .npy or .safetensors file; or drop one on the window")
                .clicked()
            {
                self.dialog = Some(PendingDialog::open_file(
                    ui.ctx(),
                    "Learned position table",
                    "Tables",
                    &["npy", "safetensors"],
                ));
            }
            if ui
                .button("Example")
                .on_hover_text("all-MiniLM-L6-v2's learned position embeddings (512 positions x 384, float32, Apache-2.0), shipped with poslab: a BERT-style table to start from")
                .clicked()
            {
                self.dialog_note = None;
                self.open(ui.ctx(), LearnedSource::example());
            }
            let label = ui.label("or path:");
            let field = ui
                .add(
                    egui::TextEdit::singleline(&mut self.path_text)
                        .hint_text(crate::ui::dialogs::path_hint("type a path and press Enter"))
                        .desired_width(ui.available_width() - 60.0),
                )
                .labelled_by(label.id);
            if std::mem::take(&mut self.focus_path) {
                field.request_focus();
            }
            let entered = field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            if (ui.button("Load").clicked() || entered) && !self.path_text.trim().is_empty() {
                let text = self.path_text.trim();
                self.dialog_note = None;
                let source = if text == learned::EXAMPLE_NAME {
                    LearnedSource::example()
                } else {
                    LearnedSource::path(std::path::PathBuf::from(text))
                };
                self.open(ui.ctx(), source);
            }
        });
        if let Some(note) = &self.dialog_note {
            ui.colored_label(ui.visuals().warn_fg_color, note);
        }
        ui.horizontal(|ui| {
            if self.tensors.len() > 1 {
                let chosen = self.tensor.clone();
                let mut picked = None;
                egui::ComboBox::from_label("Tensor")
                    .selected_text(chosen.as_deref().unwrap_or("choose one"))
                    .show_ui(ui, |ui| {
                        for name in &self.tensors {
                            if ui
                                .selectable_label(chosen.as_deref() == Some(name.as_str()), name)
                                .clicked()
                            {
                                picked = Some(name.clone());
                            }
                        }
                    })
                    .response
                    .on_hover_text("The file holds several tables: the one to draw");
                let file = self
                    .pending
                    .as_ref()
                    .map(|s| s.file.clone())
                    .or_else(|| self.analysis.as_ref().map(|(a, _)| a.source.file.clone()))
                    .or_else(|| {
                        Some(TableFile::Path(std::path::PathBuf::from(
                            self.path_text.trim(),
                        )))
                    });
                if let (Some(tensor), Some(file)) = (picked, file) {
                    self.open(
                        ui.ctx(),
                        LearnedSource {
                            file,
                            tensor: Some(tensor),
                        },
                    );
                }
                ui.separator();
            }
            let label = ui.label("Columns");
            let enabled = self.analysis.is_some();
            ui.add_enabled_ui(enabled, |ui| {
                crate::widgets::number_box::committed_text(
                    ui,
                    "learned columns",
                    &mut self.columns_text,
                    |edit| edit.desired_width(110.0),
                )
                .0
            })
            .inner
            .labelled_by(label.id)
            .on_disabled_hover_text("Open a table first: its columns are offered then")
            .on_hover_text("Columns drawn against position, such as 0, 1, 2, 3 (up to 8)");
            ui.separator();
            ui.radio_value(&mut self.three_d, false, "2D")
                .on_hover_text("Rows on the first two principal components");
            ui.radio_value(&mut self.three_d, true, "3D").on_hover_text(
                "Rows on the first three principal components: drag to orbit, scroll to zoom",
            );
            if let Some(pending) = self.job.pending() {
                ui.separator();
                ui.spinner();
                ui.label(format!(
                    "{} … {:.1} s",
                    pending.what,
                    pending.since.elapsed().as_secs_f64()
                ));
            }
        });
    }

    fn similarity_ui(
        &mut self,
        ui: &mut egui::Ui,
        index: usize,
        t: &TableAnalysis,
        generation: u64,
        ctx: &ViewContext<'_>,
    ) {
        ui.label(egui::RichText::new(format!("{}: cosine similarity of rows", t.name)).strong());
        self.heatmaps[index].square_cells = true;
        if let Some(response) = self.heatmaps[index].ui(
            ui,
            &format!("learned_similarity_{index}"),
            &t.similarity,
            generation,
            (-1.0, 1.0),
            ("position j", "position i"),
            ctx.reduce,
            ctx.colormap,
        ) && let Some((i, j)) = response.hovered
        {
            response.show_hover(format!(
                "rows {i} and {j}: cos = {:.4}",
                t.similarity[[i, j]]
            ));
        }
    }

    fn projection_ui(
        &mut self,
        ui: &mut egui::Ui,
        index: usize,
        t: &TableAnalysis,
        colormap: crate::colormap::Colormap,
    ) {
        let p = &t.principal;
        ui.label(egui::RichText::new("Rows on their principal components").strong());
        if !self.three_d {
            let points = learned::projection_2d(p);
            let ends = vec![points[0], points[points.len() - 1]];
            Plot::new(format!("learned_pca_{index}"))
                .legend(crate::widgets::layout::legend())
                .nice_axes()
                .data_aspect(1.0)
                .x_axis_label(learned::component_name(p, 0))
                .y_axis_label(learned::component_name(p, 1))
                .show(ui, |plot_ui| {
                    plot_ui.line(
                        Line::new("rows in position order", PlotPoints::from(points.clone()))
                            .color(rgb(COLUMN_COLORS[0])),
                    );
                    plot_ui.points(
                        Points::new("first and last position", PlotPoints::from(ends))
                            .radius(4.0)
                            .color(rgb(COLUMN_COLORS[1])),
                    );
                });
            return;
        }
        // 3D: the first three components scaled into a unit cube, coloured by position.
        let rect = ui.available_rect_before_wrap();
        let response = ui.allocate_rect(rect, egui::Sense::drag());
        let size = [rect.width(), rect.height()];
        let camera = self.camera.get_or_insert_with(|| {
            OrbitCamera::framing(glam::Vec3::splat(1.0), size[0] / size[1].max(1.0))
        });
        if response.dragged() {
            let d = response.drag_delta();
            camera.orbit([d.x, d.y], size[1]);
        }
        if response.hovered() {
            let scroll = ui.input(|i| i.smooth_scroll_delta.y);
            if scroll != 0.0 {
                camera.zoom((-scroll * 0.002).exp());
            }
        }
        let projections = &p.projections;
        let k = projections.ncols();
        let scale = projections
            .iter()
            .fold(0.0f64, |m, v| m.max(v.abs()))
            .max(1e-300);
        let point = |row: usize| {
            let c = |n: usize| {
                if n < k {
                    (projections[[row, n]] / scale) as f32
                } else {
                    0.0
                }
            };
            glam::Vec3::new(c(0), c(1), c(2))
        };
        let painter = ui.painter_at(rect);
        let at = |v: glam::Vec3| {
            camera
                .project(v, size)
                .map(|[x, y]| rect.min + egui::vec2(x, y))
        };
        for (axis, name) in [
            (glam::Vec3::X, "PC1"),
            (glam::Vec3::Y, "PC2"),
            (glam::Vec3::Z, "PC3"),
        ] {
            if let (Some(a), Some(b)) = (at(-axis), at(axis)) {
                painter.line_segment([a, b], egui::Stroke::new(1.0, egui::Color32::GRAY));
                painter.text(
                    b,
                    egui::Align2::LEFT_BOTTOM,
                    name,
                    egui::FontId::proportional(12.0),
                    egui::Color32::GRAY,
                );
            }
        }
        let rows = projections.nrows();
        for row in 1..rows {
            if let (Some(a), Some(b)) = (at(point(row - 1)), at(point(row))) {
                let t = row as f32 / (rows - 1).max(1) as f32;
                painter.line_segment([a, b], egui::Stroke::new(2.0, colormap.color(f64::from(t))));
            }
        }
        painter.text(
            rect.left_bottom() + egui::vec2(4.0, -4.0),
            egui::Align2::LEFT_BOTTOM,
            format!("colour: position 0 to {} · drag to orbit", rows - 1),
            egui::FontId::proportional(12.0),
            ui.visuals().weak_text_color(),
        );
    }

    fn columns_ui(&self, ui: &mut egui::Ui, index: usize, t: &TableAnalysis, columns: &[usize]) {
        ui.label(egui::RichText::new("Columns against position").strong());
        Plot::new(format!("learned_columns_{index}"))
            .legend(crate::widgets::layout::legend())
            .nice_axes()
            .x_axis_label("position p")
            .y_axis_label("value")
            .show(ui, |plot_ui| {
                for (k, &column) in columns.iter().enumerate() {
                    if column < t.table.ncols() {
                        plot_ui.line(
                            Line::new(
                                format!("column {column}"),
                                PlotPoints::from(learned::column_curve(&t.table, column)),
                            )
                            .color(rgb(COLUMN_COLORS[k % COLUMN_COLORS.len()])),
                        );
                    }
                }
            });
    }
}

/// Columns as the text field shows them.
fn columns_text(columns: &[usize]) -> String {
    columns
        .iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

impl View for LearnedView {
    fn takes_dropped_tables(&self) -> bool {
        true
    }

    fn export(&self, _shared: &crate::ui::params::SharedParams) -> Option<ViewExport> {
        let (analysis, _) = self.analysis.as_ref()?;
        let dim = analysis.learned.table.ncols();
        let columns = learned::parse_columns(&self.columns_text, dim)
            .unwrap_or_else(|_| learned::default_columns(analysis.learned.table.nrows(), dim));
        Some(ViewExport {
            figure: crate::export::figure::FigureSpec::Learned(
                crate::export::figure::learned::LearnedFigure {
                    source: LearnedSource {
                        file: analysis.source.file.clone(),
                        tensor: analysis.tensor.clone(),
                    },
                    columns,
                },
            ),
            data: None,
            name: "learned_table".into(),
        })
    }

    fn ui(&mut self, ui: &mut egui::Ui, ctx: &mut ViewContext<'_>) {
        if !self.reopened {
            self.reopened = true;
            let file = match self.path.clone() {
                _ if self.example => Some(TableFile::Example),
                Some(path) => Some(TableFile::Path(path)),
                None => None,
            };
            if let Some(file) = file
                && self.pending.is_none()
                && self.analysis.is_none()
            {
                let tensor = self.tensor.clone();
                self.open(ui.ctx(), LearnedSource { file, tensor });
            }
        }
        self.poll(Some(ui.ctx()));
        if let Some(pending) = self.job.pending() {
            ctx.status.pending(pending.clone());
        }
        self.source_ui(ui);
        if let Some(error) = &self.error {
            ui.colored_label(ui.visuals().error_fg_color, error);
        }
        // Taken out while it is drawn (the panels borrow the view), put back below.
        let Some((analysis, generation)) = self.analysis.take() else {
            ui.add_space(40.0);
            ui.vertical_centered(|ui| {
                let example = egui::Button::new(
                    egui::RichText::new("Open the example: all-MiniLM-L6-v2's positions").heading(),
                );
                if ui
                    .add_enabled(self.pending.is_none(), example)
                    .on_hover_text("512 learned position embeddings of 384 values, from sentence-transformers' all-MiniLM-L6-v2 (a small BERT), shipped with poslab")
                    .clicked()
                {
                    self.open(ui.ctx(), LearnedSource::example());
                }
                ui.add_space(12.0);
                ui.label("Or open your own learned position table, [positions, dim]: GPT-2's transformer.wpe.weight, BERT's embeddings.position_embeddings.weight, a ViT's pos_embed.");
                ui.label("From PyTorch: numpy.save(\"wpe.npy\", model.transformer.wpe.weight.detach().float().numpy()), or any .safetensors checkpoint.");
            });
            return;
        };
        let dim = analysis.learned.table.ncols();
        let columns = match learned::parse_columns(&self.columns_text, dim) {
            Ok(columns) => columns,
            Err(reason) => {
                ui.colored_label(ui.visuals().error_fg_color, format!("Columns: {reason}"));
                learned::default_columns(analysis.learned.table.nrows(), dim)
            }
        };
        let (positions, _) = analysis.learned.table.dim();
        let shares: Vec<String> = analysis
            .learned
            .principal
            .explained
            .iter()
            .map(|s| format!("{:.1}%", s * 100.0))
            .collect();
        ctx.status.scene = Some(format!(
            "{}: {positions} positions x {dim}; PC1 to PC3 carry {} of the variance",
            analysis.learned.name,
            shares.join(", ")
        ));
        let area = ui.available_rect_before_wrap();
        ui.allocate_rect(area, egui::Sense::hover());
        // The similarity matrix keeps square cells and a colour bar: it gets the widest share.
        let shares = [0.38, 0.31, 0.31];
        let cell_h = area.height() / 2.0;
        for (row, table) in [&analysis.learned, &analysis.sinusoidal]
            .into_iter()
            .enumerate()
        {
            let mut left = area.left();
            for (col, share) in shares.into_iter().enumerate() {
                let width = area.width() * share;
                let rect = egui::Rect::from_min_size(
                    egui::pos2(left, area.top() + row as f32 * cell_h),
                    egui::vec2(width - 10.0, cell_h - 8.0),
                );
                left += width;
                ui.scope_builder(egui::UiBuilder::new().max_rect(rect), |ui| match col {
                    0 => self.similarity_ui(ui, row, table, generation, ctx),
                    1 => self.projection_ui(ui, row, table, ctx.colormap),
                    _ => self.columns_ui(ui, row, table, &columns),
                });
            }
        }
        self.analysis = Some((analysis, generation));
        for heatmap in &self.heatmaps {
            if let Some(pending) = heatmap.pending() {
                ctx.status.pending(pending.clone());
            }
        }
    }
}

/// The view in the picker: its name, first hint, explanation and the shared controls it leaves
/// unused.
pub const INFO: crate::views::ViewInfo = crate::views::ViewInfo {
    label: "Learned tables",
    hint: "Open (button), type or drop a .npy or .safetensors position table · hover the similarity for two rows' cosine · 3D: drag to orbit",
    explanation: crate::widgets::explainer::Explanation {
        formula: "similarity(i, j) = PE[i]·PE[j] / (|PE[i]| |PE[j]|);  PCA: PE − mean = U S V^T, row i drawn at (U S)[i, 0..3]",
        reading: "Top row: the learned table; bottom row: the sinusoidal table of the same size. Left: the cosine similarity of every pair of rows \
              (position i down, j across, −1 to +1). Middle: every row projected on the directions of largest variance, joined in position order \
              (axes say how much of the variance each carries). Right: the chosen columns against position.",
        convention: "A learned table is read as stored: [positions, dim] (GPT-2's wpe, BERT's position_embeddings) or timm's [1, positions, dim], \
                 float16, bfloat16, float32 or float64; the principal components come from nalgebra's singular value decomposition of the centred rows. \
                 The sinusoidal table is Vaswani et al.'s with base 10000.",
        try_these: &[
            "Open GPT-2's wpe: its rows trace a smooth helix-like curve, as the sinusoidal rows do, though nobody asked for one.",
            "Compare the similarity matrices: a band along the diagonal means near positions look alike.",
            "Switch to 3D and orbit: a curve that winds round is a set of frequencies, as in the sinusoidal table.",
        ],
    },
    unused: unused_controls,
};

/// Why this view leaves the side panel's controls unused: all of them, for one reason.
fn unused_controls(_: crate::ui::params::SharedParam) -> Option<&'static str> {
    Some(
        "A learned table brings its own positions and width; the sinusoidal table beside it takes the same size",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table's analysis gives the same through a Web Worker's parcels as here, its file
    /// read from the bytes handed over with the job.
    #[test]
    fn the_analysis_job_gives_the_same_through_parcels() {
        let table = ndarray::Array2::from_shape_fn((16, 8), |(p, c)| (p * 8 + c) as f32 * 0.01);
        let mut bytes = Vec::new();
        ndarray_npy::WriteNpyExt::write_npy(&table, &mut bytes).expect("an .npy in memory");
        let bytes: std::sync::Arc<[u8]> = bytes.into();
        let job = || AnalysisJob {
            source: LearnedSource {
                file: TableFile::Path("handed_over_wpe.npy".into()),
                tensor: None,
            },
            handed_over: Some(bytes.clone()),
        };
        let cancel = crate::jobs::Cancel::default();
        let progress = crate::jobs::remote::Progress::new(&cancel, &|_| {}, &|_| {});
        let (_, analysis) = crate::jobs::remote::RemoteJob::run(job(), &progress).expect("run");
        let analysis = analysis.expect("the handed-over file is read and analysed");
        assert_eq!(analysis.learned.table.dim(), (16, 8));
        crate::jobs::remote::same_through_parcels(job)
            .expect("the same analysis of a handed-over file");
    }
}
