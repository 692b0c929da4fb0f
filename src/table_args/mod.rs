//! One table, as the command line and the app's Check view name it: the table kinds, the options
//! of one table ([`TableArgs`]) and a model's config.json read as such options ([`config`]),
//! turned into a [`TableSpec`] with one clear message per bad value ([`table_spec`],
//! [`table_spec_from_words`]). `poslab table`, `check`, `figure` and `bench` and the app all
//! read tables through here.

use std::path::{Path, PathBuf};

use clap::parser::ValueSource;
use clap::{ArgMatches, Args, FromArgMatches, ValueEnum};
use ndarray::Ix2;

use crate::encoding::alibi::{Alibi2dParams, AlibiForm, AlibiMode, AlibiParams};
use crate::encoding::binary::BinaryParams;
use crate::encoding::grid::{DistanceMetric, GridParams, Raster, SinCos2dParams};
use crate::encoding::relative::{RelativeClipParams, T5BucketParams};
use crate::encoding::resample::{ResampleMode, ResampleParams};
use crate::encoding::rope::{CachePart, RopeLayout, RopeParams};
use crate::encoding::rope_axes::AxesValues;
use crate::encoding::rope_scaling::{RopeFrequencies, RopeScaling, ScalingKind};
use crate::encoding::rope2d::AxialParams;
use crate::encoding::sinusoidal::{FirstOfPair, SinusoidalLayout, SinusoidalParams, Spacing};
use crate::encoding::torch_f32::{Arithmetic, ArithmeticArg, FreqForm};
use crate::encoding::{self, ParamError};
use crate::engine::{self, EngineError, RealDtype, Table, TableSpec};
use crate::import;
use crate::scene::context::{RopeModel, UnseenParams};

pub mod config;
pub mod output;
mod sizes;
mod spec;

pub use sizes::SizeOptions;
pub use spec::*;

/// How `rope-cos-sin` lays out its cosines and sines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum CacheFormat {
    /// `[seq, R]`: the `R/2` cosines, then the `R/2` sines (vLLM's `cos_sin_cache`).
    #[default]
    Vllm,
    /// `[seq, R/2, 2]`: a (cos, sin) pair per frequency (torchtune, Meta's `view_as_real`).
    Pairs,
}

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
    /// pairs [seq, R/2, 2] (cos, sin) pairs as torchtune and Meta's view_as_real store them
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
}

impl Kind {
    /// The precision lab's kinds: their --arith is a compute type (f32, bf16, f16).
    pub fn is_precision_lab(self) -> bool {
        matches!(self, Kind::RopeCacheError | Kind::RopeScoreDrift)
    }
}

/// Options of `poslab table`. Which apply depends on the kind; giving one that does not is an
/// error rather than something silently ignored.
#[derive(Debug, Clone, Args)]
#[command(after_long_help = TABLE_NOTES, allow_negative_numbers = true)]
pub struct TableArgs {
    /// Which table to write
    #[arg(value_enum, value_name = "KIND")]
    pub kind: Kind,

    /// Output file; .npy (NumPy) or .csv, chosen by the extension
    #[arg(short, long, value_name = "FILE", required = true)]
    pub output: Option<PathBuf>,

    /// A model's Hugging Face config.json (or an assets/models file): fills in the options it
    /// decides (head dim, base, rotary width, pairing, scaling, heads, ...) that are not given
    #[arg(long, value_name = "FILE.json")]
    pub config: Option<PathBuf>,

    #[command(flatten)]
    pub sizes: crate::table_args::SizeOptions,

