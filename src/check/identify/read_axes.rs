//! RoPE over several position axes, given each token's positions: which axis turns each pair,
//! hence the scheme (Flux's per-axis RoPE or Qwen2-VL's M-RoPE) and its widths or sections.

use super::*;
use crate::encoding::rope_axes::{AxesSplit, AxesValues, RopeAxesParams, section_axes};

/// Bases tried for a table whose base cannot be read off its values (cos and sin): those of
/// the models that use several axes (Flux, CogVideoX and Lumina 10000; Qwen2-VL and Qwen2.5-VL
/// 10^6; HunyuanVideo 256) and the usual RoPE ones.
const ROUND_THETAS: [f64; 9] = [
    10_000.0,
    1_000_000.0,
    256.0,
    500_000.0,
    100_000.0,
    100.0,
    1000.0,
    50_000.0,
    5_000_000.0,
];

/// How far a cos or sin column may be from a pair's values and still be read as turned by
/// that axis: room for float32 angles at positions of a few thousand; a wrong axis is off by
/// far more. Angles are held to this much of [`SCREEN`] of their size.
const SCREEN: f64 = 2e-2;
const SCREEN_ANGLES: f64 = 2e-4;

/// Tries every layout the file's width allows (angles; cos or sin, interleaved or half), and
/// for each, both schemes at the bases above (and, for angles, at the base the slowest pairs
/// give): each pair is given the axis whose positions explain its column, and a split whose
/// axes come in order is compared with the file as a whole.
pub(super) fn rope_axes(search: &mut Search, ids: &Array2<f64>) {
    let Ok(table) = search.table.clone().into_dimensionality::<Ix2>() else {
        return;
    };
    let (seq, width) = table.dim();
    if seq != ids.nrows() || ids.ncols() == 0 || width == 0 {
        return;
    }
    let mut readings = vec![(AxesValues::Angles, PairLayout::Interleaved, width)];
    if width.is_multiple_of(2) {
        for values in [AxesValues::Cos, AxesValues::Sin] {
            for layout in [PairLayout::Interleaved, PairLayout::Half] {
                readings.push((values, layout, width / 2));
            }
        }
    }
    for (values, layout, pairs) in readings {
        let Some(columns) = pair_columns(&table, values, layout, pairs) else {
            continue;
        };
        for split in splits(&columns, ids, values, pairs) {
            let params = RopeAxesParams {
                ids: ids.clone(),
                theta: split.1,
                split: split.0,
                values,
                layout,
            };
            consider_axes(search, params);
        }
    }
}

/// Each pair's column of the file (`[seq, pairs]`): the angles, or one of the two columns a
/// cos or sin table repeats each pair in, when the two agree.
fn pair_columns(
    table: &Array2<f64>,
    values: AxesValues,
    layout: PairLayout,
    pairs: usize,
) -> Option<Array2<f64>> {
    if values == AxesValues::Angles {
        return Some(table.clone());
    }
    let columns = |i: usize| match layout {
        PairLayout::Interleaved => (2 * i, 2 * i + 1),
        PairLayout::Half => (i, i + pairs),
    };
    let repeated = (0..pairs).all(|i| {
        let (a, b) = columns(i);
        table
            .column(a)
            .iter()
            .zip(table.column(b))
            .all(|(x, y)| (x - y).abs() <= 1e-6 * x.abs().max(1.0))
    });
    if !repeated {
        return None;
    }
    Some(Array2::from_shape_fn((table.nrows(), pairs), |(r, i)| {
        table[[r, columns(i).0]]
    }))
}

