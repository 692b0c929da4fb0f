//! Patch grids of vision transformers: raster order, distances between patches, and MAE's
//! fixed 2D sin-cos embedding.

use ndarray::Array2;

use super::fill_2d;

use super::{GRID_SIDE_RANGE, ParamError, check_base, check_count, check_dim_multiple_of_4};

/// A `grid_h x grid_w` grid of patches in raster order: patch `k` sits at column
/// `x = k % grid_w`, row `y = k / grid_w`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GridParams {
    pub grid_h: usize,
    pub grid_w: usize,
}

impl Default for GridParams {
    /// ViT-B/16 at 224 px.
    fn default() -> Self {
        Self {
            grid_h: 14,
            grid_w: 14,
        }
    }
}

impl GridParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        check_count("grid-h", self.grid_h, GRID_SIDE_RANGE)?;
        check_count("grid-w", self.grid_w, GRID_SIDE_RANGE)
    }

    /// Number of patches `P = grid_h * grid_w`.
    pub fn patches(&self) -> usize {
        self.grid_h * self.grid_w
    }

    /// Column and row `(x, y)` of patch `k`.
    pub fn patch_xy(&self, k: usize) -> (usize, usize) {
        (k % self.grid_w, k / self.grid_w)
    }

    /// Distance between the centres of patches `a` and `b`, in patch units.
    pub fn distance(&self, a: usize, b: usize, metric: DistanceMetric) -> f64 {
        let (ax, ay) = self.patch_xy(a);
        let (bx, by) = self.patch_xy(b);
        let dx = ax.abs_diff(bx) as f64;
        let dy = ay.abs_diff(by) as f64;
        match metric {
            DistanceMetric::Euclidean => (dx * dx + dy * dy).sqrt(),
            DistanceMetric::Manhattan => dx + dy,
            DistanceMetric::Chebyshev => dx.max(dy),
        }
    }
}

/// How the distance between two patches is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum DistanceMetric {
    /// sqrt(dx² + dy²), as 2D ALiBi uses.
    #[default]
    Euclidean,
    /// |dx| + |dy|.
    Manhattan,
    /// max(|dx|, |dy|).
    Chebyshev,
}

/// The `[P, P]` distances between every pair of patches.
pub fn patch_distance(
    grid: &GridParams,
    metric: DistanceMetric,
) -> Result<Array2<f64>, ParamError> {
    grid.validate()?;
    let patches = grid.patches();
    Ok(fill_2d(patches, patches, |a, b| {
        grid.distance(a, b, metric)
    }))
}

/// Parameters of MAE's 2D sin-cos embedding.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SinCos2dParams {
    pub grid: GridParams,
    /// Embedding width, a multiple of 4.
    pub dim: usize,
    /// 10000 in MAE.
    pub base: f64,
}

impl Default for SinCos2dParams {
    fn default() -> Self {
        Self {
            grid: GridParams::default(),
            dim: 768,
            base: 10_000.0,
        }
    }
}

impl SinCos2dParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        self.grid.validate()?;
        check_dim_multiple_of_4("dim", self.dim)?;
        check_base("base", self.base)
    }

    /// `omega_k = 1 / base^(k / (dim/4))` for `k < dim/4`.
    pub fn omega(&self) -> Vec<f64> {
        let quarter = self.dim / 4;
        (0..quarter)
            .map(|k| 1.0 / self.base.powf(k as f64 / quarter as f64))
            .collect()
    }

    /// Column `col` of patch `patch`, given [`Self::omega`].
    pub fn value(&self, omega: &[f64], patch: usize, col: usize) -> f64 {
        let quarter = self.dim / 4;
        let (x, y) = self.grid.patch_xy(patch);
        let coordinate = if col < 2 * quarter { x } else { y };
        let angle = coordinate as f64 * omega[col % quarter];
        if (col / quarter).is_multiple_of(2) {
            angle.sin()
        } else {
            angle.cos()
        }
    }
}

/// The `[P, dim]` table of MAE `get_2d_sincos_pos_embed`, generalised to rectangular grids.
///
/// Each quarter holds `dim/4` columns with `omega_k = 1 / base^(k / (dim/4))`:
/// `sin(x omega)`, `cos(x omega)`, `sin(y omega)`, `cos(y omega)`. MAE builds its grid with
/// `np.meshgrid(grid_w, grid_h)`, so its first half comes from the column coordinate `x`.
pub fn sincos_2d(params: &SinCos2dParams) -> Result<Array2<f64>, ParamError> {
    params.validate()?;
    let omega = params.omega();
    Ok(fill_2d(params.grid.patches(), params.dim, |patch, col| {
        params.value(&omega, patch, col)
    }))
}
