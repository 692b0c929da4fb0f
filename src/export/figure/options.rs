//! The options of `poslab figure`, declared once: each figure's module reads the ones it
//! names, and writes them back as words for the app's export dialog ([`Words`]).

use std::path::PathBuf;

use clap::Args;

use super::FigureView;
use crate::colormap::Colormap;
use crate::encoding::ParamError;
use crate::engine::patch_maps::PatchMethod;
use crate::engine::reduce::Reduce;
use crate::scene::corkscrew::ProbeVector;
use crate::table_args::CliError;

/// Options of `poslab figure`: the style options every figure takes, then each figure's own,
/// documented with the figures that read them.
#[derive(Debug, Clone, Args)]
#[command(
    after_long_help = FIGURE_NOTES,
    allow_negative_numbers = true,
    mut_arg("output", |a| a.help("Output file: .svg (vector) or .png, chosen by the extension")),
    mut_arg("max_period", |a| a.hide(true)),
    mut_arg("metric", |a| a.hide(true)),
    mut_arg("order", |a| a.hide(true)),
    mut_arg("raster", |a| a.hide(true)),
    mut_arg("prefix_rows", |a| a.hide(true)),
    mut_arg("from_grid", |a| a.hide(true)),
    mut_arg("queries", |a| a.hide(true)),
    mut_arg("zero_heads", |a| a.hide(true)),
    mut_arg("form", |a| a.hide(true)),
    mut_arg("train_len", |a| a.hide(true)),
    mut_arg("slope_scaling", |a| a.hide(true)),
    mut_arg("arith", |a| a.hide(true)),
    mut_arg("positions_in", |a| a.hide(true)),
    mut_arg("freq_form", |a| a.hide(true)),
)]
pub struct FigureArgs {
    /// Which view's figure
    #[arg(value_enum, value_name = "VIEW")]
    pub view: FigureView,

    #[command(flatten)]
    pub destination: crate::options::OutputFile,

    /// Figure width in pixels (200 to 8000)
    #[arg(long, value_name = "PX", default_value_t = 1000)]
    pub width: i64,

    /// Figure height in pixels (200 to 8000)
    #[arg(long, value_name = "PX", default_value_t = 700)]
    pub height: i64,

