//! Angles that stay exact at any position below 2^53: frequencies carried to about 104 bits
//! (as double-double numbers, `hi + lo`), turned into 128-bit fixed-point fractions of a turn per
//! position, multiplied by the position in integers (wrap-around is a whole number of turns,
//! so nothing is lost), and only then handed to `sin`/`cos` as an angle within half a turn.
//!
//! In plain f64, `p * w` rounds to 2^-53 of the angle and `w` itself carries 2^-53 of error,
//! so at position 2^40 the angle is 1e-4 off and near 2^53 half a radian; here the error stays
//! near 2^-104 of `p * w` plus the final `sin`'s own rounding.

/// `hi + lo` with `|lo| <= ulp(hi) / 2`: about 106 significant bits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DoubleF64 {
    pub hi: f64,
    pub lo: f64,
}

/// `a + b` as a rounded sum and its exact error.
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let v = s - a;
    (s, (a - (s - v)) + (b - v))
}

/// `a * b` as a rounded product and its exact error (one fused multiply-add).
fn two_prod(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    (p, a.mul_add(b, -p))
}

impl DoubleF64 {
    pub const fn from_f64(value: f64) -> Self {
        Self { hi: value, lo: 0.0 }
    }

    fn normalized(hi: f64, lo: f64) -> Self {
        let (hi, lo) = two_sum(hi, lo);
        Self { hi, lo }
    }

    pub fn mul_f64(self, other: f64) -> Self {
        let (p, e) = two_prod(self.hi, other);
        Self::normalized(p, e + self.lo * other)
    }

    /// Multiplication by 2^k (exact).
    fn scale(self, k: i32) -> Self {
        let factor = 2f64.powi(k);
        Self {
            hi: self.hi * factor,
            lo: self.lo * factor,
        }
    }

    /// `e^x`, to about 2^-102 of the result, for `|x| < 700`.
    pub fn exp(self) -> Self {
        // x = k ln 2 + r with |r| <= ln 2 / 2, then e^r = (e^(r/16))^16 with a Taylor series.
        let k = (self.hi / LN_2.hi).round();
        let r = (self + LN_2.mul_f64(-k)).scale(-4);
        // r^16 / 16! < 2^-120 for |r| <= ln 2 / 32.
        let mut term = Self::from_f64(1.0);
        let mut series = Self::from_f64(1.0);
        for n in 1..=16 {
            term = term * r / Self::from_f64(f64::from(n));
            series = series + term;
        }
        let mut result = series;
        for _ in 0..4 {
            result = result * result;
        }
        result.scale(k as i32)
    }

    /// The natural logarithm of a positive finite `value`: Newton's method on [`Self::exp`]
    /// from the f64 logarithm.
    pub fn ln(value: f64) -> Self {
        let x = Self::from_f64(value);
        let mut y = Self::from_f64(value.ln());
        for _ in 0..2 {
            // y + (x e^-y - 1)
            y = y + (x * (-y).exp() + Self::from_f64(-1.0));
        }
        y
    }

    /// `e^(ln_base * numerator / denominator)`: a power of a base whose logarithm
    /// ([`Self::ln`]) is computed once for many exponents.
    pub fn power(ln_base: Self, numerator: i64, denominator: u64) -> Self {
        if numerator == 0 {
            return Self::from_f64(1.0);
        }
        let (n, d) = (numerator as f64, denominator as f64);
        // The exponent as a double-double: n / d and its remainder over d.
        let hi = n / d;
        let lo = (-hi).mul_add(d, n) / d;
        let exponent = Self::normalized(hi, lo);
        (exponent * ln_base).exp()
    }

    pub fn to_f64(self) -> f64 {
        self.hi + self.lo
    }
}

impl std::ops::Add for DoubleF64 {
    type Output = Self;
    fn add(self, other: Self) -> Self {
        let (s, e) = two_sum(self.hi, other.hi);
        Self::normalized(s, e + self.lo + other.lo)
    }
}

impl std::ops::Mul for DoubleF64 {
    type Output = Self;
    fn mul(self, other: Self) -> Self {
        let (p, e) = two_prod(self.hi, other.hi);
        Self::normalized(p, e + self.hi * other.lo + self.lo * other.hi)
    }
}