    /// Frequency base, a finite number greater than 1
    #[arg(
        long,
        value_name = "B",
        default_value_t = 10_000.0,
        allow_hyphen_values = true
    )]
    pub base: f64,

    /// Sinusoidal kinds: --base as diffusers spells it (get_timestep_embedding's max_period)
    #[arg(
        long,
        value_name = "B",
        conflicts_with = "base",
        allow_hyphen_values = true
    )]
    pub max_period: Option<f64>,

    /// First position: rows are positions start, start+1, ..., start+seq-1 (0 to 2^53-1-seq)
    #[arg(long, value_name = "P", default_value_t = 0)]
    pub start: i64,

    /// Sin/cos and RoPE kinds: the positions themselves, one per row, used as stored (integer
    /// or floating point; a float32 file keeps its float32 values): a comma list or a .npy
    /// whose axes other than one have length 1. Sets the number of rows in place of --seq
    #[arg(
        long,
        value_name = "LIST|P.npy",
        conflicts_with = "start",
        allow_hyphen_values = true
    )]
    pub positions: Option<String>,

    /// Sin/cos and RoPE kinds: what multiplies every position, given ones too (diffusers'
    /// Timesteps(scale=...)), a finite number above 0 (or a fraction, 1/3); 1 when not given.
    /// sincos-2d: one scale or sy,sx, multiplying each patch's coordinates (diffusers'
    /// get_2d_sincos_pos_embed: base_size / grid / interpolation_scale per axis, e.g. 4/6,4/10)
    #[arg(long, value_name = "S|SY,SX", allow_hyphen_values = true)]
    pub position_scale: Option<String>,

    /// Sinusoidal: interleaved (sin, cos per pair) or split (all sin, then all cos).
    /// rope-apply: interleaved pairs (2i, 2i+1) as Llama, or half pairs (i, i+dim/2) as HF.
    /// rope-2d-axial: each value twice in a row (interleaved) or the row twice (half); without
    /// it, once. Interleaved unless given
    #[arg(long, value_enum, value_name = "LAYOUT")]
    pub layout: Option<LayoutArg>,

    /// Frequency spacing: vaswani base^(-2i/dim) or t2t base^(-i/max(dim/2-1, 1))
    #[arg(long, value_enum, value_name = "SPACING", default_value_t = Spacing::Vaswani)]
    pub spacing: Spacing,

    /// Sinusoidal kinds: which of each frequency's sine and cosine comes first, in the pair or
    /// as the first half (cos: diffusers flip_sin_to_cos=True, MLX cos_first=True)
    #[arg(long, value_enum, value_name = "WHICH", default_value_t = FirstOfPair::Sin)]
    pub first: FirstOfPair,

    /// Sinusoidal kinds: every value multiplied by A, a positive number (x-transformers
    /// ScaledSinusoidalEmbedding: dim^-0.5; MLX: sqrt(2/dim)); dot products by A squared
    #[arg(
        long,
        value_name = "A",
        default_value_t = 1.0,
        allow_hyphen_values = true
    )]
    pub scale: f64,

    /// rope-cos-sin: vllm ([seq, R]: every cosine, then every sine; vLLM's cos_sin_cache) or
    /// pairs ([seq, R/2, 2] (cos, sin): torchtune's cache, Meta's view_as_real(freqs_cis))
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = CacheFormat::Vllm)]
    pub format: CacheFormat,

    /// dot-decay: the row whose dot product with every row is taken, 0 to seq-1
    #[arg(long, value_name = "ROW", default_value_t = 0)]
    pub anchor: i64,

    /// rope-apply: a [seq, dim] <f2, <f4 or <f8 .npy array to rotate; sincos-2d-resample: the
    /// [prefix + H*W, dim] position table to resample
    #[arg(long, value_name = "X.npy")]
    pub input: Option<PathBuf>,

    /// RoPE: rotate only the first R dimensions of a head (even, at most --dim; GPT-NeoX
    /// rotary_pct, HF partial_rotary_factor); the rest pass through
    #[arg(long, value_name = "R")]
    pub rotary_dim: Option<i64>,

    /// RoPE: rotary width as a fraction of --dim, R = int(dim * F), as HF's
    /// partial_rotary_factor (0 < F <= 1)
    #[arg(long, value_name = "F", allow_hyphen_values = true)]
    pub partial_rotary_factor: Option<f64>,

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

    /// RoPE kinds: the inverse frequencies themselves, in place of base^(-2i/R) and any
    /// scaling (LongRoPE's rescaled ones, rotary-embedding-torch's pixel frequencies, learned
    /// ones): a comma list or a 1-D .npy; the rotary width is twice their count
    #[arg(long, value_name = "LIST|F.npy", allow_hyphen_values = true)]
    pub inv_freq: Option<String>,

    /// longrope: one rescale factor per rotated pair, used beyond
    /// --original-max-position-embeddings: a comma list or a 1-D .npy file
    #[arg(long, value_name = "LIST|F.npy", allow_hyphen_values = true)]
    pub long_factor: Option<String>,

    /// longrope: the factors used within --original-max-position-embeddings
    #[arg(long, value_name = "LIST|F.npy", allow_hyphen_values = true)]
    pub short_factor: Option<String>,

    /// alibi: causal (keys after the query masked with -inf; the default) or symmetric (both
    /// directions biased); sincos-2d-resample: bicubic (timm's default) or bilinear
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

    /// patch-distance: how the distance between patch centres is measured
    #[arg(long, value_enum, value_name = "METRIC", default_value_t = DistanceMetric::Euclidean)]
    pub metric: DistanceMetric,

    /// rope-2d-axial (default 100) and rope-axes (default 10000, or --base): frequency base, a
    /// finite number greater than 1
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    pub theta: Option<f64>,

    /// rope-axes: each token's position on each axis, a [seq, axes] .npy (integer or floating
    /// point, used exactly as stored; [axes, seq] is read too), e.g. Qwen2-VL's get_rope_index
    #[arg(long, value_name = "IDS.npy", conflicts_with = "grid")]
    pub ids: Option<PathBuf>,

    /// rope-axes: the positions of a T,H,W grid of tokens in raster order (the last axis
    /// fastest), each axis counting from 0 (any number of axes: H,W too)
    #[arg(long, value_name = "T,H,W")]
    pub grid: Option<String>,

    /// rope-axes: Flux's axes_dim, the width of each axis's own RoPE, e.g. 16,56,56
    #[arg(long, value_name = "D0,D1,...", conflicts_with = "mrope_section")]
    pub axes_dim: Option<String>,

    /// rope-axes: Qwen2-VL's mrope_section, how many of --dim's pairs each axis turns, e.g.
    /// 16,24,24 (time, height, width)
    #[arg(long, value_name = "S0,S1,...")]
    pub mrope_section: Option<String>,

    /// rope-axes, rope-2d-axial: angles (the default), cos or sin, laid out as --layout says
    /// (interleaved: each angle twice in a row, Flux, timm; half: the row of angles twice,
    /// Qwen2-VL)
    #[arg(long, value_enum, value_name = "VALUES", default_value_t = AxesValues::Angles)]
    pub values: AxesValues,

    /// rope-2d-axial: which coordinate the first half of the angles turns with: xy (rope-vit,
    /// HunyuanDiT: x first) or yx (timm's 'ij' grids, rotary-embedding-torch's
    /// get_axial_freqs(H, W): y first)
    #[arg(long, value_enum, value_name = "ORDER", default_value_t = crate::encoding::rope2d::AxisOrder::Xy)]
    pub axis_order: crate::encoding::rope2d::AxisOrder,

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

    /// sincos-2d-resample: torch's anti-aliased path (PIL's kernel stretched when shrinking;
    /// bicubic with a = -0.5 instead of -0.75). timm's own default is true
    #[arg(
        long,
        value_name = "BOOL",
        default_value_t = false,
        action = clap::ArgAction::Set,
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    pub antialias: bool,

    /// Zero row K of the table (fairseq's padding row), 0 to rows-1; 2-D real tables
    #[arg(long, value_name = "K")]
    pub zero_row: Option<i64>,

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

    /// rope-2d-mixed: a [2, dim/2] <f2, <f4 or <f8 .npy array, row 0 theta_x, row 1 theta_y
    #[arg(long, value_name = "F.npy")]
    pub freqs: Option<PathBuf>,

    /// t5-buckets: number of buckets (4 or more when bidirectional, 2 or more otherwise)
    #[arg(long, value_name = "N", default_value_t = 32)]
    pub num_buckets: i64,

    /// t5-buckets: distances from here on share the last bucket; above num-buckets/4
    /// (bidirectional) or num-buckets/2
    #[arg(long, value_name = "N", default_value_t = 128)]
    pub max_distance: i64,

    /// t5-buckets: true for encoder attention (both directions), false for decoder
    /// (also accepted: yes/no, 1/0, in any case)
    #[arg(
        long,
        value_name = "BOOL",
        default_value_t = true,
        action = clap::ArgAction::Set,
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    pub bidirectional: bool,

    /// relative-clip: the clipping distance K, 0 to 1073741824 (required)
    #[arg(long, value_name = "K")]
    pub max_relative: Option<i64>,

    /// Arithmetic: exact (f64) or torch-f32, every step as PyTorch's CPU kernels round it in
    /// float32 (frequencies, torch.outer(pos, inv_freq), sin/cos), for sinusoidal, sincos-2d
    /// (timm), the RoPE kinds and the ALiBi slopes; for rope-cache-error and rope-score-drift, the
    /// type the model computes in: f32 (the default), bf16 or f16
    #[arg(long, value_enum, value_name = "ARITH", default_value_t = ArithmeticArg::Exact)]
    pub arith: ArithmeticArg,

    /// rope-cache-error: cast the positions to bf16 or f16 before the product, as code that
    /// builds position ids in the model's dtype does (bfloat16 positions above 256 collide)
    #[arg(long, value_enum, value_name = "TYPE")]
    pub positions_in: Option<crate::encoding::precision::ComputeType>,

    /// rope-score-drift: the offset D between query and key (the query at n + D), 0 to
    /// 2^24 - seq
    #[arg(long, value_name = "D")]
    pub offset: Option<i64>,

    /// rope-score-drift: q and k drawn uniformly from [-1, 1) with this seed (default: all
    /// ones)
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,

    /// With --arith torch-f32: how the frequencies are formed, pow as Hugging Face, Meta and
    /// timm (1 / base ** (2i/d)) or exp as the Annotated Transformer and fairseq
    /// (exp(2i * -(log(base) / d))); default pow
    #[arg(long, value_enum, value_name = "FORM")]
    pub freq_form: Option<FreqForm>,

    /// Float width of real tables (index tables are always int32 <i4)
    #[arg(long, value_enum, value_name = "DTYPE", default_value_t = RealDtype::F32)]
    pub dtype: RealDtype,

    /// Engine that computes the table: cpu (f64, the reference) or gpu (f32 compute shaders,
    /// within 2e-6 of cpu; without a usable adapter the CPU engine serves instead)
    #[arg(long, value_enum, value_name = "ENGINE", default_value_t = Backend::Cpu)]
    pub backend: Backend,

    /// Say on stderr which engine ran, the table's shape and how long it took
    #[arg(short, long)]
    pub verbose: bool,

    /// Compute a table estimated to take more than 10 minutes here (refused otherwise, with
    /// the estimate)
    #[arg(long)]
    pub yes: bool,

    /// No progress bar (shown on stderr while a table is written, when it is a terminal)
    #[arg(long)]
    pub quiet: bool,
}

