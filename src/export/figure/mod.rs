//! Figures for slides and papers: a small model of a figure (panels with axes, heatmaps as
//! images, curves, a colour bar, projected 3D lines), written as SVG with the `svg` crate and
//! rasterised to PNG with `resvg`, so that the PNG is the SVG's picture at any scale. The app's
//! export and `poslab figure` build the same [`Figure`] from the same [`FigureSpec`], computed
//! by the CPU engine, so they give the same picture. Each view's figure is a module of its own
//! (its options, their words, its drawing), listed once in `registry.rs`.

// The figures, each a module of its own (its options, their words, its drawing) and a line of
// the list below; the rest is what they share.
pub mod alibi;
pub mod axes;
pub mod budget;
pub mod check;
pub mod context;
pub mod context_vision;
pub mod corkscrew;
pub mod dot_decay;
pub mod layouts;
pub mod learned;
pub mod patches;
pub mod precision;
pub mod relative;
mod sinusoidal;
pub mod tour;

mod command;
mod draw;
pub mod options;
mod panels;
#[macro_use]
mod registry;

use std::path::{Path, PathBuf};

pub use alibi::AlibiFigure;
pub use check::CheckFigure;
pub use command::{command_line, command_words, table_command_line};
pub use corkscrew::{CorkscrewFigure, helix_color};
pub use dot_decay::DotDecayFigure;
pub use options::{Words, value_name, view_name};
pub use patches::PatchesFigure;
pub use registry::{Drawn, FigureKind};

use crate::colormap::Colormap;
use crate::encoding::sinusoidal::SinusoidalParams;
use crate::engine::reduce::Reduce;
use crate::export::AtomicFile;
use crate::table_args::CliError;
use axes::AxesFigure;
use context::ContextFigure;
use context_vision::VisionFigure;
use layouts::LayoutsFigure;
use learned::LearnedFigure;
use precision::PrecisionFigure;
use relative::RelativeFigure;
use tour::TourFigure;

/// Options of `poslab figure`: the style options every figure takes, then each figure's own,
/// documented with the figures that read them.
#[derive(Debug, Clone, clap::Args)]
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

    #[command(flatten)]
    pub dot_decay: dot_decay::DotDecayOptions,

    #[command(flatten)]
    pub alibi: crate::options::AlibiOptions,

    /// patches: the query patch in raster order (default: the centre)
    #[arg(long, value_name = "K")]
    pub query: Option<i64>,

    #[command(flatten)]
    pub patches: patches::PatchesOptions,

    #[command(flatten)]
    pub grid2d: crate::options::Grid2dOptions,

    #[command(flatten)]
    pub corkscrew: corkscrew::CorkscrewOptions,

    /// check: the table to check, .npy, .csv or .safetensors
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,

    /// learned: the example table poslab ships (all-MiniLM-L6-v2's 512 x 384 position
    /// embeddings) instead of --file
    #[arg(long)]
    pub example: bool,

    #[command(flatten)]
    pub reading: crate::options::FileOptions,

    #[command(flatten)]
    pub check: crate::options::ExpectedOptions,

    #[command(flatten)]
    pub context: context::ContextOptions,

    #[command(flatten)]
    pub vision: context_vision::VisionOptions,

    #[command(flatten)]
    pub relative: relative::RelativeFigureOptions,

    #[command(flatten)]
    pub learned: learned::LearnedOptions,

    #[command(flatten)]
    pub tour: tour::TourOptions,

    #[command(flatten)]
    pub arithmetic: crate::options::ArithmeticOptions,

    #[command(flatten)]
    pub permutation: crate::options::PermutationOptions,

    #[command(flatten)]
    pub axes: axes::AxesOptions,
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

