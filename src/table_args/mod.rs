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
use crate::encoding::context::{RopeModel, UnseenParams};
use crate::encoding::grid::{DistanceMetric, GridParams, Raster, SinCos2dParams};
use crate::encoding::relative::{RelativeClipParams, T5BucketParams};
use crate::encoding::resample::{ResampleMode, ResampleParams};
use crate::encoding::rope::{CachePart, RopeLayout, RopeParams};
use crate::encoding::rope_scaling::{RopeFrequencies, RopeScaling, ScalingKind};
use crate::encoding::rope2d::AxialParams;
use crate::encoding::sinusoidal::{SinusoidalLayout, SinusoidalParams, Spacing};
use crate::encoding::torch_f32::{Arithmetic, ArithmeticArg, FreqForm};
use crate::encoding::{self, ParamError};
use crate::engine::{self, EngineError, RealDtype, Table, TableSpec};
use crate::import;

pub mod config;

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

    /// Number of positions, 1 to 1073741824 (required by sequence tables)
    #[arg(long, value_name = "N")]
    pub seq: Option<i64>,

    /// Embedding or head dimension: even for sin/cos pairs and RoPE, a multiple of 4 for 2D
    /// tables, 1 to 1048576 bits for binary (required where used)
    #[arg(long, value_name = "D")]
    pub dim: Option<i64>,

    /// Frequency base, a finite number greater than 1
    #[arg(
        long,
        value_name = "B",
        default_value_t = 10_000.0,
        allow_hyphen_values = true
    )]
    pub base: f64,

    /// First position: rows are positions start, start+1, ..., start+seq-1 (0 to 2^53-1-seq)
    #[arg(long, value_name = "P", default_value_t = 0)]
    pub start: i64,

    /// Sinusoidal: interleaved (sin, cos per pair) or split (all sin, then all cos).
    /// rope-apply: interleaved pairs (2i, 2i+1) as Llama, or half pairs (i, i+dim/2) as HF
    #[arg(long, value_enum, value_name = "LAYOUT", default_value_t = LayoutArg::Interleaved)]
    pub layout: LayoutArg,

    /// Frequency spacing: vaswani base^(-2i/dim) or t2t base^(-i/max(dim/2-1, 1))
    #[arg(long, value_enum, value_name = "SPACING", default_value_t = Spacing::Vaswani)]
    pub spacing: Spacing,

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

    /// longrope: one rescale factor per rotated pair, used beyond
    /// --original-max-position-embeddings: a comma list or a 1-D .npy file
    #[arg(long, value_name = "LIST|F.npy", allow_hyphen_values = true)]
    pub long_factor: Option<String>,

    /// longrope: the factors used within --original-max-position-embeddings
    #[arg(long, value_name = "LIST|F.npy", allow_hyphen_values = true)]
    pub short_factor: Option<String>,

    /// Number of attention heads, 1 to 65536 (required by ALiBi tables)
    #[arg(long, value_name = "H")]
    pub heads: Option<i64>,

    /// alibi: causal (keys after the query masked with -inf; the default) or symmetric (both
    /// directions biased); sincos-2d-resample: bicubic (timm's default) or bilinear
    #[arg(long, value_enum, value_name = "MODE")]
    pub mode: Option<ModeArg>,

    /// ALiBi as stored: relative [heads, seq, seq] -m|i-j|, or per key [heads, 1, seq] as
    /// BLOOM (m*j) and MPT (m*(j-(seq-1))) store it (the same attention after softmax)
    #[arg(long, value_enum, value_name = "FORM", default_value_t = AlibiForm::Relative)]
    pub form: AlibiForm,

    /// Write only this head's [seq, seq] or [P, P] slice of an ALiBi table, 0 to heads-1
    /// (needed for .csv, which holds 2-D tables)
    #[arg(long, value_name = "H")]
    pub head: Option<i64>,

    /// Rows of patches, 1 to 65536 (required by 2D tables)
    #[arg(long, value_name = "N")]
    pub grid_h: Option<i64>,

    /// Columns of patches, 1 to 65536 (required by 2D tables)
    #[arg(long, value_name = "N")]
    pub grid_w: Option<i64>,

    /// patch-distance: how the distance between patch centres is measured
    #[arg(long, value_enum, value_name = "METRIC", default_value_t = DistanceMetric::Euclidean)]
    pub metric: DistanceMetric,

    /// rope-2d-axial: frequency base, a finite number greater than 1
    #[arg(
        long,
        value_name = "T",
        default_value_t = 100.0,
        allow_hyphen_values = true
    )]
    pub theta: f64,

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
    /// float32 (frequencies, torch.outer(pos, inv_freq), sin/cos), for sinusoidal,
    /// rope-inv-freq, rope-angles, rope-apply
    #[arg(long, value_enum, value_name = "ARITH", default_value_t = ArithmeticArg::Exact)]
    pub arith: ArithmeticArg,

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
    const SINUSOIDAL: &[&str] = &["seq", "dim", "base", "start", "layout", "spacing", "dtype"];
    match kind {
        Kind::Sinusoidal => &[
            "seq",
            "dim",
            "base",
            "start",
            "layout",
            "spacing",
            "dtype",
            "arith",
            "freq_form",
        ],
        Kind::Similarity => SINUSOIDAL,
        Kind::DotDecay => &[
            "seq", "dim", "base", "start", "layout", "spacing", "anchor", "dtype",
        ],
        Kind::RopeInvFreq => &[
            "dim",
            "base",
            "seq",
            "dtype",
            "arith",
            "freq_form",
            ROTARY,
            FACTOR,
            SCALING,
        ],
        Kind::RopeAttentionFactor => &["dim", "base", "dtype", ROTARY, FACTOR, SCALING],
        Kind::RopeAngles => &[
            "seq",
            "dim",
            "base",
            "start",
            "dtype",
            "arith",
            "freq_form",
            ROTARY,
            FACTOR,
            SCALING,
        ],
        Kind::RopeCos | Kind::RopeSin => &[
            "seq",
            "dim",
            "base",
            "start",
            "layout",
            "dtype",
            "arith",
            "freq_form",
            ROTARY,
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
            "dtype",
            "arith",
            "freq_form",
            ROTARY,
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
            "dtype",
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
        Kind::Rope2dAxial => &["grid_h", "grid_w", "dim", "theta", "dtype"],
        Kind::Rope2dMixed => &["grid_h", "grid_w", "freqs", "dtype"],
        Kind::T5Buckets => &["seq", "num_buckets", "max_distance", "bidirectional"],
        Kind::RelativeClip => &["seq", "max_relative"],
        Kind::Binary => &["seq", "dim", "start", "dtype"],
    }
}