const TABLE_NOTES: &str = "\
Notes:
  Positions are start, start+1, ..., start+seq-1. Grids are raster order: patch k sits at
  column k % grid-w, row k / grid-w. Tables are computed in f64 and written as <f4 unless
  --dtype f64; t5-buckets and relative-clip are <i4. docs/tables.md gives every formula and
  the reference implementation each table matches.

  Bad input exits with status 2 and one line on stderr, and writes no file.

Examples:
  poslab table sinusoidal --seq 2048 --dim 512 -o pe.npy
  poslab table rope-angles --seq 4096 --dim 128 --base 500000 -o angles.npy --dtype f64
  poslab table rope-unseen --seq 16384 --dim 128 --train-len 4096 --scaling linear --factor 4 -o u.npy
  poslab table alibi --heads 12 --seq 128 --mode symmetric --head 3 -o head3.csv
  poslab table sincos-2d --grid-h 14 --grid-w 14 --dim 768 -o mae.npy";

/// Both layout families share `--layout`; each kind accepts its own two.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LayoutArg {
    Interleaved,
    Split,
    Half,
}

impl From<SinusoidalLayout> for LayoutArg {
    fn from(layout: SinusoidalLayout) -> Self {
        match layout {
            SinusoidalLayout::Interleaved => Self::Interleaved,
            SinusoidalLayout::Split => Self::Split,
        }
    }
}

