// PyTorch's float32 angles, reproduced exactly: a position rounded to f32 as
// `position.float()` does, times a frequency already rounded to f32, rounded to f32 once
// (torch.outer(pos, inv_freq)). The angle's fraction of a turn is then found exactly in
// integers (Payne–Hanek style) and its sin/cos evaluated to within an ulp, so the GPU gives what
// torch's float32 tables hold.
//
// Per column, constants hold 4 words: the f32 frequency w's bits, then the 96-bit fraction
// g = frac(2^e_w / 2π) (most significant word first), where w = m_w * 2^e_w with m_w its
// 24-bit significand.

// u * 2^-32, as f32 scale factors.
const TWO_POW_M32: f32 = 2.3283064365386963e-10;
// 2π / 2^32 split so that a 16-bit integer times the first part is exact.
const TURN_C1: f32 = 1.4624674804508686e-9; // 8 significant bits
const TURN_C2: f32 = 4.505988139037742e-13; // the rest, rounded to f32

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

// sin and cos of y_hi + y_lo (|y| <= pi/4, y_lo tiny) to about an ulp.
fn sin_cos_small_dd(y: f32, y_lo: f32) -> vec2<f32> {
    let z = y * y;
    let sin_tail = y * z * (-1.6666667e-1 + z * (8.3333333e-3 + z * (-1.9841270e-4 + z * 2.7557319e-6)));
    let cos_tail = z * (-0.5 + z * (4.1666667e-2 + z * (-1.3888889e-3 + z * (2.4801587e-5 + z * -2.7557319e-7))));
    let s = y + (y_lo * (1.0 - 0.5 * z) + sin_tail);
    let c = 1.0 + (cos_tail - y * y_lo);
    return vec2<f32>(s, c);
}

// The angle r + q/2^32, in units of 2^-32 turn (r < 2^29), as y_hi + y_lo radians.
fn octant_angle(r: u32, q: u32) -> vec2<f32> {
    let t1 = f32(r >> 13u) * (TURN_C1 * 8192.0);
    let t2 = f32(r & 0x1fffu) * TURN_C1;
    let s = t1 + t2;
    let e = (t1 - s) + t2;
    let tail = e + f32(r) * TURN_C2 + f32(q) * (TWO_POW_M32 * (TURN_C1 + TURN_C2));
    let y = s + tail;
    return vec2<f32>(y, (s - y) + tail);
}

// (sin, cos) of a 64-bit fraction of a turn (hi, lo words).
fn sin_cos_turns_64(t: vec2<u32>) -> vec2<f32> {
    let octant = t.x >> 29u;
    let rest = t.x & 0x1fffffffu;
    var s: f32;
    var c: f32;
    if (octant & 1u) == 0u {
        let y = octant_angle(rest, t.y);
        let sc = sin_cos_small_dd(y.x, y.y);
        s = sc.x;
        c = sc.y;
    } else {
        // z = 1/8 turn - (rest + lo/2^32), with a borrow when lo is not zero.
        var whole = 0x20000000u - rest;
        var part = 0u;
        if t.y != 0u {
            whole -= 1u;
            part = 0u - t.y;
        }
        let z = octant_angle(whole, part);
        let sc = sin_cos_small_dd(z.x, z.y);
        s = sc.y;
        c = sc.x;
    }
    switch octant >> 1u {
        case 0u: { return vec2<f32>(s, c); }
        case 1u: { return vec2<f32>(c, -s); }
        case 2u: { return vec2<f32>(-s, -c); }
        default: { return vec2<f32>(-c, s); }
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
