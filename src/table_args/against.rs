//! `poslab config FILE --against OTHER`: two configs of one model (a `.gguf` and the
//! `config.json` it was converted from, or two versions of a config) compared layer type by
//! layer type: the rotary width, every pair's inverse frequency, the attention factor and the
//! pair layout, each named where it differs.

use std::path::Path;

use crate::encoding::PairLayout;
use crate::import::model_config::{ModelConfig, RopeLayer};

/// The largest relative difference two inverse frequencies may have and be the same: a GGUF
/// file stores its base and factors in float32.
const SAME_FREQUENCY: f64 = 1e-5;

/// Each layer type's RoPE in `ours` beside `theirs` (read from `path`), a line per setting,
/// and whether every one agrees.
pub fn compare(ours: &ModelConfig, theirs: &ModelConfig, path: &Path) -> (Vec<String>, bool) {
    let mut lines = vec![format!(
        "against {} ({}):",
        crate::import::printable(&path.display().to_string()),
        theirs.name
    )];
    if ours.rope_layers.is_empty() || theirs.rope_layers.is_empty() {
        lines.push(
            "  differ: only RoPE models are compared, and one of the two has no RoPE".to_owned(),
        );
        lines.push("result: they differ".to_owned());
        return (lines, false);
    }
    let mut agree = true;
    for layer in &ours.rope_layers {
        let other = theirs
            .rope_layers
            .iter()
            .find(|o| o.layer_type == layer.layer_type)
            .or_else(|| (theirs.rope_layers.len() == 1).then(|| &theirs.rope_layers[0]));
        let indent = match &layer.layer_type {
            Some(name) => {
                lines.push(format!("  layer type {name}:"));
                "    "
            }
            None => "  ",
        };
        let Some(other) = other else {
            lines.push(format!("{indent}differ: the other has no such layer type"));
            agree = false;
            continue;
        };
        for (line, same) in compare_rope(layer, other) {
            agree &= same;
            lines.push(format!("{indent}{line}"));
        }
    }
    for other in &theirs.rope_layers {
        if !ours
            .rope_layers
            .iter()
            .any(|l| l.layer_type == other.layer_type)
            && ours.rope_layers.len() > 1
        {
            lines.push(format!(
                "  layer type {}: differ: only the other has it",
                other.layer_type.as_deref().unwrap_or("(one for all)")
            ));
            agree = false;
        }
    }
    lines.push(
        if agree {
            "result: they agree"
        } else {
            "result: they differ"
        }
        .to_owned(),
    );
    (lines, agree)
}

/// One RoPE beside another: each setting's line, and whether it agrees.
fn compare_rope(ours: &RopeLayer, theirs: &RopeLayer) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let (rotary, other_rotary) = (
        ours.freqs.rotary(ours.head_dim),
        theirs.freqs.rotary(theirs.head_dim),
    );
    out.push(if rotary == other_rotary {
        (format!("rotary dim: agree ({rotary})"), true)
    } else {
        (
            format!("rotary dim: differ: {rotary} here, {other_rotary} there"),
            false,
        )
    });
    let valid = ours.freqs.validate(ours.head_dim, ours.base).is_ok()
        && theirs.freqs.validate(theirs.head_dim, theirs.base).is_ok();
    if !valid {
        out.push((
            "differ: one of the two is not a RoPE poslab can compute".to_owned(),
            false,
        ));
        return out;
    }
    if let Some(line) = compare_scalings(ours, theirs) {
        out.push(line);
    }
    if rotary == other_rotary {
        out.push(compare_frequencies(ours, theirs, rotary / 2));
    }
    let (a, b) = (
        ours.freqs.attention_factor(),
        theirs.freqs.attention_factor(),
    );
    out.push(if (a - b).abs() <= 1e-6 * b.abs().max(1.0) {
        (format!("attention factor: agree ({a})"), true)
    } else {
        (
            format!("attention factor: differ: {a} here, {b} there"),
            false,
        )
    });
    out.push(compare_layouts(ours, theirs));
    out
}

