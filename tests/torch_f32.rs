//! The torch-f32 arithmetic: what PyTorch's float32 tables hold. The CPU emulation against
//! numbers NumPy computed the way torch does, the GPU against the CPU emulation (bit for bit;
//! a rotation within the contract's bound), and both against the exact tables, off by what float32 rounding predicts.

mod common;

use common::{gpu, real};
use poslab::encoding::PairLayout;

use ndarray::Array2;

use poslab::check::Tolerance;
use poslab::check::identify::identify;
use poslab::encoding::rope::{CachePart, RopeParams};
use poslab::encoding::sinusoidal::{FirstOfPair, SinusoidalParams, Spacing};
use poslab::encoding::torch_f32::Arithmetic;
use poslab::engine::{Strided, TableSpec, Window, cpu};
use poslab::import::StoredFloat;

fn torch_kinds() -> Vec<TableSpec> {
    let q = Array2::from_shape_fn((40, 16), |(r, c)| {
        ((r * 13 + c * 7) % 19) as f64 / 9.5 - 1.0
    });
    let cache = |layout, part, freqs| TableSpec::RopeCache {
        params: RopeParams {
            seq: 70,
            dim: 24,
            base: 500_000.0,
            start: 65_000,
        },
        freqs,
        layout,
        part,
    };
    vec![
        cache(PairLayout::Half, CachePart::Cos, common::llama3(None)),
        cache(
            PairLayout::Interleaved,
            CachePart::Sin,
            common::yarn(Some(16)),
        ),
        TableSpec::RopeApply {
            input: Array2::from_shape_fn((30, 20), |(r, c)| {
                ((r * 7 + c * 3) % 11) as f64 / 5.5 - 1.0
            }),
            layout: PairLayout::Half,
            base: 10_000.0,
            start: 40_000,
            freqs: common::yarn(Some(12)),
        },
        // 65,536 values at positions near 2^20, every frequency of a wide table.
        TableSpec::Sinusoidal(SinusoidalParams {
            seq: 64,
            dim: 1024,
            base: 10_000.0,
            start: 1_048_000,
            layout: PairLayout::Interleaved,
            spacing: Spacing::Vaswani,
            ..SinusoidalParams::default()
        }),
        TableSpec::Sinusoidal(SinusoidalParams {
            seq: 200,
            dim: 64,
            base: 10_000.0,
            start: 4000,
            layout: PairLayout::Interleaved,
            spacing: Spacing::Vaswani,
            ..SinusoidalParams::default()
        }),
        TableSpec::Sinusoidal(SinusoidalParams {
            seq: 50,
            dim: 32,
            base: 500.0,
            start: 30_000_000,
            layout: PairLayout::Half,
            spacing: Spacing::T2t,
            // x-transformers' ScaledSinusoidalEmbedding at its initial scale, cos first.
            first: FirstOfPair::Cos,
            amplitude: 32f64.powf(-0.5),
        }),
        TableSpec::RopeInvFreq {
            dim: 96,
            base: 500_000.0,
            seq: 0,
            freqs: Default::default(),
        },
        TableSpec::RopeAngles {
            params: RopeParams {
                seq: 300,
                dim: 32,
                base: 10_000.0,
                start: 4090,
            },
            freqs: Default::default(),
        },
        // Wide heads: every frequency down to base^-1, at a position past 2^20.
        TableSpec::RopeApply {
            input: Array2::from_shape_fn((3, 4096), |(r, c)| {
                ((r * 29 + c * 17) % 23) as f64 / 11.5 - 1.0
            }),
            layout: PairLayout::Interleaved,
            base: 500_000.0,
            start: (1 << 20) + 7,
            freqs: common::llama3(None),
        },
        TableSpec::RopeApply {
            input: q.clone(),
            layout: PairLayout::Half,
            base: 10_000.0,
            start: 8000,
            freqs: Default::default(),
        },
        TableSpec::RopeApply {
            input: q,
            layout: PairLayout::Interleaved,
            base: 500_000.0,
            start: 1 << 20,
            freqs: Default::default(),
        },
    ]
}

