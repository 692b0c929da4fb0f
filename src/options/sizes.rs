//! The size options `poslab table` and `poslab figure` share, declared once: how many
//! positions, how wide, how many heads and which, how large a patch grid. Each table kind and
//! each figure says which of them it reads, and checks their values against its own range.

use clap::Args;

/// Sizes of a table or figure.
#[derive(Debug, Clone, Default, Args)]
pub struct SizeOptions {
    /// Number of positions: 1 to 1073741824 (required by sequence tables; a figure takes its
    /// view's default)
    #[arg(long, value_name = "N")]
    pub seq: Option<i64>,

    /// Embedding or head dimension: even for sin/cos pairs and RoPE, a multiple of 4 for 2D
    /// tables, 1 to 1048576 bits for binary (required where used)
    #[arg(long, value_name = "D")]
    pub dim: Option<i64>,

    /// Number of attention heads, 1 to 65536 (required by ALiBi tables; the alibi and
    /// patches figures take 8)
    #[arg(long, value_name = "H")]
    pub heads: Option<i64>,

    /// One head, 0 to heads-1: the [seq, seq] or [P, P] slice of an ALiBi table to write
    /// (needed for .csv, which holds 2-D tables), or the head a figure draws (alibi: default
    /// every head as small multiples)
    #[arg(long, value_name = "H")]
    pub head: Option<i64>,

    /// Rows of patches: 1 to 65536 (required by 2D tables; the patches figure: 1 to 64)
    #[arg(long, value_name = "N")]
    pub grid_h: Option<i64>,

    /// Columns of patches: 1 to 65536 (required by 2D tables; the patches figure: 1 to 64)
    #[arg(long, value_name = "N")]
    pub grid_w: Option<i64>,
}
