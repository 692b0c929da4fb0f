//! A projection permuted between RoPE's pair layouts (`poslab check --as permuted-from`,
//! Python's `assert_permutation`): its key/value heads, head dim and the direction of the
//! permutation. The query heads are the sizes' `--heads`.

use clap::Args;

use super::CliError;
use crate::encoding::pair_permutation::{Direction, Question};

/// The most heads of either kind (as `--heads` allows).
pub const MAX_HEADS: i64 = 65_536;
/// The widest head.
pub const MAX_HEAD_DIM: i64 = 1 << 20;

/// How a projection's rows were permuted.
#[derive(Debug, Clone, Default, Args)]
pub struct PermutationOptions {
    /// Key/value heads of a grouped-query model, 1 to --heads and dividing it: the tensor is a
    /// key (or value) projection of K heads; --heads stays the query heads
    #[arg(long, value_name = "K", allow_hyphen_values = true)]
    pub kv_heads: Option<i64>,

    /// Rows of each head, 2 to 1048576, even (default: the tensor's rows over its heads;
    /// given, it is checked against them)
    #[arg(long, value_name = "D", allow_hyphen_values = true)]
    pub head_dim: Option<i64>,

    /// interleaved-to-half: Meta's or a GGUF's weights to Hugging Face's (the default);
    /// half-to-interleaved: Hugging Face's to llama.cpp's
    #[arg(long, value_enum, value_name = "WAY", default_value_t)]
    pub direction: Direction,
}

impl PermutationOptions {
    /// The question these options and the query heads ask, each count in its range.
    pub fn question(&self, heads: Option<i64>) -> Result<Question, CliError> {
        let heads = heads.ok_or_else(|| {
            CliError::usage("--heads is required: the model's query heads (num_attention_heads)")
        })?;
        let in_range = |name: &str, value: i64, min: i64, max: i64| {
            usize::try_from(value)
                .ok()
                .filter(|_| (min..=max).contains(&value))
                .ok_or_else(|| {
                    CliError::usage(format!("{name} {value} is not allowed: use {min} to {max}"))
                })
        };
        let query_heads = in_range("--heads", heads, 1, MAX_HEADS)?;
        let kv_heads = self
            .kv_heads
            .map(|k| in_range("--kv-heads", k, 1, MAX_HEADS))
            .transpose()?;
        if let Some(k) = kv_heads
            && (k > query_heads || query_heads % k != 0)
        {
            return Err(CliError::usage(format!(
                "--kv-heads {k} is not allowed with --heads {query_heads}: each kv head serves a whole group of query heads, so use a divisor of {query_heads}"
            )));
        }
        let head_dim = self
            .head_dim
            .map(|d| {
                in_range("--head-dim", d, 2, MAX_HEAD_DIM).and_then(|d| {
                    if d % 2 == 0 {
                        Ok(d)
                    } else {
                        Err(CliError::usage(format!(
                            "--head-dim {d} is not allowed: a head's rows pair up, so use an even number"
                        )))
                    }
                })
            })
            .transpose()?;
        Ok(Question {
            query_heads,
            kv_heads,
            head_dim,
            direction: self.direction,
        })
    }
}
