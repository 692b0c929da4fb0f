//! A board: a small matrix drawn cell by cell, each cell with its colour value, its label and
//! what hovering it says; regions whose borders are drawn; headers along both sides. The
//! teaching views draw boards in the app, and their figures draw the same boards in SVG.

/// One cell of a board.
#[derive(Debug, Clone, PartialEq)]
pub struct BoardCell {
    /// Which element this is, kept from one board to the next so that a cell can be followed
    /// when a board turns into another (the skew trick's stages).
    pub id: usize,
    pub row: usize,
    pub col: usize,
    /// The value the colour map shows; `None` for an empty cell (padding, a masked key).
    pub value: Option<f64>,
    /// What the cell says when it is wide enough.
    pub label: String,
    /// What it says when it is narrow (may be empty).
    pub short_label: String,
    /// What hovering it says.
    pub detail: String,
    /// Cells of different regions get a border between them.
    pub region: u8,
    /// Drawn with a bright outline (a chosen query, the key hovered elsewhere).
    pub outlined: bool,
}

/// A small matrix of labelled cells.
#[derive(Debug, Clone, PartialEq)]
pub struct Board {
    pub title: String,
    pub rows: usize,
    pub cols: usize,
    /// Row-major, every `(row, col)` at most once; a position with no cell is not drawn.
    pub cells: Vec<BoardCell>,
    /// What the rows and columns are (`"query i"`, `"key j"`); empty to say nothing.
    pub row_name: String,
    pub col_name: String,
    /// Whether each row and column carries its number along the side.
    pub numbered: bool,
    /// The colour scale: the value at each end, and what the values are.
    pub range: (f64, f64),
    pub value_name: String,
}

impl Board {
    /// The characters of its longest full label.
    pub fn longest_label(&self) -> usize {
        self.cells
            .iter()
            .map(|c| c.label.chars().count())
            .max()
            .unwrap_or(0)
    }

    /// The cell at `(row, col)`, if any.
    pub fn cell(&self, row: usize, col: usize) -> Option<&BoardCell> {
        self.cells.iter().find(|c| c.row == row && c.col == col)
    }

    /// The smallest and largest value of its cells (`(0, 1)` when none has one), for a board
    /// whose colours span its own values.
    pub fn value_range(cells: &[BoardCell]) -> (f64, f64) {
        let values = cells
            .iter()
            .filter_map(|c| c.value)
            .filter(|v| v.is_finite());
        let (low, high) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
        if low.is_finite() {
            (low, high)
        } else {
            (0.0, 1.0)
        }
    }

    /// The borders between regions, as segments in cell units (`[col, row]` corners).
    pub fn region_borders(&self) -> Vec<[[f64; 2]; 2]> {
        let mut regions = vec![None; self.rows * self.cols];
        for cell in &self.cells {
            regions[cell.row * self.cols + cell.col] = Some(cell.region);
        }
        let at = |r: usize, c: usize| regions[r * self.cols + c];
        let mut borders = Vec::new();
        for r in 0..self.rows {
            for c in 0..self.cols {
                let Some(here) = at(r, c) else { continue };
                if c + 1 < self.cols
                    && let Some(right) = at(r, c + 1)
                    && right != here
                {
                    let x = (c + 1) as f64;
                    borders.push([[x, r as f64], [x, (r + 1) as f64]]);
                }
                if r + 1 < self.rows
                    && let Some(below) = at(r + 1, c)
                    && below != here
                {
                    let y = (r + 1) as f64;
                    borders.push([[c as f64, y], [(c + 1) as f64, y]]);
                }
            }
        }
        borders
    }
}

/// A number as a board labels it: a whole number without decimals, others with up to `digits`.
pub fn number_label(value: f64, digits: usize) -> String {
    if value == f64::NEG_INFINITY {
        "-∞".to_owned()
    } else if value.fract() == 0.0 && value.abs() < 1e9 {
        format!("{value:.0}")
    } else {
        let text = format!("{value:.digits$}");
        let text = text.trim_end_matches('0').trim_end_matches('.');
        if text == "-0" {
            "0".to_owned()
        } else {
            text.to_owned()
        }
    }
}

/// An offset with its sign, `+2`, `0`, `-3`.
pub fn signed_label(value: i64) -> String {
    if value > 0 {
        format!("+{value}")
    } else {
        value.to_string()
    }
}

/// The label a cell of `width` x `height` shows and its font size: the full label where the
/// board's longest full label (`longest`, in characters) fits, so that one board does not mix
/// both kinds, else the short one at a size that fits, else none (below 7 points nothing is
/// legible).
pub fn label_fitting(
    cell: &BoardCell,
    width: f32,
    height: f32,
    longest: usize,
) -> Option<(&str, f32)> {
    let fits_chars =
        |chars: usize, size: f32| size >= 7.0 && chars as f32 * size * 0.58 <= width * 0.92;
    let fits = |text: &str, size: f32| fits_chars(text.chars().count(), size);
    let size = (height * 0.55).min(width * 0.32).min(15.0);
    if fits_chars(longest.max(cell.label.chars().count()), size) {
        return Some((cell.label.as_str(), size));
    }
    let small = (width * 0.92 / (cell.short_label.chars().count().max(1) as f32 * 0.58)).min(size);
    fits(&cell.short_label, small).then_some((cell.short_label.as_str(), small))
}
