//! 2D sin-cos tables in MAE's and timm's orders, and patch distances.

use super::*;

/// 2D sin-cos tables `[N + P, dim]` at base 10000: every grid of `P` patches, MAE's and
/// timm's block orders, either raster, with or without a zero CLS row first.
pub(super) fn sincos_2d_tables(search: &mut Search, table: &Array2<f64>) {
    use crate::encoding::grid::{MAE_ORDER, Raster, SinCos2dParams, parse_order};
    let (rows, dim) = table.dim();
    if dim < 4 || !dim.is_multiple_of(4) || !(2..=1 << 14).contains(&rows) {
        return;
    }
    let orders = [
        ("MAE order sin-x,cos-x,sin-y,cos-y", MAE_ORDER),
        (
            "timm order sin-y,sin-x,cos-y,cos-x",
            parse_order("sin-y,sin-x,cos-y,cos-x").unwrap_or(MAE_ORDER),
        ),
        (
            "timm interleaved order sin-y,cos-y,sin-x,cos-x",
            parse_order("sin-y,cos-y,sin-x,cos-x").unwrap_or(MAE_ORDER),
        ),
    ];
    for prefix_rows in [0usize, 1] {
        if prefix_rows == 1 && table.row(0).iter().any(|v| *v != 0.0) {
            continue;
        }
        let patches = rows - prefix_rows;
        // The first patch sits at (0, 0): its sines are 0 and its cosines 1 in every order,
        // so a table whose first patch row is not that is no 2D sin-cos table.
        let quarter = dim / 4;
        let first = table.row(prefix_rows);
        let fits_first = |order: &[crate::encoding::grid::SinCosBlock; 4]| {
            first.iter().enumerate().all(|(col, &v)| {
                let expected = if order[col / quarter].code() & 1 == 1 {
                    1.0
                } else {
                    0.0
                };
                (v - expected).abs() <= search.tolerance.abs + search.tolerance.rel + 1e-6
            })
        };
        if !orders.iter().any(|(_, order)| fits_first(order)) {
            continue;
        }
        for grid_h in (1..=patches).filter(|h| patches.is_multiple_of(*h)) {
            let grid = GridParams {
                grid_h,
                grid_w: patches / grid_h,
            };
            for (order_name, order) in orders {
                for raster in [Raster::Rows, Raster::Columns] {
                    let params = SinCos2dParams {
                        grid,
                        dim,
                        base: 10_000.0,
                        order,
                        raster,
                        prefix_rows,
                        ..Default::default()
                    };
                    let spec = TableSpec::SinCos2d(params);
                    let Some(reference) = super::noted(cpu::compute(&spec)) else {
                        continue;
                    };
                    let reference = reference.into_real();
                    let raster_name = match raster {
                        Raster::Rows => "patches row by row",
                        Raster::Columns => "patches column by column",
                    };
                    let cls = if prefix_rows > 0 {
                        ", after a zero CLS row"
                    } else {
                        ""
                    };
                    let description = format!(
                        "2D sin-cos, {} x {} grid, dim {dim}, base 10000, {order_name}, {raster_name}{cls}",
                        grid.grid_h, grid.grid_w
                    );
                    search.name_words(description.clone(), sincos_2d_words(&params));
                    // timm computes in float32: on a large grid its angles move the values by
                    // more than the tolerance, never by much.
                    let near = compare(&reference, &search.table, search.tolerance);
                    if search.float32 && !near.matches() && near.max_abs_error() < 1e-3 {
                        let torch = TorchMode::all().into_iter().find_map(|mode| {
                            let table = super::noted(cpu::compute_arith(
                                &spec,
                                crate::encoding::torch_f32::Arithmetic::TorchF32(mode),
                            ))?
                            .into_real();
                            compare(&table, &search.table, search.tolerance)
                                .matches()
                                .then_some((mode, table))
                        });
                        if let Some((mode, table)) = torch {
                            let form = match mode.form {
                                FreqForm::Pow => "pow",
                                FreqForm::Exp => "exp",
                            };
                            search.consider(
                                format!("{description}, as PyTorch computes it in float32 (--arith torch-f32 --freq-form {form})"),
                                table,
                            );
                            continue;
                        }
                    }
                    if !near.matches()
                        && let Some(scale) = fitted_grid_scale(table, &params)
                    {
                        scaled_grid_readings(search, &params, scale, &description);
                    }
                    search.consider(description, reference);
                }
            }
        }
    }
}

