//! The options of 2D patch tables: how distances are measured, the sin-cos table's column
//! blocks and raster, rows before the patches, resampling from another grid, and mixed RoPE's
//! learned frequencies.

use std::path::PathBuf;

use clap::Args;

use crate::encoding::grid::{DistanceMetric, Raster};

/// Options of the 2D patch tables and figures.
#[derive(Debug, Clone, Args)]
pub struct Grid2dOptions {
    /// patch-distance: how the distance between patch centres is measured
    #[arg(long, value_enum, value_name = "METRIC", default_value_t = DistanceMetric::Euclidean)]
    pub metric: DistanceMetric,

    /// sincos-2d: the four dim/4 blocks in column order, from sin-x, cos-x, sin-y, cos-y
    /// (MAE: sin-x,cos-x,sin-y,cos-y; timm build_sincos2d_pos_embed: sin-y,sin-x,cos-y,cos-x,
    /// with interleave_sin_cos sin-y,cos-y,sin-x,cos-x)
    #[arg(long, value_name = "BLOCKS", default_value = "sin-x,cos-x,sin-y,cos-y")]
    pub order: String,

    /// sincos-2d: patches row by row (x fastest, MAE and timm) or column by column (timm's
    /// reverse_coord, with the order's x and y swapped)
    #[arg(long, value_enum, value_name = "ORDER", default_value_t = Raster::Rows)]
    pub raster: Raster,

    /// sincos-2d: zero rows before the patches (a CLS token's: 1 in ViT-MAE), 0 to 65536;
    /// sincos-2d-resample: rows before the patches, copied unchanged
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub prefix_rows: i64,

    /// sincos-2d-resample: the grid the table was made for, HxW (e.g. 14x14); with --input it
    /// defaults to the square the patch rows make
    #[arg(long, value_name = "HxW")]
    pub from_grid: Option<String>,

    /// sincos-2d-resample and context-vision: torch's anti-aliased path (PIL's kernel stretched
    /// when shrinking; bicubic with a = -0.5 instead of -0.75). The table's default is false;
    /// the figure's, as timm's own, true
    #[arg(
        long,
        value_name = "BOOL",
        action = clap::ArgAction::Set,
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    pub antialias: Option<bool>,

    /// rope-2d-mixed: a [2, dim/2] <f2, <f4 or <f8 .npy array, row 0 theta_x, row 1 theta_y;
    /// the patches figure also takes rope-vit's [2, heads, n] parameter (one head of it,
    /// --freqs-head)
    #[arg(long, value_name = "F.npy")]
    pub freqs: Option<PathBuf>,

    /// patches: which head of a [2, heads, n] --freqs file (default 0)
    #[arg(long, value_name = "H", allow_hyphen_values = true)]
    pub freqs_head: Option<i64>,
}
