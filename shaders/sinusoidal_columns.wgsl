// Which frequency each column of a sinusoidal table holds (shared by sinusoidal.wgsl and
// sinusoidal_wide.wgsl). flags bit 0: split layout; bit 1: the cosine first.

// The frequency of a column, and 1 where the column holds its cosine.
fn sinusoidal_column(col: u32) -> vec2<u32> {
    let pairs = params.dim / 2u;
    let cos_first = (params.flags >> 1u) & 1u;
    if (params.flags & 1u) != 0u {
        return vec2<u32>(col % pairs, select(0u, 1u, col >= pairs) ^ cos_first);
    }
    return vec2<u32>(col / 2u, (col & 1u) ^ cos_first);
}
