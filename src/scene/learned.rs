//! What the Learned tables view and its figure draw: a learned position table read from a file
//! and the sinusoidal table of the same size beside it, each as its similarity matrix, its rows
//! projected onto their first principal components, and chosen columns against position.
//! Every number comes from `encoding`.

use crate::encoding::PairLayout;
use std::path::{Path, PathBuf};

use ndarray::Array2;

use crate::encoding::learned::{self, Principal};
use crate::encoding::sinusoidal::{self, SinusoidalParams, Spacing};

/// Where a learned table comes from: a file, and the tensor of a file holding several.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct LearnedSource {
    pub file: TableFile,
    pub tensor: Option<String>,
}

/// A learned table's file: one on disk, or the example poslab carries in its binary.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum TableFile {
    Path(PathBuf),
    /// [`EXAMPLE`]: all-MiniLM-L6-v2's position embeddings.
    Example,
}

/// The example learned table: `embeddings.position_embeddings.weight` of
/// sentence-transformers' all-MiniLM-L6-v2 (512 positions x 384, float32, Apache-2.0), as the
/// model stores it; `assets/learned/README.md` says where it comes from.
pub const EXAMPLE: &[u8] = include_bytes!("../../assets/learned/all-MiniLM-L6-v2.safetensors");

/// What the example is called wherever it is named.
pub const EXAMPLE_NAME: &str = "all-MiniLM-L6-v2 (example)";

impl LearnedSource {
    /// The file at `path`, its tensor found by name.
    pub fn path(path: PathBuf) -> Self {
        Self {
            file: TableFile::Path(path),
            tensor: None,
        }
    }

    /// The example table.
    pub fn example() -> Self {
        Self {
            file: TableFile::Example,
            tensor: None,
        }
    }

    /// The file as its path box shows it: the path, or the example's name.
    pub fn shown(&self) -> String {
        match &self.file {
            TableFile::Path(path) => path.display().to_string(),
            TableFile::Example => EXAMPLE_NAME.to_owned(),
        }
    }

    /// The file's name as a person reads it (no folders).
    pub fn file_name(&self) -> String {
        match &self.file {
            TableFile::Path(path) => path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
            TableFile::Example => EXAMPLE_NAME.to_owned(),
        }
    }
}

/// One table's pictures.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TableAnalysis {
    pub name: String,
    #[serde(with = "crate::jobs::remote::bulk")]
    pub table: Array2<f64>,
    /// `[P, P]` cosine similarity of the rows.
    #[serde(with = "crate::jobs::remote::bulk")]
    pub similarity: Array2<f64>,
    /// The first three principal components.
    pub principal: Principal,
}

/// A learned table and the sinusoidal table of its size, analysed.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LearnedAnalysis {
    pub source: LearnedSource,
    /// The tensor read, as the file names it (a `.npy` has none).
    pub tensor: Option<String>,
    pub learned: TableAnalysis,
    pub sinusoidal: TableAnalysis,
}

/// How many bytes of a file poslab reads for a learned table at most.
fn max_bytes() -> u64 {
    crate::engine::available_memory_bytes()
        .unwrap_or(u64::MAX)
        .min((learned::MAX_POSITIONS * learned::MAX_DIM * 8) as u64 + (1 << 20))
}

/// Reads the table of `source`: `[positions, dim]`, or timm's `[1, positions, dim]`.
pub fn read(source: &LearnedSource) -> Result<(Array2<f64>, Option<String>), String> {
    let tensor = source.tensor.as_deref();
    let (table, tensor) = match &source.file {
        TableFile::Path(path) => {
            if !is_table_file(path) {
                return Err(format!(
                    "{}: is not a learned table poslab reads: use a .npy or .safetensors file",
                    path.display()
                ));
            }
            crate::import::read_position_table(path, tensor, max_bytes())
                .map_err(|e| e.to_string())?
        }
        TableFile::Example => {
            let format = crate::import::tables::TableFormat::Safetensors;
            crate::import::position_table_from_bytes(EXAMPLE, format, tensor)
                .map_err(|e| format!("{EXAMPLE_NAME}: {e}"))?
        }
    };
    learned::check_table(&table).map_err(|e| format!("{}: {e}", source.shown()))?;
    Ok((table, tensor))
}

/// The sinusoidal table of `positions` rows and `dim` columns (one fewer when odd: it is made
/// of pairs), as Vaswani et al.
pub fn sinusoidal_of_size(positions: usize, dim: usize) -> SinusoidalParams {
    SinusoidalParams {
        seq: positions,
        dim: (dim & !1).max(2),
        base: 10_000.0,
        start: 0,
        layout: PairLayout::Interleaved,
        spacing: Spacing::Vaswani,
        ..SinusoidalParams::default()
    }
}

fn analyse_table(name: String, table: Array2<f64>) -> TableAnalysis {
    TableAnalysis {
        name,
        similarity: learned::cosine_similarity(&table),
        principal: learned::principal_components(&table, 3),
        table,
    }
}

