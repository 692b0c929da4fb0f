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

/// One of the four `dim/4`-wide blocks of a 2D sin-cos table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SinCosBlock {
    SinX,
    CosX,
    SinY,
    CosY,
}

impl SinCosBlock {
    /// The name `--order` spells.
    pub fn name(self) -> &'static str {
        match self {
            SinCosBlock::SinX => "sin-x",
            SinCosBlock::CosX => "cos-x",
            SinCosBlock::SinY => "sin-y",
            SinCosBlock::CosY => "cos-y",
        }
    }

    pub fn uses_y(self) -> bool {
        matches!(self, SinCosBlock::SinY | SinCosBlock::CosY)
    }

    pub fn is_cos(self) -> bool {
        matches!(self, SinCosBlock::CosX | SinCosBlock::CosY)
    }

    /// Two bits: bit 0 cos, bit 1 the y coordinate (as the GPU kernel reads them).
    pub fn code(self) -> u32 {
        u32::from(self.is_cos()) | (u32::from(self.uses_y()) << 1)
    }
}

/// MAE's order: sin and cos of x (the column), then of y.
pub const MAE_ORDER: [SinCosBlock; 4] = [
    SinCosBlock::SinX,
    SinCosBlock::CosX,
    SinCosBlock::SinY,
    SinCosBlock::CosY,
];

/// Reads `--order`: four distinct blocks, comma separated.
pub fn parse_order(text: &str) -> Result<[SinCosBlock; 4], ParamError> {
    let allowed = "four distinct blocks of sin-x, cos-x, sin-y, cos-y, comma separated (MAE: sin-x,cos-x,sin-y,cos-y; timm: sin-y,sin-x,cos-y,cos-x)";
    let blocks: Vec<SinCosBlock> = text
        .split(',')
        .map(|part| match part.trim() {
            "sin-x" => Ok(SinCosBlock::SinX),
            "cos-x" => Ok(SinCosBlock::CosX),
            "sin-y" => Ok(SinCosBlock::SinY),
            "cos-y" => Ok(SinCosBlock::CosY),
            _ => Err(ParamError::new("order", text, allowed)),
        })
        .collect::<Result<_, _>>()?;
    let order: [SinCosBlock; 4] = blocks
        .try_into()
        .map_err(|_| ParamError::new("order", text, allowed))?;
    for (i, block) in order.iter().enumerate() {
        if order[..i].contains(block) {
            return Err(ParamError::new("order", text, allowed));
        }
    }
    Ok(order)
}

/// The order patches come in: row by row (x fastest, as MAE and timm) or column by column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Raster {
    #[default]
    Rows,
    Columns,
}

/// Parameters of MAE's 2D sin-cos embedding and its library variants.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SinCos2dParams {
    pub grid: GridParams,
    /// Embedding width, a multiple of 4.
    pub dim: usize,
    /// 10000 in MAE.
    pub base: f64,
    /// The four blocks, in column order.
    pub order: [SinCosBlock; 4],
    pub raster: Raster,
    /// Zero rows before the patches (a CLS token's).
    pub prefix_rows: usize,
    /// What multiplies each patch's `(y, x)` coordinate (`--position-scale`): diffusers'
    /// `get_2d_sincos_pos_embed` uses `base_size / grid / interpolation_scale` per axis; 1 in
    /// MAE and timm.
    pub position_scale: [f64; 2],
    /// How the scaled coordinates are formed.
    pub coordinates: GridCoordinates,
}

/// How a 2D sin-cos table's scaled coordinates are formed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GridCoordinates {
    /// `k · s` exactly.
    #[default]
    Exact,
    /// `k / f32(1/s)` in float32, as diffusers' `get_2d_sincos_pos_embed` forms
    /// `arange(g, dtype=float32) / (g / base_size) / interpolation_scale` (the same for any
    /// interpolation scale that is a power of two) before its float64 table.
    Float32Quotient,
}

impl Default for SinCos2dParams {
    fn default() -> Self {
        Self {
            grid: GridParams::default(),
            dim: 768,
            base: 10_000.0,
            order: MAE_ORDER,
            raster: Raster::Rows,
            prefix_rows: 0,
            position_scale: [1.0, 1.0],
            coordinates: GridCoordinates::Exact,
        }
    }
}

