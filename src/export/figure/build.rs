//! What each view's figure shows, built from the view's parameters by the CPU engine (f64, the
//! same numbers on every machine), so that the app's export and `poslab figure` agree.

use crate::colormap::Colormap;
use crate::encoding::alibi::{AlibiMode, AlibiParams};
use crate::encoding::grid::GridParams;
use crate::encoding::rope::{RopeLayout, pair_scores};
use crate::encoding::sinusoidal::SinusoidalParams;
use crate::engine::patch_maps::{PatchMapSettings, PatchMethod};
use crate::engine::{Strided, TableSpec, Window, cpu};
use crate::scene::camera::OrbitCamera;
use crate::scene::corkscrew::{self, CorkscrewParams, ProbeVector, SceneLayout};

use super::panels::{MAX_CELLS, cell_axis, colorbar, finite_range, heatmap_panel, strided};
use super::{
    Axis, ColorBar, Content, Figure, FigureError, FigureStyle, Panel, ProjectedDot, ProjectedLabel,
    ProjectedLine, Series, SeriesStyle,
};

/// The most panels a figure of every head draws (BLOOM-176B has 112 heads).
const MAX_SMALL_MULTIPLES: usize = 128;
/// Helix points per projected line, at most.
const MAX_LINE_POINTS: usize = 20_000;

/// Everything a view's figure depends on.
#[derive(Debug, Clone, PartialEq)]
pub enum FigureSpec {
    Sinusoidal(SinusoidalParams),
    DotDecay {
        params: SinusoidalParams,
        anchor: usize,
        normalised: bool,
    },
    /// One head's bias matrix, or every head as small multiples (`head: None`).
    Alibi {
        params: AlibiParams,
        head: Option<usize>,
    },
    /// Two per-query patch maps side by side.
    Patches {
        grid: GridParams,
        query: usize,
        methods: [PatchMethod; 2],
        /// Heads of 2D ALiBi and the head shown.
        heads: usize,
        head: usize,
        settings: PatchMapSettings,
    },
    Corkscrew(CorkscrewFigure),
    /// A table read from a file, next to poslab's reference and their difference.
    Check(CheckFigure),
    /// The context-extension lab: wavelengths, unseen angles and one lower chart.
    Context(Box<super::context::ContextFigure>),
    /// The context-extension lab's vision half.
    ContextVision(super::context::VisionFigure),
    /// The Relative positions view: one panel's boards.
    Relative(super::relative::RelativeFigure),
    /// A step of the tour "From counting to sinusoids".
    Tour(super::tour::TourFigure),
    /// A learned position table beside the sinusoidal one.
    Learned(super::learned::LearnedFigure),
}

/// What the Check view shows: a file, what it is compared with, the tolerance.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckFigure {
    pub file: std::path::PathBuf,
    pub tensor: Option<String>,
    /// `poslab table` words naming the expected table; empty: identify it.
    pub expected: Vec<String>,
    pub tolerance: crate::check::Tolerance,
}

/// The corkscrew's parameters and camera.
#[derive(Debug, Clone, PartialEq)]
pub struct CorkscrewFigure {
    pub dim: usize,
    pub base: f64,
    pub layout: RopeLayout,
    pub pairs: Vec<usize>,
    pub first_position: u64,
    pub position_count: usize,
    pub query: ProbeVector,
    pub key: ProbeVector,
    pub query_position: u64,
    pub key_position: u64,
    /// The context's length (positions start .. start + seq), which m and n lie in.
    pub seq: usize,
    /// `None`: the camera that frames the scene, as the app starts with.
    pub camera: Option<OrbitCamera>,
}

