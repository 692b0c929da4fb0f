//! The pairing diagram: which dimensions each pair rotates in both RoPE layouts.

use crate::encoding::PairLayout;

/// Which dimensions each pair rotates, for both layouts; the row of the layout in use is
/// highlighted and a click on the other switches.
pub(super) fn pairing_ui(
    ui: &mut egui::Ui,
    layout: &mut PairLayout,
    dim: usize,
    pair_colors: &[(usize, egui::Color32)],
) {
    const MAX_SHOWN: usize = 16;
    let shown_dim = dim.min(MAX_SHOWN);
    if dim > MAX_SHOWN {
        ui.label(format!(
            "Shown for d = {MAX_SHOWN}; with d = {dim}, pair i is (2i, 2i+1) interleaved, (i, i + {}) half.",
            dim / 2
        ));
    }
    for candidate in [PairLayout::Interleaved, PairLayout::Half] {
        let title = match candidate {
            PairLayout::Interleaved => "interleaved (2i, 2i+1)",
            PairLayout::Half => "half (i, i + d/2)",
        };
        let width = ui.available_width().max(200.0);
        let cell = ((width - 8.0) / shown_dim as f32).min(22.0);
        let (rect, response) =
            ui.allocate_exact_size(egui::vec2(width, cell + 46.0), egui::Sense::click());
        let painter = ui.painter_at(rect);
        let visuals = ui.visuals();
        let active = *layout == candidate;
        if active {
            painter.rect_stroke(
                rect.shrink(1.0),
                4.0,
                (1.5, visuals.selection.stroke.color),
                egui::StrokeKind::Inside,
            );
        }
        painter.text(
            rect.left_top() + egui::vec2(6.0, 2.0),
            egui::Align2::LEFT_TOP,
            title,
            egui::FontId::proportional(12.0),
            visuals.text_color(),
        );
        let top = rect.top() + 18.0;
        let left = rect.left() + 4.0;
        let cell_rect = |d: usize| {
            egui::Rect::from_min_size(
                egui::pos2(left + d as f32 * cell, top),
                egui::vec2(cell - 2.0, cell),
            )
        };
        let color_of = |pair: usize| {
            // Colour by the pair drawn in the 3D view when the diagram shows the real width.
            pair_colors
                .iter()
                .find(|(p, _)| *p == pair && dim <= MAX_SHOWN)
                .map(|(_, c)| *c)
                .unwrap_or(visuals.widgets.inactive.bg_fill)
        };
        for i in 0..shown_dim / 2 {
            let (a, b) = candidate.pair(i, shown_dim);
            let color = color_of(i);
            for d in [a, b] {
                painter.rect_filled(cell_rect(d), 2.0, color);
            }
            // An arc under the two cells joins the pair.
            let (pa, pb) = (cell_rect(a).center_bottom(), cell_rect(b).center_bottom());
            let depth = 4.0 + (pb.x - pa.x).abs() * 0.12;
            let mid = egui::pos2((pa.x + pb.x) / 2.0, pa.y + depth.min(24.0));
            painter.add(egui::epaint::QuadraticBezierShape::from_points_stroke(
                [pa, mid, pb],
                false,
                egui::Color32::TRANSPARENT,
                (1.0, visuals.text_color()),
            ));
        }
        if cell >= 14.0 {
            for d in 0..shown_dim {
                painter.text(
                    cell_rect(d).center(),
                    egui::Align2::CENTER_CENTER,
                    d.to_string(),
                    egui::FontId::monospace((cell * 0.62).clamp(9.0, 14.0)),
                    visuals.strong_text_color(),
                );
            }
        }
        let response = response.on_hover_text(match candidate {
            PairLayout::Interleaved => {
                "Meta's Llama (apply_rotary_emb, complex pairs), RoFormer. Click to use."
            }
            PairLayout::Half => "Hugging Face rotate_half, GPT-NeoX. Click to use.",
        });
        if response.clicked() {
            *layout = candidate;
        }
    }
}
