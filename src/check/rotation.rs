//! The rotation a function applied, read from what it was given and what it returned: for a
//! pairing of the head's dims, each pair's angle at each position and its gain (the ratio of
//! norms), and which dims it changed at all. The rotation check (`assert_rope` in Python)
//! names a bug from these: a layout whose gains vary from position to position is not the one
//! the function rotates by, a gain that is not the attention factor is a factor lost or
//! squared.

use ndarray::{Array2, ArrayView3, Axis};

use crate::encoding::PairLayout;

/// The dims of each rotated pair of a head whose first `rotary` dims rotate: `(2k, 2k + 1)`
/// interleaved, `(k, k + rotary / 2)` in halves.
pub fn pair_dims(layout: PairLayout, rotary: usize) -> Vec<(usize, usize)> {
    let pairs = rotary / 2;
    (0..pairs)
        .map(|k| match layout {
            PairLayout::Interleaved => (2 * k, 2 * k + 1),
            PairLayout::Half => (k, k + pairs),
        })
        .collect()
}

/// What the outputs say, read in one pairing.
#[derive(Debug, Clone)]
pub struct PairReading {
    pub layout: PairLayout,
    /// The median ratio of an output pair's norm to its input pair's.
    pub gain: f64,
    /// How far the gains stray from it: the 90th percentile of |gain / median - 1|. A rotation
    /// in this pairing has only the output's rounding here; another pairing, or no rotation
    /// of pairs at all, has order 1.
    pub spread: f64,
    /// Each pair's angle at each position (`[positions, pairs]`, radians in (-pi, pi]): the
    /// circular mean over heads of the angle from input pair to output pair.
    pub angles: Array2<f64>,
}

/// Reads `x` to `y` (both `[heads, positions, dim]`) as rotations of the pairs of `layout`
/// over the first `rotary` dims. Pairs whose input is near zero are left out of the gains (and
/// their angle is 0 where no head has one).
pub fn read_pairs(
    x: ArrayView3<'_, f64>,
    y: ArrayView3<'_, f64>,
    layout: PairLayout,
    rotary: usize,
) -> PairReading {
    let (heads, positions, _) = x.dim();
    let pairs = pair_dims(layout, rotary);
    let mut angles = Array2::zeros((positions, pairs.len()));
    let mut gains = Vec::with_capacity(heads * positions * pairs.len());
    let scale = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    for s in 0..positions {
        for (k, &(i, j)) in pairs.iter().enumerate() {
            let (mut sin_sum, mut cos_sum) = (0.0, 0.0);
            for h in 0..heads {
                let (a, b) = (x[[h, s, i]], x[[h, s, j]]);
                let (c, d) = (y[[h, s, i]], y[[h, s, j]]);
                let norm = (a * a + b * b).sqrt();
                if norm.is_nan() || norm <= 1e-3 * scale {
                    continue;
                }
                let out = (c * c + d * d).sqrt();
                gains.push(out / norm);
                // The unit vector of the angle from (a, b) to (c, d), summed over heads.
                let (cross, dot) = (a * d - b * c, a * c + b * d);
                let length = (cross * cross + dot * dot).sqrt();
                if length > 0.0 && length.is_finite() {
                    sin_sum += cross / length;
                    cos_sum += dot / length;
                }
            }
            angles[[s, k]] = sin_sum.atan2(cos_sum);
        }
    }
    // Outputs that are not finite (positions that overflowed) say nothing of the pairing:
    // the check itself counts them.
    let finite: Vec<f64> = gains.iter().copied().filter(|g| g.is_finite()).collect();
    let gain = median(finite.clone());
    let spread = if gain.is_nan() || gain <= 0.0 {
        f64::INFINITY
    } else {
        let strays: Vec<f64> = finite.iter().map(|g| (g / gain - 1.0).abs()).collect();
        percentile(strays, 0.9)
    };
    PairReading {
        layout,
        gain,
        spread,
        angles,
    }
}

fn median(values: Vec<f64>) -> f64 {
    percentile(values, 0.5)
}

fn percentile(mut values: Vec<f64>, at: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    let index = ((values.len() - 1) as f64 * at).round() as usize;
    values[index]
}

/// The dims the function changed (by more than `noise` times the largest input anywhere), in
/// order: a function that rotates the first R of D dims changes those R.
pub fn changed_dims(x: ArrayView3<'_, f64>, y: ArrayView3<'_, f64>, noise: f64) -> Vec<usize> {
    let scale = x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let dims = x.len_of(Axis(2));
    (0..dims)
        .filter(|&d| {
            let (xs, ys) = (x.index_axis(Axis(2), d), y.index_axis(Axis(2), d));
            xs.iter()
                .zip(ys.iter())
                .any(|(a, b)| (a - b).abs().is_nan() || (a - b).abs() > noise * scale)
        })
        .collect()
}

/// How a rotation finds each rotated dim's partner: `(partner, sign)`, the output being
/// `x[i] cos[i] + sign x[partner] sin[i]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Partner {
    /// rotate_half over the first `width` dims: (i, i + width / 2).
    Halves { width: usize },
    /// rotate_every_two: (2i, 2i + 1).
    Interleaved,
}

impl Partner {
    pub fn of(self, i: usize) -> (usize, f64) {
        match self {
            Partner::Halves { width } if i < width / 2 => (i + width / 2, -1.0),
            Partner::Halves { width } => (i - width / 2, 1.0),
            Partner::Interleaved if i.is_multiple_of(2) => (i + 1, -1.0),
            Partner::Interleaved => (i - 1, 1.0),
        }
    }
}

