//! A model's positional encoding, read from its Hugging Face `config.json`: RoPE (base,
//! head and rotary width, pairing, scaling in its old `rope_scaling` and new `rope_parameters`
//! spellings), ALiBi (BLOOM, MPT), T5's buckets, MAE's 2D sin-cos table, or learned positions.
//! What `poslab config` prints, what `--config` fills in, and what the app's presets are.

use crate::encoding::PairLayout;
use serde_json::{Map, Value};

use crate::encoding::rope_scaling::{RopeFrequencies, RopeScaling, ScalingKind};

// MODEL_CONFIGS: every file of assets/models, embedded by build.rs.
include!(concat!(env!("OUT_DIR"), "/models.rs"));

/// The positional encoding a model uses, with the parameters that decide its tables.
#[derive(Debug, Clone, PartialEq)]
pub enum PositionEncoding {
    Rope {
        /// Width of one attention head.
        head_dim: usize,
        base: f64,
        /// Boxed: the scaling's factor lists make it far larger than the other variants.
        freqs: Box<RopeFrequencies>,
        /// How the model's code pairs dimensions (GPT-J and Meta's weights interleave; HF's
        /// Llama, GPT-NeoX and most others rotate halves).
        layout: PairLayout,
    },
    Alibi {
        heads: usize,
        form: AlibiForm,
    },
    T5 {
        heads: usize,
        buckets: usize,
        max_distance: usize,
    },
    /// The original transformer's fixed table (Marian and FSMT keep it): sin in the first
    /// half of the columns, cos in the second.
    Sinusoidal {
        dim: usize,
    },
    /// MAE's fixed 2D sin-cos table (with a CLS row first).
    SinCos2d {
        grid: usize,
        dim: usize,
    },
    /// A table of trained vectors: no formula reproduces it.
    Learned {
        positions: usize,
        dim: usize,
    },
}

/// How a model's code stores ALiBi.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlibiForm {
    /// BLOOM's `build_alibi_tensor`: `m_h * j` per key.
    Bloom,
    /// MPT's `build_alibi_bias`: `m_h * (j - (seq - 1))`.
    Mpt,
}

/// A model's configuration as far as positions go.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelConfig {
    /// `_name_or_path`, or the `model_type` when there is none.
    pub name: String,
    pub model_type: String,
    /// `max_position_embeddings` (or the model's own name for it).
    pub context: Option<usize>,
    /// Attention heads (`num_attention_heads` or the model's own name for it).
    pub heads: Option<usize>,
    pub encoding: PositionEncoding,
}

/// What went wrong reading a config.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

/// A field that must be a number when present: a string ("500000"), a boolean, a list or an
/// object is refused, naming the field, rather than read as absent (which would give the
/// default and a wrong table). `null` is absent, as Hugging Face's code reads it.
fn number(map: &Map<String, Value>, key: &str) -> Result<Option<f64>, ConfigError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => value.as_f64().map(Some).ok_or_else(|| {
            ConfigError(format!(
                "\"{key}\" is {}; it must be a number",
                shown_value(value)
            ))
        }),
    }
}

/// A field that must be `true` or `false` when present.
fn flag(map: &Map<String, Value>, key: &str) -> Result<Option<bool>, ConfigError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(value) => Err(ConfigError(format!(
            "\"{key}\" is {}; it must be true or false",
            shown_value(value)
        ))),
    }
}

/// A field that must be text when present.
fn string<'a>(map: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>, ConfigError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(value) => Err(ConfigError(format!(
            "\"{key}\" is {}; it must be a string",
            shown_value(value)
        ))),
    }
}

/// A field that must be an object when present (`rope_scaling`, `rope_parameters`,
/// `attn_config`).
fn object<'a>(
    map: &'a Map<String, Value>,
    key: &str,
) -> Result<Option<&'a Map<String, Value>>, ConfigError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(o)) => Ok(Some(o)),
        Some(value) => Err(ConfigError(format!(
            "\"{key}\" is {}; it must be an object of named fields",
            shown_value(value)
        ))),
    }
}

