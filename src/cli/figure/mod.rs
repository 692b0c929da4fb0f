//! `poslab figure VIEW [options] -o out.svg|out.png`: a view's figure with no window and no
//! display. The defaults are the app's, so `poslab figure VIEW -o f.svg` is what the app exports
//! before any control is touched.

use std::path::PathBuf;

use clap::parser::ValueSource;
use clap::{ArgMatches, Args};

use crate::colormap::Colormap;
use crate::encoding::ParamError;
use crate::encoding::alibi::{AlibiMode, AlibiParams};
use crate::encoding::grid::GridParams;
use crate::encoding::rope::RopeLayout;
use crate::encoding::sinusoidal::{SinusoidalLayout, Spacing};
use crate::engine::patch_maps::{PatchMapSettings, PatchMethod};
use crate::engine::reduce::Reduce;
use crate::export::figure::{
    CorkscrewFigure, FigureFormat, FigureSpec, FigureStyle, FigureView, MAX_SCALE, SIZE_RANGE,
    build_figure, view_name,
};
use crate::scene::camera::OrbitCamera;
use crate::scene::corkscrew::{MAX_DRAWN_POSITIONS, PairSelection, ProbeVector};
use crate::table_args::{CliError, LayoutArg, flag, table_spec_from_words};

mod view_figures;

use view_figures::*;

/// Options of `poslab figure`.
#[derive(Debug, Clone, Args)]
#[command(after_long_help = FIGURE_NOTES, allow_negative_numbers = true)]
pub struct FigureArgs {
    /// Which view's figure
    #[arg(value_enum, value_name = "VIEW")]
    pub view: FigureView,

    /// Output file: .svg (vector) or .png, chosen by the extension
    #[arg(short, long, value_name = "FILE", required = true)]
    pub output: Option<PathBuf>,

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

    /// Number of positions
    #[arg(long, value_name = "N")]
    pub seq: Option<i64>,

    /// Embedding or head dimension (even; a multiple of 4 for the 2D similarities)
    #[arg(long, value_name = "D")]
    pub dim: Option<i64>,

    /// Frequency base, a finite number greater than 1
    #[arg(long, value_name = "B", allow_hyphen_values = true)]
    pub base: Option<f64>,

    /// First position
    #[arg(long, value_name = "P")]
    pub start: Option<i64>,

    /// sinusoidal, dot-decay: interleaved or split; corkscrew: interleaved or half
    #[arg(long, value_enum, value_name = "LAYOUT")]
    pub layout: Option<LayoutArg>,

    /// sinusoidal, dot-decay: vaswani or t2t frequency spacing
    #[arg(long, value_enum, value_name = "SPACING")]
    pub spacing: Option<Spacing>,

    /// dot-decay: the anchor row a
    #[arg(long, value_name = "ROW")]
    pub anchor: Option<i64>,

    /// dot-decay: divide by d/2 so that the curve starts at 1
    #[arg(long)]
    pub normalised: bool,

    /// Attention heads (alibi, and the 2D ALiBi of patches)
    #[arg(long, value_name = "H")]
    pub heads: Option<i64>,

    /// alibi: draw only this head (default: every head as small multiples); patches: the 2D
    /// ALiBi head
    #[arg(long, value_name = "H")]
    pub head: Option<i64>,

    /// alibi: causal or symmetric
    #[arg(long, value_enum, value_name = "MODE")]
    pub mode: Option<AlibiMode>,

    /// patches: rows of patches, 1 to 64
    #[arg(long, value_name = "N")]
    pub grid_h: Option<i64>,

    /// patches: columns of patches, 1 to 64
    #[arg(long, value_name = "N")]
    pub grid_w: Option<i64>,

    /// patches: the query patch in raster order (default: the centre)
    #[arg(long, value_name = "K")]
    pub query: Option<i64>,

    /// patches: the left map's method
    #[arg(long, value_enum, value_name = "METHOD")]
    pub left: Option<PatchMethod>,

    /// patches: the right map's method
    #[arg(long, value_enum, value_name = "METHOD")]
    pub right: Option<PatchMethod>,

