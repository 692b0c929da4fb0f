//! The RoPE corkscrew's geometry: each selected frequency pair rotates its part of a query
//! vector by `p θ_i` at position `p`, which traced along the positions is a helix. Built in f64
//! from RoPE's angles and handed to the GPU as f32.

use crate::encoding::PairLayout;
use std::ops::Range;

use bytemuck::{Pod, Zeroable};
use rayon::prelude::*;

use crate::encoding::rope::{inv_freq, rotate_pair};
use crate::encoding::{MAX_POSITION, ParamError, check_base, check_even_dim};

/// The most helices drawn at once (and the size of the shader's per-helix arrays).
pub const MAX_HELICES: usize = 64;
/// The most positions drawn along the axis.
pub const MAX_DRAWN_POSITIONS: usize = 65_536;
/// Vertices a helix gets per turn when it turns faster than once in a few positions, so that
/// fast pairs stay curves rather than zigzags between integer positions.
const SAMPLES_PER_TURN: f64 = 24.0;
/// At most this many vertices between two integer positions.
const MAX_SUBSTEPS: usize = 16;
/// The vertex budget: with more, helices fall back to integer positions only.
const MAX_VERTICES: usize = 4 << 20;

/// One vertex of a helix. Keep in sync with `HelixVertex` in `shaders/corkscrew.wgsl`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub struct HelixVertex {
    /// `[p - first position, rotated a, rotated b]` for the pair `(a, b)` at position `p`.
    pub position: [f32; 3],
    /// Which helix of the scene (its index in [`CorkscrewScene::helices`]), with
    /// [`KEY_LINE_FLAG`] on the vertices of a key helix.
    pub helix: u32,
}

/// Marks a vertex of a key's helix (drawn fainter than the query's). Keep in sync with
/// `KEY_LINE_FLAG` in `shaders/corkscrew.wgsl`.
pub const KEY_LINE_FLAG: u32 = 0x4000_0000;

/// What to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct CorkscrewParams<'a> {
    pub dim: usize,
    pub base: f64,
    pub layout: PairLayout,
    /// Frequency indices, each below `dim / 2`.
    pub pairs: &'a [usize],
    pub first_position: u64,
    pub position_count: usize,
    /// The vector being rotated, of length `dim`.
    pub query: &'a [f64],
    /// A key vector whose own helices are drawn too (fainter), where it differs from the
    /// query: the key's ring at position `n` lies on its helix.
    pub key: Option<&'a [f64]>,
}

/// One helix: a pair's rotation of the query along the drawn positions.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Helix {
    /// The frequency index `i`.
    pub pair: usize,
    /// `θ_i` in radians per position.
    pub theta: f64,
    /// The length of the query's pair: the helix's radius.
    pub radius: f64,
    /// Its vertices in [`CorkscrewScene::vertices`].
    pub vertices: Range<usize>,
    /// Vertices per position step.
    pub substeps: usize,
}

/// Every helix's vertices, one line strip per helix.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CorkscrewScene {
    #[serde(with = "crate::jobs::remote::pod_vec")]
    pub vertices: Vec<HelixVertex>,
    pub helices: Vec<Helix>,
    /// The key's helices, pair for pair with `helices`, when the key differs from the query.
    pub key_helices: Vec<Helix>,
    pub first_position: u64,
    pub position_count: usize,
    /// The largest radius (1 when every pair of the query is zero).
    pub max_radius: f64,
}

impl CorkscrewParams<'_> {
    pub fn validate(&self) -> Result<(), ParamError> {
        check_even_dim("dim", self.dim)?;
        check_base("base", self.base)?;
        if self.query.len() != self.dim || self.key.is_some_and(|k| k.len() != self.dim) {
            return Err(ParamError::new(
                "query",
                format!("of length {}", self.query.len()),
                format!("must have length dim = {}", self.dim),
            ));
        }
        if self.pairs.is_empty() || self.pairs.len() > MAX_HELICES {
            return Err(ParamError::new(
                "pairs",
                format!("({} of them)", self.pairs.len()),
                format!("1 to {MAX_HELICES} pairs can be drawn at once"),
            ));
        }
        if let Some(&pair) = self.pairs.iter().find(|&&p| p >= self.dim / 2) {
            return Err(ParamError::new(
                "pairs",
                pair,
                format!(
                    "pairs run from 0 to {} for dim {}",
                    self.dim / 2 - 1,
                    self.dim
                ),
            ));
        }
        if !(1..=MAX_DRAWN_POSITIONS).contains(&self.position_count) {
            return Err(ParamError::new(
                "positions",
                self.position_count,
                format!("1 to {MAX_DRAWN_POSITIONS} positions can be drawn"),
            ));
        }
        if self.first_position + self.position_count as u64 - 1 > MAX_POSITION {
            return Err(ParamError::new(
                "start",
                self.first_position,
                format!(
                    "the last position must stay below 2^53 = {}",
                    MAX_POSITION + 1
                ),
            ));
        }
        Ok(())
    }
}

