//! ALiBi's options beyond its sizes: causal or symmetric, a step with a KV cache, heads without
//! a slope, the form a model stores, and slope scaling past the trained length. `--mode` also
//! names the interpolation of sincos-2d-resample.

use clap::{Args, ValueEnum};

use crate::encoding::alibi::{AlibiForm, AlibiMode};
use crate::encoding::resample::ResampleMode;

/// `--mode`: ALiBi's masking, or the interpolation of sincos-2d-resample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    /// alibi: keys after the query masked with -inf (a decoder; the default)
    Causal,
    /// alibi: -m|i-j| in both directions (an encoder)
    Symmetric,
    /// sincos-2d-resample: Keys' cubic, four neighbours per axis (timm's default)
    Bicubic,
    /// sincos-2d-resample: two neighbours per axis
    Bilinear,
}

impl ModeArg {
    /// As the command line spells it.
    pub fn name(self) -> String {
        super::value_name(self)
    }

    /// ALiBi's masking, causal unless given; `what` names the table or figure in the refusal.
    pub fn alibi(mode: Option<Self>, what: &str) -> Result<AlibiMode, String> {
        match mode {
            None | Some(ModeArg::Causal) => Ok(AlibiMode::Causal),
            Some(ModeArg::Symmetric) => Ok(AlibiMode::Symmetric),
            Some(other) => Err(format!(
                "--mode {} does not apply to {what}: give causal or symmetric",
                other.name()
            )),
        }
    }

    /// The interpolation of a resampled table, bicubic unless given.
    pub fn resample(mode: Option<Self>, what: &str) -> Result<ResampleMode, String> {
        match mode {
            None | Some(ModeArg::Bicubic) => Ok(ResampleMode::Bicubic),
            Some(ModeArg::Bilinear) => Ok(ResampleMode::Bilinear),
            Some(other) => Err(format!(
                "--mode {} does not apply to {what}: give bicubic or bilinear",
                other.name()
            )),
        }
    }
}

/// ALiBi's masking, step, extra heads, stored form and slope scaling.
#[derive(Debug, Clone, Args)]
pub struct AlibiOptions {
    /// alibi (and the alibi figure, the relative figure's alibi panel): causal (keys after the
    /// query masked with -inf; the default) or symmetric (both directions biased);
    /// sincos-2d-resample: bicubic (timm's default) or bilinear
    #[arg(long, value_enum, value_name = "MODE")]
    pub mode: Option<ModeArg>,

    /// alibi: the biases of the last Q queries over all --seq keys, [heads, Q, seq] (a step
    /// with a KV cache: x-transformers, MLX's offset); 1 to seq, default seq
    #[arg(long, value_name = "Q", allow_hyphen_values = true)]
    pub queries: Option<i64>,

    /// alibi: N heads of slope 0 appended after the --heads sloped ones, [heads + N, ...]
    /// (x-transformers' heads without ALiBi)
    #[arg(
        long,
        value_name = "N",
        default_value_t = 0,
        allow_hyphen_values = true
    )]
    pub zero_heads: i64,

    /// ALiBi as stored: relative [heads, seq, seq] -m|i-j|, or per key [heads, 1, seq] as
    /// BLOOM (m*j) and MPT (m*(j-(seq-1))) store it (the same attention after softmax)
    #[arg(long, value_enum, value_name = "FORM", default_value_t = AlibiForm::Relative)]
    pub form: AlibiForm,

    /// The length the model was trained on: ALiBi's --slope-scaling, rope-unseen
    #[arg(long, value_name = "L")]
    pub train_len: Option<i64>,

    /// ALiBi: beyond --train-len L, every slope becomes m_h * L / seq (Al-Khateeb et al.'s
    /// interpolation); within L nothing changes. alibi-slopes reads the length from --seq
    #[arg(
        long,
        value_name = "BOOL",
        default_value_t = false,
        action = clap::ArgAction::Set,
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    pub slope_scaling: bool,
}
