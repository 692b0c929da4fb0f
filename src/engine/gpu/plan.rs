//! Which kernel computes each table: its shader and entry point, the workgroup's footprint,
//! and the per-column constants (frequencies as fixed-point turns, slopes, bucket edges)
//! prepared in f64 on the CPU.

use super::gpu_data::{KernelParams, split_f64, torch_f32_constants, turns_per_step};
use super::shaders::{self, ShaderSource};
use super::to_u32;
use crate::encoding::PairLayout;
use crate::encoding::exact_angle::TurnsPerStep;
use crate::encoding::resample::AxisTaps;
use crate::encoding::sinusoidal::{FirstOfPair, SinusoidalParams};
use crate::encoding::torch_f32::{Arithmetic, TorchMode};
use crate::encoding::{alibi, grid::DistanceMetric, rope};
use crate::engine::TableSpec;

/// Flag bit 1 of the cache kernels: the sine cache rather than the cosine one.
fn cache_part_flag(part: rope::CachePart) -> u32 {
    match part {
        rope::CachePart::Cos => 0,
        rope::CachePart::Sin => 2,
        // Cosines in the first half, sines in the second (vLLM; pairs are CPU-only).
        rope::CachePart::CosSin => 4,
        // Both caches whole, side by side (torchtune's Qwen2 [cos | sin]).
        rope::CachePart::CosSinHalves => 8,
    }
}

/// Which kernel computes a table, with its constants and fixed parameters.
pub(super) struct Plan {
    pub(super) shader: ShaderSource,
    pub(super) entry: &'static str,
    /// The cells one workgroup computes along columns and rows: its size, times the cells each
    /// invocation computes where a kernel loops (the sinusoidal mean's rows).
    pub(super) workgroup: [u32; 2],
    pub(super) constants: Vec<u32>,
    pub(super) params: KernelParams,
    /// The head a one-head table comes from.
    pub(super) first_head: usize,
    /// Whether the words are i32 (index tables) rather than f32 bits.
    pub(super) index: bool,
    /// The same table four columns an invocation, each invocation's words one 16-byte store
    /// (shaders/common/output_quads.wgsl): what the tiles use where the window's columns are
    /// consecutive, start at a multiple of 4 and number a multiple of 4.
    pub(super) wide: Option<(ShaderSource, &'static str)>,
}

/// A plan of real values from the first head, with no wide kernel.
fn plan(
    shader: ShaderSource,
    entry: &'static str,
    workgroup: [u32; 2],
    constants: Vec<u32>,
    params: KernelParams,
) -> Plan {
    Plan {
        shader,
        entry,
        workgroup,
        constants,
        params,
        first_head: 0,
        index: false,
        wide: None,
    }
}

/// Each frequency's turns per position, two words each.
fn turns_of(freqs: &[f64]) -> Vec<u32> {
    freqs.iter().flat_map(|&w| turns_per_step(w)).collect()
}

/// Each value split into two f32 words (high and low parts).
fn split_of(values: &[f64]) -> Vec<u32> {
    values.iter().flat_map(|&v| split_f64(v)).collect()
}

/// Per pair: the method's turns per position, then the trained limit (two words each, most
/// significant first).
fn unseen_limits(p: &crate::encoding::context::UnseenParams) -> Vec<u32> {
    p.pairs()
        .iter()
        .flat_map(|&(per_step, limit)| {
            [
                (per_step >> 32) as u32,
                per_step as u32,
                (limit >> 32) as u32,
                limit as u32,
            ]
        })
        .collect()
}

const TILE_2D: [u32; 2] = [16, 16];
const TILE_1D: [u32; 2] = [256, 1];

impl Plan {
    /// The plan for a validated spec; the kinds only the CPU engine computes are refused.
    pub(super) fn new(spec: &TableSpec, arith: Arithmetic) -> Result<Self, super::GpuError> {
        if spec.cpu_only() {
            return Err(spec.cpu_only_error());
        }
        let exact = Self::exact(spec);
        match arith {
            Arithmetic::Exact => Ok(exact),
            Arithmetic::TorchF32(mode) => exact.in_torch_f32(spec, mode),
        }
    }

