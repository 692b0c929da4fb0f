//! The export window (Ctrl+S): the current view's figure as SVG or PNG, or the table behind it
//! as `.npy` or `.csv`, through a file dialog or a typed path. Files are written on a thread of
//! their own, atomically, so the app never waits and a failed write leaves nothing behind; the
//! window keeps its settings, so nothing is lost when a write fails.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, TryRecvError, channel};

use crate::colormap::Colormap;
use crate::engine::{self, cpu};
use crate::export::figure::{FigureStyle, MAX_SCALE, SIZE_RANGE, build_figure};
use crate::export::{OutputFormat, RealDtype};
use crate::ui::dialogs::{DialogAnswer, PendingDialog};
use crate::views::ViewExport;

/// What is exported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    Svg,
    Png,
    Npy,
    Csv,
}

impl ExportFormat {
    const ALL: [ExportFormat; 4] = [Self::Svg, Self::Png, Self::Npy, Self::Csv];

    fn extension(self) -> &'static str {
        match self {
            Self::Svg => "svg",
            Self::Png => "png",
            Self::Npy => "npy",
            Self::Csv => "csv",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Self::Svg => "Figure, SVG (vector)",
            Self::Png => "Figure, PNG",
            Self::Npy => "Data, .npy",
            Self::Csv => "Data, .csv",
        }
    }

    /// The file's media type, for a download.
    #[cfg(target_arch = "wasm32")]
    fn media_type(self) -> &'static str {
        match self {
            Self::Svg => "image/svg+xml",
            Self::Png => "image/png",
            Self::Npy => "application/octet-stream",
            Self::Csv => "text/csv",
        }
    }

    fn is_figure(self) -> bool {
        matches!(self, Self::Svg | Self::Png)
    }
}

/// The export window's settings and the write in progress.
pub struct ExportWindow {
    pub open: bool,
    pub format: ExportFormat,
    pub width: u32,
    pub height: u32,
    /// PNG pixels per figure pixel.
    pub scale: f32,
    pub dtype: RealDtype,
    /// Empty: the figure's own title.
    pub title: String,
    /// What a heatmap cell of the figure shows when it stands for several (the app's setting).
    pub reduce: crate::engine::reduce::Reduce,
    pub path_text: String,
    /// The export the typed path was for (its file name follows the view: another view's
    /// name would overwrite that view's figure).
    path_for: Option<String>,
    pending_dialog: Option<PendingDialog>,
    job: Option<Receiver<Result<String, String>>>,
    /// The last write's outcome.
    pub message: Option<Result<String, String>>,
    sized_to_screen: bool,
}

impl Default for ExportWindow {
    fn default() -> Self {
        Self {
            open: false,
            format: ExportFormat::Svg,
            width: 1000,
            height: 700,
            scale: 2.0,
            dtype: RealDtype::F32,
            title: String::new(),
            reduce: crate::engine::reduce::Reduce::Mean,
            path_text: String::new(),
            path_for: None,
            pending_dialog: None,
            job: None,
            message: None,
            sized_to_screen: false,
        }
    }
}

impl ExportWindow {
    /// Opens the window, sized the first time to the view on screen.
    pub fn open(&mut self, screen_size: egui::Vec2) {
        if !self.sized_to_screen {
            let clamp = |v: f32| (v.round() as u32).clamp(*SIZE_RANGE.start(), *SIZE_RANGE.end());
            self.width = clamp(screen_size.x);
            self.height = clamp(screen_size.y);
            self.sized_to_screen = true;
        }
        self.open = true;
    }

    /// Whether a write is in progress.
    pub fn busy(&self) -> bool {
        self.job.is_some()
    }

    fn style(&self, colormap: Colormap) -> FigureStyle {
        FigureStyle {
            width: self.width,
            height: self.height,
            colormap,
            title: (!self.title.trim().is_empty()).then(|| self.title.trim().to_owned()),
            reduce: self.reduce,
        }
    }

