//! Layouts: RoPE's two pair layouts and the bridge between them. Above, one head: q's rows as
//! Meta stores them (interleaved pairs) and where the half layout puts them, joined by arrows,
//! and the rotation by the offset in each layout, whose cells move from the 2x2 blocks on the
//! diagonal to the four quadrant diagonals; the score q·k is the same both ways. Below, a
//! grouped-query model: k's rows as stored, permuted per kv head, and permuted with the query
//! head count, with every query head's score each way (wrong ones outlined).

use crate::encoding::PairLayout;
use crate::scene::layouts::{
    HEAD_DIM_RANGE, HEADS_RANGE, LayoutsScene, LayoutsSettings, OFFSET_MAX, Way, k_rows_board,
    q_board, rotation_board, scene, scores_board, ways,
};
use crate::ui::params::SharedParams;
use crate::views::{View, ViewContext, ViewExport};
use crate::widgets::board::board_ui;
use crate::widgets::number_box::NumberBox;

/// How long the rows take to move into the half layout, in seconds.
const REORDER_SECONDS: f64 = 1.6;

/// What the view keeps between frames (its settings also between runs).
#[derive(Default, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct LayoutsView {
    pub settings: LayoutsSettings,
    /// The scene drawn.
    #[serde(skip)]
    shown: Option<LayoutsScene>,
    /// Why the settings give no scene (the last good one stays drawn).
    #[serde(skip)]
    error: Option<String>,
    /// When the reorder animation started (egui's clock; NaN: at the next frame).
    #[serde(skip)]
    reorder_since: Option<f64>,
    /// Whether Page Down has played the reorder since the view was entered.
    #[serde(skip)]
    stepped: bool,
}

impl LayoutsView {
    /// The scene drawn now.
    pub fn shown(&self) -> Option<&LayoutsScene> {
        self.shown.as_ref()
    }

    /// Whether the rows are moving into the half layout.
    pub fn is_animating(&self) -> bool {
        self.reorder_since.is_some()
    }

    /// The view's settings with the side panel's base.
    pub fn settings_with(&self, shared: &SharedParams) -> LayoutsSettings {
        LayoutsSettings {
            base: shared.base,
            ..self.settings
        }
    }

    fn update(&mut self, settings: LayoutsSettings) {
        if self.shown.as_ref().is_some_and(|s| s.settings == settings) {
            return;
        }
        match scene(&settings) {
            Ok(scene) => {
                self.shown = Some(scene);
                self.error = None;
            }
            Err(error) => self.error = Some(error),
        }
    }

    fn controls_ui(&mut self, ui: &mut egui::Ui, now: f64) {
        let s = &mut self.settings;
        ui.horizontal_wrapped(|ui| {
            ui.add(
                NumberBox::slider(&mut s.head_dim, HEAD_DIM_RANGE)
                    .step_by(2.0)
                    .text("head dim d"),
            )
            .on_hover_text("Rows of one head of q_proj and k_proj (real models use 64 to 256; the boards need a small one to be read)");
            ui.add(NumberBox::slider(&mut s.heads, HEADS_RANGE).text("query heads H"))
                .on_hover_text("num_attention_heads: each has its own q rows");
            let choices = LayoutsSettings::kv_choices(s.heads);
            if !choices.contains(&s.kv_heads) {
                s.kv_heads = choices
                    .iter()
                    .copied()
                    .filter(|&k| k <= s.kv_heads)
                    .max()
                    .unwrap_or(1);
            }
            egui::ComboBox::from_label("kv heads K")
                .selected_text(s.kv_heads.to_string())
                .show_ui(ui, |ui| {
                    for k in choices {
                        ui.selectable_value(&mut s.kv_heads, k, k.to_string());
                    }
                })
                .response
                .on_hover_text("num_key_value_heads: each kv head serves H/K query heads (grouped-query attention); K = H is plain multi-head attention");
            ui.add(
                NumberBox::drag(&mut s.offset)
                    .range(0..=OFFSET_MAX)
                    .prefix("offset Δ = "),
            )
            .on_hover_text("The query sits Δ positions after the key: RoPE's score depends only on Δ");
            if ui
                .button("New q and k")
                .on_hover_text("Draw other random q and k vectors for every head")
                .clicked()
            {
                s.seed = s.seed.wrapping_add(1);
            }
            if ui
                .button("▶ Replay the reorder")
                .on_hover_text("Move the rows from the interleaved layout to the half one again (Page Down does it too)")
                .clicked()
            {
                self.reorder_since = Some(now);
            }
        });
    }
}

