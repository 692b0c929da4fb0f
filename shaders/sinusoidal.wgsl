// Sinusoidal tables. constants: per frequency i, the turns per position as (f_hi, f_lo).
// flags bit 0: split layout (sin in column i, cos in dim/2 + i) instead of interleaved; bit 1:
// the cosine first (in the pair, or as the first half). scalar0: what every value is multiplied
// by (the amplitude; its square for the dot products of two rows).


@compute @workgroup_size(16, 16, 1)
fn sinusoidal_table(@builtin(global_invocation_id) id: vec3<u32>) {
    if !in_window(id) {
        return;
    }
    let column = sinusoidal_column(table_col(id.x));
    let pair = column.x;
    let sc = sin_cos_turns(turns(params.position_start + table_row(id.y), constants[2u * pair], constants[2u * pair + 1u]));
    write_real(output_index(id.x, id.y, 0u), params.scalar0 * select(sc.x, sc.y, column.y == 1u));
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
    write_real(id.x, params.scalar0 * dot_at_offset(i32(j) - i32(params.extra)));
}

// similarity, first pass: S(k) for offsets k = extra + x * grid_w, into the output buffer (a
// strided window meets only every grid_w-th offset).
@compute @workgroup_size(256, 1, 1)
fn sinusoidal_offsets(@builtin(global_invocation_id) id: vec3<u32>) {
    if id.x >= params.cols {
        return;
    }
    write_real(id.x, params.scalar0 * dot_at_offset(i32(id.x * params.grid_w) + bitcast<i32>(params.extra)));
}

// The same table as torch computes it in float32 (constants in the torch_f32 layout).
@compute @workgroup_size(16, 16, 1)
fn sinusoidal_table_torch(@builtin(global_invocation_id) id: vec3<u32>) {
    if !in_window(id) {
        return;
    }
    let column = sinusoidal_column(table_col(id.x));
    let sc = sin_cos_turns_64(torch_turns(params.position_start + table_row(id.y), column.x));
    // torch's `pe * scale`: the f32 product, rounded once.
    write_real(output_index(id.x, id.y, 0u), params.scalar0 * select(sc.x, sc.y, column.y == 1u));
}

// Pair i's frequency in turns per step, 64-bit fixed point as (high word, low word).
fn frequency_turns(pair: u32) -> vec2<u32> {
    return vec2<u32>(constants[2u * pair], constants[2u * pair + 1u]);
}

// Half a frequency (the lowest bit dropped): the turns of half steps, to a run's centre.
fn half_turns(f: vec2<u32>) -> vec2<u32> {
    return vec2<u32>(f.x >> 1u, (f.y >> 1u) | (f.x << 31u));
}

// p f as a 64-bit fraction of a turn (high word, low word): exact, as turns() is.
fn turns_64(p: u32, f: vec2<u32>) -> vec2<u32> {
    return vec2<u32>(p * f.x + mul_high(p, f.y), p * f.y);
}

fn add_turns(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let lo = a.y + b.y;
    return vec2<u32>(a.x + b.x + select(0u, 1u, lo < a.y), lo);
}

// Pixel rows each invocation of sinusoidal_table_mean computes: from one bin to the next the
// first row's angle grows by the same exact 64-bit amount, so a row costs one sin/cos and a few
// additions. Keep in sync with MEAN_ROWS_PER_INVOCATION in src/engine/gpu/reduce.rs.
const MEAN_ROWS: u32 = 16u;

// A heatmap of the table where each pixel is the mean of the cells it covers: rows
// table_row(y) .. min(+ row_step, extra) and columns table_col(x) .. min(+ col_step, grid_w).
// The mean of sin (or cos) of p w over the n positions first, first + 1, ... is
// sin(a + (n-1) w/2) sin(n w/2) / (n sin(w/2)) with a = first w: one evaluation at the run's
// centre times a ratio that depends on n and the pair only. Every bin but the last holds
// row_step rows, so the constants hold, after the frequencies, each pair's ratio for a full bin
// then for the last bin, computed in f64. No branches: a software adapter runs every branch any
// of its lanes takes, and a short last bin is the same arithmetic with other constants.
@compute @workgroup_size(16, 16, 1)
fn sinusoidal_table_mean(@builtin(global_invocation_id) id: vec3<u32>) {
    let y0 = id.y * MEAN_ROWS;
    if id.x >= params.cols || y0 >= params.rows {
        return;
    }
    let count = min(MEAN_ROWS, params.rows - y0);
    let step = params.row_step;
    let pairs = params.dim / 2u;
    let col0 = table_col(id.x);
    let col_end = min(col0 + params.col_step, params.grid_w);
    var sums = array<f32, MEAN_ROWS>();
    for (var c = col0; c < col_end; c++) {
        let column = sinusoidal_column(c);
        let pair = column.x;
        let is_cos = column.y == 1u;
        let f = frequency_turns(pair);
        let h = half_turns(f);
        let full_ratio = real_constant(params.dim + pair);
        let last_ratio = real_constant(params.dim + pairs + pair);
        let advance = turns_64(step, f);
        var first = turns_64(params.position_start + table_row(y0), f);
        for (var k = 0u; k < count; k++) {
            let row0 = table_row(y0 + k);
            let n = min(row0 + step, params.extra) - row0;
            let centre = add_turns(first, turns_64(n - 1u, h));
            let sc = sin_cos_turns(centre.x);
            sums[k] += select(full_ratio, last_ratio, n != step) * select(sc.x, sc.y, is_cos);
            first = add_turns(first, advance);
        }
    }
    let columns = f32(col_end - col0);
    for (var k = 0u; k < count; k++) {
        write_real(output_index(id.x, y0 + k, 0u), params.scalar0 * (sums[k] / columns));
    }
}

