// Heatmap textures straight from a table window on the GPU: the value range by an atomic
// reduction, then every value mapped through a 256-entry colour table into rgba8 pixels, which
// a buffer-to-texture copy makes the texture. The values never travel to the CPU.

// Keep in sync with ColormapParams in src/engine/gpu/heatmap.rs.
struct ColormapParams {
    rows: u32,
    cols: u32,
    // 1: the range is made symmetric around 0 (diverging colour maps).
    symmetric: u32,
    // The colour of masked (non-finite) cells, packed rgba8.
    masked: u32,
    // Pixels from one row to the next in `pixels` (a texture copy's rows are 256-byte aligned).
    row_pixels: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> params: ColormapParams;
@group(0) @binding(1) var<storage, read> values: array<f32>;
// Order-preserving u32 codes of the smallest and largest finite value.
@group(0) @binding(2) var<storage, read_write> range_codes: array<atomic<u32>, 2>;
// 256 colours, packed rgba8 (red in the low byte, as an rgba8 texture lays them out).
@group(0) @binding(3) var<storage, read> colors: array<u32, 256>;
// The texture's pixels, row by row. Not a storage texture: a software adapter converts every
// texel it stores, which cost several times this pass, and a copy of bytes costs nothing.
@group(0) @binding(4) var<storage, read_write> pixels: array<u32>;

// Maps f32 bits to u32 so that unsigned order is numeric order.
fn order_code(value: f32) -> u32 {
    let bits = bitcast<u32>(value);
    if (bits & 0x80000000u) != 0u {
        return ~bits;
    }
    return bits | 0x80000000u;
}

fn from_order_code(code: u32) -> f32 {
    if (code & 0x80000000u) != 0u {
        return bitcast<f32>(code & 0x7fffffffu);
    }
    return bitcast<f32>(~code);
}

fn is_finite(value: f32) -> bool {
    return (bitcast<u32>(value) & 0x7f800000u) != 0x7f800000u;
}

// Values each thread reduces before it touches the two global atomics: one atomic per value
// made contention on them cost more than everything else on a software adapter. Keep in sync
// with VALUES_PER_THREAD in src/engine/gpu/heatmap.rs.
const VALUES_PER_THREAD: u32 = 64u;

@compute @workgroup_size(256, 1, 1)
fn value_range(
    @builtin(workgroup_id) group: vec3<u32>,
    @builtin(local_invocation_index) local: u32,
) {
    let first = (group.y * 65535u + group.x) * 256u * VALUES_PER_THREAD + local;
    let count = params.rows * params.cols;
    var low = 0xffffffffu;
    var high = 0u;
    for (var k = 0u; k < VALUES_PER_THREAD; k++) {
        let index = first + k * 256u;
        if index >= count {
            break;
        }
        let value = values[index];
        if is_finite(value) {
            low = min(low, order_code(value));
            high = max(high, order_code(value));
        }
    }
    if low != 0xffffffffu {
        atomicMin(&range_codes[0], low);
        atomicMax(&range_codes[1], high);
    }
}

// Rows each invocation maps: the range decoded once for all of them.
const ROWS_PER_INVOCATION: u32 = 8u;

@compute @workgroup_size(16, 16, 1)
fn colormap(@builtin(global_invocation_id) id: vec3<u32>) {
    if id.x >= params.cols {
        return;
    }
    let codes = vec2<u32>(atomicLoad(&range_codes[0]), atomicLoad(&range_codes[1]));
    var low = from_order_code(codes.x);
    var high = from_order_code(codes.y);
    if params.symmetric == 1u {
        high = max(abs(low), abs(high));
        low = -high;
    }
    let y0 = id.y * ROWS_PER_INVOCATION;
    let y1 = min(y0 + ROWS_PER_INVOCATION, params.rows);
    for (var y = y0; y < y1; y++) {
        let value = values[y * params.cols + id.x];
        let t = select(0.5, clamp((value - low) / (high - low), 0.0, 1.0), high > low);
        let color = colors[u32(round(t * 255.0))];
        pixels[y * params.row_pixels + id.x] = select(params.masked, color, is_finite(value));
    }
}