// NumPy, as torch computes it: ang = pos.astype(float32)[:, None] * w.astype(float32)[None, :]
// (w = 10000 ** (-arange(0, 8, 2) / 8)); sin/cos of ang in float64, rounded to float32;
// positions 4093..4098, interleaved.
#[rustfmt::skip]
// Written as the f64 values of those float32 results.
const TORCH_4093_D8: [f64; 48] = [
    0.47523194551467896, -0.8798605799674988, 0.7789397835731506, 0.6270987391471863, -0.08917718380689621, -0.9960157871246338, -0.8142335414886475, -0.5805374383926392,
    -0.483608216047287, -0.8752845525741577, 0.8376404047012329, 0.5462220907211304, -0.09913104772567749, -0.9950743913650513, -0.8148136734962463, -0.5797229409217834,
    -0.9978212118148804, -0.06597599387168884, 0.8879896998405457, 0.4598633348941803, -0.1090787947177887, -0.9940330982208252, -0.8153929114341736, -0.5789079070091248,
    -0.5946419835090637, 0.8039906024932861, 0.9294654130935669, 0.36890920996665955, -0.11901184171438217, -0.992892861366272, -0.8159713745117188, -0.5780922770500183,
    0.3552483320236206, 0.9347719550132751, 0.9616531133651733, 0.27426862716674805, -0.12893298268318176, -0.991653323173523, -0.8165490031242371, -0.5772761106491089,
    0.9785249829292297, 0.2061282843351364, 0.9842311143875122, 0.17688730359077454, -0.1388450264930725, -0.9903141260147095, -0.8171258568763733, -0.5764592885971069,
];

#[test]
fn the_cpu_emulation_matches_numpy_computing_as_torch_does() {
    let spec = TableSpec::Sinusoidal(SinusoidalParams {
        seq: 6,
        dim: 8,
        start: 4093,
        ..Default::default()
    });
    let table = real(cpu::compute_arith(&spec, Arithmetic::TORCH).unwrap());
    assert_eq!(table, TORCH_4093_D8.to_vec());
}

#[test]
fn the_gpu_computes_what_the_cpu_emulation_computes() {
    for spec in torch_kinds() {
        let window = Window::all(spec.matrix_shape());
        let strided = Window {
            rows: Strided {
                step: 3,
                ..window.rows
            },
            ..window
        };
        for window in [window, strided] {
            let g = real(
                gpu()
                    .compute_window_arith(&spec, &window, Arithmetic::TORCH)
                    .unwrap(),
            );
            let c = real(cpu::compute_window_arith(&spec, &window, Arithmetic::TORCH).unwrap());
            let Some(bounds) = rotation_bounds(&spec, &window) else {
                // Angles, frequencies, sin and cos (times an attention factor): bit for bit.
                for (k, (&a, &b)) in g.iter().zip(&c).enumerate() {
                    assert_eq!(a as f32, b as f32, "{} [{k}]", spec.kind_name());
                }
                continue;
            };
            // A rotation's products may be fused into a multiply-add on the device, which
            // rounds once where torch rounds twice: the contract's bound, 2 ulp of
            // |x_a cos| + |x_b sin|, element by element.
            let mut equal = 0;
            for (k, (&a, &b)) in g.iter().zip(&c).enumerate() {
                assert!(
                    (a - b).abs() <= 2.0 * f32_ulp(bounds[k]),
                    "{} [{k}]: GPU {a} vs CPU {b} (|x_a cos| + |x_b sin| = {})",
                    spec.kind_name(),
                    bounds[k]
                );
                equal += usize::from(a == b);
            }
            assert!(
                equal * 2 > g.len(),
                "{}: only {equal} of {} equal",
                spec.kind_name(),
                g.len()
            );
        }
    }
}

/// The spacing of f32 values at `v` (that of the smallest normal number below it).
fn f32_ulp(v: f64) -> f64 {
    let v = v.abs().max(f64::from(f32::MIN_POSITIVE));
    2f64.powi(v.log2().floor() as i32 - 23)
}