    /// patches: seed of the mixed RoPE frequencies
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// patches: mixed RoPE frequencies from a .npy instead of the seed: [2, n], or rope-vit's
    /// [2, heads, n] parameter (one head of it, --freqs-head)
    #[arg(long, value_name = "F.npy")]
    pub freqs: Option<PathBuf>,

    /// patches: which head of a [2, heads, n] --freqs file (default 0)
    #[arg(long, value_name = "H", allow_hyphen_values = true)]
    pub freqs_head: Option<i64>,

    /// corkscrew: the pairs to draw, as a list such as 0,4,8-12 or all (default: every 8th)
    #[arg(long, value_name = "LIST")]
    pub pairs: Option<String>,

    /// corkscrew: positions drawn along the axis, from --start (1 to 65536; default 256)
    #[arg(long, value_name = "N")]
    pub positions: Option<i64>,

    /// corkscrew: the query position m, start to start+seq-1 (default start+12)
    #[arg(long, value_name = "M")]
    pub m: Option<i64>,

    /// corkscrew: the key position n, start to start+seq-1 (default start+4)
    #[arg(long, value_name = "N")]
    pub n: Option<i64>,

    /// corkscrew: the query vector: unit-pairs, ones or random:SEED
    #[arg(long, value_name = "VECTOR", value_parser = parse_probe)]
    pub query_vector: Option<ProbeVector>,

    /// corkscrew: the key vector: unit-pairs, ones or random:SEED
    #[arg(long, value_name = "VECTOR", value_parser = parse_probe)]
    pub key_vector: Option<ProbeVector>,

    /// check: the table to check, .npy, .csv or .safetensors
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,

    /// check: the tensor of a .safetensors file holding several
    #[arg(long, value_name = "NAME")]
    pub tensor: Option<String>,

    /// check: what the table should be, as poslab table's words in one argument, e.g.
    /// --as "rope-angles --seq 4096 --dim 128" (default: identify it)
    #[arg(
        long = "as",
        id = "expected",
        value_name = "KIND OPTIONS",
        allow_hyphen_values = true
    )]
    pub expected: Option<String>,

    /// check: absolute tolerance
    #[arg(long, value_name = "A", allow_hyphen_values = true)]
    pub atol: Option<f64>,

    /// check: relative tolerance
    #[arg(long, value_name = "R", allow_hyphen_values = true)]
    pub rtol: Option<f64>,

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
    pub chart: Option<crate::export::figure::context::ContextChart>,

    /// context-vision: patches along a side of the grid the ViT was trained on (default 14)
    #[arg(long, value_name = "N")]
    pub trained_grid: Option<i64>,

    /// context-vision: patches along a side of the larger grid (default 24)
    #[arg(long, value_name = "N")]
    pub grid: Option<i64>,

    /// context-vision: how the table is resampled, as timm's resample_abs_pos_embed
    #[arg(long, value_enum, value_name = "MODE")]
    pub resample: Option<crate::encoding::resample::ResampleMode>,

    /// context-vision: torch's anti-aliased interpolation (timm's default, true)
    #[arg(long, value_name = "BOOL", action = clap::ArgAction::Set)]
    pub antialias: Option<bool>,

    /// relative: which panel
    #[arg(long, value_enum, value_name = "PANEL")]
    pub panel: Option<crate::scene::relative::RelativePanel>,

    /// relative: the sequence length L (offsets, shaw, alibi: 2 to 32, default 8; t5: 2 to 256,
    /// default 48; skew: 2 to 12, default 5)
    #[arg(long, value_name = "L")]
    pub tokens: Option<i64>,

    /// relative --panel shaw: the clipping distance K (default 3)
    #[arg(long, value_name = "K")]
    pub max_relative: Option<i64>,

    /// relative --panel t5: number of buckets (default 32)
    #[arg(long, value_name = "N")]
    pub num_buckets: Option<i64>,

    /// relative --panel t5: the distance from which all offsets share the last bucket (default
    /// 128)
    #[arg(long, value_name = "N")]
    pub max_distance: Option<i64>,

    /// relative --panel t5: encoder (true, the default) or decoder (false) buckets
    #[arg(long, value_name = "BOOL", action = clap::ArgAction::Set)]
    pub bidirectional: Option<bool>,

    /// relative --panel skew: the step of the trick, 1 (relative logits) to 6 (sliced)
    #[arg(long, value_name = "K")]
    pub stage: Option<i64>,

    /// learned: the columns drawn against position, such as 0,1,2,3 (default: the first four)
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

    /// corkscrew: the camera as YAW,PITCH,DISTANCE[,X,Y,Z] (degrees, degrees, world units,
    /// and the point it looks at), as the app's export dialog prints it (default: framing the
    /// scene)
    #[arg(long, value_name = "YAW,PITCH,DIST", allow_hyphen_values = true)]
    pub camera: Option<String>,
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
  poslab figure tour --step 8 --seq 256 --dim 128 --anchor 128 -o dot.svg";

