//! The spectrum of RoPE's frequencies against the context length.

use egui_plot::{HLine, Line, Plot, PlotPoints, Points};

use crate::encoding::rope::inv_freq;

/// `θ_i` and the wavelength `2π/θ_i` of every pair on log axes, with the context's length: a
/// pair whose wavelength is shorter than the context turns at least once inside it.
pub(super) fn spectrum_ui(
    ui: &mut egui::Ui,
    dim: usize,
    base: f64,
    seq: usize,
    drawn: &[(usize, egui::Color32)],
    height: f32,
) {
    let Ok(theta) = inv_freq(dim, base) else {
        return;
    };
    let wavelengths: Vec<f64> = theta.iter().map(|t| std::f64::consts::TAU / t).collect();
    let turning = wavelengths.iter().filter(|&&w| w <= seq as f64).count();
    ui.label(format!(
        "{turning} of {} pairs turn at least once within the {seq} positions of the context",
        theta.len()
    ))
    .on_hover_text("A pair turns once in its wavelength 2π/θ_i positions");
    ui.label(
        egui::RichText::new(
            "line: θ_i (rad / position) · dots: wavelength 2π/θ_i, filled when it fits in the context · horizontal line: sequence length · large dots: the drawn pairs",
        )
        .small()
        .weak(),
    );
    let log_points = |values: &mut dyn Iterator<Item = (usize, f64)>| -> Vec<[f64; 2]> {
        values.map(|(i, v)| [i as f64, v.log10()]).collect()
    };
    let theta_points = log_points(&mut theta.iter().copied().enumerate());
    let full_turn: Vec<[f64; 2]> = log_points(
        &mut wavelengths
            .iter()
            .copied()
            .enumerate()
            .filter(|(_, w)| *w <= seq as f64),
    );
    let part_turn: Vec<[f64; 2]> = log_points(
        &mut wavelengths
            .iter()
            .copied()
            .enumerate()
            .filter(|(_, w)| *w > seq as f64),
    );
    Plot::new("rope_spectrum")
        .height(height)
        .x_axis_label("pair i")
        .y_axis_label("θ_i and 2π/θ_i")
        .x_grid_spacer(crate::widgets::layout::nice_ticks)
        .x_axis_formatter(|mark, _| crate::widgets::layout::tick_label(mark))
        .y_grid_spacer(crate::widgets::layout::decade_ticks)
        .y_axis_formatter(|mark, _| crate::widgets::layout::power_label(10, mark))
        .label_formatter(|hover| match hover {
            egui_plot::HoverPosition::NearDataPoint {
                plot_name,
                position,
                ..
            } => Some(format!(
                "{plot_name}\npair {:.0}: {:.4e}",
                position.x,
                10f64.powf(position.y)
            )),
            egui_plot::HoverPosition::Elsewhere { .. } => None,
        })
        .show(ui, |plot_ui| {
            plot_ui.line(Line::new(
                "θ_i (rad / position)",
                PlotPoints::from(theta_points),
            ));
            plot_ui.points(
                Points::new(
                    "wavelength 2π/θ_i: turns within the context",
                    PlotPoints::from(full_turn),
                )
                .radius(2.5),
            );
            plot_ui.points(
                Points::new(
                    "wavelength 2π/θ_i: less than one turn",
                    PlotPoints::from(part_turn),
                )
                .radius(2.5)
                .filled(false),
            );
            plot_ui.hline(HLine::new(
                format!("sequence length {seq}"),
                (seq as f64).log10(),
            ));
            for &(pair, color) in drawn {
                plot_ui.points(
                    Points::new(
                        format!("drawn pair {pair}"),
                        PlotPoints::from(vec![[pair as f64, wavelengths[pair].log10()]]),
                    )
                    .radius(5.0)
                    .color(color),
                );
            }
        });
}
