//! Where each row of a table sits: positions given outright, what multiplies them, or each
//! token's position on several axes (ids, or a grid of tokens). `poslab table` makes tables at
//! them; `poslab identify` reads a file at them.

use std::path::PathBuf;

use clap::Args;

/// Positions other than 0, 1, 2, ...
#[derive(Debug, Clone, Default, Args)]
pub struct PositionOptions {
    /// Sin/cos and RoPE kinds: the positions themselves, one per row, used as stored (integer
    /// or floating point; a float32 file keeps its float32 values): a comma list or a .npy
    /// whose axes other than one have length 1. Sets the number of rows in place of --seq
    #[arg(
        long,
        value_name = "LIST|P.npy",
        conflicts_with_all = ["ids", "grid"],
        allow_hyphen_values = true
    )]
    pub positions: Option<String>,

    /// Sin/cos and RoPE kinds: what multiplies every position, given ones too (diffusers'
    /// Timesteps(scale=...)), a finite number above 0 (or a fraction, 1/3); 1 when not given.
    /// sincos-2d: one scale or sy,sx, multiplying each patch's coordinates (diffusers'
    /// get_2d_sincos_pos_embed: base_size / grid / interpolation_scale per axis, e.g. 4/6,4/10)
    #[arg(long, value_name = "S|SY,SX", allow_hyphen_values = true)]
    pub position_scale: Option<String>,

    /// rope-axes: each token's position on each axis, a [seq, axes] .npy (integer or floating
    /// point, used exactly as stored; [axes, seq] is read too), e.g. Qwen2-VL's get_rope_index
    #[arg(long, value_name = "IDS.npy", conflicts_with = "grid")]
    pub ids: Option<PathBuf>,

    /// rope-axes: the positions of a T,H,W grid of tokens in raster order (the last axis
    /// fastest), each axis counting from 0 (any number of axes: H,W too)
    #[arg(long, value_name = "T,H,W")]
    pub grid: Option<String>,
}
