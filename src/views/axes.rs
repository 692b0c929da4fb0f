//! RoPE over time, height and width: a sequence of text, an image (or video frames) of patch
//! tokens and more text, numbered by three schemes side by side (1D RoPE flattened, Qwen2-VL's
//! M-RoPE, Flux's per-axis RoPE). A click picks a token; every token is coloured by its
//! similarity to it under each scheme, frame by frame, and a strip shows which pairs of the
//! head each axis turns.

use crate::colormap::{Colormap, cell_color};
use crate::scene::axes::{Scheme, SchemeMaps, Token, TokenLayout, all_schemes};
use crate::views::{View, ViewContext};
use crate::widgets::number_box::NumberBox;

/// The axes' names and colours in the pair strip.
const AXES: [(&str, egui::Color32); 3] = [
    ("time", egui::Color32::from_rgb(230, 159, 0)),
    ("height", egui::Color32::from_rgb(86, 180, 233)),
    ("width", egui::Color32::from_rgb(0, 158, 115)),
];

/// What the view keeps between frames (and between runs).
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct AxesView {
    pub layout: TokenLayout,
    /// Head dimensions, a multiple of 16.
    pub dim: usize,
    /// The token the others are compared with.
    pub chosen: usize,
    /// One colour scale for the three schemes, rather than each its own.
    pub same_scale: bool,
    /// The maps of the settings they were computed for.
    #[serde(skip)]
    maps: Option<(Key, Vec<SchemeMaps>)>,
    #[serde(skip)]
    job: crate::jobs::Latest<Key, (Key, Vec<SchemeMaps>)>,
}

/// What the maps depend on; also the job that computes them on a worker (a Web Worker on
/// the web).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Key {
    layout: TokenLayout,
    dim: usize,
    theta: f64,
    chosen: usize,
}

impl crate::jobs::remote::RemoteJob for Key {
    const NAME: &'static str = "axes-maps";
    type Output = (Key, Vec<SchemeMaps>);

    fn run(
        self,
        _progress: &crate::jobs::remote::Progress<Self::Output>,
    ) -> Result<Self::Output, crate::jobs::Cancelled> {
        let maps = all_schemes(&self.layout, self.dim, self.theta, self.chosen);
        Ok((self, maps))
    }
}

impl Default for AxesView {
    fn default() -> Self {
        let layout = TokenLayout::default();
        Self {
            layout,
            dim: 64,
            chosen: layout.middle_patch(),
            // One scale, so that a colour means the same similarity in every column: each
            // its own would stretch M-RoPE's 0.3% differences across the whole map.
            same_scale: true,
            maps: None,
            job: Default::default(),
        }
    }
}

impl AxesView {
    /// The maps shown now (those of the last settings computed), for tests.
    pub fn shown(&self) -> Option<&[SchemeMaps]> {
        self.maps.as_ref().map(|(_, maps)| maps.as_slice())
    }