/// Which options each view reads (clap ids); the figure options apply to all.
fn options_of(view: FigureView) -> &'static [&'static str] {
    match view {
        FigureView::Sinusoidal => &["seq", "dim", "base", "start", "layout", "spacing"],
        FigureView::DotDecay => &[
            "seq",
            "dim",
            "base",
            "start",
            "layout",
            "spacing",
            "anchor",
            "normalised",
        ],
        FigureView::Alibi => &["seq", "heads", "head", "mode"],
        FigureView::Patches => &[
            "grid_h",
            "grid_w",
            "query",
            "left",
            "right",
            "heads",
            "head",
            "dim",
            "base",
            "seed",
            "freqs",
            "freqs_head",
        ],
        FigureView::Check => &["file", "tensor", "expected", "atol", "rtol"],
        FigureView::Context => &[
            "model", "target", "methods", "map", "set", "chart", "heads", "head",
        ],
        FigureView::ContextVision => &[
            "file",
            "tensor",
            "trained_grid",
            "grid",
            "dim",
            "resample",
            "antialias",
            "query",
            "heads",
            "head",
        ],
        FigureView::Relative => &[
            "panel",
            "tokens",
            "max_relative",
            "num_buckets",
            "max_distance",
            "bidirectional",
            "heads",
            "head",
            "mode",
            "stage",
            "dim",
            "grid_h",
            "grid_w",
            "query",
            "seed",
        ],
        FigureView::Tour => &["step", "seq", "dim", "base", "delta", "anchor", "pair"],
        FigureView::Learned => &["file", "tensor", "columns"],
        FigureView::Corkscrew => &[
            "seq",
            "dim",
            "base",
            "start",
            "layout",
            "pairs",
            "positions",
            "m",
            "n",
            "query_vector",
            "key_vector",
            "camera",
        ],
    }
}

fn check_options_apply(view: FigureView, matches: &ArgMatches) -> Result<(), CliError> {
    const EVERY_VIEW: &[&str] = &[
        "view", "output", "width", "height", "scale", "colormap", "title", "reduce",
    ];
    let accepted = options_of(view);
    let command = FigureArgs::augment_args(clap::Command::new("figure"));
    for id in command.get_arguments().map(|a| a.get_id().as_str()) {
        if matches.value_source(id) != Some(ValueSource::CommandLine)
            || EVERY_VIEW.contains(&id)
            || accepted.contains(&id)
        {
            continue;
        }
        let list: Vec<String> = accepted.iter().map(|id| flag(id)).collect();
        return Err(CliError::usage(format!(
            "{} does not apply to the {} figure; its options are {}",
            flag(id),
            view_name(view),
            list.join(" ")
        )));
    }
    Ok(())
}

