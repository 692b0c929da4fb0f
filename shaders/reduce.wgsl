// Heatmap pixels that cover several cells: each pixel reduces the finite cells under it to
// their mean (an exact fixed-point sum), minimum or maximum; a pixel whose cells are all masked (-inf)
// stays masked. The cells are a full-resolution block of the table computed just before.

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
}

@group(0) @binding(0) var<uniform> params: ReduceParams;
@group(0) @binding(1) var<storage, read> cells: array<f32>;
@group(0) @binding(2) var<storage, read_write> pixels: array<f32>;

const NEG_INFINITY: u32 = 0xff800000u;

fn is_finite(value: f32) -> bool {
    return (bitcast<u32>(value) & 0x7f800000u) != 0x7f800000u;
}

@compute @workgroup_size(16, 16, 1)
fn reduce(@builtin(global_invocation_id) id: vec3<u32>) {
    if id.x >= params.px_cols || id.y >= params.px_rows {
        return;
    }
    let r0 = id.y * params.bin_rows;
    let r1 = min(r0 + params.bin_rows, params.cell_rows);
    let c0 = id.x * params.bin_cols;
    let c1 = min(c0 + params.bin_cols, params.cell_cols);
    var count = 0u;
    var low = 0.0;
    var high = 0.0;
    for (var r = r0; r < r1; r++) {
        for (var c = c0; c < c1; c++) {
            let value = cells[r * params.cell_cols + c];
            if !is_finite(value) {
                continue;
            }
            if count == 0u {
                low = value;
                high = value;
            }
            low = min(low, value);
            high = max(high, value);
            count += 1u;
        }
    }
    // The mean: the cells over a power of two at least as large as any, summed exactly in
    // fixed point (compilers may reassociate float sums, and drop a compensation).
    var sum = FixedSum(0u, 0);
    // 2^exponent is at least the largest magnitude (as ldexp, not a float, up to 2^128).
    var exponent = 0;
    if params.mode == 0u && count > 0u {
        let largest = max(abs(low), abs(high));
        if largest > 0.0 {
            exponent = frexp(largest).exp;
        }
        for (var r = r0; r < r1; r++) {
            for (var c = c0; c < c1; c++) {
                let value = cells[r * params.cell_cols + c];
                if is_finite(value) {
                    fixed_add(&sum, ldexp(value, -exponent));
                }
            }
        }
    }
    var result = bitcast<f32>(NEG_INFINITY);
    if count > 0u {
        switch params.mode {
            case 1u: { result = low; }
            case 2u: { result = high; }
            default: { result = ldexp(fixed_value(sum) / f32(count), exponent); }
        }
    }
    pixels[(params.out_row + id.y) * params.px_cols + id.x] = result;
}
