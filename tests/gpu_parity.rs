//! The GPU engine against the CPU f64 engine, on whatever adapter wgpu finds (Mesa's lavapipe
//! in CI). Every value within 2e-6 absolute or 1e-6 relative, `-inf` and indices exact.
//! These tests fail, rather than skip, when no adapter can be had.

mod common;

use common::gpu;
use poslab::encoding::PairLayout;

use ndarray::{Array2, ArrayD};

use common::{every_kind, slice, windows_of};
use poslab::encoding::alibi::{AlibiMode, AlibiParams};
use poslab::encoding::rope::RopeParams;
use poslab::encoding::sinusoidal::{SinusoidalParams, Spacing};
use poslab::engine::{Strided, Table, TableSpec, Window, cpu};

fn assert_parity(what: &str, gpu: &Table, cpu: &Table) {
    match (gpu, cpu) {
        (Table::Real(g), Table::Real(c)) => assert_real_parity(what, g, c),
        (Table::Index(g), Table::Index(c)) => assert_eq!(g, c, "{what}"),
        _ => panic!("{what}: the engines returned different value kinds"),
    }
}

fn assert_real_parity(what: &str, gpu: &ArrayD<f64>, cpu: &ArrayD<f64>) {
    assert_eq!(gpu.shape(), cpu.shape(), "{what}: shape");
    let mut worst = (0.0f64, 0usize);
    for (k, (g, c)) in gpu.iter().zip(cpu.iter()).enumerate() {
        if c.is_infinite() {
            assert_eq!(g, c, "{what}: -inf placement at flat index {k}");
            continue;
        }
        assert!(
            g.is_finite(),
            "{what}: GPU wrote {g} where the CPU has {c} ({k})"
        );
        let excess = (g - c).abs() / (2e-6f64).max(1e-6 * c.abs());
        if excess > worst.0 {
            worst = (excess, k);
        }
    }
    let (excess, k) = worst;
    assert!(
        excess <= 1.0,
        "{what}: flat index {k}: GPU {} vs CPU {} (beyond 2e-6 abs / 1e-6 rel)",
        gpu.iter().nth(k).copied().unwrap_or_default(),
        cpu.iter().nth(k).copied().unwrap_or_default()
    );
}

#[test]
fn every_kind_matches_the_cpu_engine() {
    for spec in every_kind() {
        let g = gpu().compute(&spec).unwrap();
        let c = cpu::compute(&spec).unwrap();
        assert_parity(spec.kind_name(), &g, &c);
    }
}

#[test]
fn every_window_matches_the_cpu_engine() {
    for spec in every_kind() {
        let whole = cpu::compute(&spec).unwrap();
        for window in windows_of(spec.matrix_shape()) {
            let g = gpu().compute_window(&spec, &window).unwrap();
            let expected = match &whole {
                Table::Real(w) => Table::Real(slice(w, &window)),
                Table::Index(w) => Table::Index(slice(w, &window)),
            };
            assert_parity(&format!("{} {window:?}", spec.kind_name()), &g, &expected);
        }
    }
}

/// The web page's path: each window computed into one device buffer and read back without
/// waiting (on the desktop the readback is the blocking one; the buffer's layout is the same).
#[test]
fn every_window_through_one_device_buffer_matches_the_cpu_engine() {
    for spec in every_kind() {
        let whole = cpu::compute(&spec).unwrap();
        for window in windows_of(spec.matrix_shape()) {
            let g = pollster::block_on(gpu().compute_window_async(&spec, &window)).unwrap();
            let expected = match &whole {
                Table::Real(w) => Table::Real(slice(w, &window)),
                Table::Index(w) => Table::Index(slice(w, &window)),
            };
            assert_parity(
                &format!("{} {window:?} in one buffer", spec.kind_name()),
                &g,
                &expected,
            );
        }
    }
}

