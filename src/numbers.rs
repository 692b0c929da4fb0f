//! Numbers as a textbook prints them, for every axis, colour bar and figure: thousands grouped
//! (1,048,576), very small and very large values as 1.2 × 10⁻³, powers as 10⁴ and 2⁻³; never
//! a programmer's `1.000e6`, `1.15e-3` or `10^4`.

/// `exponent` in superscript digits: `-3` is `⁻³`.
pub fn superscript(exponent: i64) -> String {
    const DIGITS: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    let mut text = String::new();
    if exponent < 0 {
        text.push('⁻');
    }
    for digit in exponent.unsigned_abs().to_string().bytes() {
        text.push(DIGITS[usize::from(digit - b'0')]);
    }
    text
}

/// `base` to the power `exponent`, as printed: `10⁴`, `2⁻³`.
pub fn power(base: u32, exponent: i64) -> String {
    format!("{base}{}", superscript(exponent))
}

/// The whole number nearest `value` with its thousands grouped: `1,048,576`, `-2,048`.
pub fn grouped(value: f64) -> String {
    if !value.is_finite() {
        return format!("{value}");
    }
    let rounded = value.round() + 0.0;
    let digits = group_digits(&format!("{:.0}", rounded.abs()));
    if rounded < 0.0 {
        format!("-{digits}")
    } else {
        digits
    }
}

/// `n` with its thousands grouped, exactly (no float between).
pub fn thousands(n: u64) -> String {
    group_digits(&n.to_string())
}

fn group_digits(digits: &str) -> String {
    let mut text = String::with_capacity(digits.len() + digits.len() / 3);
    for (k, digit) in digits.chars().enumerate() {
        if k > 0 && (digits.len() - k).is_multiple_of(3) {
            text.push(',');
        }
        text.push(digit);
    }
    text
}

/// `base` to a power that need not be whole, to `decimals` decimals where it is not: `2⁻³`,
/// `2^-0.50` (superscripts have no decimal point).
pub fn power_of(base: u32, exponent: f64, decimals: usize) -> String {
    let whole = exponent.round();
    if (exponent - whole).abs() < 1e-9 {
        power(base, whole as i64)
    } else {
        format!("{base}^{exponent:.decimals$}")
    }
}

