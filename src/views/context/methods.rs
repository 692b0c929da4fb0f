//! The scaling methods' rows of the context-extension lab: what each method does, in a line,
//! and the box of a parameter that overrides the method's own value.

use crate::encoding::rope_scaling::ScalingKind;

/// What each method does, in a line.
pub(super) fn method_tip(kind: ScalingKind) -> &'static str {
    match kind {
        ScalingKind::None => {
            "Run the trained frequencies past L: slow pairs reach angles never trained"
        }
        ScalingKind::Linear => {
            "Position Interpolation: every frequency divided by L'/L, so L' positions span the angles L did"
        }
        ScalingKind::Ntk => {
            "NTK-aware: a larger base, so fast pairs keep their frequency and slow ones are interpolated"
        }
        ScalingKind::Dynamic => {
            "Dynamic NTK: the NTK base recomputed from the current length once it passes L"
        }
        ScalingKind::Yarn => {
            "YaRN: pairs that turn often in L are kept, slow ones interpolated, a ramp between; attention scaled by 0.1 ln(s) + 1"
        }
        ScalingKind::Llama3 => {
            "Llama 3: wavelengths above L interpolated, below L/4 kept, a smooth band between"
        }
        ScalingKind::Longrope => {
            "LongRoPE: one searched rescale factor per pair, from the model's config"
        }
    }
}

/// An optional number: empty uses `current` (shown greyed), a typed value overrides it.
pub(super) fn number_ui(
    ui: &mut egui::Ui,
    value: &mut Option<f64>,
    current: Option<f64>,
    name: &str,
    range: std::ops::RangeInclusive<f64>,
) {
    let mut shown = value.or(current).unwrap_or(1.0);
    let response = ui
        .add(
            crate::widgets::number_box::NumberBox::drag(&mut shown)
                .range(range)
                .speed(0.05)
                .prefix(format!("{name} ")),
        )
        .on_hover_text(format!(
            "Hugging Face's {name}; {}",
            if value.is_some() {
                "edited (Reset parameters goes back)"
            } else {
                "the method's own value"
            }
        ));
    if response.changed() {
        *value = Some(shown);
    }
}
