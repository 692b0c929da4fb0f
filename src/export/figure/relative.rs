//! The Relative positions view as a figure: the boards of one panel (for the skew trick, one
//! stage), each with its own colour bar, lists without one.

use super::FigureArgs;
use super::options::{Words, count, value_name};
use super::panels::board_panel;
use super::{Drawn, FigureError, FigureKind, FigureStyle};
use crate::encoding::alibi::AlibiMode;
use crate::options::ModeArg;
use crate::scene::relative::{self, RelativePanel, RelativeSettings};
use crate::table_args::{CliError, flag};

/// The relative figure's own options, with the relative encodings' group.
#[derive(Debug, Clone, clap::Args)]
pub struct RelativeFigureOptions {
    /// relative: which panel
    #[arg(long, value_enum, value_name = "PANEL")]
    pub panel: Option<crate::scene::relative::RelativePanel>,

    /// relative: the sequence length L (offsets, shaw, alibi: 2 to 32, default 8; t5: 2 to 256,
    /// default 48; skew: 2 to 12, default 5)
    #[arg(long, value_name = "L")]
    pub tokens: Option<i64>,

    #[command(flatten)]
    pub options: crate::options::RelativeOptions,

    /// relative --panel skew: the step of the trick, 1 (relative logits) to 6 (sliced)
    #[arg(long, value_name = "K")]
    pub stage: Option<i64>,
}

/// What the view shows: the panel and its settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RelativeFigure {
    pub panel: RelativePanel,
    pub settings: RelativeSettings,
}

