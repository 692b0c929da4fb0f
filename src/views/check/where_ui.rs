//! Where a file differs, drawn: the elements outside the tolerance as a list (each click
//! zooms every picture to it and outlines it), the diagnosis, and the largest error of each
//! row and column on a log axis beside what the tolerance allows (and, for sin/cos tables,
//! what float32 angles allow, which grows with position).

use egui_plot::{Line, Plot, PlotPoints};

use super::Envelopes;
use super::outcome::CurveSet;
use crate::check::Located;

/// Rows and columns shown around a cell zoomed to, each side.
const ZOOM_MARGIN: f64 = 12.0;

/// The summary, the diagnosis and the list of the worst elements; a click on one zooms the
/// pictures of `link` to it and returns its index (to outline, and for a 3-D table, to show
/// its slice).
pub(super) fn located_ui(
    ui: &mut egui::Ui,
    located: &Located,
    focused: Option<&Vec<usize>>,
    link: egui::Id,
) -> Option<Vec<usize>> {
    let mut clicked = None;
    let mut summary = format!("{} outside the tolerance", located.elements());
    if let Some(spread) = located.spread() {
        summary.push_str(&format!(
            ", {spread} (rows {} to {})",
            located.first_row, located.last_row
        ));
    }
    ui.label(egui::RichText::new(summary).strong());
    if let Some(diagnosis) = &located.diagnosis {
        ui.label(format!("Diagnosis: {}", diagnosis.describe(located)));
    }
    ui.label(egui::RichText::new("The worst (click one to zoom every picture to it):").small());
    egui::ScrollArea::vertical()
        .id_salt("check_outside_list")
        .max_height(110.0)
        .show(ui, |ui| {
            for cell in &located.worst {
                let ulps = cell
                    .ulps
                    .map(|u| format!(", {u:.3e} ulp"))
                    .unwrap_or_default();
                let text = format!(
                    "{:?}  reference {}  file {}  |error| {:.3e}{ulps}",
                    cell.index, cell.reference, cell.loaded, cell.error
                );
                let selected = focused == Some(&cell.index);
                let response = ui
                    .selectable_label(selected, egui::RichText::new(text).monospace())
                    .on_hover_text("Zoom the reference, the file, the difference and the map of elements outside to this element, outlined");
                if response.clicked() {
                    let n = cell.index.len();
                    let (row, col) = match n {
                        0 => (0, 0),
                        1 => (0, cell.index[0]),
                        _ => (cell.index[n - 2], cell.index[n - 1]),
                    };
                    let (row, col) = (row as f64, col as f64);
                    crate::widgets::heatmap::request_zoom(
                        ui.ctx(),
                        link,
                        (row - ZOOM_MARGIN, row + 1.0 + ZOOM_MARGIN),
                        (col - ZOOM_MARGIN, col + 1.0 + ZOOM_MARGIN),
                    );
                    clicked = Some(cell.index.clone());
                }
            }
            if located.count > located.worst.len() {
                ui.label(
                    egui::RichText::new(format!(
                        "… and {} more (poslab check --show N lists more)",
                        located.count - located.worst.len()
                    ))
                    .small()
                    .weak(),
                );
            }
        });
    clicked
}

/// The largest |error| of each row and of each column against what is allowed, log scale
/// (curves made with the outcome, off the UI thread).
pub(super) fn error_curves_ui(ui: &mut egui::Ui, envelopes: &Envelopes, height: f32) {
    let width = (ui.available_width() - 8.0) / 2.0;
    ui.horizontal_top(|ui| {
        ui.allocate_ui(egui::vec2(width, height), |ui| {
            curves_plot(ui, "check_error_by_row", "row (position)", &envelopes.rows);
        });
        ui.allocate_ui(egui::vec2(width, height), |ui| {
            curves_plot(ui, "check_error_by_column", "column", &envelopes.columns);
        });
    });
}

/// One plot of log10 |error| against index, with the allowed envelope and, where there is
/// one, the float32 angles' envelope.
fn curves_plot(ui: &mut egui::Ui, id: &str, axis: &str, curves: &CurveSet) {
    let response = Plot::new(id)
        .height(ui.available_height())
        .width(ui.available_width())
        .legend(crate::widgets::layout::legend().position(egui_plot::Corner::RightBottom))
        .x_axis_label(axis)
        .x_grid_spacer(crate::widgets::layout::nice_ticks)
        .x_axis_formatter(|mark, _| crate::widgets::layout::tick_label(mark))
        .y_axis_label("largest |error| (log)")
        .y_grid_spacer(crate::widgets::layout::decade_ticks)
        .y_axis_formatter(|mark, _| crate::widgets::layout::power_label(10, mark))
        .allow_scroll(false)
        .show(ui, |plot_ui| {
            plot_ui.line(
                Line::new(
                    "largest |file − reference|",
                    PlotPoints::from(curves.errors.clone()),
                )
                .color(egui::Color32::from_rgb(230, 90, 80))
                .width(1.5),
            );
            plot_ui.line(
                Line::new(
                    "allowed by the tolerance",
                    PlotPoints::from(curves.allowed.clone()),
                )
                .color(egui::Color32::from_rgb(150, 150, 150))
                .style(egui_plot::LineStyle::dashed_dense()),
            );
            if let Some(angles) = &curves.angles {
                plot_ui.line(
                    Line::new(
                        "float32 angles: ½ ulp of p·ω (fastest pair)",
                        PlotPoints::from(angles.clone()),
                    )
                    .color(egui::Color32::from_rgb(90, 160, 230))
                    .style(egui_plot::LineStyle::dashed_loose()),
                );
            }
        });
    crate::widgets::layout::record_plot(ui.ctx(), id, &response.transform);
}
