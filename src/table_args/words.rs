//! A table's specification written back as `poslab table`'s words (`KIND --option value ...`):
//! what the app's export dialog prints beside a saved table, and what reads back, through
//! [`super::table_spec_from_words`], to the same specification. Each option group writes its
//! own part ([`crate::options::sinusoidal::write`], [`crate::options::rope::write`]).

use crate::encoding::alibi::AlibiMode;
use crate::encoding::rope::CachePart;
use crate::encoding::{PairLayout, sinusoidal::SinusoidalParams};
use crate::engine::TableSpec;
use crate::options::{Words, rope, sinusoidal, value_name};

/// The kind and options that make `spec`; `None` for a table no options describe (one made
/// from an array: `rope-apply`, a resampled `--input`, learned frequencies, token ids; or one
/// only the app draws).
pub fn table_words(spec: &TableSpec) -> Option<Vec<String>> {
    let mut words = Words::default();
    let kind = write(spec, &mut words)?;
    let mut all = vec![kind];
    all.extend(words.into_vec());
    Some(all)
}

/// Writes the options of `spec` and gives its kind's name.
fn write(spec: &TableSpec, words: &mut Words) -> Option<String> {
    match spec {
        TableSpec::Sinusoidal(p) | TableSpec::Similarity(p) => sin_cos(p, words),
        TableSpec::DotDecay { params, anchor } => {
            sin_cos(params, words);
            words.option("anchor", anchor);
        }
        TableSpec::RopeInvFreq {
            dim,
            base,
            seq,
            freqs,
        } => {
            words.option("dim", dim);
            rope::write(freqs, *base, words);
            if *seq > 0 && freqs.given.is_none() && freqs.scaling.kind.reads_current_length() {
                words.option("seq", seq);
            }
        }
        TableSpec::RopeAttentionFactor { dim, base, freqs } => {
            words.option("dim", dim);
            rope::write(freqs, *base, words);
        }
        TableSpec::RopeAngles { params, freqs } => {
            positions(params.seq, params.dim, params.start, words);
            rope::write(freqs, params.base, words);
        }
        TableSpec::RopeCache {
            params,
            freqs,
            layout,
            part,
        } => {
            positions(params.seq, params.dim, params.start, words);
            rope::write(freqs, params.base, words);
            let format = match (part, layout) {
                (CachePart::Cos | CachePart::Sin, _) => {
                    words.option("layout", value_name(*layout));
                    None
                }
                (CachePart::CosSin, PairLayout::Half) => Some("vllm"),
                (CachePart::CosSin, PairLayout::Interleaved) => Some("pairs"),
                (CachePart::CosSinHalves, _) => Some("halves"),
            };
            if let Some(format) = format {
                words.option("format", format);
            }
        }
        TableSpec::RopeUnseen(p) => {
            words.option("seq", p.seq);
            words.option("dim", p.model.head_dim);
            words.option("train-len", p.model.trained);
            rope::write(&p.freqs, p.model.base, words);
        }
        TableSpec::AlibiSlopes { heads } => words.option("heads", heads),
        TableSpec::Alibi { params, head } => {
            alibi(params.heads, params.seq, params.mode, words);
            optional_head(*head, words);
        }
        TableSpec::AlibiKeys {
            heads,
            seq,
            form,
            head,
        } => {
            alibi(*heads, *seq, AlibiMode::Causal, words);
            words.option("form", value_name(*form));
            optional_head(*head, words);
        }
        TableSpec::AlibiWindow {
            params,
            queries,
            zero_heads,
            head,
        } => {
            alibi(params.heads, params.seq, params.mode, words);
            words.option("queries", queries);
            words.option("zero-heads", zero_heads);
            optional_head(*head, words);
        }
        TableSpec::Alibi2d { params, head } => {
            words.option("heads", params.heads);
            words.option("grid-h", params.grid.grid_h);
            words.option("grid-w", params.grid.grid_w);
            optional_head(*head, words);
        }
        TableSpec::PatchDistance { grid, metric } => {
            words.option("grid-h", grid.grid_h);
            words.option("grid-w", grid.grid_w);
            words.option("metric", value_name(*metric));
        }
        TableSpec::T5Buckets(p) => {
            words.option("seq", p.seq);
            words.option("num-buckets", p.num_buckets);
            words.option("max-distance", p.max_distance);
            words.option("bidirectional", p.bidirectional);
        }
        TableSpec::RelativeClip(p) => {
            words.option("seq", p.seq);
            words.option("max-relative", p.max_relative);
        }
        TableSpec::Binary(p) => positions(p.seq, p.dim, p.start, words),
        TableSpec::Registered(table) => words.extend(table.kind().option_words()?),
        _ => return None,
    }
    Some(spec.kind_name().to_owned())
}

/// A sin/cos table's sizes, its group's options and its amplitude (the table's `--scale`).
fn sin_cos(params: &SinusoidalParams, words: &mut Words) {
    words.option("seq", params.seq);
    words.option("dim", params.dim);
    sinusoidal::write(params, words);
    if params.amplitude != 1.0 {
        words.option("scale", params.amplitude);
    }
}

/// The rows of a table of positions: how many, how wide, from where.
fn positions(seq: usize, dim: usize, start: u64, words: &mut Words) {
    words.option("seq", seq);
    words.option("dim", dim);
    if start != 0 {
        words.option("start", start);
    }
}

fn alibi(heads: usize, seq: usize, mode: AlibiMode, words: &mut Words) {
    words.option("heads", heads);
    words.option("seq", seq);
    if mode != AlibiMode::Causal {
        words.option("mode", value_name(mode));
    }
}

fn optional_head(head: Option<usize>, words: &mut Words) {
    if let Some(head) = head {
        words.option("head", head);
    }
}
