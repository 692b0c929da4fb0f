//! A RoPE model's settings as transformers 5 reads them from a `config.json` of either dialect:
//! the old one (`rope_theta` at the top, the scaling in `rope_scaling` with `type` or
//! `rope_type`, the models' own legacy keys) and the new one (`rope_parameters`, flat or one
//! object per layer type named by `layer_types`). One [`RopeLayer`] per layer type, each value
//! with the field it came from, and the [`Lint`]s: fields ignored, conflicting or missing.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

mod layer;

use super::{ConfigError, count, shown_value};
use crate::encoding::PairLayout;
use crate::encoding::rope_scaling::{RopeFrequencies, ScalingKind};
use layer::layer;

/// Where a value in force came from when no field gave it.
pub const DEFAULT: &str = "default";

/// One layer type's RoPE (the whole model's when it has one).
#[derive(Debug, Clone, PartialEq)]
pub struct RopeLayer {
    /// `full_attention`, `sliding_attention`, ...; `None` when the model has one RoPE.
    pub layer_type: Option<String>,
    /// How many of the model's layers are of this type, and of how many, where known.
    pub layers: Option<(usize, usize)>,
    /// Width of one attention head.
    pub head_dim: usize,
    pub base: f64,
    pub freqs: Box<RopeFrequencies>,
    pub layout: PairLayout,
    /// Each setting (by the option id that carries it: `dim`, `rotary_dim`, `base`, `layout`,
    /// `scaling`, the scaling's parameters, `attention_factor`, `context`) to the field it was
    /// read from, or [`DEFAULT`] with what the default is.
    pub sources: Vec<(&'static str, String)>,
    /// Qwen2-VL's multimodal RoPE: the pairs each position axis (time, height, width) turns.
    pub mrope: Option<Mrope>,
}

/// M-RoPE's split of one RoPE's pairs among the position axes.
#[derive(Debug, Clone, PartialEq)]
pub struct Mrope {
    pub section: Vec<usize>,
    /// Qwen3-VL's `mrope_interleaved`: the axes take turns pair by pair instead of taking
    /// contiguous sections.
    pub interleaved: bool,
    /// The field `section` was read from.
    pub source: String,
}

/// A warning about a config: a field ignored, conflicting or missing. The model still loads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lint {
    /// The field, as a path (`rope_parameters.full_attention.mscale`).
    pub field: String,
    pub message: String,
}

impl std::fmt::Display for Lint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// The keys a RoPE object (`rope_scaling`, `rope_parameters` or one of its layer types) may
/// hold in transformers 5.
const KNOWN_KEYS: &[&str] = &[
    "rope_type",
    "type",
    "rope_theta",
    "partial_rotary_factor",
    "factor",
    "original_max_position_embeddings",
    "attention_factor",
    "beta_fast",
    "beta_slow",
    "short_factor",
    "long_factor",
    "low_freq_factor",
    "high_freq_factor",
    "mscale",
    "mscale_all_dim",
    "truncate",
    "mrope_section",
    "mrope_interleaved",
];

/// One RoPE object's fields once transformers has merged and defaulted them, each with the
/// path of the field it came from.
#[derive(Debug, Clone, Default)]
struct Params {
    values: BTreeMap<String, (Value, String)>,
}

impl Params {
    fn from_object(object: &Map<String, Value>, path: &str) -> Self {
        let mut params = Self::default();
        params.update(object, path);
        params
    }

    /// Python's `dict.update`: every field of `object` replaces its namesake.
    fn update(&mut self, object: &Map<String, Value>, path: &str) {
        for (key, value) in object {
            self.values
                .insert(key.clone(), (value.clone(), format!("{path}.{key}")));
        }
    }

    /// Python's `dict.setdefault`.
    fn set_default(&mut self, key: &str, value: Value, source: String) {
        self.values.entry(key.to_owned()).or_insert((value, source));
    }

    fn get(&self, key: &str) -> Option<(&Value, &str)> {
        self.values
            .get(key)
            .filter(|(v, _)| !v.is_null())
            .map(|(v, s)| (v, s.as_str()))
    }

