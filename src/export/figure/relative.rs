//! The Relative positions view as a figure: the boards of one panel (for the skew trick, one
//! stage), each with its own colour bar, lists without one.

use super::{Axis, ColorBar, Content, FigureError, FigureStyle, Panel};
use crate::scene::board::Board;
use crate::scene::relative::{self, RelativePanel, RelativeSettings};

/// What the view shows: the panel and its settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RelativeFigure {
    pub panel: RelativePanel,
    pub settings: RelativeSettings,
}

/// The figure's title, panels and (no shared) colour bar.
pub fn build(
    figure: &RelativeFigure,
    style: &FigureStyle,
) -> Result<(String, Vec<Panel>, Option<ColorBar>), FigureError> {
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
    Ok((title, panels, None))
}

/// A board as a panel: a square grid with its colour bar, or a list with neither axes nor bar.
fn board_panel(board: Board, style: &FigureStyle) -> Panel {
    let list = board.cols == 1;
    let x = Axis::new(board.col_name.clone(), -0.5, board.cols as f64 - 0.5);
    let y = Axis::new(board.row_name.clone(), -0.5, board.rows as f64 - 0.5).downwards();
    let (low, high) = style.colormap.range(board.range.0, board.range.1);
    Panel {
        title: board.title.clone(),
        equal_aspect: !list,
        colorbar: (!list).then(|| ColorBar {
            colormap: style.colormap,
            min: low,
            max: high,
            label: board.value_name.clone(),
        }),
        x: if list || !board.numbered && board.col_name.is_empty() {
            x.hidden()
        } else {
            x
        },
        y: if list || !board.numbered {
            y.hidden()
        } else {
            y
        },
        content: Content::Board(board),
    }
}