/// A 2D sin-cos table's `poslab table` words.
fn sincos_2d_words(params: &crate::encoding::grid::SinCos2dParams) -> TableWords {
    let mut options = vec![
        ("grid_h", params.grid.grid_h.to_string()),
        ("grid_w", params.grid.grid_w.to_string()),
        ("dim", params.dim.to_string()),
        ("base", format!("{}", params.base)),
        (
            "order",
            params
                .order
                .iter()
                .map(|b| b.name())
                .collect::<Vec<_>>()
                .join(","),
        ),
    ];
    if params.raster == crate::encoding::grid::Raster::Columns {
        options.push(("raster", "columns".to_owned()));
    }
    if params.prefix_rows > 0 {
        options.push(("prefix_rows", params.prefix_rows.to_string()));
    }
    TableWords {
        kind: "sincos-2d",
        options,
    }
}

/// The `(sy, sx)` a scaled 2D sin-cos table's coordinates were multiplied by, read from the
/// fastest pair (frequency 1) of the patches one step down and one step across, each snapped
/// to the simplest fraction within the file's precision (diffusers' `base_size / grid /
/// interpolation_scale`: 1/3, 4/6); `None` when both are 1 or unreadable.
fn fitted_grid_scale(
    table: &Array2<f64>,
    params: &crate::encoding::grid::SinCos2dParams,
) -> Option<[(f64, String); 2]> {
    use crate::encoding::grid::Raster;
    let quarter = params.dim / 4;
    let (grid_h, grid_w) = (params.grid.grid_h, params.grid.grid_w);
    let row_of = |x: usize, y: usize| {
        params.prefix_rows
            + match params.raster {
                Raster::Rows => y * grid_w + x,
                Raster::Columns => x * grid_h + y,
            }
    };
    let column = |uses_y: bool, is_cos: bool| {
        params
            .order
            .iter()
            .position(|b| b.uses_y() == uses_y && b.is_cos() == is_cos)
            .map(|block| block * quarter)
    };
    let omega = params.omega();
    // The angle of pair `k` at `row`, from its sine and cosine.
    let angle = |uses_y: bool, row: usize, k: usize| -> Option<f64> {
        let (sin, cos) = (column(uses_y, false)?, column(uses_y, true)?);
        Some(table[[row, sin + k]].atan2(table[[row, cos + k]]))
    };
    // The angle of the fastest pair at one step along the axis is the scale itself; the
    // slowest pair there and the fastest two steps along must agree with it (cheap tests
    // that rule out a wrong grid before any table is made).
    let read = |uses_y: bool, size: usize, at: &dyn Fn(usize) -> usize| -> Option<(f64, String)> {
        if size < 2 {
            return Some((1.0, "1".to_owned()));
        }
        let scale = angle(uses_y, at(1), 0)?;
        if scale.is_nan() || scale <= 0.0 {
            return None;
        }
        let agrees = |read: f64, expected: f64| {
            let turn = std::f64::consts::TAU;
            let off = (read - expected).rem_euclid(turn);
            off.min(turn - off) <= 1e-4 * expected.max(1.0)
        };
        let slowest = quarter - 1;
        if !agrees(angle(uses_y, at(1), slowest)?, scale * omega[slowest]) {
            return None;
        }
        if size >= 3 && !agrees(angle(uses_y, at(2), 0)?, 2.0 * scale) {
            return None;
        }
        Some(simplest_fraction(scale))
    };
    let sy = read(true, grid_h, &|k| row_of(0, k))?;
    let sx = read(false, grid_w, &|k| row_of(k, 0))?;
    let unit = |s: &(f64, String)| (s.0 - 1.0).abs() < 1e-12;
    (!(unit(&sy) && unit(&sx))).then_some([sy, sx])
}