impl From<RopeLayout> for LayoutArg {
    fn from(layout: RopeLayout) -> Self {
        match layout {
            RopeLayout::Interleaved => Self::Interleaved,
            RopeLayout::Half => Self::Half,
        }
    }
}

/// Engines `--backend` can pick.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    /// The f64 reference engine on the CPU
    Cpu,
    /// wgpu compute shaders (WGPU_BACKEND picks vulkan, gl, metal or dx12)
    Gpu,
}

/// A failure to report: one line, and the process's exit status.
#[derive(Debug)]
pub struct CliError {
    pub message: String,
    pub exit_code: i32,
}

impl CliError {
    /// Bad input: exit status 2.
    pub(crate) fn usage(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            exit_code: 2,
        }
    }

    /// A failure while working (a write that failed half way): exit status 1.
    pub(crate) fn runtime(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            exit_code: 1,
        }
    }
}

impl From<ParamError> for CliError {
    fn from(error: ParamError) -> Self {
        CliError::usage(error.to_string())
    }
}

impl TableArgs {
    /// The arithmetic of `--arith` and `--freq-form`.
    pub fn arithmetic(&self) -> Result<Arithmetic, CliError> {
        if self.kind.is_precision_lab() {
            // Exact is the default, float32 for these (an explicit --arith exact is refused by
            // check_options_apply).
            let compute = match self.arith {
                ArithmeticArg::Exact => Some(crate::encoding::precision::ComputeType::F32),
                other => other.compute_type(),
            };
            return match compute {
                // Its table emulates the type itself: computed exactly otherwise.
                Some(_) if self.freq_form.is_none() => Ok(Arithmetic::Exact),
                Some(_) => Err(CliError::usage(
                    "--freq-form applies only with --arith torch-f32; the precision lab forms frequencies as Hugging Face does",
                )),
                None => Err(CliError::usage(format!(
                    "--arith {} does not apply to {}: give the type the model computes in, f32, bf16 or f16",
                    self.arith
                        .to_possible_value()
                        .map(|v| v.get_name().to_owned())
                        .unwrap_or_default(),
                    kind_name(self.kind)
                ))),
            };
        }
        if let Some(compute) = self.arith.compute_type() {
            return Err(CliError::usage(format!(
                "--arith {} applies to rope-cache-error and rope-score-drift (the precision lab); {} takes exact or torch-f32",
                compute_name(compute),
                kind_name(self.kind)
            )));
        }
        if self.arith == ArithmeticArg::Exact && self.freq_form.is_some() {
            return Err(CliError::usage(
                "--freq-form applies only with --arith torch-f32 (the exact table has one form)",
            ));
        }
        Ok(self.arith.with_form(self.freq_form.unwrap_or_default()))
    }
}