/// The splits (with their base) whose pairs the columns are turned by, axes in order.
fn splits(
    columns: &Array2<f64>,
    ids: &Array2<f64>,
    values: AxesValues,
    pairs: usize,
) -> Vec<(AxesSplit, f64)> {
    let axes = ids.ncols();
    let mut thetas: Vec<f64> = ROUND_THETAS.to_vec();
    let mut found = Vec::new();
    // M-RoPE: one RoPE of 2 * pairs dimensions; with angles, its base from pair 1.
    if values == AxesValues::Angles
        && pairs >= 2
        && let Some(w) = fitted_rate(columns.column(1), ids)
    {
        thetas.push(w.powf(-(pairs as f64)));
    }
    for &theta in &thetas {
        let freqs: Vec<f64> = (0..pairs)
            .map(|i| theta.powf(-((2 * i) as f64) / (2 * pairs) as f64))
            .collect();
        if let Some(axis_of) = axes_in_order(columns, ids, values, &freqs)
            && axes > 1
        {
            let sections = sections_of(&axis_of, axes);
            if !sections.contains(&0) {
                found.push((
                    AxesSplit::MropeSection {
                        dim: 2 * pairs,
                        sections,
                    },
                    theta,
                ));
                break;
            }
        }
    }
    // Per-axis RoPE: blocks in axis order, each starting at frequency 1 on its own axis.
    let starts: Option<Vec<usize>> = (|| {
        let mut starts = vec![0];
        for axis in 1..axes {
            let from = *starts.last()? + 1;
            let start = (from..pairs).find(|&j| {
                explains(columns.column(j), ids.column(axis), 1.0, values)
                    && !explains(columns.column(j), ids.column(axis - 1), 1.0, values)
            })?;
            starts.push(start);
        }
        Some(starts)
    })();
    let first_is_axis_0 = explains(columns.column(0), ids.column(0), 1.0, values);
    if let Some(starts) = starts.filter(|s| first_is_axis_0 && s.len() == axes) {
        let dims: Vec<usize> = starts
            .iter()
            .zip(starts.iter().skip(1).chain(std::iter::once(&pairs)))
            .map(|(a, b)| 2 * (b - a))
            .collect();
        let mut thetas: Vec<f64> = ROUND_THETAS.to_vec();
        let first_axis = ids.slice(ndarray::s![.., 0..1]).to_owned();
        if values == AxesValues::Angles
            && dims[0] >= 4
            && let Some(w) = fitted_rate(columns.column(1), &first_axis)
        {
            thetas.push(w.powf(-((dims[0] / 2) as f64)));
        }
        for theta in thetas {
            let freqs: Vec<f64> = dims
                .iter()
                .flat_map(|&d| (0..d / 2).map(move |i| theta.powf(-((2 * i) as f64) / d as f64)))
                .collect();
            let axis_of: Vec<usize> = dims
                .iter()
                .enumerate()
                .flat_map(|(axis, &d)| std::iter::repeat_n(axis, d / 2))
                .collect();
            let fits = (0..pairs)
                .all(|j| explains(columns.column(j), ids.column(axis_of[j]), freqs[j], values));
            if fits {
                found.push((AxesSplit::AxesDim(dims), theta));
                break;
            }
        }
    }
    found
}

/// Each pair's axis, when for every pair some axis explains its column and the axes never go
/// back (sections in axis order): the axis that explains it most closely (a slow pair turns
/// little on any axis, and only the right one fits to float32 rounding), the one the pair
/// before it used where several fit equally (their positions agree on every token).
fn axes_in_order(
    columns: &Array2<f64>,
    ids: &Array2<f64>,
    values: AxesValues,
    freqs: &[f64],
) -> Option<Vec<usize>> {
    let mut current = 0;
    let mut axis_of = Vec::with_capacity(freqs.len());
    for (j, &w) in freqs.iter().enumerate() {
        let errors: Vec<(usize, f64)> = (current..ids.ncols())
            .filter(|&k| explains(columns.column(j), ids.column(k), w, values))
            .map(|k| (k, misfit(columns.column(j), ids.column(k), w, values)))
            .collect();
        let least = errors.iter().map(|&(_, e)| e).fold(f64::INFINITY, f64::min);
        let (axis, _) = errors
            .into_iter()
            .find(|&(_, e)| e <= least * 1.5 + 1e-12)?;
        axis_of.push(axis);
        current = axis;
    }
    // Sections that leave an axis out are not M-RoPE's.
    (section_axes(&sections_of(&axis_of, ids.ncols())) == axis_of).then_some(axis_of)
}

fn sections_of(axis_of: &[usize], axes: usize) -> Vec<usize> {
    let mut sections = vec![0; axes];
    for &axis in axis_of {
        sections[axis] += 1;
    }
    sections
}

/// Whether `column` is `w · ids` (angles), or its cosine or sine, to [`SCREEN`].
fn explains(
    column: ndarray::ArrayView1<f64>,
    ids: ndarray::ArrayView1<f64>,
    w: f64,
    values: AxesValues,
) -> bool {
    column.iter().zip(ids).all(|(&v, &p)| {
        let allowed = match values {
            AxesValues::Angles => SCREEN_ANGLES * (p * w).abs().max(1.0),
            AxesValues::Cos | AxesValues::Sin => SCREEN,
        };
        (v - expected(p, w, values)).abs() <= allowed
    })
}

/// The largest difference between `column` and `w · ids` (or its cosine or sine).
fn misfit(
    column: ndarray::ArrayView1<f64>,
    ids: ndarray::ArrayView1<f64>,
    w: f64,
    values: AxesValues,
) -> f64 {
    column
        .iter()
        .zip(ids)
        .map(|(&v, &p)| (v - expected(p, w, values)).abs())
        .fold(0.0, f64::max)
}

