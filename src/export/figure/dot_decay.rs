//! The dot-product decay figure: `PE[a]·PE[a+k]` against the offset `k`, one curve.

use super::FigureArgs;
use super::options::{Words, count};
use super::panels::{MAX_CELLS, finite_range, strided};
use super::sinusoidal::{params_from, write_params};
use super::{
    Axis, Content, Drawn, FigureError, FigureKind, FigureStyle, Panel, Series, SeriesStyle,
};
use crate::encoding::sinusoidal::SinusoidalParams;
use crate::engine::cpu;
use crate::table_args::CliError;

/// The dot-decay figure's own options.
#[derive(Debug, Clone, clap::Args)]
pub struct DotDecayOptions {
    /// dot-decay: divide by d/2 so that the curve starts at 1
    #[arg(long)]
    pub normalised: bool,
}

/// The table, the anchor row and whether the curve is divided by `d/2`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DotDecayFigure {
    pub params: SinusoidalParams,
    pub anchor: usize,
    pub normalised: bool,
}

impl FigureKind for DotDecayFigure {
    const OPTIONS: &'static [&'static str] = &[
        "seq",
        "dim",
        "base",
        "start",
        "layout",
        "spacing",
        "first",
        "amplitude",
        "anchor",
        "normalised",
    ];

    fn from_options(args: &FigureArgs) -> Result<Self, CliError> {
        let params = params_from(args)?;
        Ok(Self {
            params,
            anchor: count("anchor", args.sinusoidal.anchor, 0, 0..=params.seq - 1)?,
            normalised: args.dot_decay.normalised,
        })
    }

    fn write_options(&self, words: &mut Words) {
        write_params(&self.params, words);
        words.option("anchor", self.anchor);
        if self.normalised {
            words.switch("normalised");
        }
    }

    fn draw(&self, _style: &FigureStyle) -> Result<Drawn, FigureError> {
        let (params, anchor) = (&self.params, self.anchor);
        // A curve of at most 4096 points, as the app draws it.
        let per_point = strided(params.seq, 2 * MAX_CELLS).step;
        let points = crate::scene::dot_decay::decay_curve(
            params,
            anchor,
            self.normalised,
            per_point,
            cpu::compute_window,
        )?;
        let (low, high) = finite_range(&points.iter().map(|p| p[1]).collect::<Vec<_>>());
        let pad = (high - low).abs().max(1e-9) * 0.05;
        let first = -(anchor as f64);
        let last = first + params.seq.saturating_sub(1).max(1) as f64;
        let panel = Panel {
            title: format!("anchor row a = {anchor}"),
            equal_aspect: false,
            colorbar: None,
            x: Axis::new("offset k = j - a", first, last),
            y: Axis::new(
                if self.normalised {
                    "PE[a]·PE[a+k] / (d/2)"
                } else {
                    "PE[a]·PE[a+k]"
                },
                low - pad,
                high + pad,
            ),
            content: Content::Plot(vec![Series {
                name: format!("d {} base {}", params.dim, params.base),
                points,
                color: [31, 119, 180],
                style: SeriesStyle::Line { width: 1.8 },
            }]),
        };
        Ok(Drawn::new(
            format!(
                "Dot-product decay of sinusoidal positions, {} positions",
                params.seq
            ),
            vec![panel],
        ))
    }
}