impl std::ops::Div for DoubleF64 {
    type Output = Self;
    fn div(self, other: Self) -> Self {
        let q1 = self.hi / other.hi;
        // The remainder self - q1 * other, then two correction steps.
        let r = self + other.mul_f64(-q1);
        let q2 = r.hi / other.hi;
        let r = r + other.mul_f64(-q2);
        let q3 = r.hi / other.hi;
        Self::normalized(q1, q2) + Self::from_f64(q3)
    }
}

impl std::ops::Neg for DoubleF64 {
    type Output = Self;
    fn neg(self) -> Self {
        Self {
            hi: -self.hi,
            lo: -self.lo,
        }
    }
}

/// ln 2 to 106 bits.
const LN_2: DoubleF64 = DoubleF64 {
    hi: std::f64::consts::LN_2,
    lo: 2.319_046_813_846_299_6e-17,
};

/// 2π to 106 bits.
const TAU: DoubleF64 = DoubleF64 {
    hi: std::f64::consts::TAU,
    lo: 2.449_293_598_294_706_4e-16,
};

/// The first 256 bits of the fraction of 1/(2π), most significant word first.
const INV_TWO_PI_WORDS: [u64; 4] = [
    0x28be_60db_9391_054a,
    0x7f09_d5f4_7d4d_3770,
    0x36d8_a566_4f10_e410,
    0x7f94_58ea_f7ae_f158,
];

/// The 64 bits of the fraction of 1/(2π) from bit `first` (weight 2^-first) down, most
/// significant first; bits outside the table read as 0 (and there are none above bit 1).
fn inv_two_pi_bits(first: i64) -> u64 {
    let index = first - 1;
    let word = index.div_euclid(64);
    let shift = index.rem_euclid(64) as u32;
    let get = |w: i64| -> u64 {
        usize::try_from(w)
            .ok()
            .and_then(|w| INV_TWO_PI_WORDS.get(w))
            .copied()
            .unwrap_or(0)
    };
    let pair = (u128::from(get(word)) << 64) | u128::from(get(word + 1));
    ((pair << shift) >> 64) as u64
}

/// Bit `k` (weight 2^-k, k >= 1) of the fraction of 1/(2π); 0 beyond the first 256.
pub fn inv_two_pi_bit(k: i64) -> u32 {
    if !(1..=256).contains(&k) {
        return 0;
    }
    (inv_two_pi_bits(k) >> 63) as u32
}

/// A frequency as the fraction of a turn it advances per position, in units of 2^-128 turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TurnsPerStep(pub u128);

impl TurnsPerStep {
    /// `frac(w / 2π)` of a frequency `w` in radians per position (finite).
    pub fn of(w: DoubleF64) -> Self {
        Self(fraction_of_turn(w.hi).wrapping_add(small_turns(w.lo)))
    }

    /// The fraction of a turn `position` steps make (exact: integer arithmetic mod one turn).
    pub fn at(self, position: u64) -> u128 {
        self.0.wrapping_mul(u128::from(position))
    }

    /// The 64 most significant bits: the GPU kernels' fixed-point turns.
    pub fn words(self) -> [u32; 2] {
        [(self.0 >> 96) as u32, (self.0 >> 64) as u32]
    }
}

/// Frequencies as fractions of a turn per position.
pub fn turns_of(frequencies: impl IntoIterator<Item = DoubleF64>) -> Vec<TurnsPerStep> {
    frequencies.into_iter().map(TurnsPerStep::of).collect()
}

