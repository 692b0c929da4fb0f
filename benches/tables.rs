//! Engine benchmarks. The CPU sinusoidal table at 65536 x 1024 is the first yardstick (NumPy,
//! vectorised in f64 on the same 2-core machine, is the external baseline; the single-threaded
//! C-library loop in the same run is the in-run baseline for ratios). The CPU/GPU pair at
//! 4096 x 1024 runs on whatever adapter wgpu finds.

use criterion::{Criterion, criterion_group, criterion_main};
use ndarray::Array2;
use std::hint::black_box;

use poslab::encoding::sinusoidal::{self, SinusoidalParams};
use poslab::encoding::torch_f32::Arithmetic;
use poslab::engine::gpu::GpuEngine;
use poslab::engine::{TableSpec, cpu};

fn big_sinusoidal() -> SinusoidalParams {
    SinusoidalParams {
        seq: 65_536,
        dim: 1024,
        ..Default::default()
    }
}

/// The table as a straightforward program writes it: one thread, `sin` and `cos` from libm.
fn naive_table(params: &SinusoidalParams) -> Array2<f64> {
    let freqs = params.frequencies();
    let mut table = Array2::<f64>::zeros((params.seq, params.dim));
    for (p, mut row) in table.rows_mut().into_iter().enumerate() {
        for (i, &w) in freqs.iter().enumerate() {
            let angle = p as f64 * w;
            row[2 * i] = angle.sin();
            row[2 * i + 1] = angle.cos();
        }
    }
    table
}

fn sinusoidal_65536x1024(c: &mut Criterion) {
    let params = big_sinusoidal();
    let mut group = c.benchmark_group("sinusoidal_65536x1024");
    group.sample_size(10);
    group.bench_function("engine", |b| {
        b.iter(|| black_box(sinusoidal::table(black_box(&params)).unwrap()))
    });
    group.bench_function("naive_single_thread_baseline", |b| {
        b.iter(|| black_box(naive_table(black_box(&params))))
    });
    group.finish();
}

fn other_tables(c: &mut Criterion) {
    let mut group = c.benchmark_group("cpu_engine");
    group.sample_size(10);
    let specs = [
        (
            "similarity_4096x512",
            TableSpec::Similarity(SinusoidalParams {
                seq: 4096,
                dim: 512,
                ..Default::default()
            }),
        ),
        (
            "rope_angles_65536x64",
            TableSpec::RopeAngles {
                params: poslab::encoding::rope::RopeParams {
                    seq: 65_536,
                    dim: 128,
                    ..Default::default()
                },
                freqs: Default::default(),
            },
        ),
        (
            "alibi_32x2048",
            TableSpec::Alibi {
                params: poslab::encoding::alibi::AlibiParams {
                    heads: 32,
                    seq: 2048,
                    mode: poslab::encoding::alibi::AlibiMode::Causal,
                },
                head: None,
            },
        ),
    ];
    for (name, spec) in specs {
        group.bench_function(name, |b| b.iter(|| black_box(cpu::compute(&spec).unwrap())));
    }
    group.finish();
}

/// The CPU and GPU engines on the same 4096 x 1024 sinusoidal table. The GPU entries are the
/// kernel alone (`gpu_kernels`) and the whole computation with the copy back (`gpu_with_readback`).
fn cpu_gpu_pair_4096x1024(c: &mut Criterion) {
    let spec = TableSpec::Sinusoidal(SinusoidalParams {
        seq: 4096,
        dim: 1024,
        ..Default::default()
    });
    let mut group = c.benchmark_group("sinusoidal_4096x1024");
    group.sample_size(10);
    group.bench_function("cpu", |b| {
        b.iter(|| black_box(cpu::compute(&spec).unwrap()))
    });
    match GpuEngine::new_headless() {
        Ok(gpu) => {
            group.bench_function("gpu_kernels", |b| {
                b.iter_custom(|iterations| {
                    (0..iterations)
                        .map(|_| gpu.time_kernels(&spec, Arithmetic::Exact).unwrap().duration)
                        .sum()
                })
            });
            group.bench_function("gpu_with_readback", |b| {
                b.iter(|| black_box(gpu.compute(&spec).unwrap()))
            });
        }
        Err(reason) => eprintln!("GPU benchmarks left out: {reason}"),
    }
    group.finish();
}

criterion_group!(
    benches,
    sinusoidal_65536x1024,
    cpu_gpu_pair_4096x1024,
    other_tables
);
criterion_main!(benches);