/// For a rope-apply spec, `|x_a cos| + |x_b sin|` of every element of `window` (C order), from
/// the exact cos/sin caches (attention factor included); `|x|` for dims past the rotary ones.
fn rotation_bounds(spec: &TableSpec, window: &Window) -> Option<Vec<f64>> {
    let TableSpec::RopeApply {
        input,
        layout,
        base,
        start,
        freqs,
    } = spec
    else {
        return None;
    };
    let (rows, dim) = input.dim();
    let params = RopeParams {
        seq: rows,
        dim,
        base: *base,
        start: *start,
    };
    let cache = |part| {
        real(
            cpu::compute(&TableSpec::RopeCache {
                params,
                freqs: freqs.clone(),
                layout: *layout,
                part,
            })
            .unwrap(),
        )
    };
    let (cos, sin) = (cache(CachePart::Cos), cache(CachePart::Sin));
    let rotary = freqs.rotary(dim);
    let mut bounds = Vec::new();
    for row in (window.rows.start..window.rows.end).step_by(window.rows.step) {
        for col in (window.cols.start..window.cols.end).step_by(window.cols.step) {
            let x = input[[row, col]];
            if col >= rotary {
                bounds.push(x.abs());
                continue;
            }
            let partner = match layout {
                PairLayout::Half => (col + rotary / 2) % rotary,
                PairLayout::Interleaved => col ^ 1,
            };
            let k = row * rotary + col;
            bounds.push((x * cos[k]).abs() + (input[[row, partner]] * sin[k]).abs());
        }
    }
    Some(bounds)
}

#[test]
fn torch_tables_differ_from_exact_ones_by_the_float32_rounding_of_the_angle() {
    // Wide enough that many frequencies are near 1, so angles reach past 4096 with few exact
    // products.
    let (start, dim) = (4096u64, 256usize);
    let params = SinusoidalParams {
        seq: 256,
        dim,
        start,
        ..Default::default()
    };
    let spec = TableSpec::Sinusoidal(params);
    let exact = real(cpu::compute(&spec).unwrap());
    let freqs = params.frequencies();
    // torch's float32 frequencies (pow rounded, then the reciprocal: checked against SLEEF and
    // the contract's literal above), which the angle's error starts from.
    let freqs32 = poslab::encoding::torch_f32::frequencies(
        dim / 2,
        dim,
        params.base,
        poslab::encoding::torch_f32::FreqForm::Pow,
        false,
        poslab::encoding::torch_f32::AVX2_BLOCK,
    );
    for torch in [
        real(cpu::compute_arith(&spec, Arithmetic::TORCH).unwrap()),
        real(gpu().compute_arith(&spec, Arithmetic::TORCH).unwrap()),
    ] {
        let mut largest_error = 0.0f64;
        let mut largest_predicted = 0.0f64;
        for (k, (t, e)) in torch.iter().zip(&exact).enumerate() {
            let (row, col) = (k / dim, k % dim);
            let position = (start + row as u64) as f64;
            let w = freqs[col / 2];
            // The angle's error: f32(p) * w32 rounded to f32, against p * w.
            let angle32 = f64::from((position as f32) * freqs32[col / 2]);
            let predicted = (angle32 - position * w).abs();
            assert!(
                (t - e).abs() <= predicted + 2e-7,
                "[{row}, {col}]: {t} vs {e}"
            );
            largest_error = largest_error.max((t - e).abs());
            largest_predicted = largest_predicted.max(predicted);
        }
        // Past 4096 the f32 product alone rounds by up to 2.4e-4 rad (more with f32(w)'s own
        // rounding times p), and the tables show it.
        assert!(
            largest_predicted > 2e-4 && largest_predicted < 4e-4,
            "{largest_predicted}"
        );
        assert!(
            largest_error > 0.5 * largest_predicted,
            "{largest_error} vs {largest_predicted}"
        );
    }
}

#[test]
fn only_tables_built_from_angles_have_a_torch_mode() {
    let spec = common::every_kind()
        .into_iter()
        .find(|s| matches!(s, TableSpec::Alibi { .. }))
        .unwrap();
    assert!(cpu::compute_arith(&spec, Arithmetic::TORCH).is_err());
    assert!(gpu().compute_arith(&spec, Arithmetic::TORCH).is_err());
}