    /// The plan in exact arithmetic.
    fn exact(spec: &TableSpec) -> Self {
        // Bit 1 of the flags puts the cosine first; scalar0 is what the kernel's values are
        // multiplied by: the amplitude for the table, its square for dot products.
        let sinusoidal_params = |p: &SinusoidalParams| KernelParams {
            flags: u32::from(p.layout == PairLayout::Half)
                | (u32::from(p.first == FirstOfPair::Cos) << 1),
            scalar0: p.amplitude as f32,
            position_start: p.start as u32,
            dim: p.dim as u32,
            ..Default::default()
        };
        let words_of = |turns: Vec<TurnsPerStep>| -> Vec<u32> {
            turns.iter().flat_map(|t| t.words()).collect()
        };
        let sinusoidal_turns = |p: &SinusoidalParams| words_of(p.turns());
        // The RoPE kinds' frequencies to about 104 bits, so that the shaders' 64-bit turns are
        // rounded once from the exact frequency rather than from its f64.
        let rope_turns = || words_of(spec.rope_turns().unwrap_or_default());
        // Inverse frequencies, rotary width and attention factor of a RoPE kind.
        let (theta, rotary, attention) = spec.rope_frequencies().unwrap_or_default();
        // Rotary width, pair layout and attention factor of the rotation kernels.
        let rotation_params = |layout: PairLayout, start: u64, extra_flags: u32| KernelParams {
            flags: u32::from(layout == PairLayout::Half) | extra_flags,
            position_start: start as u32,
            dim: rotary as u32,
            scalar0: attention as f32,
            ..Default::default()
        };
        match spec {
            TableSpec::Sinusoidal(p) => Plan {
                wide: Some((shaders::SINUSOIDAL_WIDE, "sinusoidal_table_wide")),
                ..plan(
                    shaders::SINUSOIDAL,
                    "sinusoidal_table",
                    TILE_2D,
                    sinusoidal_turns(p),
                    sinusoidal_params(p),
                )
            },
            TableSpec::DotDecay { params, anchor } => plan(
                shaders::SINUSOIDAL,
                "sinusoidal_dot_decay",
                TILE_1D,
                sinusoidal_turns(params),
                KernelParams {
                    extra: *anchor as u32,
                    scalar0: (params.amplitude * params.amplitude) as f32,
                    ..sinusoidal_params(params)
                },
            ),
            TableSpec::Similarity(p) => plan(
                shaders::TOEPLITZ,
                "toeplitz_fill",
                TILE_2D,
                sinusoidal_turns(p),
                KernelParams {
                    scalar0: (p.amplitude * p.amplitude) as f32,
                    ..sinusoidal_params(p)
                },
            ),
            TableSpec::RopeInvFreq { .. } => plan(
                shaders::ROPE,
                "constants_table",
                TILE_1D,
                split_of(&theta),
                KernelParams::default(),
            ),
            TableSpec::RopeAttentionFactor { .. } => plan(
                shaders::ROPE,
                "constants_table",
                TILE_1D,
                split_of(&[attention]),
                KernelParams::default(),
            ),
            TableSpec::RopeAngles { params, .. } => plan(
                shaders::ROPE,
                "rope_angles",
                TILE_2D,
                split_of(&theta),
                KernelParams {
                    position_start: params.start as u32,
                    ..Default::default()
                },
            ),
            TableSpec::RopeCache {
                params,
                layout,
                part,
                ..
            } => plan(
                shaders::ROPE,
                "rope_cache",
                TILE_2D,
                rope_turns(),
                rotation_params(*layout, params.start, cache_part_flag(*part)),
            ),
            TableSpec::RopeApply {
                input,
                layout,
                start,
                ..
            } => plan(
                shaders::ROPE,
                "rope_apply",
                TILE_2D,
                rope_turns(),
                KernelParams {
                    // The input's row width, for the rows passed through.
                    grid_w: input.ncols() as u32,
                    ..rotation_params(*layout, *start, 0)
                },
            ),
            TableSpec::RopeUnseen(p) => plan(
                shaders::ROPE,
                "rope_unseen",
                TILE_2D,
                unseen_limits(p),
                KernelParams::default(),
            ),
            TableSpec::RopeCacheError(_)
            | TableSpec::RopeScoreDrift(_)
            | TableSpec::RopeAxes(_)
            | TableSpec::Registered(_)
            | TableSpec::AtPositions(_) => {
                unreachable!("Plan::new refuses the kinds only the CPU engine computes")
            }

            TableSpec::AlibiSlopes { .. }
            | TableSpec::Alibi { .. }
            | TableSpec::AlibiWindow { .. }
            | TableSpec::AlibiKeys { .. }
            | TableSpec::Alibi2d { .. } => Self::alibi(spec),
            TableSpec::PatchDistance { .. }
            | TableSpec::SinCos2d(_)
            | TableSpec::SinCos2dResample { .. }
            | TableSpec::Rope2dAxial(_)
            | TableSpec::Rope2dMixed { .. }
            | TableSpec::PatchSimilarity(_) => Self::grid(spec),
            TableSpec::T5Buckets(_) | TableSpec::RelativeClip(_) | TableSpec::Binary(_) => {
                Self::relative(spec)
            }
        }
    }

