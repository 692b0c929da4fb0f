//! What PyTorch computes in float32, emulated: the error a real model's tables carry.
//!
//! PyTorch builds RoPE and sinusoidal tables in float32, one rounded step after another: the
//! frequencies (`1 / base ** (arange(0, R, 2).float() / R)`, or `exp(arange * -(log(base) / d))`),
//! then `torch.outer(pos.float(), inv_freq)`, then `sin`/`cos` of that float32 angle. The
//! frequencies come out of torch's CPU kernels, whose `pow` and `exp` are SLEEF's (see
//! [`sleef`]) on whole vectors and the C library's on the few elements left over; both are
//! reproduced here bit for bit. At position 4096 the angle alone is off by up to 2.4e-4 rad from
//! the exact one. docs/torch-f32.md says what is reproduced and how far CUDA can differ.

pub mod libraries;
pub mod sleef;

/// Whether a table is exact (f64) or as PyTorch's float32 computes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Arithmetic {
    /// f64 angles and values: the exact table.
    #[default]
    Exact,
    /// Every step rounded to f32 as PyTorch's CPU kernels round it.
    TorchF32(TorchMode),
}

impl Arithmetic {
    /// PyTorch's float32 with the frequencies of Hugging Face and Meta, on an AVX2 build.
    pub const TORCH: Arithmetic = Arithmetic::TorchF32(Self::TORCH_MODE);

    /// [`Self::TORCH`]'s way of forming frequencies and slopes.
    pub const TORCH_MODE: TorchMode = TorchMode {
        form: FreqForm::Pow,
        block: AVX2_BLOCK,
    };

    /// Whether this is one of PyTorch's float32 computations.
    pub fn is_torch(self) -> bool {
        matches!(self, Arithmetic::TorchF32(_))
    }
}

/// How PyTorch formed a float32 table: the library's frequency formula and the vector width of
/// the torch build that ran it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TorchMode {
    pub form: FreqForm,
    /// [`AVX2_BLOCK`] or [`AVX512_BLOCK`].
    pub block: usize,
}

impl TorchMode {
    /// Every way a CPU build of torch can have formed the frequencies, most common first.
    pub fn all() -> [TorchMode; 4] {
        [
            (FreqForm::Pow, AVX2_BLOCK),
            (FreqForm::Exp, AVX2_BLOCK),
            (FreqForm::Pow, AVX512_BLOCK),
            (FreqForm::Exp, AVX512_BLOCK),
        ]
        .map(|(form, block)| TorchMode { form, block })
    }

    /// The float32 frequencies, widened to f64 (exactly), for `pairs` pairs of a `dim`-wide
    /// table: see [`frequencies`].
    pub fn frequencies(self, pairs: usize, dim: usize, base: f64, t2t: bool) -> Vec<f64> {
        frequencies(pairs, dim, base, self.form, t2t, self.block)
            .into_iter()
            .map(f64::from)
            .collect()
    }
}

/// How a library forms its frequencies (`--freq-form`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum FreqForm {
    /// `1 / base ** (2i / d)`: Hugging Face, Meta's Llama, timm.
    #[default]
    Pow,
    /// `exp(2i * -(log(base) / d))`: the Annotated Transformer, fairseq, tensor2tensor.
    Exp,
}

/// Elements that torch's CPU elementwise loop hands to its vector kernel at a time: two AVX2
/// vectors of 8 floats. Whole blocks go through SLEEF, the rest through the C library. (An
/// AVX-512 build works in blocks of 32, so its tail can be longer: `check` tries both.)
pub const AVX2_BLOCK: usize = 16;

/// The AVX-512 build's block: two vectors of 16 floats.
pub const AVX512_BLOCK: usize = 32;

/// `op` over `n` elements as torch's CPU kernel applies it: `vector` (SLEEF) on every element
/// of the whole blocks of `block`, `scalar` (the C library) on the tail.
fn elementwise(
    n: usize,
    block: usize,
    vector: impl Fn(usize) -> f32,
    scalar: impl Fn(usize) -> f32,
) -> Vec<f32> {
    let vectorised = n - n % block;
    (0..n)
        .map(|i| if i < vectorised { vector(i) } else { scalar(i) })
        .collect()
}

