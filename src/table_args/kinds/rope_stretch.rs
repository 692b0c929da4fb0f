//! `rope-stretch`: how many times slower each RoPE pair turns under a context-extension
//! scaling than without it, `[R/2]` (1 where the scaling leaves a pair alone, the factor where
//! it interpolates fully). The maths is [`RopeFrequencies::stretch`].

use super::super::reader::Reader;
use super::super::{CliError, TableSpec, rope_frequencies};
use super::Entry;
use crate::encoding::rope_scaling::RopeFrequencies;
use crate::encoding::{self, ParamError};
use crate::engine::RegisteredKind;
use crate::engine::registered::Values;
use crate::import::model_config::PositionEncoding;
use crate::options::Words;

pub(super) const ENTRY: Entry = Entry {
    options: &[
        "dim",
        "base",
        "seq",
        "dtype",
        "rotary_dim",
        "partial_rotary_factor",
        "scaling",
    ],
    read,
    fits_config: |encoding| matches!(encoding, PositionEncoding::Rope { .. }),
};

/// A head of `dim` under `freqs` at the current length `seq` (what dynamic NTK and LongRoPE
/// read; 0 when none is given).
#[derive(Debug, Clone, PartialEq)]
struct Stretch {
    dim: usize,
    base: f64,
    seq: usize,
    freqs: RopeFrequencies,
}

fn read(r: &Reader) -> Result<TableSpec, CliError> {
    let seq = r.current_length()?;
    let dim = r.even_dim()?;
    let args = r.args;
    Ok(TableSpec::registered(Stretch {
        dim,
        base: args.sinusoidal.base(),
        seq,
        freqs: rope_frequencies(args, dim)?,
    }))
}

impl RegisteredKind for Stretch {
    fn kind_name(&self) -> &'static str {
        "rope-stretch"
    }

    fn validate(&self) -> Result<(), ParamError> {
        encoding::check_even_dim("dim", self.dim)?;
        self.freqs.validate(self.dim, self.base)
    }

    fn axes(&self) -> Option<Vec<usize>> {
        Some(vec![self.freqs.rotary(self.dim) / 2])
    }

    fn size_options(&self) -> &'static str {
        "--dim"
    }

    fn cpu_only_reason(&self) -> &'static str {
        "it is one number a pair"
    }

    fn option_words(&self) -> Option<Vec<String>> {
        let mut words = Words::default();
        words.option("dim", self.dim);
        crate::options::rope::write(&self.freqs, self.base, &mut words);
        if self.seq > 0 {
            words.option("seq", self.seq);
        }
        Some(words.into_vec())
    }

    fn values(&self) -> Values<'_> {
        let stretch = self.freqs.stretch(self.dim, self.base, self.seq);
        Values::Real(Box::new(move |_, _, pair| stretch[pair]))
    }
}
