//! What every figure reads from `poslab figure`'s options (sizes, base, heads, counts in
//! their ranges), and the words a figure's settings are written back as for the app's export
//! dialog ([`Words`]). The options themselves are [`super::FigureArgs`].

use super::{FigureArgs, FigureView};
use crate::encoding::ParamError;
use crate::table_args::CliError;

/// A whole-number option, with the app's default when not given.
pub(super) fn count(
    id: &'static str,
    value: Option<i64>,
    default: usize,
    range: std::ops::RangeInclusive<usize>,
) -> Result<usize, CliError> {
    let Some(value) = value else {
        return Ok(default);
    };
    usize::try_from(value)
        .ok()
        .filter(|v| range.contains(v))
        .ok_or_else(|| {
            CliError::usage(
                ParamError::new(
                    id,
                    value,
                    format!("use {} to {}", range.start(), range.end()),
                )
                .to_string(),
            )
        })
}

/// The number of positions of a table figure (sinusoidal, dot-decay, alibi, corkscrew).
pub(super) fn seq(args: &FigureArgs) -> Result<usize, CliError> {
    count(
        "seq",
        args.sizes.seq,
        crate::encoding::defaults::SEQ,
        1..=1 << 30,
    )
}

/// The width of a table figure's rows.
pub(super) fn dim(args: &FigureArgs) -> Result<usize, CliError> {
    count(
        "dim",
        args.sizes.dim,
        crate::encoding::defaults::DIM,
        2..=1 << 20,
    )
}

/// The frequency base (checked by the parameters that use it).
pub(super) fn base(args: &FigureArgs) -> f64 {
    args.sinusoidal.base()
}

/// The first position of a table figure.
pub(super) fn start(args: &FigureArgs) -> Result<u64, CliError> {
    // 2^53 - 1, the last integer an f64 holds exactly (less where usize is 32 bits: the web).
    let last = ((1u64 << 53) - 1).min(usize::MAX as u64) as usize;
    Ok(count("start", args.sinusoidal.start, 0, 0..=last)? as u64)
}

/// The attention heads of ALiBi figures.
pub(super) fn heads(args: &FigureArgs) -> Result<usize, CliError> {
    count(
        "heads",
        args.sizes.heads,
        crate::encoding::defaults::HEADS,
        1..=1 << 16,
    )
}

pub use crate::options::Words;

pub use crate::options::value_name;

/// The view's name on the command line.
pub fn view_name(view: FigureView) -> String {
    value_name(view)
}