    /// Asks for a file name with the save dialog (the figure's colours, `colormap`, are
    /// taken when the file is written).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn save_as(&mut self, ctx: &egui::Context, export: &ViewExport, _colormap: Colormap) {
        if self.pending_dialog.is_none() {
            let extension = self.format.extension();
            self.pending_dialog = Some(PendingDialog::save_file(
                ctx,
                "Export",
                &format!("{}.{extension}", export.name),
                self.format.label(),
                &[extension],
            ));
        }
    }

    /// The web page's "save as": the file goes to the browser's downloads.
    #[cfg(target_arch = "wasm32")]
    pub fn save_as(&mut self, ctx: &egui::Context, export: &ViewExport, colormap: Colormap) {
        self.download(ctx, export, colormap);
    }

    /// Makes `export` after this frame and hands it to the browser as a download named after
    /// the view.
    #[cfg(target_arch = "wasm32")]
    fn download(&mut self, ctx: &egui::Context, export: &ViewExport, colormap: Colormap) {
        if self.busy() {
            return;
        }
        let format = self.format;
        let file_name = format!("{}.{}", export.name, format.extension());
        let style = self.style(colormap);
        let (scale, dtype) = (self.scale, self.dtype);
        let export = export.clone();
        self.start(ctx, move || {
            let bytes = export_bytes(&export, format, &style, scale, dtype)
                .map_err(|e| format!("Not saved: {e}"))?;
            super::page::download(&file_name, &bytes, format.media_type())
                .map_err(|e| format!("Not saved: the browser refused the download: {e}"))?;
            Ok(format!(
                "Downloaded {file_name} ({})",
                size_text(bytes.len() as u64)
            ))
        });
    }

    /// Runs `write` off the frame; its outcome is the window's next message.
    fn start(
        &mut self,
        ctx: &egui::Context,
        write: impl FnOnce() -> Result<String, String> + Send + 'static,
    ) {
        let (sender, receiver) = channel();
        let ctx = ctx.clone();
        // No thread: the receiver is dropped with the sender, and the write says it stopped.
        let _ = crate::jobs::detach(move || async move {
            let _ = sender.send(write());
            ctx.request_repaint();
        });
        self.job = Some(receiver);
        self.message = None;
    }

    /// Starts writing `export` to `path` on a thread of its own.
    pub fn save_to(
        &mut self,
        ctx: &egui::Context,
        path: PathBuf,
        export: &ViewExport,
        colormap: Colormap,
    ) {
        if self.busy() {
            return;
        }
        let path = with_extension(path, self.format.extension());
        self.path_text = path.display().to_string();
        self.path_for = Some(export.name.clone());
        let format = self.format;
        let style = self.style(colormap);
        let (scale, dtype) = (self.scale, self.dtype);
        let export = export.clone();
        self.start(ctx, move || {
            write_export(&export, format, &style, scale, dtype, &path)
                .map(|bytes| format!("Saved {} ({})", path.display(), size_text(bytes)))
                .map_err(|e| format!("Not saved: {e}"))
        });
    }

    /// Picks up the dialog's answer and the write's outcome.
    fn poll(&mut self, ctx: &egui::Context, export: Option<&ViewExport>, colormap: Colormap) {
        if let (Some(dialog), Some(export)) = (&self.pending_dialog, export) {
            match dialog.poll() {
                DialogAnswer::Waiting => {}
                DialogAnswer::Chosen(path) => {
                    self.pending_dialog = None;
                    self.save_to(ctx, path, export, colormap);
                }
                DialogAnswer::Cancelled => {
                    self.pending_dialog = None;
                    self.message = Some(Err(crate::ui::dialogs::no_file_chosen(
                        "type a path in the \"or file:\" box beside Save as… and press Enter or Save",
                    )));
                }
            }
        }
        if let Some(job) = &self.job {
            match job.try_recv() {
                Ok(outcome) => {
                    self.message = Some(outcome);
                    self.job = None;
                }
                Err(TryRecvError::Disconnected) => {
                    self.message =
                        Some(Err("Not saved: the export stopped unexpectedly".to_owned()));
                    self.job = None;
                }
                Err(TryRecvError::Empty) => {}
            }
        }
    }

    /// The window; `export` is `None` for a view with nothing to export.
    pub fn ui(&mut self, ctx: &egui::Context, export: Option<&ViewExport>, colormap: Colormap) {
        self.poll(ctx, export, colormap);
        let mut open = self.open;
        egui::Window::new("Export")
            .open(&mut open)
            .resizable(false)
            .collapsible(false)
            .show(ctx, |ui| match export {
                Some(export) => self.contents_ui(ui, export, colormap),
                None => {
                    ui.label("This view has no figure or table to export; the other views do.");
                }
            });
        self.open = open;
    }

    /// A path typed for another view (or other settings, which name the file differently)
    /// keeps its folder and takes this export's file name.
    fn follow_view(&mut self, export: &ViewExport) {
        if self.path_for.as_deref() == Some(export.name.as_str()) {
            return;
        }
        let typed = self.path_text.trim();
        if !typed.is_empty() {
            let file = format!("{}.{}", export.name, self.format.extension());
            let path = match Path::new(typed).parent() {
                Some(folder) if !folder.as_os_str().is_empty() => folder.join(file),
                _ => PathBuf::from(file),
            };
            self.path_text = path.display().to_string();
        }
        self.path_for = Some(export.name.clone());
    }

    /// The desktop's save row: the dialog, or a typed path.
    #[cfg(not(target_arch = "wasm32"))]
    fn save_row_ui(
        &mut self,
        ui: &mut egui::Ui,
        export: &ViewExport,
        colormap: Colormap,
        busy: bool,
    ) {
        ui.horizontal(|ui| {
            if ui
                .add_enabled(!busy, egui::Button::new("Save as…"))
                .on_hover_text("Choose where to save (Ctrl+S)")
                .clicked()
            {
                self.save_as(ui.ctx(), export, colormap);
            }
            let label = ui.label("or file:");
            let field = ui
                .add(
                    egui::TextEdit::singleline(&mut self.path_text)
                        .hint_text("type a path")
                        .desired_width(220.0),
                )
                .labelled_by(label.id)
                .on_hover_text(
                    "The file to write (Enter saves); the format's extension replaces another format's or is added",
                );
            let enter = field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            let save = ui
                .add_enabled(
                    !busy && !self.path_text.trim().is_empty(),
                    egui::Button::new("Save"),
                )
                .clicked();
            if (save || enter) && !busy && !self.path_text.trim().is_empty() {
                let path = PathBuf::from(self.path_text.trim());
                self.save_to(ui.ctx(), path, export, colormap);
            }
        });
    }

    /// The web page's save row: a download named after the view (a page cannot choose paths).
    #[cfg(target_arch = "wasm32")]
    fn save_row_ui(
        &mut self,
        ui: &mut egui::Ui,
        export: &ViewExport,
        colormap: Colormap,
        busy: bool,
    ) {
        let file_name = format!("{}.{}", export.name, self.format.extension());
        if ui
            .add_enabled(!busy, egui::Button::new("Download"))
            .on_hover_text(format!(
                "Save {file_name} to the browser's downloads (Ctrl+S)"
            ))
            .clicked()
        {
            self.download(ui.ctx(), export, colormap);
        }
    }

    /// The `poslab table` command that writes the same table, where options describe it.
    fn table_command_ui(&self, ui: &mut egui::Ui, export: &ViewExport) {
        let Some(data) = &export.data else {
            return;
        };
        let file = self.output_name(export);
        if let Some(command) = crate::export::figure::table_command_line(data, self.dtype, &file) {
            command_box(ui, "The same table from a terminal:", command).on_hover_text(
                "poslab table writes it; in Python, poslab.table with these options as keywords",
            );
        }
    }

    /// The file the commands write: the one typed, or the view's name in the format chosen.
    fn output_name(&self, export: &ViewExport) -> String {
        if self.path_text.trim().is_empty() {
            format!("{}.{}", export.name, self.format.extension())
        } else {
            self.path_text.trim().to_owned()
        }
    }

    fn contents_ui(&mut self, ui: &mut egui::Ui, export: &ViewExport, colormap: Colormap) {
        self.follow_view(export);
        ui.horizontal_wrapped(|ui| {
            for format in ExportFormat::ALL {
                if ui
                    .radio_value(&mut self.format, format, format.label())
                    .changed()
                    && !self.path_text.trim().is_empty()
                {
                    // The typed file follows the format: pe.svg becomes pe.png, not pe.svg.png.
                    self.path_text =
                        with_extension(PathBuf::from(self.path_text.trim()), format.extension())
                            .display()
                            .to_string();
                }
            }
        });
        ui.separator();
        if self.format.is_figure() {
            ui.horizontal(|ui| {
                let range = SIZE_RANGE;
                ui.add(
                    egui::DragValue::new(&mut self.width)
                        .range(range.clone())
                        .suffix(" px"),
                )
                .on_hover_text("Figure width");
                ui.label("×");
                ui.add(
                    egui::DragValue::new(&mut self.height)
                        .range(range)
                        .suffix(" px"),
                )
                .on_hover_text("Figure height");
            });
            if self.format == ExportFormat::Png {
                ui.add(egui::Slider::new(&mut self.scale, 1.0..=MAX_SCALE).step_by(0.5).text("Scale"))
                    .on_hover_text("PNG pixels per figure pixel: 2 for slides on high-density screens, 4 for print");
            }
            ui.horizontal(|ui| {
                let label = ui.label("Title");
                ui.add(
                    egui::TextEdit::singleline(&mut self.title)
                        .hint_text("the figure's own title")
                        .desired_width(260.0),
                )
                .labelled_by(label.id);
            });
        } else {
            ui.horizontal(|ui| {
                ui.radio_value(&mut self.dtype, RealDtype::F32, "float32")
                    .on_hover_text("<f4, what models store");
                ui.radio_value(&mut self.dtype, RealDtype::F64, "float64")
                    .on_hover_text("<f8, every digit of the f64 engine");
            });
            match &export.data {
                Some(data) => {
                    if let Some(shape) = data.shape() {
                        ui.label(format!("{} {shape:?}", data.kind_name()));
                    }
                    // A kind whose name does not say which scheme the view chose.
                    if let crate::engine::TableSpec::RopeAxes(params) = data {
                        ui.label(params.summary());
                    }
                }
                None => {
                    use crate::export::figure::FigureSpec;
                    ui.label(match export.figure {
                        FigureSpec::Check(_) | FigureSpec::Learned(_) => {
                            "This view's data is the file you opened: there is no table to save."
                        }
                        _ => "This view's boards are computed from its settings and drawn whole in the figure: there is no table to save.",
                    });
                }
            }
        }
        ui.separator();
        let busy = self.busy() || self.pending_dialog.is_some();
        self.save_row_ui(ui, export, colormap, busy);
        if busy {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("Saving…");
            });
        }
        match &self.message {
            Some(Ok(text)) => {
                ui.label(text);
            }
            Some(Err(text)) => {
                ui.colored_label(ui.visuals().error_fg_color, text);
            }
            None => {}
        }
        if !self.format.is_figure() {
            self.table_command_ui(ui, export);
        }
        if self.format.is_figure() {
            let file = self.output_name(export);
            let mut command =
                crate::export::figure::command_line(&export.figure, &self.style(colormap), &file);
            if self.format == ExportFormat::Png {
                command.push_str(&format!(" --scale {}", self.scale));
            }
            command_box(ui, "The same figure from a terminal:", command);
        }
    }
}

