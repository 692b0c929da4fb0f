//! PyTorch's CPU float32 `pow` and `exp`, bit for bit: the vectorised kernels call SLEEF's
//! `Sleef_powf8_u10` and `Sleef_expf8_u10` (AVX2 with FMA; the AVX-512 builds give the same
//! bits), which are accurate to 1 ulp but not correctly rounded. Written here from SLEEF's
//! algorithm (sleefsimdsp.c, df.h: Naoki Shibata, Boost licence): a logarithm and an exponential
//! in double-float arithmetic (a value carried as an unevaluated sum `hi + lo` of two f32),
//! where every `fma` is a fused multiply-add as the AVX2 build compiles it. The constants are
//! SLEEF's, digit for digit, so that each parses to the very float SLEEF uses.
#![allow(clippy::excessive_precision)]

/// A double-float: the value `hi + lo`, with `|lo|` at most half an ulp of `hi`.
#[derive(Debug, Clone, Copy)]
struct Df {
    hi: f32,
    lo: f32,
}

fn df(hi: f32, lo: f32) -> Df {
    Df { hi, lo }
}

/// `x * y - z` with one rounding (vfmapn).
fn fmapn(x: f32, y: f32, z: f32) -> f32 {
    x.mul_add(y, -z)
}

/// `z - x * y` with one rounding (vfmanp).
fn fmanp(x: f32, y: f32, z: f32) -> f32 {
    (-x).mul_add(y, z)
}

/// `x * y + z` with one rounding (vfma, and vmla in the FMA builds).
fn fma(x: f32, y: f32, z: f32) -> f32 {
    x.mul_add(y, z)
}

fn normalize(t: Df) -> Df {
    let hi = t.hi + t.lo;
    df(hi, (t.hi - hi) + t.lo)
}

fn scale(d: Df, s: f32) -> Df {
    df(d.hi * s, d.lo * s)
}

/// x + y for two floats of any magnitudes (dfadd2_vf2_vf_vf).
fn add2_ff(x: f32, y: f32) -> Df {
    let hi = x + y;
    let v = hi - x;
    df(hi, (x - (hi - v)) + (y - v))
}

/// x + y, |x| >= |y| (dfadd_vf2_vf2_vf2).
fn add_dd(x: Df, y: Df) -> Df {
    let hi = x.hi + y.hi;
    df(hi, (((x.hi - hi) + y.hi) + x.lo) + y.lo)
}

/// x + y for any magnitudes (dfadd2_vf2_vf2_vf).
fn add2_df(x: Df, y: f32) -> Df {
    let hi = x.hi + y;
    let v = hi - x.hi;
    let lo = (x.hi - (hi - v)) + (y - v);
    df(hi, lo + x.lo)
}

/// x + y for any magnitudes (dfadd2_vf2_vf2_vf2).
fn add2_dd(x: Df, y: Df) -> Df {
    let hi = x.hi + y.hi;
    let v = hi - x.hi;
    let lo = (x.hi - (hi - v)) + (y.hi - v);
    df(hi, lo + (x.lo + y.lo))
}

/// x + y, |x| >= |y| (dfadd_vf2_vf_vf2).
fn add_fd(x: f32, y: Df) -> Df {
    let hi = x + y.hi;
    df(hi, ((x - hi) + y.hi) + y.lo)
}

fn mul_df(x: Df, y: f32) -> Df {
    let hi = x.hi * y;
    df(hi, fma(x.lo, y, fmapn(x.hi, y, hi)))
}

fn mul_dd(x: Df, y: Df) -> Df {
    let hi = x.hi * y.hi;
    df(hi, fma(x.hi, y.lo, fma(x.lo, y.hi, fmapn(x.hi, y.hi, hi))))
}

fn square(x: Df) -> Df {
    let hi = x.hi * x.hi;
    df(hi, fma(x.hi + x.hi, x.lo, fmapn(x.hi, x.hi, hi)))
}

fn div_dd(n: Df, d: Df) -> Df {
    let t = 1.0 / d.hi;
    let hi = n.hi * t;
    let u = fmapn(t, n.hi, hi);
    let lo = fmanp(d.lo, t, fmanp(d.hi, t, 1.0));
    df(hi, fma(hi, lo, fma(n.lo, t, u)))
}

/// Round to nearest, ties to even, as `cvtps2dq` does in the default rounding mode.
fn rint(x: f32) -> i32 {
    x.round_ties_even() as i32
}

/// The unbiased exponent field of a normal float (vilogb2k).
fn ilogb2k(d: f32) -> i32 {
    ((d.to_bits() >> 23) & 0xff) as i32 - 0x7f
}

/// `d * 2^q` by adding to the exponent field (vldexp3): exact for normal results.
fn ldexp3(d: f32, q: i32) -> f32 {
    f32::from_bits((d.to_bits() as i32).wrapping_add(q << 23) as u32)
}

fn pow2i(q: i32) -> f32 {
    f32::from_bits(((q + 0x7f) << 23) as u32)
}

