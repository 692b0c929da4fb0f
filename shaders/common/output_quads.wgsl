// The table window, four 32-bit words at a time: one 16-byte store per invocation, for a
// window whose rows are a multiple of 4 words long (see `Plan::wide` in src/engine/gpu/plan.rs).
@group(0) @binding(3) var<storage, read_write> output: array<vec4<u32>>;

// Whether invocation `id` holds four columns of the window.
fn in_quad_window(id: vec3<u32>) -> bool {
    return id.x < params.cols / 4u && id.y < params.rows;
}

// Columns 4 x .. 4 x + 3 of row `y` of head `z` in the tile.
fn write_quad(id: vec3<u32>, words: vec4<u32>) {
    output[(id.z * params.rows + id.y) * (params.cols / 4u) + id.x] = words;
}
