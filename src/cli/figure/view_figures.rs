//! The options of the figures with settings of their own (the context lab's two halves, the
//! relative positions' panels, a learned table, the tour's steps) read into their figures.

use super::*;

/// The context-extension figure from the options, starting from the view's defaults.
pub(super) fn context_figure(
    args: &FigureArgs,
) -> Result<crate::export::figure::context::ContextFigure, CliError> {
    use crate::encoding::rope_scaling::ScalingKind;
    use crate::export::figure::context::{
        AlibiSettings, ContextChart, ContextFigure, ContextModelSource,
    };
    use crate::scene::context::{self, METHODS, RopeModel};
    let name = args
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
            let config = crate::table_args::config::read_config(&path)?;
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
    let target = count("target", args.target, 16_384, 2..=1 << 20)?;
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
    let shown: Vec<ScalingKind> = match &args.methods {
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
    let map = match &args.map {
        Some(word) => method(word, "map")?,
        None => ScalingKind::None,
    };
    let overrides = match &args.set {
        Some(text) => {
            context::parse_overrides(text).map_err(|e| CliError::usage(format!("--set {e}")))?
        }
        None => Vec::new(),
    };
    let chart = args.chart.unwrap_or_default();
    let defaults = AlibiSettings::default();
    let heads = count("heads", args.heads, defaults.heads, 1..=128)?;
    let alibi = AlibiSettings {
        heads,
        head: count("head", args.head, heads - 1, 0..=heads - 1)?,
        all_heads: chart == ContextChart::Alibi && args.head.is_none(),
    };
    if chart != ContextChart::Alibi && (args.heads.is_some() || args.head.is_some()) {
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
        figure.frequencies(*kind).map_err(|e| {
            CliError::usage(format!("--set {}: {e}", overrides.words(*kind).join(",")))
        })?;
    }
    Ok(figure)
}

/// The Relative positions figure from the options, starting from the view's defaults.
pub(super) fn relative_figure(
    args: &FigureArgs,
) -> Result<crate::export::figure::relative::RelativeFigure, CliError> {
    use crate::scene::relative::{
        DIM_RANGE, GRID_RANGE, HEADS_RANGE, MAX_DISTANCE_RANGE, NUM_BUCKETS_RANGE, RelativePanel,
        RelativeSettings, SKEW_TOKENS_RANGE, T5_TOKENS_RANGE, TOKENS_RANGE,
    };
    let panel = args.panel.unwrap_or_default();
    let given: Vec<(&str, bool)> = vec![
        ("tokens", args.tokens.is_some()),
        ("max_relative", args.max_relative.is_some()),
        ("num_buckets", args.num_buckets.is_some()),
        ("max_distance", args.max_distance.is_some()),
        ("bidirectional", args.bidirectional.is_some()),
        ("heads", args.heads.is_some()),
        ("head", args.head.is_some()),
        ("mode", args.mode.is_some()),
        ("stage", args.stage.is_some()),
        ("dim", args.dim.is_some()),
        ("grid_h", args.grid_h.is_some()),
        ("grid_w", args.grid_w.is_some()),
        ("query", args.query.is_some()),
        ("seed", args.seed.is_some()),
    ];
    let accepted: &[&str] = match panel {
        RelativePanel::Offsets => &["tokens"],
        RelativePanel::Shaw => &["tokens", "max_relative"],
        RelativePanel::T5 => &["tokens", "num_buckets", "max_distance", "bidirectional"],
        RelativePanel::Alibi => &["tokens", "heads", "head", "mode"],
        RelativePanel::Skew => &["tokens", "stage", "dim"],
        RelativePanel::TwoD => &["grid_h", "grid_w", "query", "dim", "seed"],
    };
    if let Some((id, _)) = given
        .iter()
        .find(|(id, set)| *set && !accepted.contains(id))
    {
        let list: Vec<String> = accepted.iter().map(|id| flag(id)).collect();
        return Err(CliError::usage(format!(
            "{} does not apply to --panel {}; its options are {}",
            flag(id),
            crate::export::figure::value_name(panel),
            list.join(" ")
        )));
    }
    let d = RelativeSettings::default();
    let mut s = d;
    match panel {
        RelativePanel::Offsets | RelativePanel::Shaw | RelativePanel::Alibi => {
            s.tokens = count("tokens", args.tokens, d.tokens, TOKENS_RANGE)?;
        }
        RelativePanel::T5 => {
            s.t5_tokens = count("tokens", args.tokens, d.t5_tokens, T5_TOKENS_RANGE)?
        }
        RelativePanel::Skew => {
            s.skew_tokens = count("tokens", args.tokens, d.skew_tokens, SKEW_TOKENS_RANGE)?
        }
        RelativePanel::TwoD => {}
    }
    s.max_relative = count(
        "max_relative",
        args.max_relative,
        d.max_relative,
        0..=TOKENS_RANGE.end() - 1,
    )?;
    s.num_buckets = count(
        "num_buckets",
        args.num_buckets,
        d.num_buckets,
        NUM_BUCKETS_RANGE,
    )?;
    s.max_distance = count(
        "max_distance",
        args.max_distance,
        d.max_distance,
        MAX_DISTANCE_RANGE,
    )?;
    s.bidirectional = args.bidirectional.unwrap_or(d.bidirectional);
    s.heads = count("heads", args.heads, d.heads, HEADS_RANGE)?;
    s.head = count("head", args.head, d.head, 0..=s.heads - 1)?;
    s.causal = args.mode.unwrap_or(AlibiMode::Causal) == AlibiMode::Causal;
    s.stage = count("stage", args.stage, 1, 1..=6)? - 1;
    s.dim = count("dim", args.dim, d.dim, DIM_RANGE)?;
    s.grid.grid_h = count("grid_h", args.grid_h, d.grid.grid_h, GRID_RANGE)?;
    s.grid.grid_w = count("grid_w", args.grid_w, d.grid.grid_w, GRID_RANGE)?;
    let centre = (s.grid.grid_h / 2) * s.grid.grid_w + s.grid.grid_w / 2;
    s.query = count("query", args.query, centre, 0..=s.grid.patches() - 1)?;
    s.seed = args.seed.unwrap_or(d.seed);
    s.validate(panel)
        .map_err(|e| CliError::usage(e.to_string()))?;
    Ok(crate::export::figure::relative::RelativeFigure { panel, settings: s })
}

/// The learned table's figure: the file must hold a table; the columns must be its own.
pub(super) fn learned_figure(
    args: &FigureArgs,
) -> Result<crate::export::figure::learned::LearnedFigure, CliError> {
    use crate::scene::learned::{self, LearnedSource};
    let path = args.file.clone().ok_or_else(|| {
        CliError::usage("the learned figure needs --file: a .npy or .safetensors position table")
    })?;
    let source = LearnedSource {
        path,
        tensor: args.tensor.clone(),
    };
    let (table, tensor) =
        learned::read(&source).map_err(|e| CliError::usage(format!("--file {e}")))?;
    let dim = table.ncols();
    let columns = match &args.columns {
        Some(text) => learned::parse_columns(text, dim)
            .map_err(|e| CliError::usage(format!("--columns {text}: {e}")))?,
        None => learned::default_columns(dim),
    };
    Ok(crate::export::figure::learned::LearnedFigure {
        source: LearnedSource {
            path: source.path,
            tensor: tensor.or(source.tensor),
        },
        columns,
    })
}

/// The tour's figure from the options, starting from the view's defaults; options the step
/// does not read are refused.
pub(super) fn tour_figure(
    args: &FigureArgs,
) -> Result<crate::export::figure::tour::TourFigure, CliError> {
    use crate::scene::tour::{
        BASE_RANGE, DELTA_RANGE, DIM_RANGE, LENGTH_RANGE, TourSettings, TourStep,
    };
    let number = count("step", args.step, 1, 1..=TourStep::ALL.len())?;
    let step = TourStep::from_number(number)
        .ok_or_else(|| CliError::usage(format!("--step {number}: use 1 to 9")))?;
    let uses = step.uses();
    let given = [
        ("dim", args.dim.is_some(), uses.dim),
        ("base", args.base.is_some(), uses.base),
        ("delta", args.delta.is_some(), uses.delta),
        ("anchor", args.anchor.is_some(), uses.anchor),
        ("pair", args.pair.is_some(), uses.pair),
    ];
    if let Some((id, _, _)) = given.iter().find(|(_, given, used)| *given && !*used) {
        return Err(CliError::usage(format!(
            "{} does not apply to --step {number} ({}): it does not depend on it",
            flag(id),
            step.title()
        )));
    }
    let d = TourSettings::default();
    let length = count("seq", args.seq, d.length, LENGTH_RANGE)?;
    let dim = count("dim", args.dim, d.dim, DIM_RANGE)?;
    if dim % 2 != 0 {
        return Err(CliError::usage(format!(
            "--dim {dim} is not allowed: the sinusoidal table is made of sine-cosine pairs, use an even number"
        )));
    }
    let base = args.base.unwrap_or(d.base);
    if !(base.is_finite() && BASE_RANGE.contains(&base)) {
        return Err(CliError::usage(format!(
            "--base {base} is not allowed: use {} to {}",
            BASE_RANGE.start(),
            BASE_RANGE.end()
        )));
    }
    let delta = count(
        "delta",
        args.delta,
        d.delta as usize,
        *DELTA_RANGE.start() as usize..=*DELTA_RANGE.end() as usize,
    )? as u64;
    let anchor = count(
        "anchor",
        args.anchor,
        d.anchor.min(length - 1),
        0..=length - 1,
    )?;
    let pair = count("pair", args.pair, d.pair.min(dim / 2 - 1), 0..=dim / 2 - 1)?;
    Ok(crate::export::figure::tour::TourFigure {
        step,
        settings: TourSettings {
            dim,
            base,
            length,
            delta,
            anchor,
            pair,
        },
    })
}

pub(super) fn parse_probe(text: &str) -> Result<ProbeVector, String> {
    match text {
        "unit-pairs" => Ok(ProbeVector::UnitPairs),
        "ones" => Ok(ProbeVector::Ones),
        _ => text
            .strip_prefix("random:")
            .and_then(|seed| seed.parse().ok())
            .map(ProbeVector::Random)
            .ok_or_else(|| "use unit-pairs, ones or random:SEED (SEED a whole number)".to_owned()),
    }
}
