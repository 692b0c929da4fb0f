//! The context-extension figure: each method's wavelengths against `L` and `L'`, the map of
//! unseen angles under one method, and one of the lower charts (the fitted attention score,
//! the long-term decay, ALiBi at `L'`, or the survey's ViT accuracies), as the view draws them.

use std::path::PathBuf;

use crate::encoding::alibi;
use crate::encoding::rope_scaling::{RopeFrequencies, ScalingKind};
use crate::engine::TableSpec;
use crate::scene::context::{
    self, FittedScore, METHODS, MethodOverrides, RopeModel, SURVEY_TRAINING_RESOLUTION,
    UnseenParams, method_label,
};

use super::panels::{MAX_CELLS, colorbar, finite_range, heatmap_panel};
use super::{Axis, ColorBar, Content, FigureError, FigureStyle, Panel, Series, SeriesStyle};

/// Where the model comes from, as the command line names it.
#[derive(Debug, Clone, PartialEq)]
pub enum ContextModelSource {
    /// A file of assets/models, by stem (`llama-2-7b`).
    Shipped(String),
    /// A config.json the user opened.
    File(PathBuf),
}

/// The lower chart of the view.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
pub enum ContextChart {
    /// The PI paper's fitted attention score against distance, per method.
    #[default]
    Score,
    /// RoFormer's long-term decay bound per method.
    Decay,
    /// ALiBi at L': the last query's attention with and without slope scaling.
    Alibi,
    /// The survey's ViT accuracies against test resolution.
    Survey,
}

/// The ALiBi chart's model: its heads, and one head or all.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct AlibiSettings {
    pub heads: usize,
    pub head: usize,
    pub all_heads: bool,
}

impl Default for AlibiSettings {
    fn default() -> Self {
        Self {
            heads: crate::encoding::defaults::HEADS,
            head: crate::encoding::defaults::HEADS - 1,
            all_heads: false,
        }
    }
}

/// Everything the context-extension figure depends on.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextFigure {
    pub source: ContextModelSource,
    pub model: RopeModel,
    pub target: usize,
    /// The methods drawn, in the order of [`METHODS`].
    pub shown: Vec<ScalingKind>,
    /// Parameters set by the user, per method (any method, shown or not).
    pub overrides: Vec<(ScalingKind, MethodOverrides)>,
    /// The method of the unseen-angle map.
    pub map: ScalingKind,
    pub chart: ContextChart,
    pub alibi: AlibiSettings,
}

/// The seed of the fitted score's random points.
pub const FIT_SEED: u64 = 2023;

/// The fitted score's plot holds this range: past it the score has left what it was fitted to.
pub const SCORE_RANGE: f64 = 5.0;

/// A colour per method (the order of [`METHODS`]).
const METHOD_COLORS: [[u8; 3]; 7] = [
    [31, 119, 180],
    [255, 127, 14],
    [44, 160, 44],
    [214, 39, 40],
    [148, 103, 189],
    [140, 86, 75],
    [227, 119, 194],
];

fn method_color(kind: ScalingKind) -> [u8; 3] {
    let k = METHODS.iter().position(|&m| m == kind).unwrap_or(0);
    METHOD_COLORS[k % METHOD_COLORS.len()]
}

impl ContextFigure {
    /// The overrides of `kind` (none when the user set none).
    pub fn overrides_of(&self, kind: ScalingKind) -> MethodOverrides {
        self.overrides
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, o)| o.clone())
            .unwrap_or_default()
    }

    /// The frequency setting of `kind`, or why it has none for this model.
    pub fn frequencies(&self, kind: ScalingKind) -> Result<RopeFrequencies, String> {
        self.model
            .resolved_scaling(kind, self.target, &self.overrides_of(kind))
            .map(|scaling| self.model.frequencies(scaling))
    }

    /// The table behind the map.
    pub fn unseen_spec(&self) -> Result<TableSpec, String> {
        Ok(TableSpec::RopeUnseen(Box::new(UnseenParams {
            freqs: self.frequencies(self.map)?,
            model: self.model.clone(),
            seq: self.target,
        })))
    }
}

/// A method's curves: `(kind, inverse frequencies at L', attention factor)`.
fn method_frequencies(figure: &ContextFigure) -> Vec<(ScalingKind, Vec<f64>, f64)> {
    let model = &figure.model;
    figure
        .shown
        .iter()
        .filter_map(|&kind| {
            let freqs = figure.frequencies(kind).ok()?;
            let theta = freqs.inv_freq(model.head_dim, model.base, figure.target);
            Some((kind, theta, freqs.attention_factor()))
        })
        .collect()
}

fn line(name: String, points: Vec<[f64; 2]>, color: [u8; 3]) -> Series {
    Series {
        name,
        points,
        color,
        style: SeriesStyle::Line { width: 1.5 },
    }
}

/// A dashed horizontal line at `y`.
fn level(name: String, y: f64, color: [u8; 3]) -> Series {
    Series {
        name,
        points: vec![[0.0, y]],
        color,
        style: SeriesStyle::HorizontalLine,
    }
}