    fn source(&self, key: &str) -> String {
        self.get(key)
            .map_or_else(|| DEFAULT.to_owned(), |(_, s)| s.to_owned())
    }

    fn number(&self, key: &str) -> Result<Option<f64>, ConfigError> {
        match self.get(key) {
            None => Ok(None),
            Some((value, path)) => value.as_f64().map(Some).ok_or_else(|| {
                ConfigError(format!(
                    "\"{path}\" is {}; it must be a number",
                    shown_value(value)
                ))
            }),
        }
    }

    fn count(&self, key: &str) -> Result<Option<usize>, ConfigError> {
        match self.get(key) {
            None => Ok(None),
            Some((value, path)) => {
                let mut one = Map::new();
                one.insert(path.to_owned(), value.clone());
                count(&one, path)
            }
        }
    }

    fn string(&self, key: &str) -> Result<Option<&str>, ConfigError> {
        match self.get(key) {
            None => Ok(None),
            Some((Value::String(s), _)) => Ok(Some(s)),
            Some((value, path)) => Err(ConfigError(format!(
                "\"{path}\" is {}; it must be a string",
                shown_value(value)
            ))),
        }
    }

    fn flag(&self, key: &str) -> Result<Option<bool>, ConfigError> {
        match self.get(key) {
            None => Ok(None),
            Some((Value::Bool(b), _)) => Ok(Some(*b)),
            Some((value, path)) => Err(ConfigError(format!(
                "\"{path}\" is {}; it must be true or false",
                shown_value(value)
            ))),
        }
    }

    fn numbers(&self, key: &str) -> Result<Option<Vec<f64>>, ConfigError> {
        match self.get(key) {
            None => Ok(None),
            Some((Value::Array(items), path)) => items
                .iter()
                .map(|v| {
                    v.as_f64().ok_or_else(|| {
                        ConfigError(format!("\"{path}\" holds {}, not a number", shown_value(v)))
                    })
                })
                .collect::<Result<Vec<f64>, _>>()
                .map(Some),
            Some((other, path)) => Err(ConfigError(format!(
                "\"{path}\" is {}; it must be a list of numbers",
                shown_value(other)
            ))),
        }
    }
}

/// The models whose configs name two RoPEs in keys of their own (before `rope_parameters`
/// per layer type), with the defaults their config classes hold.
struct TwoBases {
    model_types: &'static [&'static str],
    global_key: &'static str,
    global_default: f64,
    local_key: &'static str,
    local_default: f64,
    /// Whether `rope_scaling` scales the sliding layers too (ModernBERT) or only the full ones
    /// (Gemma 3).
    scales_local: bool,
}

const TWO_BASES: &[TwoBases] = &[
    TwoBases {
        model_types: &["gemma3_text", "gemma3n_text"],
        global_key: "rope_theta",
        global_default: 1_000_000.0,
        local_key: "rope_local_base_freq",
        local_default: 10_000.0,
        scales_local: false,
    },
    TwoBases {
        model_types: &["modernbert", "modernbert-decoder", "modernbert_decoder"],
        global_key: "global_rope_theta",
        global_default: 160_000.0,
        local_key: "local_rope_theta",
        local_default: 10_000.0,
        scales_local: true,
    },
];

const FULL: &str = "full_attention";
const SLIDING: &str = "sliding_attention";