impl View for LayoutsView {
    fn ui(&mut self, ui: &mut egui::Ui, ctx: &mut ViewContext<'_>) {
        let colormap = ctx.colormap;
        let now = ui.input(|i| i.time);
        self.controls_ui(ui, now);
        let settings = self.settings_with(ctx.shared);
        self.update(settings);
        if let Some(error) = &self.error {
            ui.colored_label(ui.visuals().error_fg_color, error);
        }
        let Some(scene) = self.shown.clone() else {
            return;
        };
        summary_ui(ui, &scene);
        let progress = match &mut self.reorder_since {
            Some(start) => {
                if start.is_nan() {
                    *start = now;
                }
                let t = ((now - *start) / REORDER_SECONDS) as f32;
                if t >= 1.0 {
                    self.reorder_since = None;
                    None
                } else {
                    ui.ctx().request_repaint();
                    Some(t.max(0.0))
                }
            }
            None => None,
        };
        let area = ui.available_rect_before_wrap();
        ui.allocate_rect(area, egui::Sense::hover());
        let (top, bottom) = crate::widgets::layout::split_rows(area, 0.58, 10.0);
        one_head_ui(ui, top, &scene, colormap, progress);
        projection_ui(ui, bottom, &scene, colormap);
    }

    fn export(&self, shared: &SharedParams) -> Option<ViewExport> {
        let settings = self.settings_with(shared);
        Some(ViewExport {
            figure: crate::export::figure::FigureSpec::Layouts(
                crate::export::figure::layouts::LayoutsFigure { settings },
            ),
            // The row order of k_proj's permutation: w[table] permutes w.
            data: Some(crate::engine::TableSpec::registered(
                crate::encoding::pair_permutation::PermutationParams {
                    heads: settings.kv_heads,
                    head_dim: settings.head_dim,
                    direction: crate::encoding::pair_permutation::Direction::InterleavedToHalf,
                },
            )),
            name: format!(
                "layouts_k_rows_kv{}_d{}",
                settings.kv_heads, settings.head_dim
            ),
        })
    }

    fn step(&mut self, forward: bool) -> bool {
        if forward && !self.stepped {
            self.stepped = true;
            self.reorder_since = Some(f64::NAN);
            return true;
        }
        false
    }

    fn enter(&mut self, _forward: bool) {
        self.stepped = false;
    }
}

/// The two scores of head 0, and what the bug does, in a line each.
fn summary_ui(ui: &mut egui::Ui, scene: &LayoutsScene) {
    let s = &scene.settings;
    let first = &scene.heads[0];
    ui.label(
        egui::RichText::new(format!(
            "q·k at Δ = {}: {:.4} with Meta's rows under interleaved RoPE = {:.4} with the permuted rows under half RoPE{}",
            s.offset,
            first.original,
            first.permuted,
            if scene.permuted_scores_equal() {
                ": the same model"
            } else {
                ""
            }
        ))
        .strong(),
    );
    let broken = scene.broken_heads();
    let line = match s.bug_group() {
        None => format!(
            "k permuted as {} heads cannot be made here: {}·{}/{} rows per group is not an even number",
            s.heads, s.kv_heads, s.head_dim, s.heads
        ),
        Some(_) if s.kv_heads == s.heads => {
            "K = H: every head has its own k, so permuting k with the query head count is right"
                .to_owned()
        }
        Some(group) => format!(
            "k permuted as {} heads of {group} rows instead of {} kv heads of {}: {} of {} query heads get wrong scores (llama.cpp's converter under grouped-query attention)",
            s.heads,
            s.kv_heads,
            s.head_dim,
            broken.len(),
            s.heads
        ),
    };
    ui.label(line);
}

