//! The guesses a position code goes through before it becomes the sinusoidal table (the tour
//! "From counting to sinusoids"): the index itself, the index over the length, and one sine per
//! column at binary or at geometric frequencies. The binary code itself is `binary`, the
//! final table `sinusoidal`.

use ndarray::Array2;

use super::fill_2d;

/// `PE[p] = p` for `p < seq`.
pub fn counting(seq: usize) -> Vec<f64> {
    (0..seq).map(|p| p as f64).collect()
}

/// `PE[p] = p / seq` for `p < seq`: values in `[0, 1)`, but scaled by the length.
pub fn normalised(seq: usize) -> Vec<f64> {
    (0..seq).map(|p| p as f64 / seq as f64).collect()
}

/// The angular frequency of column `j` of [`binary_sines`]: `π / 2^(j+1)`, a quarter turn per
/// position for the fastest column, half as fast for each next one. (A sine with the lowest
/// bit's own period of 2 would be zero at every whole position.)
pub fn binary_frequency(column: usize) -> f64 {
    std::f64::consts::PI * 2f64.powi(-(column.min(2000) as i32) - 1)
}

/// `[seq, dim]`: `sin(p · π / 2^(j+1))`, a smooth dial in place of bit `j`.
pub fn binary_sines(seq: usize, dim: usize) -> Array2<f64> {
    fill_2d(seq, dim, |p, j| (p as f64 * binary_frequency(j)).sin())
}

/// The angular frequency of column `j` of [`geometric_sines`]: `base^(-j/dim)`, from 1 radian
/// per position down towards `1/base`.
pub fn geometric_frequency(column: usize, dim: usize, base: f64) -> f64 {
    base.powf(-(column as f64) / dim as f64)
}

/// `[seq, dim]`: `sin(p · base^(-j/dim))`, the dials slowed to geometric frequencies.
pub fn geometric_sines(seq: usize, dim: usize, base: f64) -> Array2<f64> {
    fill_2d(seq, dim, |p, j| {
        (p as f64 * geometric_frequency(j, dim, base)).sin()
    })
}

/// How many of the lowest bits change among positions `0..seq`: the bit length of `seq - 1`.
pub fn changing_bits(seq: usize) -> usize {
    (usize::BITS - seq.saturating_sub(1).leading_zeros()) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guesses_hold_what_they_say() {
        assert_eq!(counting(4), vec![0.0, 1.0, 2.0, 3.0]);
        assert_eq!(normalised(4), vec![0.0, 0.25, 0.5, 0.75]);
        // A quarter turn per position: 0, 1, 0, -1.
        let sines = binary_sines(4, 2);
        for (got, want) in sines.column(0).iter().zip([0.0, 1.0, 0.0, -1.0]) {
            assert!((got - want).abs() < 1e-15, "{got} against {want}");
        }
        assert!((sines[[2, 1]] - 1.0).abs() < 1e-15);
        let geometric = geometric_sines(3, 4, 10_000.0);
        assert!((geometric[[2, 0]] - 2f64.sin()).abs() < 1e-15);
        assert!((geometric[[2, 2]] - (2.0 / 100.0f64).sin()).abs() < 1e-15);
        assert_eq!(
            [1, 2, 3, 4, 5, 256, 257].map(changing_bits),
            [0, 1, 2, 2, 3, 8, 9]
        );
    }
}
