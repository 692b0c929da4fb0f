//! The Check view's figure: a table read from a file, poslab's reference for it, and their
//! difference, with the verdict in the title.

use super::FigureArgs;
use super::options::Words;
use super::panels::{MAX_CELLS, cell_axis, colorbar, finite_range};
use super::{Content, Drawn, FigureError, FigureKind, FigureStyle, Panel};
use crate::colormap::Colormap;
use crate::engine::cpu;
use crate::table_args::{CliError, table_spec_from_words, tolerance_option};

/// What the Check view shows: a file, what it is compared with, the tolerance.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckFigure {
    pub file: std::path::PathBuf,
    pub tensor: Option<String>,
    /// `poslab table` words naming the expected table; empty: identify it.
    pub expected: Vec<String>,
    pub tolerance: crate::check::Tolerance,
}

impl FigureKind for CheckFigure {
    const OPTIONS: &'static [&'static str] = &["file", "tensor", "expected", "atol", "rtol"];

    fn from_options(args: &FigureArgs) -> Result<Self, CliError> {
        let file = args
            .file
            .clone()
            .ok_or_else(|| CliError::usage("--file is required for the check figure"))?;
        let tolerance = tolerance_option(args.reading.atol(), args.reading.rtol())?;
        let expected: Vec<String> = args
            .check
            .expected
            .as_deref()
            .unwrap_or("")
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        if !expected.is_empty() {
            table_spec_from_words(&expected).map_err(|e| CliError::usage(format!("--as: {e}")))?;
        }
        Ok(Self {
            file,
            tensor: args.reading.tensor.clone(),
            expected,
            tolerance,
        })
    }

    fn write_options(&self, words: &mut Words) {
        words.option("file", self.file.display());
        if let Some(tensor) = &self.tensor {
            words.option("tensor", tensor);
        }
        if !self.expected.is_empty() {
            words.option("as", self.expected.join(" "));
        }
        words.option("atol", format!("{:e}", self.tolerance.abs));
        words.option("rtol", format!("{:e}", self.tolerance.rel));
    }

    fn draw(&self, style: &FigureStyle) -> Result<Drawn, FigureError> {
        draw_check(self, style)
    }
}

