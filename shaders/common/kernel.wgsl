// Shared by every compute shader: the bindings but the output, the window being computed, and
// exact sin/cos of an angle given as a fixed-point fraction of a turn. Concatenated in front of each
// family's shader at compile time (see src/engine/gpu/shaders.rs).

// Keep in sync with KernelParams in src/engine/gpu/gpu_data.rs.
struct KernelParams {
    // Table rows computed: row_start, row_start + row_step, ... (rows of them).
    row_start: u32,
    row_step: u32,
    rows: u32,
    // Table columns computed, likewise.
    col_start: u32,
    col_step: u32,
    cols: u32,
    // First head of a 3-D table; head = head_start + z * head_step.
    head_start: u32,
    // Layout, mode or metric, by kernel.
    flags: u32,
    // Low 32 bits of the first position (positions = position_start + row).
    position_start: u32,
    dim: u32,
    grid_w: u32,
    // Kernel-specific integer (anchor row, offset of the first precomputed value, K, ...).
    extra: u32,
    // Kernel-specific reals.
    scalar0: f32,
    scalar1: f32,
    // Step between the heads of a window.
    head_step: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> params: KernelParams;
// Per-column or per-head constants prepared in f64 on the CPU (frequencies as turns, slopes).
@group(0) @binding(1) var<storage, read> constants: array<u32>;
// The input array of rope-apply; a placeholder elsewhere.
@group(0) @binding(2) var<storage, read> input: array<f32>;
// Binding 3, the table window, is declared by common/output_words.wgsl (one 32-bit word at a
// time) or common/output_quads.wgsl (four at a time).

const NEG_INFINITY_BITS: u32 = 0xff800000u;
const TAU: f32 = 6.2831853071795864769;

fn table_row(y: u32) -> u32 {
    return params.row_start + y * params.row_step;
}

fn table_col(x: u32) -> u32 {
    return params.col_start + x * params.col_step;
}

fn output_index(x: u32, y: u32, z: u32) -> u32 {
    return (z * params.rows + y) * params.cols + x;
}

fn in_window(id: vec3<u32>) -> bool {
    return id.x < params.cols && id.y < params.rows;
}

// High 32 bits of the 64-bit product a * b (Hacker's Delight mulhu), in 16-bit pieces
// because WGSL has no 64-bit integers.
fn mul_high(a: u32, b: u32) -> u32 {
    let a0 = a & 0xffffu;
    let a1 = a >> 16u;
    let b0 = b & 0xffffu;
    let b1 = b >> 16u;
    let t = a0 * b0;
    let u = a1 * b0 + (t >> 16u);
    let v = a0 * b1 + (u & 0xffffu);
    return a1 * b1 + (u >> 16u) + (v >> 16u);
}

// The fraction of a turn of p * f, as a 32-bit fixed-point number, where the frequency
// f = (f_hi + f_lo / 2^32) / 2^32 turns per step. Integer arithmetic is exact on every adapter,
// so the angle is reduced exactly however large p is; only the last 2^-32 turn is dropped.
fn turns(p: u32, f_hi: u32, f_lo: u32) -> u32 {
    return p * f_hi + mul_high(p, f_lo);
}

// sin and cos of y for |y| <= pi/4 (Taylor series, truncation below 2e-9).
fn sin_small(y: f32) -> f32 {
    let z = y * y;
    return y + y * z * (-1.6666667e-1 + z * (8.3333333e-3 + z * (-1.9841270e-4 + z * 2.7557319e-6)));
}

fn cos_small(y: f32) -> f32 {
    let z = y * y;
    return 1.0 + z * (-0.5 + z * (4.1666667e-2 + z * (-1.3888889e-3 + z * (2.4801587e-5 + z * -2.7557319e-7))));
}

// (sin, cos) of a fraction of a turn given as 32-bit fixed point: the octant comes from the top
// three bits, the angle within it (at most pi/4) from the rest, so no precision is lost to a
// large argument. Selects rather than branches: neighbouring invocations fall in different
// octants, and a software adapter runs every branch any of its lanes takes.
fn sin_cos_turns(t: u32) -> vec2<f32> {
    let octant = t >> 29u;
    let rest = t & 0x1fffffffu;
    // In an odd octant, pi/4 + y within the quadrant is pi/2 - z with z = pi/4 - y, exact in
    // integers: sin and cos trade places.
    let odd = (octant & 1u) != 0u;
    let y = f32(select(rest, 0x20000000u - rest, odd)) * (TAU / 4294967296.0);
    let small = vec2<f32>(sin_small(y), cos_small(y));
    let sc = select(small, small.yx, odd);
    // The quadrant turns (s, c) into (c, -s), (-s, -c) or (-c, s).
    let quadrant = octant >> 1u;
    let turned = select(sc, vec2<f32>(sc.y, -sc.x), (quadrant & 1u) != 0u);
    return select(turned, -turned, quadrant >= 2u);
}


fn real_constant(index: u32) -> f32 {
    return bitcast<f32>(constants[index]);
}