    fn controls(&mut self, ui: &mut egui::Ui) {
        let before = self.layout;
        // Two rows of three, the sliders short enough for a row to fit beside the side panel.
        ui.spacing_mut().slider_width = 70.0;
        ui.horizontal(|ui| {
            ui.add(NumberBox::slider(&mut self.layout.text_before, 0..=16).text("Text before"))
                .on_hover_text("Text tokens before the image");
            ui.add(NumberBox::slider(&mut self.layout.text_after, 0..=16).text("Text after"))
                .on_hover_text("Text tokens after the image");
            let mut sixteenths = self.dim / 16;
            ui.add(NumberBox::slider(&mut sixteenths, 1..=16).text("Head dim ÷ 16"))
                .on_hover_text("The head's dimensions over 16 (4: 64 dimensions, 32 pairs): the schemes split its pairs among the axes as Qwen2-VL (1/4, 3/8, 3/8) and Flux (1/8, 7/16, 7/16) do");
            self.dim = sixteenths * 16;
        });
        ui.horizontal(|ui| {
            ui.add(NumberBox::slider(&mut self.layout.frames, 1..=4).text("Frames"))
                .on_hover_text("Frames of the video (1: an image); each frame is one time step");
            ui.add(NumberBox::slider(&mut self.layout.rows, 1..=32).text("Rows"))
                .on_hover_text("Rows of patch tokens in each frame (after merging, as the model sees them)");
            ui.add(NumberBox::slider(&mut self.layout.cols, 1..=32).text("Columns"))
                .on_hover_text("Columns of patch tokens in each frame");
            ui.checkbox(&mut self.same_scale, "same colours for all")
                .on_hover_text("One colour scale for the three schemes, so that a colour is the same similarity in each (to compare them); untick to stretch each column's scale over its own patches (to see the detail of one, at the cost of comparing)");
        });
        if self.layout != before {
            // The chosen token stays the same kind of token where it can.
            let kept = match before.token(self.chosen.min(before.tokens() - 1)) {
                Token::Patch { frame, row, col } => self.layout.patch_index(
                    frame.min(self.layout.frames - 1),
                    row.min(self.layout.rows - 1),
                    col.min(self.layout.cols - 1),
                ),
                Token::Text {
                    after: false,
                    index,
                } => index.min(self.layout.tokens() - 1),
                Token::Text { after: true, index } => {
                    let first = self.layout.text_before + self.layout.patches();
                    (first + index).min(self.layout.tokens() - 1)
                }
            };
            self.chosen = kept;
        }
        self.chosen = self.chosen.min(self.layout.tokens() - 1);
    }
}

impl View for AxesView {
    fn export(&self, shared: &crate::ui::params::SharedParams) -> Option<crate::views::ViewExport> {
        let chosen = self.chosen.min(self.layout.tokens() - 1);
        let figure = crate::export::figure::axes::AxesFigure {
            layout: self.layout,
            dim: self.dim,
            theta: shared.base,
            chosen,
            same_scale: self.same_scale,
        };
        // The data: M-RoPE's angles for these tokens, [tokens, dim/2], as rope-axes computes
        // them from the ids get_rope_index gives.
        let params = Scheme::Mrope.params(&self.layout, self.dim, shared.base);
        Some(crate::views::ViewExport {
            figure: crate::export::figure::FigureSpec::Axes(figure),
            data: Some(crate::engine::TableSpec::RopeAxes(Box::new(params))),
            name: format!(
                "axes_mrope_{}x{}x{}_token{chosen}",
                self.layout.frames, self.layout.rows, self.layout.cols
            ),
        })
    }

    fn ui(&mut self, ui: &mut egui::Ui, ctx: &mut ViewContext<'_>) {
        self.controls(ui);
        let key = Key {
            layout: self.layout,
            dim: self.dim,
            theta: ctx.shared.base,
            chosen: self.chosen,
        };
        let current = self.maps.as_ref().is_some_and(|(k, _)| *k == key);
        if !current && !self.job.wants(&key) {
            self.job.request_remote(
                Some(ui.ctx()),
                key.clone(),
                format!("computing {} tokens' similarities", self.layout.tokens()),
                key.clone(),
            );
        }
        for update in self.job.poll(Some(ui.ctx())) {
            if let crate::jobs::Update::Done(done, _) = update {
                self.maps = Some(done);
            }
        }
        if let Some(pending) = self.job.pending() {
            ctx.status.pending(pending.clone());
            ui.ctx().request_repaint();
        }
        let Some((shown_key, maps)) = &self.maps else {
            ui.label("computing the similarities…");
            return;
        };
        let layout = shown_key.layout;
        let chosen = shown_key.chosen.min(layout.tokens() - 1);
        ui.label(describe_token(&layout, chosen, maps));
        if shown_key != &key {
            ui.label(
                egui::RichText::new(
                    "computing the new settings; the maps below are of the previous ones",
                )
                .color(ui.visuals().warn_fg_color),
            );
        }
        // One column per scheme, each scale from its least similar patch to 1 (the chosen
        // token), or one scale for all.
        let shared_low = maps
            .iter()
            .map(|m| m.lowest_patch(&layout))
            .fold(1.0f64, f64::min);
        let mut full = ui.available_rect_before_wrap();
        full.max.x = full.max.x.min(ui.max_rect().max.x);
        ui.allocate_rect(full, egui::Sense::hover());
        let gap = 16.0;
        let width = (full.width() - 2.0 * gap) / 3.0;
        let mut clicked = None;
        for (k, scheme_maps) in maps.iter().enumerate() {
            let rect = egui::Rect::from_min_size(
                full.min + egui::vec2(k as f32 * (width + gap), 0.0),
                egui::vec2(width, full.height()),
            );
            let mut column = ui.new_child(egui::UiBuilder::new().max_rect(rect));
            let low = if self.same_scale {
                shared_low
            } else {
                scheme_maps.lowest_patch(&layout)
            };
            let range = (low, 1.0);
            if let Some(token) = scheme_column(
                &mut column,
                scheme_maps,
                &layout,
                chosen,
                ctx.colormap,
                range,
                shown_key.dim,
            ) {
                clicked = Some(token);
            }
        }
        if let Some(token) = clicked {
            self.chosen = token;
        }
    }
}