/// `value` as the fraction `a/b` of smallest `b` (up to 256) within 2e-6 of it, with its text;
/// else as read, to 7 digits.
fn simplest_fraction(value: f64) -> (f64, String) {
    for denominator in 1..=256u32 {
        let numerator = (value * f64::from(denominator)).round();
        let fraction = numerator / f64::from(denominator);
        if numerator >= 1.0 && (fraction - value).abs() <= 2e-6 * value {
            let text = if denominator == 1 {
                format!("{numerator}")
            } else {
                format!("{numerator}/{denominator}")
            };
            return (fraction, text);
        }
    }
    (value, format!("{value:.7}"))
}

/// A 2D sin-cos table whose coordinates were scaled by `scale` (`(sy, sx)` with their texts):
/// exactly, and with the coordinates formed in float32 as diffusers forms them (both tried:
/// the closer one is the reading).
fn scaled_grid_readings(
    search: &mut Search,
    params: &crate::encoding::grid::SinCos2dParams,
    scale: [(f64, String); 2],
    description: &str,
) {
    use crate::encoding::grid::GridCoordinates;
    let [(sy, sy_text), (sx, sx_text)] = scale;
    let option = if sy_text == sx_text {
        sy_text
    } else {
        format!("{sy_text},{sx_text}")
    };
    for (coordinates, how) in [
        (GridCoordinates::Exact, ""),
        (
            GridCoordinates::Float32Quotient,
            ", the coordinates formed in float32 as diffusers forms them (k / f32(1/s))",
        ),
    ] {
        let mut scaled = *params;
        scaled.position_scale = [sy, sx];
        scaled.coordinates = coordinates;
        let Some(reference) = super::noted(cpu::compute(&TableSpec::SinCos2d(scaled))) else {
            continue;
        };
        let reference = reference.into_real();
        let scaled_description = format!(
            "{description}, coordinates scaled by --position-scale {option} (diffusers' \
             get_2d_sincos_pos_embed: base_size / grid / interpolation_scale per axis){how}"
        );
        let mut words = sincos_2d_words(params);
        words.options.push(("position_scale", option.clone()));
        search.name_words(scaled_description.clone(), words);
        search.consider(scaled_description, reference);
    }
}

/// Distances between the patches of every grid with `patches` patches.
pub(super) fn patch_distances(search: &mut Search, patches: usize) {
    if patches > 4096 {
        return;
    }
    for grid_h in (1..=patches).filter(|h| patches.is_multiple_of(*h)) {
        let grid = GridParams {
            grid_h,
            grid_w: patches / grid_h,
        };
        for metric in [
            DistanceMetric::Euclidean,
            DistanceMetric::Manhattan,
            DistanceMetric::Chebyshev,
        ] {
            let probe = patches.min(PROBE_ROWS);
            let first_rows =
                Array2::from_shape_fn((probe, patches), |(a, b)| grid.distance(a, b, metric));
            let description = format!(
                "{metric:?} distance between patches of a {grid_h} x {} grid",
                grid.grid_w
            );
            search.name_words(
                description.clone(),
                TableWords {
                    kind: "patch-distance",
                    options: vec![
                        ("grid_h", grid_h.to_string()),
                        ("grid_w", grid.grid_w.to_string()),
                        ("metric", format!("{metric:?}").to_lowercase()),
                    ],
                },
            );
            search.consider_probed(description, first_rows.into_dyn(), || {
                super::noted(cpu::compute(&TableSpec::PatchDistance { grid, metric }))
                    .map(|table| table.into_real())
            });
        }
    }
}

