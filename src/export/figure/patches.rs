//! The Patches view's figure: two per-query patch maps side by side, and the `[P, P]` matrix
//! of the first.

use super::FigureArgs;
use super::options::{self, Words, count, value_name};
use super::panels::{MAX_CELLS, colorbar, finite_range, heatmap_panel};
use super::{Axis, Content, Drawn, FigureError, FigureKind, FigureStyle, Panel};
use crate::encoding::grid::GridParams;
use crate::engine::patch_maps::{PatchMapSettings, PatchMethod};
use crate::engine::{Window, cpu};
use crate::table_args::CliError;

/// The patches figure's own options (`--query` is shared with context-vision).
#[derive(Debug, Clone, clap::Args)]
pub struct PatchesOptions {
    /// patches: the left map's method
    #[arg(long, value_enum, value_name = "METHOD")]
    pub left: Option<PatchMethod>,

    /// patches: the right map's method
    #[arg(long, value_enum, value_name = "METHOD")]
    pub right: Option<PatchMethod>,
}

/// Whether a map of `method` reads the option `id` (`loaded`: mixed RoPE's frequencies come
/// from a file, so its seed and width are not read).
fn reads(method: PatchMethod, id: &str, loaded: bool) -> bool {
    use PatchMethod::*;
    match id {
        "dim" => matches!(method, AxialRope | SinCos) || (method == MixedRope && !loaded),
        "base" => method == SinCos,
        "seed" => method == MixedRope && !loaded,
        "freqs" => method == MixedRope,
        "heads" | "head" => method == Alibi2d,
        _ => true,
    }
}

/// Two per-query patch maps side by side.
#[derive(Debug, Clone, PartialEq)]
pub struct PatchesFigure {
    pub grid: GridParams,
    pub query: usize,
    pub methods: [PatchMethod; 2],
    /// Heads of 2D ALiBi and the head shown.
    pub heads: usize,
    pub head: usize,
    pub settings: PatchMapSettings,
}

