//! Engines turn a [`TableSpec`] (what to compute) into a [`Table`] (the numbers).
//!
//! The CPU engine in [`cpu`] is the f64 oracle that every other engine is tested against.

pub mod blocks;
pub mod cpu;
pub mod estimate;
pub mod gpu;
mod memory;
pub mod patch_maps;
pub mod range;
pub mod reduce;
pub mod registered;
pub mod window;

use crate::encoding::PairLayout;
use crate::encoding::exact_angle::{self, DoubleF64, TurnsPerStep};
use ndarray::{Array2, ArrayD};

use crate::encoding::alibi::{Alibi2dParams, AlibiForm, AlibiParams};
use crate::encoding::binary::BinaryParams;
use crate::encoding::context::UnseenParams;
use crate::encoding::grid::{DistanceMetric, GridParams, SinCos2dParams};
use crate::encoding::relative::{RelativeClipParams, T5BucketParams};
use crate::encoding::resample::ResampleParams;
use crate::encoding::rope::{CachePart, RopeParams};
use crate::encoding::rope_scaling::RopeFrequencies;
use crate::encoding::rope2d::AxialParams;
use crate::encoding::similarity2d::PatchSimilarityParams;
use crate::encoding::sinusoidal::SinusoidalParams;
use crate::encoding::{self, ParamError};

pub use memory::{MemoryError, available_memory_bytes, human_bytes};
pub use registered::{RegisteredKind, RegisteredTable};
pub use window::{Strided, Window, WindowError};

/// One table of the contract, with everything needed to compute it.
#[derive(Debug, Clone, PartialEq)]
pub enum TableSpec {
    Sinusoidal(SinusoidalParams),
    DotDecay {
        params: SinusoidalParams,
        anchor: usize,
    },
    Similarity(SinusoidalParams),
    /// `seq` is the current sequence length, which dynamic NTK and LongRoPE depend on (0 when
    /// none is given).
    RopeInvFreq {
        dim: usize,
        base: f64,
        seq: usize,
        freqs: RopeFrequencies,
    },
    RopeAngles {
        params: RopeParams,
        freqs: RopeFrequencies,
    },
    /// `[seq, R]` cos or sin cache, times the attention factor.
    RopeCache {
        params: RopeParams,
        freqs: RopeFrequencies,
        layout: PairLayout,
        part: CachePart,
    },
    /// `[1]`: what the scaling multiplies cos and sin by.
    RopeAttentionFactor {
        dim: usize,
        base: f64,
        freqs: RopeFrequencies,
    },
    RopeApply {
        input: Array2<f64>,
        layout: PairLayout,
        base: f64,
        start: u64,
        freqs: RopeFrequencies,
    },
    /// `[L', R/2]`: 1 where a context-extension method turns pair `i` at distance `p` to an
    /// angle the model never saw in training, else 0 (see `encoding::context`).
    RopeUnseen(Box<UnseenParams>),
    AlibiSlopes {
        heads: usize,
    },
    /// `head: Some(h)` asks for that head's `[seq, seq]` slice only.
    Alibi {
        params: AlibiParams,
        head: Option<usize>,
    },
    /// `[heads, 1, seq]` (one head: `[1, seq]`): ALiBi as BLOOM or MPT store it, one bias per
    /// key that broadcasts over the queries.
    AlibiKeys {
        heads: usize,
        seq: usize,
        form: AlibiForm,
        head: Option<usize>,
    },
    /// `[heads + zero_heads, queries, seq]`: the biases of the last `queries` queries over all
    /// `seq` keys (a decoder's step with a KV cache: x-transformers, MLX's `offset`), with
    /// `zero_heads` heads of slope 0 after the sloped ones (x-transformers' unalibied heads).
    /// `head: Some(h)` asks for that head's `[queries, seq]` slice only.
    AlibiWindow {
        params: AlibiParams,
        queries: usize,
        zero_heads: usize,
        head: Option<usize>,
    },
    Alibi2d {
        params: Alibi2dParams,
        head: Option<usize>,
    },
    PatchDistance {
        grid: GridParams,
        metric: DistanceMetric,
    },
    SinCos2d(SinCos2dParams),
    /// `[prefix + grid_h * grid_w, dim]`: a position table moved to another grid as timm does.
    SinCos2dResample {
        input: Array2<f64>,
        params: ResampleParams,
    },
    Rope2dAxial(AxialParams),
    /// `freqs` is `[2, n]`: row 0 `theta_x`, row 1 `theta_y`.
    Rope2dMixed {
        grid: GridParams,
        freqs: Array2<f64>,
    },
    T5Buckets(T5BucketParams),
    RelativeClip(RelativeClipParams),
    Binary(BinaryParams),
    /// A kind that lives in a module of its own (see [`registered`]).
    Registered(registered::RegisteredTable),
    /// `[seq, pairs]` angles, or `[seq, 2 * pairs]` cos or sin, of RoPE over several position
    /// axes (Flux's per-axis RoPE, Qwen2-VL's M-RoPE): see [`encoding::rope_axes`].
    RopeAxes(Box<encoding::rope_axes::RopeAxesParams>),
    /// `[P, P]` similarity of a 2D encoding between patches (drawn by the app).
    PatchSimilarity(PatchSimilarityParams),
    /// `[seq, R/2]`: the cos cache made in a compute type, minus the exact one (the
    /// precision lab). Computed by the CPU engine only: it emulates each rounding.
    RopeCacheError(Box<encoding::precision::CacheErrorParams>),
    /// `[seq]`: a query-key score computed in a compute type, minus the exact score.
    RopeScoreDrift(encoding::precision::ScoreDriftParams),
    /// A sin/cos or RoPE table (sinusoidal, RoPE angles, caches, rotations) whose rows sit at
    /// positions given or scaled (`--positions`, `--position-scale`): see [`PositionedTable`].
    AtPositions(Box<PositionedTable>),
}

