//! How other libraries form a sinusoidal table's frequencies in float32, emulated step by step:
//! diffusers' `get_timestep_embedding` (on PyTorch) and MLX's `SinusoidalPositionalEncoding`.
//!
//! Both round an exponent near `-ln(base)` to float32 before taking its `exp`, so their
//! frequencies sit 10 ulp or more from the exact ones (one ulp of an exponent of 9.2 moves
//! `exp` by about 8 ulp): float32 rounding that the readings around the exact and PyTorch
//! frequencies do not reach. `check` tries each recipe that applies and names the one that
//! reproduces a file.

use crate::encoding::sinusoidal::{SinusoidalParams, Spacing};

/// A library's way of forming the frequencies of a sinusoidal table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrequencyRecipe {
    /// diffusers `get_timestep_embedding`: `exp(-ln(max_period) * arange(half) / (half - shift))`
    /// in float32, `shift` 0 (vaswani spacing) or 1 (t2t).
    Diffusers,
    /// MLX `SinusoidalPositionalEncoding` (`max_freq = 1`, `min_freq = 1/base`):
    /// `exp((1 - arange(half) / (half - 1)) * (ln max - ln min) + ln min)` in float32, with MLX's
    /// own `exp`.
    Mlx,
}

impl FrequencyRecipe {
    pub const ALL: [FrequencyRecipe; 2] = [FrequencyRecipe::Diffusers, FrequencyRecipe::Mlx];

    /// The library and the function whose recipe this is.
    pub fn library_function(self) -> &'static str {
        match self {
            FrequencyRecipe::Diffusers => "diffusers' get_timestep_embedding",
            FrequencyRecipe::Mlx => "MLX's SinusoidalPositionalEncoding",
        }
    }

    /// The recipes that can form `params`' frequencies: diffusers' for either spacing, MLX's
    /// for t2t spacing (its frequencies run from exactly 1 to exactly 1/base).
    pub fn applying_to(params: &SinusoidalParams) -> Vec<FrequencyRecipe> {
        match params.spacing {
            Spacing::Vaswani => vec![FrequencyRecipe::Diffusers],
            Spacing::T2t => vec![FrequencyRecipe::Diffusers, FrequencyRecipe::Mlx],
        }
    }

    /// The float32 frequencies, widened to f64 (exactly), one per pair of `params`.
    pub fn frequencies(self, params: &SinusoidalParams) -> Vec<f64> {
        let pairs = params.dim / 2;
        let t2t = params.spacing == Spacing::T2t;
        let values: Vec<f32> = match self {
            FrequencyRecipe::Diffusers => {
                // `-math.log(max_period) * arange(half, dtype=float32)`: the Python scalar
                // rounded to f32, then the f32 product; then the f32 quotient by `half - shift`.
                let scale = (-params.base.ln()) as f32;
                let divisor = if t2t {
                    pairs.saturating_sub(1).max(1)
                } else {
                    pairs
                } as f32;
                (0..pairs)
                    .map(|i| exp_rounded((scale * i as f32) / divisor))
                    .collect()
            }
            FrequencyRecipe::Mlx => {
                let (log_max, log_min) = (0.0f64, (1.0 / params.base).ln());
                let span = (log_max - log_min) as f32;
                (0..pairs)
                    .map(|i| {
                        let one_zero = if pairs == 1 {
                            1.0
                        } else {
                            1.0 - i as f32 / (pairs - 1) as f32
                        };
                        mlx_exp(one_zero * span + log_min as f32)
                    })
                    .collect()
            }
        };
        values.into_iter().map(f64::from).collect()
    }

    /// The recipe in words, for a verdict: the library, its function and its parameters.
    pub fn describe(self, params: &SinusoidalParams) -> String {
        let base = params.base;
        match self {
            FrequencyRecipe::Diffusers => format!(
                "{} (max_period={base}, downscale_freq_shift={}): \
                 exp(-ln({base}) * i / (half - shift)) in float32",
                self.library_function(),
                u8::from(params.spacing == Spacing::T2t)
            ),
            FrequencyRecipe::Mlx => format!(
                "{} (min_freq=1/{base}, max_freq=1): \
                 exp((1 - i / (half - 1)) * (ln max - ln min) + ln min) in float32 with MLX's exp",
                self.library_function()
            ),
        }
    }
}

/// `exp` of an f32, correctly rounded to f32 (PyTorch's SLEEF `exp` is within 1 ulp of it; the
/// readings try the neighbours).
fn exp_rounded(x: f32) -> f32 {
    f64::from(x).exp() as f32
}

/// MLX's CPU `exp` (`mlx/backend/cpu/simd/math.h`), bit for bit: `x · log2(e)` rounded to f32,
/// split at the nearest integer, a degree-6 polynomial in the fraction by fused multiply-adds,
/// scaled by the power of two. Up to 8 ulp from the correctly rounded value near `exp(-9.2)`.
pub fn mlx_exp(x: f32) -> f32 {
    if x.is_nan() {
        return x;
    }
    if x > 88.0 {
        return f32::INFINITY;
    }
    if x < -88.0 {
        return 0.0;
    }
    // MLX's literal 1.442695f rounds to the same float as log2(e).
    let scaled = x * std::f32::consts::LOG2_E;
    let whole = (scaled + 0.5).floor();
    let fraction = scaled - whole;
    let mut poly = 1.535_336_2e-4_f32;
    for coefficient in [
        1.339_887_4e-3_f32,
        9.618_437e-3,
        5.550_332_5e-2,
        2.402_264_8e-1,
        6.931_472e-1,
        1.0,
    ] {
        poly = poly.mul_add(fraction, coefficient);
    }
    // 2^whole, built from its exponent bits as MLX builds it (whole is within ±128 here).
    let power = f32::from_bits(((whole as i32 + 127) as u32) << 23);
    power * poly
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mlx_exp_is_near_exp_and_exact_at_zero() {
        assert_eq!(mlx_exp(0.0), 1.0);
        for k in 0..2000 {
            let x = -9.3 + k as f32 * 0.005;
            let exact = f64::from(x).exp();
            let got = f64::from(mlx_exp(x));
            assert!(
                ((got - exact) / exact).abs() < 2e-6,
                "{x}: {got} vs {exact}"
            );
        }
        assert_eq!(mlx_exp(100.0), f32::INFINITY);
        assert_eq!(mlx_exp(-100.0), 0.0);
    }

    #[test]
    fn the_recipes_end_where_their_spacing_says() {
        let params = SinusoidalParams {
            dim: 64,
            base: 2000.0,
            spacing: Spacing::T2t,
            ..SinusoidalParams::default()
        };
        for recipe in FrequencyRecipe::applying_to(&params) {
            let freqs = recipe.frequencies(&params);
            assert_eq!(freqs[0], 1.0, "{recipe:?}");
            // The last frequency within a few float32 ulps of 1/base.
            let last = freqs[31];
            assert!((last * 2000.0 - 1.0).abs() < 1e-5, "{recipe:?}: {last}");
        }
    }
}
