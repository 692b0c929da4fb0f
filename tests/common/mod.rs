//! Tables and windows shared by the engine tests.
#![allow(dead_code)]

use ndarray::{Array2, ArrayD, Slice};

use poslab::encoding::alibi::{Alibi2dParams, AlibiMode, AlibiParams};
use poslab::encoding::binary::BinaryParams;
use poslab::encoding::grid::{DistanceMetric, GridParams, SinCos2dParams};
use poslab::encoding::relative::{RelativeClipParams, T5BucketParams};
use poslab::encoding::rope::{RopeLayout, RopeParams};
use poslab::encoding::rope2d::AxialParams;
use poslab::encoding::similarity2d::{PatchEncoding, PatchSimilarityParams};
use poslab::encoding::sinusoidal::{SinusoidalLayout, SinusoidalParams, Spacing};
use poslab::engine::{Strided, TableSpec, Window};

/// One small table of every kind, with non-default parameters.
pub fn every_kind() -> Vec<TableSpec> {
    let grid = GridParams {
        grid_h: 5,
        grid_w: 7,
    };
    let sinusoidal = SinusoidalParams {
        seq: 37,
        dim: 22,
        base: 500.0,
        start: 11,
        layout: SinusoidalLayout::Split,
        spacing: Spacing::T2t,
    };
    vec![
        TableSpec::Sinusoidal(sinusoidal),
        TableSpec::DotDecay {
            params: sinusoidal,
            anchor: 9,
        },
        TableSpec::Similarity(sinusoidal),
        TableSpec::RopeInvFreq {
            dim: 18,
            base: 500_000.0,
        },
        TableSpec::RopeAngles(RopeParams {
            seq: 29,
            dim: 14,
            base: 10_000.0,
            start: 3,
        }),
        TableSpec::RopeApply {
            input: Array2::from_shape_fn((13, 10), |(r, c)| {
                (r as f64 - 6.0) * 0.3 + c as f64 * 0.1
            }),
            layout: RopeLayout::Half,
            base: 100.0,
            start: 40,
        },
        TableSpec::AlibiSlopes { heads: 12 },
        TableSpec::Alibi {
            params: AlibiParams {
                heads: 6,
                seq: 19,
                mode: AlibiMode::Causal,
            },
            head: None,
        },
        TableSpec::Alibi {
            params: AlibiParams {
                heads: 6,
                seq: 19,
                mode: AlibiMode::Symmetric,
            },
            head: Some(4),
        },
        TableSpec::Alibi2d {
            params: Alibi2dParams { heads: 3, grid },
            head: None,
        },
        TableSpec::PatchDistance {
            grid,
            metric: DistanceMetric::Chebyshev,
        },
        TableSpec::SinCos2d(SinCos2dParams {
            grid,
            dim: 24,
            base: 10_000.0,
        }),
        TableSpec::Rope2dAxial(AxialParams {
            grid,
            dim: 20,
            theta: 100.0,
        }),
        TableSpec::Rope2dMixed {
            grid,
            freqs: Array2::from_shape_fn((2, 6), |(a, k)| {
                (k as f64 + 1.0) * if a == 0 { 0.7 } else { -0.45 }
            }),
        },
        TableSpec::T5Buckets(T5BucketParams {
            seq: 41,
            num_buckets: 12,
            max_distance: 20,
            bidirectional: true,
        }),
        TableSpec::T5Buckets(T5BucketParams {
            seq: 41,
            num_buckets: 9,
            max_distance: 30,
            bidirectional: false,
        }),
        TableSpec::RelativeClip(RelativeClipParams {
            seq: 23,
            max_relative: 5,
        }),
        TableSpec::Binary(BinaryParams {
            seq: 33,
            dim: 9,
            start: 1000,
        }),
        TableSpec::PatchSimilarity(PatchSimilarityParams {
            grid,
            encoding: PatchEncoding::AxialRope {
                dim: 16,
                theta: 100.0,
            },
        }),
        TableSpec::PatchSimilarity(PatchSimilarityParams {
            grid,
            encoding: PatchEncoding::SinCos {
                dim: 24,
                base: 10_000.0,
            },
        }),
        TableSpec::PatchSimilarity(PatchSimilarityParams {
            grid: GridParams {
                grid_h: 9,
                grid_w: 11,
            },
            encoding: PatchEncoding::MixedRope {
                freqs: poslab::encoding::similarity2d::random_mixed_freqs(32, 100.0, 3).unwrap(),
            },
        }),
    ]
}

pub fn slice<T: Clone>(table: &ArrayD<T>, window: &Window) -> ArrayD<T> {
    let ndim = table.ndim();
    let ranges = [window.heads, window.rows, window.cols];
    let mut view = table.view();
    for (axis, range) in ranges[3 - ndim..].iter().enumerate() {
        view.slice_axis_inplace(
            ndarray::Axis(axis),
            Slice::new(
                range.start as isize,
                Some(range.end as isize),
                range.step as isize,
            ),
        );
    }
    view.to_owned()
}

/// Some windows of a table: the whole, a strided interior, single lines.
pub fn windows_of(shape: [usize; 3]) -> Vec<Window> {
    let [h, r, c] = shape;
    let part = |n: usize, step: usize| Strided {
        start: n / 3,
        end: n,
        step,
    };
    vec![
        Window::all(shape),
        Window {
            heads: part(h, 2).clamp_to(h),
            rows: part(r, 3),
            cols: part(c, 2),
        },
        Window {
            heads: Strided::all(h),
            rows: Strided {
                start: r - 1,
                end: r,
                step: 1,
            },
            cols: Strided::all(c),
        },
        Window {
            heads: Strided::all(h),
            rows: Strided::all(r),
            cols: Strided {
                start: c / 2,
                end: c / 2 + 1,
                step: 5,
            },
        },
    ]
}

trait ClampTo {
    fn clamp_to(self, n: usize) -> Self;
}

impl ClampTo for Strided {
    fn clamp_to(self, n: usize) -> Self {
        if self.is_empty() {
            Strided::all(n)
        } else {
            self
        }
    }
}
