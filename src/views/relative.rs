//! Relative positions: the offsets `j - i` every relative scheme starts from, Shaw et al.'s
//! clipped offsets with the embeddings they pick, T5's buckets, ALiBi's bias as offsets times a
//! slope, the skew trick animated stage by stage, and 2D offsets on a patch grid. Each panel is
//! one or more boards of labelled cells from `scene::relative`.

use crate::encoding::skew::SkewStage;
use crate::scene::board::Board;
use crate::scene::relative::{
    self, DIM_RANGE, GRID_RANGE, HEADS_RANGE, MAX_DISTANCE_RANGE, NUM_BUCKETS_RANGE, RelativePanel,
    RelativeSettings, SKEW_TOKENS_RANGE, T5_TOKENS_RANGE, TOKENS_RANGE,
};
use crate::views::{View, ViewContext};
use crate::widgets::board::{BoardLayout, board_ui};

/// Seconds a skew stage takes to turn into the next.
const STAGE_SECONDS: f64 = 0.9;
/// Seconds each stage is shown while playing.
const PLAY_SECONDS: f64 = 1.8;

/// What the view keeps between frames (its settings also between runs).
#[derive(Default, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct RelativeView {
    pub panel: RelativePanel,
    pub settings: RelativeSettings,
    /// The boards drawn, and the settings they were built for.
    #[serde(skip)]
    shown: Option<(RelativePanel, RelativeSettings, Vec<Board>)>,
    /// Why the settings give no boards (the last good ones stay drawn).
    #[serde(skip)]
    error: Option<String>,
    /// The skew stage the animation comes from, and when it started (egui's clock).
    #[serde(skip)]
    transition: Option<(Board, f64)>,
    /// When the skew animation last moved on, while playing.
    #[serde(skip)]
    playing_since: Option<f64>,
    /// Where each board's cells were drawn last frame, so that tests can click a cell.
    #[serde(skip)]
    layouts: Vec<BoardLayout>,
}

impl RelativeView {
    /// The boards drawn now.
    pub fn shown_boards(&self) -> &[Board] {
        self.shown.as_ref().map_or(&[], |(_, _, boards)| boards)
    }

    /// Why the settings could not be drawn, if they could not.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// The centre of cell `(row, col)` of board `board` as drawn last frame.
    pub fn cell_on_screen(&self, board: usize, row: usize, col: usize) -> Option<egui::Pos2> {
        self.layouts
            .get(board)
            .map(|layout| layout.cell_rect(row, col).center())
    }

    /// Whether the skew animation is between two stages.
    pub fn is_animating(&self) -> bool {
        self.transition.is_some()
    }

    /// Builds the boards when the panel or a setting changed.
    fn update(&mut self) {
        if self
            .shown
            .as_ref()
            .is_some_and(|(p, s, _)| *p == self.panel && *s == self.settings)
        {
            return;
        }
        match relative::boards(self.panel, &self.settings) {
            Ok(boards) => {
                // A new stage of the same skew animates from the old one.
                if let Some((RelativePanel::Skew, old, old_boards)) = &self.shown
                    && self.panel == RelativePanel::Skew
                    && old.skew_tokens == self.settings.skew_tokens
                    && old.stage != self.settings.stage
                    && let Some(board) = old_boards.first()
                {
                    self.transition = Some((board.clone(), f64::NAN));
                } else {
                    self.transition = None;
                }
                self.shown = Some((self.panel, self.settings, boards));
                self.error = None;
            }
            Err(e) => {
                self.error = Some(e.to_string());
                // Keeps the last good boards; remembers these settings so that the error is
                // not recomputed every frame.
                if let Some((panel, settings, _)) = &mut self.shown {
                    *panel = self.panel;
                    *settings = self.settings;
                }
            }
        }
    }

