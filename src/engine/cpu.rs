//! The CPU engine: every table in f64 on ndarray, parallel over rows with rayon.
//! It is the reference that the GPU engine and the tests compare against.

use crate::encoding::exact_angle::{self, DoubleF64, TurnsPerStep};
use ndarray::{Array1, ArrayD, IxDyn};
use rayon::prelude::*;

pub(super) use super::registered::Element;
use super::registered::Values;
use super::{EngineError, Table, TableSpec, Window};
use crate::encoding::positions::Positions;
use crate::encoding::sinusoidal::SinusoidalValues;
use crate::encoding::torch_f32::{self, Arithmetic};
use crate::encoding::{
    ParamError, alibi, binary, context, grid, relative, resample, rope, rope2d, similarity2d,
    sinusoidal,
};

/// Computes `spec` after checking its parameters and that it fits in available memory.
pub fn compute(spec: &TableSpec) -> Result<Table, EngineError> {
    spec.validate()?;
    spec.check_fits(super::available_memory_bytes())?;
    Ok(compute_validated(spec)?)
}

fn compute_validated(spec: &TableSpec) -> Result<Table, ParamError> {
    let real = |a: ndarray::ArrayD<f64>| Table::Real(a);
    Ok(match spec {
        TableSpec::Sinusoidal(p) => real(sinusoidal::table(p)?.into_dyn()),
        TableSpec::DotDecay { params, anchor } => {
            real(sinusoidal::dot_decay(params, *anchor)?.into_dyn())
        }
        TableSpec::Similarity(p) => real(sinusoidal::similarity(p)?.into_dyn()),
        // The RoPE kinds of real models and ALiBi as stored: element by element, like a
        // window of all of them.
        TableSpec::RopeInvFreq { .. }
        | TableSpec::RopeAngles { .. }
        | TableSpec::RopeCache { .. }
        | TableSpec::RopeAttentionFactor { .. }
        | TableSpec::RopeApply { .. }
        | TableSpec::RopeUnseen(_)
        | TableSpec::RopeCacheError(_)
        | TableSpec::RopeScoreDrift(_)
        | TableSpec::AlibiKeys { .. }
        | TableSpec::AlibiWindow { .. }
        | TableSpec::RopeAxes(_)
        | TableSpec::AtPositions(_)
        | TableSpec::SinCos2dResample { .. } => {
            let window = Window::all(spec.matrix_shape());
            let ndim = spec.ndim();
            let Values::Real(value) = element_values(spec, &window) else {
                unreachable!("RoPE, ALiBi and resampled tables are real")
            };
            real(fill_window(&window, &window.output_shape(ndim), &value))
        }
        TableSpec::AlibiSlopes { heads } => real(Array1::from(alibi::slopes(*heads)?).into_dyn()),
        TableSpec::Alibi { params, head } => match head {
            Some(h) => real(alibi::bias_head(params, *h)?.into_dyn()),
            None => real(alibi::bias(params)?.into_dyn()),
        },
        TableSpec::Alibi2d { params, head } => match head {
            Some(h) => real(alibi::bias_2d_head(params, *h)?.into_dyn()),
            None => real(alibi::bias_2d(params)?.into_dyn()),
        },
        TableSpec::PatchDistance { grid, metric } => {
            real(grid::patch_distance(grid, *metric)?.into_dyn())
        }
        TableSpec::SinCos2d(p) => real(grid::sincos_2d(p)?.into_dyn()),
        TableSpec::Rope2dAxial(p) => real(rope2d::axial_angles(p)?.into_dyn()),
        TableSpec::Rope2dMixed { grid, freqs } => {
            real(rope2d::mixed_angles(grid, freqs.view())?.into_dyn())
        }
        TableSpec::T5Buckets(p) => Table::Index(relative::t5_buckets(p)?.into_dyn()),
        TableSpec::RelativeClip(p) => Table::Index(relative::relative_clip(p)?.into_dyn()),
        TableSpec::Registered(_) => {
            let window = Window::all(spec.matrix_shape());
            let shape = window.output_shape(spec.ndim());
            match element_values(spec, &window) {
                Values::Real(value) => real(fill_window(&window, &shape, &value)),
                Values::Index(value) => Table::Index(fill_window(&window, &shape, &value)),
            }
        }
        TableSpec::Binary(p) => real(binary::table(p)?.into_dyn()),
        TableSpec::PatchSimilarity(p) => real(similarity2d::table(p)?.into_dyn()),
    })
}

