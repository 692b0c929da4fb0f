//! A [`Board`] drawn cell by cell: colour from the value, the label when it fits, borders
//! between regions, row and column numbers, hover for a cell's detail. Given the board it came
//! from, it moves each cell from where it was to where it is now (an animation of a reshape).

use crate::colormap::{Colormap, cell_color, label_color};
use crate::scene::board::{Board, BoardCell, label_fitting};

/// The largest cell drawn, in points: a small board stays readable, not gigantic.
const MAX_CELL: f32 = 64.0;
/// Room for a title line above the board.
const TITLE_HEIGHT: f32 = 20.0;

/// Where a board's cells go in `rect`: the top-left of its cell area and the cell's side.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BoardLayout {
    pub origin: egui::Pos2,
    /// A cell's size: square, except in a one-column list, whose cells are as wide as their
    /// labels need.
    pub cell: egui::Vec2,
}

impl BoardLayout {
    /// The largest cells that fit `board` in `rect`, room kept for the title and, on a
    /// numbered board, the numbers along the top and left.
    pub fn fit(board: &Board, rect: egui::Rect) -> Self {
        let margin = number_margin(board);
        let across = (rect.width() - margin - 4.0) / board.cols.max(1) as f32;
        let down = (rect.height() - TITLE_HEIGHT - margin - 18.0) / board.rows.max(1) as f32;
        let cell = if board.cols == 1 {
            egui::vec2(
                across.clamp(1.0, 4.0 * MAX_CELL),
                down.clamp(1.0, MAX_CELL / 2.0),
            )
        } else {
            egui::Vec2::splat(across.min(down).clamp(1.0, MAX_CELL))
        };
        // Centred across its rectangle: a board held to the height leaves room on both sides,
        // not all of it on the right.
        let spare = (rect.width() - margin - 4.0 - cell.x * board.cols as f32).max(0.0);
        Self {
            origin: egui::pos2(
                rect.left() + margin + spare / 2.0,
                rect.top() + TITLE_HEIGHT + margin,
            ),
            cell,
        }
    }

    /// The screen rectangle of `(row, col)`.
    pub fn cell_rect(&self, row: usize, col: usize) -> egui::Rect {
        egui::Rect::from_min_size(
            self.origin + egui::vec2(col as f32 * self.cell.x, row as f32 * self.cell.y),
            self.cell,
        )
    }

    /// The cell under `pos`, as `(row, col)`.
    pub fn cell_at(&self, board: &Board, pos: egui::Pos2) -> Option<(usize, usize)> {
        let offset = (pos - self.origin) / self.cell;
        let (col, row) = (offset.x.floor(), offset.y.floor());
        (col >= 0.0 && row >= 0.0 && (col as usize) < board.cols && (row as usize) < board.rows)
            .then_some((row as usize, col as usize))
    }
}

/// How a board was drawn.
pub struct BoardResponse {
    pub response: egui::Response,
    pub layout: BoardLayout,
    /// The index in `board.cells` of the cell under the pointer.
    pub hovered: Option<usize>,
    /// The `(row, col)` clicked.
    pub clicked: Option<(usize, usize)>,
}

/// Draws `board` in `rect`. With `from`, a board of the same elements (same ids) in another
/// arrangement, and `t` in `[0, 1]`, each cell is drawn `t` of the way from its place in `from`
/// to its place in `board`; cells only one of them has fade.
/// Room left of and above the cells for their row and column numbers.
fn number_margin(board: &Board) -> f32 {
    if board.numbered { 26.0 } else { 0.0 }
}