    fn controls_ui(&mut self, ui: &mut egui::Ui) {
        let s = &mut self.settings;
        ui.horizontal_wrapped(|ui| match self.panel {
            RelativePanel::Offsets => {
                tokens_slider(ui, &mut s.tokens, TOKENS_RANGE);
            }
            RelativePanel::Shaw => {
                tokens_slider(ui, &mut s.tokens, TOKENS_RANGE);
                ui.add(crate::widgets::number_box::NumberBox::slider(&mut s.max_relative, 0..=TOKENS_RANGE.end() - 1).text("K"))
                    .on_hover_text("The clipping distance: offsets beyond ±K share the embedding of ±K (Shaw et al. found K of 2 to 4 enough for translation)");
            }
            RelativePanel::T5 => {
                tokens_slider(ui, &mut s.t5_tokens, T5_TOKENS_RANGE);
                ui.add(crate::widgets::number_box::NumberBox::slider(&mut s.num_buckets, NUM_BUCKETS_RANGE).text("Buckets"))
                    .on_hover_text("num_buckets: T5 uses 32; bidirectional models split them between earlier and later keys");
                ui.add(
                    crate::widgets::number_box::NumberBox::slider(&mut s.max_distance, MAX_DISTANCE_RANGE)
                        .logarithmic(true)
                        .text("Max distance"),
                )
                .on_hover_text("max_distance: from here on every offset shares the last bucket (T5 uses 128)");
                ui.checkbox(&mut s.bidirectional, "Bidirectional").on_hover_text(
                    "Encoder attention: earlier and later keys get separate buckets. Off (decoder): later keys, which a causal mask hides anyway, all get bucket 0",
                );
            }
            RelativePanel::Alibi => {
                tokens_slider(ui, &mut s.tokens, TOKENS_RANGE);
                if ui
                    .add(crate::widgets::number_box::NumberBox::slider(&mut s.heads, HEADS_RANGE).text("Heads H"))
                    .on_hover_text("The slopes depend on the number of heads")
                    .changed()
                {
                    s.head = s.head.min(s.heads - 1);
                }
                ui.add(crate::widgets::number_box::NumberBox::slider(&mut s.head, 0..=s.heads - 1).text("Head h"))
                    .on_hover_text("The head whose slope multiplies the distances");
                ui.checkbox(&mut s.causal, "Causal")
                    .on_hover_text("Mask later keys with −∞, as a decoder does");
            }
            RelativePanel::Skew => {
                if tokens_slider(ui, &mut s.skew_tokens, SKEW_TOKENS_RANGE).changed() {
                    self.playing_since = None;
                }
                ui.add(crate::widgets::number_box::NumberBox::slider(&mut s.dim, DIM_RANGE).logarithmic(true).text("Head width d"))
                    .on_hover_text("The query and embedding width, for the memory comparison");
            }
            RelativePanel::TwoD => {
                let (mut h, mut w) = (s.grid.grid_h, s.grid.grid_w);
                let rows = ui
                    .add(crate::widgets::number_box::NumberBox::slider(&mut h, GRID_RANGE).text("Grid rows"))
                    .on_hover_text("Patches down the image");
                let cols = ui
                    .add(crate::widgets::number_box::NumberBox::slider(&mut w, GRID_RANGE).text("Grid columns"))
                    .on_hover_text("Patches across the image");
                if rows.changed() || cols.changed() {
                    // The query keeps its row and column where the new grid has them.
                    let (x, y) = s.grid.patch_xy(s.query);
                    s.grid.grid_h = h;
                    s.grid.grid_w = w;
                    s.query = y.min(h - 1) * w + x.min(w - 1);
                }
                ui.add(crate::widgets::number_box::NumberBox::slider(&mut s.dim, DIM_RANGE).logarithmic(true).text("Head width d"))
                    .on_hover_text("Width of the query and the random embeddings");
                ui.add(crate::widgets::number_box::NumberBox::drag(&mut s.seed).prefix("seed "))
                    .on_hover_text("Seed of the random query and embeddings");
            }
        });
    }

    /// The skew trick's step list, Prev/Next and Play.
    fn stages_ui(&mut self, ui: &mut egui::Ui, now: f64) {
        let last = SkewStage::ALL.len() - 1;
        ui.horizontal_wrapped(|ui| {
            let stage = &mut self.settings.stage;
            if ui
                .add_enabled(*stage > 0, egui::Button::new("Prev"))
                .on_hover_text("The previous step (left arrow key)")
                .clicked()
            {
                *stage -= 1;
                self.playing_since = None;
            }
            if ui
                .add_enabled(*stage < last, egui::Button::new("Next"))
                .on_hover_text("The next step (right arrow key)")
                .clicked()
            {
                *stage += 1;
                self.playing_since = None;
            }
            let playing = self.playing_since.is_some();
            if ui
                .button(if playing { "Pause" } else { "Play" })
                .on_hover_text("Step through the trick from the start (Space)")
                .clicked()
            {
                self.playing_since = if playing {
                    None
                } else {
                    if *stage == last {
                        *stage = 0;
                    }
                    Some(now)
                };
            }
        });
        ui.horizontal_wrapped(|ui| {
            for (index, stage) in SkewStage::ALL.iter().enumerate() {
                if ui
                    .selectable_label(self.settings.stage == index, stage.title())
                    .clicked()
                {
                    self.settings.stage = index;
                    self.playing_since = None;
                }
            }
        });
    }

