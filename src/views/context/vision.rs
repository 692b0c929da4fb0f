//! The vision half: MAE's 2D sin-cos table (or a learned one) resampled to a larger grid as
//! timm does, beside the table made for that grid, and the encodings that need no table.

use super::*;

/// The vision half's maps: MAE's table resampled and made at the larger grid, or a learned
/// table at its own grid and resampled.
#[derive(Clone)]
pub enum VisionPanels {
    Mae(VisionMaps),
    Learned(LearnedMaps),
}

/// The MAE table's maps (resampled, made for the grid, their difference), each with its
/// grid, query and title, after a line that says how far they differ.
fn mae_maps_ui(
    ui: &mut egui::Ui,
    maps: &VisionMaps,
    grid: GridParams,
    q: usize,
    (t, side): (usize, usize),
) -> Vec<(ndarray::Array2<f64>, GridParams, usize, String)> {
    let (qx, qy) = grid.patch_xy(q);
    let difference = &maps.resampled - &maps.direct;
    let largest = difference.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    ui.add(egui::Label::new(format!(
        "Query patch ({qx}, {qy}) of {side} x {side}: the resampled table's similarities differ from those of the table made for this grid by up to {largest:.4}. Click a patch to move the query."
    )).wrap());
    vec![
        (
            maps.resampled.clone(),
            grid,
            q,
            format!("MAE table made at {t} x {t}, resampled"),
        ),
        (
            maps.direct.clone(),
            grid,
            q,
            format!("MAE table made at {side} x {side}"),
        ),
        (
            difference,
            grid,
            q,
            "difference (resampled - made)".to_owned(),
        ),
    ]
}

/// A learned position table the user opened, and the file it came from.
pub struct OpenedTable {
    pub path: std::path::PathBuf,
    pub tensor: Option<String>,
    pub table: LearnedTable,
}

/// What the vision maps were computed for: the parameters and the learned table's source.
pub(super) type VisionKey = (VisionParams, Option<(std::path::PathBuf, Option<String>)>);

impl ContextView {
    /// The vision half as a figure.
    pub fn vision_figure(&self) -> VisionFigure {
        let side = self.vision.target_side;
        let heads = self.alibi.heads.max(1);
        let mut params = VisionParams {
            query: self.vision.query.min(side * side - 1),
            ..self.vision
        };
        let learned = self.learned_in_use().map(|opened| {
            // The table's own grid and width.
            params.train_side = opened.table.side;
            params.dim = opened.table.table.ncols();
            (opened.path.clone(), opened.tensor.clone())
        });
        VisionFigure {
            params,
            learned,
            heads,
            head: self.alibi.head.min(heads - 1),
        }
    }

    /// The learned table when it is the one drawn.
    pub(super) fn learned_in_use(&self) -> Option<&OpenedTable> {
        self.learned.as_ref().filter(|_| self.use_learned)
    }

    /// The vision half's similarity maps, computed once per setting.
    /// The maps of the settings now, computed on a worker thread (a 64 x 64 grid's resampled
    /// and made tables take a tenth of a second or more): the last ones of the same grid until
    /// they arrive, `None` when there are none.
    fn vision_maps_on_worker(
        &mut self,
        ctx: &egui::Context,
        status: &mut crate::ui::status::Status,
    ) -> Option<Result<VisionPanels, String>> {
        let figure = self.vision_figure();
        let key: VisionKey = (figure.params, figure.learned);
        let current = self.vision_maps.as_ref().is_some_and(|(k, _)| *k == key);
        if !current && !self.vision_job.wants(&key) {
            let learned = self.learned_in_use().map(|opened| opened.table.clone());
            let params = key.0;
            self.vision_job.request(
                Some(ctx),
                key.clone(),
                format!(
                    "computing the {} x {} maps",
                    params.target_side, params.target_side
                ),
                move |_| Ok(compute_vision_maps(&params, learned.as_ref())),
            );
        }
        for update in self.vision_job.poll(Some(ctx)) {
            match update {
                crate::jobs::Update::Done(maps, _) => {
                    let asked = self
                        .vision_job
                        .wanted()
                        .cloned()
                        .unwrap_or_else(|| key.clone());
                    self.vision_maps = Some((asked, maps));
                }
                crate::jobs::Update::Failed(reason) => {
                    let asked = self
                        .vision_job
                        .wanted()
                        .cloned()
                        .unwrap_or_else(|| key.clone());
                    self.vision_maps = Some((asked, Err(reason)));
                }
                crate::jobs::Update::Preview(_) => {}
            }
        }
        if let Some(pending) = self.vision_job.pending() {
            status.pending(pending.clone());
            ctx.request_repaint();
        }
        // Maps of another query on the same grid are drawn until this query's arrive (a click
        // on a patch answers at once); maps of another grid cannot be drawn against this one's
        // axes, and the view says they are being computed.
        let same_grid = |shown: &VisionKey| {
            let mut shown = shown.clone();
            shown.0.query = key.0.query;
            shown == key
        };
        self.vision_maps
            .as_ref()
            .filter(|(shown, _)| same_grid(shown))
            .map(|(_, maps)| maps.clone())
    }

