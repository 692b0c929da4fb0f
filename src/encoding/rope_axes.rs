//! RoPE over several position axes: each token has a position per axis (time, height, width)
//! and each rotated pair turns with one of them. Two schemes split the pairs among the axes:
//! - per-axis RoPE (Flux's `EmbedND`, diffusers' `FluxPosEmbed`, CogVideoX, HunyuanVideo):
//!   axis `k` has a RoPE of its own `d_k` dimensions, `theta^(-2i/d_k)`, the axes concatenated;
//! - M-RoPE (Qwen2-VL, Qwen2.5-VL): one set of `D/2` frequencies `theta^(-2i/D)`, the first
//!   `s_0` pairs turned by the time position, the next `s_1` by height, the last `s_2` by width.
//!
//! Positions are used exactly as given (integer or floating point, as a library stores them).

use super::PairLayout;
use ndarray::Array2;

use super::ParamError;
use super::torch_f32;

/// How the pairs are split among the position axes.
#[derive(Debug, Clone, PartialEq)]
pub enum AxesSplit {
    /// Flux and diffusers' `axes_dim`: axis `k` has `dims[k]` dimensions of its own.
    AxesDim(Vec<usize>),
    /// Qwen2-VL's `mrope_section` over one RoPE of `dim` dimensions: `sections[k]` pairs each.
    MropeSection { dim: usize, sections: Vec<usize> },
}

/// What a `rope-axes` table holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum AxesValues {
    /// `[seq, pairs]`: each pair's angle, position times frequency.
    #[default]
    Angles,
    /// `[seq, 2 * pairs]`: the cosines, laid out as `--layout` says.
    Cos,
    /// `[seq, 2 * pairs]`: the sines, laid out as `--layout` says.
    Sin,
}

/// A `rope-axes` table: positions, frequencies and what to write.
#[derive(Debug, Clone, PartialEq)]
pub struct RopeAxesParams {
    /// `[seq, axes]`: each token's position on each axis.
    pub ids: Array2<f64>,
    pub theta: f64,
    pub split: AxesSplit,
    pub values: AxesValues,
    /// For cos and sin: each angle twice in a row (`Interleaved`: Flux, diffusers) or the row
    /// of angles twice (`Half`: Qwen2-VL).
    pub layout: PairLayout,
}

