//! The context-extension lab: a real model's RoPE (from its config, or the shipped ones) run
//! past its training length under each method, read off per pair (wavelength, the distance
//! where angles leave the trained span), through the attention score fitted within `L` and its
//! long-term decay; the vision half (MAE's 2D table resampled as timm does, or a learned one);
//! and the survey's accuracies against resolution. The model, the methods and the unseen-angle
//! table are in [`crate::encoding::context`].

use crate::encoding::ParamError;
pub use crate::encoding::context::*;
use crate::encoding::rope::inv_freq;
use crate::encoding::rope_scaling::RopeFrequencies;

impl RopeModel {
    /// The model of a config, or `None` when it does not use RoPE.
    pub fn of(config: &crate::import::model_config::ModelConfig) -> Option<Self> {
        let crate::import::model_config::PositionEncoding::Rope {
            head_dim,
            base,
            freqs,
            ..
        } = &config.encoding
        else {
            return None;
        };
        let trained = freqs
            .scaling
            .original_max_position_embeddings
            .or(config.context)?;
        Some(Self {
            name: config.name.clone(),
            head_dim: *head_dim,
            base: *base,
            rotary_dim: freqs.rotary_dim,
            trained,
            scaling: freqs.scaling.clone(),
        })
    }
}

/// The shipped models (assets/models) that use RoPE, by file stem (`llama-2-7b`).
pub fn shipped_models() -> &'static [(String, RopeModel)] {
    use crate::import::model_config::{MODEL_CONFIGS, ModelConfig};
    static MODELS: std::sync::OnceLock<Vec<(String, RopeModel)>> = std::sync::OnceLock::new();
    MODELS.get_or_init(|| {
        MODEL_CONFIGS
            .iter()
            .filter_map(|(file, text)| {
                let config = ModelConfig::parse(text).ok()?;
                let stem = file.strip_suffix(".json").unwrap_or(file);
                Some((stem.to_owned(), RopeModel::of(&config)?))
            })
            .collect()
    })
}

/// Per pair of a method at `L'`: the wavelength `2π/θ'_i` in positions and the distance where
/// its angles first leave the trained span (`None`: never within `L'`).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PairReach {
    pub wavelength: f64,
    /// Turns the pair makes over the `L` trained positions, under the original frequency.
    pub trained_turns: f64,
    /// Turns the pair makes over `L'` positions under this method.
    pub target_turns: f64,
    pub first_unseen: Option<u64>,
    /// Distances below `L'` whose angle is unseen.
    pub unseen_distances: u64,
    /// How far past the angles training reached the pair's largest angle within `L'` goes,
    /// in the pair's own trained positions (`0` where it never goes past): Position
    /// Interpolation at 4x goes 0.75 of a position past, extrapolation 3 L.
    pub beyond_positions: f64,
}

/// Each pair's reach under `freqs` (validated for `model`) at `target` positions; none for a
/// model that is not valid (a trained length under 2).
pub fn pair_reach(model: &RopeModel, freqs: &RopeFrequencies, target: usize) -> Vec<PairReach> {
    if model.validate().is_err() {
        return Vec::new();
    }
    let rotary = model.rotary();
    let trained = inv_freq(rotary, model.base)
        .map(|t| t.to_vec())
        .unwrap_or_default();
    let limits = seen_limits(rotary, model.base, model.trained).unwrap_or_default();
    let exact = freqs.exact_inv_freq(model.head_dim, model.base, target);
    let words = turn_words(&exact);
    let method = freqs.inv_freq(model.head_dim, model.base, target);
    let tau = std::f64::consts::TAU;
    method
        .iter()
        .enumerate()
        .map(|(i, &w)| {
            let first_unseen = first_unseen(words[i], limits[i], target as u64);
            // Within a turn the angles grow with the distance: the largest is the last
            // distance's, or a whole turn once the method wraps.
            let reached = (model.trained - 1) as f64 * trained[i];
            let largest = ((target.max(1) - 1) as f64 * w).min(tau);
            PairReach {
                wavelength: tau / w,
                trained_turns: reached / tau,
                target_turns: (target.max(1) - 1) as f64 * w / tau,
                first_unseen,
                unseen_distances: unseen_count(words[i], limits[i], target as u64),
                beyond_positions: if first_unseen.is_some() {
                    ((largest - reached) / trained[i]).max(0.0)
                } else {
                    0.0
                },
            }
        })
        .collect()
}