/// A vertical line at `x` across `(low, high)`.
fn mark(name: String, x: f64, (low, high): (f64, f64)) -> Series {
    Series {
        name,
        points: vec![[x, low], [x, high]],
        color: [120, 120, 120],
        style: SeriesStyle::Line { width: 1.0 },
    }
}

/// The finite values' range, padded by 5% (a range of 0 to 1 when none is finite).
pub(super) fn span(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (low, high) = finite_range(&values.collect::<Vec<f64>>());
    if low.is_finite() {
        let pad = (high - low).abs().max(1e-9) * 0.05;
        (low - pad, high + pad)
    } else {
        (0.0, 1.0)
    }
}

fn plot_panel(title: String, x: Axis, y: Axis, series: Vec<Series>) -> Panel {
    Panel {
        title,
        equal_aspect: false,
        colorbar: None,
        x,
        y,
        content: Content::Plot(series),
    }
}

/// The figure's title, panels and colour bar.
pub(super) fn build(
    figure: &ContextFigure,
    style: &FigureStyle,
) -> Result<(String, Vec<Panel>, Option<ColorBar>), FigureError> {
    figure.model.validate()?;
    let model = &figure.model;
    let (trained, target) = (model.trained, figure.target);
    let methods = method_frequencies(figure);
    let tau = std::f64::consts::TAU;
    // Wavelengths on a log axis, L and L' as levels.
    let mut series: Vec<Series> = methods
        .iter()
        .map(|(kind, theta, _)| {
            let points = theta
                .iter()
                .enumerate()
                .map(|(i, t)| [i as f64, (tau / t).log10()])
                .collect();
            line(method_label(*kind).to_owned(), points, method_color(*kind))
        })
        .collect();
    let levels = [(trained as f64).log10(), (target as f64).log10()];
    let (low, high) = span(
        series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p[1]))
            .chain(levels),
    );
    series.push(level(format!("L = {trained}"), levels[0], [90, 90, 90]));
    series.push(level(format!("L' = {target}"), levels[1], [0, 0, 0]));
    let pairs = model.rotary() / 2;
    let wavelengths = plot_panel(
        "Wavelength of each pair".to_owned(),
        Axis::new("pair i", -0.5, pairs as f64 - 0.5),
        Axis::new("wavelength 2π/θ_i (positions)", low, high).log10(),
        series,
    );
    let spec = figure.unseen_spec().map_err(FigureError::Input)?;
    let (map, _) = heatmap_panel(
        &spec,
        0,
        format!("Unseen angles, {}", method_label(figure.map)),
        ("pair i", "distance p"),
        MAX_CELLS,
        style.reduce,
    )?;
    let lower = lower_panel(figure, &methods)?;
    let title = format!(
        "{}: trained on L = {trained}, run at L' = {target} (head dim {}, rotary {}, base {})",
        short_name(&model.name),
        model.head_dim,
        model.rotary(),
        model.base
    );
    Ok((
        title,
        vec![wavelengths, map, lower],
        colorbar(style, (0.0, 1.0), "unseen share"),
    ))
}

