//! Every table kind: the list `poslab table` takes ([`Kind`]), what each kind reads
//! ([`options_of`]), and the kinds that live in a module of their own, one file each
//! ([`registered`]: their options, their reading and what the engine computes). The older
//! kinds' options and readings are in [`builtin`].

use clap::ValueEnum;

use super::reader::Reader;
use super::{CliError, TableSpec};
use crate::import::model_config::PositionEncoding;

pub(super) mod builtin;
mod rope_permutation;
mod rope_stretch;

pub(super) use builtin::*;

/// Every table `poslab table` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Kind {
    /// [seq, dim] sinusoidal encoding (Vaswani or tensor2tensor spacing)
    Sinusoidal,
    /// [seq] dot product PE[anchor]·PE[j] of sinusoidal rows
    DotDecay,
    /// [seq, seq] dot products PE[i]·PE[j] of sinusoidal rows
    Similarity,
    /// [dim/2] RoPE inverse frequencies theta_i = base^(-2i/dim)
    RopeInvFreq,
    /// [seq, dim/2] RoPE angles p·theta_i
    RopeAngles,
    /// [seq, dim] the --input array rotated by RoPE, row p at position start+p
    RopeApply,
    /// [seq, R/2] 1 where a context-extension --scaling turns pair i at distance p to an
    /// angle a model trained on --train-len positions never saw, else 0
    RopeUnseen,
    /// [seq, R] RoPE cos cache as models store it (half: HF/GPT-NeoX, interleaved: GPT-J)
    RopeCos,
    /// [seq, R] RoPE sin cache as models store it (half: HF/GPT-NeoX, interleaved: GPT-J)
    RopeSin,
    /// [seq, pairs] RoPE over several position axes (Flux's --axes-dim, Qwen2-VL's
    /// --mrope-section), positions from --ids or --grid; --values cos|sin [seq, 2*pairs]
    RopeAxes,
    /// [seq, R] vLLM's cos_sin_cache (the R/2 cosines, then the R/2 sines), or with --format
    /// pairs [seq, R/2, 2] (cos, sin) pairs as torchtune and Meta's view_as_real store them,
    /// or with --format halves [seq, 2R] the cos then the sin cache of the half layout
    RopeCosSin,
    /// [1] the factor a RoPE scaling multiplies cos and sin by (YaRN, LongRoPE; else 1)
    RopeAttentionFactor,
    /// [heads] ALiBi slopes, any head count (the reference rule)
    AlibiSlopes,
    /// [heads, seq, seq] ALiBi biases -m_h|i-j|, causal or symmetric
    Alibi,
    /// [heads, P, P] 2D ALiBi biases -m_h·distance between patches (CROMA)
    #[value(name = "alibi-2d")]
    Alibi2d,
    /// [P, P] distance between patch centres (euclidean, manhattan, chebyshev)
    PatchDistance,
    /// [P, dim] MAE 2D sin-cos embedding
    #[value(name = "sincos-2d")]
    SinCos2d,
    /// [prefix + P', dim] a position table (--input, or the sin-cos table at --from-grid)
    /// resampled to another grid as timm's resample_abs_pos_embed does
    #[value(name = "sincos-2d-resample")]
    SinCos2dResample,
    /// [P, dim/2] axial 2D RoPE angles (rope-vit)
    #[value(name = "rope-2d-axial")]
    Rope2dAxial,
    /// [P, dim/2] mixed 2D RoPE angles from learned --freqs (rope-vit)
    #[value(name = "rope-2d-mixed")]
    Rope2dMixed,
    /// [seq, seq] T5 relative position buckets (int32)
    #[value(name = "t5-buckets")]
    T5Buckets,
    /// [seq, seq] Shaw et al. clipped distances clip(j-i, -K, K)+K (int32)
    RelativeClip,
    /// [seq, dim] binary position code, least significant bit first
    Binary,
    /// [seq, R/2] the cos cache as Hugging Face makes it in --arith f32, bf16 or f16, minus
    /// the exact cache (the precision lab)
    RopeCacheError,
    /// [seq] q_(n+D)·k_n computed in --arith f32, bf16 or f16 as a model does, minus the exact
    /// score at offset D = --offset (the precision lab)
    RopeScoreDrift,
    // The kinds in modules of their own, each with its line in `registered` below.
    /// [heads·head_dim] int32: the row of the original each row of q_proj or k_proj holds once
    /// permuted --direction between the pair layouts (w[table] permutes w)
    RopePermutation,
    /// [R/2] how many times slower each pair turns under --scaling than without it: theta_i
    /// unscaled over theta_i scaled (1: left alone; the factor: fully interpolated)
    RopeStretch,
}

impl Kind {
    /// The precision lab's kinds: their --arith is a compute type (f32, bf16, f16).
    pub fn is_precision_lab(self) -> bool {
        matches!(self, Kind::RopeCacheError | Kind::RopeScoreDrift)
    }
}

/// What a kind in a module of its own tells the command line.
pub(super) struct Entry {
    /// The options it reads, by clap id (`output`, `backend` and `verbose` apply to every kind).
    pub options: &'static [&'static str],
    /// Reads them into the table's specification, one clear message per bad value.
    pub read: fn(&Reader) -> Result<TableSpec, CliError>,
    /// Whether a model's config.json that uses this position encoding gives its options
    /// (`--config`).
    pub fits_config: fn(&PositionEncoding) -> bool,
}

/// The kinds that live in a module of their own: one line each.
pub(super) fn registered(kind: Kind) -> Option<&'static Entry> {
    match kind {
        Kind::RopePermutation => Some(&rope_permutation::ENTRY),
        Kind::RopeStretch => Some(&rope_stretch::ENTRY),
        _ => None,
    }
}

/// Which options each kind reads, by clap id. `output`, `backend` and `verbose` apply to every
/// kind.
pub(crate) fn options_of(kind: Kind) -> &'static [&'static str] {
    match registered(kind) {
        Some(entry) => entry.options,
        None => builtin::options_of(kind),
    }
}
