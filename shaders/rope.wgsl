// RoPE. constants for rope_apply and rope_cache: per pair i, the turns per position
// (f_hi, f_lo). constants for rope_angles: per pair i, theta_i as f32 bits (the high part) then
// the low part. For the rotation and cache kernels params.dim is the rotary width R, flags bit 0
// the half layout (pairs (i, i + R/2)) instead of interleaved (2i, 2i+1), scalar0 the attention
// factor cos and sin are multiplied by; rope_apply's input rows are grid_w wide (the dimensions
// from R on pass through); rope_cache's flags bit 1 asks for the sine cache.

// Position of a table row as an f32 sum of two exact parts (positions reach 2^32).
fn position_angle(row: u32, theta_hi: f32, theta_lo: f32) -> f32 {
    let p = params.position_start + row;
    let p_hi = f32(p & 0xffff0000u);
    let p_lo = f32(p & 0xffffu);
    // Largest products first; theta_lo carries the bits of theta_i that f32 drops.
    return p_hi * theta_hi + (p_lo * theta_hi + (p_hi + p_lo) * theta_lo);
}

@compute @workgroup_size(16, 16, 1)
fn rope_angles(@builtin(global_invocation_id) id: vec3<u32>) {
    if !in_window(id) {
        return;
    }
    let pair = table_col(id.x);
    let angle = position_angle(table_row(id.y), real_constant(2u * pair), real_constant(2u * pair + 1u));
    write_real(output_index(id.x, id.y, 0u), angle);
}

// The 1-D tables of per-column constants (rope-inv-freq, alibi-slopes): f32 bits of value hi + lo.
@compute @workgroup_size(256, 1, 1)
fn constants_table(@builtin(global_invocation_id) id: vec3<u32>) {
    if id.x >= params.cols {
        return;
    }
    let i = table_col(id.x);
    write_real(id.x, real_constant(2u * i) + real_constant(2u * i + 1u));
}


// The pair a column belongs to: (pair index, first dimension, second dimension).
fn rope_pair(col: u32) -> vec3<u32> {
    if (params.flags & 1u) != 0u {
        let half_dim = params.dim / 2u;
        let pair = col % half_dim;
        return vec3<u32>(pair, pair, pair + half_dim);
    }
    let pair = col / 2u;
    return vec3<u32>(pair, 2u * pair, 2u * pair + 1u);
}

// Column `col` of the input's local row `y` rotated by the angle whose (sin, cos) is `sc`.
fn rotated(y: u32, col: u32, pair: vec3<u32>, sc: vec2<f32>) -> f32 {
    // The input holds this dispatch's rows only, one after another.
    let a = input[y * params.grid_w + pair.y];
    let b = input[y * params.grid_w + pair.z];
    if col == pair.y {
        return a * sc.y - b * sc.x;
    }
    return a * sc.x + b * sc.y;
}

@compute @workgroup_size(16, 16, 1)
fn rope_apply(@builtin(global_invocation_id) id: vec3<u32>) {
    if !in_window(id) {
        return;
    }
    let col = table_col(id.x);
    if col >= params.dim {
        write_real(output_index(id.x, id.y, 0u), input[id.y * params.grid_w + col]);
        return;
    }
    let pair = rope_pair(col);
    let sc = sin_cos_turns(turns(params.position_start + table_row(id.y), constants[2u * pair.x], constants[2u * pair.x + 1u]));
    write_real(output_index(id.x, id.y, 0u), rotated(id.y, col, pair, sc) * params.scalar0);
}

// A cos or sin cache: column col holds the frequency rope_pair gives it.
@compute @workgroup_size(16, 16, 1)
fn rope_cache(@builtin(global_invocation_id) id: vec3<u32>) {
    if !in_window(id) {
        return;
    }
    let pair = rope_pair(table_col(id.x));
    let sc = sin_cos_turns(turns(params.position_start + table_row(id.y), constants[2u * pair.x], constants[2u * pair.x + 1u]));
    write_real(output_index(id.x, id.y, 0u), select(sc.y, sc.x, cache_holds_sin(table_col(id.x))) * params.scalar0);
}

// Whether a cache's column holds a sine: flags bit 1 for a sin cache, bit 2 for vLLM's
// cos-sin cache (the cosines of every pair, then their sines), bit 3 for both caches whole
// side by side (torchtune's Qwen2 [cos | sin], each R wide).
fn cache_holds_sin(col: u32) -> bool {
    if (params.flags & 8u) != 0u {
        return col >= params.dim;
    }
    if (params.flags & 4u) != 0u {
        return col >= params.dim / 2u;
    }
    return (params.flags & 2u) != 0u;
}

// torch's cache: cos or sin of the f32 angle, rounded, times the f32 attention factor, rounded
// (emb.cos() * attention_scaling).
@compute @workgroup_size(16, 16, 1)
fn rope_cache_torch(@builtin(global_invocation_id) id: vec3<u32>) {
    if !in_window(id) {
        return;
    }
    let pair = rope_pair(table_col(id.x));
    let sc = sin_cos_turns_64(torch_turns(params.position_start + table_row(id.y), pair.x));
    write_real(output_index(id.x, id.y, 0u), select(sc.y, sc.x, cache_holds_sin(table_col(id.x))) * params.scalar0);
}

// torch float32 angles: f32(p) * f32(theta_i), rounded once.
@compute @workgroup_size(16, 16, 1)
fn rope_angles_torch(@builtin(global_invocation_id) id: vec3<u32>) {
    if !in_window(id) {
        return;
    }
    let angle = torch_angle(params.position_start + table_row(id.y), table_col(id.x));
    write_real(output_index(id.x, id.y, 0u), angle);
}

// torch float32 rotation: cos and sin of the f32 angle rounded to f32, then f32 products.
@compute @workgroup_size(16, 16, 1)
fn rope_apply_torch(@builtin(global_invocation_id) id: vec3<u32>) {
    if !in_window(id) {
        return;
    }
    let col = table_col(id.x);
    if col >= params.dim {
        write_real(output_index(id.x, id.y, 0u), input[id.y * params.grid_w + col]);
        return;
    }
    let pair = rope_pair(col);
    // HF multiplies the cached cos and sin by the attention factor, each product rounded.
    let sc = sin_cos_turns_64(torch_turns(params.position_start + table_row(id.y), pair.x)) * params.scalar0;
    write_real(output_index(id.x, id.y, 0u), rotated(id.y, col, pair, sc));
}

// Context extension: 1 where the angle of pair i at distance p, p * f modulo a turn (64-bit
// fixed point: f = constants[4i], constants[4i+1]), lies beyond every angle training reached
// (the 64-bit limit constants[4i+2], constants[4i+3]), else 0.
@compute @workgroup_size(16, 16, 1)
fn rope_unseen(@builtin(global_invocation_id) id: vec3<u32>) {
    if !in_window(id) {
        return;
    }
    let p = table_row(id.y);
    let base = 4u * table_col(id.x);
    let f_lo = constants[base + 1u];
    let lo = p * f_lo;
    let hi = p * constants[base] + mul_high(p, f_lo);
    let limit_hi = constants[base + 2u];
    let beyond = hi > limit_hi || (hi == limit_hi && lo > constants[base + 3u]);
    write_real(output_index(id.x, id.y, 0u), select(0.0, 1.0, beyond));
}
