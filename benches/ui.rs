//! From a parameter change to the heatmap's new texture: the window at screen resolution
//! (a 1024 x 768 pixel plot) computed on an engine and colour-mapped into the egui texture
//! (`cpu`, `gpu`: through main memory), or computed and colour-mapped on the device
//! (`gpu_texture`, what the app does when it shares eframe's device).
//! Goal: under 16 ms on a real GPU, under 100 ms on lavapipe.

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

use poslab::app::engine::AppEngine;
use poslab::egui;
use poslab::encoding::alibi::{AlibiMode, AlibiParams};
use poslab::encoding::sinusoidal::SinusoidalParams;
use poslab::engine::gpu::GpuEngine;
use poslab::engine::reduce::Reduce;
use poslab::engine::{Strided, Table, TableSpec, Window};
use poslab::widgets::colormap::Colormap;
use poslab::widgets::heatmap::{HeatmapData, HeatmapTexture};

const SCREEN: (usize, usize) = (1024, 768);

fn screen_window(spec: &TableSpec) -> Window {
    let [_, rows, cols] = spec.matrix_shape();
    Window {
        heads: Strided::all(1),
        rows: Strided {
            step: rows.div_ceil(SCREEN.1).max(1),
            ..Strided::all(rows)
        },
        cols: Strided {
            step: cols.div_ceil(SCREEN.0).max(1),
            ..Strided::all(cols)
        },
    }
}

fn parameter_change_to_texture(c: &mut Criterion) {
    let ctx = egui::Context::default();
    let engines: Vec<(&str, AppEngine)> = {
        let mut engines = vec![("cpu", AppEngine::Cpu("benchmark".to_owned()))];
        match GpuEngine::new_headless() {
            Ok(gpu) => engines.push(("gpu", AppEngine::Gpu(Box::new(gpu), None))),
            Err(reason) => eprintln!("GPU entries left out: {reason}"),
        }
        engines
    };
    let cases = [
        (
            "sinusoidal_4096x1024",
            TableSpec::Sinusoidal(SinusoidalParams {
                seq: 4096,
                dim: 1024,
                ..Default::default()
            }),
        ),
        (
            "sinusoidal_1048576x128",
            TableSpec::Sinusoidal(SinusoidalParams {
                seq: 1 << 20,
                dim: 128,
                ..Default::default()
            }),
        ),
        (
            "alibi_32_heads_4096",
            TableSpec::Alibi {
                params: AlibiParams {
                    heads: 32,
                    seq: 4096,
                    mode: AlibiMode::Causal,
                },
                head: Some(31),
            },
        ),
    ];
    let mut group = c.benchmark_group("parameter_change_to_texture");
    group.sample_size(10);
    for (case, spec) in &cases {
        let window = screen_window(spec);
        for (engine_name, engine) in &engines {
            let mut texture = HeatmapTexture::default();
            group.bench_function(format!("{case}/{engine_name}"), |b| {
                b.iter(|| {
                    let (table, _) = engine.compute_window(spec, &window).unwrap();
                    let Table::Real(values) = table else {
                        panic!("a real table")
                    };
                    let values = values
                        .into_shape_with_order((window.rows.len(), window.cols.len()))
                        .unwrap();
                    let data = HeatmapData {
                        values,
                        rows: window.rows,
                        cols: window.cols,
                    };
                    texture.update(&ctx, &data, Colormap::Viridis, None);
                    black_box(texture.range())
                })
            });
        }
    }
    // The app's own path on a shared device: table kernel, min/max and colour map all on the
    // GPU, into the texture egui draws (only the two range values come back).
    if let Ok(gpu) = GpuEngine::new_headless() {
        let colors = Colormap::Viridis.lut();
        for (case, spec) in &cases {
            let window = screen_window(spec);
            let mut heatmap = None;
            group.bench_function(format!("{case}/gpu_texture"), |b| {
                b.iter(|| {
                    let rendered = gpu
                        .render_heatmap(
                            spec,
                            &window,
                            Reduce::Mean,
                            &colors,
                            false,
                            None,
                            heatmap.take(),
                        )
                        .unwrap();
                    black_box(rendered.range);
                    heatmap = Some(rendered);
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, parameter_change_to_texture);
criterion_main!(benches);
