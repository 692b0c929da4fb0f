// The table window, as raw 32-bit words (f32 bits or i32 bits), one an invocation.
@group(0) @binding(3) var<storage, read_write> output: array<u32>;

fn write_real(index: u32, value: f32) {
    output[index] = bitcast<u32>(value);
}