    /// PNG only: pixels per figure pixel, 1 to 4 (2 for slides on high-density screens)
    #[arg(
        long,
        value_name = "S",
        default_value_t = 1.0,
        allow_hyphen_values = true
    )]
    pub scale: f64,

    /// Colour map of heatmaps
    #[arg(long, value_enum, value_name = "MAP", default_value_t = Colormap::Viridis)]
    pub colormap: Colormap,

    /// Where a heatmap cell of the figure stands for several of the table's: show their mean,
    /// or the min or max (the envelope)
    #[arg(long, value_enum, value_name = "HOW", default_value_t = Reduce::Mean)]
    pub reduce: Reduce,

    /// Title over the figure (default: what it shows and its parameters)
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,

    #[command(flatten)]
    pub consent: crate::options::Consent,

    #[command(flatten)]
    pub progress: crate::options::Progress,

    #[command(flatten)]
    pub sizes: crate::table_args::SizeOptions,

    #[command(flatten)]
    pub sinusoidal: crate::options::SinusoidalOptions,

    /// sinusoidal, dot-decay: what every value is multiplied by (table's --scale: dim^-0.5 in
    /// x-transformers, sqrt(2/dim) in MLX), a finite number above 0; 1 unless given
    #[arg(long, value_name = "A")]
    pub amplitude: Option<f64>,

    /// dot-decay: divide by d/2 so that the curve starts at 1
    #[arg(long)]
    pub normalised: bool,

    #[command(flatten)]
    pub alibi: crate::options::AlibiOptions,

    /// patches: the query patch in raster order (default: the centre)
    #[arg(long, value_name = "K")]
    pub query: Option<i64>,

    /// patches: the left map's method
    #[arg(long, value_enum, value_name = "METHOD")]
    pub left: Option<PatchMethod>,

    /// patches: the right map's method
    #[arg(long, value_enum, value_name = "METHOD")]
    pub right: Option<PatchMethod>,

    #[command(flatten)]
    pub grid2d: crate::options::Grid2dOptions,

    /// corkscrew: the pairs to draw, as a list such as 0,4,8-12 or all (default: every 8th)
    #[arg(long, value_name = "LIST")]
    pub pairs: Option<String>,

    /// corkscrew: positions drawn along the axis, from --start (1 to 65536, and at most --seq;
    /// default 256 or --seq)
    #[arg(long, value_name = "N")]
    pub positions: Option<i64>,

    /// corkscrew: the query position m, start to start+seq-1 (default start+12)
    #[arg(long, value_name = "M")]
    pub m: Option<i64>,

    /// corkscrew: the key position n, start to start+seq-1 (default start+4)
    #[arg(long, value_name = "N")]
    pub n: Option<i64>,

    /// corkscrew: the query vector: unit-pairs, ones or random:SEED
    #[arg(long, value_name = "VECTOR", value_parser = crate::scene::corkscrew::parse_probe)]
    pub query_vector: Option<ProbeVector>,

    /// corkscrew: the key vector: unit-pairs, ones or random:SEED
    #[arg(long, value_name = "VECTOR", value_parser = crate::scene::corkscrew::parse_probe)]
    pub key_vector: Option<ProbeVector>,

    /// check: the table to check, .npy, .csv or .safetensors
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,

    /// learned: the example table poslab ships (all-MiniLM-L6-v2's 512 x 384 position
    /// embeddings) instead of --file
    #[arg(long)]
    pub example: bool,

    #[command(flatten)]
    pub reading: crate::options::FileOptions,

    /// check: what the table should be, as poslab table's words in one argument, e.g.
    /// --as "rope-angles --seq 4096 --dim 128" (default: identify it)
    #[arg(
        long = "as",
        id = "expected",
        value_name = "KIND OPTIONS",
        allow_hyphen_values = true
    )]
    pub expected: Option<String>,

    /// context: a RoPE model, by the name of a file of assets/models (llama-2-7b,
    /// llama-3.1-8b, ...) or the path of a config.json
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,

    /// context: the target length L' (2 to 1048576; default 16384)
    #[arg(long, value_name = "L'")]
    pub target: Option<i64>,

    /// context: the methods drawn, a list of none, linear, ntk, dynamic, yarn, llama3,
    /// longrope (default none,linear,ntk,yarn)
    #[arg(long, value_name = "LIST")]
    pub methods: Option<String>,

    /// context: the method whose unseen angles the map shows (default none)
    #[arg(long, value_name = "METHOD")]
    pub map: Option<String>,

    /// context: method parameters over the method's own, as METHOD.NAME=VALUE items, e.g.
    /// yarn.factor=8,llama3.low_freq_factor=2
    #[arg(long, value_name = "LIST")]
    pub set: Option<String>,

    /// context: the lower chart
    #[arg(long, value_enum, value_name = "CHART")]
    pub chart: Option<crate::scene::context::ContextChart>,

    /// context-vision: patches along a side of the grid the ViT was trained on (default 14)
    #[arg(long, value_name = "N")]
    pub trained_grid: Option<i64>,

    /// context-vision: patches along a side of the larger grid (default 24)
    #[arg(long, value_name = "N")]
    pub grid: Option<i64>,

    /// context-vision: how the table is resampled, as timm's resample_abs_pos_embed
    #[arg(long, value_enum, value_name = "MODE")]
    pub resample: Option<crate::encoding::resample::ResampleMode>,

    /// relative: which panel
    #[arg(long, value_enum, value_name = "PANEL")]
    pub panel: Option<crate::scene::relative::RelativePanel>,

    /// relative: the sequence length L (offsets, shaw, alibi: 2 to 32, default 8; t5: 2 to 256,
    /// default 48; skew: 2 to 12, default 5)
    #[arg(long, value_name = "L")]
    pub tokens: Option<i64>,

    #[command(flatten)]
    pub relative: crate::options::RelativeOptions,

    /// relative --panel skew: the step of the trick, 1 (relative logits) to 6 (sliced)
    #[arg(long, value_name = "K")]
    pub stage: Option<i64>,

    /// learned: the columns drawn against position, such as 0,1,2,3 (default: four whose
    /// sinusoidal periods are 1/8, 1/4, 1/2 and 1 times the table's length)
    #[arg(long, value_name = "C,C,...")]
    pub columns: Option<String>,

    /// tour: the step, 1 (counting) to 9 (the dials that turn)
    #[arg(long, value_name = "N")]
    pub step: Option<i64>,

    /// tour --step 7: the shift Δ of the translation matrix T(Δ), 0 to 10000 (default 10)
    #[arg(long, value_name = "Δ")]
    pub delta: Option<i64>,

    /// tour --step 6: the pair whose circle is drawn (default 8)
    #[arg(long, value_name = "I")]
    pub pair: Option<i64>,

    #[command(flatten)]
    pub arithmetic: crate::options::ArithmeticOptions,

    #[command(flatten)]
    pub permutation: crate::options::PermutationOptions,

    /// corkscrew: the camera as YAW,PITCH,DISTANCE[,X,Y,Z] (degrees, degrees, world units,
    /// and the point it looks at), as the app's export dialog prints it (default: framing the
    /// scene)
    #[arg(long, value_name = "YAW,PITCH,DIST", allow_hyphen_values = true)]
    pub camera: Option<String>,

    /// axes: text tokens before the image (0 to 16, default 4)
    #[arg(long, value_name = "N")]
    pub text_before: Option<i64>,

    /// axes: text tokens after the image (0 to 16, default 3)
    #[arg(long, value_name = "N")]
    pub text_after: Option<i64>,

    /// axes: frames of the video (1 to 4, default 1: an image)
    #[arg(long, value_name = "N")]
    pub frames: Option<i64>,

    /// axes: rows of patch tokens in each frame (1 to 32, default 6)
    #[arg(long, value_name = "N")]
    pub patch_rows: Option<i64>,

    /// axes: columns of patch tokens in each frame (1 to 32, default 8)
    #[arg(long, value_name = "N")]
    pub patch_cols: Option<i64>,

    /// axes: the token the others are compared with, counted from 0 over text, patches and
    /// text (default: the patch nearest the middle of the first frame)
    #[arg(long, value_name = "K")]
    pub token: Option<i64>,

    /// axes: each scheme its own colour scale over its own patches, rather than one scale for
    /// the three (the default, so that a colour is the same similarity in every column)
    #[arg(long)]
    pub own_scales: bool,

    /// axes: one colour scale for the three schemes (the default; kept for older command lines)
    #[arg(long, hide = true, conflicts_with = "own_scales")]
    pub same_scale: bool,
}

