//! How a file is read and compared: the tensor of a `.safetensors` file, the tolerances of a
//! check, and what the file should hold (`--as`).

use clap::Args;

/// The tolerances a check uses unless given.
pub const ATOL: f64 = 1e-5;
pub const RTOL: f64 = 1e-5;

/// A file's tensor and a check's tolerances.
#[derive(Debug, Clone, Default, Args)]
pub struct FileOptions {
    /// The tensor of a .safetensors file holding several
    #[arg(long, value_name = "NAME")]
    pub tensor: Option<String>,

    /// Absolute tolerance: every element within atol + rtol·|reference| (default 1e-5)
    #[arg(long, value_name = "A", allow_hyphen_values = true)]
    pub atol: Option<f64>,

    /// Relative tolerance (default 1e-5)
    #[arg(long, value_name = "R", allow_hyphen_values = true)]
    pub rtol: Option<f64>,
}

impl FileOptions {
    pub fn atol(&self) -> f64 {
        self.atol.unwrap_or(ATOL)
    }

    pub fn rtol(&self) -> f64 {
        self.rtol.unwrap_or(RTOL)
    }
}

/// What a file should hold: `--as`, as the check figure reads it (`poslab check` takes the
/// kind and its options as words of their own, and `--as permuted-from` a second file).
#[derive(Debug, Clone, Default, Args)]
pub struct ExpectedOptions {
    /// check: what the table should be, as poslab table's words in one argument, e.g.
    /// --as "rope-angles --seq 4096 --dim 128" (default: identify it)
    #[arg(
        long = "as",
        id = "expected",
        value_name = "KIND OPTIONS",
        allow_hyphen_values = true
    )]
    pub expected: Option<String>,
}