/// `x * 2^q` in steps that never overflow an exponent (vldexp_vf_vf_vi2).
fn ldexp(x: f32, q: i32) -> f32 {
    let mut m = q >> 31;
    m = (((m + q) >> 6) - m) << 4;
    let q = q - (m << 2);
    m += 0x7f;
    m = if m > 0 { m } else { 0 };
    m = if m > 0xff { 0xff } else { m };
    let u = f32::from_bits((m << 23) as u32);
    let x = x * u * u * u * u;
    x * f32::from_bits(((q + 0x7f) << 23) as u32)
}

/// `x * 2^e` in two halves (vldexp2).
fn ldexp2(d: f32, e: i32) -> f32 {
    d * pow2i(e >> 1) * pow2i(e - (e >> 1))
}

const L2U: f32 = 0.693145751953125;
const L2L: f32 = 1.428606765330187045e-06;
const R_LN2: f32 = std::f32::consts::LOG2_E;

/// log(d) as a double-float, for positive finite `d` (logkf).
fn log_k(d: f32) -> Df {
    let subnormal = d < f32::MIN_POSITIVE;
    let d = if subnormal {
        d * (4_294_967_296.0 * 4_294_967_296.0)
    } else {
        d
    };
    let mut e = ilogb2k(d * (1.0 / 0.75));
    let m = ldexp3(d, -e);
    if subnormal {
        e -= 64;
    }
    let x = div_dd(add2_ff(-1.0, m), add2_ff(1.0, m));
    let x2 = square(x);
    let mut t = 0.240320354700088500976562_f32;
    t = fma(t, x2.hi, 0.285112679004669189453125);
    t = fma(t, x2.hi, 0.400007992982864379882812);
    let c = df(0.66666662693023681640625, 3.69183861259614332084311e-09);
    let mut s = mul_df(
        df(0.69314718246459960938, -1.904654323148236017e-09),
        e as f32,
    );
    s = add_dd(s, scale(x, 2.0));
    add_dd(s, mul_dd(mul_dd(x2, x), add2_dd(mul_df(x2, t), c)))
}

/// exp of a double-float (expkf).
fn exp_k(d: Df) -> f32 {
    let q = rint((d.hi + d.lo) * R_LN2);
    let mut s = add2_df(d, q as f32 * -L2U);
    s = add2_df(s, q as f32 * -L2L);
    s = normalize(s);
    let mut u = 0.00136324646882712841033936_f32;
    u = fma(u, s.hi, 0.00836596917361021041870117);
    u = fma(u, s.hi, 0.0416710823774337768554688);
    u = fma(u, s.hi, 0.166665524244308471679688);
    u = fma(u, s.hi, 0.499999850988388061523438);
    let mut t = add_dd(s, mul_df(square(s), u));
    t = add_fd(1.0, t);
    let u = ldexp(t.hi + t.lo, q);
    if d.hi < -104.0 { 0.0 } else { u }
}

/// `Sleef_powf8_u10`, one lane: `x^y` to within 1 ulp, as PyTorch's vectorised CPU kernel
/// computes it.
pub fn pow(x: f32, y: f32) -> f32 {
    let y_is_int = y.trunc() == y || y.abs() > 16_777_216.0;
    let y_is_odd = y_is_int && y.abs() < 16_777_216.0 && (y.trunc() as i32) & 1 == 1;
    let mut result = exp_k(mul_df(log_k(x.abs()), y));
    if result.is_nan() {
        result = f32::INFINITY;
    }
    let sign = if x > 0.0 {
        1.0
    } else if y_is_int {
        if y_is_odd { -1.0 } else { 1.0 }
    } else {
        f32::NAN
    };
    result *= sign;
    if y.is_infinite() {
        // |x| - 1 with the sign of y flipped in (vmulsign).
        let efx = f32::from_bits((x.abs() - 1.0).to_bits() ^ (y.to_bits() & 0x8000_0000));
        result = if efx < 0.0 {
            0.0
        } else if efx == 0.0 {
            1.0
        } else {
            f32::INFINITY
        };
    }
    if x.is_infinite() || x == 0.0 {
        let sign = if y_is_odd { x.signum() } else { 1.0 };
        let negative = if x == 0.0 { -y } else { y } < 0.0;
        result = sign * if negative { 0.0 } else { f32::INFINITY };
    }
    if x.is_nan() || y.is_nan() {
        result = f32::NAN;
    }
    if y == 0.0 || x == 1.0 {
        result = 1.0;
    }
    result
}

/// `Sleef_expf8_u10`, one lane: `e^d` to within 1 ulp.
pub fn exp(d: f32) -> f32 {
    let q = rint(d * R_LN2);
    let mut s = fma(q as f32, -L2U, d);
    s = fma(q as f32, -L2L, s);
    let mut u = 0.000198527617612853646278381_f32;
    u = fma(u, s, 0.00139304355252534151077271);
    u = fma(u, s, 0.00833336077630519866943359);
    u = fma(u, s, 0.0416664853692054748535156);
    u = fma(u, s, 0.166666671633720397949219);
    u = fma(u, s, 0.5);
    u = 1.0 + fma(s * s, u, s);
    u = ldexp2(u, q);
    if d < -104.0 {
        u = 0.0;
    }
    if 100.0 < d {
        u = f32::INFINITY;
    }
    u
}
