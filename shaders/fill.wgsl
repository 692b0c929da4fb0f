// Stores only: every element of the tile set to one bit pattern, with the dispatch shapes of
// the table kernels. `poslab bench` times it over the same tiles as a table's kernel, as the
// ceiling that kernel's writes could reach on this adapter.
@compute @workgroup_size(16, 16, 1)
fn fill_16x16(@builtin(global_invocation_id) id: vec3<u32>) {
    if !in_window(id) {
        return;
    }
    output[output_index(id.x, id.y, id.z)] = params.extra;
}

@compute @workgroup_size(256, 1, 1)
fn fill_256(@builtin(global_invocation_id) id: vec3<u32>) {
    if !in_window(id) {
        return;
    }
    output[output_index(id.x, id.y, id.z)] = params.extra;
}

@compute @workgroup_size(64, 1, 1)
fn fill_64(@builtin(global_invocation_id) id: vec3<u32>) {
    if !in_window(id) {
        return;
    }
    output[output_index(id.x, id.y, id.z)] = params.extra;
}
