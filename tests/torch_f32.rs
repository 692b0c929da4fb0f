//! The torch-f32 arithmetic: what PyTorch's float32 tables hold. The CPU emulation against
//! numbers NumPy computed the way torch does, the GPU against the CPU emulation (bit for bit or
//! one f32 ulp), and both against the exact tables, off by what float32 rounding predicts.

mod common;

use std::sync::OnceLock;

use ndarray::Array2;

use poslab::encoding::rope::{RopeLayout, RopeParams};
use poslab::encoding::sinusoidal::{SinusoidalLayout, SinusoidalParams, Spacing};
use poslab::encoding::torch_f32::Arithmetic;
use poslab::engine::gpu::GpuEngine;
use poslab::engine::{Strided, Table, TableSpec, Window, cpu};

fn gpu() -> &'static GpuEngine {
    static ENGINE: OnceLock<GpuEngine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        GpuEngine::new_headless().unwrap_or_else(|e| {
            panic!("GPU tests need an adapter (on Debian: mesa-vulkan-drivers): {e}")
        })
    })
}

fn real(table: Table) -> Vec<f64> {
    match table {
        Table::Real(values) => values.iter().copied().collect(),
        Table::Index(_) => panic!("expected a real table"),
    }
}

fn torch_kinds() -> Vec<TableSpec> {
    let q = Array2::from_shape_fn((40, 16), |(r, c)| {
        ((r * 13 + c * 7) % 19) as f64 / 9.5 - 1.0
    });
    vec![
        TableSpec::Sinusoidal(SinusoidalParams {
            seq: 200,
            dim: 64,
            base: 10_000.0,
            start: 4000,
            layout: SinusoidalLayout::Interleaved,
            spacing: Spacing::Vaswani,
        }),
        TableSpec::Sinusoidal(SinusoidalParams {
            seq: 50,
            dim: 32,
            base: 500.0,
            start: 30_000_000,
            layout: SinusoidalLayout::Split,
            spacing: Spacing::T2t,
        }),
        TableSpec::RopeInvFreq {
            dim: 96,
            base: 500_000.0,
        },
        TableSpec::RopeAngles(RopeParams {
            seq: 300,
            dim: 32,
            base: 10_000.0,
            start: 4090,
        }),
        TableSpec::RopeApply {
            input: q.clone(),
            layout: RopeLayout::Half,
            base: 10_000.0,
            start: 8000,
        },
        TableSpec::RopeApply {
            input: q,
            layout: RopeLayout::Interleaved,
            base: 500_000.0,
            start: 1 << 20,
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
    let table = real(cpu::compute_arith(&spec, Arithmetic::TorchF32).unwrap());
    assert_eq!(table, TORCH_4093_D8.to_vec());
}

#[test]
fn the_gpu_agrees_with_the_cpu_emulation_within_one_ulp() {
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
                    .compute_window_arith(&spec, &window, Arithmetic::TorchF32)
                    .unwrap(),
            );
            let c = real(cpu::compute_window_arith(&spec, &window, Arithmetic::TorchF32).unwrap());
            // rope-apply subtracts two rounded products: a one-ulp difference in cos or sin
            // (or a fused multiply-add) moves the result by an ulp of the products, which is
            // many ulps of a result that cancels. Its inputs are at most 1 in magnitude.
            let is_rotation = matches!(spec, TableSpec::RopeApply { .. });
            let mut equal = 0;
            for (k, (&a, &b)) in g.iter().zip(&c).enumerate() {
                let (a, b) = (a as f32, b as f32);
                let ulps = (a.to_bits() as i64 - b.to_bits() as i64).abs();
                let close = if is_rotation {
                    (a - b).abs() <= 2.0 * f32::EPSILON
                } else {
                    ulps <= 1
                };
                assert!(
                    close || a == b,
                    "{} [{k}]: GPU {a} vs CPU {b}",
                    spec.kind_name()
                );
                equal += usize::from(a == b);
            }
            // Most values agree to the bit; one ulp is the rounding of a value that falls near
            // the midpoint between two floats.
            assert!(
                equal * 2 > g.len(),
                "{}: only {equal} of {} equal",
                spec.kind_name(),
                g.len()
            );
        }
    }
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
    for torch in [
        real(cpu::compute_arith(&spec, Arithmetic::TorchF32).unwrap()),
        real(gpu().compute_arith(&spec, Arithmetic::TorchF32).unwrap()),
    ] {
        let mut largest_error = 0.0f64;
        let mut largest_predicted = 0.0f64;
        for (k, (t, e)) in torch.iter().zip(&exact).enumerate() {
            let (row, col) = (k / dim, k % dim);
            let position = (start + row as u64) as f64;
            let w = freqs[col / 2];
            // The angle's error: f32(p) * f32(w) rounded to f32, against p * w.
            let angle32 = f64::from((position as f32) * (w as f32));
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
        .find(|s| s.kind_name() == "alibi")
        .unwrap();
    assert!(cpu::compute_arith(&spec, Arithmetic::TorchF32).is_err());
    assert!(gpu().compute_arith(&spec, Arithmetic::TorchF32).is_err());
}
