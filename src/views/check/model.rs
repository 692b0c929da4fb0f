//! A model file opened in the Check view: each layer type's RoPE as the wavelength of every
//! pair (solid) beside the unscaled RoPE of the same base (dashed), the context as a line, and
//! what `poslab config` says of the file (each setting with its field, the warnings).

use egui_plot::{HLine, Line, PlotPoints};

use crate::table_args::model_file::ModelFile;

fn series(k: usize, n: usize) -> egui::Color32 {
    let [r, g, b] = crate::scene::series_color(k, n);
    egui::Color32::from_rgb(r, g, b)
}

fn log10(v: f64) -> f64 {
    v.max(f64::MIN_POSITIVE).log10()
}

/// Draws the model file.
pub(super) fn model_ui(ui: &mut egui::Ui, model: &ModelFile) {
    ui.separator();
    let name = model.path.file_name().map_or_else(
        || model.path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    ui.horizontal_wrapped(|ui| {
        ui.label(egui::RichText::new(name).strong());
        ui.label(match model.layers.len() {
            1 => "one RoPE for every layer".to_owned(),
            n => format!("{n} layer types, each its own RoPE"),
        });
        if model.warnings > 0 {
            ui.colored_label(
                ui.visuals().warn_fg_color,
                format!(
                    "{} warning{} (below)",
                    model.warnings,
                    if model.warnings == 1 { "" } else { "s" }
                ),
            );
        }
    });
    let n = model.layers.len();
    let mut entries: Vec<(egui::Color32, String)> = Vec::new();
    for (k, layer) in model.layers.iter().enumerate() {
        entries.push((
            series(k, n),
            if layer.is_scaled {
                format!("{} (solid: as run; dashed: unscaled)", layer.name)
            } else {
                format!("{} (unscaled)", layer.name)
            },
        ));
    }
    if let Some(context) = model.context {
        entries.push((
            ui.visuals().weak_text_color(),
            format!(
                "context {} (dotted)",
                crate::numbers::thousands(context as u64)
            ),
        ));
    }
    let legend_height = crate::widgets::layout::legend_row(ui, &entries);
    let height = (ui.available_height() * 0.55).clamp(160.0, 480.0) - legend_height;
    let context_color = ui.visuals().weak_text_color();
    let response =
        crate::widgets::layout::wavelength_plot(("check_model_wavelengths", model.path.clone()))
            .height(height)
            .show(ui, |plot_ui| {
                if let Some(context) = model.context {
                    plot_ui.hline(
                        HLine::new(format!("context {context}"), log10(context as f64))
                            .color(context_color)
                            .style(egui_plot::LineStyle::dotted_dense()),
                    );
                }
                for (k, layer) in model.layers.iter().enumerate() {
                    let points = |values: &[f64]| -> Vec<[f64; 2]> {
                        values
                            .iter()
                            .enumerate()
                            .map(|(i, w)| [i as f64, log10(*w)])
                            .collect()
                    };
                    if layer.is_scaled {
                        plot_ui.line(
                            Line::new(
                                format!("{} unscaled", layer.name),
                                PlotPoints::from(points(&layer.unscaled)),
                            )
                            .color(series(k, n))
                            .style(egui_plot::LineStyle::dashed_loose())
                            .width(1.0),
                        );
                    }
                    plot_ui.line(
                        Line::new(layer.name.clone(), PlotPoints::from(points(&layer.scaled)))
                            .color(series(k, n))
                            .width(2.0),
                    );
                }
                plot_ui.pointer_coordinate()
            });
    crate::widgets::layout::record_plot(ui.ctx(), "check_model_wavelengths", &response.transform);
    if response.response.hovered()
        && let Some(pointer) = response.inner
    {
        let most = model
            .layers
            .iter()
            .map(|l| l.scaled.len())
            .max()
            .unwrap_or(0);
        if most > 0 {
            let pair = (pointer.x.round().max(0.0) as usize).min(most - 1);
            let mut text = format!("pair {pair}");
            for layer in &model.layers {
                let (Some(w), Some(u)) = (layer.scaled.get(pair), layer.unscaled.get(pair)) else {
                    continue;
                };
                text.push_str(&format!("\n{}: wavelength {}", layer.name, shown(*w)));
                if layer.is_scaled {
                    text.push_str(&format!(" (unscaled {}, x{:.3})", shown(*u), w / u));
                }
                if let Some(context) = model.context {
                    text.push_str(&format!(
                        "; {:.3} turns over the context",
                        context as f64 / w
                    ));
                }
            }
            response.response.on_hover_text_at_pointer(text);
        }
    }
    egui::ScrollArea::vertical()
        .id_salt("check_model_text")
        .show(ui, |ui| {
            for line in model.text.lines() {
                let text = egui::RichText::new(line).monospace();
                if line.starts_with("warning:") {
                    ui.colored_label(ui.visuals().warn_fg_color, text);
                } else {
                    ui.label(text);
                }
            }
        });
}

/// A wavelength in positions, to four significant digits.
fn shown(w: f64) -> String {
    if w >= 1e5 {
        format!("{w:.3e}")
    } else {
        format!("{w:.4}")
    }
}
