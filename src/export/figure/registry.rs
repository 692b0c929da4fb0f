//! The figures `poslab figure` draws, one line each. A figure is a module of its own that
//! implements [`FigureKind`]: the options it reads, the words that give them back (the app's
//! export dialog prints them) and its drawing. Adding a figure is its module and a line here.

use super::alibi::AlibiFigure;
use super::check::CheckFigure;
use super::context::ContextFigure;
use super::context_vision::VisionFigure;
use super::corkscrew::CorkscrewFigure;
use super::dot_decay::DotDecayFigure;
use super::learned::LearnedFigure;
use super::options::{FigureArgs, Words};
use super::patches::PatchesFigure;
use super::relative::RelativeFigure;
use super::tour::TourFigure;
use super::{ColorBar, FigureError, FigureStyle, Panel};
use crate::encoding::sinusoidal::SinusoidalParams;
use crate::table_args::CliError;

/// One figure: its options, the words that give them back, its drawing.
pub trait FigureKind: Sized {
    /// The options it reads (clap ids of [`FigureArgs`]); the style options apply to every
    /// figure, and any other given is refused.
    const OPTIONS: &'static [&'static str];
    /// The figure from the options, starting from the view's defaults; bad values are refused
    /// with one message naming the option and what it allows.
    fn from_options(args: &FigureArgs) -> Result<Self, CliError>;
    /// Its settings as options, which [`FigureKind::from_options`] reads back to the same
    /// figure.
    fn write_options(&self, words: &mut Words);
    /// Its title and panels, computed by the CPU engine (f64, the same numbers everywhere).
    fn draw(&self, style: &FigureStyle) -> Result<Drawn, FigureError>;
}

impl<T: FigureKind> FigureKind for Box<T> {
    const OPTIONS: &'static [&'static str] = T::OPTIONS;

    fn from_options(args: &FigureArgs) -> Result<Self, CliError> {
        T::from_options(args).map(Box::new)
    }

    fn write_options(&self, words: &mut Words) {
        (**self).write_options(words)
    }

    fn draw(&self, style: &FigureStyle) -> Result<Drawn, FigureError> {
        (**self).draw(style)
    }
}

/// What a figure draws, before the page's size and the user's title are applied.
#[derive(Debug, Clone, PartialEq)]
pub struct Drawn {
    pub title: String,
    pub panels: Vec<Panel>,
    /// One colour bar for every heatmap of the figure.
    pub colorbar: Option<ColorBar>,
    /// Panels across; `None`: as square a grid as fits them.
    pub columns: Option<usize>,
    /// Panels of patch grids: the page trimmed so that each is square.
    pub square_panels: bool,
}

impl Drawn {
    pub fn new(title: String, panels: Vec<Panel>) -> Self {
        Self {
            title,
            panels,
            colorbar: None,
            columns: None,
            square_panels: false,
        }
    }

    pub fn with_colorbar(mut self, colorbar: Option<ColorBar>) -> Self {
        self.colorbar = colorbar;
        self
    }

    pub fn in_columns(mut self, columns: usize) -> Self {
        self.columns = Some(columns);
        self
    }

    pub fn square_panels(mut self) -> Self {
        self.square_panels = true;
        self
    }
}

/// Declares [`FigureView`] (the names on the command line, with their help) and
/// [`FigureSpec`] (a figure's settings) from one list, and dispatches to each figure's
/// [`FigureKind`].
macro_rules! figures {
    ($( $(#[$doc:meta])* $view:ident($figure:ty), )+) => {
        /// The views `poslab figure` draws.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
        pub enum FigureView {
            $( $(#[$doc])* $view, )+
        }

        /// Everything a view's figure depends on.
        #[derive(Debug, Clone, PartialEq)]
        pub enum FigureSpec {
            $( $view($figure), )+
        }

        impl FigureView {
            /// The options its figure reads (clap ids).
            pub fn options(self) -> &'static [&'static str] {
                match self {
                    $( Self::$view => <$figure as FigureKind>::OPTIONS, )+
                }
            }
        }

        impl FigureSpec {
            /// The view's figure from `poslab figure`'s options.
            pub fn from_options(args: &FigureArgs) -> Result<Self, CliError> {
                match args.view {
                    $( FigureView::$view => <$figure as FigureKind>::from_options(args).map(Self::$view), )+
                }
            }

            /// The view whose figure this is.
            pub fn view(&self) -> FigureView {
                match self {
                    $( Self::$view(_) => FigureView::$view, )+
                }
            }

            pub(super) fn write_options(&self, words: &mut Words) {
                match self {
                    $( Self::$view(figure) => figure.write_options(words), )+
                }
            }

            pub(super) fn draw(&self, style: &FigureStyle) -> Result<Drawn, FigureError> {
                match self {
                    $( Self::$view(figure) => figure.draw(style), )+
                }
            }
        }
    };
}

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
}