/// A whole-number option, with the app's default when not given.
fn count(
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

/// The figure's specification from the options, starting from the app's defaults.
pub(crate) fn figure_spec(args: &FigureArgs) -> Result<FigureSpec, CliError> {
    use crate::encoding::defaults;
    // Its options have ranges of their own (--dim 1 to 1024, not the tables' 2 to 2^20).
    if args.view == FigureView::Relative {
        return Ok(FigureSpec::Relative(relative_figure(args)?));
    }
    if args.view == FigureView::Tour {
        return Ok(FigureSpec::Tour(tour_figure(args)?));
    }
    if args.view == FigureView::Learned {
        return learned_figure(args).map(FigureSpec::Learned);
    }
    let seq = count("seq", args.seq, defaults::SEQ, 1..=1 << 30)?;
    let dim = count("dim", args.dim, defaults::DIM, 2..=1 << 20)?;
    let base = args.base.unwrap_or(defaults::BASE);
    let start = count("start", args.start, 0, 0..=(1usize << 53) - 1)? as u64;
    let heads = count("heads", args.heads, defaults::HEADS, 1..=1 << 16)?;
    let sinusoidal_layout = |args: &FigureArgs| match args.layout {
        None | Some(LayoutArg::Interleaved) => Ok(SinusoidalLayout::Interleaved),
        Some(LayoutArg::Split) => Ok(SinusoidalLayout::Split),
        Some(LayoutArg::Half) => Err(CliError::usage(
            "--layout half is not allowed for this figure: use interleaved or split",
        )),
    };
    let spec = match args.view {
        FigureView::Context => FigureSpec::Context(Box::new(context_figure(args)?)),
        FigureView::Relative => FigureSpec::Relative(relative_figure(args)?),
        FigureView::Tour => FigureSpec::Tour(tour_figure(args)?),
        FigureView::Learned => FigureSpec::Learned(learned_figure(args)?),
        FigureView::ContextVision => {
            let defaults = crate::scene::context::VisionParams::default();
            let train_side = count(
                "trained_grid",
                args.trained_grid,
                defaults.train_side,
                2..=64,
            )?;
            let target_side = count("grid", args.grid, defaults.target_side, 2..=64)?;
            let patches = target_side * target_side;
            let dim = count("dim", args.dim, defaults.dim, 4..=4096)?;
            if dim % 4 != 0 {
                return Err(CliError::usage(format!(
                    "--dim {dim} is not allowed: the 2D sin-cos table needs a multiple of 4"
                )));
            }
            let alibi = crate::export::figure::context::AlibiSettings::default();
            let heads = count("heads", args.heads, alibi.heads, 1..=128)?;
            // A learned table brings its own grid and width.
            let (learned, train_side, dim) = match &args.file {
                Some(file) => {
                    if args.trained_grid.is_some() || args.dim.is_some() {
                        return Err(CliError::usage(
                            "--trained-grid and --dim come from the --file table: leave them out",
                        ));
                    }
                    let max_bytes = crate::engine::available_memory_bytes().unwrap_or(u64::MAX);
                    let (table, tensor) =
                        crate::import::read_position_table(file, args.tensor.as_deref(), max_bytes)
                            .map_err(|e| CliError::usage(format!("--file {e}")))?;
                    let cols = table.ncols();
                    let learned = crate::scene::context::LearnedTable::new(table)
                        .map_err(|e| CliError::usage(format!("--file {}: {e}", file.display())))?;
                    (Some((file.clone(), tensor)), learned.side, cols)
                }
                None if args.tensor.is_some() => {
                    return Err(CliError::usage(
                        "--tensor applies with --file: which tensor of a .safetensors file",
                    ));
                }
                None => (None, train_side, dim),
            };
            FigureSpec::ContextVision(crate::export::figure::context::VisionFigure {
                learned,
                params: crate::scene::context::VisionParams {
                    train_side,
                    target_side,
                    dim,
                    mode: args.resample.unwrap_or(defaults.mode),
                    antialias: args.antialias.unwrap_or(defaults.antialias),
                    query: count(
                        "query",
                        args.query,
                        (target_side / 2) * target_side + target_side / 2,
                        0..=patches - 1,
                    )?,
                },
                heads,
                head: count("head", args.head, heads - 1, 0..=heads - 1)?,
            })
        }
        FigureView::Check => {
            let file = args
                .file
                .clone()
                .ok_or_else(|| CliError::usage("--file is required for the check figure"))?;
            let defaults = crate::check::Tolerance::default();
            let tolerance = super::check::tolerance(
                args.atol.unwrap_or(defaults.abs),
                args.rtol.unwrap_or(defaults.rel),
            )?;
            let expected: Vec<String> = args
                .expected
                .as_deref()
                .unwrap_or("")
                .split_whitespace()
                .map(str::to_owned)
                .collect();
            if !expected.is_empty() {
                table_spec_from_words(&expected)
                    .map_err(|e| CliError::usage(format!("--as: {e}")))?;
            }
            FigureSpec::Check(crate::export::figure::CheckFigure {
                file,
                tensor: args.tensor.clone(),
                expected,
                tolerance,
            })
        }
        FigureView::Sinusoidal | FigureView::DotDecay => {
            let params = crate::encoding::sinusoidal::SinusoidalParams {
                seq,
                dim,
                base,
                start,
                layout: sinusoidal_layout(args)?,
                spacing: args.spacing.unwrap_or(Spacing::Vaswani),
            };
            params.validate()?;
            if args.view == FigureView::Sinusoidal {
                FigureSpec::Sinusoidal(params)
            } else {
                let anchor = count("anchor", args.anchor, 0, 0..=params.seq - 1)?;
                FigureSpec::DotDecay {
                    params,
                    anchor,
                    normalised: args.normalised,
                }
            }
        }
        FigureView::Alibi => {
            let params = AlibiParams {
                heads,
                seq,
                mode: args.mode.unwrap_or(AlibiMode::Causal),
            };
            let head = match args.head {
                Some(head) => Some(count("head", Some(head), 0, 0..=heads - 1)?),
                None => None,
            };
            FigureSpec::Alibi { params, head }
        }
        FigureView::Patches => {
            let grid = GridParams {
                grid_h: count("grid_h", args.grid_h, 14, 1..=64)?,
                grid_w: count("grid_w", args.grid_w, 14, 1..=64)?,
            };
            let patches = grid.patches();
            let query = count(
                "query",
                args.query,
                (grid.grid_h / 2) * grid.grid_w + grid.grid_w / 2,
                0..=patches - 1,
            )?;
            let head = count("head", args.head, 0, 0..=heads - 1)?;
            let loaded_freqs = match &args.freqs {
                Some(path) => {
                    let max_bytes = crate::engine::available_memory_bytes().unwrap_or(u64::MAX);
                    let all = crate::import::read_mixed_freqs(path, max_bytes)
                        .map_err(|e| CliError::usage(format!("--freqs {e}")))?;
                    let heads_in_file = all.shape()[1];
                    let freqs_head =
                        count("freqs_head", args.freqs_head, 0, 0..=heads_in_file - 1)?;
                    let freqs = all.index_axis(ndarray::Axis(1), freqs_head).to_owned();
                    crate::encoding::rope2d::check_mixed_freqs_shape(freqs.shape())?;
                    Some(freqs)
                }
                None if args.freqs_head.is_some() => {
                    return Err(CliError::usage(
                        "--freqs-head applies with --freqs: which head of a [2, heads, n] file",
                    ));
                }
                None => None,
            };
            let settings = PatchMapSettings {
                dim: (dim / 4 * 4).max(4),
                base,
                seed: args.seed.unwrap_or(0),
                loaded_freqs,
            };
            FigureSpec::Patches {
                grid,
                query,
                methods: [
                    args.left.unwrap_or(PatchMethod::Euclidean),
                    args.right.unwrap_or(PatchMethod::Alibi2d),
                ],
                heads,
                head,
                settings,
            }
        }
        FigureView::Corkscrew => {
            let layout = match args.layout {
                None | Some(LayoutArg::Interleaved) => RopeLayout::Interleaved,
                Some(LayoutArg::Half) => RopeLayout::Half,
                Some(LayoutArg::Split) => {
                    return Err(CliError::usage(
                        "--layout split is not allowed for the corkscrew: use interleaved or half",
                    ));
                }
            };
            if dim % 2 != 0 {
                return Err(CliError::usage(format!(
                    "--dim {} is not allowed: RoPE needs an even dimension",
                    dim
                )));
            }
            let selection = match args.pairs.as_deref() {
                None => PairSelection::EveryKth(8),
                Some("all") => PairSelection::All,
                Some(list) => PairSelection::List(list.to_owned()),
            };
            let (pairs, _) = crate::scene::corkscrew::thin_pairs(selection.pairs(dim / 2)?);
            let most = seq.min(MAX_DRAWN_POSITIONS);
            let positions = count("positions", args.positions, most.min(256), 1..=most)?;
            let (first, last) = (start as usize, start as usize + seq - 1);
            let m = count("m", args.m, first + 12.min(seq - 1), first..=last)? as u64;
            let n = count("n", args.n, first + 4.min(seq - 1), first..=last)? as u64;
            let camera = args.camera.as_deref().map(parse_camera).transpose()?;
            FigureSpec::Corkscrew(CorkscrewFigure {
                dim,
                base,
                layout,
                pairs,
                first_position: start,
                position_count: positions,
                query: args.query_vector.unwrap_or(ProbeVector::UnitPairs),
                key: args.key_vector.unwrap_or(ProbeVector::UnitPairs),
                query_position: m,
                key_position: n,
                seq,
                camera,
            })
        }
    };
    Ok(spec)
}

/// `YAW,PITCH,DISTANCE` in degrees, degrees and world units, looking at the scene's centre,
/// or at `X,Y,Z` given after them.
fn parse_camera(text: &str) -> Result<OrbitCamera, CliError> {
    let bad = || {
        CliError::usage(format!(
            "--camera {text} is not allowed: give YAW,PITCH,DISTANCE in degrees, degrees \
             (-85 to 85) and world units, e.g. -25.8,17.2,40, optionally followed by X,Y,Z"
        ))
    };
    let parts: Vec<f32> = text
        .split(',')
        .map(|p| p.trim().parse::<f32>().map_err(|_| bad()))
        .collect::<Result<_, _>>()?;
    let (angles, target) = match parts.as_slice() {
        [yaw, pitch, distance] => ([*yaw, *pitch, *distance], glam::Vec3::ZERO),
        [yaw, pitch, distance, x, y, z] => ([*yaw, *pitch, *distance], glam::Vec3::new(*x, *y, *z)),
        _ => return Err(bad()),
    };
    let [yaw, pitch, distance] = angles;
    let usable = yaw.is_finite()
        && pitch.abs() <= 85.0
        && distance > 0.0
        && distance.is_finite()
        && target.is_finite();
    if !usable {
        return Err(bad());
    }
    Ok(OrbitCamera {
        target,
        yaw_rad: yaw.to_radians(),
        pitch_rad: pitch.to_radians(),
        distance,
    })
}

/// `poslab figure`: checks everything, builds the figure, writes it atomically.
pub(crate) fn write_figure(args: &FigureArgs, matches: &ArgMatches) -> Result<(), CliError> {
    check_options_apply(args.view, matches)?;
    let output = args
        .output
        .as_deref()
        .ok_or_else(|| CliError::usage("--output is required: a .svg or .png file name"))?;
    if !(1.0..=f64::from(MAX_SCALE)).contains(&args.scale) {
        return Err(CliError::usage(format!(
            "--scale {} is not allowed: use 1 to {MAX_SCALE}",
            args.scale
        )));
    }
    let format = FigureFormat::from_path(output, args.scale as f32).ok_or_else(|| {
        CliError::usage(format!(
            "--output {}: the file name must end in .svg or .png",
            output.display()
        ))
    })?;
    if format == FigureFormat::Svg
        && matches.value_source("scale") == Some(ValueSource::CommandLine)
    {
        return Err(CliError::usage(
            "--scale applies to .png figures; an .svg is vector and has no scale",
        ));
    }
    let size = |id: &'static str, value: i64| {
        u32::try_from(value)
            .ok()
            .filter(|v| SIZE_RANGE.contains(v))
            .ok_or_else(|| {
                CliError::usage(format!(
                    "--{id} {value} is not allowed: use {} to {} pixels",
                    SIZE_RANGE.start(),
                    SIZE_RANGE.end()
                ))
            })
    };
    let (width, height) = (size("width", args.width)?, size("height", args.height)?);
    if let FigureFormat::Png { scale } = format {
        crate::export::figure::check_png_size(width, height, scale).map_err(CliError::usage)?;
    }
    let style = FigureStyle {
        width,
        height,
        colormap: args.colormap,
        title: args.title.clone(),
        reduce: args.reduce,
    };
    if output.is_dir() {
        return Err(CliError::usage(format!(
            "--output {} is a folder; give a file name ending in .svg or .png",
            output.display()
        )));
    }
    let spec = figure_spec(args)?;
    // Fail on an unwritable folder before the work.
    super::check_output(output)?;
    let figure = build_figure(&spec, &style).map_err(|e| CliError::usage(e.to_string()))?;
    figure
        .write(output, format)
        .map_err(|e| CliError::runtime(format!("writing {} failed: {e}", output.display())))
}
