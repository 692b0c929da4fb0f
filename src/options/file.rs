//! How a file is read and compared: the tensor of a `.safetensors` file, and the tolerances of
//! a check.

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
