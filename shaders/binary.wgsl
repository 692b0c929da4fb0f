// The binary code: bit `col` of the position, least significant first, as 0.0 or 1.0.
@compute @workgroup_size(16, 16, 1)
fn binary_table(@builtin(global_invocation_id) id: vec3<u32>) {
    if !in_window(id) {
        return;
    }
    let position = params.position_start + table_row(id.y);
    let bit = table_col(id.x);
    // Positions on the GPU are below 2^32; higher bits are 0.
    var value = 0.0;
    if bit < 32u {
        value = f32((position >> bit) & 1u);
    }
    write_real(output_index(id.x, id.y, 0u), value);
}
