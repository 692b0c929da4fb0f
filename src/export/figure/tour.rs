//! The tour "From counting to sinusoids" as a figure: one step's panels, heatmaps with their
//! own colour bar (and the line over the cells where the step draws one), curves with their
//! legend. Built from the same [`TourFrame`] the app draws.

use super::FigureArgs;
use super::options::{Words, count};
use super::panels::{MAX_CELLS, finite_range, strided};
use super::{
    Axis, ColorBar, Content, Drawn, FigureError, FigureKind, FigureStyle, Panel, Series,
    SeriesStyle,
};
use crate::engine::reduce::reduce_array;
use crate::scene::tour::{self, TourCurves, TourHeatmap, TourPanel, TourSettings, TourStep};
use crate::table_args::{CliError, flag};

/// The tour figure's own options.
#[derive(Debug, Clone, clap::Args)]
pub struct TourOptions {
    /// tour: the step, 1 (counting) to 9 (the dials that turn)
    #[arg(long, value_name = "N")]
    pub step: Option<i64>,

    /// tour --step 7: the shift Δ of the translation matrix T(Δ), 0 to 10000 (default 10)
    #[arg(long, value_name = "Δ")]
    pub delta: Option<i64>,

    /// tour --step 6: the pair whose circle is drawn (default 8)
    #[arg(long, value_name = "I")]
    pub pair: Option<i64>,
}

/// What the view shows: the step and the settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TourFigure {
    pub step: TourStep,
    pub settings: TourSettings,
}

impl FigureKind for TourFigure {
    const OPTIONS: &'static [&'static str] =
        &["step", "seq", "dim", "base", "delta", "anchor", "pair"];

    fn from_options(args: &FigureArgs) -> Result<Self, CliError> {
        use crate::scene::tour::{
            BASE_RANGE, DELTA_RANGE, DIM_RANGE, LENGTH_RANGE, TourSettings, TourStep,
        };
        let number = count("step", args.tour.step, 1, 1..=TourStep::ALL.len())?;
        let step = TourStep::from_number(number)
            .ok_or_else(|| CliError::usage(format!("--step {number}: use 1 to 9")))?;
        let uses = step.uses();
        let given = [
            ("dim", args.sizes.dim.is_some(), uses.dim),
            ("base", args.sinusoidal.base.is_some(), uses.base),
            ("delta", args.tour.delta.is_some(), uses.delta),
            ("anchor", args.sinusoidal.anchor.is_some(), uses.anchor),
            ("pair", args.tour.pair.is_some(), uses.pair),
        ];
        if let Some((id, _, _)) = given.iter().find(|(_, given, used)| *given && !*used) {
            return Err(CliError::usage(format!(
                "{} does not apply to --step {number} ({}): it does not depend on it",
                flag(id),
                step.title()
            )));
        }
        let d = TourSettings::default();
        let length = count("seq", args.sizes.seq, d.length, LENGTH_RANGE)?;
        let dim = count("dim", args.sizes.dim, d.dim, DIM_RANGE)?;
        if dim % 2 != 0 {
            return Err(CliError::usage(format!(
                "--dim {dim} is not allowed: the sinusoidal table is made of sine-cosine pairs, use an even number"
            )));
        }
        let base = args.sinusoidal.base.unwrap_or(d.base);
        if !(base.is_finite() && BASE_RANGE.contains(&base)) {
            return Err(CliError::usage(format!(
                "--base {base} is not allowed: use {} to {}",
                BASE_RANGE.start(),
                BASE_RANGE.end()
            )));
        }
        let delta = count(
            "delta",
            args.tour.delta,
            d.delta as usize,
            *DELTA_RANGE.start() as usize..=*DELTA_RANGE.end() as usize,
        )? as u64;
        let anchor = count(
            "anchor",
            args.sinusoidal.anchor,
            d.anchor.min(length - 1),
            0..=length - 1,
        )?;
        let pair = count(
            "pair",
            args.tour.pair,
            d.pair.min(dim / 2 - 1),
            0..=dim / 2 - 1,
        )?;
        Ok(Self {
            step,
            settings: TourSettings {
                dim,
                base,
                length,
                delta,
                anchor,
                pair,
            },
        })
    }

    fn write_options(&self, words: &mut Words) {
        let s = &self.settings;
        let uses = self.step.uses();
        words.option("step", self.step.index() + 1);
        words.option("seq", s.length);
        if uses.dim {
            words.option("dim", s.dim);
        }
        if uses.base {
            words.option("base", s.base);
        }
        if uses.delta {
            words.option("delta", s.delta);
        }
        if uses.anchor {
            words.option("anchor", s.anchor);
        }
        if uses.pair {
            words.option("pair", s.pair);
        }
    }

    fn draw(&self, style: &FigureStyle) -> Result<Drawn, FigureError> {
        draw(self, style)
    }
}

