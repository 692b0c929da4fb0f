//! The context-extension figure: each method's wavelengths against `L` and `L'`, the map of
//! unseen angles under one method, and one of the lower charts (the fitted attention score,
//! the long-term decay, ALiBi at `L'`, or the survey's ViT accuracies), as the view draws them.

use std::path::PathBuf;

use crate::encoding::alibi;
use crate::encoding::rope_scaling::{RopeFrequencies, ScalingKind};
use crate::engine::TableSpec;
use crate::scene::context::{
    self, FittedScore, METHOD_COLORS, METHODS, MethodOverrides, RopeModel,
    SURVEY_TRAINING_RESOLUTION, UnseenParams, method_color, method_label,
};
use crate::table_args::CliError;

use super::FigureArgs;
use super::options::{Words, count, value_name};
use super::panels::{MAX_CELLS, colorbar, heatmap_panel, span};
use super::{
    Axis, Content, Drawn, FigureError, FigureKind, FigureStyle, Panel, Series, SeriesStyle,
};

/// The context figure's own options.
#[derive(Debug, Clone, clap::Args)]
pub struct ContextOptions {
    /// context: a RoPE model, by the name of a file of assets/models (llama-2-7b,
    /// llama-3.1-8b, ...) or the path of a config.json
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,

    /// context: the target length L' (2 to 1048576; default 16384)
    #[arg(long, value_name = "L'")]
    pub target: Option<i64>,

    /// context: the methods drawn, a list of none, linear, ntk, dynamic, yarn, llama3,
    /// longrope (default none,linear,ntk,yarn)
    #[arg(long, value_name = "LIST")]
    pub methods: Option<String>,

    /// context: the method whose unseen angles the map shows (default none)
    #[arg(long, value_name = "METHOD")]
    pub map: Option<String>,

    /// context: method parameters over the method's own, as METHOD.NAME=VALUE items, e.g.
    /// yarn.factor=8,llama3.low_freq_factor=2
    #[arg(long, value_name = "LIST")]
    pub set: Option<String>,

    /// context: the lower chart
    #[arg(long, value_enum, value_name = "CHART")]
    pub chart: Option<crate::scene::context::ContextChart>,
}

pub use super::context_vision::{VIT_HEAD_DIM, VisionFigure};
pub use crate::scene::context::{AlibiSettings, ContextChart};

/// Where the model comes from, as the command line names it.
#[derive(Debug, Clone, PartialEq)]
pub enum ContextModelSource {
    /// A file of assets/models, by stem (`llama-2-7b`).
    Shipped(String),
    /// A config.json the user opened.
    File(PathBuf),
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

/// The fitted score's size is drawn on a log axis down to this, no further: the chart is about
/// how far a score grows, not about its zeros.
pub const SCORE_FLOOR: f64 = 1e-2;

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

impl FigureKind for ContextFigure {
    const OPTIONS: &'static [&'static str] = &[
        "model", "target", "methods", "map", "set", "chart", "heads", "head",
    ];

    fn from_options(args: &FigureArgs) -> Result<Self, CliError> {
        let name = args
            .context
            .model
            .clone()
            .unwrap_or_else(|| "llama-2-7b".to_owned());
        let shipped = context::shipped_models()
            .iter()
            .find(|(stem, _)| *stem == name);
        let (source, model) = match shipped {
            Some((stem, model)) => (ContextModelSource::Shipped(stem.clone()), model.clone()),
            None if name.ends_with(".json") || name.contains('/') => {
                let path = PathBuf::from(&name);
                // A model with a RoPE per layer type is refused naming them, not read as one.
                let config = crate::table_args::config::read_config(&path)?
                    .one_rope()
                    .map_err(|e| CliError::usage(format!("--model {name}: {e}")))?;
                let model = RopeModel::of(&config).ok_or_else(|| {
                    CliError::usage(format!(
                        "--model {name}: {} does not use RoPE (or gives no trained length)",
                        config.name
                    ))
                })?;
                model
                    .validate()
                    .map_err(|e| CliError::usage(format!("--model {name}: {e}")))?;
                (ContextModelSource::File(path), model)
            }
            None => {
                let names: Vec<&str> = context::shipped_models()
                    .iter()
                    .map(|(s, _)| s.as_str())
                    .collect();
                return Err(CliError::usage(format!(
                    "--model {name} is not a shipped RoPE model ({}) nor a config.json path",
                    names.join(", ")
                )));
            }
        };
        let target = count("target", args.context.target, 16_384, 2..=1 << 20)?;
        let method = |word: &str, option: &str| {
            METHODS
                .iter()
                .copied()
                .find(|k| k.name() == word.trim())
                .ok_or_else(|| {
                    let names: Vec<&str> = METHODS.iter().map(|k| k.name()).collect();
                    CliError::usage(format!(
                        "--{option} {word}: the methods are {}",
                        names.join(", ")
                    ))
                })
        };
        let shown: Vec<ScalingKind> = match &args.context.methods {
            Some(list) => {
                let mut kinds = list
                    .split(',')
                    .filter(|w| !w.trim().is_empty())
                    .map(|w| method(w, "methods"))
                    .collect::<Result<Vec<_>, _>>()?;
                kinds.sort_by_key(|kind| METHODS.iter().position(|k| k == kind));
                kinds.dedup();
                kinds
            }
            None => vec![
                ScalingKind::None,
                ScalingKind::Linear,
                ScalingKind::Ntk,
                ScalingKind::Yarn,
            ],
        };
        let map = match &args.context.map {
            Some(word) => method(word, "map")?,
            None => ScalingKind::None,
        };
        let overrides = match &args.context.set {
            Some(text) => {
                context::parse_overrides(text).map_err(|e| CliError::usage(format!("--set {e}")))?
            }
            None => Vec::new(),
        };
        let chart = args.context.chart.unwrap_or_default();
        let defaults = AlibiSettings::default();
        let heads = count("heads", args.sizes.heads, defaults.heads, 1..=128)?;
        let alibi = AlibiSettings {
            heads,
            head: count("head", args.sizes.head, heads - 1, 0..=heads - 1)?,
            all_heads: chart == ContextChart::Alibi && args.sizes.head.is_none(),
        };
        if chart != ContextChart::Alibi && (args.sizes.heads.is_some() || args.sizes.head.is_some())
        {
            return Err(CliError::usage(
                "--heads and --head apply to the context figure with --chart alibi",
            ));
        }
        let figure = ContextFigure {
            source,
            model,
            target,
            shown,
            overrides,
            map,
            chart,
            alibi,
        };
        figure
            .frequencies(map)
            .map_err(|e| CliError::usage(format!("--map {}: {e}", map.name())))?;
        for &kind in &figure.shown {
            figure
                .frequencies(kind)
                .map_err(|e| CliError::usage(format!("--methods {}: {e}", kind.name())))?;
        }
        for (kind, overrides) in &figure.overrides {
            let words = overrides.words(*kind).join(",");
            // Parameters of a method neither drawn nor mapped would change nothing.
            if !figure.shown.contains(kind) && figure.map != *kind {
                return Err(CliError::usage(format!(
                    "--set {words}: {} is neither in --methods nor the --map, so its parameters change nothing",
                    kind.name()
                )));
            }
            figure
                .frequencies(*kind)
                .map_err(|e| CliError::usage(format!("--set {words}: {e}")))?;
        }
        Ok(figure)
    }