/// A table of one of the kinds [`PositionedTable::accepts`] at positions of its own: `table`
/// is laid out as it would be at positions `0 .. positions.len()` (its own start unused), and
/// row `r` holds position `positions` gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct PositionedTable {
    pub table: TableSpec,
    pub positions: encoding::positions::Positions,
}

impl PositionedTable {
    /// Whether `table`'s kind takes positions of its own: the kinds whose rows are positions.
    pub fn accepts(table: &TableSpec) -> bool {
        matches!(
            table,
            TableSpec::Sinusoidal(_)
                | TableSpec::RopeAngles { .. }
                | TableSpec::RopeCache { .. }
                | TableSpec::RopeApply { .. }
        )
    }

    fn validate(&self) -> Result<(), ParamError> {
        self.table.validate()?;
        self.positions.validate()?;
        let rows = self
            .table
            .axes()
            .and_then(|a| a.first().copied())
            .unwrap_or(0);
        if !Self::accepts(&self.table) || rows != self.positions.len() {
            return Err(ParamError::new(
                "positions",
                format!("({} values)", self.positions.len()),
                format!(
                    "give one position per row of the {} table ({rows})",
                    self.table.kind_name()
                ),
            ));
        }
        Ok(())
    }
}

/// What kind of numbers a table holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// Real values, written as `<f4` or `<f8`.
    Real,
    /// Indices, written as `<i4`.
    Index,
}

impl TableSpec {
    /// A table of a kind that lives in a module of its own.
    pub fn registered(kind: impl RegisteredKind) -> Self {
        TableSpec::Registered(RegisteredTable::new(kind))
    }

