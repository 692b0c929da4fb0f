// Relative position indices, written as i32 bits.

// T5 buckets (i32 bits). dim: buckets per direction; extra: max_exact; grid_w: count of
// thresholds. constants[b], for b < count, is the smallest distance whose bucket within a
// direction is max_exact + b (found on the CPU with Hugging Face's float32 arithmetic;
// 0xffffffff where no distance reaches it). flags bit 0: bidirectional.
@compute @workgroup_size(16, 16, 1)
fn t5_buckets(@builtin(global_invocation_id) id: vec3<u32>) {
    if !in_window(id) {
        return;
    }
    let relative = i32(table_col(id.x)) - i32(table_row(id.y));
    var bucket = 0u;
    var distance: u32;
    if (params.flags & 1u) != 0u {
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
        // The largest b with constants[b] <= distance; constants[0] = max_exact.
        var low = 0u;
        var high = params.grid_w;
        while high - low > 1u {
            let middle = (low + high) / 2u;
            if constants[middle] <= distance {
                low = middle;
            } else {
                high = middle;
            }
        }
        bucket += max_exact + low;
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