figures! {
    /// The [seq, dim] sinusoidal table as a heatmap
    Sinusoidal(SinusoidalParams),
    /// PE[a]·PE[a+k] against the offset k
    DotDecay(DotDecayFigure),
    /// ALiBi bias matrices: one head (--head) or all heads as small multiples
    Alibi(AlibiFigure),
    /// Two per-query patch maps side by side (--left, --right)
    Patches(PatchesFigure),
    /// RoPE helices in 3D, projected as vector lines
    Corkscrew(CorkscrewFigure),
    /// RoPE's two pair layouts: one head's q and rotation in each, and a grouped-query model's
    /// k rows and scores permuted right and with the query head count (--head-dim, --heads,
    /// --kv-heads, --offset)
    Layouts(LayoutsFigure),
    /// A table from a file (--file) next to poslab's reference and their difference
    Check(CheckFigure),
    /// Context extension: wavelengths per method, unseen angles, and a --chart
    Context(Box<ContextFigure>),
    /// Context extension for ViTs: a position table resampled to a larger grid, and the 2D
    /// encodings that need no resampling
    ContextVision(VisionFigure),
    /// Relative positions: offsets, Shaw's clipping, T5 buckets, ALiBi, the skew trick
    /// (--stage), 2D offsets (--panel)
    Relative(RelativeFigure),
    /// The tour "From counting to sinusoids", one step (--step 1 to 9)
    Tour(TourFigure),
    /// A learned position table (--file, --tensor) beside the sinusoidal one: similarity,
    /// principal components, --columns against position
    Learned(LearnedFigure),
    /// The precision lab: RoPE's score drift and cos cache error against position in float32,
    /// bfloat16 and float16 (--offset, --seed)
    Precision(PrecisionFigure),
    /// RoPE over time, height and width: every token's similarity to one (--token) under 1D
    /// RoPE, M-RoPE and per-axis RoPE, frame by frame
    Axes(AxesFigure),
}

impl FigureSpec {
    /// Whether the figure colours cells (heatmaps, with a colour bar), so that `--colormap`
    /// and `--reduce` change it; a figure of curves or lines alone is refused them rather than
    /// drawn the same (tests/figures.rs holds this to every figure as drawn).
    pub fn colours_cells(&self) -> bool {
        use crate::scene::tour::TourStep;
        match self {
            FigureSpec::DotDecay(_) | FigureSpec::Corkscrew(_) | FigureSpec::Precision(_) => false,
            FigureSpec::Tour(tour) => !matches!(
                tour.step,
                TourStep::Counting | TourStep::Normalised | TourStep::DotProduct
            ),
            _ => true,
        }
    }
}

/// The largest PNG scale: four times the figure's size.
pub const MAX_SCALE: f32 = 4.0;
/// Figure sizes, in CSS pixels.
pub const SIZE_RANGE: std::ops::RangeInclusive<u32> = 200..=8000;
/// The most pixels a PNG may have (8192 x 8192): rendering takes about 13 bytes a pixel (the
/// pixmap, the PNG's filtered rows and its compressed copy), so this one is near 900 MB.
pub const MAX_PNG_PIXELS: u64 = 1 << 26;

/// Refuses a PNG of more than [`MAX_PNG_PIXELS`] before anything is drawn.
pub fn check_png_size(width: u32, height: u32, scale: f32) -> Result<(), String> {
    let (w, h) = png_pixels(width, height, scale);
    if w * h > MAX_PNG_PIXELS {
        return Err(format!(
            "a {width} x {height} figure at scale {scale} is a {w} x {h} pixel PNG ({} million pixels); poslab draws PNGs of up to {} million pixels (8000 x 8000 at scale 1, 4000 x 4000 at scale 2, 2000 x 2000 at scale 4): use a smaller size or scale, or .svg",
            w * h / 1_000_000,
            MAX_PNG_PIXELS / 1_000_000
        ));
    }
    Ok(())
}

/// The PNG's width and height in pixels for a figure of `width` x `height` at `scale`.
fn png_pixels(width: u32, height: u32, scale: f32) -> (u64, u64) {
    let side = |v: u32| (v as f32 * scale).round().max(1.0) as u64;
    (side(width), side(height))
}

