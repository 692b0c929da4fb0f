//! How alike two patches' positional encodings are: the `[P, P]` similarity of 2D encodings,
//! each a mean of `cos(fx Δx + fy Δy)` over the encoding's frequency pairs, where `(Δx, Δy)` is
//! the offset between the patches. That form is exact for all three encodings here: a RoPE
//! score for equal content is the mean cosine of the angle differences, and the dot product of
//! two sin-cos rows is a sum of cosines of phase differences.

use ndarray::Array2;

use super::grid::GridParams;
use super::rope2d::{AxialParams, check_mixed_freqs_shape};
use super::{ParamError, check_base, check_dim_multiple_of_4, fill_2d};

/// The encoding whose similarity is measured.
#[derive(Debug, Clone, PartialEq)]
pub enum PatchEncoding {
    /// rope-vit axial RoPE: pairs `(f_k, 0)` and `(0, f_k)`, `f_k = theta^(-4k/dim)`.
    AxialRope { dim: usize, theta: f64 },
    /// rope-vit mixed RoPE: pairs `(theta_x[k], theta_y[k])` from `[2, n]` frequencies.
    MixedRope { freqs: Array2<f64> },
    /// MAE 2D sin-cos: `PE[q]·PE[p] / (dim/2)`, pairs `(omega_k, 0)` and `(0, omega_k)`.
    SinCos { dim: usize, base: f64 },
}

impl PatchEncoding {
    /// How many frequency pairs it sums: `dim / 2` (two axes of `dim / 4`), or a mixed
    /// table's columns.
    pub fn pairs(&self) -> usize {
        match self {
            PatchEncoding::AxialRope { dim, .. } | PatchEncoding::SinCos { dim, .. } => {
                2 * (dim / 4)
            }
            PatchEncoding::MixedRope { freqs } => freqs.ncols(),
        }
    }
}

/// Parameters of a `[P, P]` patch similarity table.
#[derive(Debug, Clone, PartialEq)]
pub struct PatchSimilarityParams {
    pub grid: GridParams,
    pub encoding: PatchEncoding,
}

impl PatchSimilarityParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        self.grid.validate()?;
        match &self.encoding {
            PatchEncoding::AxialRope { dim, theta } => {
                check_dim_multiple_of_4("dim", *dim)?;
                check_base("theta", *theta)
            }
            PatchEncoding::MixedRope { freqs } => check_mixed_freqs_shape(freqs.shape()),
            PatchEncoding::SinCos { dim, base } => {
                check_dim_multiple_of_4("dim", *dim)?;
                check_base("base", *base)
            }
        }
    }

    /// The `(fx, fy)` frequency pairs, in radians per patch.
    pub fn frequency_pairs(&self) -> Vec<(f64, f64)> {
        let per_axis = |freqs: Vec<f64>| -> Vec<(f64, f64)> {
            let along_x = freqs.iter().map(|&f| (f, 0.0));
            let along_y = freqs.iter().map(|&f| (0.0, f));
            along_x.chain(along_y).collect()
        };
        match &self.encoding {
            PatchEncoding::AxialRope { dim, theta } => per_axis(
                AxialParams {
                    grid: self.grid,
                    dim: *dim,
                    theta: *theta,
                    ..Default::default()
                }
                .frequencies(),
            ),
            PatchEncoding::MixedRope { freqs } => freqs
                .row(0)
                .iter()
                .zip(freqs.row(1))
                .map(|(&x, &y)| (x, y))
                .collect(),
            PatchEncoding::SinCos { dim, base } => {
                let quarter = dim / 4;
                per_axis(
                    (0..quarter)
                        .map(|k| 1.0 / base.powf(k as f64 / quarter as f64))
                        .collect(),
                )
            }
        }
    }

    /// The similarity of patches `query` and `key`.
    pub fn value(&self, pairs: &[(f64, f64)], query: usize, key: usize) -> f64 {
        let (qx, qy) = self.grid.patch_xy(query);
        let (kx, ky) = self.grid.patch_xy(key);
        let (dx, dy) = (qx as f64 - kx as f64, qy as f64 - ky as f64);
        let sum: f64 = pairs
            .iter()
            .map(|&(fx, fy)| (fx * dx + fy * dy).cos())
            .sum();
        sum / pairs.len() as f64
    }
}

/// The similarity of two patches depends only on their offset `(dx, dy)`: the
/// `(2 h - 1) x (2 w - 1)` offsets of a grid, each summed once (a 64 x 64 grid has 16,129
/// offsets against 16.7 million pairs of patches).
pub struct OffsetSimilarities {
    grid: GridParams,
    by_offset: Vec<f64>,
}

