//! The ALiBi view's figure: one head's bias matrix, or every head as small multiples.

use super::FigureArgs;
use super::options::{self, Words, count, value_name};
use super::panels::{MAX_CELLS, colorbar, heatmap_panel};
use super::{Drawn, FigureError, FigureKind, FigureStyle};
use crate::encoding::alibi::AlibiParams;
use crate::engine::TableSpec;
use crate::options::ModeArg;
use crate::table_args::CliError;

/// The most panels a figure of every head draws (BLOOM-176B has 112 heads).
const MAX_SMALL_MULTIPLES: usize = 128;

/// The biases and the head drawn (`None`: every head).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AlibiFigure {
    pub params: AlibiParams,
    pub head: Option<usize>,
}

impl FigureKind for AlibiFigure {
    const OPTIONS: &'static [&'static str] = &["seq", "heads", "head", "mode"];

    fn from_options(args: &FigureArgs) -> Result<Self, CliError> {
        let seq = options::seq(args)?;
        let heads = options::heads(args)?;
        let params = AlibiParams {
            heads,
            seq,
            mode: ModeArg::alibi(args.alibi.mode, "the alibi figure").map_err(CliError::usage)?,
        };
        let head = match args.sizes.head {
            Some(head) => Some(count("head", Some(head), 0, 0..=heads - 1)?),
            None => None,
        };
        Ok(Self { params, head })
    }

    fn write_options(&self, words: &mut Words) {
        words.option("seq", self.params.seq);
        words.option("heads", self.params.heads);
        words.option("mode", value_name(self.params.mode));
        if let Some(head) = self.head {
            words.option("head", head);
        }
    }

    fn draw(&self, style: &FigureStyle) -> Result<Drawn, FigureError> {
        let params = &self.params;
        let table = TableSpec::Alibi {
            params: *params,
            head: None,
        };
        let heads: Vec<usize> = match self.head {
            Some(h) => vec![h],
            None if params.heads > MAX_SMALL_MULTIPLES => {
                return Err(FigureError::Input(format!(
                    "{} heads are too many to draw side by side (at most {MAX_SMALL_MULTIPLES}): pick one with --head",
                    params.heads
                )));
            }
            None => (0..params.heads).collect(),
        };
        let slopes = crate::encoding::alibi::slopes(params.heads)?;
        // Small multiples share the page: fewer cells each.
        let grid_cols = (heads.len() as f64).sqrt().ceil() as usize;
        let max_cells = (MAX_CELLS / grid_cols.max(1)).max(64);
        let mut panels = Vec::new();
        let mut range = (f64::INFINITY, f64::NEG_INFINITY);
        for &h in &heads {
            let (panel, (low, high)) = heatmap_panel(
                &table,
                h,
                if heads.len() > 16 {
                    // Small panels: a short title.
                    format!("{h}: {}", crate::numbers::slope(slopes[h]))
                } else {
                    format!("head {h}, m = {}", crate::numbers::slope(slopes[h]))
                },
                ("key j", "query i"),
                max_cells,
                style.reduce,
            )?;
            range = (range.0.min(low), range.1.max(high));
            panels.push(panel);
        }
        Ok(Drawn::new(
            format!(
                "ALiBi biases, {} heads, {} positions, {}",
                params.heads,
                params.seq,
                value_name(params.mode)
            ),
            panels,
        )
        .with_colorbar(colorbar(style, range, "bias")))
    }
}