/// A pair's value at position `p` turning `w` a step: its angle, cosine or sine.
fn expected(p: f64, w: f64, values: AxesValues) -> f64 {
    let angle = p * w;
    match values {
        AxesValues::Angles => angle,
        AxesValues::Cos => angle.cos(),
        AxesValues::Sin => angle.sin(),
    }
}

/// The rate `w` of an angle column `w · ids[:, k]`, from the axis whose positions explain it
/// best by least squares, if one does.
fn fitted_rate(column: ndarray::ArrayView1<f64>, ids: &Array2<f64>) -> Option<f64> {
    ids.columns()
        .into_iter()
        .filter_map(|p| {
            let (num, den) = column
                .iter()
                .zip(p)
                .fold((0.0, 0.0), |(n, d), (&v, &x)| (n + v * x, d + x * x));
            (den > 0.0).then(|| num / den)
        })
        .find(|w| w.is_finite() && *w > 0.0 && *w < 1.0)
}

/// Compares the table of `params` (exact, and as PyTorch computes it in float32 for a float32
/// file) with the file, described by its options.
fn consider_axes(search: &mut Search, params: RopeAxesParams) {
    let scheme = match &params.split {
        AxesSplit::AxesDim(dims) => format!(
            "per-axis RoPE (Flux, diffusers' FluxPosEmbed): --axes-dim {}",
            joined(dims)
        ),
        AxesSplit::MropeSection { dim, sections } => format!(
            "M-RoPE (Qwen2-VL): --mrope-section {} --dim {dim}",
            joined(sections)
        ),
    };
    let turned: Vec<String> = {
        let mut runs: Vec<(usize, usize, usize)> = Vec::new();
        for (j, (axis, _)) in params.pairs().into_iter().enumerate() {
            match runs.last_mut() {
                Some((last_axis, _, end)) if *last_axis == axis => *end = j,
                _ => runs.push((axis, j, j)),
            }
        }
        runs.into_iter()
            .map(|(axis, from, to)| format!("pairs {from}-{to} by axis {axis}"))
            .collect()
    };
    let holds = match (params.values, params.layout) {
        (AxesValues::Angles, _) => "angles".to_owned(),
        (values, layout) => format!(
            "{} (--values {}), {} layout",
            if values == AxesValues::Cos {
                "cos"
            } else {
                "sin"
            },
            if values == AxesValues::Cos {
                "cos"
            } else {
                "sin"
            },
            match layout {
                PairLayout::Interleaved => "interleaved (each angle twice in a row)",
                PairLayout::Half => "half (the row of angles twice)",
            }
        ),
    };
    let description = format!(
        "RoPE over {} position axes, {scheme}, theta {}, {holds}; {}",
        params.ids.ncols(),
        params.theta,
        turned.join(", ")
    );
    search.name_words(description.clone(), axes_words(&params));
    let spec = TableSpec::RopeAxes(Box::new(params));
    if let Some(table) = noted(cpu::compute(&spec)) {
        search.consider(description.clone(), table.into_real());
    }
    if search.float32
        && !search
            .candidates
            .last()
            .is_some_and(|c| c.comparison.matches())
        && let Some(table) = noted(cpu::compute_arith(&spec, torch_f32::Arithmetic::TORCH))
    {
        search.consider(
            format!("{description}, as PyTorch computes it in float32 (--arith torch-f32)"),
            table.into_real(),
        );
    }
}

/// A `rope-axes` table's `poslab table` words, its positions the call's own (`--ids`, or the
/// `--grid` it was given in their place).
fn axes_words(params: &RopeAxesParams) -> TableWords {
    let mut options = match &params.split {
        AxesSplit::AxesDim(dims) => vec![("axes_dim", joined(dims))],
        AxesSplit::MropeSection { dim, sections } => vec![
            ("mrope_section", joined(sections)),
            ("dim", dim.to_string()),
        ],
    };
    options.push(("theta", format!("{}", params.theta)));
    let values = match params.values {
        AxesValues::Angles => "angles",
        AxesValues::Cos => "cos",
        AxesValues::Sin => "sin",
    };
    options.push(("values", values.to_owned()));
    if params.values != AxesValues::Angles {
        options.push((
            "layout",
            match params.layout {
                PairLayout::Interleaved => "interleaved",
                PairLayout::Half => "half",
            }
            .to_owned(),
        ));
    }
    options.push(("ids", FROM_THE_CALL.to_owned()));
    TableWords {
        kind: "rope-axes",
        options,
    }
}

fn joined(values: &[usize]) -> String {
    values
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",")
}
