//! Every option of poslab, declared once, in groups: one per encoding family (sinusoidal, RoPE,
//! scaling, axes, ALiBi, 2D grids, relative), and the sizes, positions, arithmetic, file
//! reading and running that several families share. A group is a clap `Args` struct: `poslab
//! table`, `figure`, `check`, `identify` and `app` flatten the groups they take, so an option
//! means one thing wherever it is typed. The same words read from a key/value map
//! ([`keywords`]: the Python keywords, the web page's query) parse through the same groups.
//! Defaults that several commands share live beside their group; what the app's controls
//! allow is in [`ranges`].

pub mod alibi;
pub mod arithmetic;
pub mod axes;
pub mod file;
pub mod grid2d;
pub mod keywords;
pub mod permutation;
pub mod positions;
pub mod ranges;
pub mod relative;
pub mod rope;
pub mod run;
pub mod scaling;
pub mod sinusoidal;
pub mod sizes;
pub mod words;

pub use alibi::{AlibiOptions, ModeArg};
pub use arithmetic::{ArithmeticArg, ArithmeticOptions};
pub use axes::AxesOptions;
pub use file::{ExpectedOptions, FileOptions};
pub use grid2d::Grid2dOptions;
pub use permutation::PermutationOptions;
pub use positions::PositionOptions;
pub use relative::RelativeOptions;
pub use rope::RopeOptions;
pub use run::{Consent, OutputFile, Progress};
pub use scaling::ScalingOptions;
pub use sinusoidal::SinusoidalOptions;
pub use sizes::SizeOptions;
pub use words::Words;

use clap::ValueEnum;

/// A failure to report: one line, and the process's exit status.
#[derive(Debug)]
pub struct CliError {
    pub message: String,
    pub exit_code: i32,
}

impl CliError {
    /// Bad input: exit status 2.
    pub fn usage(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            exit_code: 2,
        }
    }

    /// A failure while working (a write that failed half way): exit status 1.
    pub fn runtime(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            exit_code: 1,
        }
    }
}

impl From<crate::encoding::ParamError> for CliError {
    fn from(error: crate::encoding::ParamError) -> Self {
        CliError::usage(error.to_string())
    }
}

/// An option as typed, from its id: `--rotary-dim` for `rotary_dim`.
pub fn flag(id: &str) -> String {
    format!("--{}", id.replace('_', "-"))
}

/// How the command line spells a value of one of its enums.
pub fn value_name(value: impl ValueEnum) -> String {
    value
        .to_possible_value()
        .map(|v| v.get_name().to_owned())
        .unwrap_or_default()
}