/// Computes `spec` in `arith`: exact, or as PyTorch's float32 computes it (for sinusoidal,
/// rope-inv-freq, rope-angles and rope-apply).
pub fn compute_arith(spec: &TableSpec, arith: Arithmetic) -> Result<Table, EngineError> {
    match arith {
        Arithmetic::Exact => compute(spec),
        Arithmetic::TorchF32(_) => {
            spec.validate()?;
            spec.check_fits(super::available_memory_bytes())?;
            let window = Window::all(spec.matrix_shape());
            compute_window_arith(spec, &window, arith)
        }
    }
}

/// [`compute_window`] in `arith`.
pub fn compute_window_arith(
    spec: &TableSpec,
    window: &Window,
    arith: Arithmetic,
) -> Result<Table, EngineError> {
    if arith == Arithmetic::Exact {
        return compute_window(spec, window);
    }
    spec.validate()?;
    super::check_arithmetic(spec, arith)?;
    let ndim = spec.ndim();
    window.check(spec.matrix_shape())?;
    let Arithmetic::TorchF32(mode) = arith else {
        unreachable!("exact arithmetic returned above")
    };
    let value = torch_f32_values(spec, mode);
    Ok(Table::Real(fill_window(
        window,
        &window.output_shape(ndim),
        &value,
    )))
}

/// A sin/cos table (sinusoidal, RoPE angles, caches, rotations) in float32 arithmetic from
/// the float32 frequencies `freqs` given (one per pair, widened to f64), whatever library
/// formed them: angles `f32(p) * freq` rounded once, sin and cos rounded to f32, as
/// `--arith torch-f32` computes them from PyTorch's own frequencies.
pub fn compute_with_float32_frequencies(
    spec: &TableSpec,
    freqs: Vec<f64>,
) -> Result<Table, EngineError> {
    spec.validate()?;
    if !(super::PositionedTable::accepts(spec.unpositioned())
        || matches!(spec, TableSpec::SinCos2d(_)))
        || freqs.len() != super::exact_frequencies(spec).len()
    {
        return Err(EngineError::Arithmetic(spec.kind_name()));
    }
    spec.check_fits(super::available_memory_bytes())?;
    let ndim = spec.ndim();
    let window = Window::all(spec.matrix_shape());
    let value = float32_values(spec, freqs, Arithmetic::TORCH_MODE);
    Ok(Table::Real(fill_window(
        &window,
        &window.output_shape(ndim),
        &value,
    )))
}

/// The element function of a validated spec in PyTorch's float32 arithmetic.
fn torch_f32_values(spec: &TableSpec, mode: torch_f32::TorchMode) -> Element<'_, f64> {
    // The float32 frequencies, formed as torch forms them.
    float32_values(spec, super::torch_frequencies(spec, mode), mode)
}

/// [`torch_f32_values`] from the float32 frequencies `freqs`; `mode` forms ALiBi's slopes.
fn float32_values(
    spec: &TableSpec,
    freqs: Vec<f64>,
    mode: torch_f32::TorchMode,
) -> Element<'_, f64> {
    match spec {
        TableSpec::Sinusoidal(_)
        | TableSpec::RopeAngles { .. }
        | TableSpec::RopeCache { .. }
        | TableSpec::RopeApply { .. } => float32_sin_cos_element(spec, freqs, None),
        TableSpec::AtPositions(p) => float32_sin_cos_element(&p.table, freqs, Some(&p.positions)),
        TableSpec::RopeInvFreq { .. } => Box::new(move |_, _, i| freqs[i]),
        TableSpec::SinCos2d(p) => Box::new(move |_, row, col| p.value_f32(&freqs, row, col)),
        // Its frequencies per axis (or over the width), formed as PyTorch forms them.
        TableSpec::RopeAxes(p) => {
            let pairs = p.torch_pairs(mode.block);
            Box::new(move |_, row, col| crate::encoding::rope_axes::value_f32(p, &pairs, row, col))
        }
        TableSpec::AlibiSlopes { .. } => {
            let slopes = super::torch_slopes(spec, mode);
            Box::new(move |_, _, h| slopes[h])
        }
        // `slopes[..., None] * arange_tensor`: the f32 product of the slope and the offset.
        TableSpec::AlibiKeys {
            seq, form, head, ..
        } => {
            let slopes = super::torch_slopes(spec, mode);
            let (seq, form, first) = (*seq, *form, head.unwrap_or(0));
            Box::new(move |h, _, j| {
                let offset = alibi::key_bias(1.0, form, j, seq) as f32;
                f64::from(slopes[first + h] as f32 * offset)
            })
        }
        // check_arithmetic admits only the kinds above.
        _ => Box::new(|_, _, _| f64::NAN),
    }
}