/// `frac(x / 2π)` in 2^-128 turn, exactly (to the last bit kept) for any finite `x`: `x` is
/// `m 2^e` with an integer `m`, and `frac(m 2^e / 2π) = frac(m frac(2^e / 2π))`.
fn fraction_of_turn(x: f64) -> u128 {
    if x == 0.0 || !x.is_finite() {
        return 0;
    }
    let bits = x.abs().to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i64;
    let (mantissa, exponent) = if biased == 0 {
        (bits & ((1 << 52) - 1), -1074)
    } else {
        ((bits & ((1 << 52) - 1)) | (1 << 52), biased - 1075)
    };
    // frac(2^e / 2π) to 2^-192: bit j of it is bit j + e of 1/(2π).
    let high = (u128::from(inv_two_pi_bits(1 + exponent)) << 64)
        | u128::from(inv_two_pi_bits(65 + exponent));
    let low = inv_two_pi_bits(129 + exponent);
    let m = u128::from(mantissa);
    let turns = m
        .wrapping_mul(high)
        .wrapping_add((m * u128::from(low)) >> 64);
    if x < 0.0 { turns.wrapping_neg() } else { turns }
}

/// `x / 2π` in 2^-128 turn for a small `x` (a double-double's low part).
fn small_turns(x: f64) -> u128 {
    let turns = x / TAU.hi * 2f64.powi(128);
    (turns as i128) as u128
}

/// `sin` and `cos` of a fraction of a turn in 2^-128 turn, to within the f64 functions' own
/// rounding.
pub fn sin_cos(turns: u128) -> (f64, f64) {
    // As a signed fraction in [-1/2, 1/2), split into two f64 that sum to it: the high 64
    // bits rounded, what that rounding dropped, and the low 64 bits (conversions from 64-bit
    // integers, which are single instructions where 128-bit ones are library calls).
    let high = (turns >> 64) as u64 as i64;
    let hi = high as f64;
    let dropped = high.wrapping_sub(hi as i64) as f64;
    let low = turns as u64 as f64 * 2f64.powi(-64);
    let unit = 2f64.powi(-64);
    let angle = DoubleF64::normalized(hi * unit, (dropped + low) * unit) * TAU;
    let (sin, cos) = angle.hi.sin_cos();
    // sin(a + d) = sin a + d cos a, to d^2 (below 2^-100 here).
    (sin + cos * angle.lo, cos - sin * angle.lo)
}

/// The angle `position * w` in radians, rounded once.
pub fn angle(position: u64, w: DoubleF64) -> f64 {
    (DoubleF64::from_f64(position as f64) * w).to_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn double_double_carries_what_f64_drops() {
        // 1/3 to 106 bits: 3 * (1/3) - 1 is below 2^-105.
        let third = DoubleF64::from_f64(1.0) / DoubleF64::from_f64(3.0);
        let back = third.mul_f64(3.0) + DoubleF64::from_f64(-1.0);
        assert!(back.to_f64().abs() < 2f64.powi(-104), "{back:?}");
        // e = exp(1): the constant's two parts (e = 2.718281828459045 + 1.4456468917292502e-16).
        let e = DoubleF64::from_f64(1.0).exp();
        assert_eq!(e.hi, std::f64::consts::E);
        assert!((e.lo - 1.445_646_891_729_250_2e-16).abs() < 1e-30, "{e:?}");
        // ln(e^x) = x.
        let ln = DoubleF64::ln(10_000.0);
        let back = ln.exp() + DoubleF64::from_f64(-10_000.0);
        assert!(back.to_f64().abs() < 1e-26, "{back:?}");
    }

    #[test]
    fn turns_of_simple_angles_are_exact() {
        let half_turn = TurnsPerStep::of(DoubleF64 {
            hi: std::f64::consts::PI,
            lo: 1.224_646_799_147_353_2e-16,
        });
        // Half a turn, but for π's own double-double rounding (3e-33, 2^17.3 units of 2^-128).
        assert!(
            half_turn.0.abs_diff(1u128 << 127) < 1 << 18,
            "{:x}",
            half_turn.0
        );
        assert_eq!(half_turn.words(), [1 << 31, 0]);
        let (sin, cos) = sin_cos(TurnsPerStep::of(DoubleF64::from_f64(1.0)).at(3));
        assert!((sin - 3f64.sin()).abs() < 1e-16 && (cos - 3f64.cos()).abs() < 1e-16);
        // Negative frequencies turn the other way.
        let back = TurnsPerStep::of(DoubleF64::from_f64(-1.0));
        assert_eq!(
            back.0
                .wrapping_add(TurnsPerStep::of(DoubleF64::from_f64(1.0)).0),
            0
        );
    }
}