/// Builds the helices.
pub fn build(params: &CorkscrewParams<'_>) -> Result<CorkscrewScene, ParamError> {
    params.validate()?;
    let theta = inv_freq(params.dim, params.base)?;
    let steps = params.position_count - 1;
    let mut substeps: Vec<usize> = params
        .pairs
        .iter()
        .map(|&i| {
            let per_position = theta[i] * SAMPLES_PER_TURN / std::f64::consts::TAU;
            (per_position.ceil() as usize).clamp(1, MAX_SUBSTEPS)
        })
        .collect();
    let count = |substeps: &[usize]| substeps.iter().map(|s| steps * s + 1).sum::<usize>();
    let key = params.key.filter(|key| *key != params.query);
    let copies = if key.is_some() { 2 } else { 1 };
    if count(&substeps) * copies > MAX_VERTICES {
        substeps.fill(1);
    }

    // The query's helices, then the key's (when it differs), in one vertex buffer.
    let mut next = 0;
    let mut helices_of = |vector: &[f64]| -> Vec<Helix> {
        params
            .pairs
            .iter()
            .zip(&substeps)
            .map(|(&pair, &substeps)| {
                let (a, b) = params.layout.pair(pair, params.dim);
                let len = steps * substeps + 1;
                let helix = Helix {
                    pair,
                    theta: theta[pair],
                    radius: vector[a].hypot(vector[b]),
                    vertices: next..next + len,
                    substeps,
                };
                next += len;
                helix
            })
            .collect()
    };
    let helices = helices_of(params.query);
    let key_helices = key.map(&mut helices_of).unwrap_or_default();
    let trace = |helices: &[Helix], vector: &[f64], flag: u32| -> Vec<Vec<HelixVertex>> {
        helices
            .par_iter()
            .enumerate()
            .map(|(index, helix)| {
                let (a, b) = params.layout.pair(helix.pair, params.dim);
                let (qa, qb) = (vector[a], vector[b]);
                (0..helix.vertices.len())
                    .map(|k| {
                        let (step, sub) = (k / helix.substeps, k % helix.substeps);
                        let position = (params.first_position + step as u64) as f64;
                        let fraction = sub as f64 / helix.substeps as f64;
                        // At integer positions this is exactly RoPE's angle `p θ_i`; in
                        // between, the curve the rotation sweeps.
                        let angle = position * helix.theta + fraction * helix.theta;
                        let (x, y) = rotate_pair(qa, qb, angle);
                        HelixVertex {
                            position: [(step as f64 + fraction) as f32, x as f32, y as f32],
                            helix: index as u32 | flag,
                        }
                    })
                    .collect()
            })
            .collect()
    };
    let mut vertices = trace(&helices, params.query, 0).concat();
    if let Some(key) = key {
        vertices.extend(trace(&key_helices, key, KEY_LINE_FLAG).concat());
    }
    let max_radius = helices
        .iter()
        .chain(&key_helices)
        .map(|h| h.radius)
        .fold(0.0, f64::max);
    Ok(CorkscrewScene {
        vertices,
        helices,
        key_helices,
        first_position: params.first_position,
        position_count: params.position_count,
        max_radius: if max_radius > 0.0 { max_radius } else { 1.0 },
    })
}

/// How the scene sits in the world: positions along x, helices stacked along y (the first
/// selected pair on top), each turning in its own `(y, z)` plane, the largest radius 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SceneLayout {
    /// World x of position step 0, and world units per position.
    pub x_offset: f32,
    pub x_scale: f32,
    /// Divides every rotated pair so that the largest radius is 1.
    pub radius_scale: f32,
    /// World distance between two helices' axes.
    pub spacing: f32,
    pub helix_count: usize,
}

impl SceneLayout {
    pub fn of(scene: &CorkscrewScene) -> Self {
        let helix_count = scene.helices.len().max(1);
        let spacing = 2.6;
        let length = (helix_count as f32 * spacing * 1.8).max(12.0);
        let steps = scene.position_count.saturating_sub(1).max(1) as f32;
        Self {
            x_offset: -length / 2.0,
            x_scale: length / steps,
            radius_scale: (1.0 / scene.max_radius) as f32,
            spacing,
            helix_count,
        }
    }

    /// World y of helix `index`'s axis.
    pub fn axis_y(&self, index: usize) -> f32 {
        ((self.helix_count as f32 - 1.0) / 2.0 - index as f32) * self.spacing
    }

    /// Where a vertex of helix `index` lies in the world.
    pub fn world(&self, index: usize, vertex: [f32; 3]) -> glam::Vec3 {
        glam::Vec3::new(
            vertex[0] * self.x_scale + self.x_offset,
            vertex[1] * self.radius_scale + self.axis_y(index),
            vertex[2] * self.radius_scale,
        )
    }

