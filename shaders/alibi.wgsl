// ALiBi biases. constants: per head, the slope as f32 bits (hi) then the low part.
// flags bit 0 (1-D): causal, -inf where key > query.

fn slope(head: u32) -> f32 {
    return real_constant(2u * head) + real_constant(2u * head + 1u);
}

@compute @workgroup_size(16, 16, 1)
fn alibi_bias(@builtin(global_invocation_id) id: vec3<u32>) {
    if !in_window(id) {
        return;
    }
    let query = table_row(id.y);
    let key = table_col(id.x);
    let index = output_index(id.x, id.y, id.z);
    if (params.flags & 1u) != 0u && key > query {
        output[index] = NEG_INFINITY_BITS;
        return;
    }
    let distance = f32(max(query, key) - min(query, key));
    // 0, not -0, on the diagonal, as the CPU engine writes it.
    write_real(index, select(-slope(params.head_start + id.z * params.head_step) * distance, 0.0, distance == 0.0));
}

// 2D ALiBi between patches in raster order: -slope * euclidean distance.
@compute @workgroup_size(16, 16, 1)
fn alibi_bias_2d(@builtin(global_invocation_id) id: vec3<u32>) {
    if !in_window(id) {
        return;
    }
    let distance = patch_distance(table_row(id.y), table_col(id.x), 0u);
    let value = select(-slope(params.head_start + id.z * params.head_step) * distance, 0.0, distance == 0.0);
    write_real(output_index(id.x, id.y, id.z), value);
}