/// The attention score of Chen et al.'s Position Interpolation figure: `a(s) = Re Σ_j h_j
/// e^{i s θ_j}` over the trained frequencies, the form every RoPE score `q_m · k_n` takes as a
/// function of the distance `s = m - n`, with the complex weights `h_j` fitted by least squares
/// to random values in `[-1, 1]` at random distances in `[0, L-1]` (a seeded draw, four points
/// per weight). It stays near `[-1, 1]` where it was fitted and is free to grow anywhere else:
/// run at the trained frequencies past `L` it does (the extrapolation failure); under a method
/// that maps `[0, L')` back into `[0, L)` it does not.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FittedScore {
    /// `(re h_j, im h_j)` per pair.
    pub weights: Vec<(f64, f64)>,
    /// The fitted `(distance, value)` points.
    pub points: Vec<(f64, f64)>,
}

impl FittedScore {
    /// Fits the weights for a `model`'s trained frequencies.
    pub fn fit(model: &RopeModel, seed: u64) -> Result<Self, String> {
        model.validate().map_err(|e| e.to_string())?;
        // An SVD of 8 R x 2 R: a second at R = 512, far more beyond.
        if model.rotary() > MAX_FITTED_ROTARY {
            return Err(format!(
                "the fitted score is drawn for rotary widths up to {MAX_FITTED_ROTARY} (this model rotates {})",
                model.rotary()
            ));
        }
        let theta = inv_freq(model.rotary(), model.base).map_err(|e| e.to_string())?;
        let pairs = theta.len();
        let mut random = crate::encoding::random::SplitMix64::new(seed);
        let last = (model.trained - 1) as f64;
        let points: Vec<(f64, f64)> = (0..4 * 2 * pairs)
            .map(|_| {
                let s = (random.next_unit() * last).round();
                (s, 2.0 * random.next_unit() - 1.0)
            })
            .collect();
        // Column 2j is cos(s θ_j), column 2j+1 is -sin(s θ_j): Re(h e^{isθ}) with h = a + ib.
        let design = nalgebra::DMatrix::from_fn(points.len(), 2 * pairs, |k, c| {
            let angle = points[k].0 * theta[c / 2];
            if c % 2 == 0 {
                angle.cos()
            } else {
                -angle.sin()
            }
        });
        let targets = nalgebra::DVector::from_iterator(points.len(), points.iter().map(|p| p.1));
        // Directions with singular values below 1e-12 of the largest are left out: rounding
        // noise, not signal.
        let svd = design.svd(true, true);
        let tolerance = 1e-12 * svd.singular_values.max();
        let solution = svd.solve(&targets, tolerance)?;
        let weights = (0..pairs)
            .map(|j| (solution[2 * j], solution[2 * j + 1]))
            .collect();
        Ok(Self { weights, points })
    }

    /// The score at distance `s` under frequencies `theta` (one per pair, a method's),
    /// times `attention²` (the factor multiplies the query's and the key's cos and sin).
    pub fn score(&self, theta: &[f64], s: f64, attention: f64) -> f64 {
        let sum: f64 = self
            .weights
            .iter()
            .zip(theta)
            .map(|(&(a, b), &t)| {
                let (sin, cos) = (s * t).sin_cos();
                a * cos - b * sin
            })
            .sum();
        attention * attention * sum
    }
}

/// The widest rotary width [`FittedScore::fit`] fits (real models rotate 256 at most).
pub const MAX_FITTED_ROTARY: usize = 512;

/// Distances a score curve is evaluated at, at most; a decay curve takes a quarter as many
/// (each of its points sums over every pair twice).
pub const CURVE_POINTS: usize = 2048;