/// The reference, the file and their difference, with the verdict in the title.
fn draw_check(figure: &CheckFigure, style: &FigureStyle) -> Result<Drawn, FigureError> {
    use crate::check::identify::identify;
    use crate::check::{compare, squeezed};
    let max_bytes = crate::engine::available_memory_bytes().unwrap_or(u64::MAX);
    let (loaded, stored) =
        crate::import::tables::read_table_typed(&figure.file, figure.tensor.as_deref(), max_bytes)
            .map_err(|e| FigureError::Input(e.to_string()))?;
    let loaded = squeezed(&loaded);
    let (description, reference, identified) = if figure.expected.is_empty() {
        let identification = identify(&loaded, figure.tolerance, stored);
        let best = identification
            .best()
            .ok_or_else(|| FigureError::Input(identification.report()))?;
        (
            best.description.clone(),
            best.reference.clone(),
            Some(best.comparison.clone()),
        )
    } else {
        let spec = crate::table_args::table_spec_from_words(&figure.expected)
            .map_err(FigureError::Input)?;
        let reference = squeezed(&cpu::compute(&spec)?.into_real());
        (figure.expected.join(" "), reference, None)
    };
    // A grid of rows ([H, W, D]) is drawn as the table's [H*W, D], as check reads it.
    let (loaded, _) = crate::check::rows_as_reference(loaded, reference.shape());
    let comparison = identified.unwrap_or_else(|| compare(&reference, &loaded, figure.tolerance));
    if reference.shape() != loaded.shape() {
        return Err(FigureError::Input(
            comparison.report().trim_end().to_owned(),
        ));
    }
    let difference = (&loaded - &reference).mapv(|v| if v.is_nan() { 0.0 } else { v });
    let name = figure
        .file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let verdict = if comparison.matches() {
        "match"
    } else {
        "MISMATCH"
    };
    let mut panels = Vec::new();
    for (title, table, colormap) in [
        ("reference".to_owned(), &reference, style.colormap),
        (name.clone(), &loaded, style.colormap),
        (
            format!(
                "file − reference, largest |error| {:.2e}",
                comparison.max_abs_error()
            ),
            &difference,
            Colormap::Diverging,
        ),
    ] {
        let (values, row_range, col_range) =
            crate::check::drawn_slice(table, 0, MAX_CELLS, style.reduce);
        let values: Vec<f64> = values.into_iter().collect();
        let range = finite_range(&values);
        panels.push(Panel {
            title,
            equal_aspect: false,
            colorbar: colorbar(
                &FigureStyle {
                    colormap,
                    ..style.clone()
                },
                range,
                "",
            ),
            x: cell_axis("column", col_range),
            y: cell_axis("row", row_range).downwards(),
            content: Content::Heatmap {
                values,
                rows: row_range.len(),
                cols: col_range.len(),
                outlined: Vec::new(),
                overlay: Vec::new(),
            },
        });
    }
    let located = crate::check::locate(
        &comparison,
        &reference,
        &loaded,
        stored,
        crate::check::locate::DEFAULT_SHOWN,
    );
    let Some(located) = located else {
        // Reference, file and difference read across.
        return Ok(
            Drawn::new(format!("{name}: {verdict} with {description}"), panels).in_columns(3),
        );
    };
    panels.push(outside_panel(&comparison, &reference, &loaded, &located));
    // The three tables and where the file is outside the tolerance, two by two.
    Ok(Drawn::new(format!("{name}: {verdict} with {description}"), panels).in_columns(2))
}

/// Cells a side of the map of elements outside the tolerance: coarse enough that one bad
/// element is a visible block at a figure's size.
const OUTSIDE_CELLS: usize = 128;

/// Every element outside the tolerance, each block of the map lit when any of its elements is
/// (so that a single bad element shows), the worst ones outlined.
fn outside_panel(
    comparison: &crate::check::Comparison,
    reference: &ndarray::ArrayD<f64>,
    loaded: &ndarray::ArrayD<f64>,
    located: &crate::check::Located,
) -> Panel {
    let mut mask = reference.clone();
    mask.zip_mut_with(loaded, |r, &l| {
        *r = if comparison.is_outside(*r, l) {
            1.0
        } else {
            0.0
        };
    });
    let (values, row_range, col_range) =
        crate::check::drawn_slice(&mask, 0, OUTSIDE_CELLS, crate::engine::reduce::Reduce::Max);
    // The drawn slice is the first of a 3-D table's leading axis.
    let outlined: Vec<(usize, usize)> = located
        .worst
        .iter()
        .filter(|cell| cell.index.len() < 3 || cell.index[0] == 0)
        .map(|cell| {
            let n = cell.index.len();
            let (row, col) = match n {
                1 => (0, cell.index[0]),
                _ => (cell.index[n - 2], cell.index[n - 1]),
            };
            (
                (row - row_range.start) / row_range.step.max(1),
                (col - col_range.start) / col_range.step.max(1),
            )
        })
        .collect();
    Panel {
        title: format!(
            "{} outside the tolerance{}",
            located.elements(),
            if outlined.is_empty() {
                String::new()
            } else {
                ", the worst outlined".to_owned()
            }
        ),
        equal_aspect: false,
        colorbar: Some(super::ColorBar {
            colormap: Colormap::Magma,
            min: 0.0,
            max: 1.0,
            label: "outside".to_owned(),
        }),
        x: cell_axis("column", col_range),
        y: cell_axis("row", row_range).downwards(),
        content: Content::Heatmap {
            values: values.into_iter().collect(),
            rows: row_range.len(),
            cols: col_range.len(),
            outlined,
            overlay: Vec::new(),
        },
    }
}
