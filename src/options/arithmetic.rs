//! How a table's numbers are computed, as `--arith` and `--freq-form` name it: exact (f64), or
//! every step as PyTorch's float32 rounds it; for the precision lab, the type a model computes
//! in, with the precision lab's offset and seed.

use clap::Args;

use crate::encoding::precision::ComputeType;
use crate::encoding::torch_f32::{AVX2_BLOCK, Arithmetic, FreqForm, TorchMode};

/// `--arith` on the command line: the arithmetic, before `--freq-form` completes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ArithmeticArg {
    /// f64 angles and values: the exact table.
    #[default]
    Exact,
    /// Every step rounded to f32 as PyTorch's CPU kernels round it.
    #[value(name = "torch-f32")]
    TorchF32,
    /// rope-cache-error, rope-score-drift: the cache or score made in float32
    F32,
    /// rope-cache-error, rope-score-drift: made in bfloat16
    Bf16,
    /// rope-cache-error, rope-score-drift: made in float16
    F16,
}

impl ArithmeticArg {
    /// The arithmetic, with the frequencies formed as `form`. The precision lab's compute
    /// types are not an arithmetic of the table (its tables emulate them themselves): exact.
    pub fn with_form(self, form: FreqForm) -> Arithmetic {
        match self {
            ArithmeticArg::Exact
            | ArithmeticArg::F32
            | ArithmeticArg::Bf16
            | ArithmeticArg::F16 => Arithmetic::Exact,
            ArithmeticArg::TorchF32 => Arithmetic::TorchF32(TorchMode {
                form,
                block: AVX2_BLOCK,
            }),
        }
    }

    /// The precision lab's compute type this names, if it names one.
    pub fn compute_type(self) -> Option<ComputeType> {
        match self {
            ArithmeticArg::F32 => Some(ComputeType::F32),
            ArithmeticArg::Bf16 => Some(ComputeType::Bf16),
            ArithmeticArg::F16 => Some(ComputeType::F16),
            ArithmeticArg::Exact | ArithmeticArg::TorchF32 => None,
        }
    }
}

/// The arithmetic of a table, and the precision lab's inputs.
#[derive(Debug, Clone, Args)]
pub struct ArithmeticOptions {
    /// Arithmetic: exact (f64) or torch-f32, every step as PyTorch's CPU kernels round it in
    /// float32 (frequencies, torch.outer(pos, inv_freq), sin/cos), for sinusoidal, sincos-2d
    /// (timm), the RoPE kinds and the ALiBi slopes; for rope-cache-error and rope-score-drift, the
    /// type the model computes in: f32 (the default), bf16 or f16
    #[arg(long, value_enum, value_name = "ARITH", default_value_t = ArithmeticArg::Exact)]
    pub arith: ArithmeticArg,

    /// rope-cache-error: cast the positions to bf16 or f16 before the product, as code that
    /// builds position ids in the model's dtype does (bfloat16 positions above 256 collide)
    #[arg(long, value_enum, value_name = "TYPE")]
    pub positions_in: Option<ComputeType>,

    /// rope-score-drift and the precision figure: the offset D between query and key (the
    /// query at n + D), 0 to 2^24 - seq (the figure's default 16); the layouts figure: the
    /// offset Δ, 0 to 1000000 (default 3)
    #[arg(long, value_name = "D")]
    pub offset: Option<i64>,

    /// rope-score-drift and the precision figure: q and k drawn uniformly from [-1, 1) with
    /// this seed (default: all ones); the patches figure: the seed of the mixed RoPE
    /// frequencies
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,

    /// With --arith torch-f32: how the frequencies are formed, pow as Hugging Face, Meta and
    /// timm (1 / base ** (2i/d)) or exp as the Annotated Transformer and fairseq
    /// (exp(2i * -(log(base) / d))); default pow
    #[arg(long, value_enum, value_name = "FORM")]
    pub freq_form: Option<FreqForm>,
}