/// The figure's title and panels (each heatmap with its own colour bar).
fn draw(figure: &TourFigure, style: &FigureStyle) -> Result<Drawn, FigureError> {
    let frame = tour::frame(figure.step, &figure.settings)?;
    let panels = frame
        .panels
        .iter()
        .map(|panel| match panel {
            TourPanel::Heatmap(map) => heatmap_panel(map, style),
            TourPanel::Curves(curves) => curves_panel(curves),
        })
        .collect();
    let title = format!("From counting to sinusoids, step {}", figure.step.title());
    // A step's panels side by side.
    Ok(Drawn::new(title, panels).in_columns(2))
}

fn heatmap_panel(map: &TourHeatmap, style: &FigureStyle) -> Panel {
    let (rows, cols) = map.values.dim();
    let (row_bins, col_bins) = (strided(rows, MAX_CELLS), strided(cols, MAX_CELLS));
    let values = reduce_array(&map.values, &row_bins, &col_bins, style.reduce);
    // A bin of cells drawn as one: the axes keep the table's own coordinates.
    let (row_step, col_step) = (row_bins.step as f64, col_bins.step as f64);
    let overlay = if map.overlay.is_empty() {
        Vec::new()
    } else {
        vec![Series {
            name: map.overlay_name.clone(),
            // Cells are centred on whole coordinates of the axes: an edge at e is at e - 1/2.
            points: map
                .overlay
                .iter()
                .map(|&[x, y]| [x / col_step - 0.5, y / row_step - 0.5])
                .collect(),
            color: [255, 255, 255],
            style: SeriesStyle::Line { width: 2.0 },
        }]
    };
    let (low, high) = map.range;
    Panel {
        title: map.title.clone(),
        equal_aspect: false,
        colorbar: Some(ColorBar {
            colormap: style.colormap,
            min: low,
            max: high,
            label: "value".into(),
        }),
        x: Axis::new(map.col_name.clone(), -0.5, values.ncols() as f64 - 0.5),
        y: Axis::new(map.row_name.clone(), -0.5, values.nrows() as f64 - 0.5).downwards(),
        content: Content::Heatmap {
            values: values.iter().copied().collect(),
            rows: values.nrows(),
            cols: values.ncols(),
            outlined: Vec::new(),
            overlay,
        },
    }
}

fn curves_panel(curves: &TourCurves) -> Panel {
    let points = || curves.curves.iter().flat_map(|c| c.points.iter());
    let ((x0, x1), (y0, y1)) = if curves.equal_aspect {
        ((-1.1, 1.1), (-1.1, 1.1))
    } else {
        (
            finite_range(&points().map(|p| p[0]).collect::<Vec<f64>>()),
            super::panels::span(points().map(|p| p[1])),
        )
    };
    Panel {
        title: curves.title.clone(),
        equal_aspect: curves.equal_aspect,
        colorbar: None,
        x: Axis::new(curves.x_name.clone(), x0, x1),
        y: Axis::new(curves.y_name.clone(), y0, y1),
        content: Content::Plot(
            curves
                .curves
                .iter()
                .map(|c| Series {
                    name: c.name.clone(),
                    points: c.points.clone(),
                    color: c.color,
                    style: if c.dots {
                        SeriesStyle::Dots { radius: 2.0 }
                    } else {
                        SeriesStyle::Line { width: 1.8 }
                    },
                })
                .collect(),
        ),
    }
}
