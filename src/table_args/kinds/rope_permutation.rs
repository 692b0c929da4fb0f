//! `rope-permutation`: the row order of a projection permuted between RoPE's pair layouts, as
//! int32 indices (`w[table]` permutes `w`). The maths is [`crate::encoding::pair_permutation`].

use super::super::reader::Reader;
use super::super::{CliError, TableSpec, required};
use super::Entry;
use crate::encoding::ParamError;
use crate::encoding::pair_permutation::PermutationParams;
use crate::engine::registered::Values;
use crate::engine::{RegisteredKind, ValueKind};
use crate::options::Words;

pub(super) const ENTRY: Entry = Entry {
    options: &["heads", "head_dim", "direction"],
    read,
    fits_config: |_| false,
};

fn read(r: &Reader) -> Result<TableSpec, CliError> {
    Ok(TableSpec::registered(PermutationParams {
        heads: r.heads()?,
        head_dim: required(
            r.kind,
            "head_dim",
            r.args.permutation.head_dim,
            "the rows of one head, even, 2 to 1048576",
        )?,
        direction: r.args.permutation.direction,
    }))
}

impl RegisteredKind for PermutationParams {
    fn kind_name(&self) -> &'static str {
        "rope-permutation"
    }

    fn validate(&self) -> Result<(), ParamError> {
        PermutationParams::validate(self)
    }

    fn axes(&self) -> Option<Vec<usize>> {
        Some(vec![self.rows()])
    }

    fn value_kind(&self) -> ValueKind {
        ValueKind::Index
    }

    fn size_options(&self) -> &'static str {
        "--heads or --head-dim"
    }

    fn cpu_only_reason(&self) -> &'static str {
        "it is a row order, a few integers a head"
    }

    fn option_words(&self) -> Option<Vec<String>> {
        let mut words = Words::default();
        words.option("heads", self.heads);
        words.option("head-dim", self.head_dim);
        words.option("direction", self.direction.name());
        Some(words.into_vec())
    }

    fn values(&self) -> Values<'_> {
        Values::Index(Box::new(move |_, _, row| self.source(row) as i32))
    }
}
