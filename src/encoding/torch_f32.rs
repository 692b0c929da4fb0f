//! What PyTorch computes in float32, emulated: the error a real model's tables carry.
//!
//! PyTorch builds RoPE and sinusoidal tables as `torch.outer(pos.float(), inv_freq)` in float32:
//! the frequency is a float32, the position is rounded to float32, and their product is rounded
//! to float32 once; `sin`/`cos` of that float32 angle are then accurate. At position 4096 the
//! angle alone is off by up to 2.4e-4 rad from the exact one.

/// Whether a table is exact (f64) or as PyTorch's float32 computes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Arithmetic {
    /// f64 angles and values: the exact table.
    #[default]
    Exact,
    /// Angles rounded to f32 once, as torch.outer(pos, inv_freq) in float32.
    #[value(name = "torch-f32")]
    TorchF32,
}

/// The float32 angle `f32(position) * f32(frequency)`, rounded once.
pub fn angle(position: u64, frequency: f64) -> f32 {
    (position as f32) * (frequency as f32)
}

/// sin and cos of a float32 angle, each rounded to float32.
pub fn sin_cos(angle: f32) -> (f32, f32) {
    let (sin, cos) = f64::from(angle).sin_cos();
    (sin as f32, cos as f32)
}

/// The pair `(a, b)` rotated by a float32 angle in float32 arithmetic: `(a cos - b sin,
/// a sin + b cos)` with each product rounded, as Llama's complex product and Hugging Face's
/// `q * cos + rotate_half(q) * sin` compute it.
pub fn rotate_pair(a: f64, b: f64, angle: f32) -> (f64, f64) {
    let (sin, cos) = sin_cos(angle);
    let (a, b) = (a as f32, b as f32);
    (f64::from(a * cos - b * sin), f64::from(a * sin + b * cos))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_angle_is_rounded_once_in_f32() {
        // 4097 * f32(0.1): exact product 409.70000610..., nearest f32 409.70001.
        let w = 0.1f32;
        assert_eq!(angle(4097, 0.1), 4097.0f32 * w);
        // Positions above 2^24 round to f32 first, as pos.float() does.
        assert_eq!(angle((1 << 24) + 1, 1.0), 16_777_216.0);
    }
}
