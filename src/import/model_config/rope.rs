//! A RoPE model's settings as transformers 5 reads them from a `config.json` of either dialect:
//! the old one (`rope_theta` at the top, the scaling in `rope_scaling` with `type` or
//! `rope_type`, the models' own legacy keys) and the new one (`rope_parameters`, flat or one
//! object per layer type named by `layer_types`). One [`RopeLayer`] per layer type, each value
//! with the field it came from, and the [`Lint`]s: fields ignored, conflicting or missing.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::{ConfigError, count, first_count, shown_value};
use crate::encoding::PairLayout;
use crate::encoding::rope_scaling::{RopeFrequencies, RopeScaling, ScalingKind};

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
    let top_number = |key: &str| -> Result<Option<(f64, String)>, ConfigError> {
        Ok(super::number(top, key)?.map(|v| (v, at(key))))
    };

    // Each layer type's parameters, merged as transformers merges them.
    let mut entries: Vec<(Option<String>, Params, String)> = Vec::new();
    if let Some(two) = two {
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
    } else {
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
        let (base, base_source) = match (top_number("rope_theta")?, top_number("rotary_emb_base")?)
        {
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
                    v4_beside_v5(top, &params, prefix, &mut lints);
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
                    message: "is beside the layer types' RoPEs and not one of them: transformers ignores it".to_owned(),
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
                v4_beside_v5(top, &params, prefix, &mut lints);
            }
            fill(&mut params);
            entries.push((None, params, chosen_path.clone()));
        }
    }
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

/// The models whose transformers code rotates interleaved pairs `(2i, 2i+1)` of the weights
/// as stored: GPT-J (`rotate_every_two`), DeepSeek-V2 and Llama 4 (`view_as_complex`).
const INTERLEAVED_MODELS: &[&str] = &["gptj", "deepseek_v2", "llama4", "llama4_text"];

/// The models with a `rope_interleave` switch (DeepSeek-V3's MLA and its kin), on by default.
const ROPE_INTERLEAVE_MODELS: &[&str] = &[
    "deepseek_v3",
    "axk1",
    "glm4_moe_lite",
    "mistral4",
    "sarvam_mla",
    "youtu",
];

/// How the model's transformers code pairs the dims of its weights, and why.
fn pair_layout(
    top: &Map<String, Value>,
    prefix: &str,
    model_type: &str,
) -> Result<(PairLayout, String), ConfigError> {
    if let Some(interleave) = super::flag(top, "rope_interleave")? {
        return Ok((
            if interleave {
                PairLayout::Interleaved
            } else {
                PairLayout::Half
            },
            format!("{prefix}rope_interleave"),
        ));
    }
    Ok(if ROPE_INTERLEAVE_MODELS.contains(&model_type) {
        (
            PairLayout::Interleaved,
            format!("{DEFAULT}: {model_type}'s rope_interleave, true unless given"),
        )
    } else if INTERLEAVED_MODELS.contains(&model_type) {
        (
            PairLayout::Interleaved,
            format!("{prefix}model_type ({model_type}: transformers rotates pairs (2i, 2i+1))"),
        )
    } else {
        (
            PairLayout::Half,
            format!(
                "{DEFAULT}: transformers' rotate_half, as every RoPE model but GPT-J, DeepSeek's and Llama 4"
            ),
        )
    })
}

/// The scaling a RoPE object's `rope_type` (or old `type`) names.
fn scaling_kind(name: &str) -> Option<ScalingKind> {
    Some(match name {
        "default" | "mrope" => ScalingKind::None,
        "linear" => ScalingKind::Linear,
        "ntk" => ScalingKind::Ntk,
        "dynamic" => ScalingKind::Dynamic,
        "yarn" => ScalingKind::Yarn,
        "llama3" => ScalingKind::Llama3,
        // Phi-3's first configs call LongRoPE "su".
        "longrope" | "su" => ScalingKind::Longrope,
        _ => return None,
    })
}