    /// ALiBi's plans: slopes, biases (whole, a window of queries, per key) and 2D biases.
    fn alibi(spec: &TableSpec) -> Self {
        match spec {
            TableSpec::AlibiSlopes { heads } => plan(
                shaders::ROPE,
                "constants_table",
                TILE_1D,
                split_of(&alibi::slopes_unchecked(*heads)),
                KernelParams::default(),
            ),
            TableSpec::Alibi { params, head } => Plan {
                first_head: head.unwrap_or(0),
                ..plan(
                    shaders::ALIBI,
                    "alibi_bias",
                    TILE_2D,
                    split_of(&alibi::slopes_unchecked(params.heads)),
                    KernelParams {
                        flags: u32::from(params.mode == alibi::AlibiMode::Causal),
                        ..Default::default()
                    },
                )
            },
            TableSpec::AlibiWindow {
                params,
                queries,
                zero_heads,
                head,
            } => Plan {
                first_head: head.unwrap_or(0),
                ..plan(
                    shaders::ALIBI,
                    "alibi_bias",
                    TILE_2D,
                    // The heads of slope 0 after the sloped ones.
                    split_of(
                        &alibi::slopes_unchecked(params.heads)
                            .into_iter()
                            .chain(std::iter::repeat_n(0.0, *zero_heads))
                            .collect::<Vec<f64>>(),
                    ),
                    KernelParams {
                        flags: u32::from(params.mode == alibi::AlibiMode::Causal),
                        position_start: (params.seq - queries) as u32,
                        ..Default::default()
                    },
                )
            },
            TableSpec::AlibiKeys {
                heads,
                seq,
                form,
                head,
            } => Plan {
                first_head: head.unwrap_or(0),
                ..plan(
                    shaders::ALIBI,
                    "alibi_keys",
                    TILE_2D,
                    split_of(&alibi::slopes_unchecked(*heads)),
                    KernelParams {
                        // The key whose bias is 0: the first (BLOOM) or the last (MPT).
                        extra: match form {
                            alibi::AlibiForm::Bloom => 0,
                            _ => to_u32(seq - 1),
                        },
                        ..Default::default()
                    },
                )
            },
            TableSpec::Alibi2d { params, head } => Plan {
                first_head: head.unwrap_or(0),
                ..plan(
                    shaders::ALIBI,
                    "alibi_bias_2d",
                    TILE_2D,
                    split_of(&alibi::slopes_unchecked(params.heads)),
                    KernelParams {
                        grid_w: params.grid.grid_w as u32,
                        ..Default::default()
                    },
                )
            },
            _ => unreachable!("Plan::exact dispatches only its own kinds here"),
        }
    }

