//! The precision lab's figure: the score drift and the cache error against position, one curve
//! per compute type, on log axes, as the view draws them.

use super::FigureArgs;
use super::options::{Words, count};
use super::panels::span;
use super::{
    Axis, Content, Drawn, FigureError, FigureKind, FigureStyle, Panel, Series, SeriesStyle,
};
use crate::encoding::precision::ComputeType;
use crate::scene::precision::{ErrorCurve, PrecisionSettings, compute_color as color, curves};
use crate::table_args::CliError;

/// The lab's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PrecisionFigure {
    pub settings: PrecisionSettings,
}

impl FigureKind for PrecisionFigure {
    const OPTIONS: &'static [&'static str] = &["seq", "dim", "base", "offset", "seed"];

    fn from_options(args: &FigureArgs) -> Result<Self, CliError> {
        let d = PrecisionSettings::default();
        let seq = count("seq", args.sizes.seq, d.seq, 2..=1 << 20)?;
        let settings = PrecisionSettings {
            seq,
            dim: count("dim", args.sizes.dim, d.dim, 2..=4096)?,
            base: args.sinusoidal.base.unwrap_or(d.base),
            offset: count(
                "offset",
                args.arithmetic.offset,
                d.offset as usize,
                0..=(1usize << 24) - seq,
            )? as u64,
            seed: args.arithmetic.seed,
        };
        settings.validate()?;
        Ok(Self { settings })
    }

    fn write_options(&self, words: &mut Words) {
        let s = &self.settings;
        words.option("seq", s.seq);
        words.option("dim", s.dim);
        words.option("base", s.base);
        words.option("offset", s.offset);
        if let Some(seed) = s.seed {
            words.option("seed", seed);
        }
    }

    fn draw(&self, _style: &FigureStyle) -> Result<Drawn, FigureError> {
        let s = &self.settings;
        let shown = curves(s, &crate::jobs::Cancel::default())
            .map_err(|_| FigureError::Input("cancelled".to_owned()))?
            .map_err(|e| FigureError::Input(e.to_string()))?;
        let drift = plot_panel(
            format!(
                "q_(n+{})·k_n − exact ({:.6}): the score drifts with position",
                s.offset, shown.exact_score
            ),
            "|score − exact|",
            &shown.drift,
            &[],
            s.seq,
        );
        let cache = plot_panel(
            "cos cache − exact cos, largest over pairs".to_owned(),
            "|cos − exact|",
            &shown.cache,
            &shown.collisions,
            s.seq,
        );
        Ok(Drawn::new(
            format!(
                "RoPE in float32, bfloat16 and float16: d = {}, base {}, {} positions{}",
                s.dim,
                s.base,
                s.seq,
                match s.seed {
                    Some(seed) => format!(", q and k from seed {seed}"),
                    None => ", q = k = ones".to_owned(),
                }
            ),
            vec![drift, cache],
        )
        .in_columns(1))
    }
}

/// Curves on log axes (positions from 1), with dotted marks where positions collide.
fn plot_panel(
    title: String,
    y_label: &str,
    curves: &[ErrorCurve],
    collisions: &[(ComputeType, u64)],
    seq: usize,
) -> Panel {
    let mut series: Vec<Series> = curves
        .iter()
        .map(|curve| Series {
            name: curve.label.clone(),
            points: curve
                .points
                .iter()
                .filter(|p| p[0] >= 1.0)
                .map(|p| [p[0].log10(), p[1].log10()])
                .collect(),
            color: color(curve.compute),
            style: if curve.cast_positions {
                SeriesStyle::Dots { radius: 1.2 }
            } else {
                SeriesStyle::Line { width: 1.6 }
            },
        })
        .collect();
    let (low, high) = span(series.iter().flat_map(|s| s.points.iter().map(|p| p[1])));
    for (compute, position) in collisions {
        let x = (*position as f64).log10();
        series.push(Series {
            name: format!("{} positions collide from {position}", compute.name()),
            points: vec![[x, low], [x, high]],
            color: color(*compute),
            style: SeriesStyle::Line { width: 0.8 },
        });
    }
    Panel {
        title,
        equal_aspect: false,
        colorbar: None,
        x: Axis::new(
            "position",
            0.0,
            (seq.saturating_sub(1).max(2) as f64).log10(),
        )
        .log10(),
        y: Axis::new(y_label, low, high).log10(),
        content: Content::Plot(series),
    }
}