    /// The maps of the settings now, computed on this thread when the view has not (tests,
    /// exports; the view asks a worker).
    pub fn vision_maps(&mut self) -> Result<&VisionPanels, String> {
        let figure = self.vision_figure();
        let key: VisionKey = (figure.params, figure.learned);
        if self.vision_maps.as_ref().map(|(k, _)| k) != Some(&key) {
            let maps = compute_vision_maps(&key.0, self.learned_in_use().map(|o| &o.table));
            self.vision_maps = Some((key, maps));
        }
        match self.vision_maps.as_ref().map(|(_, maps)| maps) {
            Some(Ok(maps)) => Ok(maps),
            Some(Err(reason)) => Err(reason.clone()),
            None => Err("no maps".to_owned()),
        }
    }

    /// Map `k` of the vision half as shown (0 resampled or the learned table at its grid, 1
    /// made or resampled, 2 difference, 3 axial RoPE, 4 mixed RoPE, 5 2D ALiBi).
    pub fn shown_vision_map(&self, k: usize) -> Option<&crate::widgets::heatmap::HeatmapData> {
        self.grid_maps.get(k)?.data.as_ref()
    }

    /// Where the centre of patch `(x, y)` of vision map `k` was on screen last frame.
    pub fn vision_patch_on_screen(&self, k: usize, x: usize, y: usize) -> Option<egui::Pos2> {
        self.grid_maps.get(k)?.patch_on_screen(x, y)
    }

    /// Reads a learned position table and draws it; a file that is not one keeps the view as
    /// it was and says why.
    pub fn open_position_table(&mut self, path: &std::path::Path, tensor: Option<&str>) {
        let max_bytes = crate::engine::available_memory_bytes().unwrap_or(u64::MAX);
        let read = crate::import::read_position_table(path, tensor, max_bytes)
            .map_err(|e| e.to_string())
            .and_then(|(table, tensor)| {
                LearnedTable::new(table)
                    .map(|table| (table, tensor))
                    .map_err(|e| format!("{}: {e}", path.display()))
            });
        match read {
            Ok((table, tensor)) => {
                self.table_path_text = path.display().to_string();
                self.learned = Some(OpenedTable {
                    path: path.to_owned(),
                    tensor,
                    table,
                });
                self.use_learned = true;
                self.learned_error = None;
            }
            Err(reason) => self.learned_error = Some(reason),
        }
    }

    /// The position table's controls: MAE's or a learned one from a file.
    fn table_source_ui(&mut self, ui: &mut egui::Ui) {
        if let Some(dialog) = &self.table_dialog {
            match dialog.poll() {
                DialogAnswer::Waiting => {}
                DialogAnswer::Chosen(path) => {
                    self.table_dialog = None;
                    self.open_position_table(&path, None);
                }
                DialogAnswer::Cancelled => self.table_dialog = None,
            }
        }
        let dropped = ui.ctx().input(|i| {
            i.raw
                .dropped_files
                .iter()
                .map(|f| f.path().to_path_buf())
                .find(|path| {
                    path.extension()
                        .is_some_and(|e| e == "npy" || e == "safetensors")
                })
        });
        if let Some(path) = dropped {
            self.open_position_table(&path, None);
        }
        ui.horizontal_wrapped(|ui| {
            ui.label("Position table:");
            ui.radio_value(&mut self.use_learned, false, "MAE 2D sin-cos")
                .on_hover_text("MAE's fixed table, which can also be made for the larger grid directly");
            let learned_label = match &self.learned {
                Some(opened) => format!(
                    "learned: {} ({} x {})",
                    opened
                        .path
                        .file_name()
                        .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
                    opened.table.side,
                    opened.table.side
                ),
                None => "learned (open a file)".to_owned(),
            };
            ui.add_enabled_ui(self.learned.is_some(), |ui| {
                ui.radio_value(&mut self.use_learned, true, learned_label);
            });
            if ui
                .add_enabled(self.table_dialog.is_none(), egui::Button::new("Open table…"))
                .on_hover_text("A ViT's learned pos_embed from a .npy or .safetensors file ([1, 197, 768] or [196, 768]); or drop one on the window")
                .clicked()
            {
                self.table_dialog = Some(PendingDialog::open_file(
                    ui.ctx(),
                    "Learned position table",
                    "Tables",
                    &["npy", "safetensors"],
                ));
            }
            ui.add(
                egui::TextEdit::singleline(&mut self.table_path_text)
                    .desired_width(160.0)
                    .hint_text(crate::ui::dialogs::path_hint("or a path")),
            );
            ui.add(
                egui::TextEdit::singleline(&mut self.tensor_text)
                    .desired_width(120.0)
                    .hint_text("tensor (optional)"),
            )
            .on_hover_text("Of a .safetensors file holding several tensors: which one (default: the one named pos_embed or position_embeddings)");
            if ui.button("Load").clicked() && !self.table_path_text.trim().is_empty() {
                let path = std::path::PathBuf::from(self.table_path_text.trim());
                let tensor = self.tensor_text.trim().to_owned();
                self.open_position_table(&path, (!tensor.is_empty()).then_some(tensor.as_str()));
            }
        });
        if let Some(error) = &self.learned_error {
            ui.colored_label(ui.visuals().error_fg_color, error);
        }
    }