impl FigureKind for PatchesFigure {
    const OPTIONS: &'static [&'static str] = &[
        "grid_h",
        "grid_w",
        "query",
        "left",
        "right",
        "heads",
        "head",
        "dim",
        "base",
        "seed",
        "freqs",
        "freqs_head",
    ];

    fn from_options(args: &FigureArgs) -> Result<Self, CliError> {
        let methods = [
            args.patches.left.unwrap_or(PatchMethod::Euclidean),
            args.patches.right.unwrap_or(PatchMethod::Alibi2d),
        ];
        // An option neither map reads would be accepted and change nothing: refused, naming
        // the maps that read it.
        let given = [
            ("dim", args.sizes.dim.is_some()),
            ("base", args.sinusoidal.base.is_some()),
            ("seed", args.arithmetic.seed.is_some()),
            ("heads", args.sizes.heads.is_some()),
            ("head", args.sizes.head.is_some()),
            ("freqs", args.grid2d.freqs.is_some()),
        ];
        for (id, is_given) in given {
            if is_given
                && !methods
                    .iter()
                    .any(|&m| reads(m, id, args.grid2d.freqs.is_some()))
            {
                let readers: Vec<String> = PatchMethod::ALL
                    .into_iter()
                    .filter(|&m| reads(m, id, false))
                    .map(value_name)
                    .collect();
                return Err(CliError::usage(format!(
                    "--{} changes nothing here: neither map ({} and {}) reads it; it applies to {}",
                    id.replace('_', "-"),
                    value_name(methods[0]),
                    value_name(methods[1]),
                    readers.join(", ")
                )));
            }
        }
        let dim = options::dim(args)?;
        let heads = options::heads(args)?;
        let grid = GridParams {
            grid_h: count("grid_h", args.sizes.grid_h, 14, 1..=64)?,
            grid_w: count("grid_w", args.sizes.grid_w, 14, 1..=64)?,
        };
        let patches = grid.patches();
        let query = count(
            "query",
            args.query,
            (grid.grid_h / 2) * grid.grid_w + grid.grid_w / 2,
            0..=patches - 1,
        )?;
        let head = count("head", args.sizes.head, 0, 0..=heads - 1)?;
        let loaded_freqs = match &args.grid2d.freqs {
            Some(path) => {
                let max_bytes = crate::engine::available_memory_bytes().unwrap_or(u64::MAX);
                let all = crate::import::read_mixed_freqs(path, max_bytes)
                    .map_err(|e| CliError::usage(format!("--freqs {e}")))?;
                let heads_in_file = all.shape()[1];
                let freqs_head = count(
                    "freqs_head",
                    args.grid2d.freqs_head,
                    0,
                    0..=heads_in_file - 1,
                )?;
                let freqs = all.index_axis(ndarray::Axis(1), freqs_head).to_owned();
                crate::encoding::rope2d::check_mixed_freqs_shape(freqs.shape())?;
                Some(freqs)
            }
            None if args.grid2d.freqs_head.is_some() => {
                return Err(CliError::usage(
                    "--freqs-head applies with --freqs: which head of a [2, heads, n] file",
                ));
            }
            None => None,
        };
        Ok(Self {
            grid,
            query,
            methods,
            heads,
            head,
            settings: PatchMapSettings {
                dim: (dim / 4 * 4).max(4),
                base: options::base(args),
                seed: args.arithmetic.seed.unwrap_or(0),
                loaded_freqs,
            },
        })
    }

    /// Mixed RoPE frequencies loaded from a file are named `FREQS.npy`: the app keeps their
    /// values, not their path.
    fn write_options(&self, words: &mut Words) {
        words.option("grid-h", self.grid.grid_h);
        words.option("grid-w", self.grid.grid_w);
        words.option("query", self.query);
        words.option("left", value_name(self.methods[0]));
        words.option("right", value_name(self.methods[1]));
        let loaded = self.settings.loaded_freqs.is_some();
        let read = |id| self.methods.iter().any(|&m| reads(m, id, loaded));
        if read("heads") {
            words.option("heads", self.heads);
            words.option("head", self.head);
        }
        if read("dim") {
            words.option("dim", self.settings.dim);
        }
        if read("base") {
            words.option("base", self.settings.base);
        }
        if loaded && read("freqs") {
            words.option("freqs", "FREQS.npy");
        } else if read("seed") {
            words.option("seed", self.settings.seed);
        }
    }

    fn draw(&self, style: &FigureStyle) -> Result<Drawn, FigureError> {
        let (grid, query, heads, head) = (&self.grid, self.query, self.heads, self.head);
        let settings = &self.settings;
        let mut panels = Vec::new();
        let (qx, qy) = grid.patch_xy(query);
        for method in self.methods {
            let name = method.label().to_owned();
            let table = &method.spec(*grid, heads, head, settings);
            let window = Window::one_row(query, grid.patches());
            let values = super::budget::computed(table, &window, &|window| {
                Ok(cpu::compute_window(table, window)?
                    .into_real()
                    .into_iter()
                    .collect())
            })?;
            let own_range = finite_range(&values);
            panels.push(Panel {
                title: name,
                equal_aspect: true,
                // Two measures (a distance, a bias, a similarity): a scale each.
                colorbar: colorbar(style, own_range, "value"),
                x: Axis::new("patch column x", -0.5, grid.grid_w as f64 - 0.5),
                y: Axis::new("patch row y", -0.5, grid.grid_h as f64 - 0.5).downwards(),
                content: Content::Heatmap {
                    values,
                    rows: grid.grid_h,
                    cols: grid.grid_w,
                    outlined: vec![(qy, qx)],
                    overlay: Vec::new(),
                },
            });
        }
        // The full [P, P] matrix of the first method, the maps' rows among its rows.
        let matrix = self.methods[0].spec(*grid, heads, head, settings);
        let (mut panel, range) = heatmap_panel(
            &matrix,
            0,
            format!("[P, P] {}", self.methods[0].label()),
            ("key patch j", "query patch i"),
            MAX_CELLS,
            style.reduce,
        )?;
        panel.equal_aspect = true;
        panel.colorbar = colorbar(style, range, "value");
        panels.push(panel);
        // The two maps and their matrix read across.
        Ok(Drawn::new(
            format!(
                "Query patch {query} (column {qx}, row {qy}) of a {} x {} grid",
                grid.grid_h, grid.grid_w
            ),
            panels,
        )
        .in_columns(3)
        .square_panels())
    }
}
