//! Where a file differs from its reference: every element outside the tolerance found (one
//! pass, however large the table), the worst listed, the rows and columns that hold any
//! counted, and the pattern named when one is clear (whole columns, every row shifted, an
//! error that grows with position, a single cell, a few scattered cells).
//!
//! Rows and columns are the table's last two axes (query and key of an ALiBi table, position
//! and dimension of a sin/cos table); a 1-D table is one row.

use std::collections::BinaryHeap;
use std::fmt::Write as _;

use ndarray::ArrayD;

use super::{Comparison, squeezed_view, unravel};
use crate::import::StoredFloat;

/// How many elements outside the tolerance a report lists unless asked for more.
pub const DEFAULT_SHOWN: usize = 10;

/// The furthest row shift looked for (an off-by-one start, or a few).
const MAX_SHIFT: usize = 8;

/// Wrong columns beyond this many are not searched for among the reference's columns.
const MAX_MOVED_COLUMNS: usize = 256;

/// The rows (second-last axis; 1 for a 1-D table) and columns (last axis) of `shape`.
pub fn rows_and_columns(shape: &[usize]) -> (usize, usize) {
    let columns = shape.last().copied().unwrap_or(1).max(1);
    let rows = if shape.len() >= 2 {
        shape[shape.len() - 2]
    } else {
        1
    };
    (rows, columns)
}

/// The row and column of the `flat`-th element (C order) of a table of `rows` x `columns`
/// (leading axes folded in).
pub fn row_and_column(flat: usize, rows: usize, columns: usize) -> (usize, usize) {
    ((flat / columns) % rows, flat % columns)
}

/// An element outside the tolerance.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct OutsideCell {
    pub index: Vec<usize>,
    pub reference: f64,
    pub loaded: f64,
    /// `|file - reference|` (infinite where an infinity differs).
    pub error: f64,
    /// The error in units in the last place of the file's type at the reference value, when
    /// the file says which type it stores.
    pub ulps: Option<f64>,
    /// How many times the allowed difference the error is (what the cells are ranked by).
    pub over: f64,
}

/// The pattern of the elements outside, when one is clear.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Diagnosis {
    /// One element; the rest match.
    SingleCell,
    /// A few elements in scattered rows and columns.
    Scattered,
    /// Whole columns wrong and the rest right; `moved` pairs (file column, reference column)
    /// where the file's column is another column of the reference.
    WholeColumns {
        columns: Vec<usize>,
        moved: Vec<(usize, usize)>,
    },
    /// Every row is the reference's row `i + shift`: the positions start elsewhere.
    RowShift { shift: isize },
    /// The error grows with the row (position): the largest error in the first and last
    /// eighth of the rows.
    GrowsWithPosition { early: f64, late: f64 },
    /// The elements outside are masked (an infinity) in one table and not the other:
    /// `file_masks` counts those the file masks and the reference does not.
    Masking {
        file_masks: usize,
        reference_masks: usize,
    },
}

impl Diagnosis {
    /// One line for a terminal or the Check view.
    pub fn describe(&self, located: &Located) -> String {
        match self {
            Diagnosis::SingleCell => "a single element is wrong and every other matches: a value written or copied wrongly, not a convention".to_owned(),
            Diagnosis::Scattered => format!(
                "{} scattered elements are wrong and every other matches: values written or copied wrongly, not a convention",
                located.count
            ),
            Diagnosis::WholeColumns { columns, moved } => {
                let list = list_of(columns);
                // "The others match" only where there are others.
                let all = located
                    .shape
                    .last()
                    .is_some_and(|&n| columns.len() == n);
                let others = if all {
                    format!("every column ({} of {}) is wrong", columns.len(), columns.len())
                } else {
                    format!("whole columns ({list}) are wrong and the others match")
                };
                if !moved.is_empty() && moved.len() == columns.len() {
                    let mut swaps: Vec<String> = moved
                        .iter()
                        .take(4)
                        .map(|(file, reference)| format!("file column {file} is reference column {reference}"))
                        .collect();
                    if moved.len() > 4 {
                        swaps.push(format!("... ({} columns moved)", moved.len()));
                    }
                    format!(
                        "{others}; {}: columns in another order (a layout slip: interleaved, split or half pairs)",
                        swaps.join(", ")
                    )
                } else {
                    let others = if all {
                        format!(
                            "every column ({} of {}) is wrong in almost every row",
                            columns.len(),
                            columns.len()
                        )
                    } else {
                        format!(
                            "whole columns ({list}) are wrong in almost every row and the others match"
                        )
                    };
                    format!(
                        "{others}: a layout slip (interleaved, split or half pairs) or wrong frequencies for those pairs"
                    )
                }
            }
            Diagnosis::RowShift { shift } => format!(
                "every row is off by a shift: the file's row i is the reference's row i {} {}, so its positions start {} {} than the reference's (an off-by-one start: check --start)",
                if *shift > 0 { "+" } else { "−" },
                shift.unsigned_abs(),
                shift.unsigned_abs(),
                if *shift > 0 { "later" } else { "earlier" },
            ),
            Diagnosis::Masking { file_masks, reference_masks } => format!(
                "the tables mask different elements ({file_masks} masked only in the file, {reference_masks} only in the reference; every other element matches): causal against symmetric attention (--mode), or a mask of another shape"
            ),
            Diagnosis::GrowsWithPosition { early, late } => format!(
                "the error grows with position (largest {early:.2e} in the first rows, {late:.2e} in the last): frequencies slightly off, or angles p·ω rounded to a narrow type before sin/cos (their error grows with p); PyTorch's own float32 computation was tried above"
            ),
        }
    }
}