fn short_name(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

fn lower_panel(
    figure: &ContextFigure,
    methods: &[(ScalingKind, Vec<f64>, f64)],
) -> Result<Panel, FigureError> {
    let model = &figure.model;
    let (trained, target) = (model.trained, figure.target);
    let last_trained = (trained - 1) as f64;
    let distance_axis = |label: &str| Axis::new(label, 0.0, target.saturating_sub(1).max(1) as f64);
    Ok(match figure.chart {
        ContextChart::Score => {
            let fit = FittedScore::fit(model, FIT_SEED).map_err(FigureError::Input)?;
            let range = (-SCORE_RANGE, SCORE_RANGE);
            let mut series: Vec<Series> = methods
                .iter()
                .map(|(kind, theta, attention)| {
                    let mut points = context::score_curve(&fit, theta, *attention, target);
                    let past = context::largest_past(&points, last_trained).unwrap_or(0.0);
                    for p in &mut points {
                        p[1] = p[1].clamp(range.0, range.1);
                    }
                    let name = format!("{}, |a| ≤ {past:.3e} past L", method_label(*kind));
                    line(name, points, method_color(*kind))
                })
                .collect();
            series.push(Series {
                name: "fitted points".to_owned(),
                points: fit.points.iter().map(|&(s, v)| [s, v]).collect(),
                color: [60, 60, 60],
                style: SeriesStyle::Dots { radius: 1.2 },
            });
            series.push(mark(format!("L = {trained}"), last_trained, range));
            plot_panel(
                format!("Fitted attention score (held to ±{SCORE_RANGE})"),
                distance_axis("distance s"),
                Axis::new("score a(s)", range.0, range.1),
                series,
            )
        }
        ContextChart::Decay => {
            let mut series: Vec<Series> = methods
                .iter()
                .map(|(kind, theta, attention)| {
                    let points = context::decay_curve(theta, *attention, target);
                    line(method_label(*kind).to_owned(), points, method_color(*kind))
                })
                .collect();
            let range = span(series.iter().flat_map(|s| s.points.iter().map(|p| p[1])));
            series.push(mark(format!("L = {trained}"), last_trained, range));
            plot_panel(
                "RoFormer long-term decay".to_owned(),
                distance_axis("relative distance r"),
                Axis::new("bound on |q·k|", range.0, range.1),
                series,
            )
        }
        ContextChart::Alibi => alibi_panel(figure)?,
        ContextChart::Survey => {
            let all = context::survey_series().map_err(FigureError::Input)?;
            let mut series: Vec<Series> = all
                .iter()
                .enumerate()
                .map(|(k, s)| {
                    let points = s.points.iter().map(|&(r, a)| [f64::from(r), a]).collect();
                    line(
                        s.method.clone(),
                        points,
                        METHOD_COLORS[k % METHOD_COLORS.len()],
                    )
                })
                .collect();
            let range = span(series.iter().flat_map(|s| s.points.iter().map(|p| p[1])));
            let trained_at = f64::from(SURVEY_TRAINING_RESOLUTION);
            series.push(mark("trained at 224 px".to_owned(), trained_at, range));
            plot_panel(
                "ViTs on ImageNet-100 (the survey's table)".to_owned(),
                Axis::new("test resolution (px)", 80.0, 528.0),
                Axis::new("top-1 accuracy (%)", range.0, range.1),
                series,
            )
        }
    })
}

fn alibi_panel(figure: &ContextFigure) -> Result<Panel, FigureError> {
    let (trained, target) = (figure.model.trained, figure.target);
    let settings = figure.alibi;
    let slopes = alibi::slopes(settings.heads)?;
    alibi::check_head(settings.head, settings.heads)?;
    let scale = alibi::slope_scale(trained, target).unwrap_or(1.0);
    let variants = [
        ("trained slopes", 1.0, [31, 119, 180]),
        ("slopes × L/L'", scale, [214, 39, 40]),
    ];
    if settings.all_heads {
        let series: Vec<Series> = variants
            .iter()
            .map(|&(name, factor, color)| {
                let points = slopes
                    .iter()
                    .enumerate()
                    .map(|(h, m)| {
                        let ln = alibi::ln_last_query_attention_beyond(m * factor, target, trained);
                        [h as f64, ln / std::f64::consts::LN_10]
                    })
                    .filter(|p| p[1].is_finite())
                    .collect();
                line(name.to_owned(), points, color)
            })
            .collect();
        let range = span(series.iter().flat_map(|s| s.points.iter().map(|p| p[1])));
        return Ok(plot_panel(
            format!("ALiBi, {} heads: attention at L or farther", settings.heads),
            Axis::new("head", -0.5, settings.heads as f64 - 0.5),
            Axis::new("attention on keys at L or farther", range.0, range.1).log10(),
            series,
        ));
    }
    let slope = slopes[settings.head];
    let distances = context::sample_distances(target, context::CURVE_POINTS);
    let mut series: Vec<Series> = variants
        .iter()
        .map(|&(name, factor, color)| {
            let m = slope * factor;
            let points = distances
                .iter()
                .map(|&k| {
                    [
                        k,
                        alibi::last_query_attention(m, target, k as usize).log10(),
                    ]
                })
                .filter(|p| p[1].is_finite())
                .collect();
            line(format!("{name}, m = {m:.3e}"), points, color)
        })
        .collect();
    let range = span(series.iter().flat_map(|s| s.points.iter().map(|p| p[1])));
    series.push(mark(format!("L = {trained}"), trained as f64, range));
    Ok(plot_panel(
        format!("ALiBi head {}: the last query's attention", settings.head),
        Axis::new(
            "key distance k",
            0.0,
            target.saturating_sub(1).max(1) as f64,
        ),
        Axis::new("attention weight", range.0, range.1).log10(),
        series,
    ))
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
pub(super) fn build_vision(
    figure: &VisionFigure,
    style: &FigureStyle,
) -> Result<(String, Vec<Panel>, Option<ColorBar>), FigureError> {
    use crate::engine::{Strided, Window, cpu};
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
        let window = Window {
            heads: Strided::all(1),
            rows: Strided {
                start: p.query,
                end: p.query + 1,
                step: 1,
            },
            cols: Strided::all(side * side),
        };
        let values = cpu::compute_window(&spec, &window)?
            .into_real()
            .into_iter()
            .collect();
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
    Ok((title, panels, None))
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
    Ok(vec![
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
    ])
}

/// MAE's panels: its table resampled, made at the larger grid, and their difference.
fn mae_panels(style: &FigureStyle, p: &context::VisionParams) -> Result<Vec<Panel>, FigureError> {
    let maps = p.maps()?;
    let side = p.target_side;
    let query = p.target_grid().patch_xy(p.query);
    let flat = |a: &ndarray::Array2<f64>| a.iter().copied().collect::<Vec<f64>>();
    let difference = &maps.resampled - &maps.direct;
    Ok(vec![
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
    ])
}
