// Sinusoidal tables. constants: per frequency i, the turns per position as (f_hi, f_lo).
// flags bit 0: split layout (sin in column i, cos in dim/2 + i) instead of interleaved.

// The frequency of a column, and 1 where the column holds its cosine.
fn sinusoidal_column(col: u32) -> vec2<u32> {
    let pairs = params.dim / 2u;
    if (params.flags & 1u) != 0u {
        return vec2<u32>(col % pairs, select(0u, 1u, col >= pairs));
    }
    return vec2<u32>(col / 2u, col & 1u);
}

@compute @workgroup_size(16, 16, 1)
fn sinusoidal_table(@builtin(global_invocation_id) id: vec3<u32>) {
    if !in_window(id) {
        return;
    }
    let column = sinusoidal_column(table_col(id.x));
    let pair = column.x;
    let sc = sin_cos_turns(turns(params.position_start + table_row(id.y), constants[2u * pair], constants[2u * pair + 1u]));
    write_real(output_index(id.x, id.y, 0u), select(sc.x, sc.y, column.y == 1u));
}

// One term of dot_at_offset: cos(distance w_i), if pair i exists.
fn add_cosine(sum: ptr<function, FixedSum>, distance: u32, i: u32) {
    if i < params.dim / 2u {
        fixed_add(sum, sin_cos_turns(turns(distance, constants[2u * i], constants[2u * i + 1u])).y);
    }
}

// sum_i cos(k w_i) for the offset k between two rows: the dot product of their encodings.
fn dot_at_offset(k: i32) -> f32 {
    let distance = u32(abs(k));
    let pairs = params.dim / 2u;
    // Summed exactly in fixed point: the sum of dim/2 cosines is off by their own errors only.
    var sum = FixedSum(0u, 0);
    // 16 terms a pass: see LOOP_PASSES in common/fixed_sum.wgsl (2^19 pairs in 32768 passes).
    for (var i = 0u; i < pairs; i += 16u) {
        add_cosine(&sum, distance, i);
        add_cosine(&sum, distance, i + 1u);
        add_cosine(&sum, distance, i + 2u);
        add_cosine(&sum, distance, i + 3u);
        add_cosine(&sum, distance, i + 4u);
        add_cosine(&sum, distance, i + 5u);
        add_cosine(&sum, distance, i + 6u);
        add_cosine(&sum, distance, i + 7u);
        add_cosine(&sum, distance, i + 8u);
        add_cosine(&sum, distance, i + 9u);
        add_cosine(&sum, distance, i + 10u);
        add_cosine(&sum, distance, i + 11u);
        add_cosine(&sum, distance, i + 12u);
        add_cosine(&sum, distance, i + 13u);
        add_cosine(&sum, distance, i + 14u);
        add_cosine(&sum, distance, i + 15u);
    }
    return fixed_value(sum);
}

// dot-decay: one row of values PE[anchor] . PE[j]; params.extra is the anchor row.
@compute @workgroup_size(256, 1, 1)
fn sinusoidal_dot_decay(@builtin(global_invocation_id) id: vec3<u32>) {
    if id.x >= params.cols {
        return;
    }
    let j = table_col(id.x);
    write_real(id.x, dot_at_offset(i32(j) - i32(params.extra)));
}

// similarity, first pass: S(k) for offsets k = extra + x * grid_w, into the output buffer (a
// strided window meets only every grid_w-th offset).
@compute @workgroup_size(256, 1, 1)
fn sinusoidal_offsets(@builtin(global_invocation_id) id: vec3<u32>) {
    if id.x >= params.cols {
        return;
    }
    write_real(id.x, dot_at_offset(i32(id.x * params.grid_w) + bitcast<i32>(params.extra)));
}

// The same table as torch computes it in float32 (constants in the torch_f32 layout).
@compute @workgroup_size(16, 16, 1)
fn sinusoidal_table_torch(@builtin(global_invocation_id) id: vec3<u32>) {
    if !in_window(id) {
        return;
    }
    let column = sinusoidal_column(table_col(id.x));
    let sc = sin_cos_turns_64(torch_turns(params.position_start + table_row(id.y), column.x));
    write_real(output_index(id.x, id.y, 0u), select(sc.x, sc.y, column.y == 1u));
}

// sin(x)/x for |x| < 1 (Taylor series to x^10; truncation below 2e-10).
fn sinc_small(x: f32) -> f32 {
    let z = x * x;
    return 1.0 + z * (-1.6666667e-1 + z * (8.3333333e-3 + z * (-1.9841270e-4 + z * (2.7557319e-6 + z * -2.5052108e-8))));
}

// The mean of sin (or cos) of p w over the n positions first, first + 1, ...: the sum of
// sin(a + k w) over k < n is sin(a + (n-1) w/2) sin(n w/2) / sin(w/2), so one evaluation stands
// for the whole run however long it is. w = 2 pi (f_hi + f_lo / 2^32) / 2^32.
fn run_mean(first: u32, n: u32, pair: u32, is_cos: bool) -> f32 {
    let f_hi = constants[2u * pair];
    let f_lo = constants[2u * pair + 1u];
    // Half the frequency, for the centre first + (n-1)/2 and the half angles.
    let h_hi = f_hi >> 1u;
    let h_lo = (f_lo >> 1u) | (f_hi << 31u);
    let centre = sin_cos_turns(turns(first, f_hi, f_lo) + turns(n - 1u, h_hi, h_lo));
    let value = select(centre.x, centre.y, is_cos);
    if n == 1u {
        return value;
    }
    // Every bin but the last holds row_step rows: its ratio was computed in f64 beforehand
    // (after the frequencies, one per pair), which leaves one sin/cos per pixel and column.
    if n == params.row_step {
        return bitcast<f32>(constants[params.dim + pair]) * value;
    }
    // x = w/2 in radians, to f32's relative precision however small it is.
    let x = (f32(f_hi) + f32(f_lo) * 2.3283064e-10) * (TAU / 2.0 / 4294967296.0);
    let big_x = f32(n) * x;
    var ratio: f32;
    if big_x < 1.0 {
        ratio = sinc_small(big_x) / sinc_small(x);
    } else {
        // sin(n w/2) from the exactly reduced angle; n sin(w/2) >= about 1 here.
        ratio = sin_cos_turns(turns(n, h_hi, h_lo)).x / (big_x * sinc_small(x));
    }
    return ratio * value;
}

// A heatmap of the table where each pixel is the mean of the cells it covers: rows
// table_row(y) .. min(+ row_step, extra) and columns table_col(x) .. min(+ col_step, grid_w).
@compute @workgroup_size(16, 16, 1)
fn sinusoidal_table_mean(@builtin(global_invocation_id) id: vec3<u32>) {
    if !in_window(id) {
        return;
    }
    let row0 = table_row(id.y);
    let n = min(row0 + params.row_step, params.extra) - row0;
    let col0 = table_col(id.x);
    let col_end = min(col0 + params.col_step, params.grid_w);
    var sum = 0.0;
    for (var c = col0; c < col_end; c++) {
        let column = sinusoidal_column(c);
        sum += run_mean(params.position_start + row0, n, column.x, column.y == 1u);
    }
    write_real(output_index(id.x, id.y, 0u), sum / f32(col_end - col0));
}