    /// The vision half's settings: the grids, the table's width, the interpolation, and the
    /// 2D ALiBi model.
    fn vision_controls_ui(&mut self, ui: &mut egui::Ui) {
        use crate::encoding::resample::ResampleMode;
        let learned = self.learned_in_use().map(|o| o.table.side);
        let v = &mut self.vision;
        ui.horizontal_wrapped(|ui| {
            match learned {
                Some(side) => {
                    ui.label(format!("trained grid {side} x {side} (the table's)"));
                }
                None => {
                    ui.add(crate::widgets::number_box::NumberBox::slider(&mut v.train_side, 2..=64).text("trained grid"))
                        .on_hover_text("Patches along a side of the grid the ViT was trained on (14: 224 px at 16 px a patch)");
                }
            }
            ui.add(crate::widgets::number_box::NumberBox::slider(&mut v.target_side, 2..=64).text("run at"))
                .on_hover_text("Patches along a side of the larger image (24: 384 px)");
            ui.label(format!(
                "{} px -> {} px",
                learned.unwrap_or(v.train_side) * PATCH_PIXELS,
                v.target_side * PATCH_PIXELS
            ));
            if learned.is_none() {
                let mut dim = v.dim;
                if ui
                    .add(crate::widgets::number_box::NumberBox::drag(&mut dim).range(4..=4096).prefix("dim "))
                    .on_hover_text("Width of the MAE table, a multiple of 4 (ViT-B: 768)")
                    .changed()
                {
                    v.dim = (dim / 4 * 4).max(4);
                }
            }
            ui.radio_value(&mut v.mode, ResampleMode::Bicubic, "bicubic")
                .on_hover_text("timm's default: torch's bicubic interpolate (Keys' cubic, a = -0.75; -0.5 with antialias)");
            ui.radio_value(&mut v.mode, ResampleMode::Bilinear, "bilinear");
            ui.checkbox(&mut v.antialias, "antialias")
                .on_hover_text("torch's anti-aliased interpolation, timm's default (it matters when shrinking)");
        });
        ui.horizontal_wrapped(|ui| {
            ui.add(
                crate::widgets::number_box::NumberBox::drag(&mut self.alibi.heads)
                    .range(1..=128)
                    .prefix("2D ALiBi heads "),
            );
            self.alibi.head = self.alibi.head.min(self.alibi.heads - 1);
            ui.add(
                crate::widgets::number_box::NumberBox::slider(
                    &mut self.alibi.head,
                    0..=self.alibi.heads - 1,
                )
                .text("head"),
            );
        });
    }

