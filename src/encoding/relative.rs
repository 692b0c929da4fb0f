//! Relative position indices: T5's logarithmic buckets and Shaw et al.'s clipped distances.
//! Both are integer tables that select a learned bias or embedding per (query, key) pair.

use ndarray::Array2;

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

    fn buckets_per_direction(&self) -> usize {
        if self.bidirectional {
            self.num_buckets / 2
        } else {
            self.num_buckets
        }
    }

    /// Offsets below this get a bucket of their own.
    fn max_exact(&self) -> usize {
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