pub fn board_ui(
    ui: &mut egui::Ui,
    rect: egui::Rect,
    board: &Board,
    colormap: Colormap,
    from: Option<(&Board, f32)>,
) -> BoardResponse {
    let response = ui.allocate_rect(rect, egui::Sense::click());
    let painter = ui.painter_at(rect);
    let layout = BoardLayout::fit(board, rect);
    let text_color = ui.visuals().text_color();
    let weak = ui.visuals().weak_text_color();
    // The title over the board's left edge (its row numbers' column, if numbered).
    painter.text(
        egui::pos2(layout.origin.x - number_margin(board), rect.top()),
        egui::Align2::LEFT_TOP,
        &board.title,
        egui::FontId::proportional(14.0),
        text_color,
    );
    let animating = from.filter(|(_, t)| *t < 1.0);
    if board.numbered && animating.is_none() {
        numbers_ui(&painter, board, &layout, weak);
    }
    let longest = board.longest_label();
    match animating {
        None => {
            for cell in &board.cells {
                draw_cell(
                    &painter,
                    (cell, longest),
                    layout.cell_rect(cell.row, cell.col),
                    board.range,
                    colormap,
                    1.0,
                );
            }
            for [a, b] in board.region_borders() {
                let to_screen = |p: [f64; 2]| {
                    layout.origin
                        + egui::vec2(p[0] as f32 * layout.cell.x, p[1] as f32 * layout.cell.y)
                };
                painter.line_segment(
                    [to_screen(a), to_screen(b)],
                    egui::Stroke::new(
                        (layout.cell.min_elem() / 12.0).clamp(1.5, 3.0),
                        egui::Color32::WHITE,
                    ),
                );
            }
        }
        Some((before, t)) => {
            let t = ease(t);
            let before_layout = BoardLayout::fit(before, rect);
            for cell in &board.cells {
                let to = layout.cell_rect(cell.row, cell.col);
                match before.cells.iter().find(|c| c.id == cell.id) {
                    Some(old) => {
                        let was = before_layout.cell_rect(old.row, old.col);
                        let now = egui::Rect::from_min_max(
                            was.min.lerp(to.min, t),
                            was.max.lerp(to.max, t),
                        );
                        draw_cell(&painter, (cell, longest), now, board.range, colormap, 1.0);
                    }
                    None => draw_cell(&painter, (cell, longest), to, board.range, colormap, t),
                }
            }
            for old in &before.cells {
                if !board.cells.iter().any(|c| c.id == old.id) {
                    let was = before_layout.cell_rect(old.row, old.col);
                    let old_longest = before.longest_label();
                    draw_cell(
                        &painter,
                        (old, old_longest),
                        was,
                        before.range,
                        colormap,
                        1.0 - t,
                    );
                }
            }
            ui.ctx().request_repaint();
        }
    }
    if !board.col_name.is_empty() {
        let bottom = layout.origin.y + board.rows as f32 * layout.cell.y + 2.0;
        painter.text(
            egui::pos2(
                layout.origin.x + board.cols as f32 * layout.cell.x / 2.0,
                bottom,
            ),
            egui::Align2::CENTER_TOP,
            &board.col_name,
            egui::FontId::proportional(12.0),
            weak,
        );
    }
    let pointer = response.hover_pos();
    let hovered_at = pointer.and_then(|p| layout.cell_at(board, p));
    let hovered =
        hovered_at.and_then(|(r, c)| board.cells.iter().position(|x| x.row == r && x.col == c));
    if let Some(index) = hovered
        && animating.is_none()
    {
        let cell = &board.cells[index];
        painter.rect_stroke(
            layout.cell_rect(cell.row, cell.col),
            0.0,
            egui::Stroke::new(2.0, text_color),
            egui::StrokeKind::Inside,
        );
    }
    let clicked = if response.clicked() { hovered_at } else { None };
    let response = match hovered {
        Some(index) if animating.is_none() => {
            response.on_hover_text(board.cells[index].detail.clone())
        }
        _ => response,
    };
    BoardResponse {
        response,
        layout,
        hovered,
        clicked,
    }
}

/// Slow in, slow out.
fn ease(t: f32) -> f32 {
    let t = t.clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

fn draw_cell(
    painter: &egui::Painter,
    (cell, longest): (&BoardCell, usize),
    rect: egui::Rect,
    range: (f64, f64),
    colormap: Colormap,
    opacity: f32,
) {
    let fill = cell_color(colormap, range, cell.value).gamma_multiply(opacity);
    let inner = rect.shrink((rect.width() * 0.04).min(1.0));
    painter.rect_filled(inner, 0.0, fill);
    if cell.outlined {
        painter.rect_stroke(
            inner,
            0.0,
            egui::Stroke::new(
                2.5,
                egui::Color32::from_rgb(255, 80, 80).gamma_multiply(opacity),
            ),
            egui::StrokeKind::Inside,
        );
    }
    if let Some((text, size)) = label_fitting(cell, rect.width(), rect.height(), longest) {
        painter.text(
            rect.center(),
            egui::Align2::CENTER_CENTER,
            text,
            egui::FontId::proportional(size),
            label_color(fill).gamma_multiply(opacity),
        );
    }
}

/// Row numbers down the left and column numbers along the top, thinned when cells are small.
fn numbers_ui(painter: &egui::Painter, board: &Board, layout: &BoardLayout, color: egui::Color32) {
    let every = (16.0 / layout.cell.min_elem()).ceil().max(1.0) as usize;
    let font = egui::FontId::proportional(11.0);
    // A strip's one row needs no number.
    let rows = if board.rows == 1 { 0 } else { board.rows };
    for row in (0..rows).step_by(every) {
        let r = layout.cell_rect(row, 0);
        painter.text(
            egui::pos2(r.left() - 4.0, r.center().y),
            egui::Align2::RIGHT_CENTER,
            row.to_string(),
            font.clone(),
            color,
        );
    }
    for col in (0..board.cols).step_by(every) {
        let r = layout.cell_rect(0, col);
        painter.text(
            egui::pos2(r.center().x, r.top() - 3.0),
            egui::Align2::CENTER_BOTTOM,
            col.to_string(),
            font.clone(),
            color,
        );
    }
    if !board.row_name.is_empty() {
        painter.text(
            egui::pos2(layout.origin.x - 24.0, layout.origin.y - 14.0),
            egui::Align2::LEFT_BOTTOM,
            board.row_name.clone(),
            egui::FontId::proportional(11.0),
            color,
        );
    }
}