/// A command to copy, under its label.
fn command_box(ui: &mut egui::Ui, label: &str, mut command: String) -> egui::Response {
    ui.separator();
    let label = ui.label(label);
    ui.add(
        egui::TextEdit::multiline(&mut command)
            .font(egui::TextStyle::Monospace)
            .desired_rows(2)
            .desired_width(420.0),
    )
    .labelled_by(label.id);
    label
}

/// `path`, with `extension` added unless it already ends so.
/// `path` ending in `.extension`: kept when it does, another export format's extension
/// replaced, anything else (`run.v2`) kept with the extension added.
pub fn with_extension(path: PathBuf, extension: &str) -> PathBuf {
    let current = path.extension().map(|e| e.to_string_lossy().to_lowercase());
    match current {
        Some(e) if e == extension.to_lowercase() => path,
        Some(e) if ExportFormat::ALL.iter().any(|f| f.extension() == e) => {
            path.with_extension(extension)
        }
        _ => {
            let mut text = path.into_os_string();
            text.push(".");
            text.push(extension);
            PathBuf::from(text)
        }
    }
}

fn size_text(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 => format!("{:.1} MB", b as f64 / (1 << 20) as f64),
        b if b >= 1 << 10 => format!("{:.1} kB", b as f64 / 1024.0),
        b => format!("{b} bytes"),
    }
}