/// Reads and analyses `source` (seconds for a table of a thousand rows: the decomposition).
pub fn analyse(source: &LearnedSource) -> Result<LearnedAnalysis, String> {
    let (table, tensor) = read(source)?;
    let (positions, dim) = table.dim();
    let params = sinusoidal_of_size(positions, dim);
    let sinusoidal = sinusoidal::table(&params).map_err(|e| e.to_string())?;
    let file = source.file_name();
    let name = match &tensor {
        Some(tensor) => format!("{file}: {tensor}"),
        None => file,
    };
    Ok(LearnedAnalysis {
        source: source.clone(),
        tensor,
        learned: analyse_table(name, table),
        sinusoidal: analyse_table(
            format!("sinusoidal, base 10000, {positions} x {}", params.dim),
            sinusoidal,
        ),
    })
}

/// The tensors of a `.safetensors` file that could be position tables (`[P, D]` or
/// `[1, P, D]`); none for other files or a file that cannot be read.
pub fn table_tensors(file: &TableFile) -> Vec<String> {
    let tensors = match file {
        TableFile::Path(path) => path_tensors(path),
        TableFile::Example => crate::import::tables::safetensors_tensors(EXAMPLE).ok(),
    };
    tensors
        .map(|tensors| {
            tensors
                .into_iter()
                .filter(|t| t.shape.iter().filter(|&&n| n != 1).count() == 2)
                .map(|t| t.name)
                .collect()
        })
        .unwrap_or_default()
}

fn path_tensors(path: &Path) -> Option<Vec<crate::import::tables::TensorInfo>> {
    let is_safetensors = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("safetensors"));
    if !is_safetensors {
        return None;
    }
    crate::import::tables::list_tensors(path).ok()
}

/// Parses a list of columns such as `0, 1, 64` (at most 8), each below `dim`.
pub fn parse_columns(text: &str, dim: usize) -> Result<Vec<usize>, String> {
    let columns: Vec<usize> = text
        .split([',', ' '])
        .filter(|w| !w.is_empty())
        .map(|w| {
            w.parse::<usize>().ok().filter(|&c| c < dim).ok_or_else(|| {
                format!(
                    "{w:?} is not a column: use whole numbers from 0 to {}",
                    dim.saturating_sub(1)
                )
            })
        })
        .collect::<Result<_, _>>()?;
    if columns.is_empty() || columns.len() > MAX_COLUMNS {
        return Err(format!(
            "name 1 to {MAX_COLUMNS} columns, such as 0, 1, 2, 3"
        ));
    }
    Ok(columns)
}

/// The most columns drawn against position at once.
pub const MAX_COLUMNS: usize = 8;

/// The columns drawn by default: four whose sinusoidal companions (base 10000, interleaved)
/// have periods of about 1/8, 1/4, 1/2 and 1 times the table's length, so that both tables
/// show four distinct curves rather than the first columns' solid block of oscillations
/// (columns 0 and 1 turn once every 6.3 positions). Fewer in a narrower table.
pub fn default_columns(positions: usize, dim: usize) -> Vec<usize> {
    if dim <= 4 {
        return (0..dim).collect();
    }
    let last_pair = (dim & !1).saturating_sub(2);
    let mut columns: Vec<usize> = Vec::new();
    for fraction in [8.0, 4.0, 2.0, 1.0] {
        // Column c = 2i turns with period 2π · 10000^(c / dim).
        let period = (positions as f64 / fraction).max(std::f64::consts::TAU);
        let exact = dim as f64 * (period / std::f64::consts::TAU).ln() / 10_000f64.ln();
        let column = ((exact / 2.0).round() as usize * 2).min(last_pair);
        if !columns.contains(&column) {
            columns.push(column);
        }
    }
    // A short table's periods all round to the first pair: the next columns fill in.
    for column in 0..dim {
        if columns.len() == 4 {
            break;
        }
        if !columns.contains(&column) {
            columns.push(column);
        }
    }
    columns.sort_unstable();
    columns
}

/// Curve colours, one per column.
pub const COLUMN_COLORS: [[u8; 3]; MAX_COLUMNS] = [
    [66, 133, 244],
    [244, 140, 36],
    [52, 168, 83],
    [219, 68, 55],
    [171, 71, 188],
    [0, 172, 193],
    [255, 205, 0],
    [158, 158, 158],
];

/// `(position, value)` of column `column`.
pub fn column_curve(table: &Array2<f64>, column: usize) -> Vec<[f64; 2]> {
    table
        .column(column)
        .iter()
        .enumerate()
        .map(|(p, &v)| [p as f64, v])
        .collect()
}

/// `(PC1, PC2)` of every row, in position order.
pub fn projection_2d(principal: &Principal) -> Vec<[f64; 2]> {
    let k = principal.projections.ncols();
    principal
        .projections
        .rows()
        .into_iter()
        .map(|row| [row[0], if k > 1 { row[1] } else { 0.0 }])
        .collect()
}

/// The axis name of component `n` with the share of variance it carries.
pub fn component_name(principal: &Principal, n: usize) -> String {
    match principal.explained.get(n) {
        Some(share) => format!("PC{} ({:.1}% of variance)", n + 1, share * 100.0),
        None => format!("PC{}", n + 1),
    }
}

/// A file name's extension says it may hold a learned table.
pub fn is_table_file(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("npy") || e.eq_ignore_ascii_case("safetensors"))
}
