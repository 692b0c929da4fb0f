//! What a figure is to `poslab figure` and the app's export: a module of its own that
//! implements [`FigureKind`] (the options it reads, the words that give them back, which the
//! export dialog prints, and its drawing), and the `figures!` macro that makes the list of
//! figures in `figure/mod.rs` into [`FigureView`] and [`FigureSpec`].

use super::FigureArgs;
use super::options::Words;
use super::{ColorBar, FigureError, FigureStyle, Panel};
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

/// Declares `FigureView` (the names on the command line, with their help) and `FigureSpec`
/// (a figure's settings) from one list, and dispatches to each figure's [`FigureKind`].
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

            pub(crate) fn write_options(&self, words: &mut Words) {
                match self {
                    $( Self::$view(figure) => figure.write_options(words), )+
                }
            }

            pub(crate) fn draw(&self, style: &FigureStyle) -> Result<Drawn, FigureError> {
                match self {
                    $( Self::$view(figure) => figure.draw(style), )+
                }
            }
        }
    };
}
