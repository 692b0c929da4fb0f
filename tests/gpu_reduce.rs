//! Heatmap pixels reduced on the GPU (a pixel that covers several cells shows their mean, min
//! or max) equal the reduction of the CPU engine's cells, reduced here cell by cell, and the
//! CPU engine's own reduction.

use std::sync::OnceLock;

use poslab::encoding::alibi::{AlibiMode, AlibiParams};
use poslab::encoding::sinusoidal::SinusoidalParams;
use poslab::engine::gpu::GpuEngine;
use poslab::engine::reduce::{Reduce, Sampling, compute_reduced_cpu};
use poslab::engine::{Strided, Table, TableSpec, Window, cpu};

fn gpu() -> &'static GpuEngine {
    static ENGINE: OnceLock<GpuEngine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        GpuEngine::new_headless().unwrap_or_else(|e| {
            panic!("GPU tests need an adapter (on Debian: mesa-vulkan-drivers): {e}")
        })
    })
}

/// The reduction of the cells of pixel `(y, x)` of a binned `window` of `spec`, from the whole
/// table computed cell by cell on the CPU engine: finite cells only, `-inf` if none.
fn reduced_by_hand(spec: &TableSpec, window: &Window, reduce: Reduce) -> Vec<f64> {
    let Table::Real(table) = cpu::compute_window(spec, &Window::all(spec.matrix_shape())).unwrap()
    else {
        panic!("a real table")
    };
    let [_, rows, cols] = spec.matrix_shape();
    let table = table.into_shape_with_order((rows, cols)).unwrap();
    let bins = |s: Strided| -> Vec<std::ops::Range<usize>> {
        (0..s.len())
            .map(|k| s.at(k)..(s.at(k) + s.step).min(s.end))
            .collect()
    };
    let mut out = Vec::new();
    for rows in bins(window.rows) {
        for cols in bins(window.cols) {
            let cells: Vec<f64> = rows
                .clone()
                .flat_map(|r| cols.clone().map(move |c| (r, c)))
                .map(|(r, c)| table[[r, c]])
                .filter(|v| v.is_finite())
                .collect();
            out.push(if cells.is_empty() {
                f64::NEG_INFINITY
            } else {
                match reduce {
                    Reduce::Mean => cells.iter().sum::<f64>() / cells.len() as f64,
                    Reduce::Min => cells.iter().copied().fold(f64::INFINITY, f64::min),
                    Reduce::Max => cells.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                }
            });
        }
    }
    out
}

fn close(a: f64, b: f64) -> bool {
    (a == b) || (a - b).abs() <= 2e-6 + 1e-6 * b.abs()
}

fn check_reduced(gpu: &GpuEngine, spec: &TableSpec, window: &Window, reduce: Reduce) {
    assert_eq!(
        poslab::engine::reduce::sampling(spec, window, reduce),
        Sampling::Reduced(reduce),
        "the window is binned"
    );
    let values = reduced_by_hand(spec, window, reduce);
    let shown = gpu.reduce_window(spec, window, reduce).unwrap();
    let cpu_reduced = compute_reduced_cpu(spec, window, reduce).unwrap();
    assert_eq!(shown.len(), values.len());
    for (k, ((&gpu_value, &cpu_value), &value)) in shown
        .iter()
        .zip(cpu_reduced.iter())
        .zip(&values)
        .enumerate()
    {
        assert!(
            close(f64::from(gpu_value), value),
            "{} {reduce:?} pixel {k}: GPU {gpu_value} vs the cells' {value}",
            spec.kind_name()
        );
        assert!(
            close(cpu_value, value),
            "{} {reduce:?} pixel {k}: CPU engine {cpu_value} vs the cells' {value}",
            spec.kind_name()
        );
    }
}

/// Windows with fewer pixels than cells, along rows, columns or both, with a short last bin.
fn binned(rows: usize, cols: usize, row_step: usize, col_step: usize) -> Window {
    Window {
        heads: Strided::all(1),
        rows: Strided {
            start: 1,
            end: rows,
            step: row_step,
        },
        cols: Strided {
            start: 0,
            end: cols,
            step: col_step,
        },
    }
}