/// Builds the figure of `spec` in `style`.
pub fn build_figure(spec: &FigureSpec, style: &FigureStyle) -> Result<Figure, FigureError> {
    let drawn = spec.draw(style)?;
    let mut figure = Figure {
        width: f64::from(style.width),
        height: f64::from(style.height),
        title: style.title.clone().unwrap_or(drawn.title),
        panels: drawn.panels,
        colorbar: drawn.colorbar,
        columns: drawn.columns,
    };
    if drawn.square_panels {
        draw::trim_to_square_panels(&mut figure);
    }
    Ok(figure)
}

/// Size, colours and title of a figure.
#[derive(Debug, Clone, PartialEq)]
pub struct FigureStyle {
    pub width: u32,
    pub height: u32,
    pub colormap: Colormap,
    /// Replaces the figure's own title when given.
    pub title: Option<String>,
    /// What a heatmap cell of the figure shows when it stands for several of the table's.
    pub reduce: crate::engine::reduce::Reduce,
}

impl Default for FigureStyle {
    fn default() -> Self {
        Self {
            width: 1000,
            height: 700,
            colormap: Colormap::Viridis,
            title: None,
            reduce: crate::engine::reduce::Reduce::Mean,
        }
    }
}

/// A figure: a title over panels placed in a grid.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub width: f64,
    pub height: f64,
    pub title: String,
    pub panels: Vec<Panel>,
    /// One colour bar for every heatmap of the figure.
    pub colorbar: Option<ColorBar>,
    /// Panels across; `None`: as square a grid as fits them.
    pub columns: Option<usize>,
}

/// One plot of a figure.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    pub title: String,
    /// One data unit is as long across as down (patch grids).
    pub equal_aspect: bool,
    /// A colour bar of the panel's own, beside it, for a heatmap whose values are not on the
    /// figure's shared scale (two different measures side by side).
    pub colorbar: Option<ColorBar>,
    pub x: Axis,
    pub y: Axis,
    pub content: Content,
}

/// An axis: its label and the data range it spans.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub label: String,
    pub min: f64,
    pub max: f64,
    /// Values are log10 of the data; ticks read `10^k`.
    pub log10: bool,
    /// Grows downwards (rows of a table) instead of upwards.
    pub downwards: bool,
    pub hidden: bool,
}

impl Axis {
    pub fn new(label: impl Into<String>, min: f64, max: f64) -> Self {
        Self {
            label: label.into(),
            min,
            max,
            log10: false,
            downwards: false,
            hidden: false,
        }
    }

    pub fn downwards(mut self) -> Self {
        self.downwards = true;
        self
    }

    pub fn log10(mut self) -> Self {
        self.log10 = true;
        self
    }

    pub fn hidden(mut self) -> Self {
        self.hidden = true;
        self
    }
}