/// Computes only `window` of the table: what a view shows at screen resolution.
pub fn compute_window(spec: &TableSpec, window: &Window) -> Result<Table, EngineError> {
    spec.validate()?;
    let ndim = spec.ndim();
    window.check(spec.matrix_shape())?;
    let shape = window.output_shape(ndim);
    Ok(match element_values(spec, window) {
        Values::Real(value) => Table::Real(fill_window(window, &shape, &value)),
        Values::Index(value) => Table::Index(fill_window(window, &shape, &value)),
    })
}

/// What a CPU block is computed from.
pub(super) enum CpuSource<'a> {
    /// The sinusoidal table, pair by pair.
    Sinusoidal(SinusoidalValues),
    Real(Element<'a, f64>),
    Index(Element<'a, i32>),
}

/// What the blocks of a table are computed from, set up once for the whole table (the offsets
/// of a similarity table span all of it).
pub(super) fn block_source(
    spec: &TableSpec,
    arith: Arithmetic,
) -> Result<CpuSource<'_>, EngineError> {
    spec.validate()?;
    super::check_arithmetic(spec, arith)?;
    let whole = Window::all(spec.matrix_shape());
    Ok(match (spec, arith) {
        (TableSpec::Sinusoidal(p), Arithmetic::Exact) => {
            CpuSource::Sinusoidal(sinusoidal_values(p))
        }
        (_, Arithmetic::TorchF32(mode)) => CpuSource::Real(torch_f32_values(spec, mode)),
        (_, Arithmetic::Exact) => match element_values(spec, &whole) {
            Values::Real(value) => CpuSource::Real(value),
            Values::Index(value) => CpuSource::Index(value),
        },
    })
}

impl CpuSource<'_> {
    /// The block of `window` (whole rows, or part of one row), shaped as a window of a table
    /// of `ndim` axes.
    pub(super) fn block(&self, window: &Window, ndim: usize) -> Table {
        let shape = window.output_shape(ndim);
        match self {
            CpuSource::Sinusoidal(values) if window.cols.len() == values.params().dim => {
                let mut rows = ndarray::Array2::zeros((window.rows.len(), window.cols.len()));
                values.fill_rows(window.rows.start, rows.view_mut());
                Table::Real(
                    rows.into_shape_with_order(IxDyn(&shape))
                        .expect("a block of whole rows has the window's shape"),
                )
            }
            CpuSource::Sinusoidal(values) => {
                Table::Real(fill_window(window, &shape, &|_, row, col| {
                    values.value(row, col)
                }))
            }
            CpuSource::Real(value) => Table::Real(fill_window(window, &shape, value)),
            CpuSource::Index(value) => Table::Index(fill_window(window, &shape, value)),
        }
    }
}

/// A similarity table's element: `PE[i] . PE[j]` depends on `j - i` alone, so the sums are
/// made once per offset the window meets.
fn similarity_element<'a>(p: &sinusoidal::SinusoidalParams, window: &Window) -> Element<'a, f64> {
    let values = sinusoidal_values(p);
    let lowest = window.cols.start as i64 - window.rows.last() as i64;
    let highest = window.cols.last() as i64 - window.rows.start as i64;
    let span = (highest - lowest + 1) as usize;
    if window.rows.len().saturating_mul(window.cols.len()) < span {
        // A sampled window (a preview of a million rows) meets few of the offsets
        // between its extremes: only those it meets, not two million sums of d/2
        // cosines.
        let mut offsets: Vec<i64> = (0..window.rows.len())
            .flat_map(|y| {
                let row = window.rows.at(y) as i64;
                (0..window.cols.len()).map(move |x| window.cols.at(x) as i64 - row)
            })
            .collect();
        offsets.sort_unstable();
        offsets.dedup();
        let sums: Vec<f64> = offsets
            .par_iter()
            .map(|&k| values.dot_at_offset(k))
            .collect();
        Box::new(move |_, i, j| {
            let k = j as i64 - i as i64;
            offsets
                .binary_search(&k)
                .map_or(f64::NAN, |index| sums[index])
        })
    } else {
        let by_offset = sinusoidal::offsets_table(&values, lowest, highest);
        Box::new(move |_, i, j| by_offset[(j as i64 - i as i64 - lowest) as usize])
    }
}