    /// The 2D patch tables' plans.
    fn grid(spec: &TableSpec) -> Self {
        match spec {
            TableSpec::PatchDistance { grid, metric } => plan(
                shaders::GRID,
                "patch_distance_table",
                TILE_2D,
                Vec::new(),
                KernelParams {
                    flags: match metric {
                        DistanceMetric::Euclidean => 0,
                        DistanceMetric::Manhattan => 1,
                        DistanceMetric::Chebyshev => 2,
                    },
                    grid_w: grid.grid_w as u32,
                    ..Default::default()
                },
            ),
            TableSpec::SinCos2d(p) => plan(
                shaders::GRID,
                "sincos_2d",
                TILE_2D,
                turns_of(&p.omega()),
                KernelParams {
                    // Bits 0-7: the four blocks' codes; bit 8: column raster.
                    flags: p
                        .order
                        .iter()
                        .enumerate()
                        .fold(0, |flags, (i, block)| flags | (block.code() << (2 * i)))
                        | (u32::from(p.raster == crate::encoding::grid::Raster::Columns) << 8),
                    dim: p.dim as u32,
                    grid_w: p.grid.grid_w as u32,
                    extra: to_u32(p.prefix_rows),
                    // Exact in f32: grid sides are at most 65536.
                    scalar1: p.grid.grid_h as f32,
                    ..Default::default()
                },
            ),
            TableSpec::SinCos2dResample { input, params } => {
                let (rows, cols) = params.taps();
                let pack = |axis: &AxisTaps| -> Vec<u32> {
                    axis.taps
                        .iter()
                        .flat_map(|&(i, w)| [to_u32(i), w.to_bits()])
                        .collect()
                };
                let (row_taps, col_taps) = (pack(&rows), pack(&cols));
                let header = [
                    to_u32(rows.per_output),
                    to_u32(cols.per_output),
                    to_u32(params.from.1),
                    to_u32(4 + row_taps.len()),
                ];
                plan(
                    shaders::GRID,
                    "resample_2d",
                    TILE_2D,
                    [header.as_slice(), &row_taps, &col_taps].concat(),
                    KernelParams {
                        dim: to_u32(input.ncols()),
                        grid_w: to_u32(params.to.1),
                        extra: to_u32(params.prefix_rows),
                        ..Default::default()
                    },
                )
            }
            TableSpec::Rope2dAxial(p) => plan(
                shaders::ROPE_2D,
                "rope_2d_axial",
                TILE_2D,
                split_of(&p.frequencies()),
                KernelParams {
                    dim: p.dim as u32,
                    grid_w: p.grid.grid_w as u32,
                    ..Default::default()
                },
            ),
            TableSpec::Rope2dMixed { grid, freqs } => plan(
                shaders::ROPE_2D,
                "rope_2d_mixed",
                TILE_2D,
                split_of(&freqs.iter().copied().collect::<Vec<_>>()),
                KernelParams {
                    dim: freqs.ncols() as u32,
                    grid_w: grid.grid_w as u32,
                    ..Default::default()
                },
            ),
            TableSpec::PatchSimilarity(p) => {
                let pairs = p.frequency_pairs();
                plan(
                    shaders::GRID,
                    "patch_similarity",
                    TILE_2D,
                    pairs
                        .iter()
                        .flat_map(|&(fx, fy)| {
                            let [a, b] = turns_per_step(fx);
                            let [c, d] = turns_per_step(fy);
                            [a, b, c, d]
                        })
                        .collect(),
                    KernelParams {
                        dim: pairs.len() as u32,
                        grid_w: p.grid.grid_w as u32,
                        ..Default::default()
                    },
                )
            }
            _ => unreachable!("Plan::exact dispatches only its own kinds here"),
        }
    }