/// A value as a message quotes it: its JSON, cut short, control characters escaped.
fn shown_value(value: &Value) -> String {
    let text = value.to_string();
    let cut: String = text.chars().take(60).collect();
    let cut = if cut.len() < text.len() {
        format!("{cut}…")
    } else {
        cut
    };
    crate::import::printable(&cut)
}

fn count(map: &Map<String, Value>, key: &str) -> Result<Option<usize>, ConfigError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        // 128.0 is whole too (some exporters write every number as a float).
        Some(value) => value
            .as_u64()
            .or_else(|| {
                value
                    .as_f64()
                    .filter(|v| *v >= 0.0 && v.fract() == 0.0 && *v < 2f64.powi(53))
                    .map(|v| v as u64)
            })
            .map(|n| Some(n as usize))
            .ok_or_else(|| {
                ConfigError(format!(
                    "\"{key}\" is {}; it must be a whole number",
                    shown_value(value)
                ))
            }),
    }
}

fn first_count(map: &Map<String, Value>, keys: &[&str]) -> Result<Option<usize>, ConfigError> {
    for key in keys {
        if let Some(n) = count(map, key)? {
            return Ok(Some(n));
        }
    }
    Ok(None)
}

fn factor_list(map: &Map<String, Value>, key: &str) -> Result<Option<Vec<f64>>, ConfigError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_f64().ok_or_else(|| {
                    ConfigError(format!("\"{key}\" holds {}, not a number", shown_value(v)))
                })
            })
            .collect::<Result<Vec<f64>, _>>()
            .map(Some),
        Some(other) => Err(ConfigError(format!(
            "\"{key}\" is {}; it must be a list of numbers",
            shown_value(other)
        ))),
    }
}

/// The scaling of a `rope_scaling` (old: `type`) or `rope_parameters` (new: `rope_type`)
/// object; `top` is the whole config, whose `max_position_embeddings` and (Phi-3)
/// `original_max_position_embeddings` the scalings read too.
fn scaling(
    object: Option<&Map<String, Value>>,
    top: &Map<String, Value>,
) -> Result<RopeScaling, ConfigError> {
    let Some(object) = object else {
        return Ok(RopeScaling::default());
    };
    let name = match string(object, "rope_type")? {
        Some(name) => name,
        None => string(object, "type")?.unwrap_or("default"),
    };
    let kind = match name {
        "default" => ScalingKind::None,
        "linear" => ScalingKind::Linear,
        "ntk" => ScalingKind::Ntk,
        "dynamic" => ScalingKind::Dynamic,
        "yarn" => ScalingKind::Yarn,
        "llama3" => ScalingKind::Llama3,
        // Phi-3's first configs call LongRoPE "su".
        "longrope" | "su" => ScalingKind::Longrope,
        // Qwen2-VL's M-RoPE rotates by three position axes: a table of its own kind.
        "mrope" => {
            return Err(ConfigError(
                "rope type \"mrope\" (Qwen2-VL's multimodal RoPE) takes each token's time, height and width positions: poslab table rope-axes --mrope-section S0,S1,S2 --dim D computes it; a config alone does not set it up"
                    .to_owned(),
            ));
        }
        other => {
            return Err(ConfigError(format!(
                "rope type \"{}\" is not one poslab computes: default, linear, ntk, dynamic, yarn, llama3, longrope (su), or mrope through rope-axes",
                crate::import::printable(other)
            )));
        }
    };
    let original = match count(object, "original_max_position_embeddings")? {
        Some(n) => Some(n),
        None => count(top, "original_max_position_embeddings")?,
    };
    Ok(RopeScaling {
        kind,
        factor: number(object, "factor")?,
        original_max_position_embeddings: original,
        max_position_embeddings: count(top, "max_position_embeddings")?,
        low_freq_factor: number(object, "low_freq_factor")?,
        high_freq_factor: number(object, "high_freq_factor")?,
        beta_fast: number(object, "beta_fast")?,
        beta_slow: number(object, "beta_slow")?,
        mscale: number(object, "mscale")?,
        mscale_all_dim: number(object, "mscale_all_dim")?,
        attention_factor: number(object, "attention_factor")?,
        truncate: flag(object, "truncate")?,
        long_factor: factor_list(object, "long_factor")?,
        short_factor: factor_list(object, "short_factor")?,
    })
}