/// One head: q's rows in both layouts joined by arrows, and the rotation in each.
fn one_head_ui(
    ui: &mut egui::Ui,
    rect: egui::Rect,
    scene: &LayoutsScene,
    colormap: crate::colormap::Colormap,
    progress: Option<f32>,
) {
    let (left, right) = crate::widgets::layout::split_columns(rect, 0.36, 14.0);
    let q_interleaved = q_board(scene, PairLayout::Interleaved);
    let q_half = q_board(scene, PairLayout::Half);
    // A strip needs its title, column numbers and caption beside a row of cells.
    let strip = (left.height() * 0.36).clamp(96.0, 130.0);
    let upper = egui::Rect::from_min_size(left.min, egui::vec2(left.width(), strip));
    let lower = egui::Rect::from_min_size(
        egui::pos2(left.left(), left.bottom() - strip),
        egui::vec2(left.width(), strip),
    );
    let from_q = progress.map(|t| (&q_interleaved, t));
    let above = board_ui(ui, upper, &q_interleaved, colormap, None);
    let below = board_ui(ui, lower, &q_half, colormap, from_q);
    // The permutation: an arrow from each row's place in the interleaved layout to its place
    // in the half one, in its pair's colour.
    let painter = ui.painter_at(left);
    for cell in &q_interleaved.cells {
        let to = q_half.cells.iter().find(|c| c.id == cell.id);
        let Some(to) = to else { continue };
        // From under the upper strip's axis caption to over the lower strip's title and
        // column numbers.
        let start = above.layout.cell_rect(0, cell.col).center_bottom() + egui::vec2(0.0, 18.0);
        let end = egui::pos2(
            below.layout.cell_rect(0, to.col).center().x,
            lower.top() - 6.0,
        );
        if end.y - start.y < 12.0 {
            continue;
        }
        let color = crate::colormap::cell_color(colormap, q_interleaved.range, cell.value);
        painter.arrow(
            start,
            end - start,
            egui::Stroke::new((above.layout.cell.x / 14.0).clamp(1.5, 3.0), color),
        );
    }
    let (matrix_left, matrix_right) = crate::widgets::layout::split_columns(right, 0.5, 14.0);
    let interleaved = rotation_board(scene, PairLayout::Interleaved);
    let half = rotation_board(scene, PairLayout::Half);
    board_ui(ui, matrix_left, &interleaved, colormap, None);
    board_ui(
        ui,
        matrix_right,
        &half,
        colormap,
        progress.map(|t| (&interleaved, t)),
    );
}

/// The whole model: k's rows and every query head's score, each way, with what each line is
/// written on its left.
fn projection_ui(
    ui: &mut egui::Ui,
    rect: egui::Rect,
    scene: &LayoutsScene,
    colormap: crate::colormap::Colormap,
) {
    let (rows_rect, scores_rect) = crate::widgets::layout::split_columns(rect, 0.7, 14.0);
    let caption = 112.0_f32.min(rows_rect.width() * 0.25);
    let boards = [
        (
            k_rows_board(scene),
            egui::Rect::from_min_max(rows_rect.min + egui::vec2(caption, 0.0), rows_rect.max),
        ),
        (scores_board(scene), scores_rect),
    ];
    let mut first_layout = None;
    for (board, rect) in &boards {
        let response = board_ui(ui, *rect, board, colormap, None);
        first_layout.get_or_insert(response.layout);
    }
    if let Some(layout) = first_layout {
        let painter = ui.painter();
        for (line, way) in ways(scene).iter().enumerate() {
            let cell = layout.cell_rect(line, 0);
            painter.text(
                egui::pos2(rows_rect.left(), cell.center().y),
                egui::Align2::LEFT_CENTER,
                way_caption(*way),
                egui::FontId::proportional(12.0),
                if *way == Way::AsQueryHeads {
                    ui.visuals().error_fg_color
                } else {
                    ui.visuals().text_color()
                },
            );
        }
    }
}