impl SinCos2dParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        self.grid.validate()?;
        check_dim_multiple_of_4("dim", self.dim)?;
        if self.prefix_rows > 1 << 16 {
            return Err(ParamError::new(
                "prefix-rows",
                self.prefix_rows,
                "must be 0 to 65536",
            ));
        }
        check_grid_position_scale(&self.position_scale)?;
        check_base("base", self.base)
    }

    /// Rows of the table: the prefix rows, then one per patch.
    pub fn rows(&self) -> usize {
        self.prefix_rows + self.grid.patches()
    }

    /// `omega_k = 1 / base^(k / (dim/4))` for `k < dim/4`.
    pub fn omega(&self) -> Vec<f64> {
        let quarter = self.dim / 4;
        (0..quarter)
            .map(|k| 1.0 / self.base.powf(k as f64 / quarter as f64))
            .collect()
    }

    /// The `(x, y)` of patch `k` in this raster.
    pub fn patch_xy(&self, k: usize) -> (usize, usize) {
        match self.raster {
            Raster::Rows => self.grid.patch_xy(k),
            Raster::Columns => (k / self.grid.grid_h, k % self.grid.grid_h),
        }
    }

    /// Whether the coordinates are scaled or formed in float32 (the CPU engine's tables only).
    pub fn is_plain_grid(&self) -> bool {
        self.position_scale == [1.0, 1.0] && self.coordinates == GridCoordinates::Exact
    }

    /// What column `col` of table row `row` is made of: the patch index along the axis, the
    /// axis (0: y, 1: x), the frequency index and whether it is the cosine; `None` in a prefix
    /// row (zeros).
    fn element(&self, row: usize, col: usize) -> Option<(usize, usize, usize, bool)> {
        let patch = row.checked_sub(self.prefix_rows)?;
        let quarter = self.dim / 4;
        let (x, y) = self.patch_xy(patch);
        let block = self.order[col / quarter];
        let (coordinate, axis) = if block.uses_y() { (y, 0) } else { (x, 1) };
        Some((coordinate, axis, col % quarter, block.is_cos()))
    }

    /// The scaled coordinate of patch index `k` along `axis`.
    fn coordinate(&self, k: usize, axis: usize) -> f64 {
        let scale = self.position_scale[axis];
        match self.coordinates {
            GridCoordinates::Exact => k as f64 * scale,
            GridCoordinates::Float32Quotient => f64::from(k as f32 / (1.0 / scale) as f32),
        }
    }

    /// Column `col` of table row `row`, given [`Self::omega`].
    pub fn value(&self, omega: &[f64], row: usize, col: usize) -> f64 {
        let Some((coordinate, axis, k, is_cos)) = self.element(row, col) else {
            return 0.0;
        };
        let angle = self.coordinate(coordinate, axis) * omega[k];
        if is_cos { angle.cos() } else { angle.sin() }
    }

    /// [`Self::value`] in float32 from float32 frequencies `omega` (widened to f64): the
    /// coordinate times the frequency rounded once, sin and cos rounded to f32, as timm's
    /// `build_sincos2d_pos_embed` computes it.
    pub fn value_f32(&self, omega: &[f64], row: usize, col: usize) -> f64 {
        let Some((coordinate, _, k, is_cos)) = self.element(row, col) else {
            return 0.0;
        };
        let angle = coordinate as f32 * omega[k] as f32;
        let (sin, cos) = super::torch_f32::sin_cos(angle);
        f64::from(if is_cos { cos } else { sin })
    }
}

/// A grid's `--position-scale` `(sy, sx)`: each above 0 and at most 1e6.
pub fn check_grid_position_scale(scale: &[f64; 2]) -> Result<(), ParamError> {
    match scale
        .iter()
        .find(|s| !(s.is_finite() && **s > 0.0 && **s <= 1e6))
    {
        Some(bad) => Err(ParamError::new(
            "position-scale",
            bad,
            "must be a number above 0 and at most 1e6 (one for both axes, or sy,sx)",
        )),
        None => Ok(()),
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
    Ok(fill_2d(params.rows(), params.dim, |row, col| {
        params.value(&omega, row, col)
    }))
}
