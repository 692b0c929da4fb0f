//! The context lab's vision half as a figure: a ViT's position table resampled to a larger
//! grid (MAE's sin-cos table, or a learned one from a file) beside the table made at that
//! grid, and the 2D encodings that need no resampling, for one query patch.

use std::path::PathBuf;

use crate::encoding::alibi;
use crate::engine::TableSpec;
use crate::scene::context;
use crate::table_args::CliError;

use super::FigureArgs;
use super::options::{Words, count, value_name};
use super::panels::{colorbar, span};
use super::{Axis, Content, Drawn, FigureError, FigureKind, FigureStyle, Panel};

/// The context-vision figure's own options.
#[derive(Debug, Clone, clap::Args)]
pub struct VisionOptions {
    /// context-vision: patches along a side of the grid the ViT was trained on (default 14)
    #[arg(long, value_name = "N")]
    pub trained_grid: Option<i64>,

    /// context-vision: patches along a side of the larger grid (default 24)
    #[arg(long, value_name = "N")]
    pub grid: Option<i64>,

    /// context-vision: how the table is resampled, as timm's resample_abs_pos_embed
    #[arg(long, value_enum, value_name = "MODE")]
    pub resample: Option<crate::encoding::resample::ResampleMode>,
}

/// The vision half's figure: the MAE table resampled and made at the larger grid, their
/// difference, and the 2D encodings that need no resampling, for one query patch.
#[derive(Debug, Clone, PartialEq)]
pub struct VisionFigure {
    /// With a learned table, its grid and width are the table's (`train_side`, `dim`).
    pub params: context::VisionParams,
    /// A learned table's file and tensor, drawn instead of MAE's sin-cos table.
    pub learned: Option<(PathBuf, Option<String>)>,
    /// Heads of the 2D ALiBi map, and the head drawn.
    pub heads: usize,
    pub head: usize,
}

/// The head width of the vision half's RoPE maps (ViT-B: 768 wide, 12 heads).
pub const VIT_HEAD_DIM: usize = 64;

impl VisionFigure {
    /// The three 2D encodings at the larger grid, as patch-map tables.
    pub fn encoding_maps(&self) -> [(String, TableSpec); 3] {
        use crate::engine::patch_maps::{PatchMapSettings, PatchMethod};
        let grid = self.params.target_grid();
        let settings = PatchMapSettings {
            dim: VIT_HEAD_DIM,
            base: crate::encoding::defaults::BASE,
            seed: 0,
            loaded_freqs: None,
        };
        let spec = |method: PatchMethod| method.spec(grid, self.heads, self.head, &settings);
        [
            (
                "axial RoPE (rope-vit): nothing to resample".to_owned(),
                spec(PatchMethod::AxialRope),
            ),
            (
                "mixed RoPE (rope-vit, seed 0): nothing to resample".to_owned(),
                spec(PatchMethod::MixedRope),
            ),
            (
                format!("2D ALiBi, head {}: nothing to resample", self.head),
                spec(PatchMethod::Alibi2d),
            ),
        ]
    }
}

