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
                    };
                    let Some(reference) = super::noted(cpu::compute(&TableSpec::SinCos2d(params)))
                    else {
                        continue;
                    };
                    let raster_name = match raster {
                        Raster::Rows => "patches row by row",
                        Raster::Columns => "patches column by column",
                    };
                    let cls = if prefix_rows > 0 {
                        ", after a zero CLS row"
                    } else {
                        ""
                    };
                    search.consider(
                        format!(
                            "2D sin-cos, {} x {} grid, dim {dim}, base 10000, {order_name}, {raster_name}{cls}",
                            grid.grid_h, grid.grid_w
                        ),
                        reference.into_real(),
                    );
                }
            }
        }
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
            search.consider_probed(
                format!(
                    "{metric:?} distance between patches of a {grid_h} x {} grid",
                    grid.grid_w
                ),
                first_rows.into_dyn(),
                || {
                    super::noted(cpu::compute(&TableSpec::PatchDistance { grid, metric }))
                        .map(|table| table.into_real())
                },
            );
        }
    }
}
