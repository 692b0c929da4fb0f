//! The Sinusoidal view's figure: the `[seq, dim]` table as one heatmap.

use super::FigureArgs;
use super::options::{self, Words};
use super::panels::{MAX_CELLS, colorbar, heatmap_panel};
use super::{Drawn, FigureError, FigureKind, FigureStyle};
use crate::encoding::PairLayout;
use crate::encoding::sinusoidal::{FirstOfPair, SinusoidalParams, Spacing};
use crate::engine::TableSpec;
use crate::table_args::CliError;

/// The table's parameters from the options, starting from the app's defaults (the dot-product
/// decay figure reads the same).
pub(super) fn params_from(args: &FigureArgs) -> Result<SinusoidalParams, CliError> {
    let layout = args.sinusoidal.layout.unwrap_or_default();
    // The table's --scale, spelled --amplitude here (a figure's --scale is the PNG's).
    if let Some(a) = args.amplitude
        && !(a.is_finite() && a > 0.0)
    {
        return Err(CliError::usage(format!(
            "--amplitude {a} is not allowed: use a finite number above 0 (what every value is multiplied by)"
        )));
    }
    let params = SinusoidalParams {
        seq: options::seq(args)?,
        dim: options::dim(args)?,
        base: options::base(args),
        start: options::start(args)?,
        layout,
        spacing: args.sinusoidal.spacing.unwrap_or(Spacing::Vaswani),
        first: args.sinusoidal.first.unwrap_or_default(),
        amplitude: args.amplitude.unwrap_or(1.0),
    };
    params.validate()?;
    Ok(params)
}

/// The table's parameters as options.
pub(super) fn write_params(params: &SinusoidalParams, words: &mut Words) {
    words.option("seq", params.seq);
    words.option("dim", params.dim);
    crate::options::sinusoidal::write(params, words);
    // The original transformer's amplitude goes unsaid.
    if params.amplitude != 1.0 {
        words.option("amplitude", params.amplitude);
    }
}

impl FigureKind for SinusoidalParams {
    const OPTIONS: &'static [&'static str] = &[
        "seq",
        "dim",
        "base",
        "start",
        "layout",
        "spacing",
        "first",
        "amplitude",
    ];

    fn from_options(args: &FigureArgs) -> Result<Self, CliError> {
        params_from(args)
    }

    fn write_options(&self, words: &mut Words) {
        write_params(self, words);
    }

    fn draw(&self, style: &FigureStyle) -> Result<Drawn, FigureError> {
        let table = TableSpec::Sinusoidal(*self);
        let (panel, range) = heatmap_panel(
            &table,
            0,
            format!("[{}, {}] table", self.seq, self.dim),
            ("dimension", "position"),
            MAX_CELLS,
            style.reduce,
        )?;
        Ok(Drawn::new(
            format!(
                "Sinusoidal encoding, d = {}, base {}, {} layout, {:?} spacing{}{}",
                self.dim,
                self.base,
                match self.layout {
                    PairLayout::Interleaved => "Interleaved",
                    PairLayout::Half => "Split",
                },
                self.spacing,
                if self.first == FirstOfPair::Cos {
                    ", cos first"
                } else {
                    ""
                },
                if self.amplitude == 1.0 {
                    String::new()
                } else {
                    format!(", times {}", self.amplitude)
                }
            ),
            vec![panel],
        )
        .with_colorbar(colorbar(style, range, "PE value")))
    }
}
