//! Relative position indices: T5's logarithmic buckets and Shaw et al.'s clipped distances,
//! integer tables that select a learned bias or embedding per (query, key) pair; and 2D
//! relative offsets on a patch grid, with the logits of row and column embeddings summed.

use ndarray::Array2;

use super::grid::GridParams;
use super::{ParamError, SEQ_RANGE, check_count, fill_2d};

/// Parameters of the T5 bucket table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct T5BucketParams {
    pub seq: usize,
    pub num_buckets: usize,
    pub max_distance: usize,
    /// Encoder (true) or decoder (false) attention.
    pub bidirectional: bool,
}

impl Default for T5BucketParams {
    fn default() -> Self {
        Self {
            seq: 64,
            num_buckets: 32,
            max_distance: 128,
            bidirectional: true,
        }
    }
}

/// Largest bucket count and distance accepted (buckets index an embedding table).
pub const MAX_BUCKETS: usize = 1 << 20;

impl T5BucketParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        check_count("seq", self.seq, SEQ_RANGE)?;
        let min_buckets = if self.bidirectional { 4 } else { 2 };
        check_count("num-buckets", self.num_buckets, min_buckets..=MAX_BUCKETS).map_err(|e| {
            ParamError::new(
                "num-buckets",
                self.num_buckets,
                format!(
                    "{} ({} needs at least {min_buckets} so that some buckets are exact)",
                    e.allowed,
                    if self.bidirectional {
                        "bidirectional"
                    } else {
                        "unidirectional"
                    }
                ),
            )
        })?;
        let exact = self.max_exact();
        if self.max_distance <= exact || self.max_distance > MAX_BUCKETS * 1024 {
            return Err(ParamError::new(
                "max-distance",
                self.max_distance,
                format!(
                    "must be greater than the {exact} exact buckets (num-buckets{} / 2) and at \
                     most {}",
                    if self.bidirectional { " / 2" } else { "" },
                    MAX_BUCKETS * 1024
                ),
            ));
        }
        Ok(())
    }

    /// Buckets for each sign of the offset (all of them when unidirectional).
    pub fn buckets_per_direction(&self) -> usize {
        if self.bidirectional {
            self.num_buckets / 2
        } else {
            self.num_buckets
        }
    }

    /// Distances below this get a bucket of their own (the exact region); from it up to
    /// `max_distance`, buckets widen logarithmically; beyond, all share the last bucket.
    pub fn max_exact(&self) -> usize {
        self.buckets_per_direction() / 2
    }

    /// Hugging Face T5 `_relative_position_bucket(key - query)`.
    ///
    /// The logarithmic part is evaluated in f32, as PyTorch does on a float32 tensor, because
    /// truncation to an integer makes the bucket edges depend on that rounding.
    pub fn bucket(&self, relative_position: i64) -> i32 {
        let buckets = self.buckets_per_direction() as i64;
        let mut bucket = 0;
        let distance = if self.bidirectional {
            if relative_position > 0 {
                bucket += buckets;
            }
            relative_position.unsigned_abs()
        } else {
            (-relative_position.min(0)) as u64
        };
        let max_exact = self.max_exact() as u64;
        bucket += if distance < max_exact {
            distance as i64
        } else {
            let log_ratio = (distance as f32 / max_exact as f32).ln();
            let log_range = (self.max_distance as f64 / max_exact as f64).ln() as f32;
            let scaled = log_ratio / log_range * (buckets - max_exact as i64) as f32;
            (max_exact as i64 + scaled as i64).min(buckets - 1)
        };
        bucket as i32
    }
}

/// The offsets `key - query` that share one T5 bucket: `from ..= to`, `None` where the range
/// runs on without end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BucketRange {
    pub bucket: i32,
    pub from: Option<i64>,
    pub to: Option<i64>,
}

impl T5BucketParams {
    /// Every bucket's offsets, from the most negative offset to the most positive. Beyond
    /// `max_distance` nothing changes, so the offsets scanned stop one past it.
    pub fn bucket_ranges(&self) -> Vec<BucketRange> {
        let reach = self.max_distance as i64 + 1;
        let mut ranges: Vec<BucketRange> = Vec::new();
        for offset in -reach..=reach {
            let bucket = self.bucket(offset);
            match ranges.last_mut() {
                Some(last) if last.bucket == bucket => last.to = Some(offset),
                _ => ranges.push(BucketRange {
                    bucket,
                    from: Some(offset),
                    to: Some(offset),
                }),
            }
        }
        if let Some(first) = ranges.first_mut() {
            first.from = None;
        }
        if let Some(last) = ranges.last_mut() {
            last.to = None;
        }
        ranges
    }
}