    /// Checks every parameter; the shape and the computation rely on it.
    pub fn validate(&self) -> Result<(), ParamError> {
        match self {
            TableSpec::Sinusoidal(p) | TableSpec::Similarity(p) => p.validate(),
            TableSpec::DotDecay { params, anchor } => {
                params.validate()?;
                encoding::sinusoidal::check_anchor(*anchor, params.seq)
            }
            TableSpec::RopeInvFreq {
                dim, base, freqs, ..
            }
            | TableSpec::RopeAttentionFactor { dim, base, freqs } => {
                encoding::check_even_dim("dim", *dim)?;
                freqs.validate(*dim, *base)
            }
            TableSpec::RopeAngles { params, freqs }
            | TableSpec::RopeCache { params, freqs, .. } => {
                params.validate()?;
                freqs.validate(params.dim, params.base)
            }
            TableSpec::RopeApply {
                input,
                base,
                start,
                freqs,
                ..
            } => {
                encoding::rope::check_apply_shape(input.shape())?;
                RopeParams {
                    seq: input.nrows(),
                    dim: input.ncols(),
                    base: *base,
                    start: *start,
                }
                .validate()?;
                freqs.validate(input.ncols(), *base)
            }
            TableSpec::RopeUnseen(p) => p.validate(),
            TableSpec::RopeAxes(p) => p.validate(),
            TableSpec::AlibiSlopes { heads } => {
                encoding::check_count("heads", *heads, encoding::HEADS_RANGE)
            }
            TableSpec::Alibi { params, head } => {
                params.validate()?;
                check_optional_head(*head, params.heads)
            }
            TableSpec::AlibiKeys {
                heads, seq, head, ..
            } => {
                encoding::check_count("heads", *heads, encoding::HEADS_RANGE)?;
                encoding::check_count("seq", *seq, encoding::SEQ_RANGE)?;
                check_optional_head(*head, *heads)
            }
            TableSpec::AlibiWindow {
                params,
                queries,
                zero_heads,
                head,
            } => {
                params.validate()?;
                if !(1..=params.seq).contains(queries) {
                    return Err(ParamError::new(
                        "queries",
                        queries,
                        format!(
                            "must be 1 to {} (--seq: the keys they attend to)",
                            params.seq
                        ),
                    ));
                }
                encoding::check_count("zero_heads", *zero_heads, 0..=*encoding::HEADS_RANGE.end())?;
                check_optional_head(*head, params.heads + zero_heads)
            }
            TableSpec::Alibi2d { params, head } => {
                params.validate()?;
                check_optional_head(*head, params.heads)
            }
            TableSpec::PatchDistance { grid, .. } => grid.validate(),
            TableSpec::SinCos2d(p) => p.validate(),
            TableSpec::SinCos2dResample { input, params } => params.validate(input.shape()),
            TableSpec::Rope2dAxial(p) => p.validate(),
            TableSpec::Rope2dMixed { grid, freqs } => {
                grid.validate()?;
                encoding::rope2d::check_mixed_freqs_shape(freqs.shape())
            }
            TableSpec::T5Buckets(p) => p.validate(),
            TableSpec::RelativeClip(p) => p.validate(),
            TableSpec::Binary(p) => p.validate(),
            TableSpec::Registered(t) => t.kind().validate(),
            TableSpec::PatchSimilarity(p) => p.validate(),
            TableSpec::RopeCacheError(p) => p.validate(),
            TableSpec::RopeScoreDrift(p) => p.validate_table(),
            TableSpec::AtPositions(p) => p.validate(),
        }
    }

