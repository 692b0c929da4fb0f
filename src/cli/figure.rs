//! `poslab figure VIEW [options] -o out.svg|out.png`: a view's figure with no window and no
//! display. The defaults are the app's, so `poslab figure VIEW -o f.svg` is what the app exports
//! before any control is touched.

use std::path::PathBuf;

use clap::parser::ValueSource;
use clap::{ArgMatches, Args, ValueEnum};

use super::{CliError, LayoutArg, flag, io_problem, read_input_2d};
use crate::app::params::SharedParams;
use crate::encoding::ParamError;
use crate::encoding::alibi::{AlibiMode, AlibiParams};
use crate::encoding::grid::GridParams;
use crate::encoding::rope::RopeLayout;
use crate::encoding::sinusoidal::{SinusoidalLayout, Spacing};
use crate::engine::patch_maps::{PatchMapSettings, PatchMethod};
use crate::export::figure::{
    CorkscrewFigure, FigureFormat, FigureSpec, FigureStyle, MAX_SCALE, SIZE_RANGE, build_figure,
};
use crate::scene::camera::OrbitCamera;
use crate::scene::corkscrew::{MAX_DRAWN_POSITIONS, PairSelection, ProbeVector};
use crate::widgets::colormap::Colormap;

/// The views `poslab figure` draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FigureView {
    /// The [seq, dim] sinusoidal table as a heatmap
    Sinusoidal,
    /// PE[a]·PE[a+k] against the offset k
    DotDecay,
    /// ALiBi bias matrices: one head (--head) or all heads as small multiples
    Alibi,
    /// Two per-query patch maps side by side (--left, --right)
    Patches,
    /// RoPE helices in 3D, projected as vector lines
    Corkscrew,
}

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
    #[arg(long, value_name = "S", default_value_t = 1.0)]
    pub scale: f64,

    /// Colour map of heatmaps
    #[arg(long, value_enum, value_name = "MAP", default_value_t = Colormap::Viridis)]
    pub colormap: Colormap,

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
    #[arg(long, value_name = "B")]
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

    /// patches: mixed RoPE frequencies from a [2, n] .npy instead of the seed
    #[arg(long, value_name = "F.npy")]
    pub freqs: Option<PathBuf>,

    /// corkscrew: the pairs to draw, as a list such as 0,4,8-12 or all (default: every 8th)
    #[arg(long, value_name = "LIST")]
    pub pairs: Option<String>,

    /// corkscrew: positions drawn along the axis, from --start (1 to 65536; default 256)
    #[arg(long, value_name = "N")]
    pub positions: Option<i64>,

    /// corkscrew: the query position m
    #[arg(long, value_name = "M")]
    pub m: Option<i64>,

    /// corkscrew: the key position n
    #[arg(long, value_name = "N")]
    pub n: Option<i64>,

    /// corkscrew: the query vector: unit-pairs, ones or random:SEED
    #[arg(long, value_name = "VECTOR", value_parser = parse_probe)]
    pub query_vector: Option<ProbeVector>,

    /// corkscrew: the key vector: unit-pairs, ones or random:SEED
    #[arg(long, value_name = "VECTOR", value_parser = parse_probe)]
    pub key_vector: Option<ProbeVector>,

    /// corkscrew: the camera as YAW,PITCH,DISTANCE (degrees, degrees, world units), as the
    /// app's export dialog prints it (default: framing the scene)
    #[arg(long, value_name = "YAW,PITCH,DIST")]
    pub camera: Option<String>,
}

const FIGURE_NOTES: &str = "\
The defaults are the app's: the figure of a view whose controls were not touched. The app's
export dialog prints the command that makes the figure it exports.

Examples:
  poslab figure sinusoidal --seq 2048 --dim 512 -o pe.svg
  poslab figure alibi --heads 8 --seq 64 -o alibi_heads.png --scale 2
  poslab figure patches --left mixed-rope --right sin-cos --query 0 -o patches.svg
  poslab figure corkscrew --pairs 0,8,16 --m 40 --n 32 -o corkscrew.svg";

fn parse_probe(text: &str) -> Result<ProbeVector, String> {
    match text {
        "unit-pairs" => Ok(ProbeVector::UnitPairs),
        "ones" => Ok(ProbeVector::Ones),
        _ => text
            .strip_prefix("random:")
            .and_then(|seed| seed.parse().ok())
            .map(ProbeVector::Random)
            .ok_or_else(|| "use unit-pairs, ones or random:SEED (SEED a whole number)".to_owned()),
    }
}

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
            "grid_h", "grid_w", "query", "left", "right", "heads", "head", "dim", "base", "seed",
            "freqs",
        ],
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

fn view_name(view: FigureView) -> String {
    view.to_possible_value()
        .map(|v| v.get_name().to_owned())
        .unwrap_or_default()
}

