//! Parameters shared by every view (they stay in step when switching views), their controls,
//! and presets for real models (one per config of assets/models: the files are the list).
//!
//! A number typed into a control is applied when editing ends (Enter or focus lost), never
//! keystroke by keystroke, so that no half-typed value reaches the views; when the value has
//! to change to be allowed (an odd dimension, a base beyond the range), the row says why.

use serde::{Deserialize, Serialize};

use crate::encoding::rope::RopeLayout;
use crate::encoding::rope_scaling::ScalingKind;
use crate::encoding::sinusoidal::{SinusoidalLayout, SinusoidalParams, Spacing};
use crate::import::model_config::{MODEL_CONFIGS, ModelConfig, PositionEncoding};

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
        use crate::encoding::defaults;
        Self {
            dim: defaults::DIM,
            base: defaults::BASE,
            heads: defaults::HEADS,
            seq: defaults::SEQ,
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

/// One of the shared parameters, to say which of them a view uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SharedParam {
    Dim,
    Base,
    Seq,
    Start,
    Heads,
    Layout,
    Spacing,
}

/// A real model's positional settings: every shared parameter, so that choosing it leaves
/// nothing of an earlier choice behind.
pub struct Preset {
    pub name: String,
    pub params: SharedParams,
}

impl Preset {
    /// The preset called `name`.
    pub fn named(name: &str) -> Option<&'static Preset> {
        presets().iter().find(|preset| preset.name == name)
    }

    /// The preset of a model's config: the width the views draw (a RoPE model's rotary
    /// width, another's model width), its base, heads and training context (before any
    /// context extension), and its pairing. `None` for encodings no view draws (T5's buckets).
    pub fn of(config: &ModelConfig) -> Option<Preset> {
        let short = config.name.rsplit('/').next().unwrap_or(&config.name);
        let clamp_seq = |n: usize| n.clamp(1, 1 << 20);
        let heads = config.heads.unwrap_or(8).clamp(1, 128);
        let defaults = SharedParams::default();
        let (summary, params) = match &config.encoding {
            PositionEncoding::Rope {
                head_dim,
                base,
                freqs,
                layout,
            } => {
                let rotary = freqs.rotary(*head_dim);
                let scaling = &freqs.scaling;
                let trained = scaling
                    .original_max_position_embeddings
                    .or(config.context)
                    .unwrap_or(defaults.seq);
                let width = if rotary < *head_dim {
                    format!("rotary dim {rotary} of {head_dim}")
                } else {
                    format!("head dim {head_dim}")
                };
                let scaled = match (scaling.kind, scaling.factor) {
                    (ScalingKind::None, _) => String::new(),
                    (kind, Some(factor)) => format!(", {} x{factor}", kind.name()),
                    (kind, None) => format!(", {}", kind.name()),
                };
                (
                    format!("RoPE, {width}, base {base}{scaled}"),
                    SharedParams {
                        dim: rotary,
                        base: *base,
                        heads,
                        seq: clamp_seq(trained),
                        interleaved: *layout == RopeLayout::Interleaved,
                        ..defaults
                    },
                )
            }
            PositionEncoding::Alibi { heads, .. } => (
                format!("ALiBi, {heads} heads"),
                SharedParams {
                    heads: (*heads).clamp(1, 128),
                    seq: clamp_seq(config.context.unwrap_or(2048)),
                    ..defaults
                },
            ),
            PositionEncoding::Sinusoidal { dim } => (
                format!("sinusoidal, d {dim}"),
                SharedParams {
                    dim: *dim,
                    heads,
                    seq: clamp_seq(config.context.unwrap_or(defaults.seq)),
                    interleaved: false,
                    ..defaults
                },
            ),
            PositionEncoding::SinCos2d { grid, dim } => (
                format!("2D sin-cos, {grid} x {grid} patches, d {dim}"),
                SharedParams {
                    dim: *dim,
                    heads,
                    seq: grid * grid,
                    ..defaults
                },
            ),
            PositionEncoding::Learned { positions, dim } => {
                let patches = if config.model_type == "vit" {
                    let grid = ((positions - 1) as f64).sqrt() as usize;
                    Some(grid)
                } else {
                    None
                };
                (
                    match patches {
                        Some(grid) => format!("learned, {grid} x {grid} patches, d {dim}"),
                        None => format!("learned, d {dim}, {positions} positions"),
                    },
                    SharedParams {
                        dim: *dim,
                        heads,
                        seq: patches.map_or(*positions, |g| g * g),
                        ..defaults
                    },
                )
            }
            PositionEncoding::T5 { .. } => return None,
        };
        Some(Preset {
            name: format!("{short} ({summary})"),
            params,
        })
    }
}