// SLEEF itself, the library PyTorch's vectorised CPU kernels call, on this machine's Debian
// package (libsleef3 3.5.1, the AVX2 build torch's AVX2 kernels use):
//   gcc -O2 -mavx2 -mfma dump.c -lsleef, with for each (x, y):
//   _mm256_storeu_ps(out, Sleef_powf8_u10avx2(_mm256_set1_ps(x), _mm256_set1_ps(y)));
//   _mm256_storeu_ps(out, Sleef_expf8_u10avx2(_mm256_set1_ps(d)));
// Each of these differs by one ulp from the correctly rounded result (NumPy's float64 result
// rounded to float32), so an implementation that rounds correctly fails here. The port was
// also compared with that library on 2.5 million pow and 18 million exp arguments (every
// 2i/R for R up to 1024 at 17 bases, the exp arguments of both frequency forms up to
// d = 2048, and random ones): no bit differed.
const SLEEF_POW: [(f32, u32, u32); 6] = [
    (10_000.0, 0x3f5e_0000, 0x4537_eba2), // y = 111/128
    (500_000.0, 0x3f1c_71c7, 0x453d_ecfe),
    (500_000.0, 0x3ec8_590b, 0x4329_d637),
    (1_000_000.0, 0x3e92_4925, 0x424f_2dd5),
    (1_000_000.0, 0x3e67_39ce, 0x41b5_1ab0),
    // The contract's literal: 10000 ** f32(40/96) is 46.4158821 in torch.
    (10_000.0, 0x3ed5_5555, 0x4239_a9dd),
];
const SLEEF_EXP: [(u32, u32); 3] = [
    (0xc044_7cbd, 0x3d3e_1e96),
    (0xc0eb_c8e3, 0x3a25_66d4),
    (0xc0a8_6aeb, 0x3ba9_b896),
];

#[test]
fn pow_and_exp_are_sleefs_bit_for_bit() {
    use poslab::encoding::torch_f32::sleef;
    for (x, y, expected) in SLEEF_POW {
        let y = f32::from_bits(y);
        assert_eq!(
            sleef::pow(x, y).to_bits(),
            expected,
            "pow({x}, {y}) should be {}",
            f32::from_bits(expected)
        );
    }
    assert_eq!(f32::from_bits(0x3ed5_5555), 40.0f32 / 96.0);
    assert_eq!(format!("{:.7}", f32::from_bits(0x4239_a9dd)), "46.4158821");
    for (d, expected) in SLEEF_EXP {
        assert_eq!(
            sleef::exp(f32::from_bits(d)).to_bits(),
            expected,
            "exp({d:#x})"
        );
    }
}

#[test]
fn inverse_frequencies_are_rounded_twice_as_torch_rounds_them() {
    use poslab::encoding::torch_f32::{AVX2_BLOCK, FreqForm, frequencies};
    // The contract's literal: R = 128, base 10000, inv_freq[7] is 0x3ebaf81b in torch (the
    // exact value rounded once is 0x3ebaf81a), and 19 of the 64 frequencies differ by one ulp
    // from the exact ones rounded once.
    let theta = frequencies(64, 128, 10_000.0, FreqForm::Pow, false, AVX2_BLOCK);
    assert_eq!(theta[7].to_bits(), 0x3eba_f81b);
    let exact_once = |i: usize| (10_000f64.powf(-((2 * i) as f64) / 128.0)) as f32;
    assert_eq!(exact_once(7).to_bits(), 0x3eba_f81a);
    let differing = (0..64).filter(|&i| theta[i] != exact_once(i)).count();
    assert_eq!(differing, 19);
    // Through the table kind, on both engines.
    let spec = TableSpec::RopeInvFreq {
        dim: 128,
        base: 10_000.0,
        seq: 0,
        freqs: Default::default(),
    };
    for table in [
        cpu::compute_arith(&spec, Arithmetic::TORCH).unwrap(),
        gpu().compute_arith(&spec, Arithmetic::TORCH).unwrap(),
    ] {
        assert_eq!((real(table)[7] as f32).to_bits(), 0x3eba_f81b);
    }
}

