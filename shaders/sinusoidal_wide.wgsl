// The sinusoidal table four columns an invocation, written as one 16-byte store: wide,
// coalesced writes for large tables. In the interleaved layout the four columns are two whole
// pairs, so each sin_cos_turns gives two values (the one-column kernel evaluates it for each).
// Used where the window's columns are consecutive, start at a multiple of 4 and its rows are
// a multiple of 4 long; the same constants and flags as sinusoidal_table.

// Value `k` of a pair's (sin, cos), times the amplitude, as the word written.
fn sinusoidal_word(sc: vec2<f32>, is_cos: u32) -> u32 {
    return bitcast<u32>(params.scalar0 * select(sc.x, sc.y, is_cos == 1u));
}

fn sin_cos_of_pair(position: u32, pair: u32) -> vec2<f32> {
    return sin_cos_turns(turns(position, constants[2u * pair], constants[2u * pair + 1u]));
}

@compute @workgroup_size(16, 16, 1)
fn sinusoidal_table_wide(@builtin(global_invocation_id) id: vec3<u32>) {
    if !in_quad_window(id) {
        return;
    }
    let position = params.position_start + table_row(id.y);
    let first = params.col_start + 4u * id.x;
    var words: vec4<u32>;
    if (params.flags & 1u) == 0u {
        // Interleaved: columns first .. first + 3 are pairs first / 2 and first / 2 + 1.
        let cos_first = (params.flags >> 1u) & 1u;
        let a = sin_cos_of_pair(position, first / 2u);
        let b = sin_cos_of_pair(position, first / 2u + 1u);
        words = vec4<u32>(
            sinusoidal_word(a, cos_first),
            sinusoidal_word(a, 1u - cos_first),
            sinusoidal_word(b, cos_first),
            sinusoidal_word(b, 1u - cos_first),
        );
    } else {
        // Split: four pairs, one value of each.
        for (var k = 0u; k < 4u; k++) {
            let column = sinusoidal_column(first + k);
            words[k] = sinusoidal_word(sin_cos_of_pair(position, column.x), column.y);
        }
    }
    write_quad(id, words);
}