/// The presets: one per model config of assets/models that a view can draw, in file order.
pub fn presets() -> &'static [Preset] {
    static PRESETS: std::sync::OnceLock<Vec<Preset>> = std::sync::OnceLock::new();
    PRESETS.get_or_init(|| {
        MODEL_CONFIGS
            .iter()
            .filter_map(|(_, text)| ModelConfig::parse(text).ok())
            .filter_map(|config| Preset::of(&config))
            .collect()
    })
}

/// What the preset menu shows: the preset chosen last, and whether a control has moved since.
pub fn preset_label(active: Option<&str>, params: &SharedParams) -> String {
    match active.and_then(Preset::named) {
        Some(preset) if preset.params == *params => preset.name.clone(),
        Some(preset) => format!("{} (modified)", preset.name),
        None => "Choose a model…".to_owned(),
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
    egui::ComboBox::from_label("Preset")
        .selected_text(preset_label(active_preset.as_deref(), params))
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
        .on_hover_text(
            "Set every parameter to a real model's; \"(modified)\" once a control has moved",
        );
    ui.separator();
    let row = |param| shared_number_row(param).unused(unused(param));
    row(SharedParam::Dim).ui(ui, &mut params.dim);
    row(SharedParam::Base).ui(ui, &mut params.base);
    row(SharedParam::Seq).ui(ui, &mut params.seq);
    row(SharedParam::Start).ui(ui, &mut params.start);
    row(SharedParam::Heads).ui(ui, &mut params.heads);
    choice_row_ui(
        ui,
        &mut params.interleaved,
        (
            "interleaved",
            "Pairs are columns (2i, 2i+1): sin in 2i, cos in 2i+1 (Vaswani et al.; Meta's RoPE)",
        ),
        (
            "split",
            "Pairs are columns (i, i + d/2): all sines, then all cosines (tensor2tensor; Hugging Face's rotate_half RoPE)",
        ),
        unused(SharedParam::Layout),
    );
    choice_row_ui(
        ui,
        &mut params.vaswani,
        (
            "Vaswani spacing",
            "w_i = base^(-2i/d): the last frequency stops short of 1/base",
        ),
        (
            "t2t spacing",
            "w_i = base^(-i/(d/2-1)): the last frequency is exactly 1/base",
        ),
        unused(SharedParam::Spacing),
    );
    *params != before
}

/// The side panel's row for a numeric shared parameter: its label, default, range and
/// tooltip (`poslab app` checks its options against the same rows).
pub fn shared_number_row(param: SharedParam) -> NumberRow<'static> {
    let defaults = SharedParams::default();
    match param {
        SharedParam::Dim => NumberRow::new("Dimension", defaults.dim as f64, 2.0..=4096.0)
            .tooltip(
                "Width of the encoding: the number of columns, two per frequency. Even, 2 to 4096.",
            )
            .even(),
        SharedParam::Base => NumberRow::new("Base", defaults.base, 2.0..=1e7)
            .tooltip("Wavelength scale: frequencies run from 1 down to about 1/base (10000 in the original transformer, 500000 in Llama 3). 2 to 10^7.")
            .logarithmic(),
        SharedParam::Seq => NumberRow::new("Sequence length", defaults.seq as f64, 1.0..=1_048_576.0)
            .tooltip("Number of positions (rows of the table), 1 to 1,048,576.")
            .logarithmic(),
        SharedParam::Start => NumberRow::new("Start position", defaults.start as f64, 0.0..=1_000_000.0)
            .tooltip("The first row's position: rows are start, start + 1, ... (0 to 1,000,000).")
            .logarithmic(),
        SharedParam::Heads => NumberRow::new("Heads", defaults.heads as f64, 1.0..=128.0)
            .tooltip("Attention heads (ALiBi gives each its own slope), 1 to 128."),
        SharedParam::Layout | SharedParam::Spacing => {
            unreachable!("layout and spacing are choices, not numbers")
        }
    }
}

