//! What the precision lab draws, for its view and its figure alike: against position (on a log
//! axis, so at positions spread evenly over the decades), how far a query-key score drifts when
//! a model computes RoPE in float32, bfloat16 or float16, and how far its cos cache is from
//! the exact one (also with positions cast to bfloat16, which collide above 256).

use crate::encoding::ParamError;
use crate::encoding::precision::{CacheErrorParams, ComputeType, ScoreDriftParams};
use crate::encoding::rope::RopeParams;
use crate::encoding::rope_scaling::RopeFrequencies;
use crate::jobs::{Cancel, Cancelled};

/// Positions drawn: every one up to this, then spread evenly over each decade.
const POINTS: usize = 600;

/// The lab's settings.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct PrecisionSettings {
    /// Positions `0..seq`.
    pub seq: usize,
    pub dim: usize,
    pub base: f64,
    /// The query sits this far after the key.
    pub offset: u64,
    /// q and k drawn from this seed; `None`: all ones.
    pub seed: Option<u64>,
}

impl Default for PrecisionSettings {
    fn default() -> Self {
        Self {
            seq: 65_536,
            dim: 128,
            base: 10_000.0,
            offset: 16,
            seed: None,
        }
    }
}

/// The colour of each compute type's curves, in the view and its figure.
pub fn compute_color(compute: ComputeType) -> [u8; 3] {
    match compute {
        ComputeType::F32 => [31, 119, 180],
        ComputeType::Bf16 => [214, 39, 40],
        ComputeType::F16 => [44, 160, 44],
    }
}

/// One curve: `(position, |error|)`, zeros left out (they have no logarithm).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ErrorCurve {
    pub label: String,
    pub compute: ComputeType,
    /// Drawn dashed: positions cast to the type rather than computed in it.
    pub cast_positions: bool,
    pub points: Vec<[f64; 2]>,
}

/// Both charts' curves and the positions where a half type's positions start to collide.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PrecisionCurves {
    pub drift: Vec<ErrorCurve>,
    pub cache: Vec<ErrorCurve>,
    /// `(type, first position it cannot tell from the one below)` within the positions drawn.
    pub collisions: Vec<(ComputeType, u64)>,
    /// The exact score the drift is measured from.
    pub exact_score: f64,
}

impl PrecisionSettings {
    pub fn score_params(&self, compute: ComputeType) -> ScoreDriftParams {
        ScoreDriftParams {
            seq: self.seq,
            dim: self.dim,
            base: self.base,
            offset: self.offset,
            arith: compute,
            seed: self.seed,
        }
    }

    pub fn cache_params(
        &self,
        compute: ComputeType,
        positions_in: Option<ComputeType>,
    ) -> CacheErrorParams {
        CacheErrorParams {
            rope: RopeParams {
                seq: self.seq,
                dim: self.dim,
                base: self.base,
                start: 0,
            },
            freqs: RopeFrequencies::default(),
            arith: compute,
            positions_in,
        }
    }

    pub fn validate(&self) -> Result<(), ParamError> {
        self.score_params(ComputeType::F32).validate()?;
        self.cache_params(ComputeType::F32, None).validate()
    }
}

/// The positions drawn: `0..POINTS`, then about `POINTS` more spread evenly on a log axis up
/// to `seq - 1` (whole positions, each once).
pub fn sampled_positions(seq: usize) -> Vec<usize> {
    let mut positions: Vec<usize> = (0..seq.min(POINTS)).collect();
    if seq > POINTS {
        let (low, high) = ((POINTS as f64).ln(), ((seq - 1) as f64).ln());
        for k in 0..=POINTS {
            let p = (low + (high - low) * k as f64 / POINTS as f64)
                .exp()
                .round() as usize;
            if p > *positions.last().unwrap_or(&0) && p < seq {
                positions.push(p);
            }
        }
    }
    positions
}

/// Both charts for `settings`, checking `cancel` between curves.
pub fn curves(
    settings: &PrecisionSettings,
    cancel: &Cancel,
) -> Result<Result<PrecisionCurves, ParamError>, Cancelled> {
    if let Err(error) = settings.validate() {
        return Ok(Err(error));
    }
    let positions = sampled_positions(settings.seq);
    let nonzero = |points: Vec<[f64; 2]>| -> Vec<[f64; 2]> {
        points
            .into_iter()
            .filter(|p| p[1] > 0.0 && p[1].is_finite())
            .collect()
    };
    let mut drift = Vec::new();
    let mut exact_score = 0.0;
    for compute in ComputeType::ALL {
        cancel.check()?;
        let prepared = settings.score_params(compute).prepared();
        exact_score = prepared.exact();
        let points = positions
            .iter()
            .map(|&n| [n as f64, prepared.value(n).abs()])
            .collect();
        drift.push(ErrorCurve {
            label: format!("computed in {}", compute.name()),
            compute,
            cast_positions: false,
            points: nonzero(points),
        });
    }
    let pairs = settings.dim / 2;
    let mut cache = Vec::new();
    let cache_curves = ComputeType::ALL
        .into_iter()
        .map(|compute| (compute, None))
        .chain([(ComputeType::F32, Some(ComputeType::Bf16))]);
    for (compute, positions_in) in cache_curves {
        cancel.check()?;
        let prepared = settings.cache_params(compute, positions_in).prepared();
        let points = positions
            .iter()
            .map(|&p| {
                let worst = (0..pairs).fold(0.0f64, |m, i| m.max(prepared.value(p, i).abs()));
                [p as f64, worst]
            })
            .collect();
        cache.push(ErrorCurve {
            label: match positions_in {
                Some(cast) => format!("float32 cache, positions cast to {}", cast.name()),
                None => format!("cache in {}", compute.name()),
            },
            compute: positions_in.unwrap_or(compute),
            cast_positions: positions_in.is_some(),
            points: nonzero(points),
        });
    }
    let collisions = [ComputeType::Bf16, ComputeType::F16]
        .into_iter()
        .map(|compute| (compute, compute.first_collision()))
        .filter(|(_, p)| (*p as usize) < settings.seq)
        .collect();
    Ok(Ok(PrecisionCurves {
        drift,
        cache,
        collisions,
        exact_score,
    }))
}
