//! The Learned tables view as a figure: for the learned table and the sinusoidal table of its
//! size, the similarity matrix, the rows on their first two principal components and the
//! chosen columns against position (the app's 3D projection is drawn in 2D here).

use super::FigureArgs;
use super::options::Words;
use super::panels::{MAX_CELLS, span, strided};
use super::{
    Axis, ColorBar, Content, Drawn, FigureError, FigureKind, FigureStyle, Panel, Series,
    SeriesStyle,
};
use crate::engine::reduce::reduce_array;
use crate::scene::learned::{self, COLUMN_COLORS, LearnedSource, TableAnalysis, TableFile};
use crate::table_args::CliError;

/// The learned figure's own options (`--file` and `--example` are shared with check and context-vision).
#[derive(Debug, Clone, clap::Args)]
pub struct LearnedOptions {
    /// learned: the columns drawn against position, such as 0,1,2,3 (default: four whose
    /// sinusoidal periods are 1/8, 1/4, 1/2 and 1 times the table's length)
    #[arg(long, value_name = "C,C,...")]
    pub columns: Option<String>,
}

/// What the view shows: the file (and tensor) and the columns drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct LearnedFigure {
    pub source: LearnedSource,
    pub columns: Vec<usize>,
}

impl FigureKind for LearnedFigure {
    const OPTIONS: &'static [&'static str] = &["file", "example", "tensor", "columns"];

    fn from_options(args: &FigureArgs) -> Result<Self, CliError> {
        let (file, flag) = match (&args.file, args.example) {
            (Some(path), false) => (TableFile::Path(path.clone()), "--file"),
            (None, true) => (TableFile::Example, "--example"),
            (Some(_), true) => {
                return Err(CliError::usage(
                    "--file and --example both name the table: give one",
                ));
            }
            (None, false) => {
                return Err(CliError::usage(
                    "the learned figure needs --file (a .npy or .safetensors position table) or --example (all-MiniLM-L6-v2's, shipped with poslab)",
                ));
            }
        };
        let source = LearnedSource {
            file,
            tensor: args.reading.tensor.clone(),
        };
        let (table, tensor) =
            learned::read(&source).map_err(|e| CliError::usage(format!("{flag} {e}")))?;
        let (positions, dim) = table.dim();
        let columns = match &args.learned.columns {
            Some(text) => learned::parse_columns(text, dim)
                .map_err(|e| CliError::usage(format!("--columns {text}: {e}")))?,
            None => learned::default_columns(positions, dim),
        };
        Ok(Self {
            source: LearnedSource {
                file: source.file,
                tensor: tensor.or(source.tensor),
            },
            columns,
        })
    }

    fn write_options(&self, words: &mut Words) {
        match &self.source.file {
            TableFile::Path(path) => words.option("file", path.display()),
            TableFile::Example => words.switch("example"),
        }
        if let Some(tensor) = &self.source.tensor {
            words.option("tensor", tensor);
        }
        let columns: Vec<String> = self.columns.iter().map(|c| c.to_string()).collect();
        words.option("columns", columns.join(","));
    }

    fn draw(&self, style: &FigureStyle) -> Result<Drawn, FigureError> {
        draw(self, style)
    }
}

/// The figure's title and its six panels, three a row.
fn draw(figure: &LearnedFigure, style: &FigureStyle) -> Result<Drawn, FigureError> {
    let analysis = learned::analyse(&figure.source).map_err(FigureError::Input)?;
    let dim = analysis.learned.table.ncols();
    if let Some(&bad) = figure.columns.iter().find(|&&c| c >= dim) {
        return Err(FigureError::Input(format!(
            "--columns {bad}: the table has columns 0 to {}",
            dim - 1
        )));
    }
    let mut panels = Vec::new();
    for table in [&analysis.learned, &analysis.sinusoidal] {
        panels.push(similarity_panel(table, style));
        panels.push(projection_panel(table));
        panels.push(columns_panel(table, &figure.columns));
    }
    let (positions, _) = analysis.learned.table.dim();
    let title = format!(
        "Learned position table {} ({positions} x {dim}) beside the sinusoidal one",
        analysis.learned.name
    );
    Ok(Drawn::new(title, panels).in_columns(3))
}

fn similarity_panel(t: &TableAnalysis, style: &FigureStyle) -> Panel {
    let n = t.similarity.nrows();
    let bins = strided(n, MAX_CELLS);
    let values = reduce_array(&t.similarity, &bins, &bins, style.reduce);
    Panel {
        title: format!("{}: cosine similarity", t.name),
        equal_aspect: true,
        colorbar: Some(ColorBar {
            colormap: style.colormap,
            min: -1.0,
            max: 1.0,
            label: "cos".into(),
        }),
        x: Axis::new("position j", -0.5, values.ncols() as f64 - 0.5),
        y: Axis::new("position i", -0.5, values.nrows() as f64 - 0.5).downwards(),
        content: Content::Heatmap {
            values: values.iter().copied().collect(),
            rows: values.nrows(),
            cols: values.ncols(),
            outlined: Vec::new(),
            overlay: Vec::new(),
        },
    }
}

fn projection_panel(t: &TableAnalysis) -> Panel {
    let points = learned::projection_2d(&t.principal);
    let (x0, x1) = span(points.iter().map(|p| p[0]));
    let (y0, y1) = span(points.iter().map(|p| p[1]));
    let ends = vec![points[0], points[points.len() - 1]];
    Panel {
        title: "rows on their principal components".into(),
        equal_aspect: false,
        colorbar: None,
        x: Axis::new(learned::component_name(&t.principal, 0), x0, x1),
        y: Axis::new(learned::component_name(&t.principal, 1), y0, y1),
        content: Content::Plot(vec![
            Series {
                name: "rows in position order".into(),
                points,
                color: COLUMN_COLORS[0],
                style: SeriesStyle::Line { width: 1.5 },
            },
            Series {
                name: "first and last position".into(),
                points: ends,
                color: COLUMN_COLORS[1],
                style: SeriesStyle::Dots { radius: 3.5 },
            },
        ]),
    }
}

fn columns_panel(t: &TableAnalysis, columns: &[usize]) -> Panel {
    let series: Vec<Series> = columns
        .iter()
        .enumerate()
        .filter(|&(_, &c)| c < t.table.ncols())
        .map(|(k, &c)| Series {
            name: format!("column {c}"),
            points: learned::column_curve(&t.table, c),
            color: COLUMN_COLORS[k % COLUMN_COLORS.len()],
            style: SeriesStyle::Line { width: 1.5 },
        })
        .collect();
    let (y0, y1) = span(series.iter().flat_map(|s| s.points.iter().map(|p| p[1])));
    Panel {
        title: "columns against position".into(),
        equal_aspect: false,
        colorbar: None,
        x: Axis::new("position p", 0.0, (t.table.nrows() - 1).max(1) as f64),
        y: Axis::new("value", y0, y1),
        content: Content::Plot(series),
    }
}