    /// The name of the kind, as `poslab table` spells it.
    pub fn kind_name(&self) -> &'static str {
        match self {
            TableSpec::Sinusoidal(_) => "sinusoidal",
            TableSpec::DotDecay { .. } => "dot-decay",
            TableSpec::Similarity(_) => "similarity",
            TableSpec::RopeInvFreq { .. } => "rope-inv-freq",
            TableSpec::RopeAngles { .. } => "rope-angles",
            TableSpec::RopeCache {
                part: CachePart::Cos,
                ..
            } => "rope-cos",
            TableSpec::RopeCache {
                part: CachePart::Sin,
                ..
            } => "rope-sin",
            TableSpec::RopeCache {
                part: CachePart::CosSin | CachePart::CosSinHalves,
                ..
            } => "rope-cos-sin",
            TableSpec::RopeAttentionFactor { .. } => "rope-attention-factor",
            TableSpec::RopeApply { .. } => "rope-apply",
            TableSpec::RopeUnseen(_) => "rope-unseen",
            TableSpec::RopeAxes(_) => "rope-axes",
            TableSpec::AlibiSlopes { .. } => "alibi-slopes",
            TableSpec::Alibi { .. } => "alibi",
            TableSpec::AlibiKeys { .. } => "alibi",
            TableSpec::AlibiWindow { .. } => "alibi",
            TableSpec::Alibi2d { .. } => "alibi-2d",
            TableSpec::PatchDistance { .. } => "patch-distance",
            TableSpec::SinCos2d(_) => "sincos-2d",
            TableSpec::SinCos2dResample { .. } => "sincos-2d-resample",
            TableSpec::Rope2dAxial(_) => "rope-2d-axial",
            TableSpec::Rope2dMixed { .. } => "rope-2d-mixed",
            TableSpec::T5Buckets(_) => "t5-buckets",
            TableSpec::RelativeClip(_) => "relative-clip",
            TableSpec::Binary(_) => "binary",
            TableSpec::Registered(t) => t.kind().kind_name(),
            TableSpec::PatchSimilarity(_) => "patch-similarity",
            TableSpec::RopeCacheError(_) => "rope-cache-error",
            TableSpec::RopeScoreDrift(_) => "rope-score-drift",
            TableSpec::AtPositions(p) => p.table.kind_name(),
        }
    }

    /// Whether only the CPU engine computes this kind (the GPU engine refuses it).
    pub fn cpu_only(&self) -> bool {
        self.cpu_only_reason().is_some()
    }

    /// Why only the CPU engine computes this kind, for the GPU engine's refusal.
    pub fn cpu_only_reason(&self) -> Option<&'static str> {
        match self {
            TableSpec::RopeCacheError(_) | TableSpec::RopeScoreDrift(_) => {
                Some("it emulates each float32, bfloat16 and float16 rounding step by step")
            }
            TableSpec::RopeAxes(_) => Some("each token's positions come from --ids or --grid"),
            TableSpec::Registered(t) => Some(t.kind().cpu_only_reason()),
            TableSpec::AtPositions(_) => {
                Some("its positions are given or scaled (--positions, --position-scale)")
            }
            TableSpec::Rope2dAxial(p) if !p.is_plain_angles() => Some(
                "with --values, --layout, --axis-order yx or --position-scale; rope-vit's angles \
                 (the default) run on the GPU",
            ),
            TableSpec::SinCos2d(p) if !p.is_plain_grid() => {
                Some("with --position-scale; the unscaled grid runs on the GPU")
            }
            TableSpec::RopeCache { layout, part, .. } if part.is_pairs(*layout) => Some(
                "in --format pairs, whose first axis is the position; --format vllm holds the \
                 same values and runs on the GPU",
            ),
            _ => None,
        }
    }

    /// The GPU engine's refusal of a kind only the CPU engine computes.
    pub fn cpu_only_error(&self) -> gpu::GpuError {
        gpu::GpuError::CpuOnly(self.kind_name(), self.cpu_only_reason().unwrap_or_default())
    }

    pub fn value_kind(&self) -> ValueKind {
        match self {
            TableSpec::T5Buckets(_) | TableSpec::RelativeClip(_) => ValueKind::Index,
            TableSpec::Registered(t) => t.kind().value_kind(),
            _ => ValueKind::Real,
        }
    }

    /// Cosine terms summed before the table's first value can be made (a similarity table's
    /// `PE[i]·PE[j]` for every offset: `2 seq - 1` offsets of `dim / 2` pairs); 0 for the
    /// tables made value by value.
    pub fn setup_terms(&self) -> u128 {
        match self {
            TableSpec::Similarity(p) => (2 * p.seq as u128).saturating_sub(1) * (p.dim / 2) as u128,
            // Each (dy, dx) offset of the grid summed over the pairs.
            TableSpec::PatchSimilarity(p) => {
                let offsets = (2 * p.grid.grid_h as u128).saturating_sub(1)
                    * (2 * p.grid.grid_w as u128).saturating_sub(1);
                offsets * p.encoding.pairs() as u128
            }
            _ => 0,
        }
    }

    /// The options that set the table's size, for messages about tables too large.
    pub fn size_options(&self) -> &'static str {
        match self {
            TableSpec::Sinusoidal(_)
            | TableSpec::RopeAngles { .. }
            | TableSpec::RopeCache { .. }
            | TableSpec::RopeUnseen(_)
            | TableSpec::RopeCacheError(_)
            | TableSpec::Binary(_)
            | TableSpec::DotDecay { .. } => "--seq or --dim",
            TableSpec::Similarity(_)
            | TableSpec::T5Buckets(_)
            | TableSpec::RelativeClip(_)
            | TableSpec::RopeScoreDrift(_) => "--seq",
            TableSpec::RopeInvFreq { .. } | TableSpec::RopeAttentionFactor { .. } => "--dim",
            TableSpec::RopeApply { .. } => "the --input array",
            TableSpec::RopeAxes(_) => "the --ids array, --grid, --axes-dim or --dim",
            TableSpec::AlibiSlopes { .. } => "--heads",
            TableSpec::Registered(t) => t.kind().size_options(),
            TableSpec::Alibi { .. } | TableSpec::AlibiKeys { .. } => {
                "--seq or --heads (or pick one with --head)"
            }
            TableSpec::AlibiWindow { .. } => {
                "--seq, --queries or --heads (or pick one with --head)"
            }
            TableSpec::Alibi2d { .. } => "--grid-h, --grid-w or --heads (or pick one with --head)",
            TableSpec::PatchDistance { .. } | TableSpec::PatchSimilarity(_) => {
                "--grid-h or --grid-w"
            }
            TableSpec::SinCos2d(_) | TableSpec::Rope2dAxial(_) => "--grid-h, --grid-w or --dim",
            TableSpec::SinCos2dResample { .. } => "--grid-h, --grid-w or the --input array",
            TableSpec::Rope2dMixed { .. } => "--grid-h, --grid-w or the --freqs array",
            TableSpec::AtPositions(p) => match p.table {
                TableSpec::RopeApply { .. } => "the --input array",
                _ => "--positions (or --seq) or --dim",
            },
        }
    }

    /// The options that set the work the table takes, for messages about work too long: its
    /// size, and the dimension where each value sums over it.
    pub fn work_options(&self) -> &'static str {
        match self {
            TableSpec::Similarity(_) => "--seq or --dim",
            TableSpec::PatchSimilarity(_) => "--grid-h, --grid-w or --dim",
            _ => self.size_options(),
        }
    }

    /// The shape of the table, or `None` when its element count overflows `usize`.
    /// Call on a validated spec.
    pub fn shape(&self) -> Option<Vec<usize>> {
        let shape = self.axes()?;
        shape
            .iter()
            .try_fold(1usize, |n, &axis| n.checked_mul(axis))
            .map(|_| shape)
    }

    /// How many axes the table has (what a window of it is shaped by), however large it is.
    pub fn ndim(&self) -> usize {
        self.axes().map_or(0, |axes| axes.len())
    }

    /// The length of each axis, whether or not the whole table could be addressed (a window
    /// of a table too large to hold is still a window); `None` when an axis overflows.
    pub fn axes(&self) -> Option<Vec<usize>> {
        let square = |n: usize| Some(vec![n, n]);
        let patches = |g: &GridParams| g.grid_h.checked_mul(g.grid_w);
        let heads_then_square = |heads: usize, n: usize, head: Option<usize>| match head {
            Some(_) => Some(vec![n, n]),
            None => Some(vec![heads, n, n]),
        };
        let shape = match self {
            TableSpec::Sinusoidal(p) => Some(vec![p.seq, p.dim]),
            TableSpec::DotDecay { params, .. } => Some(vec![params.seq]),
            TableSpec::Similarity(p) => square(p.seq),
            TableSpec::RopeInvFreq { dim, freqs, .. } => Some(vec![freqs.rotary(*dim) / 2]),
            TableSpec::RopeAngles { params, freqs } => {
                Some(vec![params.seq, freqs.rotary(params.dim) / 2])
            }
            TableSpec::RopeCache {
                params,
                freqs,
                layout,
                part,
            } => {
                let rotary = freqs.rotary(params.dim);
                Some(if part.is_pairs(*layout) {
                    vec![params.seq, rotary / 2, 2]
                } else if *part == CachePart::CosSinHalves {
                    vec![params.seq, 2 * rotary]
                } else {
                    vec![params.seq, rotary]
                })
            }
            TableSpec::RopeAttentionFactor { .. } => Some(vec![1]),
            TableSpec::RopeApply { input, .. } => Some(input.shape().to_vec()),
            TableSpec::RopeUnseen(p) => Some(vec![p.seq, p.model.rotary() / 2]),
            TableSpec::RopeAxes(p) => Some(p.shape().to_vec()),
            TableSpec::AlibiSlopes { heads } => Some(vec![*heads]),
            TableSpec::Alibi { params, head } => heads_then_square(params.heads, params.seq, *head),
            TableSpec::AlibiKeys {
                heads, seq, head, ..
            } => match head {
                Some(_) => Some(vec![1, *seq]),
                None => Some(vec![*heads, 1, *seq]),
            },
            TableSpec::AlibiWindow {
                params,
                queries,
                zero_heads,
                head,
            } => match head {
                Some(_) => Some(vec![*queries, params.seq]),
                None => Some(vec![
                    params.heads.checked_add(*zero_heads)?,
                    *queries,
                    params.seq,
                ]),
            },
            TableSpec::Alibi2d { params, head } => {
                heads_then_square(params.heads, patches(&params.grid)?, *head)
            }
            TableSpec::PatchDistance { grid, .. } => square(patches(grid)?),
            TableSpec::SinCos2d(p) => {
                Some(vec![patches(&p.grid)?.checked_add(p.prefix_rows)?, p.dim])
            }
            TableSpec::SinCos2dResample { input, params } => {
                Some(vec![params.output_rows()?, input.ncols()])
            }
            TableSpec::Rope2dAxial(p) => Some(vec![patches(&p.grid)?, p.columns()]),
            TableSpec::Rope2dMixed { grid, freqs } => Some(vec![patches(grid)?, freqs.ncols()]),
            TableSpec::T5Buckets(p) => square(p.seq),
            TableSpec::RelativeClip(p) => square(p.seq),
            TableSpec::Binary(p) => Some(vec![p.seq, p.dim]),
            TableSpec::Registered(t) => t.kind().axes(),
            TableSpec::PatchSimilarity(p) => square(patches(&p.grid)?),
            TableSpec::RopeCacheError(p) => Some(p.shape().to_vec()),
            TableSpec::RopeScoreDrift(p) => Some(vec![p.seq]),
            TableSpec::AtPositions(p) => p.table.axes(),
        }?;
        Some(shape)
    }
}