/// How an axial RoPE reading is said: its values, which axis's angles come first, how each
/// is repeated, and the library that makes it.
/// An axial 2D RoPE table's `poslab table` words at base `theta`, its coordinate scales as
/// the description writes them (`2/3`).
fn axial_table_words(
    shape: &crate::encoding::rope2d::AxialParams,
    theta: f64,
    [sy, sx]: [&str; 2],
) -> TableWords {
    use crate::encoding::rope_axes::AxesValues;
    let mut options = vec![
        ("grid_h", shape.grid.grid_h.to_string()),
        ("grid_w", shape.grid.grid_w.to_string()),
        ("dim", shape.dim.to_string()),
        ("theta", format!("{theta}")),
        (
            "values",
            match shape.values {
                AxesValues::Angles => "angles",
                AxesValues::Cos => "cos",
                AxesValues::Sin => "sin",
            }
            .to_owned(),
        ),
        (
            "axis_order",
            match shape.axis_order {
                crate::encoding::rope2d::AxisOrder::Xy => "xy",
                crate::encoding::rope2d::AxisOrder::Yx => "yx",
            }
            .to_owned(),
        ),
    ];
    if let Some(layout) = shape.layout {
        options.push((
            "layout",
            match layout {
                PairLayout::Half => "half",
                PairLayout::Interleaved => "interleaved",
            }
            .to_owned(),
        ));
    }
    if (sy, sx) != ("1", "1") {
        options.push(("position_scale", format!("{sy},{sx}")));
    }
    TableWords {
        kind: "rope-2d-axial",
        options,
    }
}

fn axial_words(
    values: crate::encoding::rope_axes::AxesValues,
    layout: Option<PairLayout>,
    axis_order: crate::encoding::rope2d::AxisOrder,
) -> [&'static str; 4] {
    use crate::encoding::rope_axes::AxesValues;
    use crate::encoding::rope2d::AxisOrder;
    let what = match values {
        AxesValues::Angles => "angles",
        AxesValues::Cos => "cos",
        AxesValues::Sin => "sin",
    };
    let order = match axis_order {
        AxisOrder::Xy => "x's angles first",
        AxisOrder::Yx => "y's angles first",
    };
    let repeat = match layout {
        None => "each once",
        Some(PairLayout::Interleaved) => "each twice in a row (--layout interleaved)",
        Some(PairLayout::Half) => "the row twice (--layout half)",
    };
    let library = match (values, layout, axis_order) {
        (AxesValues::Angles, None, AxisOrder::Xy) => ", rope-vit's compute_axial_cis",
        (AxesValues::Angles, Some(PairLayout::Interleaved), AxisOrder::Yx) => {
            ", rotary-embedding-torch's get_axial_freqs"
        }
        (AxesValues::Cos | AxesValues::Sin, Some(PairLayout::Interleaved), AxisOrder::Yx) => {
            ", timm's build_rotary_pos_embed"
        }
        (AxesValues::Cos | AxesValues::Sin, Some(PairLayout::Half), _) => {
            ", timm's build_rotary_pos_embed(rotate_half=True)"
        }
        (AxesValues::Cos | AxesValues::Sin, Some(PairLayout::Interleaved), AxisOrder::Xy) => {
            ", HunyuanDiT's get_2d_rotary_pos_embed"
        }
        _ => "",
    };
    [what, order, repeat, library]
}

