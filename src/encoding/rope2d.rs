//! 2D rotary embeddings for vision transformers (Heo et al. 2024, naver-ai/rope-vit): the
//! axial angles with fixed frequencies, and the mixed angles with learned frequencies.

use super::PairLayout;
use ndarray::{Array2, ArrayView2};

use super::grid::GridParams;
use super::rope_axes::AxesValues;
use super::{ParamError, check_base, check_count, check_dim_multiple_of_4, fill_2d};

/// Which coordinate the first `dim/4` angles of an axial 2D RoPE turn with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum AxisOrder {
    /// `x` first: rope-vit, and HunyuanDiT (whose "h" half is computed from the column
    /// coordinate, `np.meshgrid(grid_w, grid_h)`).
    #[default]
    Xy,
    /// `y` first: timm's grids by 'ij' indexing, rotary-embedding-torch's
    /// `get_axial_freqs(H, W)`.
    Yx,
}

/// Parameters of an axial 2D RoPE: rope-vit's angles, and the caches timm, HunyuanDiT and
/// rotary-embedding-torch make from the same angles.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AxialParams {
    pub grid: GridParams,
    /// Head dimension, a multiple of 4.
    pub dim: usize,
    /// 100 in rope-vit, 10000 in timm, HunyuanDiT and rotary-embedding-torch.
    pub theta: f64,
    /// The angles, or their cosines or sines.
    pub values: AxesValues,
    /// `None`: each of the `dim/2` values once (rope-vit's angles). `Interleaved`: each twice
    /// in a row (timm, HunyuanDiT, rotary-embedding-torch); `Half`: the row of `dim/2` values
    /// twice (timm's `rotate_half=True`).
    pub layout: Option<PairLayout>,
    pub axis_order: AxisOrder,
    /// What multiplies each coordinate, `(y, x)`: timm's EVA scheme for a grid other than the
    /// pretraining one (`ref_feat_shape / feat_shape`), HunyuanDiT's crop region.
    pub position_scale: [f64; 2],
}

impl Default for AxialParams {
    fn default() -> Self {
        Self {
            grid: GridParams::default(),
            dim: 64,
            theta: 100.0,
            values: AxesValues::Angles,
            layout: None,
            axis_order: AxisOrder::Xy,
            position_scale: [1.0, 1.0],
        }
    }
}

impl AxialParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        self.grid.validate()?;
        check_dim_multiple_of_4("dim", self.dim)?;
        super::grid::check_grid_position_scale(&self.position_scale)?;
        check_base("theta", self.theta)
    }

    /// `f_k = 1 / theta^(4k/dim)` for `k < dim/4`, shared by both axes.
    pub fn frequencies(&self) -> Vec<f64> {
        (0..self.dim / 4)
            .map(|k| 1.0 / self.theta.powf((4 * k) as f64 / self.dim as f64))
            .collect()
    }

    /// Values per patch: `dim/2` angles, each once or (with a layout) twice.
    pub fn columns(&self) -> usize {
        match self.layout {
            None => self.dim / 2,
            Some(_) => self.dim,
        }
    }

    /// Whether this is rope-vit's table of angles, each once, x first, at unscaled
    /// coordinates: what the GPU engine computes.
    pub fn is_plain_angles(&self) -> bool {
        self.values == AxesValues::Angles
            && self.layout.is_none()
            && self.axis_order == AxisOrder::Xy
            && self.position_scale == [1.0, 1.0]
    }

    /// Column `col`'s angle of patch `patch`, given [`Self::frequencies`].
    pub fn angle(&self, freqs: &[f64], patch: usize, col: usize) -> f64 {
        let (quarter, half) = (self.dim / 4, self.dim / 2);
        let angle = match self.layout {
            None => col,
            Some(PairLayout::Interleaved) => col / 2,
            Some(PairLayout::Half) => col % half,
        };
        let (x, y) = self.grid.patch_xy(patch);
        let [sy, sx] = self.position_scale;
        let (x, y) = (x as f64 * sx, y as f64 * sy);
        let (first, second) = match self.axis_order {
            AxisOrder::Xy => (x, y),
            AxisOrder::Yx => (y, x),
        };
        let coordinate = if angle < quarter { first } else { second };
        coordinate * freqs[angle % quarter]
    }

    /// Value `col` of patch `patch`, given [`Self::frequencies`]: the angle, or its cosine or
    /// sine.
    pub fn value(&self, freqs: &[f64], patch: usize, col: usize) -> f64 {
        let angle = self.angle(freqs, patch, col);
        match self.values {
            AxesValues::Angles => angle,
            AxesValues::Cos => angle.cos(),
            AxesValues::Sin => angle.sin(),
        }
    }
}

/// The `[P, dim/2]` angles of rope-vit `compute_axial_cis` (the first `dim/4` columns are
/// `x f_k`, the next `dim/4` are `y f_k`), or the values and layout `params` ask for.
pub fn axial_angles(params: &AxialParams) -> Result<Array2<f64>, ParamError> {
    params.validate()?;
    let freqs = params.frequencies();
    Ok(fill_2d(
        params.grid.patches(),
        params.columns(),
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
