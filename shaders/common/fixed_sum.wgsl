// Shared by the kernels and the reduction (no bindings of its own). See "Long loops" below.

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

// Two sums added exactly (wrapping only past 2^33 terms of magnitude 1, as fixed_add).
fn fixed_add_sum(sum: ptr<function, FixedSum>, x: FixedSum) {
    let lo = (*sum).lo + x.lo;
    (*sum).hi += x.hi + select(0, 1, lo < (*sum).lo);
    (*sum).lo = lo;
}

// The sum divided by 2^shift, rounded toward -infinity (off by less than 2^-30 of 2^shift).
fn fixed_shift_right(x: FixedSum, shift: u32) -> FixedSum {
    let sign = select(0, -1, x.hi < 0);
    if shift == 0u {
        return x;
    }
    if shift >= 64u {
        return FixedSum(bitcast<u32>(sign), sign);
    }
    if shift >= 32u {
        return FixedSum(bitcast<u32>(x.hi >> (shift - 32u)), sign);
    }
    return FixedSum((x.lo >> shift) | (bitcast<u32>(x.hi) << (32u - shift)), x.hi >> shift);
}

// Long loops: llvmpipe (Mesa's software Vulkan, lavapipe) silently ends every loop of an
// invocation once the invocation has made 65535 loop passes in all (gallivm's
// LP_MAX_TGSI_LOOP_ITERATIONS), so a longer sum would lose its tail without an error. Loops here
// make at most 32768 passes: long sums take 16 or 32 terms a pass, and a heatmap pixel over
// many cells is reduced in chunks (reduce.wgsl); src/engine/gpu/mod.rs's LOOP_PASSES checks the
// rest before dispatching.
