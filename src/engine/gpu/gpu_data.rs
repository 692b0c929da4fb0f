//! Data shared with the shaders, laid out as WGSL lays it out.

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
    let turns = radians / std::f64::consts::TAU;
    let fraction = turns - turns.floor();
    // fraction < 1 has 53 significant bits, so scaling by 2^64 and truncating is exact.
    let fixed = (fraction * 18_446_744_073_709_551_616.0) as u128;
    let fixed = fixed.min(u64::MAX as u128) as u64;
    [(fixed >> 32) as u32, fixed as u32]
}

/// An f64 as two f32 whose sum carries about 48 bits: `(hi, lo)` bit patterns.
pub fn split_f64(value: f64) -> [u32; 2] {
    let hi = value as f32;
    let lo = (value - f64::from(hi)) as f32;
    [hi.to_bits(), lo.to_bits()]
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
        assert_eq!(turns_per_step(std::f64::consts::PI), [1 << 31, 0]);
        assert_eq!(turns_per_step(std::f64::consts::FRAC_PI_2), [1 << 30, 0]);
        // A full turn and more keeps only the fraction.
        assert_eq!(turns_per_step(2.5 * std::f64::consts::TAU), [1 << 31, 0]);
        let [hi, lo] = turns_per_step(1.0);
        let back = (f64::from(hi) + f64::from(lo) / 4_294_967_296.0) / 4_294_967_296.0;
        assert!((back * std::f64::consts::TAU - 1.0).abs() < 1e-15);
    }

    #[test]
    fn split_keeps_what_f32_drops() {
        let [hi, lo] = split_f64(0.1);
        let sum = f64::from(f32::from_bits(hi)) + f64::from(f32::from_bits(lo));
        assert!((sum - 0.1).abs() < 1e-15);
    }
}