/// A window of more rows than one dispatch covers is computed tile by tile into the one
/// device buffer (copied there tile by tile): the web page's column of a million rows.
#[test]
fn a_window_of_many_tiles_through_one_device_buffer_matches_the_cpu_engine() {
    let spec = TableSpec::Sinusoidal(SinusoidalParams {
        seq: 1 << 20,
        dim: 64,
        ..Default::default()
    });
    let window = Window {
        heads: Strided::all(1),
        rows: Strided::all(1 << 20),
        cols: Strided {
            start: 5,
            end: 6,
            step: 1,
        },
    };
    let g = pollster::block_on(gpu().compute_window_async(&spec, &window))
        .expect("a million rows of one column fit one buffer");
    let c = cpu::compute_window(&spec, &window).unwrap();
    assert_parity("a column of a million rows in one buffer", &g, &c);
}

#[test]
fn positions_up_to_a_million_stay_exact() {
    let end = 1_048_576;
    for (layout, spacing) in [
        (PairLayout::Interleaved, Spacing::Vaswani),
        (PairLayout::Half, Spacing::T2t),
    ] {
        let spec = TableSpec::Sinusoidal(SinusoidalParams {
            seq: 96,
            dim: 256,
            base: 10_000.0,
            start: end - 96,
            layout,
            spacing,
            ..SinusoidalParams::default()
        });
        let what = format!("sinusoidal {layout:?} {spacing:?} near {end}");
        assert_parity(
            &what,
            &gpu().compute(&spec).unwrap(),
            &cpu::compute(&spec).unwrap(),
        );
    }
    let q = Array2::from_shape_fn((64, 128), |(r, c)| {
        ((r * 31 + c * 17) % 23) as f64 / 11.5 - 1.0
    });
    for layout in [PairLayout::Interleaved, PairLayout::Half] {
        let spec = TableSpec::RopeApply {
            input: q.clone(),
            layout,
            base: 500_000.0,
            start: end - 64,
            freqs: Default::default(),
        };
        let what = format!("rope-apply {layout:?} near {end}");
        assert_parity(
            &what,
            &gpu().compute(&spec).unwrap(),
            &cpu::compute(&spec).unwrap(),
        );
    }
    let spec = TableSpec::RopeAngles {
        params: RopeParams {
            seq: 64,
            dim: 128,
            base: 10_000.0,
            start: end - 64,
        },
        freqs: Default::default(),
    };
    assert_parity(
        "rope-angles near 2^20",
        &gpu().compute(&spec).unwrap(),
        &cpu::compute(&spec).unwrap(),
    );
    // Every pair of the dot-decay sums reaches offsets near 2^20 too.
    let decay = TableSpec::DotDecay {
        params: SinusoidalParams {
            seq: end as usize,
            dim: 8,
            ..Default::default()
        },
        anchor: 0,
    };
    let window = Window {
        cols: poslab::engine::Strided {
            start: end as usize - 500,
            end: end as usize,
            step: 7,
        },
        ..Window::all(decay.matrix_shape())
    };
    assert_parity(
        "dot-decay at offsets near 2^20",
        &gpu().compute_window(&decay, &window).unwrap(),
        &cpu::compute_window(&decay, &window).unwrap(),
    );
}

#[test]
fn small_tiles_give_the_same_tables() {
    // Tiles of 4 KiB force tiling across rows, heads and columns at small sizes.
    let tiny = poslab::engine::gpu::GpuEngine::new_headless()
        .unwrap()
        .with_max_tile_bytes(4096);
    for spec in every_kind() {
        let what = format!("{} in 4 KiB tiles", spec.kind_name());
        assert_parity(
            &what,
            &tiny.compute(&spec).unwrap(),
            &cpu::compute(&spec).unwrap(),
        );
    }
    let wide = TableSpec::Sinusoidal(SinusoidalParams {
        seq: 3,
        dim: 3000,
        ..Default::default()
    });
    assert_parity(
        "rows wider than a tile",
        &tiny.compute(&wide).unwrap(),
        &cpu::compute(&wide).unwrap(),
    );
}