#[test]
fn whole_vector_blocks_use_sleef_and_the_tail_the_c_library() {
    use poslab::encoding::torch_f32::{AVX2_BLOCK, AVX512_BLOCK, FreqForm, frequencies, sleef};
    // R = 96: 48 frequencies, three AVX2 blocks of 16 (all SLEEF), or one AVX-512 block of 32
    // and a tail of 16 through powf. Exponent 40/96 is index 20: SLEEF's 46.4158821 on AVX2,
    // the C library's (correctly rounded) 46.4158859 on AVX-512's tail... only from index 32.
    let exponent = |i: usize| (2 * i) as f32 / 96.0;
    let avx2 = frequencies(48, 96, 10_000.0, FreqForm::Pow, false, AVX2_BLOCK);
    let avx512 = frequencies(48, 96, 10_000.0, FreqForm::Pow, false, AVX512_BLOCK);
    for i in 0..48 {
        let by_sleef = 1.0 / sleef::pow(10_000.0, exponent(i));
        let by_libm = 1.0 / 10_000f32.powf(exponent(i));
        assert_eq!(avx2[i], by_sleef, "AVX2, index {i}");
        assert_eq!(
            avx512[i],
            if i < 32 { by_sleef } else { by_libm },
            "AVX-512, index {i}"
        );
    }
    // The exp form: exp(2i * f32(-(ln(10000) / 512))), no reciprocal.
    let exp_form = frequencies(256, 512, 10_000.0, FreqForm::Exp, false, AVX2_BLOCK);
    let scale = (-(10_000f64.ln() / 512.0)) as f32;
    for (i, &w) in exp_form.iter().enumerate() {
        assert_eq!(w, sleef::exp((2 * i) as f32 * scale), "exp form, index {i}");
    }
}

#[test]
fn alibi_slopes_are_blooms_and_mpts_float32_powers() {
    use poslab::encoding::torch_f32::{AVX2_BLOCK, bloom_slopes, mpt_slopes};
    // BLOOM at 16 heads: base = f32(2^-0.5), slopes base^1 .. base^16 from torch.pow; each
    // within an ulp of that f32 base raised exactly (in f64) and rounded once.
    let base = 2f64.powf(-0.5) as f32;
    assert_eq!(base.to_bits(), 0x3f35_04f3);
    let slopes = bloom_slopes(16, AVX2_BLOCK);
    let mut off_exact = 0;
    for (k, &m) in slopes.iter().enumerate() {
        let power = f64::from(base).powi(k as i32 + 1) as f32;
        let ulps = (m.to_bits() as i64 - power.to_bits() as i64).abs();
        assert!(ulps <= 1, "head {k}: {m} vs {power}");
        // The f32 base's own rounding shows against the exact slopes 2^(-(k+1)/2).
        off_exact += usize::from(f64::from(m) != 2f64.powf(-((k + 1) as f64) / 2.0));
    }
    assert!(off_exact > 4, "{off_exact}");
    // Powers of two stay exact, and 12 heads take 8 then the odd powers of the next base.
    assert_eq!(bloom_slopes(8, AVX2_BLOCK)[2], 0.125);
    let twelve = bloom_slopes(12, AVX2_BLOCK);
    assert_eq!(twelve.len(), 12);
    assert_eq!(twelve[8], 2f64.powf(-0.5) as f32);
    // MPT: 1 / 2^(k * 8 / n), reordered for head counts that are not powers of two.
    assert_eq!(mpt_slopes(8, AVX2_BLOCK)[0], 0.5);
    assert_eq!(mpt_slopes(12, AVX2_BLOCK)[..2], [0.5, 0.25]);
    // Both engines, as tables.
    let spec = TableSpec::AlibiKeys {
        heads: 16,
        seq: 30,
        form: poslab::encoding::alibi::AlibiForm::Bloom,
        head: None,
    };
    let (c, g) = (
        real(cpu::compute_arith(&spec, Arithmetic::TORCH).unwrap()),
        real(gpu().compute_arith(&spec, Arithmetic::TORCH).unwrap()),
    );
    assert_eq!(c, g, "the same f32 products on both engines");
    assert_eq!(c[29], f64::from(slopes[0] * 29.0));
}

/// PyTorch's x86 wheels take `exp` from MKL, not from SLEEF: the Annotated Transformer's
/// `div_term = torch.exp(torch.arange(0, 512, 2) * -(math.log(10000.0) / 512))`, printed by
/// torch 2.15 (an AVX-512 machine), differs from SLEEF's in these 27 of its 256 frequencies
/// (index, float32 bits).
const TORCH_MKL_DIV_TERM: [(usize, u32); 27] = [
    (24, 0x3ed7e89b),
    (26, 0x3ec8eb23),
    (28, 0x3ebaf81b),
    (31, 0x3ea7d6fd),
    (33, 0x3e9c2fe1),
    (35, 0x3e9157e1),
    (47, 0x3e3cc439),
    (52, 0x3e1db03f),
    (65, 0x3dc5900d),
    (66, 0x3dbe94c7),
    (67, 0x3db7d8a7),
    (87, 0x3d330deb),
    (88, 0x3d2cba15),
    (106, 0x3cb4c691),
    (112, 0x3c91ad39),
    (133, 0x3c08dda3),
    (140, 0x3bd4ca15),
    (168, 0x3b1b690d),
    (178, 0x3ad8e675),
    (182, 0x3abbd3eb),
    (202, 0x3a36ee9d),
    (212, 0x39ff4fad),
    (216, 0x39dd1721),
    (224, 0x39a5cb61),
    (227, 0x3994d4dd),
    (238, 0x394860bf),
    (247, 0x3910f3c5),
];