/// The float32 frequencies a library computes for `pairs` sin/cos pairs of a `dim`-wide
/// encoding in PyTorch on the CPU (`block` elements at a time, [`AVX2_BLOCK`] or
/// [`AVX512_BLOCK`]):
/// - `Pow`, `t2t == false`: `1.0 / (base ** (arange(0, dim, 2).float() / dim))` (HF, Llama, timm);
/// - `Pow`, `t2t == true`: `1.0 / (base ** (arange(pairs).float() / (pairs - 1)))`;
/// - `Exp`, `t2t == false`: `exp(arange(0, dim, 2) * -(math.log(base) / dim))` (the Annotated
///   Transformer);
/// - `Exp`, `t2t == true`: `exp(arange(pairs).float() * -(math.log(base) / (pairs - 1)))`
///   (fairseq).
///
/// Each step is rounded to f32 as torch rounds it: the division and the reciprocal correctly,
/// the Python scalar to f32 before the product, `pow`/`exp` as SLEEF or the C library.
pub fn frequencies(
    pairs: usize,
    dim: usize,
    base: f64,
    form: FreqForm,
    t2t: bool,
    block: usize,
) -> Vec<f32> {
    // Index i's step and the divisor: 2i over dim, or i over max(pairs - 1, 1).
    let (step, divisor) = if t2t {
        (1.0f32, pairs.saturating_sub(1).max(1))
    } else {
        (2.0f32, dim)
    };
    let index = |i: usize| i as f32 * step;
    match form {
        FreqForm::Pow => {
            let exponent = |i: usize| index(i) / divisor as f32;
            pow_elementwise(pairs, block, base, exponent)
                .iter()
                .map(|&p| 1.0 / p)
                .collect()
        }
        FreqForm::Exp => {
            let scale = (-(base.ln() / divisor as f64)) as f32;
            let argument = |i: usize| index(i) * scale;
            elementwise(
                pairs,
                block,
                |i| sleef::exp(argument(i)),
                |i| argument(i).exp(),
            )
        }
    }
}

/// `f32(base) ** exponent(i)` for `n` elements, as torch's CPU `pow` of a Python scalar and a
/// float32 tensor: SLEEF on whole blocks, the C library on the tail.
fn pow_elementwise(n: usize, block: usize, base: f64, exponent: impl Fn(usize) -> f32) -> Vec<f32> {
    let base = base as f32;
    elementwise(
        n,
        block,
        |i| sleef::pow(base, exponent(i)),
        |i| base.powf(exponent(i)),
    )
}

/// ALiBi slopes as Hugging Face BLOOM's `build_alibi_tensor` computes them in float32:
/// `torch.pow(base, arange(1, 1 + c))` with `base = f32(2^(-2^-(log2 c - 3)))` for the
/// largest power of two `c` at most `heads`, then the odd powers of the next base for the
/// heads beyond `c`; each `pow` SLEEF's on whole blocks and the C library's on the tail.
pub fn bloom_slopes(heads: usize, block: usize) -> Vec<f32> {
    let closest = 1usize << heads.ilog2();
    let base_of = |c: usize| 2f64.powf(-(2f64.powf(-((c as f64).log2() - 3.0)))) as f32;
    let powers = |base: f32, exponents: Vec<f32>| {
        elementwise(
            exponents.len(),
            block,
            |i| sleef::pow(base, exponents[i]),
            |i| base.powf(exponents[i]),
        )
    };
    let mut slopes = powers(base_of(closest), (1..=closest).map(|k| k as f32).collect());
    if closest != heads {
        let remaining = closest.min(heads - closest);
        let odd = (0..remaining).map(|k| (2 * k + 1) as f32).collect();
        slopes.extend(powers(base_of(2 * closest), odd));
    }
    slopes
}

/// ALiBi slopes as MPT's `gen_slopes` computes them in float32 (alibi_bias_max 8):
/// `1.0 / torch.pow(2, arange(1, n + 1).float() * (8 / n))` for `n` the next power of two,
/// reordered (odd indices first) and cut to `heads` when `heads` is not one.
pub fn mpt_slopes(heads: usize, block: usize) -> Vec<f32> {
    let padded = heads.next_power_of_two();
    let scale = (8.0 / padded as f64) as f32;
    let exponents: Vec<f32> = (1..=padded).map(|k| k as f32 * scale).collect();
    let slopes: Vec<f32> = pow_elementwise(padded, block, 2.0, |i| exponents[i])
        .into_iter()
        .map(|p| 1.0 / p)
        .collect();
    if padded == heads {
        return slopes;
    }
    slopes
        .iter()
        .skip(1)
        .step_by(2)
        .chain(slopes.iter().step_by(2))
        .take(heads)
        .copied()
        .collect()
}

/// `base ** (arange(0, dim, 2).float() / dim)` for `pairs` pairs: the powers whose
/// reciprocals are Hugging Face's inverse frequencies (YaRN and LongRoPE use them as they are).
pub fn powers(pairs: usize, dim: usize, base: f64, block: usize) -> Vec<f32> {
    pow_elementwise(pairs, block, base, |i| (2 * i) as f32 / dim as f32)
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
/// `q * cos + rotate_half(q) * sin` compute it; `attention` is the factor HF's scalings
/// multiply the cached `cos` and `sin` by (1 for most), rounded into them first.
pub fn rotate_pair(a: f64, b: f64, angle: f32, attention: f32) -> (f64, f64) {
    let (sin, cos) = sin_cos(angle);
    let (sin, cos) = (sin * attention, cos * attention);
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