/// What the chosen token is, and its ids under each scheme.
fn describe_token(layout: &TokenLayout, chosen: usize, maps: &[SchemeMaps]) -> String {
    let what = match layout.token(chosen) {
        Token::Text { after, index } => format!(
            "text token {index} {}",
            if after {
                "after the image"
            } else {
                "before the image"
            }
        ),
        Token::Patch { frame, row, col } => {
            format!("patch at frame {frame}, row {row}, column {col}")
        }
    };
    let ids: Vec<String> = maps
        .iter()
        .map(|m| {
            let id = m.ids.row(chosen);
            match m.scheme {
                Scheme::Flattened => format!("1D position {}", id[0]),
                _ => format!(
                    "{} (t {}, h {}, w {})",
                    match m.scheme {
                        Scheme::Mrope => "M-RoPE",
                        _ => "Flux",
                    },
                    id[0],
                    id[1],
                    id[2]
                ),
            }
        })
        .collect();
    format!(
        "Token {chosen}: {what} (click any token to choose another). Its positions: {}.",
        ids.join("; ")
    )
}

/// One scheme's column: its name, the pair strip, the text before, each frame's patches, the
/// text after. Returns the token clicked, if any.
fn scheme_column(
    ui: &mut egui::Ui,
    maps: &SchemeMaps,
    layout: &TokenLayout,
    chosen: usize,
    colormap: Colormap,
    range: (f64, f64),
    dim: usize,
) -> Option<usize> {
    ui.strong(maps.scheme.label());
    pair_strip(ui, maps, dim);
    let width = ui.available_width();
    crate::widgets::heatmap::horizontal_colorbar_ui(ui, colormap, range, width);
    ui.label(format!(
        "similarity to token {chosen} ({} at the left end: the least similar patch{})",
        crate::numbers::fixed(range.0, 3),
        if range.0 > 0.99 {
            "; every patch is within 1% of the chosen one"
        } else {
            ""
        }
    ))
    .on_hover_text("The colour of a token is its similarity to the chosen one, the mean over the pairs of cos(angle difference); 1 is the chosen token itself. Tokens less similar than the least similar patch are drawn as dark as it");
    let cell_for_text = 16.0f32.min(width / 16.0);
    let mut clicked = None;
    // The text before: one row of cells.
    let text_cells = |ui: &mut egui::Ui, first: usize, count: usize, label: &str| {
        if count == 0 {
            return None;
        }
        ui.label(label);
        token_cells(
            ui,
            (1, count),
            cell_for_text,
            |_, c| first + c,
            maps,
            chosen,
            colormap,
            range,
        )
    };
    if let Some(t) = text_cells(ui, 0, layout.text_before, "text before") {
        clicked = Some(t);
    }
    // The frames, each as large as the height left allows.
    let line = ui.text_style_height(&egui::TextStyle::Body) + ui.spacing().item_spacing.y;
    let reserve = if layout.text_after > 0 {
        line + cell_for_text + ui.spacing().item_spacing.y
    } else {
        0.0
    };
    let per_frame =
        ((ui.available_height() - reserve) / layout.frames as f32 - line - 2.0).max(20.0);
    let cell = (per_frame / layout.rows as f32)
        .min(width / layout.cols as f32)
        .clamp(2.0, 40.0);
    for frame in 0..layout.frames {
        ui.label(format!("frame {frame}"));
        if let Some(t) = token_cells(
            ui,
            (layout.rows, layout.cols),
            cell,
            |r, c| layout.patch_index(frame, r, c),
            maps,
            chosen,
            colormap,
            range,
        ) {
            clicked = Some(t);
        }
    }
    let first_after = layout.text_before + layout.patches();
    if let Some(t) = text_cells(ui, first_after, layout.text_after, "text after") {
        clicked = Some(t);
    }
    clicked
}

