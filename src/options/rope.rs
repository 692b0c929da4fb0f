//! RoPE's own options: how many dims are rotated, and frequencies given outright.

use clap::Args;

use crate::encoding::rope_scaling::{RopeFrequencies, number_list};
use crate::options::Words;

/// Which dims a RoPE table rotates, and at which frequencies.
#[derive(Debug, Clone, Default, Args)]
pub struct RopeOptions {
    /// RoPE: rotate only the first R dimensions of a head (even, at most --dim; GPT-NeoX
    /// rotary_pct, HF partial_rotary_factor); the rest pass through
    #[arg(long, value_name = "R")]
    pub rotary_dim: Option<i64>,

    /// RoPE: rotary width as a fraction of --dim, R = int(dim * F), as HF's
    /// partial_rotary_factor (0 < F <= 1)
    #[arg(long, value_name = "F", allow_hyphen_values = true)]
    pub partial_rotary_factor: Option<f64>,

    /// RoPE kinds: the inverse frequencies themselves, in place of base^(-2i/R) and any
    /// scaling (LongRoPE's rescaled ones, rotary-embedding-torch's pixel frequencies, learned
    /// ones): a comma list or a 1-D .npy; the rotary width is twice their count
    #[arg(long, value_name = "LIST|F.npy", allow_hyphen_values = true)]
    pub inv_freq: Option<String>,
}

/// The frequencies of a RoPE of `base`, written back as options: the base (unless the
/// frequencies are given outright), the rotary width, the given frequencies, and the scaling
/// with the parameters it reads.
pub fn write(freqs: &RopeFrequencies, base: f64, words: &mut Words) {
    match &freqs.given {
        Some(given) => words.option("inv-freq", number_list(given)),
        None => words.option("base", base),
    }
    if let Some(rotary) = freqs.rotary_dim {
        words.option("rotary-dim", rotary);
    }
    words.options(freqs.scaling.as_options());
}