fn check_options_apply(view: FigureView, matches: &ArgMatches) -> Result<(), CliError> {
    const EVERY_VIEW: &[&str] = &[
        "view", "output", "width", "height", "scale", "colormap", "title",
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
    let defaults = SharedParams::default();
    let mut shared = defaults;
    shared.seq = count("seq", args.seq, defaults.seq, 1..=1 << 30)?;
    shared.dim = count("dim", args.dim, defaults.dim, 2..=1 << 20)?;
    shared.base = args.base.unwrap_or(defaults.base);
    shared.start = count("start", args.start, 0, 0..=(1usize << 53) - 1)? as u64;
    shared.heads = count("heads", args.heads, defaults.heads, 1..=1 << 16)?;
    let sinusoidal_layout = |args: &FigureArgs| match args.layout {
        None | Some(LayoutArg::Interleaved) => Ok(SinusoidalLayout::Interleaved),
        Some(LayoutArg::Split) => Ok(SinusoidalLayout::Split),
        Some(LayoutArg::Half) => Err(CliError::usage(
            "--layout half is not allowed for this figure: use interleaved or split",
        )),
    };
    let spec = match args.view {
        FigureView::Sinusoidal | FigureView::DotDecay => {
            let mut params = shared.sinusoidal();
            params.layout = sinusoidal_layout(args)?;
            params.spacing = args.spacing.unwrap_or(Spacing::Vaswani);
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
                heads: shared.heads,
                seq: shared.seq,
                mode: args.mode.unwrap_or(AlibiMode::Causal),
            };
            let head = match args.head {
                Some(head) => Some(count("head", Some(head), 0, 0..=shared.heads - 1)?),
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
            let head = count("head", args.head, 0, 0..=shared.heads - 1)?;
            let loaded_freqs = match &args.freqs {
                Some(path) => {
                    let freqs = read_input_2d("freqs", path)?;
                    crate::encoding::rope2d::check_mixed_freqs_shape(freqs.shape())?;
                    Some(freqs)
                }
                None => None,
            };
            let settings = PatchMapSettings {
                dim: (shared.dim / 4 * 4).max(4),
                base: shared.base,
                seed: args.seed.unwrap_or(0),
                loaded_freqs,
            };
            let map = |method: PatchMethod| {
                (
                    method.label().to_owned(),
                    method.spec(grid, shared.heads, head, &settings),
                )
            };
            FigureSpec::Patches {
                grid,
                query,
                maps: [
                    map(args.left.unwrap_or(PatchMethod::Euclidean)),
                    map(args.right.unwrap_or(PatchMethod::Alibi2d)),
                ],
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
            if shared.dim % 2 != 0 {
                return Err(CliError::usage(format!(
                    "--dim {} is not allowed: RoPE needs an even dimension",
                    shared.dim
                )));
            }
            let selection = match args.pairs.as_deref() {
                None => PairSelection::EveryKth(8),
                Some("all") => PairSelection::All,
                Some(list) => PairSelection::List(list.to_owned()),
            };
            let mut pairs = selection.pairs(shared.dim / 2)?;
            if pairs.len() > crate::scene::corkscrew::MAX_HELICES {
                let step = pairs.len().div_ceil(crate::scene::corkscrew::MAX_HELICES);
                pairs = pairs.into_iter().step_by(step).collect();
            }
            let most = shared.seq.min(MAX_DRAWN_POSITIONS);
            let positions = count("positions", args.positions, most.min(256), 1..=most)?;
            let last = shared.seq - 1;
            let m = count("m", args.m, 12.min(last), 0..=last)? as u64 + shared.start;
            let n = count("n", args.n, 4.min(last), 0..=last)? as u64 + shared.start;
            let camera = args.camera.as_deref().map(parse_camera).transpose()?;
            FigureSpec::Corkscrew(CorkscrewFigure {
                dim: shared.dim,
                base: shared.base,
                layout,
                pairs,
                first_position: shared.start,
                position_count: positions,
                query: args.query_vector.unwrap_or(ProbeVector::UnitPairs),
                key: args.key_vector.unwrap_or(ProbeVector::UnitPairs),
                query_position: m,
                key_position: n,
                camera,
            })
        }
    };
    Ok(spec)
}

/// `YAW,PITCH,DISTANCE` in degrees, degrees and world units, looking at the scene's centre.
fn parse_camera(text: &str) -> Result<OrbitCamera, CliError> {
    let bad = || {
        CliError::usage(format!(
            "--camera {text} is not allowed: give YAW,PITCH,DISTANCE, e.g. -25.8,17.2,40"
        ))
    };
    let parts: Vec<f32> = text
        .split(',')
        .map(|p| p.trim().parse::<f32>().map_err(|_| bad()))
        .collect::<Result<_, _>>()?;
    match parts.as_slice() {
        [yaw, pitch, distance]
            if yaw.is_finite() && pitch.abs() < 86.0 && *distance > 0.0 && distance.is_finite() =>
        {
            Ok(OrbitCamera {
                target: glam::Vec3::ZERO,
                yaw_rad: yaw.to_radians(),
                pitch_rad: pitch.to_radians(),
                distance: *distance,
            })
        }
        _ => Err(bad()),
    }
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
    let style = FigureStyle {
        width: size("width", args.width)?,
        height: size("height", args.height)?,
        colormap: args.colormap,
        title: args.title.clone(),
    };
    if output.is_dir() {
        return Err(CliError::usage(format!(
            "--output {} is a folder; give a file name ending in .svg or .png",
            output.display()
        )));
    }
    let spec = figure_spec(args)?;
    // Fail on an unwritable folder before the work.
    drop(crate::export::AtomicFile::create(output).map_err(|e| {
        CliError::usage(format!(
            "--output {}: cannot create a file there ({})",
            output.display(),
            io_problem(&e)
        ))
    })?);
    let figure = build_figure(&spec, &style).map_err(|e| CliError::usage(e.to_string()))?;
    figure
        .write(output, format)
        .map_err(|e| CliError::runtime(format!("writing {} failed: {e}", output.display())))
}
