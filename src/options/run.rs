//! How a command that computes runs: where it writes, whether long work may start, whether
//! progress is shown.

use std::path::PathBuf;

use clap::Args;

/// The file a command writes.
#[derive(Debug, Clone, Default, Args)]
pub struct OutputFile {
    /// Output file, its format chosen by the extension
    #[arg(short, long, value_name = "FILE", required = true)]
    pub output: Option<PathBuf>,
}

/// Consent to work estimated to take long.
#[derive(Debug, Clone, Default, Args)]
pub struct Consent {
    /// Compute work estimated to take more than 10 minutes here (refused otherwise, with the
    /// estimate)
    #[arg(long)]
    pub yes: bool,
}

/// Whether progress is shown on stderr.
#[derive(Debug, Clone, Default, Args)]
pub struct Progress {
    /// No progress bar or spinner (shown on stderr while long work runs, when it is a
    /// terminal)
    #[arg(long)]
    pub quiet: bool,
}