/// `x` (`[heads, positions, dim]`) rotated as code that multiplies by the cos and sin tables
/// `cos`, `sin` (`[positions, rotary]`, each column its own angle) and finds partners by
/// `partner` does: the first `rotary` dims turn, the rest pass through. With the tables and
/// the partner of one layout this is RoPE; with those of two, the bug of mixing them.
pub fn rotate_with(
    x: &ndarray::Array3<f64>,
    cos: &Array2<f64>,
    sin: &Array2<f64>,
    partner: Partner,
) -> ndarray::Array3<f64> {
    let rotary = cos.ncols();
    let mut y = x.clone();
    let (heads, positions, dim) = x.dim();
    for h in 0..heads {
        for s in 0..positions {
            for i in 0..rotary.min(dim) {
                let (j, sign) = partner.of(i);
                let other = if j < dim { x[[h, s, j]] } else { 0.0 };
                y[[h, s, i]] = x[[h, s, i]] * cos[[s, i]] + sign * other * sin[[s, i]];
            }
        }
    }
    y
}

/// A number's nearest float16 (round to nearest even; infinity beyond 65504): what a position
/// becomes when a model casts its positions to float16.
pub fn to_float16(value: f64) -> f64 {
    f64::from(half::f16::from_f64(value))
}

/// A number's nearest bfloat16 (257 becomes 256).
pub fn to_bfloat16(value: f64) -> f64 {
    f64::from(half::bf16::from_f64(value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array3;

    /// A rotation of each pair (k, k + 4) of 8 dims by angle (k + 1) * p / 10, times `gain`.
    fn rotated(x: &Array3<f64>, gain: f64) -> Array3<f64> {
        let mut y = x.clone();
        for h in 0..x.dim().0 {
            for p in 0..x.dim().1 {
                for k in 0..4 {
                    let angle = (k + 1) as f64 * p as f64 / 10.0;
                    let (a, b) = (x[[h, p, k]], x[[h, p, k + 4]]);
                    y[[h, p, k]] = gain * (a * angle.cos() - b * angle.sin());
                    y[[h, p, k + 4]] = gain * (a * angle.sin() + b * angle.cos());
                }
            }
        }
        y
    }

    fn input() -> Array3<f64> {
        // Deterministic values spread over [-1, 1], none near zero in both dims of a pair.
        Array3::from_shape_fn((2, 12, 8), |(h, p, d)| {
            ((h * 97 + p * 31 + d * 17) as f64 * 0.61).sin() + 0.1
        })
    }

    #[test]
    fn a_rotation_is_read_in_its_own_pairing_with_its_angles_and_gain() {
        let x = input();
        let y = rotated(&x, 1.25);
        let half = read_pairs(x.view(), y.view(), PairLayout::Half, 8);
        assert!(
            (half.gain - 1.25).abs() < 1e-12 && half.spread < 1e-12,
            "{half:?}"
        );
        for p in 0..12 {
            for k in 0..4 {
                let angle = (k + 1) as f64 * p as f64 / 10.0;
                let wrapped = (angle + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU)
                    - std::f64::consts::PI;
                assert!((half.angles[[p, k]] - wrapped).abs() < 1e-12);
            }
        }
        // Read in the other pairing, the norms do not carry over.
        let interleaved = read_pairs(x.view(), y.view(), PairLayout::Interleaved, 8);
        assert!(interleaved.spread > 0.05, "{interleaved:?}");
    }

    #[test]
    fn changed_dims_are_the_rotated_ones() {
        let x = input();
        let mut y = rotated(&x, 1.0);
        // Leave dims 3 and 7 (the last pair) as they were: only 6 dims rotate.
        for h in 0..2 {
            for p in 0..12 {
                y[[h, p, 3]] = x[[h, p, 3]];
                y[[h, p, 7]] = x[[h, p, 7]];
            }
        }
        assert_eq!(
            changed_dims(x.view(), y.view(), 1e-9),
            vec![0, 1, 2, 4, 5, 6]
        );
    }

    #[test]
    fn rotating_with_one_layouts_tables_and_partners_is_rope() {
        let x = input();
        // The tables of the rotation in `rotated`: pair k's angle in columns k and k + 4.
        let angle = |p: usize, c: usize| ((c % 4) + 1) as f64 * p as f64 / 10.0;
        let cos = Array2::from_shape_fn((12, 8), |(p, c)| angle(p, c).cos());
        let sin = Array2::from_shape_fn((12, 8), |(p, c)| angle(p, c).sin());
        let y = rotate_with(&x, &cos, &sin, Partner::Halves { width: 8 });
        let expected = rotated(&x, 1.0);
        assert!(
            y.iter()
                .zip(expected.iter())
                .all(|(a, b)| (a - b).abs() < 1e-12)
        );
        // With the other partner it is no rotation of pairs.
        let mixed = rotate_with(&x, &cos, &sin, Partner::Interleaved);
        let read = read_pairs(x.view(), mixed.view(), PairLayout::Half, 8);
        assert!(read.spread > 0.05, "{read:?}");
    }

    #[test]
    fn positions_cast_to_narrow_floats_are_those_types_values() {
        assert_eq!(to_float16(2049.0), 2048.0);
        assert_eq!(to_float16(65519.0), 65504.0);
        assert!(to_float16(100_000.0).is_infinite());
        assert_eq!(to_bfloat16(257.0), 256.0);
        assert_eq!(to_bfloat16(256.0), 256.0);
    }
}