impl ModelConfig {
    /// Parses a `config.json`'s text.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        let value: Value = serde_json::from_str(text)
            .map_err(|e| ConfigError(format!("is not valid JSON ({e})")))?;
        let Value::Object(top) = value else {
            return Err(ConfigError(
                "is not a model config: its JSON is not an object".to_owned(),
            ));
        };
        let model_type = string(&top, "model_type")?.unwrap_or("").to_owned();
        // A name is only ever shown: control characters (a terminal's escape sequences) are
        // kept out of it.
        let name = string(&top, "_name_or_path")?
            .filter(|n| !n.is_empty())
            .map_or_else(|| model_type.clone(), crate::import::printable);
        let context = first_count(
            &top,
            &["max_position_embeddings", "n_positions", "max_seq_len"],
        )?;
        let heads = first_count(
            &top,
            &["num_attention_heads", "n_head", "n_heads", "num_heads"],
        )?;
        let hidden = first_count(&top, &["hidden_size", "n_embd", "d_model"])?;
        let attn_config = object(&top, "attn_config")?;
        let mpt_alibi = match attn_config {
            Some(attn) => flag(attn, "alibi")?,
            None => None,
        };
        let is_alibi = model_type == "bloom"
            || mpt_alibi == Some(true)
            || flag(&top, "alibi")? == Some(true)
            || string(&top, "position_embedding_type")? == Some("alibi");
        let need = |what: Option<usize>, keys: &str| match what {
            Some(0) => Err(ConfigError(format!(
                "has {keys} 0, which the {model_type:?} encoding needs at 1 or more"
            ))),
            Some(n) => Ok(n),
            None => Err(ConfigError(format!(
                "has no {keys}, which the {model_type:?} encoding needs"
            ))),
        };
        let encoding = if is_alibi {
            PositionEncoding::Alibi {
                heads: need(heads, "num_attention_heads (n_head, n_heads)")?,
                form: if model_type == "bloom" {
                    AlibiForm::Bloom
                } else {
                    AlibiForm::Mpt
                },
            }
        } else if model_type == "t5" || top.contains_key("relative_attention_num_buckets") {
            PositionEncoding::T5 {
                heads: need(heads, "num_heads")?,
                buckets: count(&top, "relative_attention_num_buckets")?.unwrap_or(32),
                max_distance: count(&top, "relative_attention_max_distance")?.unwrap_or(128),
            }
        } else if model_type == "vit_mae" || model_type == "vit" {
            let image = need(count(&top, "image_size")?, "image_size")?;
            let patch = need(count(&top, "patch_size")?, "patch_size")?;
            let dim = need(hidden, "hidden_size")?;
            let grid = image / patch;
            if model_type == "vit_mae" {
                PositionEncoding::SinCos2d { grid, dim }
            } else {
                PositionEncoding::Learned {
                    positions: grid * grid + 1,
                    dim,
                }
            }
        } else if matches!(model_type.as_str(), "marian" | "fsmt") {
            PositionEncoding::Sinusoidal {
                dim: need(hidden, "d_model")?,
            }
        } else if matches!(model_type.as_str(), "gpt2" | "bert" | "roberta" | "opt") {
            PositionEncoding::Learned {
                positions: need(context, "max_position_embeddings (n_positions)")?,
                dim: need(hidden, "hidden_size (n_embd)")?,
            }
        } else {
            self::rope(&top, &model_type, heads, hidden)?
        };
        Ok(Self {
            name,
            model_type,
            context,
            heads,
            encoding,
        })
    }
}