/// `fit`'s score at up to [`CURVE_POINTS`] distances over `[0, target)`, under frequencies
/// `theta` and `attention`: `(s, a(s))`.
pub fn score_curve(
    fit: &FittedScore,
    theta: &[f64],
    attention: f64,
    target: usize,
) -> Vec<[f64; 2]> {
    sample_distances(target, CURVE_POINTS)
        .into_iter()
        .map(|s| [s, fit.score(theta, s, attention)])
        .collect()
}

/// RoFormer's long-term decay bound under frequencies `theta`, times `attention²`, at up to
/// [`CURVE_POINTS`]` / 4` distances over `[0, target)`: `(r, bound)`.
pub fn decay_curve(theta: &[f64], attention: f64, target: usize) -> Vec<[f64; 2]> {
    let distances = sample_distances(target, CURVE_POINTS / 4);
    let bound = crate::encoding::rope::long_term_decay_of(theta, &distances);
    distances
        .iter()
        .zip(bound)
        .map(|(&r, b)| [r, b * attention * attention])
        .collect()
}

/// The largest `|y|` of the points whose `x` is past `after`, if any is.
pub fn largest_past(points: &[[f64; 2]], after: f64) -> Option<f64> {
    points
        .iter()
        .filter(|p| p[0] > after)
        .map(|p| p[1].abs())
        .reduce(f64::max)
}

/// `count` distances spread evenly over `[0, seq - 1]` (every one when `seq <= count`).
pub fn sample_distances(seq: usize, count: usize) -> Vec<f64> {
    let last = seq.saturating_sub(1);
    if last < count {
        return (0..=last).map(|s| s as f64).collect();
    }
    (0..count)
        .map(|k| (k as f64 * last as f64 / (count - 1) as f64).round())
        .collect()
}

/// The vision half of the lab: MAE's 2D sin-cos table made for a ViT's training grid (with
/// its CLS row), resampled to a larger grid as timm's `resample_abs_pos_embed` does, against
/// the table made for the larger grid directly. Patches are 16 pixels: 14 x 14 is 224 px.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct VisionParams {
    /// Patches along a side of the training grid.
    pub train_side: usize,
    /// Patches along a side of the grid the model is run at.
    pub target_side: usize,
    /// Embedding width, a multiple of 4.
    pub dim: usize,
    pub mode: crate::encoding::resample::ResampleMode,
    pub antialias: bool,
    /// The query patch of the target grid, raster order.
    pub query: usize,
}

impl Default for VisionParams {
    fn default() -> Self {
        Self {
            train_side: 14,
            target_side: 24,
            dim: 768,
            mode: crate::encoding::resample::ResampleMode::Bicubic,
            // timm's default.
            antialias: true,
            query: 12 * 24 + 12,
        }
    }
}

/// The largest grid side the vision half draws.
pub const MAX_VISION_SIDE: usize = 64;

/// Pixels per patch side of the ViTs the lab speaks of (ViT-B/16).
pub const PATCH_PIXELS: usize = 16;

/// The query patch's similarity to every patch of the target grid, as `[side, side]` maps.
#[derive(Debug, Clone, PartialEq)]
pub struct VisionMaps {
    /// The training grid's table resampled to the target grid.
    pub resampled: ndarray::Array2<f64>,
    /// The table made at the target grid.
    pub direct: ndarray::Array2<f64>,
}

impl VisionParams {
    pub fn target_grid(&self) -> crate::encoding::grid::GridParams {
        crate::encoding::grid::GridParams {
            grid_h: self.target_side,
            grid_w: self.target_side,
        }
    }

    /// The training grid's table resampled to the larger grid, as a table of the engine
    /// (`sincos-2d-resample`): what the model holds after timm's resampling.
    pub fn resample_spec(&self) -> crate::engine::TableSpec {
        crate::engine::TableSpec::SinCos2dResample {
            input: self.table(self.train_side).unwrap_or_default(),
            params: self.resample_params(),
        }
    }