/// What a panel shows.
#[derive(Debug, Clone, PartialEq)]
pub enum Content {
    /// Colour-mapped values filling the plot area; row 0 at the top. Cells are centred on
    /// integer coordinates of the axes.
    Heatmap {
        /// `[rows][cols]` as one slice, row-major.
        values: Vec<f64>,
        rows: usize,
        cols: usize,
        /// Cells to outline, as `(row, col)`.
        outlined: Vec<(usize, usize)>,
        /// Lines over the cells, in the axes' coordinates.
        overlay: Vec<Series>,
    },
    /// Curves and point sets in data coordinates.
    Plot(Vec<Series>),
    /// A board of labelled cells filling the plot area, cell `(row, col)` centred on `(col,
    /// row)` of the axes, coloured on the board's own range.
    Board(crate::scene::board::Board),
    /// Lines already projected to the plot area, in `[0, 1]` across and down.
    Projected {
        lines: Vec<ProjectedLine>,
        dots: Vec<ProjectedDot>,
        labels: Vec<ProjectedLabel>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<[f64; 2]>,
    pub color: [u8; 3],
    pub style: SeriesStyle,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SeriesStyle {
    Line {
        width: f64,
    },
    Dots {
        radius: f64,
    },
    /// A horizontal line across the plot at the first point's y.
    HorizontalLine,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ProjectedLine {
    pub points: Vec<[f64; 2]>,
    pub color: [u8; 3],
    pub width: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ProjectedDot {
    pub at: [f64; 2],
    pub color: [u8; 3],
    /// A ring rather than a filled disk.
    pub ring: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ProjectedLabel {
    pub at: [f64; 2],
    pub text: String,
    pub color: [u8; 3],
}

/// The colour bar shared by a figure's heatmaps.
#[derive(Debug, Clone, PartialEq)]
pub struct ColorBar {
    pub colormap: Colormap,
    pub min: f64,
    pub max: f64,
    pub label: String,
}

/// The figure formats.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FigureFormat {
    Svg,
    /// PNG at a scale of the figure's size (1 to [`MAX_SCALE`]).
    Png {
        scale: f32,
    },
}

impl FigureFormat {
    /// The format named by `path`'s extension.
    pub fn from_path(path: &Path, scale: f32) -> Option<Self> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "svg" => Some(Self::Svg),
            "png" => Some(Self::Png { scale }),
            _ => None,
        }
    }
}

/// Why a figure could not be made or written.
#[derive(Debug, thiserror::Error)]
pub enum FigureError {
    #[error("{0}")]
    Engine(#[from] crate::engine::EngineError),
    #[error("{0}")]
    Param(#[from] crate::encoding::ParamError),
    /// A file the figure shows could not be used.
    #[error("{0}")]
    Input(String),
    #[error("rendering the PNG failed: {0}")]
    Render(String),
    #[error("{}", crate::export::io_text(.0))]
    Io(#[from] std::io::Error),
}

/// How figures' SVG is read back: with the app's own font as the sans-serif family, so that a
/// PNG looks the same on every machine, fonts installed or not.
pub fn svg_options() -> resvg::usvg::Options<'static> {
    let mut options = resvg::usvg::Options::default();
    let fontdb = options.fontdb_mut();
    fontdb.load_font_data(epaint_default_fonts::UBUNTU_LIGHT.to_vec());
    fontdb.load_font_data(epaint_default_fonts::HACK_REGULAR.to_vec());
    let family = fontdb
        .faces()
        .next()
        .and_then(|face| face.families.first().map(|(name, _)| name.clone()));
    if let Some(family) = family {
        fontdb.set_sans_serif_family(family);
    }
    options
}

impl Figure {
    /// The figure as an SVG document.
    pub fn to_svg(&self) -> String {
        draw::svg_document(self).to_string()
    }

    /// The figure as PNG bytes at `scale` times its size.
    pub fn to_png(&self, scale: f32) -> Result<Vec<u8>, FigureError> {
        let scale = scale.clamp(0.25, MAX_SCALE);
        check_png_size(self.width as u32, self.height as u32, scale)
            .map_err(FigureError::Render)?;
        let options = svg_options();
        let svg = self.to_svg();
        let tree = resvg::usvg::Tree::from_str(&svg, &options)
            .map_err(|e| FigureError::Render(e.to_string()))?;
        let (width, height) = png_pixels(self.width as u32, self.height as u32, scale);
        let (width, height) = (width as u32, height as u32);
        let mut pixmap = resvg::tiny_skia::Pixmap::new(width, height).ok_or_else(|| {
            FigureError::Render(format!("cannot make a {width} x {height} image"))
        })?;
        resvg::render(
            &tree,
            resvg::tiny_skia::Transform::from_scale(scale, scale),
            &mut pixmap.as_mut(),
        );
        pixmap
            .encode_png()
            .map_err(|e| FigureError::Render(e.to_string()))
    }

    /// Writes the figure to `path` atomically.
    pub fn write(&self, path: &Path, format: FigureFormat) -> Result<(), FigureError> {
        let bytes = match format {
            FigureFormat::Svg => self.to_svg().into_bytes(),
            FigureFormat::Png { scale } => self.to_png(scale)?,
        };
        let mut file = AtomicFile::create(path)?;
        std::io::Write::write_all(file.writer(), &bytes)?;
        file.commit()?;
        Ok(())
    }
}