/// The layer types a config names (`layer_types`), or those its model's config class makes
/// when it is absent; `None` for a model without them.
fn layer_types(
    top: &Map<String, Value>,
    model_type: &str,
    prefix: &str,
) -> Result<Option<Vec<String>>, ConfigError> {
    match top.get("layer_types") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            return items
                .iter()
                .map(|v| match v {
                    Value::String(s) => Ok(crate::import::printable(s)),
                    other => Err(ConfigError(format!(
                        "\"{prefix}layer_types\" holds {}; it must be a list of layer type names",
                        shown_value(other)
                    ))),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some);
        }
        Some(other) => {
            return Err(ConfigError(format!(
                "\"{prefix}layer_types\" is {}; it must be a list of layer type names",
                shown_value(other)
            )));
        }
    }
    let layers = count(top, "num_hidden_layers")?;
    let two = TWO_BASES
        .iter()
        .find(|t| t.model_types.contains(&model_type));
    Ok(match (two, layers) {
        (Some(two), Some(layers)) => {
            let generated = if two.scales_local {
                // ModernBERT: every n-th layer (the first included) attends globally.
                let every = count(top, "global_attn_every_n_layers")?
                    .unwrap_or(3)
                    .max(1);
                (0..layers)
                    .map(|i| if i % every == 0 { FULL } else { SLIDING })
                    .collect::<Vec<_>>()
            } else {
                // Gemma 3: the last of every `sliding_window_pattern` layers is global.
                let pattern = count(top, "sliding_window_pattern")?.unwrap_or(6).max(1);
                (0..layers)
                    .map(|i| {
                        if (i + 1) % pattern == 0 {
                            FULL
                        } else {
                            SLIDING
                        }
                    })
                    .collect()
            };
            Some(generated.into_iter().map(str::to_owned).collect())
        }
        _ => None,
    })
}

/// Reads every RoPE a config runs, as transformers 5's `convert_rope_params_to_dict` and the
/// model's rotary embedding do. `prefix` is where `top` sits in the file (`text_config.` for a
/// multimodal model's text part).
pub(super) fn read(
    top: &Map<String, Value>,
    prefix: &str,
    model_type: &str,
    heads: Option<usize>,
    hidden: Option<usize>,
) -> Result<(Vec<RopeLayer>, Vec<Lint>), ConfigError> {
    let mut lints = Vec::new();
    let at = |key: &str| format!("{prefix}{key}");
    let object = |key: &str| super::object(top, key);
    // An empty rope_scaling is no scaling (Python's `rope_scaling or ...`).
    let old = object("rope_scaling")?.filter(|o| !o.is_empty());
    let new = object("rope_parameters")?;
    let types = layer_types(top, model_type, prefix)?;
    let two = TWO_BASES
        .iter()
        .find(|t| t.model_types.contains(&model_type));

    // A base given as null is no base: transformers would fail on it, not use 10000.
    if let Some(Value::Null) = top.get("rope_theta") {
        return Err(ConfigError(format!(
            "\"{}\" is null; it must be a number (the base of the frequencies)",
            at("rope_theta")
        )));
    }

    // Each layer type's parameters, merged as transformers merges them.
    let source = Source {
        top,
        prefix,
        model_type,
    };
    let entries = match two {
        Some(two) => two_bases(&source, two, (old, new), &mut lints)?,
        None => one_rope_or_per_type(&source, types.as_ref(), (old, new), &mut lints)?,
    };
    let nested = two.is_some() || entries.iter().any(|(name, _, _)| name.is_some());
    let mut layers = Vec::new();
    for (name, params, object_path) in entries {
        let counted = match (&name, &types) {
            (Some(name), Some(types)) => {
                Some((types.iter().filter(|t| *t == name).count(), types.len()))
            }
            _ => None,
        };
        layers.push(layer(
            (top, prefix, model_type),
            (heads, hidden),
            (name, counted),
            (params, &object_path),
            nested,
            &mut lints,
        )?);
    }
    Ok((layers, lints))
}

/// Where a config's RoPE fields sit: the object, its place in the file, the model's type.
struct Source<'a> {
    top: &'a Map<String, Value>,
    prefix: &'a str,
    model_type: &'a str,
}

impl Source<'_> {
    fn at(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }

    fn number(&self, key: &str) -> Result<Option<(f64, String)>, ConfigError> {
        Ok(super::number(self.top, key)?.map(|v| (v, self.at(key))))
    }
}

/// The old dialect's `rope_scaling` and the new one's `rope_parameters`, where given.
type Dialects<'a> = (
    Option<&'a Map<String, Value>>,
    Option<&'a Map<String, Value>>,
);