/// The element function of a validated spec, with whatever it needs computed once.
fn element_values<'a>(spec: &'a TableSpec, window: &Window) -> Values<'a> {
    let real = |f: Element<'a, f64>| Values::Real(f);
    match spec {
        TableSpec::Sinusoidal(_)
        | TableSpec::RopeAngles { .. }
        | TableSpec::RopeCache { .. }
        | TableSpec::RopeApply { .. } => real(sin_cos_element(spec, None, spec)),
        TableSpec::AtPositions(p) => real(sin_cos_element(&p.table, Some(&p.positions), spec)),
        TableSpec::DotDecay { params, anchor } => {
            let values = sinusoidal_values(params);
            let anchor = *anchor as i64;
            real(Box::new(move |_, _, j| {
                values.dot_at_offset(j as i64 - anchor)
            }))
        }
        TableSpec::RopeCacheError(p) => {
            let prepared = p.prepared();
            real(Box::new(move |_, row, pair| prepared.value(row, pair)))
        }
        TableSpec::RopeScoreDrift(p) => {
            let prepared = p.prepared();
            real(Box::new(move |_, _, n| prepared.value(n)))
        }
        TableSpec::RopeUnseen(p) => {
            let pairs = p.pairs();
            real(Box::new(move |_, distance, i| {
                let (per_step, limit) = pairs[i];
                f64::from(u8::from(context::is_unseen(
                    distance as u64,
                    per_step,
                    limit,
                )))
            }))
        }
        TableSpec::Similarity(p) => real(similarity_element(p, window)),
        TableSpec::RopeInvFreq { .. } => {
            let (theta, _, _) = rope_frequencies(spec);
            real(Box::new(move |_, _, i| theta[i]))
        }
        TableSpec::RopeAttentionFactor { .. } => {
            let (_, _, attention) = rope_frequencies(spec);
            real(Box::new(move |_, _, _| attention))
        }
        TableSpec::AlibiSlopes { heads } => {
            let slopes = alibi::slopes_unchecked(*heads);
            real(Box::new(move |_, _, h| slopes[h]))
        }
        TableSpec::AlibiKeys {
            heads,
            seq,
            form,
            head,
        } => {
            let slopes = alibi::slopes_unchecked(*heads);
            let (seq, form, first) = (*seq, *form, head.unwrap_or(0));
            real(Box::new(move |h, _, j| {
                alibi::key_bias(slopes[first + h], form, j, seq)
            }))
        }
        TableSpec::RopeAxes(p) => {
            let pairs = p.pairs();
            real(Box::new(move |_, row, col| {
                crate::encoding::rope_axes::value(p, &pairs, row, col)
            }))
        }
        TableSpec::AlibiWindow {
            params,
            queries,
            head,
            ..
        } => {
            let slopes = alibi::slopes_unchecked(params.heads);
            let (mode, first_query, first) = (params.mode, params.seq - queries, head.unwrap_or(0));
            real(Box::new(move |h, row, key| {
                // The heads after the sloped ones have slope 0.
                let slope = slopes.get(first + h).copied().unwrap_or(0.0);
                alibi::bias_value(slope, mode, first_query + row, key)
            }))
        }
        TableSpec::Alibi { params, head } => {
            let slopes = alibi::slopes_unchecked(params.heads);
            let (mode, first) = (params.mode, head.unwrap_or(0));
            real(Box::new(move |h, query, key| {
                alibi::bias_value(slopes[first + h], mode, query, key)
            }))
        }
        TableSpec::Alibi2d { params, head } => {
            let slopes = alibi::slopes_unchecked(params.heads);
            let (grid, first) = (params.grid, head.unwrap_or(0));
            real(Box::new(move |h, query, key| {
                alibi::bias_2d_value(slopes[first + h], &grid, query, key)
            }))
        }
        TableSpec::PatchDistance { grid, metric } => {
            let (grid, metric) = (*grid, *metric);
            real(Box::new(move |_, a, b| grid.distance(a, b, metric)))
        }
        TableSpec::SinCos2d(p) => {
            let omega = p.omega();
            real(Box::new(move |_, patch, col| p.value(&omega, patch, col)))
        }
        TableSpec::SinCos2dResample { input, params } => {
            let taps = params.taps();
            real(Box::new(move |_, row, col| {
                resample::resampled_value(input.view(), params, &taps, row, col)
            }))
        }
        TableSpec::Rope2dAxial(p) => {
            let freqs = p.frequencies();
            real(Box::new(move |_, patch, col| p.value(&freqs, patch, col)))
        }
        TableSpec::Rope2dMixed { grid, freqs } => real(Box::new(move |_, patch, k| {
            rope2d::mixed_value(grid, freqs.view(), patch, k)
        })),
        TableSpec::T5Buckets(p) => {
            Values::Index(Box::new(move |_, i, j| p.bucket(j as i64 - i as i64)))
        }
        TableSpec::RelativeClip(p) => {
            Values::Index(Box::new(move |_, i, j| p.index(j as i64 - i as i64)))
        }
        TableSpec::Registered(t) => t.kind().values(),
        TableSpec::Binary(p) => real(Box::new(move |_, row, bit| p.value(row, bit))),
        TableSpec::PatchSimilarity(p) => {
            let offsets = crate::encoding::similarity2d::OffsetSimilarities::shared(p);
            real(Box::new(move |_, query, key| offsets.value(query, key)))
        }
    }
}

