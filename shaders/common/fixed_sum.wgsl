// Shared by the kernels and the reduction (no bindings of its own).

// An exact sum of terms in [-1, 1] fixed to 2^-30: shader compilers may reassociate float
// additions (llvmpipe turns Kahan's compensation into nothing), integer ones change nothing.
// 64 bits: 2^33 terms of magnitude 1 before it could overflow.
struct FixedSum {
    lo: u32,
    hi: i32,
}

fn fixed_add(sum: ptr<function, FixedSum>, x: f32) {
    let q = i32(round(clamp(x, -1.0, 1.0) * 1073741824.0));
    let lo = (*sum).lo + bitcast<u32>(q);
    let carry = select(0, 1, lo < (*sum).lo);
    (*sum).hi += select(0, -1, q < 0) + carry;
    (*sum).lo = lo;
}

// The sum, rounded once to f32 (the low word adds at most 2^-22 of error first).
fn fixed_value(sum: FixedSum) -> f32 {
    return f32(sum.hi) * 4.0 + f32(sum.lo) * (1.0 / 1073741824.0);
}
