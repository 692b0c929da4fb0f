//! The precision lab: what a model's RoPE computes in float32, bfloat16 and float16, against
//! the exact value, as position grows.
//!
//! - [`cache_error`]: the cos cache as Hugging Face makes it (float32 inverse frequencies and
//!   angles, `cos` in float32, times the attention factor, then `.to(dtype)`), minus the exact
//!   cache, per position and pair; optionally with the positions cast to a half type before the
//!   product, as code that builds position ids in the model's dtype does (bfloat16 holds whole
//!   numbers exactly only up to 256, so positions above it collide).
//! - [`score_drift`]: `q_m · k_(m−D)` computed as a model in that dtype computes it (q and k in
//!   the dtype, the rotation `q cos + rotate_half(q) sin` with each product and sum rounded to
//!   the dtype, the dot product accumulated in float32 and rounded to the dtype), minus the
//!   exact score of the same q and k at offset D. RoPE's score depends only on the offset in
//!   exact arithmetic; in bfloat16 it drifts with absolute position (Wang et al., 2024, "When
//!   Precision Meets Position: BFloat16 Breaks Down RoPE in Long-Context Training").
//!
//! Rounding to bfloat16 and float16 is IEEE round-to-nearest-even (the `half` crate's), from
//! float32 results, as PyTorch's kernels round each operation's float32 result.

use ndarray::{Array1, Array2};

use super::ParamError;
use super::exact_angle::{TurnsPerStep, sin_cos};
use super::random::SplitMix64;
use super::rope::RopeParams;
use super::rope_scaling::RopeFrequencies;
use super::torch_f32::Arithmetic;

/// The type a model computes in.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Default,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
pub enum ComputeType {
    /// float32: 24 significant bits
    #[default]
    F32,
    /// bfloat16: float32's range, 8 significant bits
    Bf16,
    /// float16: 11 significant bits, up to 65504
    F16,
}

impl ComputeType {
    /// float32, float16, then bfloat16 (drawn last, on top: the lab's subject).
    pub const ALL: [ComputeType; 3] = [ComputeType::F32, ComputeType::F16, ComputeType::Bf16];

    /// The name PyTorch gives the type.
    pub fn name(self) -> &'static str {
        match self {
            ComputeType::F32 => "float32",
            ComputeType::Bf16 => "bfloat16",
            ComputeType::F16 => "float16",
        }
    }

    /// A float32 value rounded to this type (to nearest, ties to even), as a float32.
    pub fn round(self, value: f32) -> f32 {
        match self {
            ComputeType::F32 => value,
            ComputeType::Bf16 => half::bf16::from_f32(value).to_f32(),
            ComputeType::F16 => half::f16::from_f32(value).to_f32(),
        }
    }

    /// The largest whole number below which every whole number is exact in this type: 2^24,
    /// 2^8 or 2^11. Positions from it on collide (several round to one).
    pub fn exact_integers(self) -> u64 {
        match self {
            ComputeType::F32 => 1 << 24,
            ComputeType::Bf16 => 1 << 8,
            ComputeType::F16 => 1 << 11,
        }
    }

    /// The first position this type cannot tell from its neighbour below: above
    /// [`ComputeType::exact_integers`], `p` rounds to an even number (bfloat16: 257 is read as
    /// 256), and past each further power of two the positions sharing a value double.
    pub fn first_collision(self) -> u64 {
        self.exact_integers() + 1
    }
}

/// The cos cache's error in a compute type.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheErrorParams {
    pub rope: RopeParams,
    pub freqs: RopeFrequencies,
    /// The type `cos` is cast to.
    pub arith: ComputeType,
    /// The type positions are cast to before the product (`None`: float32, as HF).
    pub positions_in: Option<ComputeType>,
}

impl CacheErrorParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        self.rope.validate()?;
        self.freqs.validate(self.rope.dim, self.rope.base)?;
        if self.positions_in == Some(ComputeType::F32) {
            return Err(ParamError::new(
                "positions_in",
                "f32",
                "positions are float32 already: give bf16 or f16, or leave it out",
            ));
        }
        Ok(())
    }

    /// `[seq, R/2]`.
    pub fn shape(&self) -> [usize; 2] {
        [self.rope.seq, self.freqs.rotary(self.rope.dim) / 2]
    }
}

/// The torch float32 way of forming frequencies (Hugging Face's and Meta's, AVX2 build).
fn torch_mode() -> super::torch_f32::TorchMode {
    Arithmetic::TORCH_MODE
}