/// A `rows x cols` block of token cells coloured by similarity, the chosen token outlined, each
/// cell's token and value on hover; returns the token clicked.
#[allow(clippy::too_many_arguments)]
fn token_cells(
    ui: &mut egui::Ui,
    (rows, cols): (usize, usize),
    cell: f32,
    token_at: impl Fn(usize, usize) -> usize,
    maps: &SchemeMaps,
    chosen: usize,
    colormap: Colormap,
    range: (f64, f64),
) -> Option<usize> {
    let size = egui::vec2(cols as f32 * cell, rows as f32 * cell);
    let (rect, response) = ui.allocate_exact_size(size, egui::Sense::click());
    let painter = ui.painter_at(rect);
    let at = |r: usize, c: usize| {
        egui::Rect::from_min_size(
            rect.min + egui::vec2(c as f32 * cell, r as f32 * cell),
            egui::vec2(cell, cell),
        )
    };
    let mut outline = None;
    for r in 0..rows {
        for c in 0..cols {
            let token = token_at(r, c);
            let value = maps.similarity.get(token).copied();
            let cell_rect = if cell >= 6.0 {
                at(r, c).shrink(0.5)
            } else {
                at(r, c)
            };
            painter.rect_filled(cell_rect, 0.0, cell_color(colormap, range, value));
            if token == chosen {
                outline = Some(at(r, c));
            }
        }
    }
    if let Some(outline) = outline {
        painter.rect_stroke(
            outline,
            0.0,
            egui::Stroke::new(2.0, ui.visuals().strong_text_color()),
            egui::StrokeKind::Inside,
        );
    }
    let cell_under = |pos: egui::Pos2| {
        let offset = pos - rect.min;
        let (r, c) = ((offset.y / cell) as usize, (offset.x / cell) as usize);
        (r < rows && c < cols).then(|| token_at(r, c))
    };
    if let Some(pos) = response.hover_pos()
        && let Some(token) = cell_under(pos)
    {
        let id = maps.ids.row(token);
        response.clone().on_hover_text(format!(
            "token {token}: positions (t {}, h {}, w {})\nsimilarity to token {chosen}: {:.4}",
            id[0],
            id[1],
            id[2],
            maps.similarity.get(token).copied().unwrap_or(f64::NAN)
        ));
    }
    if response.clicked() {
        return response.interact_pointer_pos().and_then(cell_under);
    }
    None
}

