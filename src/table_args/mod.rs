//! One table, as the command line and the app's Check view name it: the table kinds, the options
//! of one table ([`TableArgs`]) and a model's config.json read as such options ([`config`]),
//! turned into a [`TableSpec`] with one clear message per bad value ([`table_spec`],
//! [`table_spec_from_words`]). `poslab table`, `check`, `figure` and `bench` and the app all
//! read tables through here.

use crate::encoding::PairLayout;
use std::path::{Path, PathBuf};

use clap::parser::ValueSource;
use clap::{ArgMatches, Args, FromArgMatches, ValueEnum};
use ndarray::Ix2;

use crate::encoding;
use crate::encoding::alibi::{Alibi2dParams, AlibiForm, AlibiMode, AlibiParams};
use crate::encoding::binary::BinaryParams;
use crate::encoding::grid::{GridParams, SinCos2dParams};
use crate::encoding::relative::{RelativeClipParams, T5BucketParams};
use crate::encoding::resample::{ResampleMode, ResampleParams};
use crate::encoding::rope::{CachePart, RopeParams};
use crate::encoding::rope_scaling::{RopeFrequencies, RopeScaling};
use crate::encoding::rope2d::AxialParams;
use crate::encoding::sinusoidal::SinusoidalParams;
use crate::encoding::torch_f32::Arithmetic;
use crate::engine::{self, EngineError, RealDtype, Table, TableSpec};
use crate::import;
use crate::options::ArithmeticArg;
use crate::scene::context::{RopeModel, UnseenParams};

pub mod against;
pub mod config;
mod kinds;
pub mod model_file;
pub use kinds::Kind;
pub(crate) use kinds::options_of;
pub mod output;
mod reader;
mod spec;
pub mod words;

pub use crate::options::{CliError, SizeOptions, flag};
pub use spec::*;

/// How `rope-cos-sin` lays out its cosines and sines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum CacheFormat {
    /// `[seq, R]`: the `R/2` cosines, then the `R/2` sines (vLLM's `cos_sin_cache`).
    #[default]
    Vllm,
    /// `[seq, R/2, 2]`: a (cos, sin) pair per frequency (torchtune, Meta's `view_as_real`).
    Pairs,
    /// `[seq, 2R]`: the cos cache, then the sin cache, each in the half layout (torchtune's
    /// Qwen2 rotary embedding, `cat([emb.cos(), emb.sin()], -1)`).
    Halves,
}

/// Options of `poslab table`. Which apply depends on the kind; giving one that does not is an
/// error rather than something silently ignored.
#[derive(Debug, Clone, Args)]
#[command(
    after_long_help = TABLE_NOTES,
    allow_negative_numbers = true,
    mut_arg("output", |a| a.help("Output file; .npy (NumPy) or .csv, chosen by the extension")),
    mut_arg("positions", |a| a.conflicts_with("start")),
    mut_arg("freqs_head", |a| a.hide(true))
)]
pub struct TableArgs {
    /// Which table to write
    #[arg(value_enum, value_name = "KIND")]
    pub kind: Kind,

    #[command(flatten)]
    pub destination: crate::options::OutputFile,

    /// A model's Hugging Face config.json (or an assets/models file): fills in the options it
    /// decides (head dim, base, rotary width, pairing, scaling, heads, ...) that are not given
    #[arg(long, value_name = "FILE.json")]
    pub config: Option<PathBuf>,

    /// With --config: the layer type whose RoPE to use, for a model with one per layer type
    /// (Gemma 3, ModernBERT: full_attention or sliding_attention; poslab config lists them)
    #[arg(long, value_name = "NAME", requires = "config")]
    pub layer_type: Option<String>,

    #[command(flatten)]
    pub sizes: crate::options::SizeOptions,

    #[command(flatten)]
    pub sinusoidal: crate::options::SinusoidalOptions,

    #[command(flatten)]
    pub placement: crate::options::PositionOptions,

