// Relative position indices, written as i32 bits.

// T5 buckets. constants: the bucket of each distance below max_exact is the distance itself;
// from there, constants[b] is the smallest distance whose bucket within a direction is
// max_exact + b (thresholds found on the CPU with Hugging Face's float32 arithmetic), for
// b < count = buckets - max_exact. flags bit 0: bidirectional. extra: max_exact.
// scalar fields unused.
@compute @workgroup_size(16, 16, 1)
fn t5_buckets(@builtin(global_invocation_id) id: vec3<u32>) {
    if !in_window(id) {
        return;
    }
    let query = i32(table_row(id.y));
    let key = i32(table_col(id.x));
    let relative = key - query;
    let bidirectional = (params.flags & 1u) != 0u;
    var bucket = 0u;
    var distance: u32;
    if bidirectional {
        // Keys after the query take the upper half of the buckets.
        if relative > 0 {
            bucket = params.dim;
        }
        distance = u32(abs(relative));
    } else {
        distance = u32(max(-relative, 0));
    }
    let max_exact = params.extra;
    if distance < max_exact {
        bucket += distance;
    } else {
        var within = max_exact;
        for (var b = 1u; b < params.grid_w; b++) {
            if distance >= constants[b] {
                within = max_exact + b;
            }
        }
        bucket += within;
    }
    output[output_index(id.x, id.y, 0u)] = bucket;
}

// Shaw et al.: clip(key - query, -K, K) + K with K = extra.
@compute @workgroup_size(16, 16, 1)
fn relative_clip(@builtin(global_invocation_id) id: vec3<u32>) {
    if !in_window(id) {
        return;
    }
    let k = i32(params.extra);
    let relative = i32(table_col(id.x)) - i32(table_row(id.y));
    output[output_index(id.x, id.y, 0u)] = bitcast<u32>(clamp(relative, -k, k) + k);
}
