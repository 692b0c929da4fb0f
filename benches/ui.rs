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
        let mut engines = vec![("cpu", AppEngine::cpu("benchmark"))];
        match GpuEngine::new_headless() {
            Ok(gpu) => engines.push(("gpu", AppEngine::gpu(gpu))),
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

/// What the app adds to a keystroke, per view, in a 1280 x 800 window: one frame of the app
/// after a parameter changed (compute on the device, colour map, readback of the range, egui's
/// layout and the texture updates). Tessellation and drawing happen in the renderer (llvmpipe's
/// on a machine without a GPU) and are not measured here. Goal: under 16 ms at 512 x 128 and at
/// 1,048,576 x 512.
fn app_frame_after_a_change(c: &mut Criterion) {
    use egui_kittest::Harness;
    use poslab::app::{PoslabApp, wgpu_setup};
    use poslab::views::ViewKind;

    let mut group = c.benchmark_group("app_frame_after_a_change");
    group.sample_size(10);
    for (size, seq, dim) in [("512x128", 512, 128), ("1048576x512", 1 << 20, 512)] {
        for view in [
            ViewKind::Sinusoidal,
            ViewKind::DotDecay,
            ViewKind::Alibi,
            ViewKind::Corkscrew,
            ViewKind::Patches,
        ] {
            let mut harness = Harness::builder()
                // A heatmap's colour range arrives from the device some frames after its texture.
                .with_max_steps(2000)
                .with_size([1280.0, 800.0])
                .wgpu_setup(wgpu_setup())
                .build_eframe(|cc| PoslabApp::new(cc).hide_machine_details());
            {
                let state = &mut harness.state_mut().state;
                state.view = view;
                state.shared.seq = seq;
                state.shared.dim = dim;
            }
            harness.run();
            let mut flip = false;
            group.bench_function(format!("{size}/{view:?}"), |b| {
                b.iter(|| {
                    // A new dimension and head count: every view has something to recompute.
                    flip = !flip;
                    let shared = &mut harness.state_mut().state.shared;
                    shared.dim = if flip { dim + 2 } else { dim };
                    shared.heads = if flip { 9 } else { 8 };
                    harness.step();
                    black_box(harness.state().state.shared.dim);
                })
            });
        }
    }
    group.finish();
}

criterion_group!(
    benches,
    parameter_change_to_texture,
    app_frame_after_a_change
);
criterion_main!(benches);