impl TableSpec {
    /// The table seen as `[heads, rows, cols]` (a 1-D table is one row, a 2-D table one head).
    /// Call on a validated spec whose shape fits in memory.
    pub fn matrix_shape(&self) -> [usize; 3] {
        let shape = self.axes().unwrap_or_default();
        match shape.as_slice() {
            [n] => [1, 1, *n],
            [rows, cols] => [1, *rows, *cols],
            [heads, rows, cols] => [*heads, *rows, *cols],
            _ => [0, 0, 0],
        }
    }
}

/// Refuses an arithmetic a table does not have: PyTorch's float32 mode covers the tables
/// built from f32 angles.
pub fn check_arithmetic(
    spec: &TableSpec,
    arith: crate::encoding::torch_f32::Arithmetic,
) -> Result<(), EngineError> {
    let has_torch_mode = matches!(
        spec.unpositioned(),
        TableSpec::Sinusoidal(_)
            | TableSpec::RopeInvFreq { .. }
            | TableSpec::RopeAngles { .. }
            | TableSpec::RopeCache { .. }
            | TableSpec::RopeApply { .. }
            | TableSpec::RopeAxes(_)
            | TableSpec::AlibiSlopes { .. }
            | TableSpec::AlibiKeys { .. }
    ) || matches!(spec, TableSpec::SinCos2d(p) if p.is_plain_grid());
    if arith.is_torch() && !has_torch_mode {
        // timm's float32 grid has no scale to emulate.
        if matches!(spec, TableSpec::SinCos2d(_)) {
            return Err(EngineError::Arithmetic("sincos-2d with --position-scale"));
        }
        return Err(EngineError::Arithmetic(spec.kind_name()));
    }
    Ok(())
}