/// An export made, before it is written.
enum Made {
    /// A figure's file.
    Bytes(Vec<u8>),
    /// A table, streamed into its file.
    Table(crate::engine::Table, OutputFormat),
}

/// Makes the export (a figure's file, or the table computed), so that nothing is written when
/// it cannot be made.
fn make_export(
    export: &ViewExport,
    format: ExportFormat,
    style: &FigureStyle,
    scale: f32,
) -> Result<Made, String> {
    match format {
        ExportFormat::Svg | ExportFormat::Png => {
            let figure = build_figure(&export.figure, style).map_err(|e| e.to_string())?;
            Ok(Made::Bytes(if format == ExportFormat::Svg {
                figure.to_svg().into_bytes()
            } else {
                figure.to_png(scale).map_err(|e| e.to_string())?
            }))
        }
        ExportFormat::Npy | ExportFormat::Csv => {
            let output = if format == ExportFormat::Npy {
                OutputFormat::Npy
            } else {
                OutputFormat::Csv
            };
            let data = export
                .data
                .as_ref()
                .ok_or("this view's data is the file you opened: there is no table to save")?;
            let shape = data
                .check_fits(engine::available_memory_bytes())
                .map_err(|e| e.to_string())?;
            if !output.holds_ndim(shape.len()) {
                return Err(format!(
                    "the table has shape {shape:?} and a .csv holds 1-D or 2-D tables; save .npy, or show one head"
                ));
            }
            let table = cpu::compute(data).map_err(|e| e.to_string())?;
            Ok(Made::Table(table, output))
        }
    }
}