/// Which options each kind reads, by clap id (the field name). `output`, `backend` and
/// `verbose` apply to every kind.
pub(crate) fn options_of(kind: Kind) -> &'static [&'static str] {
    // The RoPE kinds' options beyond the textbook ones; a scaling's own parameters (--factor
    // and the rest) are checked against the scaling chosen in check_options_apply.
    const ROTARY: &str = "rotary_dim";
    const FACTOR: &str = "partial_rotary_factor";
    const SCALING: &str = "scaling";
    const SINUSOIDAL: &[&str] = &[
        "seq",
        "dim",
        "base",
        "max_period",
        "start",
        "layout",
        "spacing",
        "first",
        "scale",
        "dtype",
    ];
    match kind {
        Kind::Sinusoidal => &[
            "seq",
            "dim",
            "base",
            "max_period",
            "start",
            "positions",
            "position_scale",
            "layout",
            "spacing",
            "first",
            "scale",
            "dtype",
            "arith",
            "freq_form",
        ],
        Kind::Similarity => SINUSOIDAL,
        Kind::DotDecay => &[
            "seq",
            "dim",
            "base",
            "max_period",
            "start",
            "layout",
            "spacing",
            "first",
            "scale",
            "anchor",
            "dtype",
        ],
        Kind::RopeInvFreq => &[
            "dim",
            "base",
            "seq",
            "dtype",
            "arith",
            "freq_form",
            ROTARY,
            "inv_freq",
            FACTOR,
            SCALING,
        ],
        Kind::RopeAttentionFactor => &["dim", "base", "dtype", ROTARY, "inv_freq", FACTOR, SCALING],
        Kind::RopeAngles => &[
            "seq",
            "dim",
            "base",
            "start",
            "positions",
            "position_scale",
            "dtype",
            "arith",
            "freq_form",
            ROTARY,
            "inv_freq",
            FACTOR,
            SCALING,
        ],
        Kind::RopeCos | Kind::RopeSin => &[
            "seq",
            "dim",
            "base",
            "start",
            "positions",
            "position_scale",
            "layout",
            "dtype",
            "arith",
            "freq_form",
            ROTARY,
            "inv_freq",
            FACTOR,
            SCALING,
        ],
        Kind::RopeAxes => &[
            "ids",
            "grid",
            "theta",
            "base",
            "axes_dim",
            "mrope_section",
            "dim",
            "values",
            "layout",
            "dtype",
            "arith",
            "freq_form",
        ],
        Kind::RopeCosSin => &[
            "seq",
            "dim",
            "base",
            "start",
            "positions",
            "position_scale",
            "format",
            "dtype",
            "arith",
            "freq_form",
            ROTARY,
            "inv_freq",
            FACTOR,
            SCALING,
        ],
        Kind::RopeUnseen => &[
            "seq",
            "dim",
            "base",
            "train_len",
            "dtype",
            ROTARY,
            FACTOR,
            SCALING,
        ],
        Kind::RopeApply => &[
            "input",
            "layout",
            "base",
            "start",
            "positions",
            "position_scale",
            "dtype",
            "arith",
            "freq_form",
            ROTARY,
            "inv_freq",
            FACTOR,
            SCALING,
        ],
        Kind::AlibiSlopes => &[
            "heads",
            "seq",
            "train_len",
            "slope_scaling",
            "dtype",
            "arith",
        ],
        Kind::Alibi => &[
            "heads",
            "seq",
            "queries",
            "zero_heads",
            "mode",
            "form",
            "head",
            "train_len",
            "slope_scaling",
            "dtype",
            "arith",
        ],
        Kind::Alibi2d => &["heads", "grid_h", "grid_w", "head", "dtype"],
        Kind::PatchDistance => &["grid_h", "grid_w", "metric", "dtype"],
        Kind::SinCos2d => &[
            "grid_h",
            "grid_w",
            "dim",
            "base",
            "order",
            "raster",
            "prefix_rows",
            "position_scale",
            "dtype",
            "arith",
            "freq_form",
        ],
        Kind::SinCos2dResample => &[
            "input",
            "from_grid",
            "grid_h",
            "grid_w",
            "prefix_rows",
            "mode",
            "antialias",
            "dim",
            "base",
            "order",
            "raster",
            "dtype",
        ],
        Kind::Rope2dAxial => &[
            "grid_h",
            "grid_w",
            "dim",
            "theta",
            "values",
            "layout",
            "axis_order",
            "position_scale",
            "dtype",
        ],
        Kind::Rope2dMixed => &["grid_h", "grid_w", "freqs", "dtype"],
        Kind::T5Buckets => &["seq", "num_buckets", "max_distance", "bidirectional"],
        Kind::RelativeClip => &["seq", "max_relative"],
        Kind::Binary => &["seq", "dim", "start", "dtype"],
        Kind::RopeCacheError => &[
            "seq",
            "dim",
            "base",
            "start",
            "arith",
            "positions_in",
            "dtype",
            ROTARY,
            "inv_freq",
            FACTOR,
            SCALING,
        ],
        Kind::RopeScoreDrift => &["seq", "dim", "base", "offset", "arith", "seed", "dtype"],
    }
}