    pub fn resample_params(&self) -> crate::encoding::resample::ResampleParams {
        crate::encoding::resample::ResampleParams {
            from: (self.train_side, self.train_side),
            to: (self.target_side, self.target_side),
            prefix_rows: 1,
            mode: self.mode,
            antialias: self.antialias,
        }
    }

    fn table(&self, side: usize) -> Result<ndarray::Array2<f64>, ParamError> {
        crate::encoding::grid::sincos_2d(&crate::encoding::grid::SinCos2dParams {
            grid: crate::encoding::grid::GridParams {
                grid_h: side,
                grid_w: side,
            },
            dim: self.dim,
            prefix_rows: 1,
            ..Default::default()
        })
    }

    /// Both similarity maps: `PE[q] · PE[p] / (dim/2)` (MAE's sin-cos similarity), the CLS
    /// row left out.
    pub fn maps(&self) -> Result<VisionMaps, ParamError> {
        let trained = self.table(self.train_side)?;
        let resampled =
            crate::encoding::resample::resample(trained.view(), &self.resample_params())?;
        let direct = self.table(self.target_side)?;
        let side = self.target_side;
        crate::encoding::check_count("query", self.query, 0..=side * side - 1)?;
        let map = |table: &ndarray::Array2<f64>| {
            let query = table.row(1 + self.query);
            ndarray::Array2::from_shape_fn((side, side), |(y, x)| {
                query.dot(&table.row(1 + y * side + x)) / (self.dim / 2) as f64
            })
        };
        Ok(VisionMaps {
            resampled: map(&resampled),
            direct: map(&direct),
        })
    }
}

/// A learned position table read from a file: `prefix` rows (a CLS token) before the patches
/// of a `side x side` grid, in raster order.
#[derive(Debug, Clone, PartialEq)]
pub struct LearnedTable {
    pub table: ndarray::Array2<f64>,
    pub prefix: usize,
    pub side: usize,
}

/// The query's cosine similarity to every patch: of the learned table at its own grid, and of
/// it resampled to the larger grid.
#[derive(Debug, Clone, PartialEq)]
pub struct LearnedMaps {
    pub trained: ndarray::Array2<f64>,
    pub resampled: ndarray::Array2<f64>,
    /// The query's patch at the trained grid, `(x, y)`.
    pub trained_query: (usize, usize),
}

impl LearnedTable {
    /// The table's grid from its row count: a square number of patches, or one more (a CLS
    /// row first, as ViT and DeiT store it).
    pub fn new(table: ndarray::Array2<f64>) -> Result<Self, String> {
        let rows = table.nrows();
        let square = |n: usize| {
            let side = (n as f64).sqrt().round() as usize;
            (side >= 2 && side * side == n).then_some(side)
        };
        let (prefix, side) = match (square(rows), rows.checked_sub(1).and_then(square)) {
            (Some(side), _) => (0, side),
            (None, Some(side)) => (1, side),
            (None, None) => {
                return Err(format!(
                    "has {rows} rows: a square grid of patches (196 = 14 x 14), or one more with a CLS row (197)"
                ));
            }
        };
        if side > MAX_VISION_SIDE {
            return Err(format!(
                "is a {side} x {side} grid: the lab draws grids of up to 64 x 64"
            ));
        }
        if table.ncols() == 0 {
            return Err("has no columns".to_owned());
        }
        Ok(Self {
            table,
            prefix,
            side,
        })
    }

    /// The resample to `params`' larger grid, as a table of the engine (`sincos-2d-resample`
    /// takes any table).
    pub fn resample_spec(&self, params: &VisionParams) -> crate::engine::TableSpec {
        crate::engine::TableSpec::SinCos2dResample {
            input: self.table.clone(),
            params: crate::encoding::resample::ResampleParams {
                from: (self.side, self.side),
                prefix_rows: self.prefix,
                ..params.resample_params()
            },
        }
    }