/// What [`cache_error`] computes each element from, formed once.
pub struct PreparedCacheError {
    torch_freqs: Vec<f32>,
    exact_turns: Vec<TurnsPerStep>,
    attention: f64,
    start: u64,
    arith: ComputeType,
    positions_in: Option<ComputeType>,
}

impl CacheErrorParams {
    /// The frequencies (float32 and exact) and the attention factor. Call on validated
    /// parameters.
    pub fn prepared(&self) -> PreparedCacheError {
        let (rope, freqs) = (&self.rope, &self.freqs);
        PreparedCacheError {
            torch_freqs: freqs.inv_freq_torch(rope.dim, rope.base, rope.seq, torch_mode()),
            exact_turns: freqs
                .exact_inv_freq(rope.dim, rope.base, rope.seq)
                .into_iter()
                .map(TurnsPerStep::of)
                .collect(),
            attention: freqs.attention_factor(),
            start: rope.start,
            arith: self.arith,
            positions_in: self.positions_in,
        }
    }
}

impl PreparedCacheError {
    /// Row `row` (position `start + row`), pair `pair`: the cache made in the compute type
    /// minus the exact cache.
    pub fn value(&self, row: usize, pair: usize) -> f64 {
        let position = self.start + row as u64;
        let mut p = position as f32;
        if let Some(cast) = self.positions_in {
            p = cast.round(p);
        }
        let angle = p * self.torch_freqs[pair];
        let cos = (f64::from(angle).cos() as f32) * self.attention as f32;
        let made = self.arith.round(cos);
        let exact = sin_cos(self.exact_turns[pair].at(position)).1 * self.attention;
        f64::from(made) - exact
    }
}

/// The cos cache of `params` as Hugging Face makes it in `params.arith`, minus the exact cache:
/// `[seq, R/2]`, one column per pair (the cache's two halves hold the same values).
pub fn cache_error(params: &CacheErrorParams) -> Result<Array2<f64>, ParamError> {
    params.validate()?;
    let prepared = params.prepared();
    let [seq, pairs] = params.shape();
    Ok(Array2::from_shape_fn((seq, pairs), |(row, pair)| {
        prepared.value(row, pair)
    }))
}

/// The most `seq x dim` a score drift table computes (each element costs `dim` sines and
/// cosines).
pub const MAX_DRIFT_WORK: u64 = 1 << 30;

/// The score drift of a query and key in a compute type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoreDriftParams {
    /// Key positions `0..seq`; the query sits `offset` after its key.
    pub seq: usize,
    pub dim: usize,
    pub base: f64,
    pub offset: u64,
    pub arith: ComputeType,
    /// q and k drawn uniformly from [-1, 1) with this seed; `None`: all ones.
    pub seed: Option<u64>,
}

impl ScoreDriftParams {
    /// The parameters of a whole table: [`ScoreDriftParams::validate`], and at most
    /// [`MAX_DRIFT_WORK`] of `seq x dim` (the lab's view and figure compute a sample of
    /// positions, and may go further).
    pub fn validate_table(&self) -> Result<(), ParamError> {
        self.validate()?;
        // Every element rotates q and k (d/2 sines and cosines each): bounded work.
        let work = (self.seq as u64).saturating_mul(self.dim as u64);
        if work > MAX_DRIFT_WORK {
            return Err(ParamError::new(
                "seq",
                self.seq,
                format!(
                    "rope-score-drift rotates q and k at every position: --seq x --dim is {work}, at most 2^30 (about a minute's work); use fewer positions or a narrower head"
                ),
            ));
        }
        Ok(())
    }

    pub fn validate(&self) -> Result<(), ParamError> {
        RopeParams {
            seq: self.seq,
            dim: self.dim,
            base: self.base,
            start: 0,
        }
        .validate()?;
        let last = (self.seq as u64 - 1).checked_add(self.offset);
        if last.is_none_or(|last| last >= 1 << 24) {
            return Err(ParamError::new(
                "offset",
                self.offset,
                format!(
                    "the query positions (offset to offset + seq - 1) must stay below 2^24, where float32 positions are exact; use --offset 0 to {}",
                    (1u64 << 24).saturating_sub(self.seq as u64)
                ),
            ));
        }
        Ok(())
    }