/// Where a file differs from its reference.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Located {
    /// The compared shape (length-1 axes left out).
    pub shape: Vec<usize>,
    /// Elements outside the tolerance.
    pub count: usize,
    /// The worst of them: most times over what the tolerance allows at their value first.
    pub worst: Vec<OutsideCell>,
    /// Rows (second-last axis) and columns (last axis) that hold any.
    pub rows_with_any: usize,
    pub columns_with_any: usize,
    /// The first and last row that holds any.
    pub first_row: usize,
    pub last_row: usize,
    /// The largest |error| in each row and each column (0 where none), for curves.
    pub row_errors: Vec<f64>,
    pub column_errors: Vec<f64>,
    /// Elements outside per row and per column.
    pub row_counts: Vec<usize>,
    pub column_counts: Vec<usize>,
    pub diagnosis: Option<Diagnosis>,
}

impl Located {
    /// The diagnosis in words, when a pattern is clear.
    pub fn diagnosis_text(&self) -> Option<String> {
        self.diagnosis.as_ref().map(|d| d.describe(self))
    }

    /// "3 elements" (or "1 element") outside.
    pub fn elements(&self) -> String {
        let plural = if self.count == 1 { "" } else { "s" };
        format!("{} element{plural}", self.count)
    }

    /// "in 3 of 512 rows and 3 of 128 columns" for a table of two or more axes.
    pub fn spread(&self) -> Option<String> {
        (self.shape.len() >= 2).then(|| {
            format!(
                "in {} of {} rows and {} of {} columns",
                self.rows_with_any,
                self.row_errors.len(),
                self.columns_with_any,
                self.column_errors.len()
            )
        })
    }

    /// Lines for a terminal: the summary, the worst cells as a table (the most times over the
    /// tolerance first), the diagnosis.
    pub fn report(&self) -> String {
        let mut text = format!("outside the tolerance: {}", self.elements());
        if let Some(spread) = self.spread() {
            let _ = write!(
                text,
                " {spread}, rows {} to {}",
                self.first_row, self.last_row
            );
        }
        text.push('\n');
        let with_ulps = self.worst.iter().any(|c| c.ulps.is_some());
        let _ = (!self.worst.is_empty()).then(|| {
            writeln!(
                text,
                "  {:<16} {:>22} {:>22} {:>11}{}",
                "index",
                "reference",
                "file",
                "|error|",
                if with_ulps { "        ulp" } else { "" }
            )
        });
        for cell in &self.worst {
            let index = format!("{:?}", cell.index);
            let _ = write!(
                text,
                "  {index:<16} {:>22} {:>22} {:>11.3e}",
                format!("{}", cell.reference),
                format!("{}", cell.loaded),
                cell.error
            );
            if let Some(ulps) = cell.ulps {
                let _ = write!(text, " {ulps:>10.3e}");
            }
            text.push('\n');
        }
        if self.count > self.worst.len() {
            let _ = writeln!(
                text,
                "  ... and {} more (--show N lists more)",
                self.count - self.worst.len()
            );
        }
        if let Some(diagnosis) = &self.diagnosis {
            let _ = writeln!(text, "diagnosis: {}", diagnosis.describe(self));
        }
        text
    }

    /// The flat indices (row, column) of the cells outside, for marking them: the worst ones.
    pub fn marked_cells(&self) -> Vec<(usize, usize)> {
        self.worst
            .iter()
            .map(|cell| {
                let n = cell.index.len();
                match n {
                    0 => (0, 0),
                    1 => (0, cell.index[0]),
                    _ => (cell.index[n - 2], cell.index[n - 1]),
                }
            })
            .collect()
    }
}

/// A ranked cell in the heap of the worst (smallest first, so the heap keeps the largest).
struct Ranked {
    over: f64,
    flat: usize,
}

impl PartialEq for Ranked {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == std::cmp::Ordering::Equal
    }
}
impl Eq for Ranked {}
impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Ranked {
    // Reversed, so that the heap's top is the least over; ties by index, the first kept.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other
            .over
            .total_cmp(&self.over)
            .then(self.flat.cmp(&other.flat))
    }
}

