//! Parameters shared by every view (they stay in step when switching views), and presets for
//! real models (one per config of assets/models: the files are the list). The side panel's
//! controls for them are the app's (its side panel module).

use serde::{Deserialize, Serialize};

use crate::encoding::PairLayout;
use crate::encoding::rope_scaling::ScalingKind;
use crate::encoding::sinusoidal::{SinusoidalParams, Spacing};
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
    pub layout: PairLayout,
    pub spacing: Spacing,
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
            layout: PairLayout::Interleaved,
            spacing: Spacing::Vaswani,
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
            layout: self.layout,
            spacing: self.spacing,
            ..SinusoidalParams::default()
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
    /// The model and what it sets: `Llama-3.1-8B (RoPE, head dim 128, base 500000)`.
    pub name: String,
    /// The model alone, as the closed menu shows it: `Llama-3.1-8B`.
    pub short: String,
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
                        layout: *layout,
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
                    layout: PairLayout::Half,
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
            short: short.to_owned(),
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
