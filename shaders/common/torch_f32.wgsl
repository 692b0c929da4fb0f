// PyTorch's float32 angles, reproduced exactly: a position rounded to f32 as
// `position.float()` does, times a frequency already rounded to f32, rounded to f32 once
// (torch.outer(pos, inv_freq)). The angle's fraction of a turn is then found exactly in
// integers (Payne–Hanek style) and its sin/cos evaluated in 64-bit fixed point and rounded to
// f32 once, so the GPU gives what torch's float32 tables hold, bit for bit.
//
// Per column, constants hold 4 words: the f32 frequency w's bits, then the 96-bit fraction
// g = frac(2^e_w / 2π) (most significant word first), where w = m_w * 2^e_w with m_w its
// 24-bit significand.

// The position p rounded to nearest-even f32, as (significand, exponent): p32 = m * 2^e.
fn position_f32(p: u32) -> vec2<u32> {
    if p < 0x1000000u {
        return vec2<u32>(p, 0u);
    }
    let shift = 8u - countLeadingZeros(p);
    let dropped = p & ((1u << shift) - 1u);
    let half = 1u << (shift - 1u);
    var m = p >> shift;
    if dropped > half || (dropped == half && (m & 1u) == 1u) {
        m += 1u;
    }
    return vec2<u32>(m, shift);
}

// The exact 48-bit product a * b of two 24-bit integers, rounded to 24 significant bits
// (nearest even) and shifted left by `shift`: the f32 product's value in units of 2^e.
fn rounded_product(a: u32, b: u32, shift: u32) -> vec2<u32> {
    var hi = mul_high(a, b);
    var lo = a * b;
    var bits = 32u - countLeadingZeros(lo);
    if hi != 0u {
        bits = 64u - countLeadingZeros(hi);
    }
    if bits > 24u {
        let s = bits - 24u;
        let mask = (1u << s) - 1u;
        let dropped = lo & mask;
        let half = 1u << (s - 1u);
        lo = lo & ~mask;
        let odd = ((lo >> s) & 1u) == 1u;
        if dropped > half || (dropped == half && odd) {
            let before = lo;
            lo += 1u << s;
            if lo < before {
                hi += 1u;
            }
        }
    }
    if shift > 0u {
        hi = (hi << shift) | (lo >> (32u - shift));
        lo = lo << shift;
    }
    return vec2<u32>(hi, lo);
}

// The top 64 bits of frac(A * g) for a 64-bit A and a 96-bit fraction g (words g2 g1 g0).
fn fraction_of_product(a: vec2<u32>, g2: u32, g1: u32, g0: u32) -> vec2<u32> {
    let a1 = a.x;
    let a0 = a.y;
    // Word 1 (bits 2^-33 .. 2^-64) and its carries into word 2.
    let w1a = a1 * g0;
    let w1b = a0 * g1;
    let w1c = mul_high(a0, g0);
    let s1 = w1a + w1b;
    let c1 = select(0u, 1u, s1 < w1a);
    let s2 = s1 + w1c;
    let c2 = select(0u, 1u, s2 < s1);
    let word2 = a1 * g1 + a0 * g2 + mul_high(a1, g0) + mul_high(a0, g1) + c1 + c2;
    return vec2<u32>(word2, s2);
}

// Unsigned 64-bit fixed-point numbers below 1 (Q0.64) as (high word, low word): sin and cos
// are evaluated in them to about 2^-62, then rounded to f32 once, to nearest even. That is what
// torch's tables hold (the correctly rounded f32 of each sin and cos, which the CPU engine
// computes in f64), bit for bit: an evaluation in f32 itself is off by an ulp or two now and
// then, which a rotated query then shows as several ulps.

// floor(a * b / 2^64): the high half of the 128-bit product.
fn mul_q64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let cross1 = a.x * b.y;
    let cross2 = a.y * b.x;
    let middle1 = cross1 + cross2;
    let middle2 = middle1 + mul_high(a.y, b.y);
    let carry = select(0u, 1u, middle1 < cross1) + select(0u, 1u, middle2 < middle1);
    let top = a.x * b.x;
    let low1 = top + mul_high(a.x, b.y);
    let low2 = low1 + mul_high(a.y, b.x);
    let low3 = low2 + carry;
    let carries = select(0u, 1u, low1 < top) + select(0u, 1u, low2 < low1) + select(0u, 1u, low3 < low2);
    return vec2<u32>(mul_high(a.x, b.x) + carries, low3);
}

// a - b, modulo 2^64.
fn sub_q64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    return vec2<u32>(a.x - b.x - select(0u, 1u, a.y < b.y), a.y - b.y);
}

// The f32 nearest v / 2^64 (ties to even).
fn q64_to_f32(v: vec2<u32>) -> f32 {
    if v.x == 0u && v.y == 0u {
        return 0.0;
    }
    // Shift the leading one to bit 63 (shifts of 32 or more are not defined on u32).
    let zeros = select(32u + countLeadingZeros(v.y), countLeadingZeros(v.x), v.x != 0u);
    var hi: u32;
    var lo: u32;
    if zeros >= 32u {
        hi = v.y << (zeros - 32u);
        lo = 0u;
    } else if zeros > 0u {
        hi = (v.x << zeros) | (v.y >> (32u - zeros));
        lo = v.y << zeros;
    } else {
        hi = v.x;
        lo = v.y;
    }
    var significand = hi >> 8u;
    let dropped = hi & 0xffu;
    if dropped > 0x80u || (dropped == 0x80u && (lo != 0u || (significand & 1u) == 1u)) {
        significand += 1u;
    }
    return ldexp(f32(significand), -24 - i32(zeros));
}

