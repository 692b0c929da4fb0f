//! Relative position index tables: T5's buckets and Shaw et al.'s clipped offsets, `[seq, seq]`
//! integer tables whose value depends on `key - query` alone. Their settings are read off the
//! offsets (a clipped table's centre is `K`; T5's bucket count from its values, and
//! `max_distance` as the whole interval of distances that give the same buckets), then the
//! table is computed by the engine and compared element by element like every hypothesis.

use ndarray::{Array2, ArrayD};

use super::{PROBE_ROWS, Search};
use crate::encoding::relative::{MAX_BUCKETS, MAX_RELATIVE, RelativeClipParams, T5BucketParams};
use crate::engine::{TableSpec, cpu};

/// The T5 settings of the paper and of Hugging Face's configs: named first where the table
/// cannot tell them from others.
const T5_NUM_BUCKETS: usize = 32;
const T5_MAX_DISTANCE: usize = 128;

/// Most bucket counts tried for one unidirectional table (the values bound them to a range
/// about as wide as the exact region; this only caps the work on a hostile table).
const MAX_BUCKET_COUNTS: usize = 4096;

/// Adds T5 and clipped-offset hypotheses for a square table of whole numbers, as stored
/// (`[query, key]`) and transposed (`[key, query]`).
pub(super) fn relative_indices(search: &mut Search, table: &Array2<f64>) {
    let seq = table.nrows();
    let whole = |v: &f64| v.fract() == 0.0 && (0.0..=f64::from(i32::MAX)).contains(v);
    if seq < 2 || table.ncols() != seq || !table.iter().all(whole) {
        return;
    }
    for transposed in [false, true] {
        // The value at offset key - query: from the first row (offsets ≥ 0) and the first
        // column (offsets < 0); the comparison of the whole table checks the rest.
        let by_offset: Vec<i64> = (-(seq as i64 - 1)..seq as i64)
            .map(|offset| {
                let (query, key) = if offset >= 0 {
                    (0, offset as usize)
                } else {
                    (offset.unsigned_abs() as usize, 0)
                };
                let value = if transposed {
                    table[[key, query]]
                } else {
                    table[[query, key]]
                };
                value as i64
            })
            .collect();
        let offsets = Offsets {
            seq,
            by_offset,
            transposed,
        };
        let suffix = if transposed {
            ", transposed (rows are keys)"
        } else {
            ""
        };
        let orient = |reference: ArrayD<f64>| {
            if transposed {
                reference.reversed_axes()
            } else {
                reference
            }
        };
        clipped_offsets(search, &offsets, suffix, &orient);
        t5_buckets(search, &offsets, suffix, &orient);
    }
}

/// A square table's values by offset `key - query`, from `-(seq - 1)` to `seq - 1`.
struct Offsets {
    seq: usize,
    by_offset: Vec<i64>,
    /// Read from a table whose rows are keys.
    transposed: bool,
}

impl Offsets {
    fn at(&self, offset: i64) -> i64 {
        self.by_offset[(offset + self.seq as i64 - 1) as usize]
    }

    fn all(&self) -> impl Iterator<Item = i64> {
        -(self.seq as i64 - 1)..self.seq as i64
    }
}

fn computed(spec: TableSpec) -> Option<ArrayD<f64>> {
    super::noted(cpu::compute(&spec)).map(|table| table.into_real())
}

/// `clip(j - i, -K, K) + K`: the diagonal holds `K`.
fn clipped_offsets(
    search: &mut Search,
    offsets: &Offsets,
    suffix: &str,
    orient: &dyn Fn(ArrayD<f64>) -> ArrayD<f64>,
) {
    let k = offsets.at(0) as usize;
    if k > MAX_RELATIVE {
        return;
    }
    let seq = offsets.seq;
    let params = RelativeClipParams {
        seq,
        max_relative: k,
    };
    let unclipped = if k >= seq - 1 {
        format!(" (no offset of {seq} positions reaches ±{k}: nothing is clipped)")
    } else {
        String::new()
    };
    let description = format!(
        "clipped relative offsets (Shaw et al.), clip(j - i, -{k}, {k}) + {k}, \
         --max-relative {k}, {seq} positions{unclipped}{suffix}"
    );
    search.name_words(
        description.clone(),
        super::TableWords {
            kind: "relative-clip",
            options: vec![("seq", seq.to_string()), ("max_relative", k.to_string())],
        },
    );
    search.consider_probed(
        description,
        first_rows(seq, offsets.transposed, |offset| {
            f64::from(params.index(offset))
        }),
        || computed(TableSpec::RelativeClip(params)).map(orient),
    );
}