/// Which pairs of the head each axis turns, as a strip of coloured runs with their sizes.
fn pair_strip(ui: &mut egui::Ui, maps: &SchemeMaps, dim: usize) {
    let pairs = dim / 2;
    let (rect, response) =
        ui.allocate_exact_size(egui::vec2(ui.available_width(), 14.0), egui::Sense::hover());
    let painter = ui.painter_at(rect);
    let unit = rect.width() / pairs.max(1) as f32;
    let mut said = Vec::new();
    for &(axis, first, last) in &maps.runs {
        let (name, colour) = match maps.scheme {
            Scheme::Flattened => ("every axis, the same position", egui::Color32::GRAY),
            _ => AXES[axis.min(2)],
        };
        let run = egui::Rect::from_min_max(
            egui::pos2(rect.left() + first as f32 * unit, rect.top()),
            egui::pos2(rect.left() + (last + 1) as f32 * unit, rect.bottom()),
        );
        painter.rect_filled(run.shrink2(egui::vec2(0.5, 0.0)), 2.0, colour);
        said.push(format!("pairs {first}-{last}: {name}"));
    }
    response.on_hover_text(format!(
        "The head's {pairs} pairs, fastest first, coloured by the axis whose position turns them: {}",
        said.join("; ")
    ));
    let legend = maps
        .axis_sizes()
        .unwrap_or_else(|| "every pair turns with the token's place in the sequence".to_owned());
    ui.label(legend);
}

/// The view in the picker: its name, first hint, explanation and the shared controls it leaves
/// unused.
pub const INFO: crate::views::ViewInfo = crate::views::ViewInfo {
    label: "RoPE over time, height, width",
    hint: "Click a token · change the image's size or add frames · hover a token for its positions",
    explanation: crate::widgets::explainer::Explanation {
        formula: "Each pair i of a head turns by position × θ^(−2i/d). M-RoPE (Qwen2-VL) gives every token a time, height and width \
              position and turns its first quarter of pairs by time, the next 3/8 by height, the last 3/8 by width; per-axis RoPE (Flux) \
              gives each axis a RoPE of its own width. Colour: the mean over the pairs of cos(angle of the chosen token − angle of this token).",
        reading: "Three columns, one per scheme, over the same tokens: text before, each frame of the image, text after. \
              The chosen token is outlined; the colour bar above each column says what a colour means (one scale for all \
              three unless \"same colours for all\" is unticked). A token is bright where its positions are close to the chosen \
              one's on the axes that turn the fast pairs: an axis that turns only slow pairs barely changes the colour. The \
              strip at the top of each column shows which pairs each axis turns, fastest on the left.",
        convention: "Position ids as transformers' Qwen2-VL get_rope_index makes them (text counts on all three axes at once; an image \
                 starts at the next position; text after resumes past the image's larger side) and as Flux and diffusers make them \
                 (text at 0, patches at frame, row, column). Base from the side panel; sections 1/4, 3/8, 3/8 (Qwen2-VL's 16, 24, 24); \
                 Flux's widths 1/8, 7/16, 7/16 (its 16, 56, 56).",
        try_these: &[
            "Choose a patch under 1D RoPE: its neighbours left and right are bright, the ones above and below are a whole row of tokens away and darker.",
            "The same patch under M-RoPE: the whole image is nearly one colour, and only the text is dark. Height turns the middle pairs \
             and width the slowest, so a step across the image barely turns anything (every patch within 1% of the chosen one at the defaults); \
             untick \"same colours for all\" to stretch M-RoPE's scale: a step down (height) still costs more than a step across (width).",
            "The same patch under Flux: height and width each have a RoPE of the same width, so the neighbours above and below are exactly as close as those beside it.",
            "Add a second frame: under M-RoPE the same patch in the next frame is one time step away; under 1D RoPE it is a whole frame.",
            "Choose a text token: under Flux every text token sits at 0 on every axis, so all text looks the same to it.",
        ],
    },
    unused: unused_controls,
};

/// Why this view does not use a shared control, or `None` where it does (its control is then
/// disabled with this as the tooltip).
fn unused_controls(param: crate::ui::params::SharedParam) -> Option<&'static str> {
    use crate::ui::params::SharedParam::*;
    match param {
        Base => None,
        _ => Some(
            "This view sets its tokens and head size itself; it takes the base from the side panel",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The maps of the view's defaults give the same through a Web Worker's parcels.
    #[test]
    fn the_axes_job_gives_the_same_through_parcels() {
        let view = AxesView::default();
        crate::jobs::remote::same_through_parcels(|| Key {
            layout: view.layout,
            dim: view.dim,
            theta: 10_000.0,
            chosen: view.chosen,
        })
        .expect("the same maps");
    }
}