impl OffsetSimilarities {
    pub fn new(params: &PatchSimilarityParams) -> Self {
        use rayon::prelude::*;
        let pairs = params.frequency_pairs();
        let (h, w) = (params.grid.grid_h as i64, params.grid.grid_w as i64);
        let by_offset = (0..(2 * h - 1) * (2 * w - 1))
            .into_par_iter()
            .map(|k| {
                let (dy, dx) = (k / (2 * w - 1) - (h - 1), k % (2 * w - 1) - (w - 1));
                let sum: f64 = pairs
                    .iter()
                    .map(|&(fx, fy)| (fx * dx as f64 + fy * dy as f64).cos())
                    .sum();
                sum / pairs.len() as f64
            })
            .collect();
        Self {
            grid: params.grid,
            by_offset,
        }
    }

    /// The offsets of `params`, shared: the few tables made last are kept, so that the
    /// windows, rows and estimate samples of one picture sum them once (at `--dim 1048576` on
    /// a 64 x 64 grid, seconds each).
    pub fn shared(params: &PatchSimilarityParams) -> std::sync::Arc<Self> {
        type Kept = Vec<(PatchSimilarityParams, std::sync::Arc<OffsetSimilarities>)>;
        static KEPT: std::sync::Mutex<Kept> = std::sync::Mutex::new(Vec::new());
        let found = KEPT.lock().ok().and_then(|kept| {
            kept.iter()
                .find(|(p, _)| p == params)
                .map(|(_, offsets)| offsets.clone())
        });
        if let Some(offsets) = found {
            return offsets;
        }
        let offsets = std::sync::Arc::new(Self::new(params));
        if let Ok(mut kept) = KEPT.lock() {
            // A few: the two methods of a patch figure side by side, and the matrix's.
            if kept.len() >= 4 {
                kept.remove(0);
            }
            kept.push((params.clone(), offsets.clone()));
        }
        offsets
    }

    /// The similarity of patches `query` and `key`, as [`PatchSimilarityParams::value`].
    pub fn value(&self, query: usize, key: usize) -> f64 {
        let (qx, qy) = self.grid.patch_xy(query);
        let (kx, ky) = self.grid.patch_xy(key);
        let (h, w) = (self.grid.grid_h as i64, self.grid.grid_w as i64);
        let (dx, dy) = (qx as i64 - kx as i64, qy as i64 - ky as i64);
        self.by_offset[((dy + h - 1) * (2 * w - 1) + dx + w - 1) as usize]
    }
}

/// The `[P, P]` table of similarities, 1 on the diagonal.
pub fn table(params: &PatchSimilarityParams) -> Result<Array2<f64>, ParamError> {
    params.validate()?;
    let offsets = OffsetSimilarities::shared(params);
    let patches = params.grid.patches();
    Ok(fill_2d(patches, patches, |q, k| offsets.value(q, k)))
}

/// rope-vit's random initialisation of mixed frequencies for one head (`init_random_2d_freqs`),
/// with a seeded generator of our own: magnitudes `theta^(-4k/dim)`, a random angle per pair, the
/// second half turned a quarter turn from the first.
pub fn random_mixed_freqs(dim: usize, theta: f64, seed: u64) -> Result<Array2<f64>, ParamError> {
    check_dim_multiple_of_4("dim", dim)?;
    check_base("theta", theta)?;
    let quarter = dim / 4;
    let angle = super::random::SplitMix64::new(seed).next_unit() * std::f64::consts::TAU;
    let mut freqs = Array2::<f64>::zeros((2, 2 * quarter));
    for k in 0..quarter {
        let magnitude = 1.0 / theta.powf((4 * k) as f64 / dim as f64);
        for (half, phase) in [(0, angle), (1, angle + std::f64::consts::FRAC_PI_2)] {
            freqs[[0, half * quarter + k]] = magnitude * phase.cos();
            freqs[[1, half * quarter + k]] = magnitude * phase.sin();
        }
    }
    Ok(freqs)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table by offsets equals the sum over pairs for every pair of patches, on a grid that
    /// is not square (so that rows and columns cannot be mixed up).
    #[test]
    fn each_offset_summed_once_is_each_pair_of_patches_summed() {
        let params = PatchSimilarityParams {
            grid: GridParams {
                grid_h: 5,
                grid_w: 7,
            },
            encoding: PatchEncoding::MixedRope {
                freqs: random_mixed_freqs(16, 10.0, 3).unwrap(),
            },
        };
        let pairs = params.frequency_pairs();
        let offsets = OffsetSimilarities::new(&params);
        for query in 0..35 {
            for key in 0..35 {
                let want = params.value(&pairs, query, key);
                assert!(
                    (offsets.value(query, key) - want).abs() < 1e-15,
                    "{query} {key}"
                );
            }
        }
    }
}
