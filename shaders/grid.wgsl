// Patch grids in raster order: patch_index k at column k % grid_w, row k / grid_w.

// metric 0 euclidean, 1 manhattan, 2 chebyshev.
fn patch_distance(a: u32, b: u32, metric: u32) -> f32 {
    let dx = f32(max(a % params.grid_w, b % params.grid_w) - min(a % params.grid_w, b % params.grid_w));
    let dy = f32(max(a / params.grid_w, b / params.grid_w) - min(a / params.grid_w, b / params.grid_w));
    switch metric {
        case 1u: { return dx + dy; }
        case 2u: { return max(dx, dy); }
        default: { return sqrt(dx * dx + dy * dy); }
    }
}

@compute @workgroup_size(16, 16, 1)
fn patch_distance_table(@builtin(global_invocation_id) id: vec3<u32>) {
    if !in_window(id) {
        return;
    }
    write_real(output_index(id.x, id.y, 0u), patch_distance(table_row(id.y), table_col(id.x), params.flags));
}

// MAE 2D sin-cos and its library orders. constants: per k < dim/4, omega_k as turns
// (f_hi, f_lo). flags bits 2i, 2i+1: block i's code (bit 0 cos, bit 1 the y coordinate);
// bit 8: patches column by column (grid_h = scalar1). extra: zero rows before the patches.
@compute @workgroup_size(16, 16, 1)
fn sincos_2d(@builtin(global_invocation_id) id: vec3<u32>) {
    if !in_window(id) {
        return;
    }
    let row = table_row(id.y);
    let index = output_index(id.x, id.y, 0u);
    if row < params.extra {
        write_real(index, 0.0);
        return;
    }
    let patch_index = row - params.extra;
    let col = table_col(id.x);
    let quarter = params.dim / 4u;
    var x = patch_index % params.grid_w;
    var y = patch_index / params.grid_w;
    if (params.flags & 256u) != 0u {
        let grid_h = u32(params.scalar1);
        x = patch_index / grid_h;
        y = patch_index % grid_h;
    }
    let code = (params.flags >> (2u * (col / quarter))) & 3u;
    let coordinate = select(x, y, (code & 2u) != 0u);
    let k = col % quarter;
    let sc = sin_cos_turns(turns(coordinate, constants[2u * k], constants[2u * k + 1u]));
    write_real(index, select(sc.x, sc.y, (code & 1u) != 0u));
}

// d steps of a frequency, as a fraction of a turn, for a signed d.
fn signed_turns(d: i32, f_hi: u32, f_lo: u32) -> u32 {
    let t = turns(u32(abs(d)), f_hi, f_lo);
    return select(t, 0u - t, d < 0);
}

// One term of patch_similarity: cos(dx fx_i + dy fy_i), if pair i exists.
fn add_patch_cosine(sum: ptr<function, FixedSum>, dx: i32, dy: i32, i: u32) {
    if i < params.dim {
        let base = 4u * i;
        // Adding fractions of a turn in integers is exact, wrap-around included.
        let t = signed_turns(dx, constants[base], constants[base + 1u])
            + signed_turns(dy, constants[base + 2u], constants[base + 3u]);
        fixed_add(sum, sin_cos_turns(t).y);
    }
}

