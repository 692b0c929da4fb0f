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

// ALiBi as BLOOM and MPT store it, one bias per key: slope * (key - extra), where extra is
// the key whose bias is 0 (0 for BLOOM, seq - 1 for MPT).
@compute @workgroup_size(16, 16, 1)
fn alibi_keys(@builtin(global_invocation_id) id: vec3<u32>) {
    if !in_window(id) {
        return;
    }
    let offset = f32(bitcast<i32>(table_col(id.x)) - bitcast<i32>(params.extra));
    let value = slope(params.head_start + id.z * params.head_step) * offset;
    // 0, not -0, where the key is the reference one, as the CPU engine writes it.
    write_real(output_index(id.x, id.y, id.z), select(value, 0.0, offset == 0.0));
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

// The distances of a block's unmasked cells: how many, their (compensated) sum, the nearest
// and the farthest.
struct DistanceRuns {
    count: f32,
    sum: f32,
    carry: f32,
    near: u32,
    far: u32,
}

// Adds the distances near..=far, one cell each.
fn add_run(runs: ptr<function, DistanceRuns>, near: u32, far: u32) {
    let n = f32(far - near + 1u);
    (*runs).count += n;
    let term = n * (f32(near) + f32(far)) * 0.5 - (*runs).carry;
    let next = (*runs).sum + term;
    (*runs).carry = (next - (*runs).sum) - term;
    (*runs).sum = next;
    (*runs).near = min((*runs).near, near);
    (*runs).far = max((*runs).far, far);
}

// A heatmap of one head where each pixel reduces the unmasked cells it covers, in closed form:
// along a row the distances to keys before (and, symmetric, after) the query are runs of
// consecutive integers. Rows table_row(y) .. min(+ row_step, extra), columns table_col(x) ..
// min(+ col_step, grid_w); flags bits 1-2: 0 mean, 1 min, 2 max (Reduce::code).
// Keep in sync with alibi::block_distances.
@compute @workgroup_size(16, 16, 1)
fn alibi_bias_reduced(@builtin(global_invocation_id) id: vec3<u32>) {
    if !in_window(id) {
        return;
    }
    let causal = (params.flags & 1u) != 0u;
    let mode = (params.flags >> 1u) & 3u;
    let r0 = table_row(id.y);
    let r1 = min(r0 + params.row_step, params.extra);
    let c0 = table_col(id.x);
    let c1 = min(c0 + params.col_step, params.grid_w);
    var runs = DistanceRuns(0.0, 0.0, 0.0, 4294967295u, 0u);
    for (var i = r0; i < r1; i++) {
        // Keys at or before the query.
        let end = min(c1, i + 1u);
        if c0 < end {
            add_run(&runs, i - (end - 1u), i - c0);
        }
        // Keys after the query: masked in causal mode.
        let begin = max(c0, i + 1u);
        if !causal && begin < c1 {
            add_run(&runs, begin - i, c1 - 1u - i);
        }
    }
    let count = runs.count;
    let sum = runs.sum;
    let near = runs.near;
    let far = runs.far;
    let index = output_index(id.x, id.y, 0u);
    if count == 0.0 {
        output[index] = NEG_INFINITY_BITS;
        return;
    }
    var distance = sum / count;
    if mode == 1u {
        distance = f32(far);
    } else if mode == 2u {
        distance = f32(near);
    }
    write_real(index, select(-slope(params.head_start) * distance, 0.0, distance == 0.0));
}