// Blocks each invocation of similarity_block_means sums: consecutive blocks of a group step
// twice the centres' offset by the same amount, so their angles follow by exact 64-bit
// additions. Keep in sync with BLOCKS_PER_INVOCATION in src/engine/gpu/reduce.rs.
const BLOCK_RUN: u32 = 16u;

// t f as a 64-bit fraction of a turn for a signed t: -(|t| f) modulo one turn when t < 0.
fn signed_turns_64(t: i32, f: vec2<u32>) -> vec2<u32> {
    let magnitude = turns_64(u32(abs(t)), f);
    let lo = ~magnitude.y + 1u;
    let negated = vec2<u32>(~magnitude.x + select(0u, 1u, lo == 0u), lo);
    return select(magnitude, negated, t < 0);
}

// similarity, binned into square bins of row_step = col_step cells: the mean of PE[i] . PE[j]
// over each distinct block, into the output buffer. A block's mean is
// sum_i ratio_r(i) ratio_c(i) cos(c w_i), with c the offset between the centres of its columns
// and of its rows and the ratios those of its two bin lengths (see block_dot_mean_with in
// src/encoding/sinusoidal.rs), so pixels along a diagonal share one. The blocks, in groups:
// the full bins of each diagonal x - y = e - (rows - 1), e < rows + cols - 1; the last row of
// pixels but its last (x < cols - 1); the last column but its last (y < rows - 1); the corner.
// extra and grid_w hold the last row and column bins' lengths; the constants, after the
// frequencies, the ratios of a full bin, the last row bin and the last column bin.
@compute @workgroup_size(64, 1, 1)
fn similarity_block_means(@builtin(global_invocation_id) id: vec3<u32>) {
    let diagonals = params.rows + params.cols - 1u;
    // The group of this invocation's run (its size, and its first block among all), and the
    // run's first block within the group.
    var run = id.x;
    var group = 0u;
    var size = diagonals;
    var first_block = 0u;
    for (var next = 1u; next <= 4u; next++) {
        let runs = (size + BLOCK_RUN - 1u) / BLOCK_RUN;
        if group == next - 1u && run >= runs {
            run -= runs;
            first_block += size;
            group = next;
            size = select(select(1u, params.rows - 1u, next == 2u), params.cols - 1u, next == 1u);
        }
    }
    if group == 4u {
        return;
    }
    let first = run * BLOCK_RUN;
    let count = min(BLOCK_RUN, size - first);
    // The pixel (x, y) of the run's first block, and the step of twice the centres' offset.
    let step = i32(params.row_step);
    let last_x = i32(params.cols) - 1;
    let last_y = i32(params.rows) - 1;
    let diagonal = i32(first) - last_y;
    var x = max(diagonal, 0);
    var y = max(-diagonal, 0);
    var twice_step = 2 * step;
    var row_set = 0u;
    var col_set = 0u;
    if group == 1u {
        x = i32(first);
        y = last_y;
        row_set = 1u;
    } else if group == 2u {
        x = last_x;
        y = i32(first);
        col_set = 2u;
        twice_step = -2 * step;
    } else if group == 3u {
        x = last_x;
        y = last_y;
        row_set = 1u;
        col_set = 2u;
    }
    let row_count = select(params.row_step, params.extra, row_set == 1u);
    let col_count = select(params.row_step, params.grid_w, col_set == 2u);
    let offset = i32(params.col_start) + x * step - i32(params.row_start) - y * step;
    let twice_centre = 2 * offset + i32(col_count) - i32(row_count);
    let pairs = params.dim / 2u;
    var sums: array<FixedSum, BLOCK_RUN>;
    for (var i = 0u; i < pairs; i++) {
        let f = frequency_turns(i);
        let h = half_turns(f);
        let ratios = real_constant(params.dim + row_set * pairs + i) * real_constant(params.dim + col_set * pairs + i);
        let advance = signed_turns_64(twice_step, h);
        var angle = signed_turns_64(twice_centre, h);
        for (var k = 0u; k < count; k++) {
            // Through a copy: naga 30's SPIR-V writer fails on a pointer to sums[k].
            var term = sums[k];
            fixed_add(&term, ratios * sin_cos_turns(angle.x).y);
            sums[k] = term;
            angle = add_turns(angle, advance);
        }
    }
    for (var k = 0u; k < count; k++) {
        write_real(first_block + first + k, params.scalar0 * fixed_value(sums[k]));
    }
}