/// Makes and writes the export; returns the file's size.
pub fn write_export(
    export: &ViewExport,
    format: ExportFormat,
    style: &FigureStyle,
    scale: f32,
    dtype: RealDtype,
    path: &Path,
) -> Result<u64, String> {
    if path.is_dir() {
        return Err(format!("{} is a folder", path.display()));
    }
    match make_export(export, format, style, scale)? {
        Made::Bytes(bytes) => {
            let mut file = crate::export::AtomicFile::create(path).map_err(|e| e.to_string())?;
            std::io::Write::write_all(file.writer(), &bytes).map_err(|e| e.to_string())?;
            file.commit().map_err(|e| e.to_string())?;
        }
        Made::Table(table, output) => {
            crate::export::write_table_to_path(path, &table, output, dtype)
                .map_err(|e| e.to_string())?;
        }
    }
    std::fs::metadata(path)
        .map(|m| m.len())
        .map_err(|e| e.to_string())
}

/// Makes the export as the bytes of its file (the web page's downloads).
pub fn export_bytes(
    export: &ViewExport,
    format: ExportFormat,
    style: &FigureStyle,
    scale: f32,
    dtype: RealDtype,
) -> Result<Vec<u8>, String> {
    match make_export(export, format, style, scale)? {
        Made::Bytes(bytes) => Ok(bytes),
        Made::Table(table, output) => {
            let mut bytes = Vec::new();
            crate::export::write_table(&mut bytes, &table, output, dtype)
                .map_err(|e| e.to_string())?;
            Ok(bytes)
        }
    }
}