/// The `[seq, seq]` table of T5 buckets for query `i` (row) and key `j` (column).
pub fn t5_buckets(params: &T5BucketParams) -> Result<Array2<i32>, ParamError> {
    params.validate()?;
    Ok(fill_2d(params.seq, params.seq, |i, j| {
        params.bucket(j as i64 - i as i64)
    }))
}

/// Parameters of the clipped relative distance table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RelativeClipParams {
    pub seq: usize,
    /// Distances beyond `±max_relative` share one index.
    pub max_relative: usize,
}

/// Largest clipping distance, so that `2K` fits an `i32`.
pub const MAX_RELATIVE: usize = 1 << 30;

impl RelativeClipParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        check_count("seq", self.seq, SEQ_RANGE)?;
        check_count("max-relative", self.max_relative, 0..=MAX_RELATIVE)
    }

    /// The index of `key - query`.
    pub fn index(&self, relative_position: i64) -> i32 {
        let k = self.max_relative as i64;
        (relative_position.clamp(-k, k) + k) as i32
    }
}

/// The `[seq, seq]` table `clip(j - i, -K, K) + K` (Shaw et al. 2018).
pub fn relative_clip(params: &RelativeClipParams) -> Result<Array2<i32>, ParamError> {
    params.validate()?;
    Ok(fill_2d(params.seq, params.seq, |i, j| {
        params.index(j as i64 - i as i64)
    }))
}

/// The offset `(dy, dx)` from patch `query` to patch `key` on `grid` (rows down, columns right).
pub fn offset_2d(grid: &GridParams, query: usize, key: usize) -> (i64, i64) {
    let (qx, qy) = grid.patch_xy(query);
    let (kx, ky) = grid.patch_xy(key);
    (ky as i64 - qy as i64, kx as i64 - qx as i64)
}

/// 2D relative logits as Stand-Alone Self-Attention and the Bottleneck Transformer make them:
/// one table of `2H - 1` row-offset embeddings and one of `2W - 1` column-offset embeddings;
/// the query's logit for a key at `(dy, dx)` is `q · r_row[dy] + q · r_col[dx]`. Here with a
/// random query and random embeddings (unit variance scaled by `d^(-1/2)`, as at
/// initialisation), which is enough to show the logit's shape: a sum of a row term and a
/// column term.
#[derive(Debug, Clone, PartialEq)]
pub struct Relative2dLogits {
    pub grid: GridParams,
    /// `q · r_row[dy]` at index `dy + H - 1`.
    pub row_terms: Vec<f64>,
    /// `q · r_col[dx]` at index `dx + W - 1`.
    pub col_terms: Vec<f64>,
}

impl Relative2dLogits {
    pub fn random(grid: GridParams, dim: usize, seed: u64) -> Result<Self, ParamError> {
        grid.validate()?;
        check_count("dim", dim, 1..=4096)?;
        let mut rng = super::random::SplitMix64::new(seed);
        // Uniform on [-sqrt(3), sqrt(3)] has unit variance.
        let scale = 3f64.sqrt() / (dim as f64).sqrt();
        let vector = |rng: &mut super::random::SplitMix64| -> Vec<f64> {
            (0..dim)
                .map(|_| (2.0 * rng.next_unit() - 1.0) * scale)
                .collect()
        };
        let query = vector(&mut rng);
        let terms = |count: usize, rng: &mut super::random::SplitMix64| -> Vec<f64> {
            (0..count)
                .map(|_| {
                    let embedding = vector(rng);
                    query.iter().zip(&embedding).map(|(q, r)| q * r).sum()
                })
                .collect()
        };
        let row_terms = terms(2 * grid.grid_h - 1, &mut rng);
        let col_terms = terms(2 * grid.grid_w - 1, &mut rng);
        Ok(Self {
            grid,
            row_terms,
            col_terms,
        })
    }

    /// The logit of the key at `(dy, dx)` from the query.
    pub fn logit(&self, dy: i64, dx: i64) -> f64 {
        let row = (dy + self.grid.grid_h as i64 - 1) as usize;
        let col = (dx + self.grid.grid_w as i64 - 1) as usize;
        self.row_terms[row] + self.col_terms[col]
    }

    /// Every key's logit from patch `query`, `[grid_h, grid_w]`.
    pub fn map(&self, query: usize) -> Array2<f64> {
        let grid = self.grid;
        fill_2d(grid.grid_h, grid.grid_w, |y, x| {
            let (dy, dx) = offset_2d(&grid, query, y * grid.grid_w + x);
            self.logit(dy, dx)
        })
    }
}