/// One layer type's RoPE from its merged parameters.
fn layer(
    (top, prefix, model_type): (&Map<String, Value>, &str, &str),
    (heads, hidden): (Option<usize>, Option<usize>),
    (layer_type, layers): (Option<String>, Option<(usize, usize)>),
    (params, object_path): (Params, &str),
    nested: bool,
    lints: &mut Vec<Lint>,
) -> Result<RopeLayer, ConfigError> {
    let at = |key: &str| format!("{prefix}{key}");
    let mut sources: Vec<(&'static str, String)> = Vec::new();

    let type_new = params.string("rope_type")?.map(str::to_owned);
    let type_old = params.string("type")?.map(str::to_owned);
    if let (Some(new), Some(old)) = (&type_new, &type_old)
        && scaling_kind(new) != scaling_kind(old)
    {
        lints.push(Lint {
            field: params.source("type"),
            message: format!(
                "is \"{}\" but {} is \"{}\": transformers reads rope_type; make them agree or drop type",
                crate::import::printable(old),
                params.source("rope_type"),
                crate::import::printable(new)
            ),
        });
    }
    let (type_name, type_source) = match (&type_new, &type_old) {
        (Some(name), _) => (name.clone(), params.source("rope_type")),
        (None, Some(name)) => (name.clone(), params.source("type")),
        (None, None) => ("default".to_owned(), format!("{DEFAULT}: no rope_type")),
    };
    let Some(kind) = scaling_kind(&type_name) else {
        return Err(ConfigError(format!(
            "\"{type_source}\" is \"{}\", a rope type poslab does not compute: default, linear, ntk, dynamic, yarn, llama3, longrope (su), or mrope",
            crate::import::printable(&type_name)
        )));
    };

    // The base.
    let Some(base) = params.number("rope_theta")? else {
        return Err(ConfigError(format!(
            "\"{}\" is null; it must be a number (the base of the frequencies)",
            params.source("rope_theta")
        )));
    };
    crate::encoding::check_base("rope_theta", base).map_err(|_| {
        ConfigError(format!(
            "\"{}\" is {base}; it must be a finite number greater than 1",
            params.source("rope_theta")
        ))
    })?;
    sources.push(("base", params.source("rope_theta")));

    // The head width. DeepSeek's MLA rotates a separate qk_rope_head_dim.
    let (head_dim, dim_source) = match first_count(top, &["qk_rope_head_dim"])? {
        Some(d) => (d, at("qk_rope_head_dim")),
        None => match first_count(top, &["head_dim"])? {
            Some(d) => (d, at("head_dim")),
            None => match (hidden, heads) {
                (Some(hidden), Some(heads)) if heads > 0 => (
                    hidden / heads,
                    format!("{} / {}", at("hidden_size"), at("num_attention_heads")),
                ),
                (Some(_), Some(0)) => {
                    return Err(ConfigError(
                        "has \"num_attention_heads\": 0 and no head_dim: the head width is hidden_size over the heads, and there are none; it must be 1 or more"
                            .to_owned(),
                    ));
                }
                _ => {
                    return Err(ConfigError(
                        "has neither head_dim nor hidden_size and num_attention_heads: the head width is unknown"
                            .to_owned(),
                    ));
                }
            },
        },
    };
    let max_dim = *crate::encoding::DIM_RANGE.end();
    if head_dim < 2 || head_dim % 2 != 0 || head_dim > max_dim {
        return Err(ConfigError(format!(
            "has a head width of {head_dim}: RoPE needs an even width from 2 to {}",
            crate::numbers::thousands(max_dim as u64)
        )));
    }
    sources.push(("dim", dim_source));

    // The rotary width: rotary_dim, or int(head_dim * partial_rotary_factor).
    let partial = params.number("partial_rotary_factor")?;
    let mut given = None;
    let (rotary_dim, rotary_source) = match (count(top, "rotary_dim")?, partial) {
        (Some(r), _) => (Some(r), at("rotary_dim")),
        (None, Some(f)) if !(f > 0.0 && f <= 1.0) => {
            return Err(ConfigError(format!(
                "\"{}\" is {f}; it must be a fraction of the head, above 0 and at most 1",
                params.source("partial_rotary_factor")
            )));
        }
        (None, Some(f)) if f < 1.0 => {
            // Python's int(head_dim * factor).
            let width = (head_dim as f64 * f) as usize;
            let source = params.source("partial_rotary_factor");
            if width % 2 == 1 {
                let pairs = width.div_ceil(2);
                lints.push(Lint {
                    field: source.clone(),
                    message: format!(
                        "{f} of a head of {head_dim} is {width} dimensions, an odd number: transformers computes {pairs} frequencies base^(-2i/{width}) (arange(0, {width}, 2) / {width}) and rotates {} dimensions; a rotary width should be even",
                        2 * pairs
                    ),
                });
                if kind != ScalingKind::None {
                    return Err(ConfigError(format!(
                        "\"{source}\" gives an odd rotary width {width} under {} scaling, which poslab does not compute",
                        kind.name()
                    )));
                }
                sources.push((
                    "inv_freq",
                    format!("transformers' base^(-2i/{width}) for the odd width {width}"),
                ));
                given = Some(
                    (0..pairs)
                        .map(|i| base.powf(-((2 * i) as f64) / width as f64))
                        .collect::<Vec<f64>>(),
                );
                (None, source)
            } else {
                (Some(width), source)
            }
        }
        (None, Some(_)) => (None, params.source("partial_rotary_factor")),
        (None, None) => (None, format!("{DEFAULT}: the whole head")),
    };
    if let Some(r) = rotary_dim
        && (r < 2 || r % 2 != 0 || r > head_dim)
    {
        return Err(ConfigError(format!(
            "rotates {r} of a head of {head_dim}: the rotary width must be even, from 2 to the head's width"
        )));
    }
    sources.push(("rotary_dim", rotary_source));

    let (layout, layout_source) = pair_layout(top, prefix, model_type)?;
    sources.push(("layout", layout_source));
    sources.push(("scaling", type_source));

    // The scaling's parameters.
    let context = count(top, "max_position_embeddings")?;
    let needs_original = matches!(
        kind,
        ScalingKind::Llama3 | ScalingKind::Yarn | ScalingKind::Longrope
    );
    let top_original = count(top, "original_max_position_embeddings")?;
    let own_original = params.count("original_max_position_embeddings")?;
    // Phi-3 keeps the pretraining length at the top, and transformers 5 prefers it there.
    let (original, original_source) = match (nested, top_original, own_original) {
        (false, Some(n), _) if needs_original => (Some(n), at("original_max_position_embeddings")),
        (_, _, Some(n)) => (Some(n), params.source("original_max_position_embeddings")),
        (_, Some(n), None) => (Some(n), at("original_max_position_embeddings")),
        (_, None, None) if needs_original => {
            let field = format!("{object_path}.original_max_position_embeddings");
            match context {
                Some(n) => {
                    lints.push(Lint {
                        field,
                        message: format!(
                            "is missing, and {} scaling needs the pretraining context: transformers 5 takes max_position_embeddings ({n}) in its place; give it",
                            kind.name()
                        ),
                    });
                    (
                        Some(n),
                        format!(
                            "{} (in place of the missing original)",
                            at("max_position_embeddings")
                        ),
                    )
                }
                None => (None, DEFAULT.to_owned()),
            }
        }
        _ => (None, DEFAULT.to_owned()),
    };
    let scaling = RopeScaling {
        kind,
        factor: params.number("factor")?,
        original_max_position_embeddings: original,
        max_position_embeddings: context,
        low_freq_factor: params.number("low_freq_factor")?,
        high_freq_factor: params.number("high_freq_factor")?,
        beta_fast: params.number("beta_fast")?,
        beta_slow: params.number("beta_slow")?,
        mscale: params.number("mscale")?,
        mscale_all_dim: params.number("mscale_all_dim")?,
        attention_factor: params.number("attention_factor")?,
        truncate: params.flag("truncate")?,
        long_factor: params.numbers("long_factor")?,
        short_factor: params.numbers("short_factor")?,
    };
    for &id in kind.options() {
        let source = match id {
            "original_max_position_embeddings" => original_source.clone(),
            "max_position_embeddings" => {
                context.map_or_else(|| DEFAULT.to_owned(), |_| at("max_position_embeddings"))
            }
            "attention_factor" => continue,
            _ => params.source(id),
        };
        sources.push((id, source));
    }
    lint_scaling(&params, &scaling, context, lints);

    // M-RoPE.
    let mrope = match params.get("mrope_section") {
        None => None,
        Some((Value::Array(items), path)) => Some(Mrope {
            section: items
                .iter()
                .map(|v| {
                    v.as_u64().map(|n| n as usize).ok_or_else(|| {
                        ConfigError(format!(
                            "\"{path}\" holds {}; it must be a list of whole numbers",
                            shown_value(v)
                        ))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?,
            interleaved: params.flag("mrope_interleaved")?.unwrap_or(false),
            source: path.to_owned(),
        }),
        Some((other, path)) => {
            return Err(ConfigError(format!(
                "\"{path}\" is {}; it must be a list of whole numbers",
                shown_value(other)
            )));
        }
    };
    if type_name == "mrope" && mrope.is_none() {
        return Err(ConfigError(format!(
            "\"{}\" is \"mrope\" (Qwen2-VL's multimodal RoPE) without mrope_section: the pairs each position axis turns are unknown",
            params.source("rope_type")
        )));
    }

    let freqs = RopeFrequencies {
        rotary_dim,
        scaling,
        given,
    };
    sources.push((
        "attention_factor",
        if params.get("attention_factor").is_some() {
            params.source("attention_factor")
        } else {
            format!("formula: {}", attention_formula(&freqs))
        },
    ));
    sources.push((
        "context",
        context.map_or_else(|| DEFAULT.to_owned(), |_| at("max_position_embeddings")),
    ));
    Ok(RopeLayer {
        layer_type,
        layers,
        head_dim,
        base,
        freqs: Box::new(freqs),
        layout,
        sources,
        mrope,
    })
}

/// The lints of a scaling's fields: unknown, ignored by the scaling, out of range.
fn lint_scaling(
    params: &Params,
    scaling: &RopeScaling,
    context: Option<usize>,
    lints: &mut Vec<Lint>,
) {
    let kind = scaling.kind;
    let used = kind.options();
    for (key, (value, source)) in &params.values {
        if value.is_null() {
            continue;
        }
        if !KNOWN_KEYS.contains(&key.as_str()) {
            if !value.is_object() {
                lints.push(Lint {
                    field: source.clone(),
                    message: "is a field poslab does not know (nor does transformers' RoPE); it is ignored".to_owned(),
                });
            }
            continue;
        }
        let always = [
            "rope_type",
            "type",
            "rope_theta",
            "partial_rotary_factor",
            "mrope_section",
            "mrope_interleaved",
            // transformers fills it in for every scaling that has a pretraining length.
            "original_max_position_embeddings",
        ];
        if always.contains(&key.as_str()) || used.contains(&key.as_str()) {
            continue;
        }
        lints.push(Lint {
            field: source.clone(),
            message: match kind {
                ScalingKind::None => {
                    "is ignored: no scaling is in force (rope_type default), so nothing reads it"
                        .to_owned()
                }
                _ => format!(
                    "is ignored: {} scaling does not read it (it reads {})",
                    kind.name(),
                    used.join(", ")
                ),
            },
        });
    }
    if kind == ScalingKind::Yarn
        && scaling.attention_factor.is_some()
        && let Some((_, source)) = params.get("mscale").or(params.get("mscale_all_dim"))
    {
        lints.push(Lint {
            field: source.to_owned(),
            message: "is ignored: attention_factor beside it gives the attention factor outright (YaRN's mscale and mscale_all_dim only count without it)".to_owned(),
        });
    }
    if let Some(factor) = scaling.factor
        && kind != ScalingKind::None
        && factor < 1.0
    {
        lints.push(Lint {
            field: params.source("factor"),
            message: format!(
                "is {factor}, below 1: a scaling factor stretches the context by that much, so it is at least 1 (transformers warns and goes on; poslab's tables refuse it)"
            ),
        });
    }
    if let (Some(context), Some(original)) = (context, scaling.original_max_position_embeddings)
        && matches!(
            kind,
            ScalingKind::Llama3 | ScalingKind::Yarn | ScalingKind::Longrope
        )
        && context < original
    {
        lints.push(Lint {
            field: "max_position_embeddings".to_owned(),
            message: format!(
                "is {context}, below original_max_position_embeddings {original}: a scaled model's context is longer than the one it was trained at"
            ),
        });
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
