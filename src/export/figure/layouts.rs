//! The Layouts view as a figure: one head's q in both pair layouts and the rotation in each,
//! then k's rows and every query head's score as stored, permuted per kv head and permuted
//! with the query head count, the boards the view draws.

use super::FigureArgs;
use super::options::{Words, count};
use super::panels::board_panel;
use super::{Drawn, FigureError, FigureKind, FigureStyle};
use crate::encoding::PairLayout;
use crate::scene::layouts::{
    HEAD_DIM_RANGE, HEADS_RANGE, LayoutsSettings, OFFSET_MAX, k_rows_board, q_board,
    rotation_board, scene, scores_board,
};
use crate::table_args::CliError;

/// The view's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LayoutsFigure {
    pub settings: LayoutsSettings,
}

impl FigureKind for LayoutsFigure {
    const OPTIONS: &'static [&'static str] =
        &["head_dim", "heads", "kv_heads", "offset", "seed", "base"];

    fn from_options(args: &FigureArgs) -> Result<Self, CliError> {
        let d = LayoutsSettings::default();
        let heads = count("heads", args.sizes.heads, d.heads, HEADS_RANGE)?;
        let settings = LayoutsSettings {
            head_dim: count(
                "head_dim",
                args.permutation.head_dim,
                d.head_dim,
                HEAD_DIM_RANGE,
            )?,
            heads,
            kv_heads: count(
                "kv_heads",
                args.permutation.kv_heads,
                d.kv_heads.min(heads),
                1..=heads,
            )?,
            offset: count(
                "offset",
                args.arithmetic.offset,
                d.offset as usize,
                0..=OFFSET_MAX as usize,
            )? as u64,
            seed: args.arithmetic.seed.unwrap_or(d.seed),
            base: args.sinusoidal.base.unwrap_or(d.base),
        };
        // The default K is the default H's: with another H, the largest divisor of H not
        // above it.
        let settings = if args.permutation.kv_heads.is_none() {
            LayoutsSettings {
                kv_heads: LayoutsSettings::kv_choices(heads)
                    .into_iter()
                    .filter(|&k| k <= d.kv_heads)
                    .max()
                    .unwrap_or(1),
                ..settings
            }
        } else {
            settings
        };
        settings.validate().map_err(CliError::usage)?;
        Ok(Self { settings })
    }

    fn write_options(&self, words: &mut Words) {
        let s = &self.settings;
        words.option("head-dim", s.head_dim);
        words.option("heads", s.heads);
        words.option("kv-heads", s.kv_heads);
        words.option("offset", s.offset);
        words.option("seed", s.seed);
        words.option("base", s.base);
    }

    fn draw(&self, style: &FigureStyle) -> Result<Drawn, FigureError> {
        let s = &self.settings;
        let scene = scene(s).map_err(FigureError::Input)?;
        let panels = vec![
            board_panel(q_board(&scene, PairLayout::Interleaved), style),
            board_panel(q_board(&scene, PairLayout::Half), style),
            board_panel(rotation_board(&scene, PairLayout::Interleaved), style),
            board_panel(rotation_board(&scene, PairLayout::Half), style),
            board_panel(k_rows_board(&scene), style),
            board_panel(scores_board(&scene), style),
        ];
        let first = &scene.heads[0];
        Ok(Drawn::new(
            format!(
                "RoPE's pair layouts, d = {}, {} query heads, {} kv heads: q·k at Δ = {} is {:.4} interleaved and {:.4} half",
                s.head_dim, s.heads, s.kv_heads, s.offset, first.original, first.permuted
            ),
            panels,
        )
        .in_columns(2))
    }
}