/// One RoPE's parameters: its layer type (none for every layer), fields and their place.
type Entry = (Option<String>, Params, String);

/// The two RoPEs of a model with a global and a local base (Gemma 3, ModernBERT): each
/// layer type's parameters, with its own base.
fn two_bases(
    source: &Source,
    two: &TwoBases,
    (old, new): Dialects,
    lints: &mut Vec<Lint>,
) -> Result<Vec<Entry>, ConfigError> {
    let model_type = source.model_type;
    let at = |key: &str| source.at(key);
    let top_number = |key: &str| source.number(key);
    let mut entries: Vec<Entry> = Vec::new();
    let mut full = Params::default();
    let mut sliding = Params::default();
    if let Some(new) = new {
        for (name, params) in [(FULL, &mut full), (SLIDING, &mut sliding)] {
            match new.get(name) {
                Some(Value::Object(o)) => {
                    *params = Params::from_object(o, &at(&format!("rope_parameters.{name}")))
                }
                None | Some(Value::Null) => {}
                Some(other) => {
                    return Err(ConfigError(format!(
                        "\"{}\" is {}; it must be an object of named fields",
                        at(&format!("rope_parameters.{name}")),
                        shown_value(other)
                    )));
                }
            }
        }
        for key in new.keys().filter(|k| *k != FULL && *k != SLIDING) {
            lints.push(Lint {
                field: at(&format!("rope_parameters.{key}")),
                message: format!(
                    "{model_type} reads rope_parameters per layer type ({FULL}, {SLIDING}); this field is ignored"
                ),
            });
        }
    }
    if let Some(old) = old {
        full.update(old, &at("rope_scaling"));
        if two.scales_local {
            sliding.update(old, &at("rope_scaling"));
        }
    }
    for (params, key, default) in [
        (&mut full, two.global_key, two.global_default),
        (&mut sliding, two.local_key, two.local_default),
    ] {
        match top_number(key)? {
            Some((base, source)) => params.set_default("rope_theta", base.into(), source),
            None => params.set_default(
                "rope_theta",
                default.into(),
                format!("{DEFAULT}: {model_type}'s {key}, {default}"),
            ),
        }
    }
    entries.push((
        Some(FULL.to_owned()),
        full,
        at(&format!("rope_parameters.{FULL}")),
    ));
    entries.push((
        Some(SLIDING.to_owned()),
        sliding,
        at(&format!("rope_parameters.{SLIDING}")),
    ));
    Ok(entries)
}

