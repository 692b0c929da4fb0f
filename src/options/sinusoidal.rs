//! The frequencies of sin/cos pairs, as sinusoidal tables and the views built on them take
//! them: the base (or diffusers' max period), the first position, how pairs lie in a row, how
//! frequencies are spaced, which of sine and cosine comes first, and dot-decay's anchor row.

use clap::Args;

use crate::encoding::PairLayout;
use crate::encoding::sinusoidal::{FirstOfPair, SinusoidalParams, Spacing};
use crate::options::{Words, value_name};

/// The base every frequency is a power of, unless given.
pub const BASE: f64 = crate::encoding::defaults::BASE;

/// The frequencies and pairing of a sin/cos table.
#[derive(Debug, Clone, Default, Args)]
pub struct SinusoidalOptions {
    /// Frequency base, a finite number greater than 1 (default 10000)
    #[arg(long, value_name = "B", allow_hyphen_values = true)]
    pub base: Option<f64>,

    /// Sinusoidal kinds: --base as diffusers spells it (get_timestep_embedding's max_period)
    #[arg(
        long,
        value_name = "B",
        conflicts_with = "base",
        allow_hyphen_values = true
    )]
    pub max_period: Option<f64>,

    /// First position: rows are positions start, start+1, ..., start+seq-1 (0 to 2^53-1-seq;
    /// default 0)
    #[arg(long, value_name = "P")]
    pub start: Option<i64>,

    /// Sinusoidal: interleaved (sin, cos per pair) or split (all sin, then all cos).
    /// RoPE: interleaved pairs (2i, 2i+1) as Llama, or half pairs (i, i+dim/2) as HF.
    /// rope-2d-axial: each value twice in a row (interleaved) or the row twice (half); without
    /// it, once. Interleaved unless given (the corkscrew figure: interleaved or half)
    #[arg(long, value_enum, value_name = "LAYOUT")]
    pub layout: Option<PairLayout>,

    /// Frequency spacing: vaswani base^(-2i/dim) (the default) or t2t
    /// base^(-i/max(dim/2-1, 1))
    #[arg(long, value_enum, value_name = "SPACING")]
    pub spacing: Option<Spacing>,

    /// Sinusoidal kinds: which of each frequency's sine and cosine comes first, in the pair or
    /// as the first half (cos: diffusers flip_sin_to_cos=True, MLX cos_first=True); sin unless
    /// given
    #[arg(long, value_enum, value_name = "WHICH")]
    pub first: Option<FirstOfPair>,

    /// dot-decay (and the tour's dot-product step): the row whose dot product with every row is
    /// taken, 0 to seq-1 (default 0 for the table)
    #[arg(long, value_name = "ROW")]
    pub anchor: Option<i64>,
}

impl SinusoidalOptions {
    /// The base given, or the default (`--max-period` is read by the kinds that take it).
    pub fn base(&self) -> f64 {
        self.base.unwrap_or(BASE)
    }

    /// The first position given, 0 unless given (checked by the table that reads it).
    pub fn start(&self) -> i64 {
        self.start.unwrap_or(0)
    }

    pub fn spacing(&self) -> Spacing {
        self.spacing.unwrap_or_default()
    }

    pub fn first(&self) -> FirstOfPair {
        self.first.unwrap_or_default()
    }
}

/// The group's part of a sin/cos table's settings, written back as options: its base, first
/// position, pairing and spacing, and the first of the pair where it is not the sine.
pub fn write(params: &SinusoidalParams, words: &mut Words) {
    words.option("base", params.base);
    words.option("start", params.start);
    words.option("layout", params.layout.sinusoidal_name());
    words.option("spacing", value_name(params.spacing));
    // The original transformer's order goes unsaid.
    if params.first != FirstOfPair::Sin {
        words.option("first", value_name(params.first));
    }
}