/// The first [`PROBE_ROWS`] rows of the `[seq, seq]` table whose value at `key - query` is
/// `value`, laid out as the file: rows are queries, or keys when `transposed`.
fn first_rows(seq: usize, transposed: bool, value: impl Fn(i64) -> f64) -> ArrayD<f64> {
    Array2::from_shape_fn((seq.min(PROBE_ROWS), seq), |(row, column)| {
        let (query, key) = if transposed {
            (column, row)
        } else {
            (row, column)
        };
        value(key as i64 - query as i64)
    })
    .into_dyn()
}

/// T5's buckets: the direction, the bucket count and the interval of `max_distance` that
/// reproduce the offsets, then the roundest setting of them.
fn t5_buckets(
    search: &mut Search,
    offsets: &Offsets,
    suffix: &str,
    orient: &dyn Fn(ArrayD<f64>) -> ArrayD<f64>,
) {
    let seq = offsets.seq;
    // A unidirectional (decoder) table puts every later key in bucket 0; a bidirectional one
    // puts the next key in bucket num_buckets / 2 + 1.
    let next = offsets.at(1);
    let bidirectional = next != 0;
    let counts: Vec<usize> = if bidirectional {
        if next < 3 {
            return;
        }
        vec![2 * (next as usize - 1)]
    } else {
        // Distances below num_buckets / 2 are buckets of their own: the first distance that
        // shares a bucket bounds the count from above, the largest bucket from below.
        let shared = (0..seq)
            .find(|&n| offsets.at(-(n as i64)) != n as i64)
            .unwrap_or(seq);
        let largest = offsets.all().map(|o| offsets.at(o)).max().unwrap_or(0);
        let from = (largest as usize + 1).max(2);
        let to = (2 * shared + 1).min(MAX_BUCKETS);
        let mut counts: Vec<usize> = (from..=to).take(MAX_BUCKET_COUNTS).collect();
        // The counts a person would choose, beyond the cap too.
        let powers = (1..usize::BITS).map(|k| 1usize << k);
        for count in powers
            .filter(|c| (from..=to).contains(c))
            .chain([T5_NUM_BUCKETS])
        {
            if !counts.contains(&count) {
                counts.push(count);
            }
        }
        counts
    };
    let fits: Vec<(usize, usize, usize)> = counts
        .iter()
        .filter_map(|&num_buckets| {
            let (lo, hi) = distances_that_fit(offsets, num_buckets, bidirectional)?;
            Some((num_buckets, lo, hi))
        })
        .collect();
    let described = |params: &T5BucketParams, note: &str| {
        format!(
            "T5 relative position buckets, {}, --num-buckets {} --max-distance {}, {seq} \
             positions{note}{suffix}",
            if params.bidirectional {
                "bidirectional (encoder)"
            } else {
                "unidirectional (decoder)"
            },
            params.num_buckets,
            params.max_distance,
        )
    };
    let Some(&(num_buckets, lo, hi)) = fits
        .iter()
        .find(|(n, lo, hi)| *n == T5_NUM_BUCKETS && (*lo..=*hi).contains(&T5_MAX_DISTANCE))
        .or_else(|| fits.iter().find(|(n, ..)| n.is_power_of_two()))
        .or_else(|| fits.first())
    else {
        // Nothing fits exactly: T5's own setting in this direction, as the closest to name.
        let params = T5BucketParams {
            seq,
            num_buckets: T5_NUM_BUCKETS,
            max_distance: T5_MAX_DISTANCE,
            bidirectional,
        };
        search.consider_probed(
            described(&params, ""),
            first_rows(seq, offsets.transposed, |offset| {
                f64::from(params.bucket(offset))
            }),
            || computed(TableSpec::T5Buckets(params)).map(orient),
        );
        return;
    };
    let params = T5BucketParams {
        seq,
        num_buckets,
        max_distance: roundest_distance(lo, hi),
        bidirectional,
    };
    let mut alike = Vec::new();
    if lo < hi {
        alike.push(if hi == max_distance_limit() {
            format!("any --max-distance from {lo} up")
        } else {
            format!("any --max-distance from {lo} to {hi}")
        });
    }
    if fits.len() > 1 {
        let others: Vec<String> = fits
            .iter()
            .filter(|(n, ..)| *n != num_buckets)
            .take(3)
            .map(|(n, ..)| n.to_string())
            .collect();
        let more = if fits.len() > 4 { ", ..." } else { "" };
        alike.push(format!("--num-buckets {}{more}", others.join(", ")));
    }
    let note = if alike.is_empty() {
        String::new()
    } else {
        format!(
            " (at this length the same table comes with {})",
            alike.join(", and with ")
        )
    };
    let description = described(&params, &note);
    search.name_words(description.clone(), t5_words(&params));
    search.consider_probed(
        description,
        first_rows(seq, offsets.transposed, |offset| {
            f64::from(params.bucket(offset))
        }),
        || computed(TableSpec::T5Buckets(params)).map(orient),
    );
}