/// One RoPE for every layer, or one per layer type named inside the chosen object.
fn one_rope_or_per_type(
    source: &Source,
    types: Option<&Vec<String>>,
    (old, new): Dialects,
    lints: &mut Vec<Lint>,
) -> Result<Vec<Entry>, ConfigError> {
    let (top, prefix) = (source.top, source.prefix);
    let at = |key: &str| source.at(key);
    let top_number = |key: &str| source.number(key);
    let mut entries: Vec<Entry> = Vec::new();
    let (chosen, path) = match (old, new) {
        (Some(old), Some(_)) => {
            lints.push(Lint {
                field: at("rope_parameters"),
                message: "is ignored: rope_scaling beside it is read instead (transformers 5 takes rope_scaling first, and 4.x does not know rope_parameters); keep one of the two".to_owned(),
            });
            (Some(old), "rope_scaling")
        }
        (Some(old), None) => (Some(old), "rope_scaling"),
        (None, new) => (new, "rope_parameters"),
    };
    let chosen_path = at(path);
    let nested: Vec<&String> = match (&types, chosen) {
        (Some(types), Some(chosen)) => chosen.keys().filter(|k| types.contains(k)).collect(),
        _ => Vec::new(),
    };
    let (base, base_source) = match (top_number("rope_theta")?, top_number("rotary_emb_base")?) {
        (Some(given), _) | (None, Some(given)) => (given.0, given.1),
        (None, None) => (10_000.0, format!("{DEFAULT}: 10000")),
    };
    let partial = match top_number("partial_rotary_factor")? {
        Some(p) => Some(p),
        None => top_number("rotary_pct")?,
    };
    let fill = |params: &mut Params| {
        params.set_default("rope_theta", base.into(), base_source.clone());
        if let Some((p, source)) = &partial {
            params.set_default("partial_rotary_factor", (*p).into(), source.clone());
        }
    };
    if let (false, Some(chosen)) = (nested.is_empty(), chosen) {
        for name in nested {
            let field = format!("{chosen_path}.{name}");
            let mut params = match chosen.get(name.as_str()) {
                Some(Value::Object(o)) => Params::from_object(o, &field),
                // A layer type set to null has no RoPE (NoPE layers).
                Some(Value::Null) | None => continue,
                Some(other) => {
                    return Err(ConfigError(format!(
                        "\"{field}\" is {}; it must be an object of named fields",
                        shown_value(other)
                    )));
                }
            };
            if path == "rope_parameters" {
                v4_beside_v5(top, &params, prefix, lints);
            }
            fill(&mut params);
            entries.push((Some(name.clone()), params, field));
        }
        for key in chosen
            .keys()
            .filter(|k| !types.as_ref().is_some_and(|t| t.contains(k)))
        {
            lints.push(Lint {
                field: format!("{chosen_path}.{key}"),
                message:
                    "is beside the layer types' RoPEs and not one of them: transformers ignores it"
                        .to_owned(),
            });
        }
    } else {
        let mut params =
            chosen.map_or_else(Params::default, |c| Params::from_object(c, &chosen_path));
        if let Some(chosen) = chosen {
            for (key, value) in chosen {
                if value.is_object() {
                    lints.push(Lint {
                        field: format!("{chosen_path}.{key}"),
                        message: if types.is_none() {
                            "is an object, as one layer type's RoPE would be, but the config has no layer_types: transformers reads one RoPE for every layer and ignores it".to_owned()
                        } else {
                            "is an object, as one layer type's RoPE would be, but layer_types does not name it: transformers ignores it".to_owned()
                        },
                    });
                }
            }
        }
        if path == "rope_parameters" {
            v4_beside_v5(top, &params, prefix, lints);
        }
        fill(&mut params);
        entries.push((None, params, chosen_path.clone()));
    }
    Ok(entries)
}

/// The old top-level keys beside the new object that overrides them.
fn v4_beside_v5(top: &Map<String, Value>, params: &Params, prefix: &str, lints: &mut Vec<Lint>) {
    for key in ["rope_theta", "partial_rotary_factor"] {
        if let (Some(old), Some((new, path))) =
            (top.get(key).filter(|v| !v.is_null()), params.get(key))
        {
            lints.push(Lint {
                field: format!("{prefix}{key}"),
                message: format!(
                    "is {} at the top beside {path} ({}): transformers 5 takes {path}; the top-level key is the old spelling, keep one",
                    shown_value(old),
                    shown_value(new)
                ),
            });
        }
    }
}

/// The attention factor's formula in words, with its numbers.
pub fn attention_formula(freqs: &RopeFrequencies) -> String {
    let s = &freqs.scaling;
    if s.attention_factor.is_some() {
        return "given by attention_factor".to_owned();
    }
    match s.kind {
        ScalingKind::Yarn => match (s.mscale, s.mscale_all_dim) {
            (Some(m), Some(all)) if m != 0.0 && all != 0.0 => format!(
                "YaRN: get_mscale(factor, mscale {m}) / get_mscale(factor, mscale_all_dim {all}), get_mscale(s, m) = 0.1 m ln(s) + 1"
            ),
            _ => "YaRN: 0.1 ln(factor) + 1".to_owned(),
        },
        ScalingKind::Longrope => {
            "LongRoPE: sqrt(1 + ln(factor) / ln(original_max_position_embeddings))".to_owned()
        }
        _ => "1, this scaling leaves cos and sin unscaled".to_owned(),
    }
}