    fn write_options(&self, words: &mut Words) {
        words.option(
            "model",
            match &self.source {
                ContextModelSource::Shipped(stem) => stem.clone(),
                ContextModelSource::File(path) => path.display().to_string(),
            },
        );
        words.option("target", self.target);
        let shown: Vec<&str> = self.shown.iter().map(|k| k.name()).collect();
        words.option("methods", shown.join(","));
        words.option("map", self.map.name());
        // Only the parameters of methods drawn or mapped: the others change nothing, and the
        // command line refuses them.
        let set: Vec<String> = self
            .overrides
            .iter()
            .filter(|(kind, _)| self.shown.contains(kind) || self.map == *kind)
            .flat_map(|(kind, overrides)| overrides.words(*kind))
            .collect();
        if !set.is_empty() {
            words.option("set", set.join(","));
        }
        words.option("chart", value_name(self.chart));
        if self.chart == ContextChart::Alibi {
            words.option("heads", self.alibi.heads);
            if !self.alibi.all_heads {
                words.option("head", self.alibi.head);
            }
        }
    }

    fn draw(&self, style: &FigureStyle) -> Result<Drawn, FigureError> {
        draw_context(self, style)
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
fn draw_context(figure: &ContextFigure, style: &FigureStyle) -> Result<Drawn, FigureError> {
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
    // The map last, so that its colour bar, at the figure's right edge, stands beside it.
    Ok(Drawn::new(title, vec![wavelengths, lower, map])
        .with_colorbar(colorbar(style, (0.0, 1.0), "unseen share"))
        .in_columns(3))
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
            // |a(s)| on a log axis, as the view draws it: about 1 where fitted, as many decades
            // as an extrapolated score climbs past L (its sign flips from point to point).
            let size = |v: f64| v.abs().max(SCORE_FLOOR).log10();
            let mut series: Vec<Series> = methods
                .iter()
                .map(|(kind, theta, attention)| {
                    let points = context::score_curve(&fit, theta, *attention, target);
                    let past = context::largest_past(&points, last_trained).unwrap_or(0.0);
                    let points = points.iter().map(|&[s, v]| [s, size(v)]).collect();
                    let name = format!("{}, |a| ≤ {past:.3e} past L", method_label(*kind));
                    line(name, points, method_color(*kind))
                })
                .collect();
            series.push(Series {
                name: "fitted points".to_owned(),
                points: fit.points.iter().map(|&(s, v)| [s, size(v)]).collect(),
                color: [60, 60, 60],
                style: SeriesStyle::Dots { radius: 1.2 },
            });
            let (low, high) = span(series.iter().flat_map(|s| s.points.iter().map(|p| p[1])));
            let range = (low.floor(), high.ceil().max(1.0));
            series.push(mark(format!("L = {trained}"), last_trained, range));
            plot_panel(
                "Fitted attention score, its size |a(s)|".to_owned(),
                distance_axis("distance s"),
                Axis::new("|score a(s)|", range.0, range.1).log10(),
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
