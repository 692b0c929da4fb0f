//! A model's positional encoding, read from its Hugging Face `config.json`: RoPE (base,
//! head and rotary width, pairing, scaling in its old `rope_scaling` and new `rope_parameters`
//! spellings), ALiBi (BLOOM, MPT), T5's buckets, MAE's 2D sin-cos table, or learned positions.
//! What `poslab config` prints, what `--config` fills in, and what the app's presets are.

use crate::encoding::PairLayout;
use serde_json::{Map, Value};

use crate::encoding::rope_scaling::RopeFrequencies;

pub mod gguf;
mod rope;
pub use rope::{DEFAULT, Lint, Mrope, RopeLayer, attention_formula};

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
    /// The encoding; for a RoPE model with a RoPE per layer type, the first layer type's
    /// ([`ModelConfig::layer`] chooses one and refuses to guess).
    pub encoding: PositionEncoding,
    /// A RoPE model's RoPE per layer type (one, without a layer type, for most models); empty
    /// for the other encodings.
    pub rope_layers: Vec<RopeLayer>,
    /// What in the config is ignored, conflicting or missing: warnings, the model still loads.
    pub lints: Vec<Lint>,
    /// The file's format and what of it was read, where it is not a config.json (GGUF).
    pub format: Option<String>,
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
pub(super) fn flag(map: &Map<String, Value>, key: &str) -> Result<Option<bool>, ConfigError> {
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
        // A multimodal model (Gemma 3, LLaVA, Qwen2-VL in transformers 5) keeps its language
        // model's settings in text_config.
        if let Some(text) = object(&top, "text_config")?
            && !TEXT_KEYS.iter().any(|k| top.contains_key(*k))
        {
            let mut config = Self::read(text, "text_config.")?;
            config.name = name;
            return Ok(config);
        }
        let mut config = Self::read(&top, "")?;
        config.name = name;
        Ok(config)
    }

    /// The config of `top`, which sits at `prefix` in the file.
    fn read(top: &Map<String, Value>, prefix: &str) -> Result<Self, ConfigError> {
        let model_type = string(top, "model_type")?.unwrap_or("").to_owned();
        let top = top.clone();
        let name = model_type.clone();
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
        let mut rope_layers = Vec::new();
        let mut lints = Vec::new();
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
            let (layers, found) = rope::read(&top, prefix, &model_type, heads, hidden)?;
            rope_layers = layers;
            lints = found;
            match rope_layers.first() {
                Some(first) => first.encoding(),
                None => {
                    return Err(ConfigError(format!(
                        "names no layer type with a RoPE: every entry of {prefix}rope_parameters is null"
                    )));
                }
            }
        };
        Ok(Self {
            name,
            model_type,
            context,
            heads,
            encoding,
            rope_layers,
            lints,
            format: None,
        })
    }

    /// The config with one RoPE: the layer type named, or the only one. A model whose layer
    /// types differ and no layer type named is refused, naming them, rather than read as one
    /// of them.
    pub fn layer(&self, layer_type: Option<&str>) -> Result<Self, ConfigError> {
        let names = || self.layer_type_names();
        let chosen = match layer_type {
            None => {
                let first = self.rope_layers.first();
                if self.rope_layers.iter().any(|l| Some(&l.encoding()) != first.map(RopeLayer::encoding).as_ref()) {
                    return Err(ConfigError(format!(
                        "has a different RoPE per layer type ({}); choose one with --layer-type (layer_type= in Python)",
                        names()
                    )));
                }
                return Ok(self.clone());
            }
            Some(name) => self
                .rope_layers
                .iter()
                .find(|l| l.layer_type.as_deref() == Some(name))
                .ok_or_else(|| {
                    ConfigError(if self.rope_layers.iter().any(|l| l.layer_type.is_some()) {
                        format!(
                            "has no layer type \"{}\" with a RoPE; its layer types are {}",
                            crate::import::printable(name),
                            names()
                        )
                    } else {
                        format!(
                            "has one RoPE for every layer, so --layer-type {} names nothing; leave it out",
                            crate::import::printable(name)
                        )
                    })
                })?,
        };
        Ok(Self {
            encoding: chosen.encoding(),
            rope_layers: vec![chosen.clone()],
            ..self.clone()
        })
    }

    /// The layer types with a RoPE, as a comma list.
    pub fn layer_type_names(&self) -> String {
        self.rope_layers
            .iter()
            .filter_map(|l| l.layer_type.as_deref())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The config with its one RoPE, for the places that extend one (the context lab and its
    /// figure); a model with a RoPE per layer type is refused naming them.
    pub fn one_rope(&self) -> Result<Self, ConfigError> {
        self.layer(None).map_err(|_| {
            ConfigError(format!(
                "has a different RoPE per layer type ({}), and the context lab extends one: the Check view and poslab config show each",
                self.layer_type_names()
            ))
        })
    }

    /// Whether the model runs more than one RoPE (layer types that differ).
    pub fn differs_by_layer_type(&self) -> bool {
        self.layer(None).is_err()
    }
}

/// Keys that put a model's own settings at the top of the file, so that its `text_config` (a
/// multimodal model's language part) is not where they are.
const TEXT_KEYS: &[&str] = &[
    "rope_theta",
    "rope_scaling",
    "rope_parameters",
    "hidden_size",
    "head_dim",
    "num_attention_heads",
];

impl RopeLayer {
    /// This layer type's RoPE as an encoding.
    pub fn encoding(&self) -> PositionEncoding {
        PositionEncoding::Rope {
            head_dim: self.head_dim,
            base: self.base,
            freqs: self.freqs.clone(),
            layout: self.layout,
        }
    }
}
