//! A `.gguf` model's RoPE as llama.cpp runs it: the base, rotary width and scaling from the
//! metadata (`{arch}.rope.*`), Llama 3.1's `rope_freqs` and Phi-3's `rope_factors_long/short`
//! tensors, the sliding-window layers' own base (`rope.freq_base_swa`), and the pair layout,
//! which GGUF does not store: llama.cpp takes it from the architecture's name.

use std::collections::BTreeMap;

use super::{ConfigError, ModelConfig, Mrope, PositionEncoding, RopeLayer};
use crate::encoding::PairLayout;
use crate::encoding::rope_scaling::{RopeFrequencies, RopeScaling, ScalingKind};
use crate::import::gguf::{GgufHeader, MetaValue};

/// How llama.cpp pairs a model's dims (`llama_model_rope_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LlamaCppRope {
    /// "Normal": pairs (2i, 2i+1), on weights the converter permuted from Hugging Face's halves.
    Normal,
    /// NeoX: pairs (i, i + n_rot/2), as Hugging Face's rotate_half.
    Neox,
    /// Qwen2-VL's M-RoPE: NeoX pairs split in sections among position axes.
    Mrope,
    /// Qwen3-VL's interleaved M-RoPE.
    Imrope,
    /// No RoPE.
    None,
}

/// llama.cpp's table of architectures (`llama_model_rope_type` in `src/llama-model.cpp`), by
/// the names GGUF files carry in `general.architecture`.
const NORMAL: &[&str] = &[
    "llama",
    "llada",
    "llama4",
    "deci",
    "baichuan",
    "starcoder",
    "internlm2",
    "minicpm",
    "xverse",
    "command-r",
    "cohere2",
    "olmo",
    "arctic",
    "deepseek",
    "deepseek2",
    "deepseek2-ocr",
    "plm",
    "chatglm",
    "granite",
    "granitemoe",
    "granitehybrid",
    "chameleon",
    "bailingmoe",
    "neo-bert",
    "smollm3",
    "arcee",
    "ernie4_5",
    "ernie4_5-moe",
    "mistral3",
    "mistral4",
    "llama-embed",
    "maincoder",
    "glm-dsa",
];
const NEOX: &[&str] = &[
    "falcon",
    "falcon-h1",
    "grok",
    "dbrx",
    "bert",
    "jina-bert-v3",
    "modern-bert",
    "nomic-bert",
    "nomic-bert-moe",
    "eurobert",
    "stablelm",
    "bitnet",
    "qwen",
    "qwen2",
    "dream",
    "qwen2moe",
    "qwen3",
    "qwen3moe",
    "llada-moe",
    "rnd1",
    "olmo2",
    "olmoe",
    "phi2",
    "phi3",
    "phimoe",
    "plamo",
    "plamo2",
    "plamo3",
    "gemma",
    "gemma2",
    "gemma3",
    "gemma3n",
    "gemma4",
    "gemma-embedding",
    "starcoder2",
    "openelm",
    "gptneox",
    "codeshell",
    "orion",
    "nemotron",
    "exaone",
    "exaone4",
    "exaone-moe",
    "minicpm3",
    "bailingmoe2",
    "dots1",
    "hunyuan-moe",
    "jais2",
    "hunyuan-dense",
    "lfm2",
    "lfm2moe",
    "smallthinker",
    "seed_oss",
    "grovemoe",
    "apertus",
    "cogvlm",
    "pangu-embedded",
    "afmoe",
    "qwen3next",
    "mimo2",
    "step35",
];
const MROPE: &[&str] = &["qwen2vl", "paddleocr"];
const IMROPE: &[&str] = &["qwen3vl", "qwen3vlmoe", "qwen35", "qwen35moe"];
const NO_ROPE: &[&str] = &[
    "gpt2",
    "gptj",
    "mpt",
    "refact",
    "bloom",
    "mamba",
    "jina-bert-v2",
    "t5",
    "t5encoder",
    "jais",
    "rwkv6",
    "rwkv6qwen2",
    "wavtokenizer-dec",
];