pub(crate) fn kind_name(kind: Kind) -> String {
    kind.to_possible_value()
        .map(|v| v.get_name().to_owned())
        .unwrap_or_default()
}

pub(crate) fn flag(id: &str) -> String {
    format!("--{}", id.replace('_', "-"))
}

/// sincos-2d-resample's options for the table it makes itself when no --input is given.
const RESAMPLED_SINCOS_OPTIONS: &[&str] = &["dim", "base", "order", "raster"];

/// Refuses an option the kind does not read, naming those it does.
pub(crate) fn check_options_apply(kind: Kind, matches: &ArgMatches) -> Result<(), CliError> {
    const EVERY_KIND: &[&str] = &[
        "kind", "output", "backend", "verbose", "size", "repeats", "config", "zero_row",
    ];
    let accepted = options_of(kind);
    let command = TableArgs::augment_args(clap::Command::new("table"));
    let given = command
        .get_arguments()
        .map(|arg| arg.get_id().as_str())
        .filter(|id| matches.value_source(id) == Some(ValueSource::CommandLine));
    let scaling = accepted
        .contains(&"scaling")
        .then(|| matches.get_one::<ScalingKind>("scaling").copied())
        .flatten();
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
        if matches!(spec, TableSpec::AlibiSlopes { .. }) && args.seq.is_some() {
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
        TableSpec::Alibi { params, .. } => params.seq,
        TableSpec::AlibiKeys { seq, .. } => *seq,
        _ => args
            .seq
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

/// Every scaling parameter, by clap id.
const SCALING_OPTIONS: &[&str] = &[
    "factor",
    "original_max_position_embeddings",
    "max_position_embeddings",
    "low_freq_factor",
    "high_freq_factor",
    "beta_fast",
    "beta_slow",
    "mscale",
    "mscale_all_dim",
    "attention_factor",
    "truncate",
    "long_factor",
    "short_factor",
];

/// The rotary width and scaling of the RoPE options, for a head of `dim`.
fn rope_frequencies(args: &TableArgs, dim: usize) -> Result<RopeFrequencies, CliError> {
    let rotary_dim = match (args.rotary_dim, args.partial_rotary_factor) {
        (Some(_), Some(_)) => {
            return Err(CliError::usage(
                "--rotary-dim and --partial-rotary-factor both set the rotary width: give one",
            ));
        }
        (Some(r), None) => Some(non_negative("rotary_dim", r)?),
        (None, Some(f)) => {
            if !(f.is_finite() && f > 0.0 && f <= 1.0) {
                return Err(CliError::usage(format!(
                    "--partial-rotary-factor {f} is not allowed: use a number above 0 and at most 1"
                )));
            }
            // Python's int(dim * factor).
            Some((dim as f64 * f) as usize)
        }
        (None, None) => None,
    };
    let positions =
        |id: &'static str, value: Option<i64>| value.map(|v| non_negative(id, v)).transpose();
    let list = |id: &'static str, value: &Option<String>| {
        value
            .as_deref()
            .map(|text| factor_list(id, text))
            .transpose()
    };
    Ok(RopeFrequencies {
        rotary_dim,
        scaling: RopeScaling {
            kind: args.scaling,
            factor: args.factor,
            original_max_position_embeddings: positions(
                "original_max_position_embeddings",
                args.original_max_position_embeddings,
            )?,
            max_position_embeddings: positions(
                "max_position_embeddings",
                args.max_position_embeddings,
            )?,
            low_freq_factor: args.low_freq_factor,
            high_freq_factor: args.high_freq_factor,
            beta_fast: args.beta_fast,
            beta_slow: args.beta_slow,
            mscale: args.mscale,
            mscale_all_dim: args.mscale_all_dim,
            attention_factor: args.attention_factor,
            truncate: args.truncate,
            long_factor: list("long_factor", &args.long_factor)?,
            short_factor: list("short_factor", &args.short_factor)?,
        },
    })
}

/// A LongRoPE factor list: numbers separated by commas, or a 1-D `.npy` file.
fn factor_list(id: &'static str, text: &str) -> Result<Vec<f64>, CliError> {
    let looks_like_numbers = text
        .chars()
        .all(|c| c.is_ascii_digit() || ".,-+eE ".contains(c));
    if looks_like_numbers {
        return text
            .split(',')
            .map(|part| {
                part.trim().parse::<f64>().map_err(|_| {
                    CliError::usage(format!(
                        "{} {text:?} is not allowed: \"{}\" is not a number (give numbers separated by commas, or a 1-D .npy file)",
                        flag(id),
                        part.trim()
                    ))
                })
            })
            .collect();
    }
    let path = Path::new(text);
    let values = read_input_1d(id, path)?;
    Ok(values)
}

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

fn mode_name(mode: ModeArg) -> String {
    mode.to_possible_value()
        .map(|v| v.get_name().to_owned())
        .unwrap_or_default()
}

/// ALiBi's `--mode`, causal unless given.
fn alibi_mode(args: &TableArgs) -> Result<AlibiMode, CliError> {
    match args.mode {
        None | Some(ModeArg::Causal) => Ok(AlibiMode::Causal),
        Some(ModeArg::Symmetric) => Ok(AlibiMode::Symmetric),
        Some(other) => Err(CliError::usage(format!(
            "--mode {} does not apply to {}: give causal or symmetric",
            mode_name(other),
            kind_name(args.kind)
        ))),
    }
}

/// sincos-2d-resample's `--mode`, bicubic unless given.
fn resample_mode(args: &TableArgs) -> Result<ResampleMode, CliError> {
    match args.mode {
        None | Some(ModeArg::Bicubic) => Ok(ResampleMode::Bicubic),
        Some(ModeArg::Bilinear) => Ok(ResampleMode::Bilinear),
        Some(other) => Err(CliError::usage(format!(
            "--mode {} does not apply to {}: give bicubic or bilinear",
            mode_name(other),
            kind_name(args.kind)
        ))),
    }
}

/// `--from-grid HxW`.
fn parse_grid_size(text: &str) -> Result<(usize, usize), CliError> {
    let bad = || {
        CliError::usage(format!(
            "--from-grid {text:?} is not allowed: give rows x columns of patches as HxW, each \
             1 to 65536 (e.g. 14x14)"
        ))
    };
    let (h, w) = text.split_once(['x', 'X']).ok_or_else(bad)?;
    let side = |part: &str| -> Result<usize, CliError> {
        let n: usize = part.trim().parse().map_err(|_| bad())?;
        if encoding::GRID_SIDE_RANGE.contains(&n) {
            Ok(n)
        } else {
            Err(bad())
        }
    };
    Ok((side(h)?, side(w)?))
}

/// The square grid an input's patch rows make, as timm assumes when no old size is given.
fn square_grid_of(rows: usize, prefix_rows: usize) -> Result<(usize, usize), CliError> {
    let patches = rows.checked_sub(prefix_rows).ok_or_else(|| {
        CliError::usage(format!(
            "--prefix-rows {prefix_rows} is not allowed: the --input table has only {rows} rows"
        ))
    })?;
    let side = (patches as f64).sqrt().round() as usize;
    if side >= 1 && side * side == patches {
        Ok((side, side))
    } else {
        Err(CliError::usage(format!(
            "the --input table has {patches} patch rows (after {prefix_rows} prefix rows), \
             not a square: give --from-grid HxW"
        )))
    }
}

/// Reads an integer option that must be present, checking it is not negative.
fn required(
    kind: Kind,
    id: &'static str,
    value: Option<i64>,
    meaning: &str,
) -> Result<usize, CliError> {
    match value {
        Some(v) => usize::try_from(v)
            .map_err(|_| CliError::usage(format!("{} {v} is not allowed: {meaning}", flag(id)))),
        None => Err(CliError::usage(format!(
            "{} is required for {}: {meaning}",
            flag(id),
            kind_name(kind)
        ))),
    }
}

fn non_negative(id: &'static str, value: i64) -> Result<usize, CliError> {
    usize::try_from(value).map_err(|_| {
        CliError::usage(format!(
            "{} {value} is not allowed: must be 0 or more",
            flag(id)
        ))
    })
}

/// Reads the arrays named by `--input` or `--freqs`, as 2-D f64 arrays.
fn read_input_1d(id: &'static str, path: &Path) -> Result<Vec<f64>, CliError> {
    let max_bytes = engine::available_memory_bytes().unwrap_or(u64::MAX);
    let array = import::read_npy_f64(path, max_bytes)
        .map_err(|e| CliError::usage(format!("{} {e}", flag(id))))?;
    if array.ndim() != 1 {
        return Err(CliError::usage(format!(
            "{} {} has shape {:?}; it must be a 1-D array of factors",
            flag(id),
            path.display(),
            array.shape()
        )));
    }
    Ok(array.iter().copied().collect())
}

fn read_input_2d(id: &'static str, path: &Path) -> Result<ndarray::Array2<f64>, CliError> {
    let max_bytes = engine::available_memory_bytes().unwrap_or(u64::MAX);
    let array = import::read_npy_f64(path, max_bytes)
        .map_err(|e| CliError::usage(format!("{} {e}", flag(id))))?;
    let shape = array.shape().to_vec();
    array.into_dimensionality::<Ix2>().map_err(|_| {
        let expected = if id == "input" {
            "[seq, dim]"
        } else {
            "[2, dim/2]"
        };
        CliError::usage(format!(
            "{} {} has shape {shape:?}; it must be a 2-D array {expected}",
            flag(id),
            path.display()
        ))
    })
}

/// The table named by `poslab table`'s words (`KIND [options]`, no output needed), as the
/// Check view takes it: every check of the command line, and its one-line messages.
pub fn table_spec_from_words(words: &[String]) -> Result<TableSpec, String> {
    let command = TableArgs::augment_args(clap::Command::new("table").no_binary_name(true))
        .mut_arg("output", |output| output.required(false));
    let matches = command
        .try_get_matches_from(words)
        .map_err(|e| one_line(&e.render().to_string()))?;
    let mut args = TableArgs::from_arg_matches(&matches).map_err(|e| one_line(&e.to_string()))?;
    config::apply_config(&mut args, &matches).map_err(|e| e.message)?;
    for id in ["output", "backend", "dtype", "arith", "freq_form"] {
        if matches.value_source(id) == Some(ValueSource::CommandLine) {
            return Err(format!(
                "{} does not apply here: give the kind and its options",
                flag(id)
            ));
        }
    }
    check_options_apply(args.kind, &matches).map_err(|e| e.message)?;
    table_spec(&args).map_err(|e| e.message)
}

/// Builds the table's specification from the options, checking each as it is read.
pub(crate) fn table_spec(args: &TableArgs) -> Result<TableSpec, CliError> {
    let kind = args.kind;
    let seq = || {
        required(
            kind,
            "seq",
            args.seq,
            "the number of positions, 1 to 1073741824",
        )
    };
    let dim = |meaning: &str| required(kind, "dim", args.dim, meaning);
    let even_dim = || dim("the dimension, even, 2 to 1048576");
    let dim_of_4 = || dim("the dimension, a multiple of 4, 4 to 1048576");
    let heads = || required(kind, "heads", args.heads, "the number of heads, 1 to 65536");
    let start = || non_negative("start", args.start).map(|s| s as u64);
    let grid = || -> Result<GridParams, CliError> {
        Ok(GridParams {
            grid_h: required(kind, "grid_h", args.grid_h, "rows of patches, 1 to 65536")?,
            grid_w: required(
                kind,
                "grid_w",
                args.grid_w,
                "columns of patches, 1 to 65536",
            )?,
        })
    };
    let head = || args.head.map(|h| non_negative("head", h)).transpose();
    let sinusoidal = || -> Result<SinusoidalParams, CliError> {
        let layout = match args.layout {
            LayoutArg::Interleaved => SinusoidalLayout::Interleaved,
            LayoutArg::Split => SinusoidalLayout::Split,
            LayoutArg::Half => return Err(wrong_layout(kind, "interleaved or split")),
        };
        Ok(SinusoidalParams {
            seq: seq()?,
            dim: even_dim()?,
            base: args.base,
            start: start()?,
            layout,
            spacing: args.spacing,
        })
    };
    let spec = match kind {
        Kind::Sinusoidal => TableSpec::Sinusoidal(sinusoidal()?),
        Kind::DotDecay => TableSpec::DotDecay {
            params: sinusoidal()?,
            anchor: non_negative("anchor", args.anchor)?,
        },
        Kind::Similarity => TableSpec::Similarity(sinusoidal()?),
        Kind::RopeInvFreq => {
            let dim = even_dim()?;
            TableSpec::RopeInvFreq {
                dim,
                base: args.base,
                // The current length, for dynamic NTK and LongRoPE; 0 when not given.
                seq: args
                    .seq
                    .map(|n| non_negative("seq", n))
                    .transpose()?
                    .unwrap_or(0),
                freqs: rope_frequencies(args, dim)?,
            }
        }
        Kind::RopeAttentionFactor => {
            let dim = even_dim()?;
            TableSpec::RopeAttentionFactor {
                dim,
                base: args.base,
                freqs: rope_frequencies(args, dim)?,
            }
        }
        Kind::RopeAngles => {
            let dim = even_dim()?;
            TableSpec::RopeAngles {
                params: RopeParams {
                    seq: seq()?,
                    dim,
                    base: args.base,
                    start: start()?,
                },
                freqs: rope_frequencies(args, dim)?,
            }
        }
        Kind::RopeCos | Kind::RopeSin => {
            let layout = match args.layout {
                LayoutArg::Interleaved => RopeLayout::Interleaved,
                LayoutArg::Half => RopeLayout::Half,
                LayoutArg::Split => return Err(wrong_layout(kind, "half or interleaved")),
            };
            let dim = even_dim()?;
            TableSpec::RopeCache {
                params: RopeParams {
                    seq: seq()?,
                    dim,
                    base: args.base,
                    start: start()?,
                },
                freqs: rope_frequencies(args, dim)?,
                layout,
                part: if kind == Kind::RopeCos {
                    CachePart::Cos
                } else {
                    CachePart::Sin
                },
            }
        }
        Kind::RopeUnseen => {
            let dim = even_dim()?;
            let freqs = rope_frequencies(args, dim)?;
            let trained = args.train_len.ok_or_else(|| {
                CliError::usage(
                    "rope-unseen needs --train-len L, the length the model was trained on",
                )
            })?;
            let trained = usize::try_from(trained)
                .ok()
                .filter(|&l| l >= 2)
                .ok_or_else(|| {
                    CliError::usage(format!(
                        "--train-len {trained} is not allowed: use 2 or more"
                    ))
                })?;
            TableSpec::RopeUnseen(Box::new(UnseenParams {
                model: RopeModel {
                    name: String::new(),
                    head_dim: dim,
                    base: args.base,
                    rotary_dim: freqs.rotary_dim,
                    trained,
                    scaling: Default::default(),
                },
                freqs,
                seq: seq()?,
            }))
        }
        Kind::RopeApply => {
            let layout = match args.layout {
                LayoutArg::Interleaved => RopeLayout::Interleaved,
                LayoutArg::Half => RopeLayout::Half,
                LayoutArg::Split => return Err(wrong_layout(kind, "interleaved or half")),
            };
            // Check the cheap parameters before reading a possibly large file.
            encoding::check_base("base", args.base)?;
            let start = start()?;
            let path = args.input.as_deref().ok_or_else(|| {
                CliError::usage("--input is required for rope-apply: a [seq, dim] .npy array")
            })?;
            let input = read_input_2d("input", path)?;
            encoding::rope::check_apply_shape(input.shape()).map_err(|e| {
                CliError::usage(format!(
                    "--input {} has shape {}: {}",
                    path.display(),
                    e.value,
                    e.allowed
                ))
            })?;
            let freqs = rope_frequencies(args, input.ncols())?;
            TableSpec::RopeApply {
                input,
                layout,
                base: args.base,
                start,
                freqs,
            }
        }
        Kind::AlibiSlopes => TableSpec::AlibiSlopes { heads: heads()? },
        Kind::Alibi if args.form != AlibiForm::Relative => {
            if alibi_mode(args)? == AlibiMode::Symmetric {
                return Err(CliError::usage(
                    "--mode symmetric does not apply to --form bloom|mpt: those forms are causal (a decoder's mask hides later keys)",
                ));
            }
            TableSpec::AlibiKeys {
                heads: heads()?,
                seq: seq()?,
                form: args.form,
                head: head()?,
            }
        }
        Kind::Alibi => TableSpec::Alibi {
            params: AlibiParams {
                heads: heads()?,
                seq: seq()?,
                mode: alibi_mode(args)?,
            },
            head: head()?,
        },
        Kind::Alibi2d => TableSpec::Alibi2d {
            params: Alibi2dParams {
                heads: heads()?,
                grid: grid()?,
            },
            head: head()?,
        },
        Kind::PatchDistance => TableSpec::PatchDistance {
            grid: grid()?,
            metric: args.metric,
        },
        Kind::SinCos2d => TableSpec::SinCos2d(SinCos2dParams {
            grid: grid()?,
            dim: dim_of_4()?,
            base: args.base,
            order: crate::encoding::grid::parse_order(&args.order)?,
            raster: args.raster,
            prefix_rows: non_negative("prefix_rows", args.prefix_rows)?,
        }),
        Kind::SinCos2dResample => {
            let to = grid()?;
            to.validate()?;
            let prefix_rows = non_negative("prefix_rows", args.prefix_rows)?;
            let mode = resample_mode(args)?;
            let from = args.from_grid.as_deref().map(parse_grid_size).transpose()?;
            let input = match (args.input.as_deref(), from) {
                (Some(path), _) => read_input_2d("input", path)?,
                (None, Some((grid_h, grid_w))) => {
                    let source = TableSpec::SinCos2d(SinCos2dParams {
                        grid: GridParams { grid_h, grid_w },
                        dim: dim_of_4()?,
                        base: args.base,
                        order: crate::encoding::grid::parse_order(&args.order)?,
                        raster: args.raster,
                        prefix_rows,
                    });
                    engine::cpu::compute(&source)
                        .map_err(engine_error)?
                        .into_real()
                        .into_dimensionality::<Ix2>()
                        .map_err(|e| CliError::usage(e.to_string()))?
                }
                (None, None) => {
                    return Err(CliError::usage(
                        "sincos-2d-resample needs --input (a [prefix + H*W, dim] .npy table) or \
                         --from-grid HxW with --dim (the sin-cos table made at that grid)",
                    ));
                }
            };
            let from = match from {
                Some(from) => from,
                None => square_grid_of(input.nrows(), prefix_rows)?,
            };
            TableSpec::SinCos2dResample {
                input,
                params: ResampleParams {
                    from,
                    to: (to.grid_h, to.grid_w),
                    prefix_rows,
                    mode,
                    antialias: args.antialias,
                },
            }
        }
        Kind::Rope2dAxial => TableSpec::Rope2dAxial(AxialParams {
            grid: grid()?,
            dim: dim_of_4()?,
            theta: args.theta,
        }),
        Kind::Rope2dMixed => {
            let grid = grid()?;
            grid.validate()?;
            let path = args.freqs.as_deref().ok_or_else(|| {
                CliError::usage(
                    "--freqs is required for rope-2d-mixed: a [2, dim/2] .npy array \
                     (row 0 theta_x, row 1 theta_y)",
                )
            })?;
            let freqs = read_input_2d("freqs", path)?;
            encoding::rope2d::check_mixed_freqs_shape(freqs.shape()).map_err(|e| {
                CliError::usage(format!(
                    "--freqs {} has shape {}: {}",
                    path.display(),
                    e.value,
                    e.allowed
                ))
            })?;
            TableSpec::Rope2dMixed { grid, freqs }
        }
        Kind::T5Buckets => TableSpec::T5Buckets(T5BucketParams {
            seq: seq()?,
            num_buckets: non_negative("num_buckets", args.num_buckets)?,
            max_distance: non_negative("max_distance", args.max_distance)?,
            bidirectional: args.bidirectional,
        }),
        Kind::RelativeClip => TableSpec::RelativeClip(RelativeClipParams {
            seq: seq()?,
            max_relative: required(
                kind,
                "max_relative",
                args.max_relative,
                "the clipping distance K, 0 to 1073741824",
            )?,
        }),
        Kind::Binary => TableSpec::Binary(BinaryParams {
            seq: seq()?,
            dim: dim("the number of bits, 1 to 1048576")?,
            start: start()?,
        }),
    };
    spec.validate()?;
    Ok(spec)
}

pub(crate) fn engine_error(error: EngineError) -> CliError {
    match error {
        EngineError::Param(p) => CliError::from(p),
        EngineError::Memory(_)
        | EngineError::Window(_)
        | EngineError::Arithmetic(_)
        | EngineError::TooLarge(_) => CliError::usage(error.to_string()),
        EngineError::Gpu(_) => CliError::runtime(error.to_string()),
    }
}

fn wrong_layout(kind: Kind, allowed: &str) -> CliError {
    let given = match kind {
        Kind::RopeApply | Kind::RopeCos | Kind::RopeSin => "split",
        _ => "half",
    };
    CliError::usage(format!(
        "--layout {given} is not allowed for {}: use {allowed}",
        kind_name(kind)
    ))
}

/// Joins clap's multi-line message into one line, leaving out the usage and the help hint.
pub(crate) fn one_line(message: &str) -> String {
    message
        .lines()
        .take_while(|line| !line.starts_with("Usage:"))
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with("For more information"))
        .collect::<Vec<_>>()
        .join(" ")
}
