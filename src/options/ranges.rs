//! What the app's shared controls allow, in one place: the side panel draws its rows from these
//! and `poslab app` (and a web page's link) checks its options against them, so that a value
//! typed anywhere meets the same range with the same words.

use std::ops::RangeInclusive;

/// A numeric setting: its name as a control labels it, its range, and its rules.
#[derive(Debug, Clone, PartialEq)]
pub struct Allowed {
    pub label: &'static str,
    pub range: RangeInclusive<f64>,
    /// Only even values (pairs of sin and cos).
    pub even: bool,
    /// A slider over it moves in ratios, not steps.
    pub logarithmic: bool,
    /// What it is, for a tooltip.
    pub tooltip: &'static str,
}

/// Width of the encoding.
pub const DIM: Allowed = Allowed {
    label: "Dimension",
    range: 2.0..=4096.0,
    even: true,
    logarithmic: false,
    tooltip: "Width of the encoding: the number of columns, two per frequency. Even, 2 to 4096.",
};

/// The wavelength scale.
pub const BASE: Allowed = Allowed {
    label: "Base",
    range: 2.0..=1e7,
    even: false,
    logarithmic: true,
    tooltip: "Wavelength scale: frequencies run from 1 down to about 1/base (10000 in the original transformer, 500000 in Llama 3). 2 to 10^7.",
};

/// Rows of the table.
pub const SEQ: Allowed = Allowed {
    label: "Sequence length",
    range: 1.0..=1_048_576.0,
    even: false,
    logarithmic: true,
    tooltip: "Number of positions (rows of the table), 1 to 1,048,576.",
};

/// The context lab's target length `L'`.
pub const TARGET: Allowed = Allowed {
    label: "Target length",
    range: 2.0..=1_048_576.0,
    even: false,
    logarithmic: true,
    tooltip: "L', the context length the model is run at: 2 to 1,048,576 positions.",
};

/// The first row's position.
pub const START: Allowed = Allowed {
    label: "Start position",
    range: 0.0..=1_000_000.0,
    even: false,
    logarithmic: true,
    tooltip: "The first row's position: rows are start, start + 1, ... (0 to 1,000,000).",
};

/// Attention heads.
pub const HEADS: Allowed = Allowed {
    label: "Heads",
    range: 1.0..=128.0,
    even: false,
    logarithmic: false,
    tooltip: "Attention heads (ALiBi gives each its own slope), 1 to 128.",
};

/// The value a control with `label`, `range` and (if `even`) only even values allows for a
/// typed `value`, and why it differs, if it does.
pub fn allowed(
    label: &str,
    range: &RangeInclusive<f64>,
    even: bool,
    value: f64,
) -> (f64, Option<String>) {
    let (low, high) = (*range.start(), *range.end());
    if value < low {
        return (
            low,
            Some(format!(
                "{} is below the smallest {}, {}",
                format_number(value),
                label.to_lowercase(),
                format_number(low)
            )),
        );
    }
    if value > high {
        return (
            high,
            Some(format!(
                "{} is above the largest {}, {}",
                format_number(value),
                label.to_lowercase(),
                format_number(high)
            )),
        );
    }
    if even && value.round() as i64 % 2 != 0 {
        // Round half away from zero towards the next pair, as the slider's step does.
        let snapped = low + ((value - low) / 2.0).round() * 2.0;
        return (
            snapped.min(high),
            Some(format!("{label} must be even (pairs of sin and cos)")),
        );
    }
    (value, None)
}

impl Allowed {
    /// The value allowed for a typed `value`, and why it differs, if it does.
    pub fn allowed(&self, value: f64) -> (f64, Option<String>) {
        allowed(self.label, &self.range, self.even, value)
    }
}

/// A number as a person types it: integers without decimals, others to 6 significant digits.
pub fn format_number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        format!("{}", (value * 1e6).round() / 1e6)
    }
}