/// How llama.cpp pairs the dims of `arch`, if its table names it.
pub fn llama_cpp_rope(arch: &str) -> Option<LlamaCppRope> {
    [
        (NORMAL, LlamaCppRope::Normal),
        (NEOX, LlamaCppRope::Neox),
        (MROPE, LlamaCppRope::Mrope),
        (IMROPE, LlamaCppRope::Imrope),
        (NO_ROPE, LlamaCppRope::None),
    ]
    .iter()
    .find(|(names, _)| names.contains(&arch))
    .map(|(_, rope)| *rope)
}

/// The RoPE tensors of a file, as read.
#[derive(Debug, Clone, Default)]
pub struct RopeTensors {
    pub freqs: Option<Vec<f64>>,
    pub long: Option<Vec<f64>>,
    pub short: Option<Vec<f64>>,
}

/// The metadata of one architecture, with messages naming the key.
struct Keys<'a> {
    metadata: &'a BTreeMap<String, MetaValue>,
    arch: &'a str,
}

impl Keys<'_> {
    fn key(&self, suffix: &str) -> String {
        format!("{}.{suffix}", self.arch)
    }

    fn number(&self, suffix: &str) -> Result<Option<(f64, String)>, ConfigError> {
        let key = self.key(suffix);
        match self.metadata.get(&key) {
            None => Ok(None),
            Some(value) => match value.number() {
                Some(n) if n.is_finite() => Ok(Some((n, key))),
                _ => Err(ConfigError(format!(
                    "\"{key}\" is {}; it must be a number",
                    value.kind()
                ))),
            },
        }
    }

    /// A whole number; a per-layer list gives its largest value.
    fn count(&self, suffix: &str) -> Result<Option<(usize, String)>, ConfigError> {
        let key = self.key(suffix);
        let bad = |value: &MetaValue| {
            ConfigError(format!(
                "\"{key}\" is {}; it must be a whole number",
                value.kind()
            ))
        };
        let whole =
            |n: f64| (n >= 0.0 && n.fract() == 0.0 && n < 2f64.powi(53)).then_some(n as usize);
        match self.metadata.get(&key) {
            None => Ok(None),
            Some(MetaValue::Numbers(list)) => {
                let counts = list.iter().map(|n| whole(*n)).collect::<Option<Vec<_>>>();
                match counts.and_then(|c| c.into_iter().max()) {
                    Some(n) => Ok(Some((
                        n,
                        format!("{key} (the largest of its per-layer list)"),
                    ))),
                    None => Err(bad(&self.metadata[&key])),
                }
            }
            Some(value) => match value.number().and_then(whole) {
                Some(n) => Ok(Some((n, key))),
                None => Err(bad(value)),
            },
        }
    }

    fn text(&self, suffix: &str) -> Result<Option<(String, String)>, ConfigError> {
        let key = self.key(suffix);
        match self.metadata.get(&key) {
            None => Ok(None),
            Some(MetaValue::Text(t)) => Ok(Some((t.clone(), key))),
            Some(value) => Err(ConfigError(format!(
                "\"{key}\" is {}; it must be text",
                value.kind()
            ))),
        }
    }
}