/// How `--arith` spells a compute type.
fn compute_name(compute: crate::encoding::precision::ComputeType) -> &'static str {
    use crate::encoding::precision::ComputeType;
    match compute {
        ComputeType::F32 => "f32",
        ComputeType::Bf16 => "bf16",
        ComputeType::F16 => "f16",
    }
}

pub(crate) fn kind_name(kind: Kind) -> String {
    kind.to_possible_value()
        .map(|v| v.get_name().to_owned())
        .unwrap_or_default()
}

/// A tolerance from `--atol` and `--rtol`, each 0 or more.
pub(crate) fn tolerance_option(atol: f64, rtol: f64) -> Result<crate::check::Tolerance, CliError> {
    for (name, value) in [("atol", atol), ("rtol", rtol)] {
        if !(value.is_finite() && value >= 0.0) {
            return Err(CliError::usage(format!(
                "--{name} {value} is not allowed: use a number 0 or greater"
            )));
        }
    }
    Ok(crate::check::Tolerance {
        abs: atol,
        rel: rtol,
    })
}

pub(crate) fn flag(id: &str) -> String {
    format!("--{}", id.replace('_', "-"))
}

/// sincos-2d-resample's options for the table it makes itself when no --input is given.
const RESAMPLED_SINCOS_OPTIONS: &[&str] = &["dim", "base", "order", "raster"];