    /// Where the first and last drawn positions are named, under the lowest helix, and the
    /// names (`p = 0`, `p = 255`): the same in the app and the figure.
    pub fn position_labels(&self, scene: &CorkscrewScene) -> [(glam::Vec3, String); 2] {
        let bottom = scene.helices.len().saturating_sub(1);
        let steps = scene.position_count.saturating_sub(1);
        let below = glam::Vec3::NEG_Y * 1.4;
        [0, steps].map(|step| {
            (
                self.world(bottom, [step as f32, 0.0, 0.0]) + below,
                format!(
                    "p = {}",
                    crate::numbers::thousands(scene.first_position + step as u64)
                ),
            )
        })
    }

    /// Half the extent of the scene along x, y and z.
    pub fn half_extent(&self) -> glam::Vec3 {
        glam::Vec3::new(
            -self.x_offset,
            self.helix_count as f32 * self.spacing / 2.0,
            1.0,
        )
    }
}

/// Which pairs to draw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PairSelection {
    All,
    /// Pairs `0, k, 2k, ...`.
    EveryKth(usize),
    /// A list such as `0, 4, 8-12`.
    List(String),
}

impl PairSelection {
    /// The selected pairs of an encoding with `pair_count` pairs, in increasing order.
    pub fn pairs(&self, pair_count: usize) -> Result<Vec<usize>, ParamError> {
        let last = pair_count.saturating_sub(1);
        let pairs: Vec<usize> = match self {
            PairSelection::All => (0..pair_count).collect(),
            PairSelection::EveryKth(0) => {
                return Err(ParamError::new("every", 0, "the step must be at least 1"));
            }
            PairSelection::EveryKth(k) => (0..pair_count).step_by(*k).collect(),
            PairSelection::List(text) => {
                // Where each listed range starts and ends, counted per pair: memory and time
                // bounded by the pair count however long or repetitive the list is.
                let mut edges = vec![0i64; pair_count + 1];
                for item in text.split([',', ' ']).filter(|s| !s.trim().is_empty()) {
                    let bad = || {
                        ParamError::new(
                            "pairs",
                            format!("'{item}'"),
                            format!("list pair numbers 0 to {last}, or ranges such as 2-5"),
                        )
                    };
                    let number = |s: &str| s.trim().parse::<usize>().map_err(|_| bad());
                    let (from, to) = match item.split_once('-') {
                        Some((a, b)) => (number(a)?, number(b)?),
                        None => (number(item)?, number(item)?),
                    };
                    if from > to || to > last || pair_count == 0 {
                        return Err(bad());
                    }
                    edges[from] += 1;
                    edges[to + 1] -= 1;
                }
                let mut covering = 0;
                let pairs: Vec<usize> = (0..pair_count)
                    .filter(|&i| {
                        covering += edges[i];
                        covering > 0
                    })
                    .collect();
                if pairs.is_empty() {
                    return Err(ParamError::new(
                        "pairs",
                        "(none)",
                        format!("list at least one pair, 0 to {last}"),
                    ));
                }
                pairs
            }
        };
        Ok(pairs)
    }
}

/// At most [`MAX_HELICES`] of `pairs`, evenly spaced among them; and whether any were left out.
pub fn thin_pairs(pairs: Vec<usize>) -> (Vec<usize>, bool) {
    if pairs.len() > MAX_HELICES {
        let step = pairs.len().div_ceil(MAX_HELICES);
        (pairs.into_iter().step_by(step).collect(), true)
    } else {
        (pairs, false)
    }
}

/// The vector the corkscrew rotates (and the key it is scored against).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ProbeVector {
    /// `(1, 0)` in every pair: the helix of pair `i` is exactly `(p, cos p θ_i, sin p θ_i)`.
    UnitPairs,
    /// Every component 1.
    Ones,
    /// Components uniform in `[-1, 1]` from a seed.
    Random(u64),
}

impl ProbeVector {
    /// The vector for an embedding of width `dim`, laid out as `layout` pairs it.
    pub fn values(self, dim: usize, layout: PairLayout) -> Vec<f64> {
        match self {
            ProbeVector::UnitPairs => {
                let mut v = vec![0.0; dim];
                for i in 0..dim / 2 {
                    v[layout.pair(i, dim).0] = 1.0;
                }
                v
            }
            ProbeVector::Ones => vec![1.0; dim],
            ProbeVector::Random(seed) => {
                let mut random = crate::encoding::random::SplitMix64::new(seed);
                (0..dim).map(|_| 2.0 * random.next_unit() - 1.0).collect()
            }
        }
    }
}

/// `--query-vector` and `--key-vector`: unit-pairs, ones or random:SEED.
pub fn parse_probe(text: &str) -> Result<ProbeVector, String> {
    match text {
        "unit-pairs" => Ok(ProbeVector::UnitPairs),
        "ones" => Ok(ProbeVector::Ones),
        _ => text
            .strip_prefix("random:")
            .and_then(|seed| seed.parse().ok())
            .map(ProbeVector::Random)
            .ok_or_else(|| "use unit-pairs, ones or random:SEED (SEED a whole number)".to_owned()),
    }
}
