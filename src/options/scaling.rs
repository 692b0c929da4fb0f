//! RoPE context-extension scaling, every parameter as Hugging Face's `rope_scaling` names it.

use clap::Args;

use crate::encoding::rope_scaling::ScalingKind;

/// A RoPE scaling and its parameters (`--scaling TYPE` and HF's names for the rest).
#[derive(Debug, Clone, Default, Args)]
pub struct ScalingOptions {
    /// RoPE context-extension scaling, as Hugging Face's rope_type (its options keep HF's
    /// names: --factor, --original-max-position-embeddings, ...)
    #[arg(long, value_enum, value_name = "TYPE", default_value_t = ScalingKind::None)]
    pub scaling: ScalingKind,

    /// Scaling factor (linear, ntk, dynamic, yarn, llama3; longrope's attention factor), 1 or more
    #[arg(long, value_name = "F", allow_hyphen_values = true)]
    pub factor: Option<f64>,

    /// Context the model was trained with (yarn, llama3, longrope)
    #[arg(long, value_name = "N")]
    pub original_max_position_embeddings: Option<i64>,

    /// Context the model is configured for (dynamic's threshold; yarn and longrope derive the
    /// factor from it and --original-max-position-embeddings when --factor is missing)
    #[arg(long, value_name = "N")]
    pub max_position_embeddings: Option<i64>,

    /// llama3: wavelengths above original/low_freq_factor are divided by --factor
    #[arg(long, value_name = "F", allow_hyphen_values = true)]
    pub low_freq_factor: Option<f64>,

    /// llama3: wavelengths below original/high_freq_factor are kept
    #[arg(long, value_name = "F", allow_hyphen_values = true)]
    pub high_freq_factor: Option<f64>,

    /// yarn: rotations within the original context above which a pair is kept (default 32)
    #[arg(long, value_name = "B", allow_hyphen_values = true)]
    pub beta_fast: Option<f64>,

    /// yarn: rotations below which a pair is fully interpolated (default 1)
    #[arg(long, value_name = "B", allow_hyphen_values = true)]
    pub beta_slow: Option<f64>,

    /// yarn: mscale (DeepSeek); with --mscale-all-dim the attention factor is their ratio
    #[arg(long, value_name = "M", allow_hyphen_values = true)]
    pub mscale: Option<f64>,

    /// yarn: mscale_all_dim (DeepSeek)
    #[arg(long, value_name = "M", allow_hyphen_values = true)]
    pub mscale_all_dim: Option<f64>,

    /// yarn, longrope: the attention factor itself, instead of the one derived from the factor
    #[arg(long, value_name = "A", allow_hyphen_values = true)]
    pub attention_factor: Option<f64>,

    /// yarn: round the ramp's ends to whole dimensions (HF's default, true)
    #[arg(
        long,
        value_name = "BOOL",
        action = clap::ArgAction::Set,
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    pub truncate: Option<bool>,

    /// longrope: one rescale factor per rotated pair, used beyond
    /// --original-max-position-embeddings: a comma list or a 1-D .npy file
    #[arg(long, value_name = "LIST|F.npy", allow_hyphen_values = true)]
    pub long_factor: Option<String>,

    /// longrope: the factors used within --original-max-position-embeddings
    #[arg(long, value_name = "LIST|F.npy", allow_hyphen_values = true)]
    pub short_factor: Option<String>,
}