/// Builds the figure of `spec` in `style`.
pub fn build_figure(spec: &FigureSpec, style: &FigureStyle) -> Result<Figure, FigureError> {
    let (title, panels, colorbar) = match spec {
        FigureSpec::Sinusoidal(params) => {
            let table = TableSpec::Sinusoidal(*params);
            let (panel, range) = heatmap_panel(
                &table,
                0,
                format!("[{}, {}] table", params.seq, params.dim),
                ("dimension", "position"),
                MAX_CELLS,
                style.reduce,
            )?;
            (
                format!(
                    "Sinusoidal encoding, d = {}, base {}, {:?} layout, {:?} spacing",
                    params.dim, params.base, params.layout, params.spacing
                ),
                vec![panel],
                colorbar(style, range, "PE value"),
            )
        }
        FigureSpec::DotDecay {
            params,
            anchor,
            normalised,
        } => {
            // A curve of at most 4096 points, as the app draws it.
            let per_point = strided(params.seq, 2 * MAX_CELLS).step;
            let points = crate::scene::dot_decay::decay_curve(
                params,
                *anchor,
                *normalised,
                per_point,
                cpu::compute_window,
            )?;
            let (low, high) = finite_range(&points.iter().map(|p| p[1]).collect::<Vec<_>>());
            let pad = (high - low).abs().max(1e-9) * 0.05;
            let first = -(*anchor as f64);
            let last = first + params.seq.saturating_sub(1).max(1) as f64;
            let panel = Panel {
                title: format!("anchor row a = {anchor}"),
                equal_aspect: false,
                colorbar: None,
                x: Axis::new("offset k = j - a", first, last),
                y: Axis::new(
                    if *normalised {
                        "PE[a]·PE[a+k] / (d/2)"
                    } else {
                        "PE[a]·PE[a+k]"
                    },
                    low - pad,
                    high + pad,
                ),
                content: Content::Plot(vec![Series {
                    name: format!("d {} base {}", params.dim, params.base),
                    points,
                    color: [31, 119, 180],
                    style: SeriesStyle::Line { width: 1.8 },
                }]),
            };
            (
                format!(
                    "Dot-product decay of sinusoidal positions, {} positions",
                    params.seq
                ),
                vec![panel],
                None,
            )
        }
        FigureSpec::Alibi { params, head } => {
            let table = TableSpec::Alibi {
                params: *params,
                head: None,
            };
            let heads: Vec<usize> = match head {
                Some(h) => vec![*h],
                None if params.heads > MAX_SMALL_MULTIPLES => {
                    return Err(FigureError::Input(format!(
                        "{} heads are too many to draw side by side (at most {MAX_SMALL_MULTIPLES}): pick one with --head",
                        params.heads
                    )));
                }
                None => (0..params.heads).collect(),
            };
            let slopes = crate::encoding::alibi::slopes(params.heads)?;
            // Small multiples share the page: fewer cells each.
            let grid_cols = (heads.len() as f64).sqrt().ceil() as usize;
            let max_cells = (MAX_CELLS / grid_cols.max(1)).max(64);
            let mut panels = Vec::new();
            let mut range = (f64::INFINITY, f64::NEG_INFINITY);
            for &h in &heads {
                let (panel, (low, high)) = heatmap_panel(
                    &table,
                    h,
                    if heads.len() > 16 {
                        // Small panels: a short title.
                        format!("{h}: 2^{:.2}", slopes[h].log2())
                    } else {
                        format!("head {h}, m = 2^{:.3}", slopes[h].log2())
                    },
                    ("key j", "query i"),
                    max_cells,
                    style.reduce,
                )?;
                range = (range.0.min(low), range.1.max(high));
                panels.push(panel);
            }
            let mode = match params.mode {
                AlibiMode::Causal => "causal",
                AlibiMode::Symmetric => "symmetric",
            };
            (
                format!(
                    "ALiBi biases, {} heads, {} positions, {mode}",
                    params.heads, params.seq
                ),
                panels,
                colorbar(style, range, "bias"),
            )
        }
        FigureSpec::Patches {
            grid,
            query,
            methods,
            heads,
            head,
            settings,
        } => {
            let mut panels = Vec::new();
            let (qx, qy) = grid.patch_xy(*query);
            for method in methods {
                let name = method.label().to_owned();
                let table = &method.spec(*grid, *heads, *head, settings);
                let window = Window {
                    heads: Strided::all(1),
                    rows: Strided {
                        start: *query,
                        end: query + 1,
                        step: 1,
                    },
                    cols: Strided::all(grid.patches()),
                };
                let values = cpu::compute_window(table, &window)?
                    .into_real()
                    .into_iter()
                    .collect::<Vec<f64>>();
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
            let matrix = methods[0].spec(*grid, *heads, *head, settings);
            let (mut panel, range) = heatmap_panel(
                &matrix,
                0,
                format!("[P, P] {}", methods[0].label()),
                ("key patch j", "query patch i"),
                MAX_CELLS,
                style.reduce,
            )?;
            panel.equal_aspect = true;
            panel.colorbar = colorbar(style, range, "value");
            panels.push(panel);
            (
                format!(
                    "Query patch {query} (column {qx}, row {qy}) of a {} x {} grid",
                    grid.grid_h, grid.grid_w
                ),
                panels,
                None,
            )
        }
        FigureSpec::Corkscrew(figure) => corkscrew_figure(figure, style)?,
        FigureSpec::Check(figure) => check_figure(figure, style)?,
        FigureSpec::Context(figure) => super::context::build(figure, style)?,
        FigureSpec::ContextVision(figure) => super::context::build_vision(figure, style)?,
        FigureSpec::Relative(figure) => super::relative::build(figure, style)?,
        FigureSpec::Tour(figure) => super::tour::build(figure, style)?,
        FigureSpec::Learned(figure) => super::learned::build(figure, style)?,
    };
    // A comparison reads across: reference, file, difference side by side; so do the two patch
    // maps and their matrix.
    let columns = matches!(
        spec,
        FigureSpec::Check(_)
            | FigureSpec::Patches { .. }
            | FigureSpec::Context(_)
            | FigureSpec::ContextVision(_)
    )
    .then_some(3)
    .or(match spec {
        // The boards of a panel side by side.
        FigureSpec::Relative(figure) => Some(match figure.panel {
            crate::scene::relative::RelativePanel::TwoD => 3,
            crate::scene::relative::RelativePanel::Shaw
            | crate::scene::relative::RelativePanel::T5 => 2,
            _ => 1,
        }),
        // A step's panels side by side.
        FigureSpec::Tour(_) => Some(2),
        FigureSpec::Learned(_) => Some(3),
        _ => None,
    });
    let mut figure = Figure {
        width: f64::from(style.width),
        height: f64::from(style.height),
        title: style.title.clone().unwrap_or(title),
        panels,
        colorbar,
        columns,
    };
    if matches!(
        spec,
        FigureSpec::Patches { .. } | FigureSpec::ContextVision(_)
    ) {
        super::draw::trim_to_square_panels(&mut figure);
    }
    Ok(figure)
}

/// The corkscrew's helices projected by its camera: vectors in a vector figure.
fn corkscrew_figure(
    figure: &CorkscrewFigure,
    style: &FigureStyle,
) -> Result<(String, Vec<Panel>, Option<ColorBar>), FigureError> {
    let query = figure.query.values(figure.dim, figure.layout);
    let key = figure.key.values(figure.dim, figure.layout);
    let scene = corkscrew::build(&CorkscrewParams {
        dim: figure.dim,
        base: figure.base,
        layout: figure.layout,
        pairs: &figure.pairs,
        first_position: figure.first_position,
        position_count: figure.position_count,
        query: &query,
        // A key other than the query has helices of its own, as in the app.
        key: Some(&key),
    })?;
    let layout = SceneLayout::of(&scene);
    let plot = super::draw::single_projected_plot_size(style.width, style.height);
    let aspect = (plot[0] / plot[1].max(1.0)) as f32;
    let camera = figure
        .camera
        .unwrap_or_else(|| OrbitCamera::framing(layout.half_extent(), aspect));
    let size = [plot[0] as f32, plot[1] as f32];
    let project = |point: glam::Vec3| {
        camera
            .project(point, size)
            .map(|[x, y]| [f64::from(x) / plot[0], f64::from(y) / plot[1]])
    };
    let scores = pair_scores(
        &query,
        &key,
        figure.layout,
        figure.base,
        figure.query_position,
        figure.key_position,
    )?;
    let count = scene.helices.len();
    let mut lines = Vec::new();
    let mut dots = Vec::new();
    let mut labels = Vec::new();
    for (index, helix) in scene.helices.iter().enumerate() {
        let color = helix_color(index, count);
        let vertices = &scene.vertices[helix.vertices.clone()];
        let step = vertices.len().div_ceil(MAX_LINE_POINTS).max(1);
        let axis: Vec<[f64; 2]> = [0.0, (scene.position_count.max(2) - 1) as f32]
            .iter()
            .filter_map(|&x| project(layout.world(index, [x, 0.0, 0.0])))
            .collect();
        lines.push(ProjectedLine {
            points: axis,
            color: [170, 170, 170],
            width: 0.8,
        });
        lines.push(ProjectedLine {
            points: vertices
                .iter()
                .step_by(step)
                .filter_map(|v| project(layout.world(index, v.position)))
                .collect(),
            color,
            width: 1.2,
        });
        if let Some(key_helix) = scene.key_helices.get(index) {
            // Fainter, as the app draws it: the key's rings lie on this one.
            let faint = color.map(|c| (f32::from(c) * 0.55) as u8);
            lines.push(ProjectedLine {
                points: scene.vertices[key_helix.vertices.clone()]
                    .iter()
                    .step_by(step)
                    .filter_map(|v| project(layout.world(index, v.position)))
                    .collect(),
                color: faint,
                width: 1.0,
            });
        }
        let inside = |p: u64| {
            p >= scene.first_position && p - scene.first_position < scene.position_count as u64
        };
        let score = &scores[helix.pair];
        for (position, (a, b), ring) in [
            (figure.key_position, score.key, true),
            (figure.query_position, score.query, false),
        ] {
            if inside(position) {
                let x = (position - scene.first_position) as f32;
                if let Some(at) = project(layout.world(index, [x, a as f32, b as f32])) {
                    dots.push(ProjectedDot { at, color, ring });
                }
            }
        }
        if let Some(at) = project(layout.world(index, [0.0, 0.0, 0.0]) - glam::Vec3::X * 0.4) {
            labels.push(ProjectedLabel {
                at,
                text: format!("pair {}", helix.pair),
                color,
            });
        }
    }
    let total: f64 = scores.iter().map(|s| s.score).sum();
    let panel = Panel {
        equal_aspect: false,
        colorbar: None,
        title: format!(
            "q_m · k_n = {total:.9} at m = {}, n = {}",
            figure.query_position, figure.key_position
        ),
        x: Axis::new("", 0.0, 1.0).hidden(),
        y: Axis::new("", 0.0, 1.0).hidden(),
        content: Content::Projected {
            lines,
            dots,
            labels,
        },
    };
    let layout_name = match figure.layout {
        RopeLayout::Interleaved => "interleaved pairs (2i, 2i+1)",
        RopeLayout::Half => "half pairs (i, i + d/2)",
    };
    Ok((
        format!(
            "RoPE corkscrew, d = {}, base {}, {layout_name}, positions {}..{}",
            figure.dim,
            figure.base,
            scene.first_position,
            scene.first_position + scene.position_count as u64 - 1
        ),
        vec![panel],
        None,
    ))
}

/// The reference, the file and their difference, with the verdict in the title.
fn check_figure(
    figure: &CheckFigure,
    style: &FigureStyle,
) -> Result<(String, Vec<Panel>, Option<ColorBar>), FigureError> {
    use crate::check::identify::identify;
    use crate::check::{compare, squeezed};
    let max_bytes = crate::engine::available_memory_bytes().unwrap_or(u64::MAX);
    let (loaded, stored) =
        crate::import::tables::read_table_typed(&figure.file, figure.tensor.as_deref(), max_bytes)
            .map_err(|e| FigureError::Input(e.to_string()))?;
    let loaded = squeezed(&loaded);
    let (description, reference, comparison) = if figure.expected.is_empty() {
        let identification = identify(&loaded, figure.tolerance, stored);
        let best = identification
            .best()
            .ok_or_else(|| FigureError::Input(identification.report()))?;
        (
            best.description.clone(),
            best.reference.clone(),
            best.comparison.clone(),
        )
    } else {
        let spec = crate::table_args::table_spec_from_words(&figure.expected)
            .map_err(FigureError::Input)?;
        let reference = squeezed(&cpu::compute(&spec)?.into_real());
        let comparison = compare(&reference, &loaded, figure.tolerance);
        (figure.expected.join(" "), reference, comparison)
    };
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
    Ok((
        format!("{name}: {verdict} with {description}"),
        panels,
        None,
    ))
}

/// The colour of the `k`-th of `n` helices (as the app draws them).
pub fn helix_color(k: usize, n: usize) -> [u8; 3] {
    let t = if n > 1 {
        k as f64 / (n - 1) as f64
    } else {
        0.0
    };
    let c = colorous::TURBO.eval_continuous(0.12 + 0.76 * t);
    [c.r, c.g, c.b]
}
