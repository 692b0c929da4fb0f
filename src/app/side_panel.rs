//! The side panel's controls for the shared parameters: the preset menu, a row per number
//! (a slider with its typed box, a reset button and a line when a typed value had to change)
//! and the layout and spacing choices. `poslab app` checks its options against the same rows.
//!
//! A number typed into a control is applied when editing ends (Enter or focus lost), never
//! keystroke by keystroke, so that no half-typed value reaches the views; when the value has
//! to change to be allowed (an odd dimension, a base beyond the range), the row says why.

use crate::encoding::PairLayout;
use crate::encoding::sinusoidal::Spacing;
use crate::ui::params::{Preset, SharedParam, SharedParams, presets};
use crate::widgets::number_box::NumberRow;

/// What the preset menu says: the preset chosen last, and whether a control has moved since.
pub fn preset_label(active: Option<&str>, params: &SharedParams) -> String {
    match active.and_then(Preset::named) {
        Some(preset) if preset.params == *params => preset.name.clone(),
        Some(preset) => format!("{} (modified)", preset.name),
        None => "Choose a model…".to_owned(),
    }
}

/// The most characters the closed menu shows, "(modified)" included: more would widen the
/// panel.
const MENU_CHARS: usize = 24;

/// What the closed menu shows: the model's name alone (cut short if long), and whether a
/// control has moved since; [`preset_label`] says it whole in the tooltip.
pub fn preset_menu_text(active: Option<&str>, params: &SharedParams) -> String {
    let Some(preset) = active.and_then(Preset::named) else {
        return "Choose a model…".to_owned();
    };
    let modified = preset.params != *params;
    let room = if modified {
        MENU_CHARS - " (modified)".len()
    } else {
        MENU_CHARS
    };
    let name = if preset.short.chars().count() > room {
        let kept: String = preset.short.chars().take(room - 1).collect();
        format!("{kept}…")
    } else {
        preset.short.clone()
    };
    if modified {
        format!("{name} (modified)")
    } else {
        name
    }
}

/// The shared controls. `active_preset` is the preset chosen last; `unused` says, for a
/// parameter the current view does not use, why (its control is disabled with that tooltip).
/// Returns whether any parameter changed.
pub fn shared_params_ui(
    ui: &mut egui::Ui,
    params: &mut SharedParams,
    active_preset: &mut Option<String>,
    unused: impl Fn(SharedParam) -> Option<&'static str>,
) -> bool {
    let before = *params;
    let label = preset_label(active_preset.as_deref(), params);
    // The model's name alone, cut short if long (whole in the tooltip and the open menu),
    // so that the panel keeps its width and "Preset" its line.
    egui::ComboBox::from_label("Preset")
        .selected_text(preset_menu_text(active_preset.as_deref(), params))
        // Every model at once on a 800-pixel-high window, without scrolling.
        .height(640.0)
        .show_ui(ui, |ui| {
            for preset in presets() {
                let chosen = active_preset.as_deref() == Some(preset.name.as_str());
                if ui.selectable_label(chosen, &preset.name).clicked() {
                    *params = preset.params;
                    *active_preset = Some(preset.name.clone());
                }
            }
        })
        .response
        .on_hover_text(format!(
            "{label}\nSet every parameter to a real model's; \"(modified)\" once a control has moved"
        ));
    ui.separator();
    let row = |param| shared_number_row(param).unused(unused(param));
    row(SharedParam::Dim).ui(ui, &mut params.dim);
    row(SharedParam::Base).ui(ui, &mut params.base);
    row(SharedParam::Seq).ui(ui, &mut params.seq);
    row(SharedParam::Start).ui(ui, &mut params.start);
    row(SharedParam::Heads).ui(ui, &mut params.heads);
    choice_row_ui(
        ui,
        &mut params.layout,
        (
            PairLayout::Interleaved,
            "interleaved",
            "Pairs are columns (2i, 2i+1): sin in 2i, cos in 2i+1 (Vaswani et al.; Meta's RoPE)",
        ),
        (
            PairLayout::Half,
            "split",
            "Pairs are columns (i, i + d/2): all sines, then all cosines (tensor2tensor; Hugging Face's rotate_half RoPE)",
        ),
        unused(SharedParam::Layout),
    );
    choice_row_ui(
        ui,
        &mut params.spacing,
        (
            Spacing::Vaswani,
            "Vaswani spacing",
            "w_i = base^(-2i/d): the last frequency stops short of 1/base",
        ),
        (
            Spacing::T2t,
            "t2t spacing",
            "w_i = base^(-i/(d/2-1)): the last frequency is exactly 1/base",
        ),
        unused(SharedParam::Spacing),
    );
    *params != before
}

/// The side panel's row for a numeric shared parameter: its label, range and tooltip from
/// [`crate::options::ranges`] (which `poslab app` checks its options against), and its default.
fn shared_number_row(param: SharedParam) -> NumberRow<'static> {
    use crate::options::ranges;
    let defaults = SharedParams::default();
    let (allowed, default) = match param {
        SharedParam::Dim => (ranges::DIM, defaults.dim as f64),
        SharedParam::Base => (ranges::BASE, defaults.base),
        SharedParam::Seq => (ranges::SEQ, defaults.seq as f64),
        SharedParam::Start => (ranges::START, defaults.start as f64),
        SharedParam::Heads => (ranges::HEADS, defaults.heads as f64),
        SharedParam::Layout | SharedParam::Spacing => {
            unreachable!("layout and spacing are choices, not numbers")
        }
    };
    let row = NumberRow::new(allowed.label, default, allowed.range).tooltip(allowed.tooltip);
    let row = if allowed.even { row.even() } else { row };
    if allowed.logarithmic {
        row.logarithmic()
    } else {
        row
    }
}

/// Two radio buttons for a setting of two values, `(value, label, tooltip)` each; disabled with
/// `unused` as the tooltip when the view does not use it.
fn choice_row_ui<T: PartialEq + Copy>(
    ui: &mut egui::Ui,
    value: &mut T,
    (first, first_label, first_tip): (T, &str, &str),
    (second, second_label, second_tip): (T, &str, &str),
    unused: Option<&'static str>,
) {
    ui.add_enabled_ui(unused.is_none(), |ui| {
        ui.horizontal(|ui| {
            ui.radio_value(value, first, first_label)
                .on_hover_text(first_tip);
            ui.radio_value(value, second, second_label)
                .on_hover_text(second_tip);
        })
        .response
        .on_disabled_hover_text(unused.unwrap_or_default());
    });
}
