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

// MAE 2D sin-cos. constants: per k < dim/4, omega_k as turns (f_hi, f_lo).
@compute @workgroup_size(16, 16, 1)
fn sincos_2d(@builtin(global_invocation_id) id: vec3<u32>) {
    if !in_window(id) {
        return;
    }
    let patch_index = table_row(id.y);
    let col = table_col(id.x);
    let quarter = params.dim / 4u;
    // Quarters: sin x, cos x, sin y, cos y.
    let coordinate = select(patch_index % params.grid_w, patch_index / params.grid_w, col >= 2u * quarter);
    let k = col % quarter;
    let sc = sin_cos_turns(turns(coordinate, constants[2u * k], constants[2u * k + 1u]));
    write_real(output_index(id.x, id.y, 0u), select(sc.x, sc.y, (col / quarter) % 2u == 1u));
}