impl FigureKind for RelativeFigure {
    const OPTIONS: &'static [&'static str] = &[
        "panel",
        "tokens",
        "max_relative",
        "num_buckets",
        "max_distance",
        "bidirectional",
        "heads",
        "head",
        "mode",
        "stage",
        "dim",
        "grid_h",
        "grid_w",
        "query",
        "seed",
    ];

    fn from_options(args: &FigureArgs) -> Result<Self, CliError> {
        use crate::scene::relative::{
            DIM_RANGE, GRID_RANGE, HEADS_RANGE, MAX_DISTANCE_RANGE, NUM_BUCKETS_RANGE,
            RelativePanel, RelativeSettings, SKEW_TOKENS_RANGE, T5_TOKENS_RANGE, TOKENS_RANGE,
        };
        let panel = args.relative.panel.unwrap_or_default();
        let given: Vec<(&str, bool)> = vec![
            ("tokens", args.relative.tokens.is_some()),
            ("max_relative", args.relative.options.max_relative.is_some()),
            ("num_buckets", args.relative.options.num_buckets.is_some()),
            ("max_distance", args.relative.options.max_distance.is_some()),
            (
                "bidirectional",
                args.relative.options.bidirectional.is_some(),
            ),
            ("heads", args.sizes.heads.is_some()),
            ("head", args.sizes.head.is_some()),
            ("mode", args.alibi.mode.is_some()),
            ("stage", args.relative.stage.is_some()),
            ("dim", args.sizes.dim.is_some()),
            ("grid_h", args.sizes.grid_h.is_some()),
            ("grid_w", args.sizes.grid_w.is_some()),
            ("query", args.query.is_some()),
            ("seed", args.arithmetic.seed.is_some()),
        ];
        let accepted: &[&str] = match panel {
            RelativePanel::Offsets => &["tokens"],
            RelativePanel::Shaw => &["tokens", "max_relative"],
            RelativePanel::T5 => &["tokens", "num_buckets", "max_distance", "bidirectional"],
            RelativePanel::Alibi => &["tokens", "heads", "head", "mode"],
            RelativePanel::Skew => &["tokens", "stage", "dim"],
            RelativePanel::TwoD => &["grid_h", "grid_w", "query", "dim", "seed"],
        };
        if let Some((id, _)) = given
            .iter()
            .find(|(id, set)| *set && !accepted.contains(id))
        {
            let list: Vec<String> = accepted.iter().map(|id| flag(id)).collect();
            return Err(CliError::usage(format!(
                "{} does not apply to --panel {}; its options are {}",
                flag(id),
                value_name(panel),
                list.join(" ")
            )));
        }
        let d = RelativeSettings::default();
        let mut s = d;
        match panel {
            RelativePanel::Offsets | RelativePanel::Shaw | RelativePanel::Alibi => {
                s.tokens = count("tokens", args.relative.tokens, d.tokens, TOKENS_RANGE)?;
            }
            RelativePanel::T5 => {
                s.t5_tokens = count("tokens", args.relative.tokens, d.t5_tokens, T5_TOKENS_RANGE)?
            }
            RelativePanel::Skew => {
                s.skew_tokens = count(
                    "tokens",
                    args.relative.tokens,
                    d.skew_tokens,
                    SKEW_TOKENS_RANGE,
                )?
            }
            RelativePanel::TwoD => {}
        }
        s.max_relative = count(
            "max_relative",
            args.relative.options.max_relative,
            d.max_relative,
            0..=TOKENS_RANGE.end() - 1,
        )?;
        s.num_buckets = count(
            "num_buckets",
            args.relative.options.num_buckets,
            d.num_buckets,
            NUM_BUCKETS_RANGE,
        )?;
        s.max_distance = count(
            "max_distance",
            args.relative.options.max_distance,
            d.max_distance,
            MAX_DISTANCE_RANGE,
        )?;
        s.bidirectional = args
            .relative
            .options
            .bidirectional
            .unwrap_or(d.bidirectional);
        s.heads = count("heads", args.sizes.heads, d.heads, HEADS_RANGE)?;
        s.head = count("head", args.sizes.head, d.head, 0..=s.heads - 1)?;
        s.causal = ModeArg::alibi(args.alibi.mode, "the relative figure")
            .map_err(CliError::usage)?
            == AlibiMode::Causal;
        s.stage = count("stage", args.relative.stage, 1, 1..=6)? - 1;
        s.dim = count("dim", args.sizes.dim, d.dim, DIM_RANGE)?;
        s.grid.grid_h = count("grid_h", args.sizes.grid_h, d.grid.grid_h, GRID_RANGE)?;
        s.grid.grid_w = count("grid_w", args.sizes.grid_w, d.grid.grid_w, GRID_RANGE)?;
        let centre = (s.grid.grid_h / 2) * s.grid.grid_w + s.grid.grid_w / 2;
        s.query = count("query", args.query, centre, 0..=s.grid.patches() - 1)?;
        s.seed = args.arithmetic.seed.unwrap_or(d.seed);
        s.validate(panel)
            .map_err(|e| CliError::usage(e.to_string()))?;
        Ok(Self { panel, settings: s })
    }

    fn write_options(&self, words: &mut Words) {
        let s = &self.settings;
        words.option("panel", value_name(self.panel));
        match self.panel {
            RelativePanel::Offsets => words.option("tokens", s.tokens),
            RelativePanel::Shaw => {
                words.option("tokens", s.tokens);
                words.option("max-relative", s.max_relative);
            }
            RelativePanel::T5 => {
                words.option("tokens", s.t5_tokens);
                words.option("num-buckets", s.num_buckets);
                words.option("max-distance", s.max_distance);
                words.option("bidirectional", s.bidirectional);
            }
            RelativePanel::Alibi => {
                words.option("tokens", s.tokens);
                words.option("heads", s.heads);
                words.option("head", s.head);
                words.option("mode", value_name(s.alibi_mode()));
            }
            RelativePanel::Skew => {
                words.option("tokens", s.skew_tokens);
                words.option("stage", s.skew_stage().index() + 1);
                words.option("dim", s.dim);
            }
            RelativePanel::TwoD => {
                words.option("grid-h", s.grid.grid_h);
                words.option("grid-w", s.grid.grid_w);
                words.option("query", s.query);
                words.option("dim", s.dim);
                words.option("seed", s.seed);
            }
        }
    }

    fn draw(&self, style: &FigureStyle) -> Result<Drawn, FigureError> {
        draw(self, style)
    }
}

/// The figure's title, panels and (no shared) colour bar.
fn draw(figure: &RelativeFigure, style: &FigureStyle) -> Result<Drawn, FigureError> {
    let boards = relative::boards(figure.panel, &figure.settings)?;
    let panels = boards.into_iter().map(|b| board_panel(b, style)).collect();
    let s = &figure.settings;
    let title = match figure.panel {
        RelativePanel::Offsets => format!("Relative positions: offsets j − i, L = {}", s.tokens),
        RelativePanel::Shaw => format!(
            "Shaw et al.: offsets clipped to ±{} pick one of {} embeddings",
            s.max_relative,
            2 * s.max_relative + 1
        ),
        RelativePanel::T5 => "T5 relative position buckets".to_owned(),
        RelativePanel::Alibi => "ALiBi: the offset matrix times a slope".to_owned(),
        RelativePanel::Skew => format!(
            "The skew trick, L = {}: stage {} of 6",
            s.skew_tokens,
            s.skew_stage().index() + 1
        ),
        RelativePanel::TwoD => format!(
            "2D relative positions on a {} x {} grid, query patch {}",
            s.grid.grid_h, s.grid.grid_w, s.query
        ),
    };
    // The boards of a panel side by side.
    let columns = match figure.panel {
        RelativePanel::TwoD => 3,
        RelativePanel::Shaw | RelativePanel::T5 => 2,
        _ => 1,
    };
    Ok(Drawn::new(title, panels).in_columns(columns))
}
