//! A position table moved to another patch grid, as timm's `resample_abs_pos_embed` does when a
//! ViT runs at a resolution it was not trained at: the `[prefix + H*W, dim]` table is seen as a
//! `dim`-channel `H x W` image and resized by torch's `interpolate` (`align_corners=False`),
//! bilinear or bicubic, with or without antialiasing; prefix rows (a CLS token) are kept as they
//! are.
//!
//! The interpolation weights follow torch's CPU kernels for a float32 tensor (timm always
//! interpolates in float32), operation by operation in f32: plain bicubic is Keys' cubic with
//! `a = -0.75` at four clamped neighbours; plain bilinear two neighbours; the anti-aliased path
//! (PIL's algorithm) stretches the kernel over the input pixels one output pixel covers, uses
//! `a = -0.5` for bicubic, keeps only taps inside the image and renormalises them. The weighted
//! sums are then taken exactly (f64), so a torch float32 result differs only by its own f32
//! accumulation.

use ndarray::{Array2, ArrayView2};

use super::{GRID_SIDE_RANGE, ParamError, check_count};

/// The interpolation torch applies (`mode=` of `interpolate`).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
pub enum ResampleMode {
    /// Two neighbours per axis (four with antialias when upsampling).
    Bilinear,
    /// Keys' cubic: four neighbours per axis (timm's default).
    #[default]
    Bicubic,
}

/// Where a table comes from and where it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResampleParams {
    /// The grid the table was made for, `(rows, columns)` of patches.
    pub from: (usize, usize),
    /// The grid to resample to.
    pub to: (usize, usize),
    /// Rows before the patches (a CLS token), copied unchanged.
    pub prefix_rows: usize,
    pub mode: ResampleMode,
    pub antialias: bool,
}

impl ResampleParams {
    /// Checks the grids and that `input_shape` is `[prefix + from_h * from_w, dim]`.
    pub fn validate(&self, input_shape: &[usize]) -> Result<(), ParamError> {
        check_count("from-grid", self.from.0, GRID_SIDE_RANGE)?;
        check_count("from-grid", self.from.1, GRID_SIDE_RANGE)?;
        check_count("grid-h", self.to.0, GRID_SIDE_RANGE)?;
        check_count("grid-w", self.to.1, GRID_SIDE_RANGE)?;
        let rows = self.from.0 * self.from.1 + self.prefix_rows;
        match input_shape {
            [r, c] if *r == rows && *c >= 1 => Ok(()),
            _ => Err(ParamError::new(
                "input",
                format!("of shape {input_shape:?}"),
                format!(
                    "must be [prefix rows + from-grid patches, dim] = [{} + {} x {}, dim]",
                    self.prefix_rows, self.from.0, self.from.1
                ),
            )),
        }
    }

    /// Rows of the resampled table.
    pub fn output_rows(&self) -> Option<usize> {
        self.to
            .0
            .checked_mul(self.to.1)?
            .checked_add(self.prefix_rows)
    }

    /// The weights along rows (`y`) and columns (`x`).
    pub fn taps(&self) -> (AxisTaps, AxisTaps) {
        (
            AxisTaps::new(self.from.0, self.to.0, self.mode, self.antialias),
            AxisTaps::new(self.from.1, self.to.1, self.mode, self.antialias),
        )
    }
}

/// Along one axis, for each output index, the input indices it reads and their float32
/// weights, `per_output` of them (unused taps have weight 0 at index 0).
#[derive(Debug, Clone, PartialEq)]
pub struct AxisTaps {
    pub per_output: usize,
    /// `[output][tap]` flattened: `(input index, weight)`.
    pub taps: Vec<(usize, f32)>,
}

impl AxisTaps {
    /// torch's weights for resizing an axis of `input` pixels to `output`.
    pub fn new(input: usize, output: usize, mode: ResampleMode, antialias: bool) -> Self {
        if input == output {
            // torch copies an axis that keeps its size (every path gives the identity there).
            return Self {
                per_output: 1,
                taps: (0..output).map(|i| (i, 1.0)).collect(),
            };
        }
        if antialias {
            return anti_aliased(input, output, mode);
        }
        let scale = input as f32 / output as f32;
        let last = input as i64 - 1;
        let clamp = |i: i64| i.clamp(0, last) as usize;
        let mut taps = Vec::new();
        let per_output = match mode {
            ResampleMode::Bilinear => {
                for i in 0..output {
                    let real = source_index(scale, i).max(0.0);
                    let i0 = real as i64;
                    let i1 = if i0 < last { i0 + 1 } else { i0 };
                    let lambda1 = (real - i0 as f32).clamp(0.0, 1.0);
                    taps.push((clamp(i0), 1.0 - lambda1));
                    taps.push((clamp(i1), lambda1));
                }
                2
            }
            ResampleMode::Bicubic => {
                for i in 0..output {
                    let real = source_index(scale, i);
                    let index = (real.floor() as i64).min(last);
                    let t = (real - index as f32).clamp(0.0, 1.0);
                    for (j, weight) in cubic_coefficients(t).into_iter().enumerate() {
                        taps.push((clamp(index - 1 + j as i64), weight));
                    }
                }
                4
            }
        };
        Self { per_output, taps }
    }

