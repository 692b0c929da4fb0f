//! RoPE over several position axes (Flux, Qwen2-VL's M-RoPE) and axial 2D RoPE: the base,
//! the width each axis turns, what is written and in which order.

use clap::Args;

use crate::encoding::rope_axes::AxesValues;
use crate::encoding::rope2d::AxisOrder;

/// The axes of a multi-axis or 2D RoPE table.
#[derive(Debug, Clone, Default, Args)]
pub struct AxesOptions {
    /// rope-2d-axial (default 100) and rope-axes (default 10000, or --base): frequency base, a
    /// finite number greater than 1
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    pub theta: Option<f64>,

    /// rope-axes: Flux's axes_dim, the width of each axis's own RoPE, e.g. 16,56,56
    #[arg(long, value_name = "D0,D1,...", conflicts_with = "mrope_section")]
    pub axes_dim: Option<String>,

    /// rope-axes: Qwen2-VL's mrope_section, how many of --dim's pairs each axis turns, e.g.
    /// 16,24,24 (time, height, width)
    #[arg(long, value_name = "S0,S1,...")]
    pub mrope_section: Option<String>,

    /// rope-axes, rope-2d-axial: angles (the default), cos or sin, laid out as --layout says
    /// (interleaved: each angle twice in a row, Flux, timm; half: the row of angles twice,
    /// Qwen2-VL)
    #[arg(long, value_enum, value_name = "VALUES", default_value_t = AxesValues::Angles)]
    pub values: AxesValues,

    /// rope-2d-axial: which coordinate the first half of the angles turns with: xy (rope-vit,
    /// HunyuanDiT: x first) or yx (timm's 'ij' grids, rotary-embedding-torch's
    /// get_axial_freqs(H, W): y first)
    #[arg(long, value_enum, value_name = "ORDER", default_value_t = AxisOrder::Xy)]
    pub axis_order: AxisOrder,
}