/// What `poslab table --backend gpu` writes: the whole table's tiles in C order, read back
/// through the ring of mapped buffers while later tiles compute. In 4 KiB tiles (hundreds of
/// them: the ring wraps again and again), and with rows wider than a tile, the stream laid
/// end to end is the CPU engine's table.
#[test]
fn streamed_tiles_arrive_in_order_and_match_the_cpu_engine() {
    use poslab::encoding::torch_f32::Arithmetic;
    use poslab::engine::ValueKind;
    let tiny = poslab::engine::gpu::GpuEngine::new_headless()
        .unwrap()
        .with_max_tile_bytes(4096);
    let wide = TableSpec::Sinusoidal(SinusoidalParams {
        seq: 3,
        dim: 3000,
        ..Default::default()
    });
    let mut most_tiles = 0;
    for spec in every_kind().into_iter().chain([wide]) {
        let what = format!("{} streamed in 4 KiB tiles", spec.kind_name());
        let source = tiny.block_source(&spec, Arithmetic::Exact).unwrap();
        let (mut words, mut tiles) = (Vec::<u32>::new(), 0);
        source
            .stream(&mut |bytes| {
                assert!(
                    bytes.len() <= 4096,
                    "{what}: a tile of {} bytes",
                    bytes.len()
                );
                words.extend_from_slice(bytemuck::cast_slice(bytes));
                tiles += 1;
                Ok(())
            })
            .unwrap();
        most_tiles = most_tiles.max(tiles);
        let shape = ndarray::IxDyn(&spec.shape().unwrap());
        let streamed = match spec.value_kind() {
            ValueKind::Index => Table::Index(
                ArrayD::from_shape_vec(shape, words.iter().map(|&w| w as i32).collect()).unwrap(),
            ),
            ValueKind::Real => Table::Real(
                ArrayD::from_shape_vec(
                    shape,
                    words
                        .iter()
                        .map(|&w| f64::from(f32::from_bits(w)))
                        .collect(),
                )
                .unwrap(),
            ),
        };
        assert_parity(&what, &streamed, &cpu::compute(&spec).unwrap());
    }
    // The ring holds 3 tiles: 7 or more go round it twice.
    assert!(
        most_tiles >= 7,
        "the ring never wrapped: {most_tiles} tiles"
    );
}

#[test]
fn tables_larger_than_one_storage_binding_are_tiled() {
    // 3 x 4096 x 4096 f32 is 192 MiB: more than lavapipe's 128 MiB binding.
    let spec = TableSpec::Alibi {
        params: AlibiParams {
            heads: 3,
            seq: 4096,
            mode: AlibiMode::Causal,
        },
        head: None,
    };
    assert_parity(
        "alibi 3 x 4096 x 4096",
        &gpu().compute(&spec).unwrap(),
        &cpu::compute(&spec).unwrap(),
    );
}

