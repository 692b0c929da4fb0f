// ALiBi biases. constants: per head, the slope as f32 bits (hi) then the low part.
// flags bit 0 (1-D): causal, -inf where key > query. alibi_bias: position_start is the first
// query's position (the last queries of a longer sequence).

fn slope(head: u32) -> f32 {
    return real_constant(2u * head) + real_constant(2u * head + 1u);
}

@compute @workgroup_size(16, 16, 1)
fn alibi_bias(@builtin(global_invocation_id) id: vec3<u32>) {
    if !in_window(id) {
        return;
    }
    let query = params.position_start + table_row(id.y);
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

// The distances of a block's unmasked cells: how many, their sum, the nearest and the
// farthest.
struct DistanceRuns {
    count: f32,
    sum: f32,
    near: u32,
    far: u32,
}

// Adds `count` cells whose distances sum to `sum`, from near to far.
fn add_cells(runs: ptr<function, DistanceRuns>, count: f32, sum: f32, near: u32, far: u32) {
    (*runs).count += count;
    (*runs).sum += sum;
    (*runs).near = min((*runs).near, near);
    (*runs).far = max((*runs).far, far);
}

// k0 + (k0 + 1) + ... + (k0 + n - 1), and the same of squares: sums of positive terms, so
// that f32 loses nothing to cancellation.
fn sum_from(k0: f32, n: f32) -> f32 {
    return n * k0 + n * (n - 1.0) * 0.5;
}
fn squares_from(k0: f32, n: f32) -> f32 {
    return n * k0 * k0 + k0 * n * (n - 1.0) + (n - 1.0) * n * (2.0 * n - 1.0) / 6.0;
}

// A heatmap of one head where each pixel reduces the unmasked cells it covers, in closed form
// whatever the block's size: along a row the distances to keys before (and, symmetric, after)
// the query are runs of consecutive integers, and over the rows of each band (above the
// columns, across them, below them) their counts and sums are sums of k and k^2. Rows
// table_row(y) .. min(+ row_step, extra), columns table_col(x) .. min(+ col_step, grid_w);
// flags bits 1-2: 0 mean, 1 min, 2 max (Reduce::code).
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
    let width = f32(c1 - c0);
    var runs = DistanceRuns(0.0, 0.0, 4294967295u, 0u);
    // Queries before every key: keys after them only, c0 - i ..= c1 - 1 - i.
    var a = r0;
    var b = min(r1, c0);
    if !causal && a < b {
        let n = f32(b - a);
        add_cells(&runs, width * n, width * n * (f32(c0 - a) + f32(c1 - b)) * 0.5, c0 - (b - 1u), c1 - 1u - a);
    }
    // Queries among the keys: 0..=k before (k = i - c0), 1..=t after (t = c1 - 1 - i).
    a = max(r0, c0);
    b = min(r1, c1);
    if a < b {
        let n = f32(b - a);
        let k0 = f32(a - c0);
        add_cells(&runs, sum_from(k0, n) + n, (squares_from(k0, n) + sum_from(k0, n)) * 0.5, 0u, b - 1u - c0);
        let t0 = f32(c1 - b);
        if !causal && c1 - 1u > a {
            add_cells(&runs, sum_from(t0, n), (squares_from(t0, n) + sum_from(t0, n)) * 0.5, 1u, c1 - 1u - a);
        }
    }
    // Queries after every key: keys before them, i - (c1 - 1) ..= i - c0.
    a = max(r0, c1);
    b = r1;
    if a < b {
        let n = f32(b - a);
        add_cells(&runs, width * n, width * n * (f32(a - c1) + f32(b - c0)) * 0.5, a + 1u - c1, b - 1u - c0);
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
