// similarity, second pass: [i, j] = S(j - i), read from the first pass's values in `input`
// (index = (j - i - extra) / grid_w, where extra is the smallest offset in the window and
// grid_w the step between the offsets a strided window meets).

@compute @workgroup_size(16, 16, 1)
fn toeplitz_fill(@builtin(global_invocation_id) id: vec3<u32>) {
    if !in_window(id) {
        return;
    }
    let offset = i32(table_col(id.x)) - i32(table_row(id.y));
    write_real(output_index(id.x, id.y, 0u), input[u32(offset - bitcast<i32>(params.extra)) / params.grid_w]);
}

// similarity binned into square bins, second pass: each pixel's block mean, read from the
// first pass's blocks in `input` (see similarity_block_means in sinusoidal.wgsl): its diagonal's
// full block, the last row's or last column's own, or the corner's.
@compute @workgroup_size(16, 16, 1)
fn similarity_block_fill(@builtin(global_invocation_id) id: vec3<u32>) {
    if !in_window(id) {
        return;
    }
    let diagonals = params.rows + params.cols - 1u;
    let last_x = id.x == params.cols - 1u;
    let last_y = id.y == params.rows - 1u;
    let on_diagonal = id.x + params.rows - 1u - id.y;
    let in_last_row = diagonals + id.x;
    let in_last_col = diagonals + params.cols - 1u + id.y;
    let corner = diagonals + params.cols + params.rows - 2u;
    var block = select(on_diagonal, in_last_col, last_x);
    block = select(block, in_last_row, last_y);
    block = select(block, corner, last_x && last_y);
    output[output_index(id.x, id.y, 0u)] = bitcast<u32>(input[block]);
}