impl TableSpec {
    /// The RoPE inverse frequencies of a validated RoPE kind (exact, f64), its rotary width and
    /// its attention factor; `None` for other kinds.
    pub fn rope_frequencies(&self) -> Option<(Vec<f64>, usize, f64)> {
        let (dim, base, seq, freqs) = self.rope_setting()?;
        Some((
            freqs.inv_freq(dim, base, seq),
            freqs.rotary(dim),
            freqs.attention_factor(),
        ))
    }

    /// The inverse frequencies of a RoPE kind to about 104 bits, each as a fraction of a turn
    /// per position, for exact angles at any position.
    pub fn rope_exact_frequencies(&self) -> Option<Vec<DoubleF64>> {
        let (dim, base, seq, freqs) = self.rope_setting()?;
        Some(freqs.exact_inv_freq(dim, base, seq))
    }

    /// [`Self::rope_exact_frequencies`] as fractions of a turn per position.
    pub fn rope_turns(&self) -> Option<Vec<TurnsPerStep>> {
        self.rope_exact_frequencies().map(exact_angle::turns_of)
    }

    /// The table laid out at positions 0, 1, ...: itself, or the table a [`PositionedTable`]
    /// places at positions of its own (the same frequencies and columns).
    pub fn unpositioned(&self) -> &TableSpec {
        match self {
            TableSpec::AtPositions(p) => &p.table,
            table => table,
        }
    }

