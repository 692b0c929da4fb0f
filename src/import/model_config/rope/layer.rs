//! One RoPE's settings read from its merged fields: the rope type, base, head and rotary
//! widths, pair layout, the scaling's parameters and M-RoPE's sections, each with the field it
//! came from, and the lints of what transformers would ignore or refuse.

use serde_json::{Map, Value};

use super::super::{ConfigError, count, first_count, shown_value};
use super::{DEFAULT, KNOWN_KEYS, Lint, Mrope, Params, RopeLayer, attention_formula};
use crate::encoding::PairLayout;
use crate::encoding::rope_scaling::{RopeFrequencies, RopeScaling, ScalingKind};

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
    if let Some(interleave) = super::super::flag(top, "rope_interleave")? {
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
pub(super) fn layer(
    (top, prefix, model_type): (&Map<String, Value>, &str, &str),
    (heads, hidden): (Option<usize>, Option<usize>),
    (layer_type, layers): (Option<String>, Option<(usize, usize)>),
    (params, object_path): (Params, &str),
    nested: bool,
    lints: &mut Vec<Lint>,
) -> Result<RopeLayer, ConfigError> {
    let at = |key: &str| format!("{prefix}{key}");
    let mut sources: Vec<(&'static str, String)> = Vec::new();

    let (kind, type_name, type_source) = rope_type(&params, lints)?;

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

    let (head_dim, dim_source) = head_width(top, prefix, heads, hidden)?;
    let max_dim = *crate::encoding::DIM_RANGE.end();
    if head_dim < 2 || head_dim % 2 != 0 || head_dim > max_dim {
        return Err(ConfigError(format!(
            "has a head width of {head_dim}: RoPE needs an even width from 2 to {}",
            crate::numbers::thousands(max_dim as u64)
        )));
    }
    sources.push(("dim", dim_source));

    let (rotary_dim, rotary_source, given) = rotary_width(
        top,
        prefix,
        &params,
        (head_dim, base, kind),
        &mut sources,
        lints,
    )?;
    sources.push(("rotary_dim", rotary_source));

    let (layout, layout_source) = pair_layout(top, prefix, model_type)?;
    sources.push(("layout", layout_source));
    sources.push(("scaling", type_source));

    // The scaling's parameters.
    let context = count(top, "max_position_embeddings")?;
    let (original, original_source) = original_length(
        top,
        prefix,
        &params,
        (kind, context),
        (nested, object_path),
        lints,
    )?;
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

    let mrope = mrope_of(&params, &type_name)?;

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

/// The rotary width in force, where it came from, and the frequencies of an odd width.
type RotaryWidth = (Option<usize>, String, Option<Vec<f64>>);

/// The rotary width (`rotary_dim`, or `int(head_dim * partial_rotary_factor)`) and where it
/// came from; for an odd width, transformers' frequencies themselves.
fn rotary_width(
    top: &Map<String, Value>,
    prefix: &str,
    params: &Params,
    (head_dim, base, kind): (usize, f64, ScalingKind),
    sources: &mut Vec<(&'static str, String)>,
    lints: &mut Vec<Lint>,
) -> Result<RotaryWidth, ConfigError> {
    let at = |key: &str| format!("{prefix}{key}");
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
    Ok((rotary_dim, rotary_source, given))
}

/// The scaling a RoPE's `rope_type` (or older `type`) names, its name and where it came from.
fn rope_type(
    params: &Params,
    lints: &mut Vec<Lint>,
) -> Result<(ScalingKind, String, String), ConfigError> {
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
    Ok((kind, type_name, type_source))
}

/// The head width RoPE turns, and where it came from. DeepSeek's MLA rotates a separate
/// `qk_rope_head_dim`.
fn head_width(
    top: &Map<String, Value>,
    prefix: &str,
    heads: Option<usize>,
    hidden: Option<usize>,
) -> Result<(usize, String), ConfigError> {
    let at = |key: &str| format!("{prefix}{key}");
    Ok(match first_count(top, &["qk_rope_head_dim"])? {
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
    })
}

/// The pretraining length a scaling reads, and where it came from.
fn original_length(
    top: &Map<String, Value>,
    prefix: &str,
    params: &Params,
    (kind, context): (ScalingKind, Option<usize>),
    (nested, object_path): (bool, &str),
    lints: &mut Vec<Lint>,
) -> Result<(Option<usize>, String), ConfigError> {
    let at = |key: &str| format!("{prefix}{key}");
    let needs_original = matches!(
        kind,
        ScalingKind::Llama3 | ScalingKind::Yarn | ScalingKind::Longrope
    );
    let top_original = count(top, "original_max_position_embeddings")?;
    let own_original = params.count("original_max_position_embeddings")?;
    // Phi-3 keeps the pretraining length at the top, and transformers 5 prefers it there.
    Ok(match (nested, top_original, own_original) {
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
    })
}

/// M-RoPE's sections (`mrope_section`), which `rope_type` "mrope" needs.
fn mrope_of(params: &Params, type_name: &str) -> Result<Option<Mrope>, ConfigError> {
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
    Ok(mrope)
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