    /// Both maps for the query of `params` (its grid, mode and antialias; the table's own
    /// width). The trained map's query is the patch at the same place of the smaller grid.
    pub fn maps(&self, params: &VisionParams) -> Result<LearnedMaps, ParamError> {
        let target = params.target_side;
        crate::encoding::check_count("query", params.query, 0..=target * target - 1)?;
        let resampled = crate::encoding::resample::resample(
            self.table.view(),
            &crate::encoding::resample::ResampleParams {
                from: (self.side, self.side),
                prefix_rows: self.prefix,
                ..params.resample_params()
            },
        )?;
        let (qx, qy) = (params.query % target, params.query / target);
        let trained_query = (qx * self.side / target, qy * self.side / target);
        let map = |table: &ndarray::Array2<f64>, prefix: usize, side: usize, query: usize| {
            let q = table.row(prefix + query);
            let q_norm = q.dot(&q).sqrt();
            ndarray::Array2::from_shape_fn((side, side), |(y, x)| {
                let p = table.row(prefix + y * side + x);
                let norms = q_norm * p.dot(&p).sqrt();
                if norms > 0.0 { q.dot(&p) / norms } else { 0.0 }
            })
        };
        Ok(LearnedMaps {
            trained: map(
                &self.table,
                self.prefix,
                self.side,
                trained_query.1 * self.side + trained_query.0,
            ),
            resampled: map(&resampled, self.prefix, target, params.query),
            trained_query,
        })
    }
}

/// The survey's ImageNet-100 results (top-1 accuracy, %), as shipped in
/// `assets/survey/imagenet100_resolution.csv`.
pub const SURVEY_CSV: &str = include_str!("../../assets/survey/imagenet100_resolution.csv");

/// One method's accuracies of the survey table.
#[derive(Debug, Clone, PartialEq)]
pub struct SurveySeries {
    pub method: String,
    /// `(test resolution in pixels, top-1 %)`.
    pub points: Vec<(u32, f64)>,
}

/// The survey table, one series per method (the CSV's columns after the resolution).
pub fn survey_series() -> Result<Vec<SurveySeries>, String> {
    let mut lines = SURVEY_CSV
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty());
    let header = lines.next().ok_or("the survey table is empty")?;
    let mut series: Vec<SurveySeries> = header
        .split(',')
        .skip(1)
        .map(|method| SurveySeries {
            method: method.trim().to_owned(),
            points: Vec::new(),
        })
        .collect();
    for line in lines {
        let mut cells = line.split(',');
        let resolution: u32 = cells
            .next()
            .and_then(|cell| cell.trim().parse().ok())
            .ok_or_else(|| format!("a row without a resolution: {line}"))?;
        for (column, cell) in series.iter_mut().zip(cells) {
            let accuracy: f64 = cell
                .trim()
                .parse()
                .map_err(|_| format!("not a number: {cell}"))?;
            column.points.push((resolution, accuracy));
        }
    }
    Ok(series)
}

/// The resolution the survey's models were trained at.
pub const SURVEY_TRAINING_RESOLUTION: u32 = 224;

/// A colour per method (the order of [`METHODS`]); the survey's series take them in turn.
pub const METHOD_COLORS: [[u8; 3]; 7] = [
    [31, 119, 180],
    [255, 127, 14],
    [44, 160, 44],
    [214, 39, 40],
    [148, 103, 189],
    [140, 86, 75],
    [227, 119, 194],
];

/// The colour of a method in every chart of the context lab and its figure.
pub fn method_color(kind: crate::encoding::rope_scaling::ScalingKind) -> [u8; 3] {
    let k = METHODS.iter().position(|&m| m == kind).unwrap_or(0);
    METHOD_COLORS[k % METHOD_COLORS.len()]
}

/// The lower chart of the view.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
pub enum ContextChart {
    /// The PI paper's fitted attention score against distance, per method.
    #[default]
    Score,
    /// RoFormer's long-term decay bound per method.
    Decay,
    /// ALiBi at L': the last query's attention with and without slope scaling.
    Alibi,
    /// The survey's ViT accuracies against test resolution.
    Survey,
}