impl RopeAxesParams {
    /// What the table holds, in words: the scheme, its split of the pairs and the values, one
    /// row per token (the export window says it beside the shape).
    pub fn summary(&self) -> String {
        let values = match self.values {
            AxesValues::Angles => "angles",
            AxesValues::Cos => "cosines",
            AxesValues::Sin => "sines",
        };
        let join = |list: &[usize]| {
            list.iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        match &self.split {
            AxesSplit::MropeSection { sections, .. } => format!(
                "Qwen2-VL M-RoPE {values} (sections {}), one row per token",
                join(sections)
            ),
            AxesSplit::AxesDim(dims) => format!(
                "per-axis RoPE {values} (axes_dim {}), one row per token",
                join(dims)
            ),
        }
    }

    pub fn validate(&self) -> Result<(), ParamError> {
        super::check_base("theta", self.theta)?;
        let axes = self.ids.ncols();
        if self.ids.nrows() == 0 || axes == 0 {
            return Err(ParamError::new(
                "ids",
                format!("{:?}", self.ids.shape()),
                "must hold at least one token and one axis ([seq, axes])",
            ));
        }
        if let Some(bad) = self.ids.iter().find(|v| !v.is_finite()) {
            return Err(ParamError::new(
                "ids",
                bad,
                "positions must be finite numbers",
            ));
        }
        let named = match &self.split {
            AxesSplit::AxesDim(dims) => {
                if let Some(&odd) = dims.iter().find(|&&d| d == 0 || d % 2 != 0) {
                    return Err(ParamError::new(
                        "axes_dim",
                        odd,
                        "each axis's dimensions must be even and at least 2 (they are pairs)",
                    ));
                }
                dims.len()
            }
            AxesSplit::MropeSection { dim, sections } => {
                super::check_even_dim("dim", *dim)?;
                let total: usize = sections.iter().sum();
                if total != dim / 2 || sections.contains(&0) {
                    return Err(ParamError::new(
                        "mrope_section",
                        format!("{sections:?}"),
                        format!(
                            "the sections must be 1 or more pairs each and add up to dim/2 = {} (they sum to {total})",
                            dim / 2
                        ),
                    ));
                }
                sections.len()
            }
        };
        if named != axes {
            return Err(ParamError::new(
                "ids",
                format!("{:?}", self.ids.shape()),
                format!(
                    "must have one column per axis: {named} axes are split, the positions have {axes}"
                ),
            ));
        }
        Ok(())
    }

    /// Each pair's axis and exact frequency, in the table's order.
    pub fn pairs(&self) -> Vec<(usize, f64)> {
        match &self.split {
            AxesSplit::AxesDim(dims) => dims
                .iter()
                .enumerate()
                .flat_map(|(axis, &d)| {
                    (0..d / 2).map(move |i| (axis, self.theta.powf(-((2 * i) as f64) / d as f64)))
                })
                .collect(),
            AxesSplit::MropeSection { dim, sections } => {
                let axis_of = section_axes(sections);
                (0..dim / 2)
                    .map(|i| (axis_of[i], self.theta.powf(-((2 * i) as f64) / *dim as f64)))
                    .collect()
            }
        }
    }

    /// [`Self::pairs`] with the frequencies in float32 as PyTorch forms them
    /// (`1 / theta ** (arange(0, d, 2) / d)` per axis, or over the whole width for M-RoPE,
    /// `block` elements at a time), widened to f64.
    pub fn torch_pairs(&self, block: usize) -> Vec<(usize, f64)> {
        let form = torch_f32::FreqForm::Pow;
        let of = |d: usize| torch_f32::frequencies(d / 2, d, self.theta, form, false, block);
        let values: Vec<f32> = match &self.split {
            AxesSplit::AxesDim(dims) => dims.iter().flat_map(|&d| of(d)).collect(),
            AxesSplit::MropeSection { dim, .. } => of(*dim),
        };
        self.pairs()
            .into_iter()
            .zip(values)
            .map(|((axis, _), w)| (axis, f64::from(w)))
            .collect()
    }

    /// Pairs of rotated dimensions.
    pub fn pair_count(&self) -> usize {
        match &self.split {
            AxesSplit::AxesDim(dims) => dims.iter().map(|d| d / 2).sum(),
            AxesSplit::MropeSection { dim, .. } => dim / 2,
        }
    }

    /// `[seq, pairs]` for angles, `[seq, 2 * pairs]` for cos and sin.
    pub fn shape(&self) -> [usize; 2] {
        let pairs = self.pair_count();
        match self.values {
            AxesValues::Angles => [self.ids.nrows(), pairs],
            AxesValues::Cos | AxesValues::Sin => [self.ids.nrows(), 2 * pairs],
        }
    }

    /// The pair column `col` holds.
    pub fn pair_of_column(&self, col: usize) -> usize {
        match self.values {
            AxesValues::Angles => col,
            AxesValues::Cos | AxesValues::Sin => match self.layout {
                PairLayout::Interleaved => col / 2,
                PairLayout::Half => col % self.pair_count(),
            },
        }
    }
}

/// The axis of each of M-RoPE's pairs: the first `sections[0]` pairs axis 0, and so on.
pub fn section_axes(sections: &[usize]) -> Vec<usize> {
    sections
        .iter()
        .enumerate()
        .flat_map(|(axis, &n)| std::iter::repeat_n(axis, n))
        .collect()
}

/// `[T*H*W, 3]` positions of a `T x H x W` grid in raster order (the last axis fastest), each
/// axis counting from 0.
pub fn grid_ids(grid: &[usize]) -> Array2<f64> {
    let count: usize = grid.iter().product();
    let mut ids = Array2::zeros((count, grid.len()));
    for (token, mut row) in ids.rows_mut().into_iter().enumerate() {
        let mut rest = token;
        for axis in (0..grid.len()).rev() {
            row[axis] = (rest % grid[axis]) as f64;
            rest /= grid[axis];
        }
    }
    ids
}

/// Element `(row, col)` of the table in exact arithmetic.
pub fn value(params: &RopeAxesParams, pairs: &[(usize, f64)], row: usize, col: usize) -> f64 {
    let (axis, frequency) = pairs[params.pair_of_column(col)];
    let angle = params.ids[[row, axis]] * frequency;
    match params.values {
        AxesValues::Angles => angle,
        AxesValues::Cos => angle.cos(),
        AxesValues::Sin => angle.sin(),
    }
}

/// Element `(row, col)` as PyTorch computes it in float32 from `pairs` (axes and float32
/// frequencies, widened: [`RopeAxesParams::torch_pairs`]): the position rounded to f32, the
/// angle rounded once, then `cos`/`sin` in f32.
pub fn value_f32(params: &RopeAxesParams, pairs: &[(usize, f64)], row: usize, col: usize) -> f64 {
    let (axis, frequency) = pairs[params.pair_of_column(col)];
    let angle = params.ids[[row, axis]] as f32 * frequency as f32;
    let (sin, cos) = torch_f32::sin_cos(angle);
    f64::from(match params.values {
        AxesValues::Angles => angle,
        AxesValues::Cos => cos,
        AxesValues::Sin => sin,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grid_counts_in_raster_order() {
        let ids = grid_ids(&[2, 2, 3]);
        assert_eq!(ids.nrows(), 12);
        assert_eq!(ids.row(0).to_vec(), vec![0.0, 0.0, 0.0]);
        assert_eq!(ids.row(1).to_vec(), vec![0.0, 0.0, 1.0]);
        assert_eq!(ids.row(3).to_vec(), vec![0.0, 1.0, 0.0]);
        assert_eq!(ids.row(11).to_vec(), vec![1.0, 1.0, 2.0]);
    }

    #[test]
    fn sections_must_fill_the_pairs() {
        let params = RopeAxesParams {
            ids: grid_ids(&[1, 2, 2]),
            theta: 10000.0,
            split: AxesSplit::MropeSection {
                dim: 16,
                sections: vec![2, 3, 2],
            },
            values: AxesValues::Angles,
            layout: PairLayout::Half,
        };
        assert!(params.validate().is_err(), "7 pairs of 8");
        let fixed = RopeAxesParams {
            split: AxesSplit::MropeSection {
                dim: 16,
                sections: vec![2, 3, 3],
            },
            ..params
        };
        assert!(fixed.validate().is_ok());
        assert_eq!(fixed.pairs()[4].0, 1);
        assert_eq!(fixed.pairs()[5].0, 2);
    }
}