/// A model's sources of its settings, by option id: what the config view shows beside them.
type Sources = Vec<(&'static str, String)>;

/// A found number and the key it came from.
type Found<T> = Option<(T, String)>;

/// The encoding llama.cpp runs for a GGUF file.
pub fn from_gguf(header: &GgufHeader, tensors: &RopeTensors) -> Result<ModelConfig, ConfigError> {
    let arch = architecture(header)?;
    let name = match header.metadata.get("general.name") {
        Some(MetaValue::Text(name)) if !name.is_empty() => name.clone(),
        _ => arch.clone(),
    };
    let keys = Keys {
        metadata: &header.metadata,
        arch: &arch,
    };
    let context = keys.count("context_length")?.map(|(n, _)| n);
    let heads = keys.count("attention.head_count")?.map(|(n, _)| n);
    let format = format!(
        "GGUF version {}, {} tensor{}; read: the metadata and the RoPE tensors, not the weights",
        header.version,
        header.tensor_count,
        if header.tensor_count == 1 { "" } else { "s" }
    );
    let rope = llama_cpp_rope(&arch).ok_or_else(|| {
        ConfigError(format!(
            "has general.architecture \"{}\", which poslab's copy of llama.cpp's table of RoPE layouts does not name: llama.cpp takes the pair layout from it, and GGUF stores no other",
            crate::import::printable(&arch)
        ))
    })?;
    if rope == LlamaCppRope::None {
        let encoding = alibi_of(&keys, heads)?;
        return Ok(ModelConfig {
            name,
            model_type: arch.clone(),
            context,
            heads,
            encoding,
            rope_layers: Vec::new(),
            lints: Vec::new(),
            format: Some(format),
        });
    }
    let widths = Widths::read(&keys, heads)?;
    let mut sources: Sources = vec![
        ("dim", widths.dim_source.clone()),
        ("rotary_dim", widths.rotary_source.clone()),
        ("base", widths.base_source.clone()),
    ];
    let (scaling, given) = read_scaling(&keys, tensors, &widths, context, &mut sources)?;
    sources.push(("layout", layout_source(rope, &arch)));
    sources.push((
        "context",
        context.map_or_else(
            || "default".to_owned(),
            |_| format!("{arch}.context_length"),
        ),
    ));
    let (head_dim, rotary) = (widths.head_dim, widths.rotary);
    let full = RopeLayer {
        layer_type: None,
        layers: None,
        head_dim,
        base: widths.base,
        freqs: Box::new(RopeFrequencies {
            rotary_dim: (rotary < head_dim && given.is_none()).then_some(rotary),
            scaling,
            given,
        }),
        layout: match rope {
            LlamaCppRope::Normal => PairLayout::Interleaved,
            _ => PairLayout::Half,
        },
        sources,
        mrope: mrope_of(&keys, rope),
    };
    let mut rope_layers = vec![full];
    if let Some(sliding) = sliding_layer(&keys, &mut rope_layers[0], &widths, context)? {
        rope_layers.push(sliding);
    }
    Ok(ModelConfig {
        name,
        model_type: arch.clone(),
        context,
        heads,
        encoding: rope_layers[0].encoding(),
        rope_layers,
        lints: Vec::new(),
        format: Some(format),
    })
}

/// `general.architecture`: what llama.cpp reads every other key and the pair layout by.
fn architecture(header: &GgufHeader) -> Result<String, ConfigError> {
    match header.metadata.get("general.architecture") {
        Some(MetaValue::Text(arch)) => Ok(arch.clone()),
        Some(other) => Err(ConfigError(format!(
            "\"general.architecture\" is {}; it must be text",
            other.kind()
        ))),
        None => Err(ConfigError(
            "has no \"general.architecture\": the model's keys and RoPE layout are unknown"
                .to_owned(),
        )),
    }
}

/// A model llama.cpp runs without RoPE: ALiBi when it has a bias.
fn alibi_of(keys: &Keys, heads: Option<usize>) -> Result<PositionEncoding, ConfigError> {
    let arch = keys.arch;
    match (keys.number("attention.max_alibi_bias")?, heads) {
        (Some((bias, _)), Some(heads)) if bias > 0.0 => Ok(PositionEncoding::Alibi {
            heads,
            form: if arch == "bloom" {
                super::AlibiForm::Bloom
            } else {
                super::AlibiForm::Mpt
            },
        }),
        _ => Err(ConfigError(format!(
            "is a {arch} model, which llama.cpp runs without RoPE"
        ))),
    }
}

/// The head width, rotary width and base, each checked, with where each came from.
struct Widths {
    head_dim: usize,
    rotary: usize,
    base: f64,
    dim_source: String,
    rotary_source: String,
    base_source: String,
}

impl Widths {
    fn read(keys: &Keys, heads: Option<usize>) -> Result<Self, ConfigError> {
        let arch = keys.arch;
        let (head_dim, dim_source) = match keys.count("attention.key_length")? {
            Some(found) => found,
            None => match (keys.count("embedding_length")?, heads) {
                (Some((hidden, _)), Some(heads)) if heads > 0 => (
                    hidden / heads,
                    format!("{arch}.embedding_length / {arch}.attention.head_count"),
                ),
                _ => {
                    return Err(ConfigError(format!(
                        "has neither {arch}.attention.key_length nor {arch}.embedding_length and {arch}.attention.head_count: the head width is unknown"
                    )));
                }
            },
        };
        let (rotary, rotary_source) = keys
            .count("rope.dimension_count")?
            .unwrap_or((head_dim, "default: the whole head".to_owned()));
        let (base, base_source) = keys
            .number("rope.freq_base")?
            .unwrap_or((10_000.0, "default: 10000 (llama.cpp's)".to_owned()));
        let max_dim = *crate::encoding::DIM_RANGE.end();
        if head_dim < 2 || head_dim % 2 != 0 || head_dim > max_dim {
            return Err(ConfigError(format!(
                "has a head width of {head_dim} ({dim_source}): RoPE needs an even width from 2 to {max_dim}"
            )));
        }
        if rotary < 2 || rotary % 2 != 0 || rotary > head_dim {
            return Err(ConfigError(format!(
                "rotates {rotary} ({rotary_source}) of a head of {head_dim}: the rotary width must be even, from 2 to the head's width"
            )));
        }
        crate::encoding::check_base("freq_base", base).map_err(|_| {
            ConfigError(format!(
                "\"{base_source}\" is {base}; it must be a finite number greater than 1"
            ))
        })?;
        Ok(Self {
            head_dim,
            rotary,
            base,
            dim_source,
            rotary_source,
            base_source,
        })
    }
}

/// A factor tensor of one value per pair, each finite and above 0.
fn check_factors(values: &[f64], tensor: &str, rotary: usize) -> Result<(), ConfigError> {
    let pairs = rotary / 2;
    if values.len() != pairs {
        return Err(ConfigError(format!(
            "has {tensor} of {} values; a rotary width of {rotary} has {pairs} pairs",
            values.len()
        )));
    }
    if let Some(bad) = values.iter().find(|v| !(v.is_finite() && **v > 0.0)) {
        return Err(ConfigError(format!(
            "has {tensor} holding {bad}; every factor must be a finite number greater than 0"
        )));
    }
    Ok(())
}

/// The scaling llama.cpp applies, and the frequencies themselves where `rope_freqs` gives
/// them (Llama 3.1's scaling, as the converter computed it).
fn read_scaling(
    keys: &Keys,
    tensors: &RopeTensors,
    widths: &Widths,
    context: Option<usize>,
    sources: &mut Sources,
) -> Result<(RopeScaling, Option<Vec<f64>>), ConfigError> {
    // llama.cpp reads "linear" when no type is given, and a factor of 0 as 1.
    let (kind_name, kind_source) = keys.text("rope.scaling.type")?.unwrap_or((
        "linear".to_owned(),
        "default: linear (llama.cpp's)".to_owned(),
    ));
    let factor = match keys.number("rope.scaling.factor")? {
        Some(found) => Some(found),
        None => keys.number("rope.scale_linear")?,
    }
    .filter(|(f, _)| *f != 0.0);
    let original = keys.count("rope.scaling.original_context_length")?;
    let attn = attention_factor(keys)?;
    let mut scaling = RopeScaling {
        max_position_embeddings: context,
        ..Default::default()
    };
    match kind_name.as_str() {
        "none" => {}
        "linear" => {
            if let Some((f, source)) = &factor
                && *f != 1.0
            {
                scaling.kind = ScalingKind::Linear;
                scaling.factor = Some(*f);
                sources.push(("factor", source.clone()));
            }
        }
        "yarn" => yarn(
            keys,
            (factor, original, attn),
            context,
            &mut scaling,
            sources,
        )?,
        "longrope" => longrope(
            keys,
            tensors,
            widths.rotary,
            (factor, original, attn),
            &mut scaling,
            sources,
        )?,
        other => {
            return Err(ConfigError(format!(
                "\"{kind_source}\" is \"{}\"; llama.cpp's scaling types are none, linear, yarn and longrope",
                crate::import::printable(other)
            )));
        }
    }
    let Some(freqs) = &tensors.freqs else {
        sources.push(("scaling", kind_source));
        return Ok((scaling, None));
    };
    check_factors(freqs, "rope_freqs.weight", widths.rotary)?;
    if !matches!(scaling.kind, ScalingKind::None | ScalingKind::Linear) {
        return Err(ConfigError(format!(
            "has rope_freqs beside {} scaling, which poslab does not combine",
            scaling.kind.name()
        )));
    }
    // llama.cpp divides each pair's angle by its factor (Llama 3.1's scaling, computed by
    // the converter), after a linear scaling's.
    let linear = scaling.factor.unwrap_or(1.0);
    let (base, rotary) = (widths.base, widths.rotary);
    let given = freqs
        .iter()
        .enumerate()
        .map(|(i, f)| base.powf(-((2 * i) as f64) / rotary as f64) / f / linear)
        .collect::<Vec<f64>>();
    sources.push((
        "inv_freq",
        "base^(-2i/R) / rope_freqs.weight (tensor)".to_owned(),
    ));
    sources.push((
        "scaling",
        "rope_freqs.weight (tensor): each pair's angle divided by its factor (Llama 3.1's scaling, as the converter computed it)".to_owned(),
    ));
    let unscaled = RopeScaling {
        max_position_embeddings: context,
        ..Default::default()
    };
    Ok((unscaled, Some(given)))
}

/// YaRN's parameters and attention factor as llama.cpp reads them.
fn yarn(
    keys: &Keys,
    (factor, original, attn): (Found<f64>, Found<usize>, Found<f64>),
    context: Option<usize>,
    scaling: &mut RopeScaling,
    sources: &mut Sources,
) -> Result<(), ConfigError> {
    let arch = keys.arch;
    scaling.kind = ScalingKind::Yarn;
    scaling.factor = factor.as_ref().map(|(f, _)| *f);
    sources.push((
        "factor",
        factor
            .as_ref()
            .map_or_else(|| "default".to_owned(), |(_, s)| s.clone()),
    ));
    let (orig, orig_source) = original
        .or(context.map(|n| (n, format!("{arch}.context_length"))))
        .unzip();
    scaling.original_max_position_embeddings = orig;
    sources.push((
        "original_max_position_embeddings",
        orig_source.unwrap_or_else(|| "default".to_owned()),
    ));
    for (id, suffix) in [
        ("beta_fast", "rope.scaling.yarn_beta_fast"),
        ("beta_slow", "rope.scaling.yarn_beta_slow"),
    ] {
        let found = keys.number(suffix)?;
        if id == "beta_fast" {
            scaling.beta_fast = found.as_ref().map(|(v, _)| *v);
        } else {
            scaling.beta_slow = found.as_ref().map(|(v, _)| *v);
        }
        sources.push((id, found.map_or_else(|| "default".to_owned(), |(_, s)| s)));
    }
    let f = scaling.factor.unwrap_or(1.0);
    let formula = if f > 1.0 { 0.1 * f.ln() + 1.0 } else { 1.0 };
    if keys.number("rope.scaling.yarn_log_multiplier")?.is_some() {
        // DeepSeek-V2's graph divides YaRN's factor back out of cos and sin and puts
        // mscale^2 on the attention's softmax instead.
        scaling.attention_factor = Some(1.0);
        sources.push((
            "attention_factor",
            format!("llama.cpp's {arch} graph: cos and sin unscaled ({arch}.rope.scaling.yarn_log_multiplier scales the softmax instead)"),
        ));
    } else if let Some((a, source)) = attn {
        scaling.attention_factor = Some(a * formula);
        sources.push((
            "attention_factor",
            format!("{source} x (0.1 ln(factor) + 1)"),
        ));
    } else {
        sources.push((
            "attention_factor",
            "formula: 0.1 ln(factor) + 1 (llama.cpp's YaRN)".to_owned(),
        ));
    }
    Ok(())
}

/// The attention factor a file states, under either of llama.cpp's keys.
fn attention_factor(keys: &Keys) -> Result<Found<f64>, ConfigError> {
    match keys.number("rope.scaling.yarn_attn_factor")? {
        Some(found) => Ok(Some(found)),
        None => keys.number("rope.scaling.attn_factor"),
    }
}

/// LongRoPE: Phi-3's factor tensors and its original context.
fn longrope(
    keys: &Keys,
    tensors: &RopeTensors,
    rotary: usize,
    (factor, original, attn): (Found<f64>, Found<usize>, Found<f64>),
    scaling: &mut RopeScaling,
    sources: &mut Sources,
) -> Result<(), ConfigError> {
    let (Some(long), Some(short)) = (&tensors.long, &tensors.short) else {
        return Err(ConfigError(
            "has rope.scaling.type longrope without the rope_factors_long and rope_factors_short tensors".to_owned(),
        ));
    };
    check_factors(long, "rope_factors_long.weight", rotary)?;
    check_factors(short, "rope_factors_short.weight", rotary)?;
    scaling.kind = ScalingKind::Longrope;
    scaling.long_factor = Some(long.clone());
    scaling.short_factor = Some(short.clone());
    scaling.factor = factor.as_ref().map(|(f, _)| *f);
    let (orig, orig_source) = original.ok_or_else(|| {
        ConfigError(format!(
            "has LongRoPE without {}.rope.scaling.original_context_length",
            keys.arch
        ))
    })?;
    scaling.original_max_position_embeddings = Some(orig);
    sources.push(("original_max_position_embeddings", orig_source));
    sources.push((
        "long_factor",
        "rope_factors_long.weight (tensor)".to_owned(),
    ));
    sources.push((
        "short_factor",
        "rope_factors_short.weight (tensor)".to_owned(),
    ));
    if let Some((a, source)) = attn {
        scaling.attention_factor = Some(a);
        sources.push(("attention_factor", source));
    }
    Ok(())
}

/// Where the pair layout comes from: llama.cpp's table of architectures.
fn layout_source(rope: LlamaCppRope, arch: &str) -> String {
    match rope {
        LlamaCppRope::Normal => format!(
            "llama.cpp's table: {arch} runs normal RoPE, pairs (2i, 2i+1); where Hugging Face's model rotates halves, the converter permuted the q and k rows into these pairs"
        ),
        _ => format!(
            "llama.cpp's table: {arch} runs NeoX RoPE, pairs (i, i + R/2), as Hugging Face's rotate_half"
        ),
    }
}

/// M-RoPE's sections, for the architectures that run it.
fn mrope_of(keys: &Keys, rope: LlamaCppRope) -> Option<Mrope> {
    if !matches!(rope, LlamaCppRope::Mrope | LlamaCppRope::Imrope) {
        return None;
    }
    let key = keys.key("rope.dimension_sections");
    match keys.metadata.get(&key) {
        Some(MetaValue::Numbers(sections)) => Some(Mrope {
            section: sections
                .iter()
                .filter(|n| **n > 0.0)
                .map(|n| *n as usize)
                .collect(),
            interleaved: rope == LlamaCppRope::Imrope,
            source: key,
        }),
        _ => None,
    }
}

/// Gemma 3's sliding-window layers: their own base and width, and no scaling. `full` is then
/// named as the full-attention layers.
fn sliding_layer(
    keys: &Keys,
    full: &mut RopeLayer,
    widths: &Widths,
    context: Option<usize>,
) -> Result<Option<RopeLayer>, ConfigError> {
    let Some((swa_base, swa_source)) = keys.number("rope.freq_base_swa")? else {
        return Ok(None);
    };
    let (rotary, head_dim) = (widths.rotary, widths.head_dim);
    let (swa_rotary, swa_rotary_source) = keys.count("rope.dimension_count_swa")?.unwrap_or((
        rotary,
        format!("{}.rope.dimension_count (no _swa of its own)", keys.arch),
    ));
    if swa_rotary < 2 || swa_rotary % 2 != 0 || swa_rotary > head_dim {
        return Err(ConfigError(format!(
            "rotates {swa_rotary} ({swa_rotary_source}) of a head of {head_dim} in its sliding-window layers"
        )));
    }
    crate::encoding::check_base("freq_base_swa", swa_base).map_err(|_| {
        ConfigError(format!(
            "\"{swa_source}\" is {swa_base}; it must be a finite number greater than 1"
        ))
    })?;
    full.layer_type = Some("full_attention".to_owned());
    let mut sliding = full.clone();
    sliding.layer_type = Some("sliding_attention".to_owned());
    sliding.base = swa_base;
    sliding.freqs = Box::new(RopeFrequencies {
        rotary_dim: (swa_rotary < head_dim).then_some(swa_rotary),
        scaling: RopeScaling {
            max_position_embeddings: context,
            ..Default::default()
        },
        given: None,
    });
    sliding.sources = sliding
        .sources
        .into_iter()
        .filter(|(id, _)| {
            !matches!(
                *id,
                "factor"
                    | "inv_freq"
                    | "original_max_position_embeddings"
                    | "beta_fast"
                    | "beta_slow"
                    | "long_factor"
                    | "short_factor"
                    | "attention_factor"
            )
        })
        .map(|(id, source)| match id {
            "base" => (id, swa_source.clone()),
            "rotary_dim" => (id, swa_rotary_source.clone()),
            "scaling" => (
                id,
                "llama.cpp: no scaling on sliding-window layers".to_owned(),
            ),
            _ => (id, source),
        })
        .collect();
    Ok(Some(sliding))
}
