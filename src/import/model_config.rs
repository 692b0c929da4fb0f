//! A model's positional encoding, read from its Hugging Face `config.json`: RoPE (base,
//! head and rotary width, pairing, scaling in its old `rope_scaling` and new `rope_parameters`
//! spellings), ALiBi (BLOOM, MPT), T5's buckets, MAE's 2D sin-cos table, or learned positions.
//! What `poslab config` prints, what `--config` fills in, and what the app's presets are.

use serde_json::{Map, Value};

use crate::encoding::rope::RopeLayout;
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
        layout: RopeLayout,
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

fn number(map: &Map<String, Value>, key: &str) -> Option<f64> {
    map.get(key).and_then(Value::as_f64)
}

fn count(map: &Map<String, Value>, key: &str) -> Result<Option<usize>, ConfigError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(value) => value
            .as_u64()
            .map(|n| Some(n as usize))
            .ok_or_else(|| ConfigError(format!("\"{key}\" is {value}; it must be a whole number"))),
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
                v.as_f64()
                    .ok_or_else(|| ConfigError(format!("\"{key}\" holds {v}, not a number")))
            })
            .collect::<Result<Vec<f64>, _>>()
            .map(Some),
        Some(other) => Err(ConfigError(format!(
            "\"{key}\" is {other}; it must be a list of numbers"
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
    let name = object
        .get("rope_type")
        .or_else(|| object.get("type"))
        .and_then(Value::as_str)
        .unwrap_or("default");
    let kind = match name {
        "default" => ScalingKind::None,
        "linear" => ScalingKind::Linear,
        "ntk" => ScalingKind::Ntk,
        "dynamic" => ScalingKind::Dynamic,
        "yarn" => ScalingKind::Yarn,
        "llama3" => ScalingKind::Llama3,
        // Phi-3's first configs call LongRoPE "su".
        "longrope" | "su" => ScalingKind::Longrope,
        other => {
            return Err(ConfigError(format!(
                "rope type \"{other}\" is not one poslab computes: default, linear, ntk, dynamic, yarn, llama3, longrope (su)"
            )));
        }
    };
    let original = match count(object, "original_max_position_embeddings")? {
        Some(n) => Some(n),
        None => count(top, "original_max_position_embeddings")?,
    };
    Ok(RopeScaling {
        kind,
        factor: number(object, "factor"),
        original_max_position_embeddings: original,
        max_position_embeddings: count(top, "max_position_embeddings")?,
        low_freq_factor: number(object, "low_freq_factor"),
        high_freq_factor: number(object, "high_freq_factor"),
        beta_fast: number(object, "beta_fast"),
        beta_slow: number(object, "beta_slow"),
        mscale: number(object, "mscale"),
        mscale_all_dim: number(object, "mscale_all_dim"),
        attention_factor: number(object, "attention_factor"),
        truncate: object.get("truncate").and_then(Value::as_bool),
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
        let model_type = top
            .get("model_type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let name = top
            .get("_name_or_path")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .map_or_else(|| model_type.clone(), str::to_owned);
        let context = first_count(
            &top,
            &["max_position_embeddings", "n_positions", "max_seq_len"],
        )?;
        let heads = first_count(
            &top,
            &["num_attention_heads", "n_head", "n_heads", "num_heads"],
        )?;
        let hidden = first_count(&top, &["hidden_size", "n_embd", "d_model"])?;
        let attn_config = top.get("attn_config").and_then(Value::as_object);
        let is_alibi = model_type == "bloom"
            || attn_config
                .and_then(|a| a.get("alibi"))
                .and_then(Value::as_bool)
                == Some(true)
            || top.get("alibi").and_then(Value::as_bool) == Some(true)
            || top.get("position_embedding_type").and_then(Value::as_str) == Some("alibi");
        let need = |what: Option<usize>, keys: &str| {
            what.filter(|&n| n > 0).ok_or_else(|| {
                ConfigError(format!(
                    "has no {keys}, which the {model_type:?} encoding needs"
                ))
            })
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
    let parameters = top.get("rope_parameters").and_then(Value::as_object);
    let old_scaling = top.get("rope_scaling").and_then(Value::as_object);
    let base = parameters
        .and_then(|p| number(p, "rope_theta"))
        .or_else(|| number(top, "rope_theta"))
        .or_else(|| number(top, "rotary_emb_base"))
        .unwrap_or(10_000.0);
    // DeepSeek's MLA rotates a separate qk_rope_head_dim.
    let head_dim = match first_count(top, &["qk_rope_head_dim", "head_dim"])? {
        Some(d) => d,
        None => match (hidden, heads) {
            (Some(hidden), Some(heads)) if heads > 0 => hidden / heads,
            _ => {
                return Err(ConfigError(
                    "has neither head_dim nor hidden_size and num_attention_heads: the head width is unknown"
                        .to_owned(),
                ));
            }
        },
    };
    let partial = parameters
        .and_then(|p| number(p, "partial_rotary_factor"))
        .or_else(|| number(top, "partial_rotary_factor"))
        .or_else(|| number(top, "rotary_pct"));
    let rotary_dim = match (count(top, "rotary_dim")?, partial) {
        (Some(r), _) => Some(r),
        // Python's int(head_dim * factor).
        (None, Some(f)) if f < 1.0 => Some((head_dim as f64 * f) as usize),
        _ => None,
    };
    let scaling = scaling(parameters.or(old_scaling), top)?;
    // GPT-J rotates every two dimensions; the weights of every other RoPE model on the Hub
    // are laid out for rotate_half.
    let layout = if model_type == "gptj" {
        RopeLayout::Interleaved
    } else {
        RopeLayout::Half
    };
    Ok(PositionEncoding::Rope {
        head_dim,
        base,
        freqs: Box::new(RopeFrequencies {
            rotary_dim,
            scaling,
        }),
        layout,
    })
}