/// Frequencies of a validated spec (validation is what makes the `expect`s unreachable).
/// The exact angles of a sin/cos table's rows: at the table's own positions `start, start +
/// 1, ...` (integer turns, exact below 2^53), or at the positions a [`super::PositionedTable`]
/// gives it.
struct ExactAngles<'a> {
    w: Vec<DoubleF64>,
    turns: Vec<TurnsPerStep>,
    start: u64,
    placed: Option<&'a Positions>,
}

impl ExactAngles<'_> {
    /// Frequency `pair`'s angle at row `row` in 2^-128 turn.
    fn turns(&self, pair: usize, row: usize) -> u128 {
        match self.placed {
            Some(positions) => positions.turns(row, self.w[pair]),
            None => self.turns[pair].at(self.start + row as u64),
        }
    }

    /// Frequency `pair`'s angle at row `row` in radians, rounded once.
    fn radians(&self, pair: usize, row: usize) -> f64 {
        match self.placed {
            Some(positions) => positions.angle(row, self.w[pair]),
            None => exact_angle::angle(self.start + row as u64, self.w[pair]),
        }
    }
}

/// The first position of a sin/cos table at its own positions.
fn own_start(spec: &TableSpec) -> u64 {
    match spec {
        TableSpec::Sinusoidal(p) => p.start,
        TableSpec::RopeAngles { params, .. } | TableSpec::RopeCache { params, .. } => params.start,
        TableSpec::RopeApply { start, .. } => *start,
        _ => 0,
    }
}

/// The exact element function of a validated sin/cos table (sinusoidal, RoPE angles, caches,
/// rotations), at its own positions or at `placed`. A RoPE table's frequencies and attention
/// factor are those of `setting`: the table itself, or the positioned table around it (whose
/// current length its positions decide).
fn sin_cos_element<'a>(
    spec: &'a TableSpec,
    placed: Option<&'a Positions>,
    setting: &'a TableSpec,
) -> Element<'a, f64> {
    let w = match spec {
        TableSpec::Sinusoidal(p) => p.exact_frequencies(),
        _ => exact_rope_frequencies(setting),
    };
    let angles = ExactAngles {
        turns: exact_angle::turns_of(w.iter().copied()),
        w,
        start: own_start(spec),
        placed,
    };
    match spec {
        TableSpec::Sinusoidal(p) => Box::new(move |_, row, col| {
            let (pair, is_cos) = p.column_pair(col);
            let (sin, cos) = exact_angle::sin_cos(angles.turns(pair, row));
            p.amplitude * if is_cos { cos } else { sin }
        }),
        TableSpec::RopeAngles { .. } => Box::new(move |_, row, i| angles.radians(i, row)),
        TableSpec::RopeCache { layout, part, .. } => {
            let (_, rotary, attention) = rope_frequencies(setting);
            let (layout, part) = (*layout, *part);
            Box::new(move |head, row, col| {
                let (row, pair, is_sin) =
                    rope::cache_element(layout, part, rotary, (head, row, col));
                let (sin, cos) = exact_angle::sin_cos(angles.turns(pair, row));
                attention * if is_sin { sin } else { cos }
            })
        }
        TableSpec::RopeApply { input, layout, .. } => {
            let (_, rotary, attention) = rope_frequencies(setting);
            let layout = *layout;
            Box::new(move |_, row, col| {
                rope::rotated_element(input.view(), layout, rotary, row, col, |a, b, i| {
                    let (sin, cos) = exact_angle::sin_cos(angles.turns(i, row));
                    let (x, y) = rope::rotate_by(a, b, sin, cos);
                    (attention * x, attention * y)
                })
            })
        }
        // PositionedTable::accepts admits only the kinds above.
        _ => Box::new(|_, _, _| f64::NAN),
    }
}