const FIGURE_NOTES: &str = "\
The defaults are the app's: the figure of a view whose controls were not touched. The app's
export dialog prints the command that makes the figure it exports.

Examples:
  poslab figure sinusoidal --seq 2048 --dim 512 -o pe.svg
  poslab figure alibi --heads 8 --seq 64 -o alibi_heads.png --scale 2
  poslab figure patches --left mixed-rope --right sin-cos --query 0 -o patches.svg
  poslab figure corkscrew --pairs 0,8,16 --m 40 --n 32 -o corkscrew.svg
  poslab figure check --file cos.npy --as \"rope-angles --seq 4096 --dim 128\" -o check.png
  poslab figure context --model llama-2-7b --target 16384 --methods none,linear,yarn --chart score -o ctx.svg
  poslab figure context-vision --trained-grid 14 --grid 24 --query 0 -o vit.svg
  poslab figure relative --panel skew --tokens 5 --stage 5 -o skew.svg
  poslab figure relative --panel t5 --tokens 64 --bidirectional false -o t5.png
  poslab figure tour --step 8 --seq 256 --dim 128 --anchor 128 -o dot.svg
  poslab figure axes --frames 2 --patch-rows 6 --patch-cols 8 --token 30 -o axes.svg
  poslab figure layouts --head-dim 8 --heads 8 --kv-heads 2 --offset 5 -o layouts.svg";

/// A whole-number option, with the app's default when not given.
pub(super) fn count(
    id: &'static str,
    value: Option<i64>,
    default: usize,
    range: std::ops::RangeInclusive<usize>,
) -> Result<usize, CliError> {
    let Some(value) = value else {
        return Ok(default);
    };
    usize::try_from(value)
        .ok()
        .filter(|v| range.contains(v))
        .ok_or_else(|| {
            CliError::usage(
                ParamError::new(
                    id,
                    value,
                    format!("use {} to {}", range.start(), range.end()),
                )
                .to_string(),
            )
        })
}

/// The number of positions of a table figure (sinusoidal, dot-decay, alibi, corkscrew).
pub(super) fn seq(args: &FigureArgs) -> Result<usize, CliError> {
    count(
        "seq",
        args.sizes.seq,
        crate::encoding::defaults::SEQ,
        1..=1 << 30,
    )
}

/// The width of a table figure's rows.
pub(super) fn dim(args: &FigureArgs) -> Result<usize, CliError> {
    count(
        "dim",
        args.sizes.dim,
        crate::encoding::defaults::DIM,
        2..=1 << 20,
    )
}

/// The frequency base (checked by the parameters that use it).
pub(super) fn base(args: &FigureArgs) -> f64 {
    args.sinusoidal.base()
}

/// The first position of a table figure.
pub(super) fn start(args: &FigureArgs) -> Result<u64, CliError> {
    // 2^53 - 1, the last integer an f64 holds exactly (less where usize is 32 bits: the web).
    let last = ((1u64 << 53) - 1).min(usize::MAX as u64) as usize;
    Ok(count("start", args.sinusoidal.start, 0, 0..=last)? as u64)
}

/// The attention heads of ALiBi figures.
pub(super) fn heads(args: &FigureArgs) -> Result<usize, CliError> {
    count(
        "heads",
        args.sizes.heads,
        crate::encoding::defaults::HEADS,
        1..=1 << 16,
    )
}

/// A figure's settings as `poslab figure` options, in the order the figure's module writes
/// them; the command's name, the view and the style options are added around them.
#[derive(Debug, Default)]
pub struct Words(Vec<String>);

impl Words {
    /// `--flag value`.
    pub fn option(&mut self, flag: &str, value: impl ToString) {
        self.0.push(format!("--{flag}"));
        self.0.push(value.to_string());
    }

    /// `--flag` alone.
    pub fn switch(&mut self, flag: &str) {
        self.0.push(format!("--{flag}"));
    }

    /// `--flag=value` as one word, for a value that may start with `-` (a negative yaw).
    pub fn joined(&mut self, flag: &str, value: impl std::fmt::Display) {
        self.0.push(format!("--{flag}={value}"));
    }

    pub(super) fn into_vec(self) -> Vec<String> {
        self.0
    }
}

pub use crate::options::value_name;

/// The view's name on the command line.
pub fn view_name(view: FigureView) -> String {
    value_name(view)
}
