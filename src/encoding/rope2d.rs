//! 2D rotary embeddings for vision transformers (Heo et al. 2024, naver-ai/rope-vit): the
//! axial angles with fixed frequencies, and the mixed angles with learned frequencies.

use ndarray::{Array2, ArrayView2, Zip};

use super::grid::GridParams;
use super::{ParamError, check_base, check_count, check_dim_multiple_of_4};

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
}

/// The `[P, dim/2]` angles of rope-vit `compute_axial_cis`: the first `dim/4` columns are
/// `x f_k`, the next `dim/4` are `y f_k`.
pub fn axial_angles(params: &AxialParams) -> Result<Array2<f64>, ParamError> {
    params.validate()?;
    let freqs = params.frequencies();
    let quarter = freqs.len();
    let mut angles = Array2::<f64>::zeros((params.grid.patches(), 2 * quarter));
    Zip::indexed(angles.rows_mut()).par_for_each(|k, mut row| {
        let (x, y) = params.grid.patch_xy(k);
        for (i, &f) in freqs.iter().enumerate() {
            row[i] = x as f64 * f;
            row[quarter + i] = y as f64 * f;
        }
    });
    Ok(angles)
}

/// The `[P, n]` angles of rope-vit `compute_mixed_cis`: `theta_x[k] x + theta_y[k] y`, from
/// `freqs` of shape `[2, n]` (row 0 `theta_x`, row 1 `theta_y`).
pub fn mixed_angles(grid: &GridParams, freqs: ArrayView2<f64>) -> Result<Array2<f64>, ParamError> {
    grid.validate()?;
    check_mixed_freqs_shape(freqs.shape())?;
    let (theta_x, theta_y) = (freqs.row(0), freqs.row(1));
    let mut angles = Array2::<f64>::zeros((grid.patches(), freqs.ncols()));
    Zip::indexed(angles.rows_mut()).par_for_each(|k, mut row| {
        let (x, y) = grid.patch_xy(k);
        for (i, angle) in row.iter_mut().enumerate() {
            *angle = theta_x[i] * x as f64 + theta_y[i] * y as f64;
        }
    });
    Ok(angles)
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
