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

// sum_i cos(k w_i) for the offset k between two rows: the dot product of their encodings.
fn dot_at_offset(k: i32) -> f32 {
    let distance = u32(abs(k));
    let pairs = params.dim / 2u;
    // Kahan summation keeps the sum of dim/2 cosines to a few ulps.
    var sum = 0.0;
    var carry = 0.0;
    for (var i = 0u; i < pairs; i++) {
        let term = sin_cos_turns(turns(distance, constants[2u * i], constants[2u * i + 1u])).y - carry;
        let next = sum + term;
        carry = (next - sum) - term;
        sum = next;
    }
    return sum;
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

// similarity, first pass: S(k) for offsets k = extra_offset + x, into the output buffer.
@compute @workgroup_size(256, 1, 1)
fn sinusoidal_offsets(@builtin(global_invocation_id) id: vec3<u32>) {
    if id.x >= params.cols {
        return;
    }
    write_real(id.x, dot_at_offset(i32(id.x) + bitcast<i32>(params.extra)));
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
