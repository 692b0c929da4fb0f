//! Perceptual colour maps for tables: sequential ones for magnitudes, a diverging one centred
//! on zero for signed tables. Below the engine, the figures and the widgets, which all use
//! them.

use serde::{Deserialize, Serialize};

/// The colour maps a heatmap can use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
pub enum Colormap {
    #[default]
    Viridis,
    Magma,
    /// Blue below zero, white at zero, red above: for signed tables.
    Diverging,
    Greyscale,
}

impl Colormap {
    pub const ALL: [Colormap; 4] = [
        Colormap::Viridis,
        Colormap::Magma,
        Colormap::Diverging,
        Colormap::Greyscale,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Colormap::Viridis => "viridis",
            Colormap::Magma => "magma",
            Colormap::Diverging => "diverging (0 = white)",
            Colormap::Greyscale => "greyscale",
        }
    }

    /// The colour of `t` in `[0, 1]`.
    pub fn color(self, t: f64) -> egui::Color32 {
        let t = if t.is_finite() {
            t.clamp(0.0, 1.0)
        } else {
            0.0
        };
        let c = match self {
            Colormap::Viridis => colorous::VIRIDIS.eval_continuous(t),
            Colormap::Magma => colorous::MAGMA.eval_continuous(t),
            // RdBu runs red to blue; reversed, low values are blue.
            Colormap::Diverging => colorous::RED_BLUE.eval_continuous(1.0 - t),
            Colormap::Greyscale => colorous::GREYS.eval_continuous(1.0 - t),
        };
        egui::Color32::from_rgb(c.r, c.g, c.b)
    }

    /// The colour of a masked cell (`-inf`, a key a causal query may not see): one the map
    /// itself never uses, so that masked cells are not mistaken for values or the background.
    pub fn masked(self) -> egui::Color32 {
        match self {
            Colormap::Greyscale => egui::Color32::from_rgb(150, 70, 70),
            _ => egui::Color32::from_gray(128),
        }
    }

    /// 256 colours from `t = 0` to `t = 1`, then the masked colour, packed rgba8 (red in the
    /// low byte) as the GPU's colour-mapping shader reads them.
    pub fn lut(self) -> [u32; 257] {
        std::array::from_fn(|k| {
            let color = if k < 256 {
                self.color(k as f64 / 255.0)
            } else {
                self.masked()
            };
            u32::from_le_bytes(color.to_array())
        })
    }

    /// The colour of `t` as the GPU maps it: the nearest of the 256 table entries.
    pub fn lut_color(self, t: f64) -> egui::Color32 {
        let t = if t.is_finite() {
            t.clamp(0.0, 1.0)
        } else {
            0.0
        };
        self.color((t * 255.0).round() / 255.0)
    }

    /// The value range a table is mapped over: symmetric around 0 for the diverging map.
    pub fn range(self, min: f64, max: f64) -> (f64, f64) {
        match self {
            Colormap::Diverging => {
                let m = min.abs().max(max.abs());
                // All zero (a difference where a file matches exactly): white, on a bar of
                // ±0.5 like a constant table's, not of ±2.2e-308.
                let m = if m > 0.0 { m } else { 0.5 };
                (-m, m)
            }
            _ if max > min => (min, max),
            _ => (min - 0.5, min + 0.5),
        }
    }
}

/// An `[r, g, b]` colour (as figures and scenes keep them) for egui.
pub fn rgb([r, g, b]: [u8; 3]) -> egui::Color32 {
    egui::Color32::from_rgb(r, g, b)
}

/// The colour of a cell holding `value` on a board whose colours span `range` (`None`: an empty
/// cell, in the map's masked colour).
pub fn cell_color(colormap: Colormap, range: (f64, f64), value: Option<f64>) -> egui::Color32 {
    match value {
        Some(v) if v.is_finite() => {
            let (low, high) = colormap.range(range.0, range.1);
            let t = if high > low {
                (v - low) / (high - low)
            } else {
                0.5
            };
            colormap.color(t)
        }
        _ => colormap.masked(),
    }
}

/// Black or white, whichever reads better on `fill`.
pub fn label_color(fill: egui::Color32) -> egui::Color32 {
    let luminance =
        0.2126 * f32::from(fill.r()) + 0.7152 * f32::from(fill.g()) + 0.0722 * f32::from(fill.b());
    if luminance > 140.0 {
        egui::Color32::BLACK
    } else {
        egui::Color32::WHITE
    }
}