/// Values of that table (`pe[p, 0::2] = sin(p * div_term)`, `pe[p, 1::2] = cos(...)`, 5000
/// positions) as torch 2.15 printed them: (row, column, float32 bits).
const TORCH_ANNOTATED_VALUES: [(usize, usize, u32); 4] = [
    (4999, 0, 0xbf29f899),
    (4974, 8, 0xbe39f830),
    (4999, 511, 0x3f5e6380),
    (1234, 101, 0xbf7ffff9),
];

fn annotated(seq: usize) -> TableSpec {
    TableSpec::Sinusoidal(SinusoidalParams {
        seq,
        dim: 512,
        ..Default::default()
    })
}

/// A sin/cos table in float32 from the float32 frequencies `freqs` (one per pair): angles
/// `f32(p) * w` rounded once, sin and cos rounded from f64, sin and cos of a pair side by side
/// (`interleaved`) or in two halves.
fn float32_table(seq: usize, freqs: &[f32], interleaved: bool) -> Array2<f64> {
    let pairs = freqs.len();
    Array2::from_shape_fn((seq, 2 * pairs), |(p, c)| {
        let (pair, cos) = if interleaved {
            (c / 2, c % 2 == 1)
        } else {
            (c % pairs, c >= pairs)
        };
        let angle = f64::from(p as f32 * freqs[pair]);
        f64::from(if cos { angle.cos() } else { angle.sin() } as f32)
    })
}

/// The Annotated Transformer's table as torch 2.15 on x86 computes it: the emulated SLEEF
/// `exp` frequencies with MKL's 27 others put in.
fn annotated_as_torch(seq: usize) -> Array2<f64> {
    let mode = poslab::encoding::torch_f32::TorchMode {
        form: poslab::encoding::torch_f32::FreqForm::Exp,
        block: poslab::encoding::torch_f32::AVX512_BLOCK,
    };
    let mut freqs: Vec<f32> = poslab::engine::torch_frequencies(&annotated(seq), mode)
        .into_iter()
        .map(|w| w as f32)
        .collect();
    for (i, bits) in TORCH_MKL_DIV_TERM {
        assert_ne!(freqs[i].to_bits(), bits, "SLEEF and MKL differ at {i}");
        freqs[i] = f32::from_bits(bits);
    }
    float32_table(seq, &freqs, true)
}

/// `identify` of a float32 file names `table` with every one of `parts`.
fn assert_identified_f32(table: &Array2<f64>, parts: &[&str]) {
    let identification = identify(
        &table.clone().into_dyn(),
        Tolerance::default(),
        Some(StoredFloat::F32),
    );
    let best = &identification.best().unwrap().description;
    assert!(identification.found(), "{}", identification.report());
    for part in parts {
        assert!(best.contains(part), "'{part}' in {best}");
    }
}

/// `check` of a float32 file passes `table` as float32 from its library's own frequencies.
fn assert_matches_as_own_frequencies(spec: &TableSpec, table: &Array2<f64>) {
    let verdict = f32_verdict(spec, table);
    let report = verdict.report();
    assert!(verdict.matches, "{report}");
    assert!(
        report.contains("from float32 frequencies its library's exp or pow formed")
            && !report.contains("as PyTorch computes"),
        "{report}"
    );
}

fn f32_verdict(spec: &TableSpec, loaded: &Array2<f64>) -> poslab::check::Verdict {
    let reference = cpu::compute(spec).unwrap().into_real();
    poslab::check::verdict(
        spec,
        &reference,
        &loaded.clone().into_dyn(),
        Some(poslab::import::StoredFloat::F32),
        None,
    )
}