/// [`sin_cos_element`] in float32 from the float32 frequencies `freqs` (one per pair, widened
/// to f64): each angle `f32(p) * freq` rounded once (at `placed`, as
/// [`Positions::angle_f32`] scales it), sin and cos rounded to f32.
fn float32_sin_cos_element<'a>(
    spec: &'a TableSpec,
    freqs: Vec<f64>,
    placed: Option<&'a Positions>,
) -> Element<'a, f64> {
    let start = own_start(spec);
    let angle = move |row: usize, freq: f64| match placed {
        Some(positions) => positions.angle_f32(row, freq),
        None => torch_f32::angle(start + row as u64, freq),
    };
    match spec {
        TableSpec::Sinusoidal(p) => Box::new(move |_, row, col| {
            let (pair, is_cos) = p.column_pair(col);
            let (sin, cos) = torch_f32::sin_cos(angle(row, freqs[pair]));
            // `pe * scale` (x-transformers, MLX): the f32 product, rounded once.
            f64::from(p.amplitude as f32 * if is_cos { cos } else { sin })
        }),
        TableSpec::RopeAngles { .. } => Box::new(move |_, row, i| f64::from(angle(row, freqs[i]))),
        TableSpec::RopeCache {
            params,
            freqs: setting,
            layout,
            part,
        } => {
            let rotary = setting.rotary(params.dim);
            // `emb.cos() * attention_scaling`: the f32 product, rounded.
            let attention = setting.attention_factor() as f32;
            Box::new(move |head, row, col| {
                let (row, pair, is_sin) =
                    rope::cache_element(*layout, *part, rotary, (head, row, col));
                let (sin, cos) = torch_f32::sin_cos(angle(row, freqs[pair]));
                f64::from(if is_sin { sin } else { cos } * attention)
            })
        }
        TableSpec::RopeApply {
            input,
            layout,
            freqs: setting,
            ..
        } => {
            let rotary = setting.rotary(input.ncols());
            let attention = setting.attention_factor() as f32;
            Box::new(move |_, row, col| {
                rope::rotated_element(input.view(), *layout, rotary, row, col, |a, b, i| {
                    torch_f32::rotate_pair(a, b, angle(row, freqs[i]), attention)
                })
            })
        }
        // PositionedTable::accepts admits only the kinds above.
        _ => Box::new(|_, _, _| f64::NAN),
    }
}

fn sinusoidal_values(p: &sinusoidal::SinusoidalParams) -> SinusoidalValues {
    SinusoidalValues::new(p).expect("validated sinusoidal parameters")
}

/// A validated RoPE spec's inverse frequencies to about 104 bits.
fn exact_rope_frequencies(spec: &TableSpec) -> Vec<DoubleF64> {
    spec.rope_exact_frequencies()
        .expect("a RoPE spec has RoPE frequencies")
}

/// Inverse frequencies, rotary width and attention factor of a validated RoPE spec.
fn rope_frequencies(spec: &TableSpec) -> (Vec<f64>, usize, f64) {
    spec.rope_frequencies()
        .expect("a RoPE spec has RoPE frequencies")
}

/// Evaluates `value` at every `[head, row, col]` of the window, in parallel over rows.
fn fill_window<T: Copy + Default + Send + Sync>(
    window: &Window,
    shape: &[usize],
    value: &(dyn Fn(usize, usize, usize) -> T + Sync),
) -> ArrayD<T> {
    let cols = window.cols.len();
    let rows = window.rows.len();
    let mut data = vec![T::default(); window.len()];
    data.par_chunks_mut(cols.max(1))
        .enumerate()
        .for_each(|(line, out)| {
            let (h, y) = (line / rows, line % rows);
            let (head, row) = (window.heads.at(h), window.rows.at(y));
            for (x, slot) in out.iter_mut().enumerate() {
                *slot = value(head, row, window.cols.at(x));
            }
        });
    ArrayD::from_shape_vec(IxDyn(shape), data).unwrap_or_else(|error| {
        panic!(
            "the window {window:?} has the shape {shape:?}, {} values: {error}",
            window.len()
        )
    })
}
