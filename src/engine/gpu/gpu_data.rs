//! Data shared with the shaders, laid out as WGSL lays it out.

use crate::encoding::exact_angle::{DoubleF64, TurnsPerStep, inv_two_pi_bit};
use bytemuck::{Pod, Zeroable};

/// Keep in sync with `KernelParams` in shaders/common/kernel.wgsl.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, Pod, Zeroable)]
pub struct KernelParams {
    pub row_start: u32,
    pub row_step: u32,
    pub rows: u32,
    pub col_start: u32,
    pub col_step: u32,
    pub cols: u32,
    pub head_start: u32,
    pub flags: u32,
    pub position_start: u32,
    pub dim: u32,
    pub grid_w: u32,
    pub extra: u32,
    pub scalar0: f32,
    pub scalar1: f32,
    /// Step between the heads of a window.
    pub head_step: u32,
    pub _pad1: u32,
}

/// A frequency in radians per step as a 64-bit fixed-point fraction of a turn per step,
/// `(high word, low word)`: the form in which the shaders reduce angles exactly.
pub fn turns_per_step(radians: f64) -> [u32; 2] {
    TurnsPerStep::of(DoubleF64::from_f64(radians)).words()
}

/// An f64 as two f32 whose sum carries about 48 bits: `(hi, lo)` bit patterns.
pub fn split_f64(value: f64) -> [u32; 2] {
    let hi = value as f32;
    let lo = (value - f64::from(hi)) as f32;
    [hi.to_bits(), lo.to_bits()]
}

/// Per column for the torch-f32 kernels: the f32 frequency's bits, then the 96-bit
/// `frac(2^e / 2π)` (three words, most significant first) where the frequency is
/// `m * 2^e` with `m` its 24-bit significand. Keep in sync with shaders/common/torch_f32.wgsl.
pub fn torch_f32_constants(frequencies: &[f64]) -> Vec<u32> {
    frequencies
        .iter()
        .flat_map(|&w| {
            let bits = (w as f32).to_bits();
            let exponent = i64::from((bits >> 23) & 0xff) - 127 - 23;
            // Bit j (weight 2^-j) of frac(2^e · (1/2π)) is bit j + e of 1/(2π).
            let mut words = [0u32; 3];
            for j in 1..=96i64 {
                let bit = inv_two_pi_bit(j + exponent);
                let index = (j - 1) as usize;
                words[index / 32] |= bit << (31 - index % 32);
            }
            [bits, words[0], words[1], words[2]]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_match_the_wgsl_struct_size() {
        // 16 four-byte fields; WGSL's uniform layout gives the same 64 bytes.
        assert_eq!(std::mem::size_of::<KernelParams>(), 64);
    }

    #[test]
    fn turns_are_fixed_point_fractions() {
        // The f64 π is 1.22e-16 below π: exactly, 360 units of 2^-64 short of half a turn
        // (the words of frac(x / 2π) computed in 400-bit arithmetic, truncated).
        assert_eq!(
            turns_per_step(std::f64::consts::PI),
            [0x7fff_ffff, 0xffff_fe98]
        );
        assert_eq!(
            turns_per_step(std::f64::consts::FRAC_PI_2),
            [0x3fff_ffff, 0xffff_ff4c]
        );
        // A full turn and more keeps only the fraction.
        assert_eq!(
            turns_per_step(2.5 * std::f64::consts::TAU),
            [0x7fff_ffff, 0xffff_f8fa]
        );
        let [hi, lo] = turns_per_step(1.0);
        let back = (f64::from(hi) + f64::from(lo) / 4_294_967_296.0) / 4_294_967_296.0;
        assert!((back * std::f64::consts::TAU - 1.0).abs() < 1e-15);
    }

    #[test]
    fn torch_constants_hold_the_fraction_of_two_to_the_e_over_two_pi() {
        // 1.0f32 = 2^23 * 2^-23: g = 2^-23 / 2π.
        let words = torch_f32_constants(&[1.0]);
        assert_eq!(words[0], 1.0f32.to_bits());
        let g = (f64::from(words[1]) + f64::from(words[2]) / 4_294_967_296.0) / 4_294_967_296.0;
        let expected = 2f64.powi(-23) / std::f64::consts::TAU;
        assert!((g - expected).abs() < 1e-19, "{g:e} vs {expected:e}");
        // A frequency above 2^23 keeps only the fraction: 2^24 = 2^23 * 2, g = frac(2 / 2π).
        let words = torch_f32_constants(&[16_777_216.0]);
        let g = f64::from(words[1]) / 4_294_967_296.0;
        assert!((g - 2.0 / std::f64::consts::TAU).abs() < 1e-9);
    }

    #[test]
    fn split_keeps_what_f32_drops() {
        let [hi, lo] = split_f64(0.1);
        let sum = f64::from(f32::from_bits(hi)) + f64::from(f32::from_bits(lo));
        assert!((sum - 0.1).abs() < 1e-15);
    }
}