/// Finds every element outside `comparison`'s tolerance (or its file type's rule), listing the
/// `show` worst; `None` when the shapes differ or nothing is outside. `stored` is the file's
/// type, for errors in its ulps.
pub fn locate(
    comparison: &Comparison,
    reference: &ArrayD<f64>,
    loaded: &ArrayD<f64>,
    stored: Option<StoredFloat>,
    show: usize,
) -> Option<Located> {
    let (reference, loaded) = (squeezed_view(reference), squeezed_view(loaded));
    if reference.shape() != loaded.shape() {
        return None;
    }
    let shape = reference.shape().to_vec();
    let (reference, loaded) = (reference.as_standard_layout(), loaded.as_standard_layout());
    let (reference, loaded) = (reference.as_slice()?, loaded.as_slice()?);
    let (rows, columns) = rows_and_columns(&shape);
    let mut row_errors = vec![0.0f64; rows];
    let mut column_errors = vec![0.0f64; columns];
    let mut row_counts = vec![0usize; rows];
    let mut column_counts = vec![0usize; columns];
    let mut heap: BinaryHeap<Ranked> = BinaryHeap::new();
    let mut count = 0;
    // Outside because one table masks (holds an infinity) and the other does not.
    let (mut file_masks, mut reference_masks) = (0, 0);
    for (k, (&r, &l)) in reference.iter().zip(loaded).enumerate() {
        let (row, column) = row_and_column(k, rows, columns);
        let error = if r.is_infinite() || l.is_infinite() {
            if r == l { 0.0 } else { f64::INFINITY }
        } else {
            (l - r).abs()
        };
        if error.is_finite() {
            row_errors[row] = row_errors[row].max(error);
            column_errors[column] = column_errors[column].max(error);
        }
        if !comparison.is_outside(r, l) {
            continue;
        }
        count += 1;
        if l.is_infinite() && r.is_finite() {
            file_masks += 1;
        } else if r.is_infinite() && l.is_finite() {
            reference_masks += 1;
        }
        row_counts[row] += 1;
        column_counts[column] += 1;
        let allowed = comparison.allowed(r);
        let over = if allowed > 0.0 {
            error / allowed
        } else {
            f64::INFINITY
        };
        if show > 0 {
            heap.push(Ranked { over, flat: k });
            if heap.len() > show {
                heap.pop();
            }
        }
    }
    if count == 0 {
        return None;
    }
    // Near zero, ulps are counted at the rule's floor, as the rule allows them; without a
    // rule (a tolerance typed, or the closest reading identify found) at the floor the type's
    // default rule takes for such a table, so that a cell's ulps are one number however the
    // comparison came (the Check view's identified reading and `poslab check`).
    let floor = comparison
        .rule
        .map_or_else(|| natural_ulp_floor(reference), |rule| rule.floor);
    let mut worst: Vec<OutsideCell> = heap
        .into_sorted_vec()
        .into_iter()
        .map(|Ranked { over, flat }| {
            let (r, l) = (reference[flat], loaded[flat]);
            let error = if r.is_infinite() || l.is_infinite() {
                f64::INFINITY
            } else {
                (l - r).abs()
            };
            OutsideCell {
                index: unravel(flat, &shape),
                reference: r,
                loaded: l,
                error,
                ulps: stored
                    .filter(|_| error.is_finite())
                    .map(|s| error / s.ulp(r.abs().max(floor).max(f64::MIN_POSITIVE))),
                over,
            }
        })
        .collect();
    // `into_sorted_vec` is ascending in the reversed order: most over first already.
    worst.truncate(show);
    let first_row = row_counts.iter().position(|&n| n > 0).unwrap_or(0);
    let last_row = row_counts.iter().rposition(|&n| n > 0).unwrap_or(0);
    let mut located = Located {
        rows_with_any: row_counts.iter().filter(|&&n| n > 0).count(),
        columns_with_any: column_counts.iter().filter(|&&n| n > 0).count(),
        shape,
        count,
        worst,
        first_row,
        last_row,
        row_errors,
        column_errors,
        row_counts,
        column_counts,
        diagnosis: None,
    };
    located.diagnosis = if count > 1 && file_masks + reference_masks == count {
        Some(Diagnosis::Masking {
            file_masks,
            reference_masks,
        })
    } else {
        diagnose(&located, comparison, reference, loaded)
    };
    Some(located)
}