/// Two radio buttons for a yes/no setting, `(label, tooltip)` for true then false; disabled with
/// `unused` as the tooltip when the view does not use it.
fn choice_row_ui(
    ui: &mut egui::Ui,
    value: &mut bool,
    (yes, yes_tip): (&str, &str),
    (no, no_tip): (&str, &str),
    unused: Option<&'static str>,
) {
    ui.add_enabled_ui(unused.is_none(), |ui| {
        ui.horizontal(|ui| {
            ui.radio_value(value, true, yes).on_hover_text(yes_tip);
            ui.radio_value(value, false, no).on_hover_text(no_tip);
        })
        .response
        .on_disabled_hover_text(unused.unwrap_or_default());
    });
}

/// A number that a slider and a typed value both edit.
pub trait SliderNumber: Copy + PartialEq {
    fn to_f64(self) -> f64;
    fn from_f64(value: f64) -> Self;
}

impl SliderNumber for usize {
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(value: f64) -> Self {
        value.round().max(0.0) as usize
    }
}

impl SliderNumber for u64 {
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn from_f64(value: f64) -> Self {
        value.round().max(0.0) as u64
    }
}

impl SliderNumber for f64 {
    fn to_f64(self) -> f64 {
        self
    }
    fn from_f64(value: f64) -> Self {
        value
    }
}

/// A labelled slider whose number can be typed: the typed value is applied when editing ends,
/// checked against the range (and evenness), and when it had to change, a line under the slider
/// says what was typed, why it was not allowed and what is used instead. A reset button returns
/// to the default.
pub struct NumberRow<'a> {
    label: &'a str,
    tooltip: &'a str,
    default: f64,
    range: std::ops::RangeInclusive<f64>,
    even: bool,
    logarithmic: bool,
    unused: Option<&'static str>,
}

impl<'a> NumberRow<'a> {
    pub fn new(label: &'a str, default: f64, range: std::ops::RangeInclusive<f64>) -> Self {
        Self {
            label,
            tooltip: "",
            default,
            range,
            even: false,
            logarithmic: false,
            unused: None,
        }
    }

    pub fn tooltip(mut self, tooltip: &'a str) -> Self {
        self.tooltip = tooltip;
        self
    }

    /// Only even values (a dimension made of pairs).
    pub fn even(mut self) -> Self {
        self.even = true;
        self
    }

    pub fn logarithmic(mut self) -> Self {
        self.logarithmic = true;
        self
    }

    /// Disables the row, with `reason` as its tooltip.
    pub fn unused(mut self, reason: Option<&'static str>) -> Self {
        self.unused = reason;
        self
    }

