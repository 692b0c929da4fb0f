//! Parameters shared by every view (they stay in step when switching views), their controls,
//! and presets for real models.

use serde::{Deserialize, Serialize};

use crate::encoding::sinusoidal::{SinusoidalLayout, SinusoidalParams, Spacing};

/// What the sliders edit; saved between runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SharedParams {
    pub dim: usize,
    pub base: f64,
    pub heads: usize,
    pub seq: usize,
    pub start: u64,
    pub interleaved: bool,
    pub vaswani: bool,
}

impl Default for SharedParams {
    fn default() -> Self {
        Self {
            dim: 128,
            base: 10_000.0,
            heads: 8,
            seq: 512,
            start: 0,
            interleaved: true,
            vaswani: true,
        }
    }
}

impl SharedParams {
    pub fn sinusoidal(&self) -> SinusoidalParams {
        SinusoidalParams {
            seq: self.seq,
            dim: self.dim,
            base: self.base,
            start: self.start,
            layout: if self.interleaved {
                SinusoidalLayout::Interleaved
            } else {
                SinusoidalLayout::Split
            },
            spacing: if self.vaswani {
                Spacing::Vaswani
            } else {
                Spacing::T2t
            },
        }
    }
}

/// A real model's positional settings.
pub struct Preset {
    pub name: &'static str,
    pub apply: fn(&mut SharedParams),
}

pub const PRESETS: [Preset; 6] = [
    Preset {
        name: "Transformer-base (d 512)",
        apply: |p| {
            p.dim = 512;
            p.base = 10_000.0;
            p.seq = 512;
        },
    },
    Preset {
        name: "BERT-base (d 768, 512 positions)",
        apply: |p| {
            p.dim = 768;
            p.base = 10_000.0;
            p.seq = 512;
        },
    },
    Preset {
        name: "Llama-2 (head dim 128, base 10000)",
        apply: |p| {
            p.dim = 128;
            p.base = 10_000.0;
            p.seq = 4096;
            p.heads = 32;
        },
    },
    Preset {
        name: "Llama-3 (head dim 128, base 500000)",
        apply: |p| {
            p.dim = 128;
            p.base = 500_000.0;
            p.seq = 8192;
            p.heads = 32;
        },
    },
    Preset {
        name: "BLOOM / MPT ALiBi (32 heads)",
        apply: |p| {
            p.heads = 32;
            p.seq = 2048;
        },
    },
    Preset {
        name: "ViT-B/16 at 224 px (14 x 14 patches, d 768)",
        apply: |p| {
            p.dim = 768;
            p.seq = 196;
        },
    },
];

/// The shared controls; returns whether any parameter changed.
pub fn shared_params_ui(ui: &mut egui::Ui, params: &mut SharedParams) -> bool {
    let before = *params;
    let defaults = SharedParams::default();
    egui::ComboBox::from_label("Preset")
        .selected_text("Choose a model…")
        .show_ui(ui, |ui| {
            for preset in &PRESETS {
                if ui.selectable_label(false, preset.name).clicked() {
                    (preset.apply)(params);
                }
            }
        });
    ui.separator();
    slider_row(
        ui,
        "Dimension",
        "Width of the encoding: the number of columns, two per frequency.",
        || defaults.dim,
        &mut params.dim,
        |ui, v| {
            ui.add(
                egui::Slider::new(v, 2..=4096)
                    .step_by(2.0)
                    .text("Dimension"),
            )
        },
    );
    slider_row(
        ui,
        "Base",
        "Wavelength scale: frequencies run from 1 down to about 1/base (10000 in the original transformer, 500000 in Llama 3).",
        || defaults.base,
        &mut params.base,
        |ui, v| {
            ui.add(
                egui::Slider::new(v, 2.0..=1e7)
                    .logarithmic(true)
                    .text("Base"),
            )
        },
    );
    slider_row(
        ui,
        "Sequence length",
        "Number of positions (rows of the table).",
        || defaults.seq,
        &mut params.seq,
        |ui, v| {
            ui.add(
                egui::Slider::new(v, 1..=1_048_576)
                    .logarithmic(true)
                    .text("Sequence length"),
            )
        },
    );
    slider_row(
        ui,
        "Start position",
        "The first row's position: rows are start, start + 1, ...",
        || defaults.start,
        &mut params.start,
        |ui, v| {
            ui.add(
                egui::Slider::new(v, 0..=1_000_000)
                    .logarithmic(true)
                    .text("Start position"),
            )
        },
    );
    slider_row(
        ui,
        "Heads",
        "Attention heads (ALiBi gives each its own slope).",
        || defaults.heads,
        &mut params.heads,
        |ui, v| ui.add(egui::Slider::new(v, 1..=128).text("Heads")),
    );
    ui.horizontal(|ui| {
        ui.radio_value(&mut params.interleaved, true, "interleaved")
            .on_hover_text("sin in column 2i, cos in 2i+1 (Vaswani et al.)");
        ui.radio_value(&mut params.interleaved, false, "split")
            .on_hover_text("all sines, then all cosines (tensor2tensor)");
    });
    ui.horizontal(|ui| {
        ui.radio_value(&mut params.vaswani, true, "Vaswani spacing")
            .on_hover_text("w_i = base^(-2i/d): the last frequency stops short of 1/base");
        ui.radio_value(&mut params.vaswani, false, "t2t spacing")
            .on_hover_text("w_i = base^(-i/(d/2-1)): the last frequency is exactly 1/base");
    });
    // An odd dimension typed into the number field has no sin/cos pairs.
    params.dim = (params.dim / 2 * 2).max(2);
    *params != before
}

/// A labelled slider with a tooltip and a reset button.
fn slider_row<T: PartialEq + Copy>(
    ui: &mut egui::Ui,
    label: &str,
    tooltip: &str,
    default: impl Fn() -> T,
    value: &mut T,
    slider: impl FnOnce(&mut egui::Ui, &mut T) -> egui::Response,
) {
    // The slider carries the label, so that it is also its accessible name.
    let _ = label;
    ui.horizontal(|ui| {
        slider(ui, value).on_hover_text(tooltip);
        if ui
            .add_enabled(*value != default(), egui::Button::new("reset").small())
            .on_hover_text("Reset to the default")
            .clicked()
        {
            *value = default();
        }
    });
}