/// Refuses an option the kind does not read, naming those it does.
pub(crate) fn check_options_apply(args: &TableArgs, matches: &ArgMatches) -> Result<(), CliError> {
    let kind = args.kind;
    const EVERY_KIND: &[&str] = &[
        "kind", "output", "backend", "verbose", "size", "repeats", "config", "zero_row", "yes",
        "quiet",
    ];
    let accepted = options_of(kind);
    let command = TableArgs::augment_args(clap::Command::new("table"));
    let given = command
        .get_arguments()
        .map(|arg| arg.get_id().as_str())
        .filter(|id| matches.value_source(id) == Some(ValueSource::CommandLine));
    if kind.is_precision_lab()
        && matches.value_source("arith") == Some(ValueSource::CommandLine)
        && matches.get_one::<ArithmeticArg>("arith") == Some(&ArithmeticArg::Exact)
    {
        return Err(CliError::usage(format!(
            "--arith exact does not apply to {}: it is what the table subtracts; give the type the model computes in, f32 (the default), bf16 or f16",
            kind_name(kind)
        )));
    }
    // The scaling in force: the command line's, or a --config's (Llama 3.1's llama3 takes
    // --factor even though no --scaling was typed).
    let scaling = accepted.contains(&"scaling").then_some(args.scaling);
    for id in given {
        let resampled_source_with_input = kind == Kind::SinCos2dResample
            && RESAMPLED_SINCOS_OPTIONS.contains(&id)
            && matches.value_source("input") == Some(ValueSource::CommandLine);
        if (EVERY_KIND.contains(&id) || accepted.contains(&id)) && !resampled_source_with_input {
            continue;
        }
        if kind == Kind::SinCos2dResample
            && RESAMPLED_SINCOS_OPTIONS.contains(&id)
            && matches.value_source("input") == Some(ValueSource::CommandLine)
        {
            return Err(CliError::usage(format!(
                "{} describes the sin-cos table resampled when no --input is given; with --input \
                 the table comes from the file",
                flag(id)
            )));
        }
        if let Some(scaling) = scaling
            && SCALING_OPTIONS.contains(&id)
        {
            if scaling.options().contains(&id) {
                continue;
            }
            let own: Vec<String> = scaling.options().iter().map(|id| flag(id)).collect();
            return Err(CliError::usage(format!(
                "{} does not apply to --scaling {}; its options are {}",
                flag(id),
                scaling.name(),
                if own.is_empty() {
                    "none".to_owned()
                } else {
                    own.join(" ")
                }
            )));
        }
        let reason = if id == "dtype" {
            " (it writes int32 <i4 indices)".to_owned()
        } else {
            String::new()
        };
        let list: Vec<String> = accepted.iter().map(|id| flag(id)).collect();
        return Err(CliError::usage(format!(
            "{} does not apply to {}{reason}; its options are {}",
            flag(id),
            kind_name(kind),
            list.join(" ")
        )));
    }
    // The inverse frequencies depend on the current length only under the scalings that
    // read it: elsewhere --seq would change nothing.
    if kind == Kind::RopeInvFreq
        && matches.value_source("seq") == Some(ValueSource::CommandLine)
        && !matches!(args.scaling, ScalingKind::Dynamic | ScalingKind::Longrope)
    {
        return Err(CliError::usage(format!(
            "--seq changes nothing for rope-inv-freq under --scaling {}: only dynamic and longrope read the current length",
            args.scaling.name()
        )));
    }
    Ok(())
}

/// What the options do to a computed table beyond its kind: ALiBi's slope scaling, then
/// `--zero-row`.
pub(crate) fn finish_table(
    table: Table,
    args: &TableArgs,
    spec: &TableSpec,
) -> Result<Table, CliError> {
    let table = match slope_scale(args, spec)? {
        Some(factor) => match table {
            Table::Real(values) => Table::Real(values.mapv(|v| v * factor)),
            index => index,
        },
        None => table,
    };
    zero_row(table, args.zero_row)
}