#[test]
fn a_pixel_shows_the_reduction_of_the_cells_it_covers() {
    // Long sinusoidal tables: the mean in closed form, min and max cell by cell; fast columns
    // alias under point sampling, so a wrong reduction shows at once.
    for start in [0, 3_000_000_000] {
        let sinusoidal = TableSpec::Sinusoidal(SinusoidalParams {
            seq: 20_000,
            dim: 64,
            start,
            ..Default::default()
        });
        for reduce in [Reduce::Mean, Reduce::Min, Reduce::Max] {
            check_reduced(gpu(), &sinusoidal, &binned(20_000, 64, 37, 3), reduce);
        }
    }
    // Every row and column in one pixel, and bins of one along an axis.
    let small = TableSpec::Sinusoidal(SinusoidalParams {
        seq: 300,
        dim: 10,
        base: 500_000.0,
        ..Default::default()
    });
    check_reduced(gpu(), &small, &binned(300, 10, 299, 10), Reduce::Mean);
    check_reduced(gpu(), &small, &binned(300, 10, 7, 1), Reduce::Mean);
    // ALiBi in closed form, masked cells left out, in both modes.
    for mode in [AlibiMode::Causal, AlibiMode::Symmetric] {
        let alibi = TableSpec::Alibi {
            params: AlibiParams {
                heads: 12,
                seq: 1000,
                mode,
            },
            head: Some(5),
        };
        for reduce in [Reduce::Mean, Reduce::Min, Reduce::Max] {
            check_reduced(gpu(), &alibi, &binned(1000, 1000, 13, 7), reduce);
        }
    }
    // 2^30 positions, a pixel a block of 2^21 x 2^21 cells: the GPU's closed form (f32 sums
    // of k and k^2) against the CPU's (exact integers, tested against a walk over the cells).
    for mode in [AlibiMode::Causal, AlibiMode::Symmetric] {
        let huge = TableSpec::Alibi {
            params: AlibiParams {
                heads: 8,
                seq: 1 << 30,
                mode,
            },
            head: Some(3),
        };
        let window = binned(1 << 30, 1 << 30, (1 << 21) + 7, (1 << 21) - 5);
        for reduce in [Reduce::Mean, Reduce::Min, Reduce::Max] {
            let shown = gpu().reduce_window(&huge, &window, reduce).unwrap();
            let cpu_reduced = compute_reduced_cpu(&huge, &window, reduce).unwrap();
            assert_eq!(shown.len(), cpu_reduced.len());
            for (k, (&gpu_value, &cpu_value)) in shown.iter().zip(cpu_reduced.iter()).enumerate() {
                assert!(
                    close(f64::from(gpu_value), cpu_value),
                    "{mode:?} {reduce:?} pixel {k}: GPU {gpu_value} vs CPU {cpu_value}"
                );
            }
        }
    }
    // The mean of 65536 x 4 angles in one pixel (the reduction's exact fixed-point sums, in
    // chunks of their own scale, against the cells summed here in f64): llvmpipe ends a loop
    // after 65535 passes, which once cut this pixel to its first 21844 rows.
    let angles = TableSpec::RopeAngles {
        params: poslab::encoding::rope::RopeParams {
            seq: 65_536,
            dim: 8,
            base: 10_000.0,
            start: 0,
        },
        freqs: Default::default(),
    };
    for (step, reduce) in [(65536, Reduce::Mean), (32768, Reduce::Max)] {
        check_reduced(
            gpu(),
            &angles,
            &Window {
                heads: Strided::all(1),
                rows: Strided {
                    start: 0,
                    end: 65536,
                    step,
                },
                cols: Strided::all(4),
            },
            reduce,
        );
    }
    // A Toeplitz similarity: square bins in closed form (a block per diagonal, the last row
    // and column of pixels short), other bins and min/max cell by cell.
    let similarity = TableSpec::Similarity(SinusoidalParams {
        seq: 700,
        dim: 32,
        ..Default::default()
    });
    check_reduced(gpu(), &similarity, &binned(700, 700, 6, 6), Reduce::Mean);
    let zoomed = |rows: (usize, usize), cols: (usize, usize), step: usize| Window {
        heads: Strided::all(1),
        rows: Strided {
            start: rows.0,
            end: rows.1,
            step,
        },
        cols: Strided {
            start: cols.0,
            end: cols.1,
            step,
        },
    };
    for window in [
        zoomed((3, 700), (250, 611), 7),
        zoomed((400, 689), (0, 700), 13),
        zoomed((0, 700), (5, 9), 3),
        zoomed((640, 643), (0, 700), 29),
        zoomed((0, 700), (0, 700), 700),
    ] {
        check_reduced(gpu(), &similarity, &window, Reduce::Mean);
    }
    for reduce in Reduce::ALL {
        check_reduced(gpu(), &similarity, &binned(700, 700, 6, 5), reduce);
    }
}