/// T5's bucket table as `poslab table` words.
fn t5_words(params: &T5BucketParams) -> super::TableWords {
    let mut options = vec![
        ("seq", params.seq.to_string()),
        ("num_buckets", params.num_buckets.to_string()),
        ("max_distance", params.max_distance.to_string()),
    ];
    if !params.bidirectional {
        options.push(("bidirectional", "false".to_owned()));
    }
    super::TableWords {
        kind: "t5-buckets",
        options,
    }
}

fn max_distance_limit() -> usize {
    MAX_BUCKETS * 1024
}

/// The `max_distance` values, `lo ..= hi`, whose buckets equal the table's at every offset,
/// for `num_buckets` in this direction; `None` when none does. A bucket only falls as
/// `max_distance` grows (every step of its float32 formula is monotone), so the values that
/// never give a bucket above the table's and those that never give one below are two
/// half-lines, found by bisection; they overlap exactly where every bucket is equal.
fn distances_that_fit(
    offsets: &Offsets,
    num_buckets: usize,
    bidirectional: bool,
) -> Option<(usize, usize)> {
    let with = |max_distance: usize| T5BucketParams {
        seq: offsets.seq,
        num_buckets,
        max_distance,
        bidirectional,
    };
    let first = with(T5_MAX_DISTANCE).max_exact() + 1;
    let last = max_distance_limit();
    if with(first).validate().is_err() {
        return None;
    }
    let never_above = |d: usize| {
        let params = with(d);
        offsets
            .all()
            .all(|o| i64::from(params.bucket(o)) <= offsets.at(o))
    };
    let never_below = |d: usize| {
        let params = with(d);
        offsets
            .all()
            .all(|o| i64::from(params.bucket(o)) >= offsets.at(o))
    };
    // never_above: false ... false true ... true; never_below: true ... true false ... false.
    if !never_above(last) {
        return None;
    }
    let lo = least_where(first, last, never_above);
    if !never_below(lo) {
        return None;
    }
    let hi = if never_below(last) {
        last
    } else {
        least_where(lo, last, |d| !never_below(d)) - 1
    };
    Some((lo, hi))
}

/// The least `x` in `from ..= to` for which `holds` is true, by bisection: `holds` must be
/// false then true along the range, and true at `to`.
fn least_where(from: usize, to: usize, holds: impl Fn(usize) -> bool) -> usize {
    if holds(from) {
        return from;
    }
    // holds(fails) is false, holds(passes) is true.
    let (mut fails, mut passes) = (from, to);
    while passes - fails > 1 {
        let middle = fails + (passes - fails) / 2;
        if holds(middle) {
            passes = middle;
        } else {
            fails = middle;
        }
    }
    passes
}

/// The distance in `lo ..= hi` a person would have written: T5's 128, else the least power
/// of two, else the one with the most trailing zeros.
fn roundest_distance(lo: usize, hi: usize) -> usize {
    if (lo..=hi).contains(&T5_MAX_DISTANCE) {
        return T5_MAX_DISTANCE;
    }
    let power = lo.next_power_of_two();
    if power <= hi {
        return power;
    }
    let mut step = 1usize;
    while let Some(next) = step.checked_mul(10) {
        if lo.div_ceil(next) * next > hi {
            break;
        }
        step = next;
    }
    lo.div_ceil(step) * step
}

#[cfg(test)]
mod tests {
    use super::roundest_distance;

    #[test]
    fn the_roundest_distance_is_the_one_written_by_hand() {
        assert_eq!(roundest_distance(100, 5000), 128);
        assert_eq!(roundest_distance(129, 300), 256);
        assert_eq!(roundest_distance(257, 500), 300);
        assert_eq!(roundest_distance(1001, 1001), 1001);
        assert_eq!(roundest_distance(1001, 1010), 1010);
    }
}