/// ALiBi's slope interpolation: `L / seq` when `--slope-scaling true` and `seq` exceeds
/// `--train-len L` (every slope, hence every bias, scales by it), else nothing.
pub(crate) fn slope_scale(args: &TableArgs, spec: &TableSpec) -> Result<Option<f64>, CliError> {
    if !args.slope_scaling {
        if matches!(spec, TableSpec::AlibiSlopes { .. }) && args.sizes.seq.is_some() {
            return Err(CliError::usage(
                "--seq applies to alibi-slopes only with --slope-scaling true (the slopes do not depend on the length otherwise)",
            ));
        }
        if args.train_len.is_some() && !matches!(spec, TableSpec::RopeUnseen(_)) {
            return Err(CliError::usage(
                "--train-len applies with --slope-scaling true (the length beyond which slopes shrink)",
            ));
        }
        return Ok(None);
    }
    let train = args.train_len.ok_or_else(|| {
        CliError::usage(
            "--slope-scaling true needs --train-len L, the length the model was trained on",
        )
    })?;
    let train = usize::try_from(train)
        .ok()
        .filter(|&l| l >= 1)
        .ok_or_else(|| {
            CliError::usage(format!("--train-len {train} is not allowed: use 1 or more"))
        })?;
    let seq = match spec {
        TableSpec::Alibi { params, .. } | TableSpec::AlibiWindow { params, .. } => params.seq,
        TableSpec::AlibiKeys { seq, .. } => *seq,
        _ => args
            .sizes.seq
            .and_then(|n| usize::try_from(n).ok())
            .filter(|&n| n >= 1)
            .ok_or_else(|| {
                CliError::usage(
                    "--slope-scaling true on alibi-slopes needs --seq, the length the slopes are for",
                )
            })?,
    };
    Ok(encoding::alibi::slope_scale(train, seq))
}

/// `table` with row `row` (of a 2-D real table) set to zero, as fairseq's sinusoidal
/// embedding keeps its padding row.
pub(crate) fn zero_row(table: Table, row: Option<i64>) -> Result<Table, CliError> {
    let index = matches!(table, Table::Index(_));
    let Some(row) = zero_row_index(row, index, table.shape())? else {
        return Ok(table);
    };
    let Table::Real(mut values) = table else {
        unreachable!("zero_row_index refuses index tables")
    };
    values.index_axis_mut(ndarray::Axis(0), row).fill(0.0);
    Ok(Table::Real(values))
}

/// The row `--zero-row` names, checked against a table of `shape` (real unless `index`).
pub(crate) fn zero_row_index(
    row: Option<i64>,
    index: bool,
    shape: &[usize],
) -> Result<Option<usize>, CliError> {
    let Some(row) = row else {
        return Ok(None);
    };
    if index {
        return Err(CliError::usage(
            "--zero-row applies to real tables; this one holds int32 indices",
        ));
    }
    if shape.len() != 2 {
        return Err(CliError::usage(format!(
            "--zero-row applies to 2-D tables; this one has shape {shape:?}"
        )));
    }
    let rows = shape[0];
    usize::try_from(row)
        .ok()
        .filter(|&r| r < rows)
        .map(Some)
        .ok_or_else(|| {
            CliError::usage(format!(
                "--zero-row {row} is not allowed: the table has rows 0 to {}",
                rows - 1
            ))
        })
}

pub(crate) fn engine_error(error: EngineError) -> CliError {
    match error {
        EngineError::Param(p) => CliError::from(p),
        EngineError::Memory(_)
        | EngineError::Window(_)
        | EngineError::Arithmetic(_)
        | EngineError::TooLarge(_) => CliError::usage(error.to_string()),
        // Asking the GPU for a kind only the CPU computes is the user's to change.
        EngineError::Gpu(engine::gpu::GpuError::CpuOnly(..)) => CliError::usage(error.to_string()),
        EngineError::Gpu(_) => CliError::runtime(error.to_string()),
    }
}

fn wrong_layout(kind: Kind, allowed: &str) -> CliError {
    let given = match kind {
        Kind::RopeApply | Kind::RopeCos | Kind::RopeSin | Kind::RopeAxes | Kind::Rope2dAxial => {
            "split"
        }
        _ => "half",
    };
    CliError::usage(format!(
        "--layout {given} is not allowed for {}: use {allowed}",
        kind_name(kind)
    ))
}

/// Joins clap's multi-line message into one line, leaving out the usage and the help hint.
/// A value as a message quotes it: at most 60 characters (a 100,000-character value is not
/// echoed whole), control characters escaped.
pub(crate) fn echo(value: &str) -> String {
    let cut: String = value.chars().take(60).collect();
    let shown = if cut.len() < value.len() {
        format!("{cut}… ({} characters)", value.chars().count())
    } else {
        cut
    };
    format!("\"{}\"", crate::import::printable(&shown))
}

pub(crate) fn one_line(message: &str) -> String {
    message
        .lines()
        .take_while(|line| !line.starts_with("Usage:"))
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with("For more information"))
        .collect::<Vec<_>>()
        .join(" ")
}