#[test]
fn a_long_similarity_matrix_is_reduced_in_closed_form() {
    // 2^20 positions at dim 256: a pixel holds 4099 x 4099 products, which only the closed form
    // reaches; the GPU's (f32, exact fixed-point sums) against the CPU engine's (f64).
    let spec = TableSpec::Similarity(SinusoidalParams {
        seq: 1 << 20,
        dim: 256,
        ..Default::default()
    });
    let window = Window {
        heads: Strided::all(1),
        rows: Strided {
            start: 17,
            end: 1 << 20,
            step: 4099,
        },
        cols: Strided {
            start: 5000,
            end: (1 << 20) - 3,
            step: 4099,
        },
    };
    assert_eq!(
        poslab::engine::reduce::sampling(&spec, &window, Reduce::Mean),
        Sampling::Reduced(Reduce::Mean)
    );
    let shown = gpu().reduce_window(&spec, &window, Reduce::Mean).unwrap();
    let cpu_reduced = compute_reduced_cpu(&spec, &window, Reduce::Mean).unwrap();
    assert_eq!(shown.len(), cpu_reduced.len());
    // The contract's tolerance for dot products of dim/2 terms.
    let tolerance = 2e-6 + 1e-6 * 128.0;
    for (k, (&gpu_value, &cpu_value)) in shown.iter().zip(cpu_reduced.iter()).enumerate() {
        assert!(
            (f64::from(gpu_value) - cpu_value).abs() <= tolerance,
            "pixel {k}: GPU {gpu_value} vs CPU {cpu_value}"
        );
    }
    // A few pixels (a full one, the last row's and column's, the corner) the long way: the
    // block's products grouped by offset, PE[i] . PE[j] = S(j - i) weighted by how many cells
    // have that offset.
    let TableSpec::Similarity(params) = &spec else {
        unreachable!()
    };
    let values = poslab::encoding::sinusoidal::SinusoidalValues::new(params).unwrap();
    let (rows, cols) = cpu_reduced.dim();
    for (y, x) in [
        (0, 0),
        (3, 200),
        (rows - 1, 5),
        (7, cols - 1),
        (rows - 1, cols - 1),
    ] {
        let cells = |s: &Strided, k: usize| s.at(k)..(s.at(k) + s.step).min(s.end);
        let (r, c) = (cells(&window.rows, y), cells(&window.cols, x));
        let (a, b) = (r.len() as i64, c.len() as i64);
        let by_offsets: f64 = (-(a - 1)..b)
            .map(|d| {
                let weight = (a.min(b - d) - 0.max(-d)) as f64;
                weight * values.dot_at_offset(c.start as i64 - r.start as i64 + d)
            })
            .sum::<f64>()
            / (a * b) as f64;
        assert!(
            (cpu_reduced[[y, x]] - by_offsets).abs() < 1e-9,
            "pixel ({y}, {x}): closed form {} vs offset by offset {by_offsets}",
            cpu_reduced[[y, x]]
        );
    }
}

#[test]
fn reductions_larger_than_one_buffer_go_block_by_block() {
    // 4 KiB blocks: a handful of pixel rows at a time.
    let small_tiles = GpuEngine::new_headless().unwrap().with_max_tile_bytes(4096);
    let spec = TableSpec::Sinusoidal(SinusoidalParams {
        seq: 5000,
        dim: 16,
        ..Default::default()
    });
    for reduce in [Reduce::Min, Reduce::Max] {
        check_reduced(&small_tiles, &spec, &binned(5000, 16, 21, 2), reduce);
    }
}

#[test]
fn strided_similarity_windows_compute_only_the_offsets_they_meet() {
    // Steps whose gcd is 2, 7, 1 and 5: the GPU computes S(k) for every gcd-th offset only.
    let spec = TableSpec::Similarity(SinusoidalParams {
        seq: 300,
        dim: 32,
        ..Default::default()
    });
    for ((r0, rs), (c0, cs)) in [
        ((3, 4), (1, 6)),
        ((0, 7), (5, 7)),
        ((2, 1), (0, 3)),
        ((4, 10), (9, 5)),
    ] {
        let window = Window {
            heads: Strided::all(1),
            rows: Strided {
                start: r0,
                end: 300,
                step: rs,
            },
            cols: Strided {
                start: c0,
                end: 297,
                step: cs,
            },
        };
        let Table::Real(gpu_values) = gpu().compute_window(&spec, &window).unwrap() else {
            panic!("a real table")
        };
        let Table::Real(cpu_values) = cpu::compute_window(&spec, &window).unwrap() else {
            panic!("a real table")
        };
        for (k, (a, b)) in gpu_values.iter().zip(cpu_values.iter()).enumerate() {
            assert!(
                close(*a, *b) || (a - b).abs() <= 2e-6 + 1e-6 * 16.0,
                "rows {r0}+{rs}k, cols {c0}+{cs}k, value {k}: GPU {a} vs CPU {b}"
            );
        }
    }
}
