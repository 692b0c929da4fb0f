//! The Axes view's figure: RoPE over time, height and width. One column per scheme (1D RoPE
//! flattened, Qwen2-VL's M-RoPE, Flux's per-axis RoPE), each token coloured by its similarity
//! to the chosen one: the text tokens in a strip, then each frame's patches as a grid.

use super::FigureArgs;
use super::options::{Words, count};
use super::panels::colorbar;
use super::{Axis, ColorBar, Content, Drawn, FigureError, FigureKind, FigureStyle, Panel};
use crate::scene::axes::{SchemeMaps, Token, TokenLayout, all_schemes};
use crate::table_args::CliError;

/// The axes figure's own options.
#[derive(Debug, Clone, clap::Args)]
pub struct AxesOptions {
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

/// The tokens, the head, the base and the token chosen, as the view has them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AxesFigure {
    pub layout: TokenLayout,
    /// Head dimensions, a multiple of 16.
    pub dim: usize,
    pub theta: f64,
    pub chosen: usize,
    pub same_scale: bool,
}

impl Default for AxesFigure {
    fn default() -> Self {
        let layout = TokenLayout::default();
        Self {
            layout,
            dim: 64,
            theta: crate::encoding::defaults::BASE,
            chosen: layout.middle_patch(),
            same_scale: true,
        }
    }
}

impl FigureKind for AxesFigure {
    const OPTIONS: &'static [&'static str] = &[
        "dim",
        "base",
        "text_before",
        "text_after",
        "frames",
        "patch_rows",
        "patch_cols",
        "token",
        "own_scales",
        "same_scale",
    ];

    fn from_options(args: &FigureArgs) -> Result<Self, CliError> {
        let d = TokenLayout::default();
        let layout = TokenLayout {
            text_before: count("text_before", args.axes.text_before, d.text_before, 0..=16)?,
            text_after: count("text_after", args.axes.text_after, d.text_after, 0..=16)?,
            frames: count("frames", args.axes.frames, d.frames, 1..=4)?,
            rows: count("patch_rows", args.axes.patch_rows, d.rows, 1..=32)?,
            cols: count("patch_cols", args.axes.patch_cols, d.cols, 1..=32)?,
        };
        let dim = count("dim", args.sizes.dim, 64, 16..=256)?;
        if !dim.is_multiple_of(16) {
            return Err(CliError::usage(format!(
                "--dim {dim} is not allowed: the axes figure splits a head of a multiple of 16 dimensions (16 to 256)"
            )));
        }
        let theta = args.sinusoidal.base();
        crate::encoding::check_base("base", theta)?;
        let chosen = count(
            "token",
            args.axes.token,
            layout.middle_patch(),
            0..=layout.tokens() - 1,
        )?;
        Ok(Self {
            layout,
            dim,
            theta,
            chosen,
            same_scale: !args.axes.own_scales,
        })
    }

    fn write_options(&self, words: &mut Words) {
        let l = &self.layout;
        words.option("text-before", l.text_before);
        words.option("text-after", l.text_after);
        words.option("frames", l.frames);
        words.option("patch-rows", l.rows);
        words.option("patch-cols", l.cols);
        words.option("dim", self.dim);
        words.option("base", self.theta);
        words.option("token", self.chosen);
        if !self.same_scale {
            words.switch("own-scales");
        }
    }

    fn draw(&self, style: &FigureStyle) -> Result<Drawn, FigureError> {
        let layout = &self.layout;
        let maps = all_schemes(layout, self.dim, self.theta, self.chosen);
        // Each scheme's range runs from its least similar patch to 1, as the view colours them.
        let shared_low = maps
            .iter()
            .map(|m| m.lowest_patch(layout))
            .fold(1.0f64, f64::min);
        let own_bar = |m: &SchemeMaps| -> Option<ColorBar> {
            (!self.same_scale)
                .then(|| colorbar(style, (m.lowest_patch(layout), 1.0), "similarity"))
                .flatten()
        };
        let text: Vec<usize> = (0..layout.text_before)
            .chain(layout.text_before + layout.patches()..layout.tokens())
            .collect();
        let mut panels = Vec::new();
        // Row by row of the page: the text strips, then each frame, one column per scheme.
        if !text.is_empty() {
            for m in &maps {
                let values: Vec<f64> = text.iter().map(|&t| m.similarity[t]).collect();
                let outlined = text
                    .iter()
                    .position(|&t| t == self.chosen)
                    .map(|c| vec![(0, c)])
                    .unwrap_or_default();
                panels.push(Panel {
                    title: format!(
                        "{}: text ({} before, {} after); {}",
                        m.scheme.label(),
                        layout.text_before,
                        layout.text_after,
                        axis_split(m)
                    ),
                    // A strip as tall as the frames' panels: its cells are tokens, not
                    // patches of a grid.
                    equal_aspect: false,
                    colorbar: own_bar(m),
                    x: Axis::new(
                        "text token (before, then after)",
                        -0.5,
                        text.len() as f64 - 0.5,
                    ),
                    y: Axis::new("", -0.5, 0.5).downwards(),
                    content: Content::Heatmap {
                        values,
                        rows: 1,
                        cols: text.len(),
                        outlined,
                        overlay: Vec::new(),
                    },
                });
            }
        }
        for frame in 0..layout.frames {
            for m in &maps {
                let values: Vec<f64> = (0..layout.rows)
                    .flat_map(|r| (0..layout.cols).map(move |c| (r, c)))
                    .map(|(r, c)| m.similarity[layout.patch_index(frame, r, c)])
                    .collect();
                let outlined = match layout.token(self.chosen) {
                    Token::Patch { frame: f, row, col } if f == frame => vec![(row, col)],
                    _ => Vec::new(),
                };
                panels.push(Panel {
                    title: format!("{}: frame {frame}", m.scheme.label()),
                    equal_aspect: true,
                    colorbar: own_bar(m),
                    x: Axis::new("column", -0.5, layout.cols as f64 - 0.5),
                    y: Axis::new("row", -0.5, layout.rows as f64 - 0.5).downwards(),
                    content: Content::Heatmap {
                        values,
                        rows: layout.rows,
                        cols: layout.cols,
                        outlined,
                        overlay: Vec::new(),
                    },
                });
            }
        }
        let what = match layout.token(self.chosen) {
            Token::Text { after, index } => format!(
                "text token {index} {} the image",
                if after { "after" } else { "before" }
            ),
            Token::Patch { frame, row, col } => {
                format!("the patch at frame {frame}, row {row}, column {col}")
            }
        };
        let drawn = Drawn::new(
            format!(
                "Similarity to token {} ({what}) under 1D RoPE, M-RoPE and per-axis RoPE: d = {}, base {}",
                self.chosen, self.dim, self.theta
            ),
            panels,
        )
        .in_columns(3);
        Ok(if self.same_scale {
            drawn.with_colorbar(colorbar(style, (shared_low, 1.0), "similarity"))
        } else {
            drawn
        })
    }
}

/// How many pairs each axis turns, as the view's strip says it.
fn axis_split(m: &SchemeMaps) -> String {
    match m.axis_sizes() {
        Some(sizes) => sizes + " pairs",
        None => "every pair turns with the sequence".to_owned(),
    }
}