    /// Arrow keys step the skew trick and Space plays it, unless a text box has the keys.
    fn skew_keys(&mut self, ui: &egui::Ui, now: f64) {
        if ui.ctx().memory(|m| m.focused().is_some()) {
            return;
        }
        let last = SkewStage::ALL.len() - 1;
        ui.input(|i| {
            if i.key_pressed(egui::Key::ArrowRight) && self.settings.stage < last {
                self.settings.stage += 1;
                self.playing_since = None;
            }
            if i.key_pressed(egui::Key::ArrowLeft) && self.settings.stage > 0 {
                self.settings.stage -= 1;
                self.playing_since = None;
            }
            if i.key_pressed(egui::Key::Space) {
                self.playing_since = match self.playing_since {
                    Some(_) => None,
                    None => {
                        if self.settings.stage == last {
                            self.settings.stage = 0;
                        }
                        Some(now)
                    }
                };
            }
        });
    }
}

fn tokens_slider(
    ui: &mut egui::Ui,
    tokens: &mut usize,
    range: std::ops::RangeInclusive<usize>,
) -> egui::Response {
    ui.add(crate::widgets::number_box::NumberBox::slider(tokens, range).text("Tokens L"))
        .on_hover_text("The sequence length: the boards are L × L")
}

/// One sentence on what the panel shows.
fn caption(panel: RelativePanel, settings: &RelativeSettings) -> String {
    match panel {
        RelativePanel::Offsets => "Every relative scheme starts here: the logit of query i and key j may depend only on j − i, so each diagonal of this matrix must share one value. The matrix holds 2L − 1 distinct offsets.".into(),
        RelativePanel::Shaw => format!(
            "Shaw et al. learn one embedding per clipped offset and add it to the key: offsets beyond ±{k} share w[0] or w[{}], the white border. Hover a cell to see which embedding it picks.",
            2 * settings.max_relative,
            k = settings.max_relative
        ),
        RelativePanel::T5 => {
            let t5 = settings.t5();
            let unused = if t5.bidirectional {
                format!(
                    " Bucket {} is never used: offset 0 counts as an earlier key (the reference tests offset > 0).",
                    t5.buckets_per_direction()
                )
            } else {
                String::new()
            };
            format!(
                "T5 learns one scalar bias per bucket and head. Distances below {} get a bucket each (exact); up to {} buckets widen logarithmically (truncated, so the last bucket can start earlier); beyond, all share the last. White borders separate the regions.{unused}",
                t5.max_exact(),
                t5.max_distance
            )
        }
        RelativePanel::Alibi => "ALiBi learns nothing: its bias is the distance |j − i| times a fixed slope per head, so it is the offset matrix folded and scaled.".into(),
        RelativePanel::Skew => format!(
            "q·R^T gives each query's logit for every offset o = −(L−1) … L−1; the attention matrix needs them by key. Padding and reshaping shift row i right by i places, which lines each offset up under its key. {}",
            relative::skew_cost_text(settings.skew_tokens, settings.dim)
        ),
        RelativePanel::TwoD => format!(
            "Each key patch is (dy, dx) away from the query (red outline; click a patch to move it). {} The logits use a random query and random embeddings (d = {}, seed {}), as at initialisation: whatever training learns, the map stays a row term plus a column term.",
            relative::two_d_count_text(settings.grid),
            settings.dim,
            settings.seed
        ),
    }
}

impl View for RelativeView {
    fn step(&mut self, forward: bool) -> bool {
        let last = SkewStage::ALL.len() - 1;
        let stage = self.settings.stage;
        let next = match (self.panel, forward) {
            (RelativePanel::Skew, true) if stage < last => stage + 1,
            (RelativePanel::Skew, false) if stage > 0 => stage - 1,
            _ => return false,
        };
        self.settings.stage = next;
        self.playing_since = None;
        true
    }

    fn enter(&mut self, forward: bool) {
        if self.panel == RelativePanel::Skew {
            self.settings.stage = if forward { 0 } else { SkewStage::ALL.len() - 1 };
            self.playing_since = None;
        }
    }

    fn export(
        &self,
        _shared: &crate::ui::params::SharedParams,
    ) -> Option<crate::views::ViewExport> {
        let figure = crate::export::figure::FigureSpec::Relative(
            crate::export::figure::relative::RelativeFigure {
                panel: self.panel,
                settings: self.settings,
            },
        );
        Some(crate::views::ViewExport {
            figure,
            data: None,
            name: match self.panel {
                RelativePanel::Skew => format!("relative_skew_stage{}", self.settings.stage + 1),
                panel => format!("relative_{}", crate::export::figure::value_name(panel)),
            },
        })
    }

