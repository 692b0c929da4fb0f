// 2D RoPE angles for patches in raster order.

// Axial: constants hold f_k (hi, lo) for k < dim/4; columns k and dim/4 + k use x and y.
@compute @workgroup_size(16, 16, 1)
fn rope_2d_axial(@builtin(global_invocation_id) id: vec3<u32>) {
    if !in_window(id) {
        return;
    }
    let patch_index = table_row(id.y);
    let col = table_col(id.x);
    let quarter = params.dim / 4u;
    let k = col % quarter;
    let coordinate = f32(select(patch_index % params.grid_w, patch_index / params.grid_w, col >= quarter));
    let angle = coordinate * real_constant(2u * k) + coordinate * real_constant(2u * k + 1u);
    write_real(output_index(id.x, id.y, 0u), angle);
}

// Mixed: constants hold theta_x[k] (hi, lo) for every k, then theta_y[k] (hi, lo);
// params.dim is the number of angles n.
@compute @workgroup_size(16, 16, 1)
fn rope_2d_mixed(@builtin(global_invocation_id) id: vec3<u32>) {
    if !in_window(id) {
        return;
    }
    let patch_index = table_row(id.y);
    let k = table_col(id.x);
    let x = f32(patch_index % params.grid_w);
    let y = f32(patch_index / params.grid_w);
    let n = params.dim;
    let along_x = x * real_constant(2u * k) + x * real_constant(2u * k + 1u);
    let along_y = y * real_constant(2u * (n + k)) + y * real_constant(2u * (n + k) + 1u);
    write_real(output_index(id.x, id.y, 0u), along_x + along_y);
}