/// Dot products sum dim/2 cosines: the GPU's, each cosine within an f32 ulp or so and summed
/// exactly in fixed point, stay within 2e-6 + 1e-6·dim/2 of the CPU's at every dim up to
/// 65536 (summed in f32, even with compensation, they were 3.7e-3 off at dim 4096: shader
/// compilers may drop the compensation). Patch similarities (means) within 2e-6.
#[test]
fn dot_products_stay_within_their_bound_at_large_dims() {
    use poslab::encoding::grid::GridParams;
    use poslab::encoding::similarity2d::{PatchEncoding, PatchSimilarityParams};
    // 2^20 (2^19 pairs, 2^18 per patch axis): beyond what llvmpipe lets one loop run, so the
    // kernels' sums must take several terms a pass to reach the end of the dimension.
    for dim in [1024, 4096, 65536, 1 << 20] {
        let seq = if dim > 65536 { 12 } else { 96 };
        let params = SinusoidalParams {
            seq,
            dim,
            ..Default::default()
        };
        let bound = 2e-6 + 1e-6 * (dim / 2) as f64;
        for spec in [
            TableSpec::Similarity(params),
            TableSpec::DotDecay {
                params: SinusoidalParams {
                    seq: seq * 6,
                    ..params
                },
                anchor: 17,
            },
        ] {
            let window = Window::all(spec.matrix_shape());
            let g = gpu().compute_window(&spec, &window).unwrap().into_real();
            let c = cpu::compute_window(&spec, &window).unwrap().into_real();
            let worst = g
                .iter()
                .zip(c.iter())
                .map(|(g, c)| (g - c).abs())
                .fold(0.0, f64::max);
            assert!(
                worst <= bound,
                "{} at dim {dim}: {worst:e} beyond {bound:e}",
                spec.kind_name()
            );
        }
        let patches = TableSpec::PatchSimilarity(PatchSimilarityParams {
            grid: if dim > 65536 {
                GridParams {
                    grid_h: 2,
                    grid_w: 2,
                }
            } else {
                GridParams {
                    grid_h: 6,
                    grid_w: 7,
                }
            },
            encoding: PatchEncoding::SinCos {
                dim,
                base: 10_000.0,
            },
        });
        let window = Window::all(patches.matrix_shape());
        assert_parity(
            &format!("patch-similarity at dim {dim}"),
            &gpu().compute_window(&patches, &window).unwrap(),
            &cpu::compute_window(&patches, &window).unwrap(),
        );
    }
    // rope-vit's mixed frequencies at the longest list, 2^20 pairs.
    let pairs = 1 << 20;
    let freqs = ndarray::Array2::from_shape_fn((2, pairs), |(axis, k)| {
        0.001 + ((k * 7919 + axis * 104_729) % 3001) as f64 / 1000.0
    });
    let mixed = TableSpec::PatchSimilarity(PatchSimilarityParams {
        grid: GridParams {
            grid_h: 1,
            grid_w: 3,
        },
        encoding: PatchEncoding::MixedRope { freqs },
    });
    let window = Window::all(mixed.matrix_shape());
    assert_parity(
        "patch-similarity of 2^20 mixed pairs",
        &gpu().compute_window(&mixed, &window).unwrap(),
        &cpu::compute_window(&mixed, &window).unwrap(),
    );
}

#[test]
fn work_one_invocation_cannot_finish_is_refused_not_cut_short() {
    use poslab::encoding::resample::{ResampleMode, ResampleParams};
    use poslab::engine::Strided;
    use poslab::engine::reduce::Reduce;
    // A 256 x 256 grid averaged into one patch: 513 taps per axis, 513 x 514 steps.
    let input = Array2::from_shape_fn((256 * 256, 2), |(r, c)| (r + c) as f64);
    let shrink = TableSpec::SinCos2dResample {
        input,
        params: ResampleParams {
            from: (256, 256),
            to: (1, 1),
            prefix_rows: 0,
            mode: ResampleMode::Bilinear,
            antialias: true,
        },
    };
    let message = gpu()
        .compute_window(&shrink, &Window::all(shrink.matrix_shape()))
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("256x256 to 1x1") && message.contains("--backend cpu"),
        "{message}"
    );
    // The CPU engine computes it.
    assert!(cpu::compute_window(&shrink, &Window::all(shrink.matrix_shape())).is_ok());
    // A heatmap pixel averaging 65536 sinusoidal columns (2^17 dims in one pixel).
    let wide = TableSpec::Sinusoidal(SinusoidalParams {
        seq: 4,
        dim: 1 << 17,
        ..Default::default()
    });
    let window = Window {
        heads: Strided::all(1),
        rows: Strided {
            start: 0,
            end: 4,
            step: 2,
        },
        cols: Strided {
            start: 0,
            end: 1 << 17,
            step: 1 << 16,
        },
    };
    let Err(refused) = gpu().reduce_window(&wide, &window, Reduce::Mean) else {
        panic!("a pixel over 65536 columns was averaged")
    };
    let message = refused.to_string();
    assert!(message.contains("65536 columns"), "{message}");
}
