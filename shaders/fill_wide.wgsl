// Stores only, four words an invocation as one 16-byte store: the ceiling of the wide kernels
// (and of any kernel: `poslab bench` times it where the table's rows allow, see fill.wgsl).
@compute @workgroup_size(16, 16, 1)
fn fill_wide(@builtin(global_invocation_id) id: vec3<u32>) {
    if !in_quad_window(id) {
        return;
    }
    write_quad(id, vec4<u32>(params.extra));
}