    /// Head width, base, current length and frequency setting of a RoPE kind. The current
    /// length (what dynamic NTK and LongRoPE read) is Hugging Face's: the largest position
    /// of the rows + 1, so rows that start late or sit at given positions are those of a
    /// sequence that long, not of one as long as the table.
    fn rope_setting(&self) -> Option<(usize, f64, usize, &RopeFrequencies)> {
        if let TableSpec::AtPositions(placed) = self {
            let (dim, base, _, freqs) = placed.table.rope_setting()?;
            return Some((dim, base, placed.positions.current_length(), freqs));
        }
        let after = |start: u64, rows: usize| {
            usize::try_from(start)
                .unwrap_or(usize::MAX)
                .saturating_add(rows)
        };
        match self {
            TableSpec::RopeInvFreq {
                dim,
                base,
                seq,
                freqs,
            } => Some((*dim, *base, *seq, freqs)),
            TableSpec::RopeAttentionFactor { dim, base, freqs } => Some((*dim, *base, 0, freqs)),
            TableSpec::RopeAngles { params, freqs }
            | TableSpec::RopeCache { params, freqs, .. } => Some((
                params.dim,
                params.base,
                after(params.start, params.seq),
                freqs,
            )),
            TableSpec::RopeApply {
                input,
                base,
                freqs,
                start,
                ..
            } => Some((input.ncols(), *base, after(*start, input.nrows()), freqs)),
            _ => None,
        }
    }
}

/// The float32 ALiBi slopes PyTorch forms for a slope or per-key table (widened to f64,
/// exactly): BLOOM's for `alibi-slopes` and `--form bloom`, MPT's for `--form mpt`. Empty for
/// other kinds.
pub fn torch_slopes(spec: &TableSpec, mode: crate::encoding::torch_f32::TorchMode) -> Vec<f64> {
    use crate::encoding::torch_f32::{bloom_slopes, mpt_slopes};
    let slopes = match spec {
        TableSpec::AlibiSlopes { heads }
        | TableSpec::AlibiKeys {
            heads,
            form: AlibiForm::Bloom | AlibiForm::Relative,
            ..
        } => bloom_slopes(*heads, mode.block),
        TableSpec::AlibiKeys {
            heads,
            form: AlibiForm::Mpt,
            ..
        } => mpt_slopes(*heads, mode.block),
        _ => Vec::new(),
    };
    slopes.into_iter().map(f64::from).collect()
}