/// The ALiBi chart's model: its heads, and one head or all.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct AlibiSettings {
    pub heads: usize,
    pub head: usize,
    pub all_heads: bool,
}

impl Default for AlibiSettings {
    fn default() -> Self {
        Self {
            heads: crate::encoding::defaults::HEADS,
            head: crate::encoding::defaults::HEADS - 1,
            all_heads: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::rope_scaling::{RopeScaling, ScalingKind};

    fn llama2() -> RopeModel {
        RopeModel {
            name: "llama-2".into(),
            head_dim: 128,
            base: 10_000.0,
            rotary_dim: None,
            trained: 4096,
            scaling: RopeScaling::default(),
        }
    }

    #[test]
    fn the_fitted_score_stays_small_where_fitted_and_grows_when_extrapolated() {
        let model = llama2();
        let fit = FittedScore::fit(&model, 7).unwrap();
        let theta = inv_freq(128, 10_000.0).unwrap().to_vec();
        // The fit: the score at the fitted points is close to their values.
        let residual = fit
            .points
            .iter()
            .map(|&(s, v)| (fit.score(&theta, s, 1.0) - v).powi(2))
            .sum::<f64>()
            / fit.points.len() as f64;
        assert!(residual < 1.0, "{residual}");
        let within = sample_distances(4096, 2048)
            .iter()
            .map(|&s| fit.score(&theta, s, 1.0).abs())
            .fold(0.0, f64::max);
        let beyond = (4096..16_384)
            .step_by(7)
            .map(|s| fit.score(&theta, s as f64, 1.0).abs())
            .fold(0.0, f64::max);
        assert!(within < 10.0 && beyond > 20.0 * within, "{within} {beyond}");
        // Interpolation by 4 evaluates the fit at s/4, inside [0, L).
        let pi: Vec<f64> = theta.iter().map(|t| t / 4.0).collect();
        for s in (0..16_384).step_by(13) {
            let s = s as f64;
            assert!((fit.score(&pi, s, 1.0) - fit.score(&theta, s / 4.0, 1.0)).abs() < 1e-9);
        }
    }

    #[test]
    fn extrapolation_leaves_the_slow_pairs_unseen_and_interpolation_none() {
        let model = llama2();
        let target = 16_384;
        let none = pair_reach(&model, &model.frequencies(RopeScaling::default()), target);
        // The pairs with a wavelength under 4096 turned fully in training: never unseen.
        for (i, reach) in none.iter().enumerate() {
            let full = reach.trained_turns >= 1.0;
            assert_eq!(full, reach.first_unseen.is_none(), "pair {i}");
            if let Some(p) = reach.first_unseen {
                // Unseen from distance L on (the first angle past (L-1)θ).
                assert_eq!(p, 4096, "pair {i}");
            }
        }
        let pi = model
            .method_scaling(ScalingKind::Linear, target)
            .map(|s| model.frequencies(s))
            .unwrap();
        // Interpolation by L'/L maps distance 4k onto k: the last three distances, 16381 to
        // 16383, land between the trained 4095 and 4096, past every angle training made (by
        // a quarter of a step or more); 16380 lands on 4095 itself and is seen.
        for (i, reach) in pair_reach(&model, &pi, target).iter().enumerate() {
            let expected = (none[i].trained_turns < 1.0).then_some(16_381);
            assert_eq!(reach.first_unseen, expected, "pair {i}");
            // Past training by 16383/4 - 4095 = 0.75 of a trained position, where unseen.
            let beyond = if expected.is_some() { 0.75 } else { 0.0 };
            assert!((reach.beyond_positions - beyond).abs() < 1e-6, "pair {i}");
        }
        // Extrapolated, the slowest pair (still under a turn at L') goes 16383 - 4095
        // positions past.
        let slowest = none.last().unwrap();
        assert!(slowest.target_turns < 1.0);
        assert!((slowest.beyond_positions - 12_288.0).abs() < 1e-6);
    }
}