    pub(super) fn vision_ui(
        &mut self,
        ui: &mut egui::Ui,
        colormap: crate::colormap::Colormap,
        engine: &crate::ui::engine::AppEngine,
        status: &mut crate::ui::status::Status,
    ) {
        self.table_source_ui(ui);
        self.vision_controls_ui(ui);
        let side = self.vision.target_side;
        self.vision.query = self.vision.query.min(side * side - 1);
        let grid = self.vision.target_grid();
        let panels = match self.vision_maps_on_worker(ui.ctx(), status) {
            Some(Ok(panels)) => panels,
            Some(Err(reason)) => {
                ui.colored_label(ui.visuals().error_fg_color, reason);
                return;
            }
            None => {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label("computing the maps…");
                });
                return;
            }
        };
        let (qx, qy) = grid.patch_xy(self.vision.query);
        let figure = self.vision_figure();
        let encodings = figure.encoding_maps();
        // The first maps: their values, grid, query and title.
        let firsts: Vec<(ndarray::Array2<f64>, GridParams, usize, String)> = match &panels {
            VisionPanels::Mae(maps) => mae_maps_ui(
                ui,
                maps,
                grid,
                self.vision.query,
                (self.vision.train_side, side),
            ),
            VisionPanels::Learned(maps) => {
                let t = figure.params.train_side;
                let (tx, ty) = maps.trained_query;
                ui.add(egui::Label::new(format!(
                    "Query patch ({qx}, {qy}) of {side} x {side}, at ({tx}, {ty}) of the table's {t} x {t} grid. A learned table exists at one grid only: resampling is the only way to a larger image. Cosine similarity. Click a patch to move the query."
                )).wrap());
                let small = GridParams {
                    grid_h: t,
                    grid_w: t,
                };
                vec![
                    (
                        maps.trained.clone(),
                        small,
                        ty * t + tx,
                        format!("learned table at its {t} x {t} grid"),
                    ),
                    (
                        maps.resampled.clone(),
                        grid,
                        self.vision.query,
                        format!("resampled to {side} x {side}"),
                    ),
                ]
            }
        };
        // Within the window, however wide a row of controls made the panel.
        let full = ui.available_rect_before_wrap().intersect(ui.clip_rect());
        ui.allocate_rect(full, egui::Sense::hover());
        let (top, bottom) = crate::widgets::layout::split_rows(full, 0.5, 8.0);
        // The bottom row: the encodings that need no table, or what the survey measured.
        let tabs = egui::Rect::from_min_size(bottom.min, egui::vec2(bottom.width(), 22.0));
        let bottom =
            egui::Rect::from_min_max(egui::pos2(bottom.left(), bottom.top() + 24.0), bottom.max);
        ui.scope_builder(egui::UiBuilder::new().max_rect(tabs), |ui| {
            ui.horizontal(|ui| {
                ui.selectable_value(&mut self.vision_survey, false, "Encodings with no table")
                    .on_hover_text("Axial and mixed RoPE and 2D ALiBi at the larger grid: computed from positions, so nothing to resample");
                ui.selectable_value(&mut self.vision_survey, true, "The survey's accuracies")
                    .on_hover_text("Top-1 on ImageNet-100 of four ViTs trained at 224 px and tested from 96 to 512 px: the learned table resampled, no position encoding, 2D mixed RoPE, 2D ALiBi");
            });
        });
        if self.vision_survey {
            ui.scope_builder(egui::UiBuilder::new().max_rect(bottom), |ui| {
                survey_ui(ui, bottom.height());
            });
        }
        let cells = |row: egui::Rect| {
            let (a, rest) = crate::widgets::layout::split_columns(row, 1.0 / 3.0, 8.0);
            let (b, c) = crate::widgets::layout::split_columns(rest, 0.5, 8.0);
            [a, b, c]
        };
        let rects: Vec<egui::Rect> = cells(top).into_iter().chain(cells(bottom)).collect();
        // The two tables' maps side by side are compared: one colour scale for both (the
        // difference keeps its own).
        let shared_range = firsts
            .iter()
            .take(2)
            .flat_map(|(values, ..)| values.iter().copied())
            .filter(|v| v.is_finite())
            .fold(None, |range: Option<(f64, f64)>, v| {
                Some(range.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v))))
            })
            .map(|(lo, hi)| colormap.range(lo, hi));
        let query = self.vision.query;
        let mut clicked = None;
        for (k, (map, rect)) in self.grid_maps.iter_mut().zip(rects).enumerate() {
            let ui = &mut ui.new_child(egui::UiBuilder::new().max_rect(rect));
            let id = format!("context_vision_{k}");
            let picked = match (k, firsts.get(k)) {
                (0..3, Some((values, map_grid, map_query, title))) => {
                    ui.label(title);
                    let range = if k < 2 { shared_range } else { None };
                    let picked =
                        map.ui_values(ui, &id, values, *map_grid, *map_query, colormap, range);
                    // Only a click on the larger grid names a query patch.
                    picked.filter(|_| *map_grid == grid)
                }
                (0..3, None) => {
                    ui.add(egui::Label::new("A learned table has no version made for the larger grid: training made it at one size only.").wrap());
                    None
                }
                _ if self.vision_survey => None,
                _ => {
                    ui.label(&encodings[k - 3].0);
                    map.ui(ui, &id, &encodings[k - 3].1, grid, query, colormap, engine)
                }
            };
            clicked = clicked.or(picked);
        }
        if let Some(patch) = clicked {
            self.vision.query = patch;
        }
    }
}

/// The vision half's maps for `params`: of the learned table when one is in use, else MAE's.
fn compute_vision_maps(
    params: &VisionParams,
    learned: Option<&LearnedTable>,
) -> Result<VisionPanels, String> {
    match learned {
        Some(table) => table
            .maps(params)
            .map(VisionPanels::Learned)
            .map_err(|e| e.to_string()),
        None => params
            .maps()
            .map(VisionPanels::Mae)
            .map_err(|e| e.to_string()),
    }
}