/// An ALiBi slope as a power of two, written one way everywhere: `2⁻¹` for a whole exponent,
/// else the exponent to at most three decimals, trailing zeros dropped (`2^-0.125`,
/// `2^-0.25`); the slopes of `get_slopes` are `2^(-8k/n)`, exact in three decimals for every
/// power-of-two head count up to 64.
pub fn slope(m: f64) -> String {
    let exponent = m.log2();
    let whole = exponent.round();
    if (exponent - whole).abs() < 1e-9 {
        return power(2, whole as i64);
    }
    let text = format!("{exponent:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("2^{text}")
}

/// `value` with `decimals` decimals, its whole part grouped: `1,234.50`.
pub fn fixed(value: f64, decimals: usize) -> String {
    if !value.is_finite() {
        return format!("{value}");
    }
    let text = format!("{:.decimals$}", value.abs());
    let (whole, fraction) = text.split_once('.').unwrap_or((&text, ""));
    let whole: f64 = whole.parse().unwrap_or(0.0);
    let negative = value < 0.0 && text.bytes().any(|b| (b'1'..=b'9').contains(&b));
    let sign = if negative { "-" } else { "" };
    if fraction.is_empty() {
        format!("{sign}{}", grouped(whole))
    } else {
        format!("{sign}{}.{fraction}", grouped(whole))
    }
}

/// `value` with `significant` significant digits as `m × 10ⁿ` (`1.15 × 10⁻³`); a mantissa of
/// exactly 1 is left out (`10⁶`).
pub fn scientific(value: f64, significant: usize) -> String {
    if value == 0.0 || !value.is_finite() {
        return format!("{}", value + 0.0);
    }
    let decimals = significant.saturating_sub(1);
    let text = format!("{value:.decimals$e}");
    let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
    let exponent: i64 = exponent.parse().unwrap_or(0);
    if exponent == 0 {
        return mantissa.to_owned();
    }
    let trimmed = if mantissa.contains('.') {
        mantissa.trim_end_matches('0').trim_end_matches('.')
    } else {
        mantissa
    };
    match trimmed {
        "1" => power(10, exponent),
        "-1" => format!("-{}", power(10, exponent)),
        _ => format!("{trimmed} × {}", power(10, exponent)),
    }
}

/// A tick label on an axis whose marks are `step` apart: whole numbers grouped, decimals as
/// many as the step needs (0.05 steps read 0.35), scientific below 10⁻³ and from 10⁹.
pub fn tick(value: f64, step: f64) -> String {
    let value = value + 0.0;
    let step = step.abs();
    let magnitude = value.abs();
    if value == 0.0 || !value.is_finite() {
        return format!("{value}");
    }
    if !(1e-3..1e9).contains(&magnitude) {
        // Enough digits to tell neighbouring marks apart.
        let significant = if step > 0.0 {
            (magnitude.log10().floor() - step.log10().floor() + 1.0).clamp(1.0, 6.0) as usize
        } else {
            3
        };
        return scientific(value, significant);
    }
    let decimals = if step > 0.0 {
        (-step.log10().floor()).clamp(0.0, 12.0) as usize
    } else {
        3
    };
    fixed(value, decimals)
}

/// `seconds` as a person reads it: `46 s`, `12 min`, `5 h 12 min`, `3.2 days`.
pub fn duration_text(seconds: f64) -> String {
    if seconds < 90.0 {
        format!("{seconds:.0} s")
    } else if seconds < 5400.0 {
        format!("{:.0} min", seconds / 60.0)
    } else if seconds < 2.0 * 86_400.0 {
        let minutes = (seconds / 60.0).round() as u64;
        format!("{} h {} min", minutes / 60, minutes % 60)
    } else {
        format!("{:.1} days", seconds / 86_400.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_a_person_says_them() {
        assert_eq!(duration_text(46.0), "46 s");
        assert_eq!(duration_text(720.0), "12 min");
        assert_eq!(duration_text(18_720.0), "5 h 12 min");
        assert_eq!(duration_text(3.0 * 86_400.0), "3.0 days");
    }

    #[test]
    fn numbers_read_as_a_textbook_prints_them() {
        assert_eq!(grouped(1_048_576.0), "1,048,576");
        assert_eq!(grouped(-2048.0), "-2,048");
        assert_eq!(grouped(999.0), "999");
        assert_eq!(grouped(0.0), "0");
        assert_eq!(fixed(1234.5, 2), "1,234.50");
        assert_eq!(fixed(-0.0001, 2), "0.00");
        assert_eq!(fixed(-0.25, 2), "-0.25");
        assert_eq!(scientific(1.15e-3, 3), "1.15 × 10⁻³");
        assert_eq!(scientific(1e6, 3), "10⁶");
        assert_eq!(scientific(-2.5e-7, 2), "-2.5 × 10⁻⁷");
        assert_eq!(power(10, 4), "10⁴");
        assert_eq!(power(2, -13), "2⁻¹³");
        assert_eq!(power_of(2, -3.0, 2), "2⁻³");
        assert_eq!(power_of(2, -0.5, 2), "2^-0.50");
        assert_eq!(
            [
                0.5,
                2f64.powf(-0.125),
                2f64.powf(-0.25),
                2f64.powf(-1.0 / 3.0)
            ]
            .map(slope),
            ["2⁻¹", "2^-0.125", "2^-0.25", "2^-0.333"].map(str::to_owned)
        );
        assert_eq!(tick(1_000_000.0, 200_000.0), "1,000,000");
        assert_eq!(tick(0.35, 0.05), "0.35");
        assert_eq!(tick(-0.0, 1.0), "0");
        assert_eq!(tick(2e-4, 1e-4), "2 × 10⁻⁴");
        assert_eq!(tick(2.5e9, 5e8), "2.5 × 10⁹");
    }
}