/// The float32 frequencies PyTorch forms for a sin/cos table (widened to f64, exactly): per pair
/// of a sinusoidal table, per quarter column of a 2D sin-cos table, or the inverse frequencies of
/// a RoPE table. Empty for other kinds.
pub fn torch_frequencies(
    spec: &TableSpec,
    mode: crate::encoding::torch_f32::TorchMode,
) -> Vec<f64> {
    if let TableSpec::Sinusoidal(p) = spec.unpositioned() {
        return mode.frequencies(
            p.dim / 2,
            p.dim,
            p.base,
            p.spacing == encoding::sinusoidal::Spacing::T2t,
        );
    }
    // timm's bands 1 / base^(k / q): the exponent k / q is (2k) / (2q) rounded alike.
    if let TableSpec::SinCos2d(p) = spec {
        let quarter = p.dim / 4;
        return mode.frequencies(quarter, 2 * quarter, p.base, false);
    }
    match spec.rope_setting() {
        Some((dim, base, seq, freqs)) => freqs
            .inv_freq_torch(dim, base, seq, mode)
            .into_iter()
            .map(f64::from)
            .collect(),
        None => Vec::new(),
    }
}

/// The exact frequencies of a sin/cos table (f64), in the order of [`torch_frequencies`]: per
/// pair of a sinusoidal table, or the inverse frequencies of a RoPE table. Empty for other
/// kinds.
pub fn exact_frequencies(spec: &TableSpec) -> Vec<f64> {
    if let TableSpec::Sinusoidal(p) = spec.unpositioned() {
        return p.frequencies().to_vec();
    }
    if let TableSpec::SinCos2d(p) = spec {
        return p.omega();
    }
    spec.rope_frequencies()
        .map(|(freqs, _, _)| freqs)
        .unwrap_or_default()
}

fn check_optional_head(head: Option<usize>, heads: usize) -> Result<(), ParamError> {
    head.map_or(Ok(()), |h| encoding::alibi::check_head(h, heads))
}

/// A computed table.
#[derive(Debug, Clone, PartialEq)]
pub enum Table {
    Real(ArrayD<f64>),
    Index(ArrayD<i32>),
}

impl Table {
    /// The values as f64, indices included (for comparing and drawing).
    pub fn into_real(self) -> ArrayD<f64> {
        match self {
            Table::Real(values) => values,
            Table::Index(values) => values.mapv(f64::from),
        }
    }

    pub fn shape(&self) -> &[usize] {
        match self {
            Table::Real(a) => a.shape(),
            Table::Index(a) => a.shape(),
        }
    }

    /// How many values it holds.
    pub fn len(&self) -> usize {
        match self {
            Table::Real(a) => a.len(),
            Table::Index(a) => a.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Why an engine did not produce a table.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Param(#[from] ParamError),
    #[error(transparent)]
    Memory(#[from] MemoryError),
    #[error(transparent)]
    Window(#[from] WindowError),
    #[error(transparent)]
    Gpu(#[from] gpu::GpuError),
    #[error(
        "--arith torch-f32 is not available for {0}: it applies to sinusoidal, sincos-2d, alibi-slopes, \
         alibi --form bloom|mpt and the RoPE kinds"
    )]
    Arithmetic(&'static str),
    /// A reduction or summary with more cells than it may visit.
    #[error("{0}")]
    TooLarge(String),
}

/// The float width of real tables; index tables are always `<i4`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum RealDtype {
    /// <f4: what models store, and half the size.
    #[default]
    F32,
    /// <f8: every digit of the f64 engine.
    F64,
}

impl RealDtype {
    /// Bytes one value takes in a file.
    pub fn bytes(self) -> u64 {
        match self {
            Self::F32 => 4,
            Self::F64 => 8,
        }
    }
}
