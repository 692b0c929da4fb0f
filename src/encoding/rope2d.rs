//! 2D rotary embeddings for vision transformers (Heo et al. 2024, naver-ai/rope-vit): the
//! axial angles with fixed frequencies, and the mixed angles with learned frequencies.

use ndarray::{Array2, ArrayView2};

use super::grid::GridParams;
use super::{ParamError, check_base, check_count, check_dim_multiple_of_4, fill_2d};

/// Parameters of rope-vit's axial 2D RoPE.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AxialParams {
    pub grid: GridParams,
    /// Head dimension, a multiple of 4.
    pub dim: usize,
    /// 100 in rope-vit.
    pub theta: f64,
}

impl Default for AxialParams {
    fn default() -> Self {
        Self {
            grid: GridParams::default(),
            dim: 64,
            theta: 100.0,
        }
    }
}

impl AxialParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        self.grid.validate()?;
        check_dim_multiple_of_4("dim", self.dim)?;
        check_base("theta", self.theta)
    }

    /// `f_k = 1 / theta^(4k/dim)` for `k < dim/4`, shared by both axes.
    pub fn frequencies(&self) -> Vec<f64> {
        (0..self.dim / 4)
            .map(|k| 1.0 / self.theta.powf((4 * k) as f64 / self.dim as f64))
            .collect()
    }

    /// Angle `col` of patch `patch`, given [`Self::frequencies`].
    pub fn value(&self, freqs: &[f64], patch: usize, col: usize) -> f64 {
        let quarter = self.dim / 4;
        let (x, y) = self.grid.patch_xy(patch);
        let coordinate = if col < quarter { x } else { y };
        coordinate as f64 * freqs[col % quarter]
    }
}

/// The `[P, dim/2]` angles of rope-vit `compute_axial_cis`: the first `dim/4` columns are
/// `x f_k`, the next `dim/4` are `y f_k`.
pub fn axial_angles(params: &AxialParams) -> Result<Array2<f64>, ParamError> {
    params.validate()?;
    let freqs = params.frequencies();
    Ok(fill_2d(
        params.grid.patches(),
        params.dim / 2,
        |patch, col| params.value(&freqs, patch, col),
    ))
}

/// The `[P, n]` angles of rope-vit `compute_mixed_cis`: `theta_x[k] x + theta_y[k] y`, from
/// `freqs` of shape `[2, n]` (row 0 `theta_x`, row 1 `theta_y`).
pub fn mixed_angles(grid: &GridParams, freqs: ArrayView2<f64>) -> Result<Array2<f64>, ParamError> {
    grid.validate()?;
    check_mixed_freqs_shape(freqs.shape())?;
    Ok(fill_2d(grid.patches(), freqs.ncols(), |patch, k| {
        mixed_value(grid, freqs, patch, k)
    }))
}

/// Angle `k` of patch `patch`: `theta_x[k] x + theta_y[k] y`.
pub fn mixed_value(grid: &GridParams, freqs: ArrayView2<f64>, patch: usize, k: usize) -> f64 {
    let (x, y) = grid.patch_xy(patch);
    freqs[[0, k]] * x as f64 + freqs[[1, k]] * y as f64
}

/// Checks the shape of the learned frequencies handed to [`mixed_angles`].
pub fn check_mixed_freqs_shape(shape: &[usize]) -> Result<(), ParamError> {
    match shape {
        [2, n] => check_count("freqs", *n, super::DIM_RANGE).map_err(|e| {
            ParamError::new(
                "freqs",
                format!("{shape:?}"),
                format!("its second axis {}", e.allowed),
            )
        }),
        _ => Err(ParamError::new(
            "freqs",
            format!("{shape:?}"),
            "must be a 2-D array [2, dim/2]: row 0 theta_x, row 1 theta_y",
        )),
    }
}
