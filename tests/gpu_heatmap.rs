//! Heatmap textures made on the GPU equal the CPU engine's values mapped through the same
//! colour map.

use std::sync::OnceLock;

use poslab::encoding::alibi::{AlibiMode, AlibiParams};
use poslab::encoding::sinusoidal::SinusoidalParams;
use poslab::engine::gpu::GpuEngine;
use poslab::engine::{Strided, Table, TableSpec, Window, cpu};
use poslab::widgets::colormap::Colormap;

fn gpu() -> &'static GpuEngine {
    static ENGINE: OnceLock<GpuEngine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        GpuEngine::new_headless().unwrap_or_else(|e| {
            panic!("GPU tests need an adapter (on Debian: mesa-vulkan-drivers): {e}")
        })
    })
}

fn check(spec: &TableSpec, window: &Window, colormap: Colormap) {
    let symmetric = colormap == Colormap::Diverging;
    let heatmap = gpu()
        .render_heatmap(spec, window, &colormap.lut(), symmetric, None, None)
        .unwrap();
    let pixels = gpu().read_heatmap_pixels(&heatmap).unwrap();
    let Table::Real(values) = cpu::compute_window(spec, window).unwrap() else {
        panic!("a real table")
    };
    let finite = values.iter().copied().filter(|v| v.is_finite());
    let (min, max) = finite.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    let (low, high) = colormap.range(min, max);
    assert!(
        (heatmap.range.0 - low).abs() < 1e-5 && (heatmap.range.1 - high).abs() < 1e-5,
        "range {:?} vs {low}..{high}",
        heatmap.range
    );
    assert_eq!(pixels.len(), values.len());
    for (k, (pixel, &value)) in pixels.iter().zip(values.iter()).enumerate() {
        if !value.is_finite() {
            assert_eq!(
                pixel[3],
                0,
                "{} [{k}]: masked cells are transparent",
                spec.kind_name()
            );
            continue;
        }
        let expected = colormap.lut_color((value - low) / (high - low)).to_array();
        // f32 on the GPU against f64 here can round t to the neighbouring table entry.
        let close = pixel.iter().zip(expected).all(|(&a, b)| a.abs_diff(b) <= 4);
        assert!(
            close,
            "{} [{k}] value {value}: GPU {pixel:?} vs {expected:?}",
            spec.kind_name()
        );
    }
}

#[test]
fn gpu_textures_match_cpu_values_through_the_same_colour_map() {
    let sinusoidal = TableSpec::Sinusoidal(SinusoidalParams {
        seq: 37,
        dim: 24,
        start: 100,
        ..Default::default()
    });
    check(
        &sinusoidal,
        &Window::all(sinusoidal.matrix_shape()),
        Colormap::Viridis,
    );
    let strided = Window {
        heads: Strided::all(1),
        rows: Strided {
            start: 3,
            end: 37,
            step: 4,
        },
        cols: Strided {
            start: 1,
            end: 24,
            step: 3,
        },
    };
    check(&sinusoidal, &strided, Colormap::Magma);
    let alibi = TableSpec::Alibi {
        params: AlibiParams {
            heads: 4,
            seq: 19,
            mode: AlibiMode::Causal,
        },
        head: Some(2),
    };
    check(
        &alibi,
        &Window::all(alibi.matrix_shape()),
        Colormap::Viridis,
    );
    let similarity = TableSpec::Similarity(SinusoidalParams {
        seq: 30,
        dim: 16,
        ..Default::default()
    });
    check(
        &similarity,
        &Window::all(similarity.matrix_shape()),
        Colormap::Diverging,
    );
    check(
        &similarity,
        &Window::all(similarity.matrix_shape()),
        Colormap::Greyscale,
    );
}

#[test]
fn a_fixed_range_maps_several_heatmaps_on_one_scale() {
    let spec = TableSpec::Alibi {
        params: AlibiParams {
            heads: 2,
            seq: 9,
            mode: AlibiMode::Symmetric,
        },
        head: Some(1),
    };
    let window = Window::all(spec.matrix_shape());
    let heatmap = gpu()
        .render_heatmap(
            &spec,
            &window,
            &Colormap::Greyscale.lut(),
            false,
            Some((-8.0, 0.0)),
            None,
        )
        .unwrap();
    assert_eq!(heatmap.range, (-8.0, 0.0));
    let pixels = gpu().read_heatmap_pixels(&heatmap).unwrap();
    // Head 1 of 2 has slope 1/256: its values stay near 0, the top of the fixed scale.
    let Table::Real(values) = cpu::compute_window(&spec, &window).unwrap() else {
        panic!()
    };
    for (pixel, &value) in pixels.iter().zip(values.iter()) {
        let expected = Colormap::Greyscale
            .lut_color((value + 8.0) / 8.0)
            .to_array();
        assert!(pixel.iter().zip(expected).all(|(&a, b)| a.abs_diff(b) <= 4));
    }
}