    fn ui(&mut self, ui: &mut egui::Ui, ctx: &mut ViewContext<'_>) {
        let colormap = ctx.colormap;
        self.settings = self.settings.clamped();
        let now = ui.input(|i| i.time);
        ui.horizontal_wrapped(|ui| {
            for panel in RelativePanel::ALL {
                ui.selectable_value(&mut self.panel, panel, panel.label());
            }
        });
        self.controls_ui(ui);
        if self.panel == RelativePanel::Skew {
            self.stages_ui(ui, now);
            self.skew_keys(ui, now);
            if let Some(since) = self.playing_since {
                if now - since >= PLAY_SECONDS {
                    if self.settings.stage + 1 < SkewStage::ALL.len() {
                        self.settings.stage += 1;
                        self.playing_since = Some(now);
                    } else {
                        self.playing_since = None;
                    }
                }
                ui.ctx().request_repaint();
            }
        }
        self.update();
        ui.add(egui::Label::new(caption(self.panel, &self.settings)).wrap());
        if let Some(error) = &self.error {
            ui.colored_label(ui.visuals().error_fg_color, error);
        }
        let Some((panel, _, boards)) = &self.shown else {
            return;
        };
        let (panel, boards) = (*panel, boards.clone());
        let area = ui.available_rect_before_wrap();
        ui.allocate_rect(area, egui::Sense::hover());
        // Board widths: the Shaw table and the T5 list narrow beside the matrix.
        let shares: Vec<f32> = match (panel, boards.len()) {
            (RelativePanel::Shaw | RelativePanel::T5, 2) => vec![0.75, 0.25],
            (_, n) => vec![1.0 / n.max(1) as f32; n],
        };
        let mut left = area.left();
        self.layouts.clear();
        let mut hovered_shaw_index: Option<usize> = None;
        for (index, (board, share)) in boards.iter().zip(&shares).enumerate() {
            let width = area.width() * share;
            let rect = egui::Rect::from_min_size(
                egui::pos2(left, area.top()),
                egui::vec2(width - 12.0, area.height()),
            );
            left += width;
            let from = match (&self.transition, index) {
                (Some((before, start)), 0) => {
                    let start = if start.is_nan() { now } else { *start };
                    Some((before, ((now - start) / STAGE_SECONDS) as f32))
                }
                _ => None,
            };
            let mut board = board.clone();
            if index == 1
                && let Some(row) = hovered_shaw_index
                && let Some(cell) = board.cells.get_mut(row)
            {
                cell.outlined = true;
            }
            let response = board_ui(ui, rect, &board, colormap, from);
            self.layouts.push(response.layout);
            if panel == RelativePanel::Shaw
                && index == 0
                && let Some(hovered) = response.hovered
            {
                let k = self.settings.max_relative as i64;
                let clipped = board.cells[hovered].value.unwrap_or(0.0) as i64;
                hovered_shaw_index = Some((clipped + k) as usize);
            }
            if panel == RelativePanel::TwoD
                && let Some((row, col)) = response.clicked
            {
                self.settings.query = row * self.settings.grid.grid_w + col;
            }
        }
        // The animation's start time is the first frame that draws it.
        if let Some((_, start)) = &mut self.transition {
            if start.is_nan() {
                *start = now;
            } else if now - *start >= STAGE_SECONDS {
                self.transition = None;
            }
        }
    }
}

/// The view in the picker: its name, first hint, explanation and the shared controls it leaves
/// unused.
pub const INFO: crate::views::ViewInfo = crate::views::ViewInfo {
    label: "Relative positions",
    hint: "Pick a scheme above the boards · hover a cell for what it holds · skew trick: the arrow keys step, Space plays",
    explanation: crate::widgets::explainer::Explanation {
        formula: "logit(i, j) = q_i·k_j + b(j − i): Shaw adds q_i·w[clip(j − i, −K, K)], T5 a learned bias per bucket(j − i), ALiBi −m·|j − i|",
        reading: "Every board is the attention matrix's shape: query i down, key j across, one labelled cell per pair (hover for what it holds). \
              Colour follows the number in the cell. White borders separate regions: clipped offsets, T5's exact and logarithmic buckets, \
              the part of the skew trick's array that the final slice keeps.",
        convention: "Clipping as Shaw, Uszkoreit and Vaswani (2018); buckets as Hugging Face T5's _relative_position_bucket (in float32, as torch computes it); \
                 ALiBi slopes as ofirpress; the skew trick as Music Transformer's, in the pad-flatten-pad-reshape-slice form of lucidrains' relative_to_absolute; \
                 2D offsets as Stand-Alone Self-Attention and the Bottleneck Transformer (row and column embeddings summed).",
        try_these: &[
            "Offsets: every diagonal holds one number; a relative scheme can only tell the diagonals apart.",
            "T5: untick Bidirectional and every later key falls into bucket 0, with the query itself.",
            "Skew trick: press Play, then watch row i slide i places right at the reshape, lining each offset up under its key.",
        ],
    },
    unused: unused_controls,
};

/// Why this view leaves the side panel's controls unused: all of them, for one reason.
fn unused_controls(_: crate::ui::params::SharedParam) -> Option<&'static str> {
    Some("The relative view sets its own small lengths in the view, so that every cell can be read")
}