    /// The value the row allows for a typed `value`, and why it differs, if it does.
    pub fn allowed(&self, value: f64) -> (f64, Option<String>) {
        let (low, high) = (*self.range.start(), *self.range.end());
        let shown = |v: f64| format_number(v);
        if value < low {
            return (
                low,
                Some(format!(
                    "{} is below the smallest {}, {}",
                    shown(value),
                    self.label.to_lowercase(),
                    shown(low)
                )),
            );
        }
        if value > high {
            return (
                high,
                Some(format!(
                    "{} is above the largest {}, {}",
                    shown(value),
                    self.label.to_lowercase(),
                    shown(high)
                )),
            );
        }
        if self.even && value.round() as i64 % 2 != 0 {
            // Round half away from zero towards the next pair, as the slider's step does.
            let snapped = low + ((value - low) / 2.0).round() * 2.0;
            return (
                snapped.min(high),
                Some(format!(
                    "{} must be even (pairs of sin and cos)",
                    self.label
                )),
            );
        }
        (value, None)
    }

    pub fn ui<T: SliderNumber>(self, ui: &mut egui::Ui, value: &mut T) -> egui::Response {
        let note_id = ui.scope_id().with(("typed value note", self.label));
        let typed = std::cell::Cell::new(None::<Result<f64, String>>);
        let mut number = value.to_f64();
        let before = number;
        let response = ui
            .add_enabled_ui(self.unused.is_none(), |ui| {
                ui.horizontal(|ui| {
                    let mut slider = egui::Slider::new(&mut number, self.range.clone())
                        .text(self.label)
                        .logarithmic(self.logarithmic)
                        // The number box applies what is typed when editing ends, never a
                        // half-typed number.
                        .update_while_editing(false)
                        .custom_parser(|text| {
                            let cleaned: String =
                                text.chars().filter(|c| !matches!(c, '_' | ' ')).collect();
                            match cleaned.parse::<f64>() {
                                Ok(v) if v.is_finite() => {
                                    typed.set(Some(Ok(v)));
                                    Some(v)
                                }
                                _ => {
                                    typed.set(Some(Err(text.trim().to_owned())));
                                    None
                                }
                            }
                        });
                    if self.even {
                        slider = slider.step_by(2.0);
                    } else if T::from_f64(0.5).to_f64() != 0.5 {
                        slider = slider.integer();
                    }
                    let response = ui.add(slider).on_hover_text(self.tooltip);
                    if ui
                        .add_enabled(number != self.default, egui::Button::new("reset").small())
                        .on_hover_text(format!(
                            "Reset to the default, {}",
                            format_number(self.default)
                        ))
                        .clicked()
                    {
                        number = self.default;
                    }
                    response
                })
                .inner
            })
            .inner;
        let response = match self.unused {
            Some(reason) => response.on_disabled_hover_text(reason),
            None => response,
        };
        if let Some(kept) =
            crate::widgets::number_box::kept_on_escape(ui, note_id, &response, before)
        {
            number = kept;
            typed.set(None);
        }
        match typed.take() {
            Some(Ok(wanted)) => {
                let (allowed, why) = self.allowed(wanted);
                number = allowed;
                match why {
                    Some(why) => ui.data_mut(|d| {
                        d.insert_temp(note_id, format!("{why}: using {}", format_number(allowed)));
                    }),
                    None => ui.data_mut(|d| d.remove::<String>(note_id)),
                }
            }
            Some(Err(text)) => {
                let (low, high) = (*self.range.start(), *self.range.end());
                ui.data_mut(|d| {
                    d.insert_temp(
                        note_id,
                        format!(
                            "\"{text}\" is not a number: {} takes {} to {}; kept {}",
                            self.label,
                            format_number(low),
                            format_number(high),
                            format_number(before)
                        ),
                    )
                });
            }
            None if number != before => ui.data_mut(|d| d.remove::<String>(note_id)),
            None => {}
        }
        if let Some(note) = ui.data(|d| d.get_temp::<String>(note_id)) {
            ui.colored_label(ui.visuals().warn_fg_color, note);
        }
        let new = T::from_f64(number);
        if new != *value {
            *value = new;
        }
        response
    }
}

/// A number as a person types it: integers without decimals, others to 6 significant digits.
fn format_number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        format!("{}", (value * 1e6).round() / 1e6)
    }
}