/// A float32 table whose frequencies another library formed (PyTorch's MKL `exp` on x86,
/// TensorFlow's or glibc's `exp`, CUDA's `powf`: each a few ulp from PyTorch's SLEEF ones)
/// is float32 rounding, not a mismatch: `check` and `identify` accept it, naming the reading.
/// Frequencies 12 ulp away, a wrong base and one spoilt column are still refused.
#[test]
fn float32_tables_from_another_librarys_frequencies_match() {
    let own = "from float32 frequencies its library's exp or pow formed";
    // The reconstruction is torch's own table: its printed values, to the ulp that MKL's sin
    // and cos may differ by.
    let table = annotated_as_torch(5000);
    for (row, col, bits) in TORCH_ANNOTATED_VALUES {
        let printed = f64::from(f32::from_bits(bits));
        assert!(
            (table[[row, col]] - printed).abs() <= f32_ulp(printed),
            "[{row}, {col}]: {} vs torch's {printed}",
            table[[row, col]]
        );
    }
    let table = annotated_as_torch(3000);
    assert_matches_as_own_frequencies(&annotated(3000), &table);
    assert_identified_f32(
        &table,
        &[
            "interleaved layout, sin first, Vaswani spacing, base 10000, d = 512",
            "positions 0..2999",
            own,
        ],
    );

    // tensor2tensor's get_timing_signal_1d in float32 (as TensorFlow or NumPy run it):
    // exp(i * f32(-ln(10000) / 31)) by glibc, sin then cos in two halves.
    let scale = (-(10_000f64.ln() / 31.0)) as f32;
    let t2t: Vec<f32> = (0..32).map(|i| (i as f32 * scale).exp()).collect();
    let table = float32_table(3000, &t2t, false);
    let spec = TableSpec::Sinusoidal(SinusoidalParams {
        seq: 3000,
        dim: 64,
        layout: PairLayout::Half,
        spacing: Spacing::T2t,
        ..Default::default()
    });
    assert_matches_as_own_frequencies(&spec, &table);
    assert_identified_f32(
        &table,
        &["split layout, sin first, tensor2tensor spacing, base 10000, d = 64"],
    );

    // A Hugging Face cos cache whose inverse frequencies are 3 ulp above torch's CPU ones on
    // every other pair, as CUDA's powf may leave them.
    let cache = TableSpec::RopeCache {
        params: RopeParams {
            seq: 4096,
            dim: 128,
            base: 10_000.0,
            start: 0,
        },
        freqs: Default::default(),
        layout: PairLayout::Half,
        part: CachePart::Cos,
    };
    let cuda: Vec<f32> = poslab::engine::torch_frequencies(
        &cache,
        poslab::encoding::torch_f32::Arithmetic::TORCH_MODE,
    )
    .into_iter()
    .enumerate()
    .map(|(i, w)| f32::from_bits((w as f32).to_bits() + 3 * (i % 2) as u32))
    .collect();
    let halves = float32_table(4096, &cuda, false);
    let cos = halves.slice(ndarray::s![.., 64..]).to_owned();
    let table = ndarray::concatenate(ndarray::Axis(1), &[cos.view(), cos.view()]).unwrap();
    assert_matches_as_own_frequencies(&cache, &table);
    assert_identified_f32(
        &table,
        &[
            "RoPE cos cache, half layout",
            "dim 128",
            "positions 0..4095, base 10000",
            own,
        ],
    );

    // Not float32 rounding: two frequencies 12 ulp off, a wrong base, one column spoilt.
    let mut far: Vec<f32> = poslab::engine::exact_frequencies(&annotated(3000))
        .into_iter()
        .map(|w| w as f32)
        .collect();
    far[40] = f32::from_bits(far[40].to_bits() + 12);
    far[41] = f32::from_bits(far[41].to_bits() - 12);
    let table = float32_table(3000, &far, true);
    assert!(!f32_verdict(&annotated(3000), &table).matches);
    assert!(
        !identify(
            &table.into_dyn(),
            Tolerance::default(),
            Some(StoredFloat::F32)
        )
        .found()
    );
    let table = annotated_as_torch(3000);
    let other_base = TableSpec::Sinusoidal(SinusoidalParams {
        seq: 3000,
        dim: 512,
        base: 10_001.0,
        ..Default::default()
    });
    assert!(!f32_verdict(&other_base, &table).matches);
    let mut spoilt = table;
    spoilt.column_mut(100).mapv_inplace(|v| v + 2e-6);
    assert!(!f32_verdict(&annotated(3000), &spoilt).matches);
}