// Patch similarity: the mean over `dim` frequency pairs of cos(fx dx + fy dy), where (dx, dy)
// is the offset between the patches. constants: per pair, fx then fy as turns (hi, lo).
@compute @workgroup_size(16, 16, 1)
fn patch_similarity(@builtin(global_invocation_id) id: vec3<u32>) {
    if !in_window(id) {
        return;
    }
    let query = table_row(id.y);
    let key = table_col(id.x);
    let dx = i32(query % params.grid_w) - i32(key % params.grid_w);
    let dy = i32(query / params.grid_w) - i32(key / params.grid_w);
    var sum = FixedSum(0u, 0);
    // 32 terms a pass: see LOOP_PASSES in common/fixed_sum.wgsl (2^20 pairs in 32768 passes).
    for (var i = 0u; i < params.dim; i += 32u) {
        add_patch_cosine(&sum, dx, dy, i);
        add_patch_cosine(&sum, dx, dy, i + 1u);
        add_patch_cosine(&sum, dx, dy, i + 2u);
        add_patch_cosine(&sum, dx, dy, i + 3u);
        add_patch_cosine(&sum, dx, dy, i + 4u);
        add_patch_cosine(&sum, dx, dy, i + 5u);
        add_patch_cosine(&sum, dx, dy, i + 6u);
        add_patch_cosine(&sum, dx, dy, i + 7u);
        add_patch_cosine(&sum, dx, dy, i + 8u);
        add_patch_cosine(&sum, dx, dy, i + 9u);
        add_patch_cosine(&sum, dx, dy, i + 10u);
        add_patch_cosine(&sum, dx, dy, i + 11u);
        add_patch_cosine(&sum, dx, dy, i + 12u);
        add_patch_cosine(&sum, dx, dy, i + 13u);
        add_patch_cosine(&sum, dx, dy, i + 14u);
        add_patch_cosine(&sum, dx, dy, i + 15u);
        add_patch_cosine(&sum, dx, dy, i + 16u);
        add_patch_cosine(&sum, dx, dy, i + 17u);
        add_patch_cosine(&sum, dx, dy, i + 18u);
        add_patch_cosine(&sum, dx, dy, i + 19u);
        add_patch_cosine(&sum, dx, dy, i + 20u);
        add_patch_cosine(&sum, dx, dy, i + 21u);
        add_patch_cosine(&sum, dx, dy, i + 22u);
        add_patch_cosine(&sum, dx, dy, i + 23u);
        add_patch_cosine(&sum, dx, dy, i + 24u);
        add_patch_cosine(&sum, dx, dy, i + 25u);
        add_patch_cosine(&sum, dx, dy, i + 26u);
        add_patch_cosine(&sum, dx, dy, i + 27u);
        add_patch_cosine(&sum, dx, dy, i + 28u);
        add_patch_cosine(&sum, dx, dy, i + 29u);
        add_patch_cosine(&sum, dx, dy, i + 30u);
        add_patch_cosine(&sum, dx, dy, i + 31u);
    }
    write_real(output_index(id.x, id.y, 0u), fixed_value(sum) / f32(params.dim));
}

// A position table moved to another grid (timm resample_abs_pos_embed): rows below `extra`
// are copied from the input; a patch row is the weighted sum of the input patches its taps
// read. constants: taps per output row (ky), taps per output column (kx), the input grid's
// width, where the column taps start; then per tap (input index, f32 weight bits), ky for each
// output row followed by kx for each output column. dim: the table's width; grid_w: the output
// grid's width; input: the whole input table.
@compute @workgroup_size(16, 16, 1)
fn resample_2d(@builtin(global_invocation_id) id: vec3<u32>) {
    if !in_window(id) {
        return;
    }
    let row = table_row(id.y);
    let col = table_col(id.x);
    let index = output_index(id.x, id.y, 0u);
    if row < params.extra {
        write_real(index, input[row * params.dim + col]);
        return;
    }
    let patch_index = row - params.extra;
    let y = patch_index / params.grid_w;
    let x = patch_index % params.grid_w;
    let ky = constants[0];
    let kx = constants[1];
    let from_w = constants[2];
    let x_taps = constants[3];
    var sum = 0.0;
    for (var i = 0u; i < ky; i++) {
        let y_tap = 4u + 2u * (y * ky + i);
        let first = (params.extra + constants[y_tap] * from_w) * params.dim + col;
        var along_x = 0.0;
        for (var j = 0u; j < kx; j++) {
            let x_tap = x_taps + 2u * (x * kx + j);
            along_x += bitcast<f32>(constants[x_tap + 1u]) * input[first + constants[x_tap] * params.dim];
        }
        sum += bitcast<f32>(constants[y_tap + 1u]) * along_x;
    }
    write_real(index, sum);
}