    /// The taps of output index `i`.
    pub fn of(&self, i: usize) -> &[(usize, f32)] {
        &self.taps[i * self.per_output..(i + 1) * self.per_output]
    }
}

/// `area_pixel_compute_source_index` with `align_corners=False`, in f32: the input coordinate
/// of output pixel `i`'s centre.
fn source_index(scale: f32, i: usize) -> f32 {
    scale * (i as f32 + 0.5) - 0.5
}

/// Keys' cubic convolution kernel with parameter `a`, for `|x| < 1` and `1 <= |x| < 2`, written
/// as torch writes it (`cubic_convolution1` and `cubic_convolution2`) so f32 rounds alike.
fn cubic_near(x: f32, a: f32) -> f32 {
    ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
}

fn cubic_far(x: f32, a: f32) -> f32 {
    ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
}

/// Plain bicubic's four weights at fraction `t` past the second neighbour (`a = -0.75`, as
/// OpenCV; torch's `get_cubic_upsample_coefficients`).
fn cubic_coefficients(t: f32) -> [f32; 4] {
    const A: f32 = -0.75;
    let opposite = 1.0 - t;
    [
        cubic_far(t + 1.0, A),
        cubic_near(t, A),
        cubic_near(opposite, A),
        cubic_far(opposite + 1.0, A),
    ]
}

/// The anti-aliased path (`_compute_indices_min_size_weights_aa`, PIL's `precompute_coeffs`),
/// with torch's float32 steps: the kernel is widened by the scale when downsampling, only taps
/// inside the image are kept, and their weights are divided by their sum.
fn anti_aliased(input: usize, output: usize, mode: ResampleMode) -> AxisTaps {
    let (interp_size, filter): (f64, fn(f32) -> f32) = match mode {
        ResampleMode::Bilinear => (2.0, |x| {
            let x = x.abs();
            if x < 1.0 { 1.0 - x } else { 0.0 }
        }),
        ResampleMode::Bicubic => (4.0, |x| {
            const A: f32 = -0.5;
            let x = x.abs();
            if x < 1.0 {
                cubic_near(x, A)
            } else if x < 2.0 {
                cubic_far(x, A)
            } else {
                0.0
            }
        }),
    };
    let scale = input as f32 / output as f32;
    let downsampling = scale >= 1.0;
    let support = if downsampling {
        ((interp_size * 0.5) * f64::from(scale)) as f32
    } else {
        (interp_size * 0.5) as f32
    };
    let per_output = (f64::from(support).ceil() as usize) * 2 + 1;
    let invscale = if downsampling {
        (1.0 / f64::from(scale)) as f32
    } else {
        1.0
    };
    let mut taps = Vec::with_capacity(output * per_output);
    for i in 0..output {
        // The centre is formed in double and stored as f32, as the C++ promotes it.
        let center = (f64::from(scale) * (i as f64 + 0.5)) as f32;
        let xmin = ((f64::from(center - support) + 0.5) as i64).max(0);
        let xmax = ((f64::from(center + support) + 0.5) as i64).min(input as i64);
        let size = (xmax - xmin).clamp(0, per_output as i64) as usize;
        let mut weights: Vec<f32> = (0..size)
            .map(|j| {
                let offset = (j as i64 + xmin) as f32 - center;
                filter(((f64::from(offset) + 0.5) * f64::from(invscale)) as f32)
            })
            .collect();
        let total = weights.iter().fold(0.0f32, |sum, &w| sum + w);
        if total != 0.0 {
            weights.iter_mut().for_each(|w| *w /= total);
        }
        let first = xmin as usize;
        taps.extend(weights.iter().enumerate().map(|(j, &w)| (first + j, w)));
        taps.extend((size..per_output).map(|_| (0, 0.0)));
    }
    AxisTaps { per_output, taps }
}

/// Element `[row, col]` of the resampled table: a prefix row as it is, a patch row as the
/// weighted sum of the input patches its taps read.
pub fn resampled_value(
    input: ArrayView2<'_, f64>,
    params: &ResampleParams,
    taps: &(AxisTaps, AxisTaps),
    row: usize,
    col: usize,
) -> f64 {
    let prefix = params.prefix_rows;
    if row < prefix {
        return input[[row, col]];
    }
    let patch = row - prefix;
    let (y, x) = (patch / params.to.1, patch % params.to.1);
    let from_w = params.from.1;
    taps.0
        .of(y)
        .iter()
        .map(|&(iy, wy)| {
            let along_x: f64 = taps
                .1
                .of(x)
                .iter()
                .map(|&(ix, wx)| f64::from(wx) * input[[prefix + iy * from_w + ix, col]])
                .sum();
            f64::from(wy) * along_x
        })
        .sum()
}

/// The whole resampled table.
pub fn resample(
    input: ArrayView2<'_, f64>,
    params: &ResampleParams,
) -> Result<Array2<f64>, ParamError> {
    params.validate(input.shape())?;
    let rows = params
        .output_rows()
        .ok_or_else(|| ParamError::new("grid-h", params.to.0, "the grid is too large"))?;
    let taps = params.taps();
    Ok(super::fill_2d(rows, input.ncols(), |row, col| {
        resampled_value(input, params, &taps, row, col)
    }))
}
