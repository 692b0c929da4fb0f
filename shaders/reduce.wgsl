// Heatmap pixels that cover several cells: each pixel reduces the finite cells under it to
// their mean (an exact fixed-point sum), minimum or maximum; a pixel whose cells are all masked
// (-inf) stays masked. The cells are a full-resolution block of the table computed just before.
// Two passes, so that no invocation loops long (see "Long loops" in common/fixed_sum.wgsl):
// reduce_chunks reduces each run of at most `chunk` cells of a pixel to a Partial, and
// reduce_pixels combines a pixel's partials.

// Keep in sync with ReduceParams in src/engine/gpu/reduce.rs.
struct ReduceParams {
    // Pixels of this block, and the cells one pixel covers along each axis.
    px_rows: u32,
    px_cols: u32,
    bin_rows: u32,
    bin_cols: u32,
    // The block of cells, row-major.
    cell_rows: u32,
    cell_cols: u32,
    // The first pixel row of this block in the output.
    out_row: u32,
    // 0 mean, 1 min, 2 max (keep in sync with Reduce::code).
    mode: u32,
    // Cells per chunk (the last chunk of a pixel may hold fewer), and chunks per pixel.
    chunk: u32,
    chunks: u32,
}

// The reduction of one chunk: its finite cells' count, extremes, and sum over 2^exponent (a
// power of two at least their largest magnitude).
struct Partial {
    count: u32,
    low: f32,
    high: f32,
    exponent: i32,
    sum_lo: u32,
    sum_hi: i32,
}

@group(0) @binding(0) var<uniform> params: ReduceParams;
@group(0) @binding(1) var<storage, read> cells: array<f32>;
// Each pixel's f32 bits (a masked pixel is -inf, which WGSL cannot write as a constant).
@group(0) @binding(2) var<storage, read_write> pixels: array<u32>;
@group(0) @binding(3) var<storage, read_write> partials: array<Partial>;

const NEG_INFINITY: u32 = 0xff800000u;

fn is_finite(value: f32) -> bool {
    return (bitcast<u32>(value) & 0x7f800000u) != 0x7f800000u;
}

// Cell k (row-major within the pixel's own cells) of pixel (x, y); the pixel is `width` cells
// wide.
fn pixel_cell(x: u32, y: u32, width: u32, k: u32) -> f32 {
    let r = y * params.bin_rows + k / width;
    let c = x * params.bin_cols + k % width;
    return cells[r * params.cell_cols + c];
}

// One invocation per (pixel column, pixel row, chunk).
@compute @workgroup_size(16, 16, 1)
fn reduce_chunks(@builtin(global_invocation_id) id: vec3<u32>) {
    if id.x >= params.px_cols || id.y >= params.px_rows || id.z >= params.chunks {
        return;
    }
    let r0 = id.y * params.bin_rows;
    let c0 = id.x * params.bin_cols;
    let height = min(r0 + params.bin_rows, params.cell_rows) - r0;
    let width = min(c0 + params.bin_cols, params.cell_cols) - c0;
    let k0 = id.z * params.chunk;
    let k1 = min(k0 + params.chunk, height * width);
    var part = Partial(0u, 0.0, 0.0, 0, 0u, 0);
    for (var k = k0; k < k1; k++) {
        let value = pixel_cell(id.x, id.y, width, k);
        if !is_finite(value) {
            continue;
        }
        if part.count == 0u {
            part.low = value;
            part.high = value;
        }
        part.low = min(part.low, value);
        part.high = max(part.high, value);
        part.count += 1u;
    }
    // The mean's sum: the cells over a power of two at least as large as any, summed exactly in
    // fixed point (compilers may reassociate float sums, and drop a compensation).
    if params.mode == 0u && part.count > 0u {
        let largest = max(abs(part.low), abs(part.high));
        if largest > 0.0 {
            // As ldexp, not a float: up to 2^128.
            part.exponent = frexp(largest).exp;
        }
        var sum = FixedSum(0u, 0);
        for (var k = k0; k < k1; k++) {
            let value = pixel_cell(id.x, id.y, width, k);
            if is_finite(value) {
                fixed_add(&sum, ldexp(value, -part.exponent));
            }
        }
        part.sum_lo = sum.lo;
        part.sum_hi = sum.hi;
    }
    partials[(id.y * params.px_cols + id.x) * params.chunks + id.z] = part;
}

// One invocation per pixel: its chunks' partials combined.
@compute @workgroup_size(16, 16, 1)
fn reduce_pixels(@builtin(global_invocation_id) id: vec3<u32>) {
    if id.x >= params.px_cols || id.y >= params.px_rows {
        return;
    }
    let first = (id.y * params.px_cols + id.x) * params.chunks;
    var count = 0u;
    var low = 0.0;
    var high = 0.0;
    var exponent = -1000;
    for (var z = 0u; z < params.chunks; z++) {
        let part = partials[first + z];
        if part.count == 0u {
            continue;
        }
        if count == 0u {
            low = part.low;
            high = part.high;
        }
        low = min(low, part.low);
        high = max(high, part.high);
        exponent = max(exponent, part.exponent);
        count += part.count;
    }
    // The bits, not the float: WGSL refuses an infinite value in a constant expression, and
    // browsers' compilers (Tint) refuse the whole shader for `bitcast<f32>` of -inf's bits.
    var result = NEG_INFINITY;
    if count > 0u {
        switch params.mode {
            case 1u: { result = bitcast<u32>(low); }
            case 2u: { result = bitcast<u32>(high); }
            default: {
                // Every chunk's sum brought to the largest chunk's scale (each off by less than
                // 2^-30 of it, as one more cell's rounding would be).
                var sum = FixedSum(0u, 0);
                for (var z = 0u; z < params.chunks; z++) {
                    let part = partials[first + z];
                    if part.count > 0u {
                        fixed_add_sum(&sum, fixed_shift_right(FixedSum(part.sum_lo, part.sum_hi), u32(exponent - part.exponent)));
                    }
                }
                result = bitcast<u32>(ldexp(fixed_value(sum) / f32(count), exponent));
            }
        }
    }
    pixels[(params.out_row + id.y) * params.px_cols + id.x] = result;
}