impl FigureKind for VisionFigure {
    const OPTIONS: &'static [&'static str] = &[
        "file",
        "tensor",
        "trained_grid",
        "grid",
        "dim",
        "resample",
        "antialias",
        "query",
        "heads",
        "head",
    ];

    fn from_options(args: &FigureArgs) -> Result<Self, CliError> {
        let defaults = crate::scene::context::VisionParams::default();
        let train_side = count(
            "trained_grid",
            args.vision.trained_grid,
            defaults.train_side,
            2..=64,
        )?;
        let target_side = count("grid", args.vision.grid, defaults.target_side, 2..=64)?;
        let patches = target_side * target_side;
        let dim = count("dim", args.sizes.dim, defaults.dim, 4..=4096)?;
        if dim % 4 != 0 {
            return Err(CliError::usage(format!(
                "--dim {dim} is not allowed: the 2D sin-cos table needs a multiple of 4"
            )));
        }
        let alibi = crate::scene::context::AlibiSettings::default();
        let heads = count("heads", args.sizes.heads, alibi.heads, 1..=128)?;
        // A learned table brings its own grid and width.
        let (learned, train_side, dim) = match &args.file {
            Some(file) => {
                if args.vision.trained_grid.is_some() || args.sizes.dim.is_some() {
                    return Err(CliError::usage(
                        "--trained-grid and --dim come from the --file table: leave them out",
                    ));
                }
                let max_bytes = crate::engine::available_memory_bytes().unwrap_or(u64::MAX);
                let (table, tensor) = crate::import::read_position_table(
                    file,
                    args.reading.tensor.as_deref(),
                    max_bytes,
                )
                .map_err(|e| CliError::usage(format!("--file {e}")))?;
                let cols = table.ncols();
                let learned = crate::scene::context::LearnedTable::new(table)
                    .map_err(|e| CliError::usage(format!("--file {}: {e}", file.display())))?;
                (Some((file.clone(), tensor)), learned.side, cols)
            }
            None if args.reading.tensor.is_some() => {
                return Err(CliError::usage(
                    "--tensor applies with --file: which tensor of a .safetensors file",
                ));
            }
            None => (None, train_side, dim),
        };
        Ok(Self {
            learned,
            params: crate::scene::context::VisionParams {
                train_side,
                target_side,
                dim,
                mode: args.vision.resample.unwrap_or(defaults.mode),
                antialias: args.grid2d.antialias.unwrap_or(defaults.antialias),
                query: count(
                    "query",
                    args.query,
                    (target_side / 2) * target_side + target_side / 2,
                    0..=patches - 1,
                )?,
            },
            heads,
            head: count("head", args.sizes.head, heads - 1, 0..=heads - 1)?,
        })
    }

    fn write_options(&self, words: &mut Words) {
        let p = &self.params;
        match &self.learned {
            // The table's grid and width are the file's.
            Some((file, tensor)) => {
                words.option("file", file.display());
                if let Some(tensor) = tensor {
                    words.option("tensor", tensor);
                }
            }
            None => {
                words.option("trained-grid", p.train_side);
                words.option("dim", p.dim);
            }
        }
        words.option("grid", p.target_side);
        words.option("resample", value_name(p.mode));
        words.option("antialias", p.antialias);
        words.option("query", p.query);
        words.option("heads", self.heads);
        words.option("head", self.head);
    }

    fn draw(&self, style: &FigureStyle) -> Result<Drawn, FigureError> {
        draw_vision(self, style)
    }
}

/// A patch-grid heatmap panel with a colour bar of its own, the query outlined.
fn grid_panel(
    style: &FigureStyle,
    title: String,
    values: Vec<f64>,
    side: usize,
    query: (usize, usize),
) -> Panel {
    let range = span(values.iter().copied());
    Panel {
        title,
        equal_aspect: true,
        colorbar: colorbar(style, range, "value"),
        x: Axis::new("patch column x", -0.5, side as f64 - 0.5),
        y: Axis::new("patch row y", -0.5, side as f64 - 0.5).downwards(),
        content: Content::Heatmap {
            values,
            rows: side,
            cols: side,
            outlined: vec![(query.1, query.0)],
            overlay: Vec::new(),
        },
    }
}