/// The floor of the default rule for a table, read from its values: the ulp at 1 (or at its
/// largest value, when smaller) for a table whose values reach zero or below (sin and cos,
/// biases, scores), none for one of positive magnitudes (frequencies, slopes, factors), where
/// every value is measured against itself. The rule's own floor comes from the table's kind
/// (`verdict::ulp_floor`); this gives the same where the kind is not known.
fn natural_ulp_floor(reference: &[f64]) -> f64 {
    let finite = || reference.iter().copied().filter(|v| v.is_finite());
    if finite().any(|v| v <= 0.0) {
        finite().fold(0.0f64, |m, v| m.max(v.abs())).min(1.0)
    } else {
        0.0
    }
}

/// The pattern of the elements outside, when one is clear.
fn diagnose(
    located: &Located,
    comparison: &Comparison,
    reference: &[f64],
    loaded: &[f64],
) -> Option<Diagnosis> {
    if located.count == 1 {
        return Some(Diagnosis::SingleCell);
    }
    let rows = located.row_errors.len();
    let columns = located.column_errors.len();
    let two_d = located.shape.len() >= 2 && rows >= 2;
    if two_d {
        // Cells per column: every row of every leading slice.
        let per_column = reference.len() / columns;
        let whole: Vec<usize> = (0..columns)
            .filter(|&c| 2 * located.column_counts[c] >= per_column)
            .collect();
        let in_whole: usize = whole.iter().map(|&c| located.column_counts[c]).sum();
        let mut whole_columns = None;
        if !whole.is_empty() && in_whole * 100 >= located.count * 95 {
            // Where each wrong column is another column of the reference (a few columns
            // swapped, or a whole layout).
            let moved: Vec<(usize, usize)> = if whole.len() <= MAX_MOVED_COLUMNS {
                whole
                    .iter()
                    .filter_map(|&c| {
                        (0..columns)
                            .filter(|&other| other != c)
                            .find(|&other| {
                                column_is(comparison, reference, loaded, columns, other, c)
                            })
                            .map(|other| (c, other))
                    })
                    .collect()
            } else {
                Vec::new()
            };
            let diagnosis = Diagnosis::WholeColumns {
                columns: whole.clone(),
                moved: moved.clone(),
            };
            // A few columns, or columns that are the reference's in another order, say it
            // all; most columns wrong may be an error growing with position instead.
            if moved.len() == whole.len() || 2 * whole.len() <= columns {
                return Some(diagnosis);
            }
            whole_columns = Some(diagnosis);
        }
        if located.shape.len() == 2 && rows >= 3 && located.rows_with_any * 10 >= rows * 9 {
            let shift = (1..=MAX_SHIFT.min(rows - 2))
                .flat_map(|s| [s as isize, -(s as isize)])
                .find(|&s| rows_shifted(comparison, reference, loaded, columns, s));
            if let Some(shift) = shift {
                return Some(Diagnosis::RowShift { shift });
            }
        }
        if located.shape.len() == 2 && rows >= 16 {
            let eighth = rows / 8;
            let largest = |range: std::ops::Range<usize>| {
                located.row_errors[range]
                    .iter()
                    .fold(0.0f64, |m, &e| m.max(e))
            };
            let (early, late) = (largest(0..eighth), largest(rows - eighth..rows));
            let outside_late = located.row_counts[rows / 2..].iter().sum::<usize>();
            // An error proportional to position is 8 times larger in the last eighth.
            if late > 4.0 * early && 2 * outside_late >= located.count && located.count > 10 {
                return Some(Diagnosis::GrowsWithPosition { early, late });
            }
        }
        if whole_columns.is_some() {
            return whole_columns;
        }
    }
    (located.count <= 10).then_some(Diagnosis::Scattered)
}

/// Whether the file's column `file_column` is, within the tolerance, the reference's column
/// `reference_column` in every row.
fn column_is(
    comparison: &Comparison,
    reference: &[f64],
    loaded: &[f64],
    columns: usize,
    reference_column: usize,
    file_column: usize,
) -> bool {
    let lines = reference.len() / columns;
    (0..lines).all(|line| {
        comparison.allows(
            reference[line * columns + reference_column],
            loaded[line * columns + file_column],
        )
    })
}

/// Whether every row `i` of the file is the reference's row `i + shift`, where that row exists.
fn rows_shifted(
    comparison: &Comparison,
    reference: &[f64],
    loaded: &[f64],
    columns: usize,
    shift: isize,
) -> bool {
    let rows = reference.len() / columns;
    (0..rows).all(|row| {
        let Some(source) = row.checked_add_signed(shift).filter(|&s| s < rows) else {
            return true;
        };
        (0..columns)
            .all(|c| comparison.allows(reference[source * columns + c], loaded[row * columns + c]))
    })
}

/// `0, 4, 8` or `0, 4, 8, ... (12 columns)`.
fn list_of(columns: &[usize]) -> String {
    let shown: Vec<String> = columns.iter().take(8).map(|c| c.to_string()).collect();
    if columns.len() > 8 {
        format!("{}, ... ({} columns)", shown.join(", "), columns.len())
    } else {
        shown.join(", ")
    }
}