/// A RoPE model's encoding: every spelling of base, head width, rotary width and scaling.
fn rope(
    top: &Map<String, Value>,
    model_type: &str,
    heads: Option<usize>,
    hidden: Option<usize>,
) -> Result<PositionEncoding, ConfigError> {
    // transformers v5 gathers everything under rope_parameters; older configs keep rope_theta
    // at the top and the scaling in rope_scaling.
    let parameters = object(top, "rope_parameters")?;
    let old_scaling = object(top, "rope_scaling")?;
    // A base given as null is no base: Hugging Face's code would fail on it, not use 10000.
    for (map, key) in [(parameters, "rope_theta"), (Some(top), "rope_theta")] {
        if let Some(Value::Null) = map.and_then(|m| m.get(key)) {
            return Err(ConfigError(format!(
                "\"{key}\" is null; it must be a number (the base of the frequencies)"
            )));
        }
    }
    let base = match parameters
        .map(|p| number(p, "rope_theta"))
        .transpose()?
        .flatten()
    {
        Some(base) => base,
        None => match number(top, "rope_theta")? {
            Some(base) => base,
            None => number(top, "rotary_emb_base")?.unwrap_or(10_000.0),
        },
    };
    crate::encoding::check_base("rope_theta", base).map_err(|_| {
        ConfigError(format!(
            "\"rope_theta\" is {base}; it must be a finite number greater than 1"
        ))
    })?;
    // DeepSeek's MLA rotates a separate qk_rope_head_dim.
    let head_dim = match first_count(top, &["qk_rope_head_dim", "head_dim"])? {
        Some(d) => d,
        None => match (hidden, heads) {
            (Some(hidden), Some(heads)) if heads > 0 => hidden / heads,
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
    };
    let max_dim = *crate::encoding::DIM_RANGE.end();
    if head_dim < 2 || head_dim % 2 != 0 || head_dim > max_dim {
        return Err(ConfigError(format!(
            "has a head width of {head_dim}: RoPE needs an even width from 2 to {}",
            crate::numbers::thousands(max_dim as u64)
        )));
    }
    let mut partial = None;
    for (map, key) in [
        (parameters, "partial_rotary_factor"),
        (Some(top), "partial_rotary_factor"),
        (Some(top), "rotary_pct"),
    ] {
        if partial.is_none()
            && let Some(map) = map
        {
            partial = number(map, key)?.map(|f| (key, f));
        }
    }
    let rotary_dim = match (count(top, "rotary_dim")?, partial) {
        (Some(r), _) => Some(r),
        (None, Some((key, f))) if !(f > 0.0 && f <= 1.0) => {
            return Err(ConfigError(format!(
                "\"{key}\" is {f}; it must be a fraction of the head, above 0 and at most 1"
            )));
        }
        // Python's int(head_dim * factor).
        (None, Some((_, f))) if f < 1.0 => Some((head_dim as f64 * f) as usize),
        _ => None,
    };
    if let Some(r) = rotary_dim
        && (r < 2 || r % 2 != 0 || r > head_dim)
    {
        return Err(ConfigError(format!(
            "rotates {r} of a head of {head_dim}: the rotary width must be even, from 2 to the head's width"
        )));
    }
    let scaling = scaling(parameters.or(old_scaling), top)?;
    // GPT-J rotates every two dimensions; the weights of every other RoPE model on the Hub
    // are laid out for rotate_half.
    let layout = if model_type == "gptj" {
        PairLayout::Interleaved
    } else {
        PairLayout::Half
    };
    Ok(PositionEncoding::Rope {
        head_dim,
        base,
        freqs: Box::new(RopeFrequencies {
            rotary_dim,
            scaling,
            ..Default::default()
        }),
        layout,
    })
}