/// The vision figure's title and panels.
fn draw_vision(figure: &VisionFigure, style: &FigureStyle) -> Result<Drawn, FigureError> {
    use crate::engine::{Window, cpu};
    let p = &figure.params;
    alibi::check_head(figure.head, figure.heads)?;
    let side = p.target_side;
    let grid = p.target_grid();
    let query = grid.patch_xy(p.query);
    let mut panels = match &figure.learned {
        Some((file, tensor)) => learned_panels(style, p, file, tensor.as_deref())?,
        None => mae_panels(style, p)?,
    };
    for (title, spec) in figure.encoding_maps() {
        let window = Window::one_row(p.query, side * side);
        let values = super::budget::computed(&spec, &window, &|window| {
            Ok(cpu::compute_window(&spec, window)?
                .into_real()
                .into_iter()
                .collect())
        })?;
        panels.push(grid_panel(style, title, values, side, query));
    }
    let mode = match p.mode {
        crate::encoding::resample::ResampleMode::Bicubic => "bicubic",
        crate::encoding::resample::ResampleMode::Bilinear => "bilinear",
    };
    let table = match &figure.learned {
        Some((file, _)) => format!(
            "the learned table of {}",
            file.file_name().map_or_else(
                || file.display().to_string(),
                |n| n.to_string_lossy().into_owned()
            )
        ),
        None => "MAE's table".to_owned(),
    };
    let title = format!(
        "A ViT trained at {} px run at {} px, {table}: query patch ({}, {}), {mode}{}",
        p.train_side * context::PATCH_PIXELS,
        side * context::PATCH_PIXELS,
        query.0,
        query.1,
        if p.antialias { ", antialias" } else { "" }
    );
    // Side by side, each patch map square.
    Ok(Drawn::new(title, panels).in_columns(3).square_panels())
}

/// The learned table's panels: its similarity map at its own grid and resampled.
fn learned_panels(
    style: &FigureStyle,
    p: &context::VisionParams,
    file: &std::path::Path,
    tensor: Option<&str>,
) -> Result<Vec<Panel>, FigureError> {
    let max_bytes = crate::engine::available_memory_bytes().unwrap_or(u64::MAX);
    let (table, _) = crate::import::read_position_table(file, tensor, max_bytes)
        .map_err(|e| FigureError::Input(e.to_string()))?;
    let learned = context::LearnedTable::new(table)
        .map_err(|e| FigureError::Input(format!("{}: {e}", file.display())))?;
    let maps = learned.maps(p)?;
    let flat = |a: &ndarray::Array2<f64>| a.iter().copied().collect::<Vec<f64>>();
    let side = p.target_side;
    Ok(sharing_one_scale(vec![
        grid_panel(
            style,
            format!(
                "learned table at its {s} x {s} grid (cosine)",
                s = learned.side
            ),
            flat(&maps.trained),
            learned.side,
            maps.trained_query,
        ),
        grid_panel(
            style,
            format!("resampled to {side} x {side} (cosine)"),
            flat(&maps.resampled),
            side,
            p.target_grid().patch_xy(p.query),
        ),
    ]))
}

/// MAE's panels: its table resampled, made at the larger grid, and their difference.
fn mae_panels(style: &FigureStyle, p: &context::VisionParams) -> Result<Vec<Panel>, FigureError> {
    let maps = p.maps()?;
    let side = p.target_side;
    let query = p.target_grid().patch_xy(p.query);
    let flat = |a: &ndarray::Array2<f64>| a.iter().copied().collect::<Vec<f64>>();
    let difference = &maps.resampled - &maps.direct;
    Ok(sharing_one_scale(vec![
        grid_panel(
            style,
            format!("MAE table made at {t} x {t}, resampled", t = p.train_side),
            flat(&maps.resampled),
            side,
            query,
        ),
        grid_panel(
            style,
            format!("MAE table made at {side} x {side}"),
            flat(&maps.direct),
            side,
            query,
        ),
        grid_panel(
            style,
            "difference (resampled - made)".to_owned(),
            flat(&difference),
            side,
            query,
        ),
    ]))
}

/// The first two panels (the two tables' maps, compared side by side) on one colour scale;
/// the rest keep their own.
fn sharing_one_scale(mut panels: Vec<Panel>) -> Vec<Panel> {
    let bars: Vec<(f64, f64)> = panels
        .iter()
        .take(2)
        .filter_map(|p| p.colorbar.as_ref().map(|c| (c.min, c.max)))
        .collect();
    if let [(a_lo, a_hi), (b_lo, b_hi)] = bars[..] {
        let (lo, hi) = (a_lo.min(b_lo), a_hi.max(b_hi));
        for panel in panels.iter_mut().take(2) {
            if let Some(bar) = &mut panel.colorbar {
                bar.min = lo;
                bar.max = hi;
            }
        }
    }
    panels
}