// 2π * 2^61, rounded to an integer (2π in units of 2^-61).
const TAU_Q61 = vec2<u32>(0xc90fdaa2u, 0x2168c235u);

// (sin y, cos y) for 0 <= y <= π/4 in Q0.64, by Taylor series in Horner form: every
// intermediate stays in [0, 1), and the terms dropped are below 2^-68.
fn sin_cos_q64(y: vec2<u32>) -> vec2<f32> {
    let z = mul_q64(y, y);
    // sin y = y - y * z * (1/3! - z * (1/5! - ... z / 19!)).
    var p = vec2<u32>(0x00000000u, 0x00000098u);
    p = sub_q64(vec2<u32>(0x00000000u, 0x0000ca96u), mul_q64(z, p));
    p = sub_q64(vec2<u32>(0x00000000u, 0x00d73f9fu), mul_q64(z, p));
    p = sub_q64(vec2<u32>(0x00000000u, 0xb092309du), mul_q64(z, p));
    p = sub_q64(vec2<u32>(0x0000006bu, 0x99159fd5u), mul_q64(z, p));
    p = sub_q64(vec2<u32>(0x00002e3bu, 0xc74aad8eu), mul_q64(z, p));
    p = sub_q64(vec2<u32>(0x000d00d0u, 0x0d00d00du), mul_q64(z, p));
    p = sub_q64(vec2<u32>(0x02222222u, 0x22222222u), mul_q64(z, p));
    p = sub_q64(vec2<u32>(0x2aaaaaaau, 0xaaaaaaabu), mul_q64(z, p));
    let sin = sub_q64(y, mul_q64(y, mul_q64(z, p)));
    // 1 - cos y = z * (1/2! - z * (1/4! - ... z / 20!)).
    var q = vec2<u32>(0x00000000u, 0x00000008u);
    q = sub_q64(vec2<u32>(0x00000000u, 0x00000b41u), mul_q64(z, q));
    q = sub_q64(vec2<u32>(0x00000000u, 0x000d73fau), mul_q64(z, q));
    q = sub_q64(vec2<u32>(0x00000000u, 0x0c9cba54u), mul_q64(z, q));
    q = sub_q64(vec2<u32>(0x00000008u, 0xf76c77fcu), mul_q64(z, q));
    q = sub_q64(vec2<u32>(0x0000049fu, 0x93edde28u), mul_q64(z, q));
    q = sub_q64(vec2<u32>(0x0001a01au, 0x01a01a02u), mul_q64(z, q));
    q = sub_q64(vec2<u32>(0x005b05b0u, 0x5b05b05bu), mul_q64(z, q));
    q = sub_q64(vec2<u32>(0x0aaaaaaau, 0xaaaaaaabu), mul_q64(z, q));
    q = sub_q64(vec2<u32>(0x80000000u, 0x00000000u), mul_q64(z, q));
    let versine = mul_q64(z, q);
    // 1 - versine is 2^64 - versine in Q0.64; cos 0 = 1 is the one value it cannot hold.
    var cos = 1.0;
    if versine.x != 0u || versine.y != 0u {
        cos = q64_to_f32(sub_q64(vec2<u32>(0u, 0u), versine));
    }
    return vec2<f32>(q64_to_f32(sin), cos);
}

// (sin, cos) of a 64-bit fraction of a turn (hi, lo words).
fn sin_cos_turns_64(t: vec2<u32>) -> vec2<f32> {
    let octant = t.x >> 29u;
    // The angle within its octant, in units of 2^-64 turn (below 2^61).
    var within = vec2<u32>(t.x & 0x1fffffffu, t.y);
    if (octant & 1u) == 1u {
        // In an odd octant, π/4 + y is π/2 - z with z = π/4 - y: sin and cos trade places.
        within = sub_q64(vec2<u32>(0x20000000u, 0u), within);
        // An angle exactly on the octant's start (z = π/4 exactly) is one unit short of it.
        if within.x == 0x20000000u {
            within = vec2<u32>(0x1fffffffu, 0xffffffffu);
        }
    }
    // within * 8 is the fraction of an eighth of a turn in Q0.64; times 2π * 2^61 / 2^64 it
    // is the angle in radians, in Q0.64.
    let eighths = vec2<u32>((within.x << 3u) | (within.y >> 29u), within.y << 3u);
    var sc = sin_cos_q64(mul_q64(eighths, TAU_Q61));
    if (octant & 1u) == 1u {
        sc = sc.yx;
    }
    switch octant >> 1u {
        case 0u: { return sc; }
        case 1u: { return vec2<f32>(sc.y, -sc.x); }
        case 2u: { return -sc; }
        default: { return vec2<f32>(-sc.y, sc.x); }
    }
}

// The 64-bit turn fraction of torch's f32 angle f32(p) * w32 for frequency column `column`.
fn torch_turns(p: u32, column: u32) -> vec2<u32> {
    let base = 4u * column;
    let position = position_f32(p);
    let significand = (constants[base] & 0x7fffffu) | 0x800000u;
    let product = rounded_product(position.x, significand, position.y);
    return fraction_of_product(product, constants[base + 1u], constants[base + 2u], constants[base + 3u]);
}

// torch's f32 angle itself: f32(p) * w32, rounded once.
fn torch_angle(p: u32, column: u32) -> f32 {
    let position = position_f32(p);
    return ldexp(f32(position.x), i32(position.y)) * bitcast<f32>(constants[4u * column]);
}