/// Axial 2D RoPE `[P, D/2]` (angles, each once) or `[P, D]` (each twice): rope-vit's angles,
/// and the cos/sin caches of timm (`build_rotary_pos_embed`), HunyuanDiT and
/// rotary-embedding-torch's `get_axial_freqs`, on every grid of `P` patches, in either axis
/// order, with theta fitted from the patch one step along the first axis.
pub(super) fn axial_rope_tables(search: &mut Search, table: &Array2<f64>) {
    use crate::encoding::rope_axes::AxesValues;
    use crate::encoding::rope2d::{AxialParams, AxisOrder};
    let (patches, cols) = table.dim();
    if !(2..=1 << 14).contains(&patches) || cols < 4 {
        return;
    }
    // The first patch sits at (0, 0): every angle is 0, so its row tells the values apart.
    let near = |v: f64, to: f64| (v - to).abs() <= search.tolerance.abs + 1e-6;
    let first = table.row(0);
    let values: Vec<AxesValues> = if first.iter().all(|&v| near(v, 0.0)) {
        vec![AxesValues::Angles, AxesValues::Sin]
    } else if first.iter().all(|&v| near(v, 1.0)) {
        vec![AxesValues::Cos]
    } else {
        return;
    };
    let layouts = [None, Some(PairLayout::Interleaved), Some(PairLayout::Half)];
    // A grid one patch wide is 1D RoPE with half its pairs idle: a reading of no use.
    for grid_h in (2..patches).filter(|h| patches.is_multiple_of(*h) && patches / h >= 2) {
        let grid = GridParams {
            grid_h,
            grid_w: patches / grid_h,
        };
        for axis_order in [AxisOrder::Xy, AxisOrder::Yx] {
            // The patch one step along the first axis, the other coordinate 0.
            let step = match axis_order {
                AxisOrder::Xy => 1,
                AxisOrder::Yx => grid.grid_w,
            };
            for &values in &values {
                for layout in layouts {
                    let dim = match layout {
                        None => 2 * cols,
                        Some(_) => cols,
                    };
                    if !dim.is_multiple_of(4) || dim < 8 {
                        continue;
                    }
                    // The column of angle 1 (f_1 = theta^(-4/D), below 1 radian).
                    let column = match layout {
                        Some(PairLayout::Interleaved) => 2,
                        _ => 1,
                    };
                    let angle_at = |patch: usize, column: usize| {
                        let v = table[[patch, column]];
                        match values {
                            AxesValues::Angles => v,
                            AxesValues::Cos => v.clamp(-1.0, 1.0).acos(),
                            AxesValues::Sin => v.clamp(-1.0, 1.0).asin(),
                        }
                    };
                    // Each axis's first angle has frequency 1: one step along it is its scale.
                    let (second_step, second_column) = match (axis_order, layout) {
                        (AxisOrder::Xy, Some(PairLayout::Interleaved)) => (grid.grid_w, dim / 2),
                        (AxisOrder::Xy, _) => (grid.grid_w, dim / 4),
                        (AxisOrder::Yx, Some(PairLayout::Interleaved)) => (1, dim / 2),
                        (AxisOrder::Yx, _) => (1, dim / 4),
                    };
                    let (first_scale, second_scale) =
                        (angle_at(step, 0), angle_at(second_step, second_column));
                    if !(first_scale > 0.0 && second_scale > 0.0) {
                        continue;
                    }
                    let (first_scale, second_scale) = (
                        simplest_fraction(first_scale),
                        simplest_fraction(second_scale),
                    );
                    let [sy, sx] = match axis_order {
                        AxisOrder::Xy => [second_scale, first_scale],
                        AxisOrder::Yx => [first_scale, second_scale],
                    };
                    let f1 = angle_at(step, column)
                        / match axis_order {
                            AxisOrder::Xy => sx.0,
                            AxisOrder::Yx => sy.0,
                        };
                    if !(f1 > 0.0 && f1 < 1.0) {
                        continue;
                    }
                    let theta = f1.powf(-(dim as f64) / 4.0);
                    let shape = AxialParams {
                        grid,
                        dim,
                        theta,
                        values,
                        layout,
                        axis_order,
                        position_scale: [sy.0, sx.0],
                    };
                    let scaled = match (sy.1.as_str(), sx.1.as_str()) {
                        ("1", "1") => String::new(),
                        (y, x) if y == x => {
                            format!(", coordinates scaled by {y} (--position-scale {y})")
                        }
                        (y, x) => format!(
                            ", coordinates scaled by {y} along y and {x} along x (--position-scale {y},{x})"
                        ),
                    };
                    let [what, order, repeat, library] = axial_words(values, layout, axis_order);
                    let named = std::cell::RefCell::new(Vec::new());
                    search.consider_bases(
                        theta,
                        |b| {
                            let description = format!(
                                "2D axial RoPE {what}, {} x {} grid, dim {dim}, {order}, {repeat}{library}{scaled}, base {b} (--theta)",
                                grid.grid_h, grid.grid_w
                            );
                            named
                                .borrow_mut()
                                .push((description.clone(), axial_table_words(&shape, b, [&sy.1, &sx.1])));
                            description
                        },
                        table,
                        &|reference| reference.into_dyn(),
                        |b, rows| {
                            // Only the rows asked for: the first patches, by formula.
                            let params = AxialParams { theta: b, ..shape };
                            params.validate().ok()?;
                            let freqs = params.frequencies();
                            Some(Array2::from_shape_fn((rows, params.columns()), |(patch, col)| {
                                params.value(&freqs, patch, col)
                            }))
                        },
                        None,
                    );
                    for (description, words) in named.into_inner() {
                        search.name_words(description, words);
                    }
                }
            }
        }
    }
}
