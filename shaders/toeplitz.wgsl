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