    /// Sinusoidal kinds: every value multiplied by A, a positive number (x-transformers
    /// ScaledSinusoidalEmbedding: dim^-0.5; MLX: sqrt(2/dim)); dot products by A squared
    #[arg(
        long,
        value_name = "A",
        default_value_t = 1.0,
        allow_hyphen_values = true
    )]
    pub scale: f64,

    /// rope-cos-sin: vllm ([seq, R]: every cosine, then every sine; vLLM's cos_sin_cache),
    /// pairs ([seq, R/2, 2] (cos, sin): torchtune's cache, Meta's view_as_real(freqs_cis)) or
    /// halves ([seq, 2R]: the half-layout cos cache, then the sin cache; torchtune's Qwen2)
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = CacheFormat::Vllm)]
    pub format: CacheFormat,

    /// rope-apply: a [seq, dim] <f2, <f4 or <f8 .npy array to rotate; sincos-2d-resample: the
    /// [prefix + H*W, dim] position table to resample
    #[arg(long, value_name = "X.npy")]
    pub input: Option<PathBuf>,

    /// rope-apply's array handed over in memory in place of `--input` (the Python package's
    /// rotation check); never read from the command line.
    #[arg(skip)]
    pub handed_input: Option<ndarray::Array2<f64>>,

    #[command(flatten)]
    pub rope: crate::options::RopeOptions,

    #[command(flatten)]
    pub scaled: crate::options::ScalingOptions,

    #[command(flatten)]
    pub alibi: crate::options::AlibiOptions,

    #[command(flatten)]
    pub permutation: crate::options::PermutationOptions,

    #[command(flatten)]
    pub axes: crate::options::AxesOptions,

    #[command(flatten)]
    pub grid2d: crate::options::Grid2dOptions,

    /// Zero row K of the table (fairseq's padding row), 0 to rows-1; 2-D real tables
    #[arg(long, value_name = "K")]
    pub zero_row: Option<i64>,

    #[command(flatten)]
    pub relative: crate::options::RelativeOptions,

    #[command(flatten)]
    pub arithmetic: crate::options::ArithmeticOptions,

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

    #[command(flatten)]
    pub consent: crate::options::Consent,

    #[command(flatten)]
    pub progress: crate::options::Progress,
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

/// Engines `--backend` can pick.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    /// The f64 reference engine on the CPU
    Cpu,
    /// wgpu compute shaders (WGPU_BACKEND picks vulkan, gl, metal or dx12)
    Gpu,
}

impl TableArgs {
    /// The arithmetic of `--arith` and `--freq-form`.
    pub fn arithmetic(&self) -> Result<Arithmetic, CliError> {
        if self.kind.is_precision_lab() {
            // Exact is the default, float32 for these (an explicit --arith exact is refused by
            // check_options_apply).
            let compute = match self.arithmetic.arith {
                ArithmeticArg::Exact => Some(crate::encoding::precision::ComputeType::F32),
                other => other.compute_type(),
            };
            return match compute {
                // Its table emulates the type itself: computed exactly otherwise.
                Some(_) if self.arithmetic.freq_form.is_none() => Ok(Arithmetic::Exact),
                Some(_) => Err(CliError::usage(
                    "--freq-form applies only with --arith torch-f32; the precision lab forms frequencies as Hugging Face does",
                )),
                None => Err(CliError::usage(format!(
                    "--arith {} does not apply to {}: give the type the model computes in, f32, bf16 or f16",
                    self.arithmetic
                        .arith
                        .to_possible_value()
                        .map(|v| v.get_name().to_owned())
                        .unwrap_or_default(),
                    kind_name(self.kind)
                ))),
            };
        }
        if let Some(compute) = self.arithmetic.arith.compute_type() {
            return Err(CliError::usage(format!(
                "--arith {} applies to rope-cache-error and rope-score-drift (the precision lab); {} takes exact or torch-f32",
                compute_name(compute),
                kind_name(self.kind)
            )));
        }
        if self.arithmetic.arith == ArithmeticArg::Exact && self.arithmetic.freq_form.is_some() {
            return Err(CliError::usage(
                "--freq-form applies only with --arith torch-f32 (the exact table has one form)",
            ));
        }
        Ok(self
            .arithmetic
            .arith
            .with_form(self.arithmetic.freq_form.unwrap_or_default()))
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

/// sincos-2d-resample's options for the table it makes itself when no --input is given.
const RESAMPLED_SINCOS_OPTIONS: &[&str] = &["dim", "base", "order", "raster"];

/// Refuses an option the kind does not read, naming those it does.
pub(crate) fn check_options_apply(args: &TableArgs, matches: &ArgMatches) -> Result<(), CliError> {
    let kind = args.kind;
    const EVERY_KIND: &[&str] = &[
        "kind",
        "output",
        "backend",
        "verbose",
        "size",
        "repeats",
        "config",
        "layer_type",
        "zero_row",
        "yes",
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
    let scaling = accepted.contains(&"scaling").then_some(args.scaled.scaling);
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
    if !args.alibi.slope_scaling {
        if matches!(spec, TableSpec::AlibiSlopes { .. }) && args.sizes.seq.is_some() {
            return Err(CliError::usage(
                "--seq applies to alibi-slopes only with --slope-scaling true (the slopes do not depend on the length otherwise)",
            ));
        }
        if args.alibi.train_len.is_some() && !matches!(spec, TableSpec::RopeUnseen(_)) {
            return Err(CliError::usage(
                "--train-len applies with --slope-scaling true (the length beyond which slopes shrink)",
            ));
        }
        return Ok(None);
    }
    let train = args.alibi.train_len.ok_or_else(|| {
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