    /// The index tables' plans (T5 buckets, clipped distances) and the binary code's.
    fn relative(spec: &TableSpec) -> Self {
        match spec {
            TableSpec::T5Buckets(p) => {
                let (thresholds, max_exact, per_direction) = t5_thresholds(p);
                Plan {
                    index: true,
                    ..plan(
                        shaders::RELATIVE,
                        "t5_buckets",
                        TILE_2D,
                        thresholds.clone(),
                        KernelParams {
                            flags: u32::from(p.bidirectional),
                            dim: per_direction,
                            grid_w: thresholds.len() as u32,
                            extra: max_exact,
                            ..Default::default()
                        },
                    )
                }
            }
            TableSpec::RelativeClip(p) => Plan {
                index: true,
                ..plan(
                    shaders::RELATIVE,
                    "relative_clip",
                    TILE_2D,
                    Vec::new(),
                    KernelParams {
                        extra: p.max_relative as u32,
                        ..Default::default()
                    },
                )
            },
            TableSpec::Binary(p) => plan(
                shaders::BINARY,
                "binary_table",
                TILE_2D,
                Vec::new(),
                KernelParams {
                    position_start: p.start as u32,
                    ..Default::default()
                },
            ),
            _ => unreachable!("Plan::exact dispatches only its own kinds here"),
        }
    }
}

impl Plan {
    /// The same plan in PyTorch's float32 arithmetic, for the kinds that have one: the same
    /// parameters with the torch kernels and their constants (see shaders/common/torch_f32.wgsl);
    /// a kind without such kernels is refused.
    fn in_torch_f32(self, spec: &TableSpec, mode: TorchMode) -> Result<Self, super::GpuError> {
        if matches!(
            spec,
            TableSpec::AlibiSlopes { .. } | TableSpec::AlibiKeys { .. }
        ) {
            // The same kernels, with the f32 slopes exactly as the high part: the product in
            // the per-key kernel is then torch's f32 product.
            let constants = crate::engine::torch_slopes(spec, mode)
                .iter()
                .flat_map(|&m| [(m as f32).to_bits(), 0])
                .collect();
            return Ok(Plan {
                constants,
                wide: None,
                ..self
            });
        }
        let frequencies = crate::engine::torch_frequencies(spec, mode);
        let (entry, constants) = match spec {
            TableSpec::Sinusoidal(_) => {
                ("sinusoidal_table_torch", torch_f32_constants(&frequencies))
            }
            // The f32 frequencies themselves: the high part alone.
            TableSpec::RopeInvFreq { .. } => (
                "constants_table",
                frequencies
                    .iter()
                    .flat_map(|&t| [(t as f32).to_bits(), 0])
                    .collect(),
            ),
            TableSpec::RopeAngles { .. } => {
                ("rope_angles_torch", torch_f32_constants(&frequencies))
            }
            TableSpec::RopeCache { .. } => ("rope_cache_torch", torch_f32_constants(&frequencies)),
            TableSpec::RopeApply { .. } => ("rope_apply_torch", torch_f32_constants(&frequencies)),
            // A kind whose float32 emulation has no kernel here (sincos-2d): refused, never
            // the exact plan under the float32 name.
            _ => {
                return Err(super::GpuError::CpuOnly(
                    spec.kind_name(),
                    "in --arith torch-f32, which the CPU engine emulates for it",
                ));
            }
        };
        Ok(Plan {
            entry,
            constants,
            wide: None,
            ..self
        })
    }
}

/// The bucket edges of T5: for each bucket `max_exact + b` within a direction, the smallest
/// distance that reaches it, found by bisection on the CPU engine's float32 evaluation.
fn t5_thresholds(p: &crate::encoding::relative::T5BucketParams) -> (Vec<u32>, u32, u32) {
    let per_direction = if p.bidirectional {
        p.num_buckets / 2
    } else {
        p.num_buckets
    };
    let max_exact = per_direction / 2;
    // A decoder's distances are key-behind-query offsets: bucket(-d).
    let bucket_within = |distance: u64| -> usize { p.bucket(-(distance as i64)) as usize };
    let thresholds = (0..per_direction - max_exact)
        .map(|b| {
            let target = max_exact + b;
            let (mut low, mut high) = (max_exact as u64, u64::from(u32::MAX));
            if bucket_within(high) < target {
                return u32::MAX;
            }
            // bucket_within is non-decreasing in the distance: find the first that reaches target.
            while low < high {
                let middle = low + (high - low) / 2;
                if bucket_within(middle) >= target {
                    high = middle;
                } else {
                    low = middle + 1;
                }
            }
            low as u32
        })
        .collect();
    (thresholds, max_exact as u32, per_direction as u32)
}
