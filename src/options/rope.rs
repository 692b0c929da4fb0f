//! RoPE's own options: how many dims are rotated, and frequencies given outright.

use clap::Args;

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
