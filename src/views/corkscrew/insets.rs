//! The per-pair insets beside the corkscrew: each drawn pair's rotated query and key in its
//! plane, with their angle and their share of the score.

use super::CorkscrewView;
use crate::encoding::rope::PairScore;
use crate::scene::corkscrew::CorkscrewScene;

impl CorkscrewView {
    pub(super) fn insets_ui(
        &self,
        ui: &mut egui::Ui,
        scene: Option<&CorkscrewScene>,
        colors: &[egui::Color32],
    ) {
        let (Some(scores), Some(scene)) = (&self.shown_scores, scene) else {
            return;
        };
        let total: f64 = scores.iter().map(|s| s.score).sum();
        ui.label(
            egui::RichText::new(format!(
                "q_m · k_n = {total:.9}\nm = {}, n = {}, m − n = {}",
                self.query_position,
                self.key_position,
                self.query_position as i64 - self.key_position as i64
            ))
            .monospace()
            .strong(),
        )
        .on_hover_text(
            "The full score: the sum of every pair's term below, all pairs included, drawn or not",
        );
        let max_radius = scores
            .iter()
            .map(|s| s.query.0.hypot(s.query.1).max(s.key.0.hypot(s.key.1)))
            .fold(0.0, f64::max)
            .max(1e-12);
        // As large as lets every inset show without scrolling (a class cannot scroll), down to
        // half size; beyond that they scroll.
        let count = scene.helices.len();
        let scale = inset_scale(count, ui.available_size(), ui.spacing().item_spacing);
        egui::ScrollArea::vertical()
            .id_salt("corkscrew_insets")
            .show(ui, |ui| {
                ui.horizontal_wrapped(|ui| {
                    for (index, helix) in scene.helices.iter().enumerate() {
                        // A scene of a previous, wider head may hold pairs the scores lack.
                        let (Some(score), Some(&color)) =
                            (scores.get(helix.pair), colors.get(index))
                        else {
                            continue;
                        };
                        inset_ui(ui, helix.pair, helix.theta, score, max_radius, color, scale);
                    }
                });
            });
    }
}

/// An inset's size at scale 1.
const INSET_SIZE: egui::Vec2 = egui::vec2(118.0, 150.0);

/// The largest scale, from 1 down to 0.5, at which `count` insets wrapped in rows fill no
/// more than `room`.
fn inset_scale(count: usize, room: egui::Vec2, spacing: egui::Vec2) -> f32 {
    let fits = |scale: f32| {
        let size = INSET_SIZE * scale + spacing;
        let across = ((room.x + spacing.x) / size.x).floor().max(1.0) as usize;
        count.div_ceil(across) as f32 * size.y <= room.y + spacing.y
    };
    (0..=10)
        .map(|k| 1.0 - 0.05 * k as f32)
        .find(|&scale| fits(scale))
        .unwrap_or(0.5)
}

/// One pair's unit circle: the query rotated to `m` (filled), the key rotated to `n` (ring),
/// and their product, this pair's term of the score; `scale` times the usual size.
fn inset_ui(
    ui: &mut egui::Ui,
    pair: usize,
    theta: f64,
    score: &PairScore,
    max_radius: f64,
    color: egui::Color32,
    scale: f32,
) {
    let size = INSET_SIZE * scale;
    let (rect, response) = ui.allocate_exact_size(size, egui::Sense::hover());
    let painter = ui.painter_at(rect);
    let visuals = ui.visuals();
    painter.rect_filled(rect, 4.0, visuals.faint_bg_color);
    let center = rect.center_top() + egui::vec2(0.0, 62.0 * scale);
    let radius = 48.0 * scale;
    let to_screen = |(x, y): (f64, f64)| {
        center + egui::vec2(x as f32, -y as f32) * (radius / max_radius as f32)
    };
    painter.circle_stroke(center, radius, (1.0, visuals.weak_text_color()));
    painter.line_segment(
        [
            center - egui::vec2(radius, 0.0),
            center + egui::vec2(radius, 0.0),
        ],
        (0.5, visuals.weak_text_color()),
    );
    let key = to_screen(score.key);
    let query = to_screen(score.query);
    painter.line_segment([center, key], (1.5, visuals.strong_text_color()));
    painter.circle_stroke(key, 4.0 * scale, (1.5, visuals.strong_text_color()));
    painter.line_segment([center, query], (2.5, color));
    painter.circle_filled(query, 4.0 * scale, color);
    let text_color = visuals.text_color();
    painter.text(
        rect.left_top() + egui::vec2(4.0, 2.0),
        egui::Align2::LEFT_TOP,
        format!("pair {pair}"),
        egui::FontId::proportional(12.0 * scale.max(0.8)),
        color,
    );
    painter.text(
        rect.center_bottom() - egui::vec2(0.0, 4.0),
        egui::Align2::CENTER_BOTTOM,
        format!("{:+.6}", score.score),
        egui::FontId::monospace(12.0 * scale.max(0.8)),
        text_color,
    );
    response.on_hover_text(format!(
        "pair {pair}: θ = {theta:.6e} rad per position, wavelength {:.1} positions\nquery at m: ({:+.5}, {:+.5})\nkey at n: ({:+.5}, {:+.5})\nterm of the score: {:+.9}",
        std::f64::consts::TAU / theta,
        score.query.0,
        score.query.1,
        score.key.0,
        score.key.1,
        score.score
    ));
}