    /// The query and key, rounded to the compute type (a model holds them in it).
    pub fn vectors(&self) -> (Vec<f32>, Vec<f32>) {
        let draw = |random: &mut Option<SplitMix64>| -> f32 {
            let value = match random {
                Some(random) => (2.0 * random.next_unit() - 1.0) as f32,
                None => 1.0,
            };
            self.arith.round(value)
        };
        let mut random = self.seed.map(SplitMix64::new);
        let q = (0..self.dim).map(|_| draw(&mut random)).collect();
        let k = (0..self.dim).map(|_| draw(&mut random)).collect();
        (q, k)
    }
}

/// `x` rotated to `position` as Hugging Face's `apply_rotary_pos_emb` does in `arith`: the
/// cos and sin caches made in float32 and cast, `x * cos + rotate_half(x) * sin` with each
/// product and the sum rounded to `arith`. Half pairs `(i, i + d/2)`.
fn rotate_in(arith: ComputeType, x: &[f32], inv_freq: &[f32], position: u64) -> Vec<f32> {
    let half = x.len() / 2;
    let mut out = vec![0.0f32; x.len()];
    for i in 0..half {
        let angle = (position as f32) * inv_freq[i];
        let (sin, cos) = f64::from(angle).sin_cos();
        let (sin, cos) = (arith.round(sin as f32), arith.round(cos as f32));
        let (a, b) = (x[i], x[i + half]);
        let product = |u: f32, v: f32| arith.round(u * v);
        out[i] = arith.round(product(a, cos) + product(-b, sin));
        out[i + half] = arith.round(product(b, cos) + product(a, sin));
    }
    out
}

/// The exact score of `q` at `m` and `k` at `m − offset` under RoPE with exact frequencies
/// `inv_freq` (half pairs): it depends only on the offset.
fn exact_score(q: &[f32], k: &[f32], turns: &[TurnsPerStep], offset: u64) -> f64 {
    let half = q.len() / 2;
    (0..half)
        .map(|i| {
            let (a, b) = (f64::from(q[i]), f64::from(q[i + half]));
            let (c, d) = (f64::from(k[i]), f64::from(k[i + half]));
            // q · R(−D ω) k for the pair (a, b) and (c, d).
            let (sin, cos) = sin_cos(turns[i].at(offset));
            (a * c + b * d) * cos + (a * d - b * c) * sin
        })
        .sum()
}

/// What [`score_drift`] computes each element from, formed once.
pub struct PreparedScoreDrift {
    q: Vec<f32>,
    k: Vec<f32>,
    inv_freq: Vec<f32>,
    exact: f64,
    offset: u64,
    arith: ComputeType,
}

impl ScoreDriftParams {
    /// The vectors, the float32 frequencies and the exact score. Call on validated parameters.
    pub fn prepared(&self) -> PreparedScoreDrift {
        let freqs = RopeFrequencies::default();
        let turns: Vec<TurnsPerStep> = freqs
            .exact_inv_freq(self.dim, self.base, self.seq)
            .into_iter()
            .map(TurnsPerStep::of)
            .collect();
        let (q, k) = self.vectors();
        PreparedScoreDrift {
            exact: exact_score(&q, &k, &turns, self.offset),
            inv_freq: freqs.inv_freq_torch(self.dim, self.base, self.seq, torch_mode()),
            q,
            k,
            offset: self.offset,
            arith: self.arith,
        }
    }
}

impl PreparedScoreDrift {
    /// Key position `n`, query `n + offset`: the score in the compute type minus the exact.
    pub fn value(&self, n: usize) -> f64 {
        let key = rotate_in(self.arith, &self.k, &self.inv_freq, n as u64);
        let query = rotate_in(self.arith, &self.q, &self.inv_freq, n as u64 + self.offset);
        // Accumulated in float32, the result rounded to the type.
        let dot: f32 = query.iter().zip(&key).map(|(a, b)| a * b).sum();
        f64::from(self.arith.round(dot)) - self.exact
    }

    /// The exact score (the same at every position).
    pub fn exact(&self) -> f64 {
        self.exact
    }
}

/// For key positions `n = 0..seq` and queries at `n + offset`: the score computed in
/// `params.arith` minus the exact score.
pub fn score_drift(params: &ScoreDriftParams) -> Result<Array1<f64>, ParamError> {
    params.validate_table()?;
    let prepared = params.prepared();
    Ok(Array1::from_shape_fn(params.seq, |n| prepared.value(n)))
}
