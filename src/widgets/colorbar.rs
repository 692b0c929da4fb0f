//! Colour bars beside and below heatmaps, and the numbers on their ticks (and on heatmaps'
//! axes).

use crate::colormap::Colormap;

/// A colour bar label: three decimals, or three significant digits as `m × 10ⁿ` for values too
/// small or large for that; a value that is zero but for rounding, next to the bar's `span`,
/// reads 0.
pub fn tick_text(value: f64, span: f64) -> String {
    let magnitude = value.abs();
    if magnitude <= span.abs() * 1e-4 {
        "0".to_owned()
    } else if magnitude != 0.0 && !(0.01..1e5).contains(&magnitude) {
        crate::numbers::scientific(value, 3)
    } else if magnitude >= 100.0 {
        crate::numbers::fixed(value, 1)
    } else {
        crate::numbers::fixed(value, 3)
    }
}

/// A vertical colour bar with the range it spans.
pub fn colorbar_ui(ui: &mut egui::Ui, colormap: Colormap, range: (f64, f64), height: f32) {
    let (rect, _) = ui.allocate_exact_size(egui::vec2(18.0, height), egui::Sense::hover());
    let painter = ui.painter_at(rect.expand(2.0));
    let steps = 64;
    for k in 0..steps {
        let t0 = k as f32 / steps as f32;
        let t1 = (k + 1) as f32 / steps as f32;
        let band = egui::Rect::from_min_max(
            egui::pos2(rect.left(), rect.bottom() - t1 * rect.height()),
            egui::pos2(rect.right(), rect.bottom() - t0 * rect.height()),
        );
        painter.rect_filled(band, 0.0, colormap.color(f64::from(t0 + t1) / 2.0));
    }
    ui.vertical(|ui| {
        ui.label(tick_text(range.1, range.1 - range.0));
        ui.add_space((height - 3.0 * 18.0).max(0.0) / 2.0);
        ui.label(tick_text((range.0 + range.1) / 2.0, range.1 - range.0));
        ui.add_space((height - 3.0 * 18.0).max(0.0) / 2.0);
        ui.label(tick_text(range.0, range.1 - range.0));
    });
}

/// A horizontal colour bar `width` wide with its two ends and middle labelled below it, in the
/// body's type (so that presentation mode enlarges it), for pictures laid out in columns.
pub fn horizontal_colorbar_ui(
    ui: &mut egui::Ui,
    colormap: Colormap,
    range: (f64, f64),
    width: f32,
) {
    let (rect, _) = ui.allocate_exact_size(egui::vec2(width, 14.0), egui::Sense::hover());
    let painter = ui.painter_at(rect);
    let steps = 64;
    for k in 0..steps {
        let t0 = k as f32 / steps as f32;
        let t1 = (k + 1) as f32 / steps as f32;
        let band = egui::Rect::from_min_max(
            egui::pos2(rect.left() + t0 * rect.width(), rect.top()),
            egui::pos2(rect.left() + t1 * rect.width() + 0.5, rect.bottom()),
        );
        painter.rect_filled(band, 0.0, colormap.color(f64::from(t0 + t1) / 2.0));
    }
    let span = range.1 - range.0;
    let (labels, _) = ui.allocate_exact_size(
        egui::vec2(width, ui.text_style_height(&egui::TextStyle::Body)),
        egui::Sense::hover(),
    );
    let font = egui::TextStyle::Body.resolve(ui.style());
    let colour = ui.visuals().text_color();
    for (value, align, x) in [
        (range.0, egui::Align2::LEFT_TOP, labels.left()),
        (
            (range.0 + range.1) / 2.0,
            egui::Align2::CENTER_TOP,
            labels.center().x,
        ),
        (range.1, egui::Align2::RIGHT_TOP, labels.right()),
    ] {
        ui.painter().text(
            egui::pos2(x, labels.top()),
            align,
            tick_text(value, span),
            font.clone(),
            colour,
        );
    }
}