/// A line's caption: the rows' order and the RoPE they are rotated by.
fn way_caption(way: Way) -> &'static str {
    match way {
        Way::Stored => "stored, interleaved",
        Way::Permuted => "per head, half",
        Way::AsQueryHeads => "as H heads, half",
    }
}

/// Why this view does not use a shared control.
fn unused_controls(param: crate::ui::params::SharedParam) -> Option<&'static str> {
    use crate::ui::params::SharedParam::*;
    match param {
        Dim => Some("The view has its own head dim, small enough to read every row"),
        Seq | Start => Some("The view compares one query and one key, Δ positions apart"),
        Heads => Some("The view has its own query and kv head counts"),
        Layout => Some("The view shows both layouts side by side"),
        Spacing => Some("RoPE's frequencies are base^(-2i/d) (Vaswani's spacing)"),
        Base => None,
    }
}

/// The view in the picker: its name, first hint, explanation and the shared controls it leaves
/// unused.
pub const INFO: crate::views::ViewInfo = crate::views::ViewInfo {
    label: "Pair layouts",
    hint: "Follow the arrows: the half layout is the interleaved rows reordered · hover a cell · ▶ replays the reorder (Page Down) · set kv heads below H for the grouped-query bug",
    explanation: crate::widgets::explainer::Explanation {
        formula: "half row t·d/2 + j = interleaved row 2j + t;  RoPE_half(P q)·RoPE_half(P k) = RoPE_interleaved(q)·RoPE_interleaved(k)",
        reading: "Top left: one head's q as Meta stores it (pairs (2i, 2i+1) side by side, each colour one pair), and below it the same rows where the half layout (Hugging Face's rotate_half) wants them: the arrows are the permutation P that conversion scripts apply to q_proj's and k_proj's rows. \
              Top right: the rotation by Δ in each layout. It turns each pair by Δ·θ_i: interleaved, a 2x2 block on the diagonal; half, the same four numbers on the four quadrant diagonals (c: cos, s: sin). The cells move from one to the other. \
              Above them, the score q·k both ways: equal, so the converted model is the same model. \
              Bottom: a grouped-query model's k rows, as stored, permuted per kv head (right), and permuted as the H query heads (wrong), each beside every query head's score; wrong rows and wrong scores are outlined.",
        convention: "Interleaved: Meta's Llama apply_rotary_emb (view_as_complex), GPT-J, llama.cpp's normal RoPE; half: Hugging Face's rotate_half, GPT-NeoX, llama.cpp's NeoX RoPE. \
                 transformers' convert_llama_weights_to_hf permutes w.view(n_heads, d/2, 2, dim).transpose(1, 2); llama.cpp's convert_hf_to_gguf the reverse, reshape(n_head, 2, d/2, ...).swapaxes(1, 2), with n_head_kv for k.",
        try_these: &[
            "Press ▶ Replay the reorder: the 2x2 blocks split into the four quadrant diagonals, and each q row slides to where the arrow points.",
            "Change the offset Δ: both matrices change, the two scores stay equal.",
            "Set kv heads K below H (32 and 8 is Llama 3 70B's shape at d = 128): k permuted as H heads reorders rows within pieces of heads, and the outlined query heads attend to the wrong keys. This broke 70B conversions in llama.cpp.",
            "Set K = H: permuting k with the query head count is right again, which is why the bug hid until grouped-query models came.",
        ],
    },
    unused: unused_controls,
};