/// The scalings by name and factor, where both are formulas (frequencies given outright, as
/// a GGUF's `rope_freqs`, are compared pair by pair only).
fn compare_scalings(ours: &RopeLayer, theirs: &RopeLayer) -> Option<(String, bool)> {
    if ours.freqs.given.is_some() || theirs.freqs.given.is_some() {
        return None;
    }
    let name = |l: &RopeLayer| {
        let s = &l.freqs.scaling;
        match s.factor {
            Some(f) if s.kind != crate::encoding::rope_scaling::ScalingKind::None => {
                format!("{} factor {f}", s.kind.name())
            }
            _ => s.kind.name().to_owned(),
        }
    };
    let (a, b) = (name(ours), name(theirs));
    Some(if a == b {
        (format!("scaling: agree ({a})"), true)
    } else {
        (format!("scaling: differ: {a} here, {b} there"), false)
    })
}

/// Every pair's inverse frequency, at each current length where a scaling changes them
/// (dynamic NTK and LongRoPE beyond the original context).
fn compare_frequencies(ours: &RopeLayer, theirs: &RopeLayer, pairs: usize) -> (String, bool) {
    let mut lengths = vec![1usize];
    for s in [&ours.freqs.scaling, &theirs.freqs.scaling] {
        lengths.extend(
            [
                s.original_max_position_embeddings,
                s.max_position_embeddings,
            ]
            .into_iter()
            .flatten()
            .map(|n| n.saturating_add(1)),
        );
    }
    lengths.sort_unstable();
    lengths.dedup();
    let mut worst = 0f64;
    let mut first_bad = None;
    for &seq in &lengths {
        let a = ours.freqs.inv_freq(ours.head_dim, ours.base, seq);
        let b = theirs.freqs.inv_freq(theirs.head_dim, theirs.base, seq);
        for (pair, (x, y)) in a.iter().zip(&b).enumerate() {
            let relative = (x - y).abs() / y.abs().max(f64::MIN_POSITIVE);
            worst = worst.max(relative);
            if relative > SAME_FREQUENCY && first_bad.is_none() {
                first_bad = Some((pair, seq, *x, *y));
            }
        }
    }
    match first_bad {
        None => (
            format!(
                "inverse frequencies: agree, {pairs} pairs (largest relative difference {worst:.1e}{})",
                if worst > 0.0 {
                    ", float32's rounding"
                } else {
                    ""
                }
            ),
            true,
        ),
        Some((pair, seq, x, y)) => (
            format!(
                "inverse frequencies: differ from pair {pair} of {pairs}{}: {x} here, {y} there{}",
                if lengths.len() > 1 {
                    format!(" (at length {seq})")
                } else {
                    String::new()
                },
                if ours.base == theirs.base {
                    String::new()
                } else {
                    format!("; base {} here, {} there", ours.base, theirs.base)
                }
            ),
            false,
        ),
    }
}

/// The pair layouts, where a GGUF's interleaved pairs on permuted weights agree with the
/// halves of the config it was converted from.
fn compare_layouts(ours: &RopeLayer, theirs: &RopeLayer) -> (String, bool) {
    let permuted = |l: &RopeLayer| {
        l.sources
            .iter()
            .any(|(id, s)| *id == "layout" && s.contains("converter permuted"))
    };
    match (ours.layout, theirs.layout) {
        (x, y) if x == y => (format!("pair layout: agree ({})", layout_name(x)), true),
        (PairLayout::Interleaved, PairLayout::Half) if permuted(ours) => (
            "pair layout: agree: interleaved pairs here, on q and k rows that llama.cpp's converter permuted from the halves there (the same scores)".to_owned(),
            true,
        ),
        (PairLayout::Half, PairLayout::Interleaved) if permuted(theirs) => (
            "pair layout: agree: halves here, interleaved pairs there on q and k rows that llama.cpp's converter permuted from them (the same scores)".to_owned(),
            true,
        ),
        (x, y) => (
            format!(
                "pair layout: differ: {} here, {} there",
                layout_name(x),
                layout_name(y)
            ),
            false,
        ),
    }
}

fn layout_name(layout: PairLayout) -> &'static str {
    match layout {
        PairLayout::Half => "halves",
        PairLayout::Interleaved => "interleaved",
    }
}
