//! Checking a table computed elsewhere: compare it element by element with poslab's reference
//! (largest absolute and relative error, where, and a verdict), or identify which kind and
//! convention it is ([`identify`]).

pub mod identify;
pub mod locate;
pub mod permutation;
pub mod rotation;
pub mod verdict;

pub use locate::{Diagnosis, Located, OutsideCell, locate};
pub use verdict::{Verdict, verdict};

use std::fmt::Write as _;

use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn};

use crate::engine::Strided;

/// How close a table must be to match.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Tolerance {
    pub abs: f64,
    pub rel: f64,
}

impl Default for Tolerance {
    /// Room for float32 storage of values up to about 10^4 (angles of long contexts).
    fn default() -> Self {
        Self {
            abs: crate::options::file::ATOL,
            rel: crate::options::file::RTOL,
        }
    }
}

/// An element where the two tables differ most, by one measure.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Worst {
    pub error: f64,
    pub index: Vec<usize>,
    pub reference: f64,
    pub loaded: f64,
}

/// The outcome of comparing a loaded table with a reference.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Comparison {
    pub reference_shape: Vec<usize>,
    pub loaded_shape: Vec<usize>,
    /// `None` when the shapes differ.
    pub max_abs: Option<Worst>,
    /// Relative to the reference's magnitude, over elements whose reference is not tiny
    /// (at least 1e-6 of the table's largest magnitude).
    pub max_rel: Option<Worst>,
    /// The first element where an infinity of one table is not the same infinity in the other.
    pub infinity_mismatch: Option<Vec<usize>>,
    /// Elements outside the tolerance.
    pub outside: usize,
    pub tolerance: Tolerance,
    /// The file type's rule that replaced `tolerance`, when no tolerance was given.
    pub rule: Option<UlpRule>,
}

/// The default tolerance for a file that says how it stores its values: within `ulps` units
/// in the last place of that type, of each reference value (or of `floor`, for values nearer
/// zero than that), or 1e-10 relative for float64 files.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct UlpRule {
    pub stored: crate::import::StoredFloat,
    pub ulps: f64,
    /// The magnitude below which errors are measured in ulps of the floor, not of the value.
    pub floor: f64,
}

impl UlpRule {
    /// The contract's default for a file of `stored` values: float64 to 1e-10 of the exact
    /// table, narrower types to 8 ulps. `floor` is 0 for tables of magnitudes (frequencies,
    /// slopes: every value is measured against itself) and the ulp at 1 (or at the table's
    /// largest value, when smaller) for tables whose values cross zero.
    pub fn default_for(stored: crate::import::StoredFloat, floor: f64) -> Self {
        Self {
            stored,
            ulps: 8.0,
            floor,
        }
    }

    /// The largest difference allowed at reference value `r`.
    pub fn allowed(&self, r: f64) -> f64 {
        let magnitude = r.abs().max(self.floor);
        match self.stored {
            crate::import::StoredFloat::F64 => 1e-10 * magnitude,
            narrow => self.ulps * narrow.ulp(magnitude),
        }
    }

    fn describe(&self) -> String {
        match self.stored {
            crate::import::StoredFloat::F64 => {
                "the default for a float64 file: 1e-10 of each value".to_owned()
            }
            narrow => format!(
                "the default for a {} file: {} ulp of each value{}",
                narrow.name(),
                self.ulps,
                if self.floor > 0.0 {
                    format!(", of {:.3} near zero", self.floor)
                } else {
                    String::new()
                }
            ),
        }
    }
}

impl Comparison {
    pub fn shapes_match(&self) -> bool {
        self.max_abs.is_some()
    }

    /// Every element within `|loaded - reference| <= abs + rel |reference|`, infinities equal.
    pub fn matches(&self) -> bool {
        self.shapes_match() && self.infinity_mismatch.is_none() && self.outside == 0
    }

    /// The largest difference allowed at reference value `r`: the file type's rule, or the
    /// tolerance.
    pub fn allowed(&self, r: f64) -> f64 {
        match &self.rule {
            Some(rule) => rule.allowed(r),
            None => self.tolerance.abs + self.tolerance.rel * r.abs(),
        }
    }

    /// Whether file value `l` is within what is allowed of reference value `r` (an infinity
    /// only by the same infinity).
    pub fn allows(&self, r: f64, l: f64) -> bool {
        if r.is_infinite() || l.is_infinite() {
            r == l
        } else {
            (l - r).abs() <= self.allowed(r)
        }
    }

    /// Whether the element is counted outside: [`Comparison::allows`] refuses it.
    pub fn is_outside(&self, r: f64, l: f64) -> bool {
        !self.allows(r, l)
    }

    /// The largest absolute error, or infinity when the tables cannot be compared.
    pub fn max_abs_error(&self) -> f64 {
        match (&self.max_abs, &self.infinity_mismatch) {
            (Some(worst), None) => worst.error,
            _ => f64::INFINITY,
        }
    }

    /// The largest relative error, or infinity when the tables cannot be compared.
    pub fn max_rel_error(&self) -> f64 {
        match (&self.max_rel, &self.infinity_mismatch) {
            (Some(worst), None) => worst.error,
            (None, None) if self.shapes_match() => 0.0,
            _ => f64::INFINITY,
        }
    }

    /// What an element is held to, in words.
    pub fn rule_text(&self) -> String {
        match &self.rule {
            Some(rule) => rule.describe(),
            None => format!(
                "tolerance {:.0e} absolute + {:.0e} relative",
                self.tolerance.abs, self.tolerance.rel
            ),
        }
    }

    /// A few lines for a terminal or the Check view.
    pub fn report(&self) -> String {
        let mut text = String::new();
        if !self.shapes_match() {
            let _ = writeln!(
                text,
                "shape mismatch: the file holds {:?}, the reference is {:?}",
                self.loaded_shape, self.reference_shape
            );
            return text;
        }
        let _ = writeln!(text, "shape {:?}", self.reference_shape);
        if let Some(worst) = &self.max_abs {
            let _ = writeln!(
                text,
                "largest absolute error {:.3e} at {:?} (reference {}, file {})",
                worst.error, worst.index, worst.reference, worst.loaded
            );
        }
        if let Some(worst) = &self.max_rel {
            let _ = writeln!(
                text,
                "largest relative error {:.3e} at {:?} (reference {}, file {})",
                worst.error, worst.index, worst.reference, worst.loaded
            );
        }
        if let Some(index) = &self.infinity_mismatch {
            let _ = writeln!(text, "infinities differ first at {index:?}");
        }
        let rule = self.rule_text();
        let _ = writeln!(
            text,
            "verdict: {} ({rule}{})",
            if self.matches() { "MATCH" } else { "MISMATCH" },
            if self.outside > 0 {
                format!("; {} elements outside", self.outside)
            } else {
                String::new()
            }
        );
        text
    }
}

/// What the Check view and its figure draw of a table: rows and columns (a 1-D table as one
/// row; of a 3-D one, slice `index` of the first axis, further axes folded into the columns),
/// at most `max_cells` a side: beyond that each drawn value is the `reduce` of the cells it
/// covers (bins of `step` cells, see [`crate::engine::reduce`]); with the bins drawn.
pub fn drawn_slice(
    table: &ArrayD<f64>,
    index: usize,
    max_cells: usize,
    reduce: crate::engine::reduce::Reduce,
) -> (ndarray::Array2<f64>, Strided, Strided) {
    let view = match table.ndim() {
        0..=2 => table.view(),
        _ => table.index_axis(
            ndarray::Axis(0),
            index.min(table.shape()[0].saturating_sub(1)),
        ),
    };
    let (rows, cols) = match view.shape() {
        [] => (1, 1),
        [n] => (1, *n),
        [rows, rest @ ..] => (*rows, rest.iter().product()),
    };
    let slice = ndarray::Array2::from_shape_vec((rows, cols), view.iter().copied().collect())
        .unwrap_or_else(|_| ndarray::Array2::zeros((1, 1)));
    let strided = |n: usize| Strided {
        step: n.div_ceil(max_cells.max(1)).max(1),
        ..Strided::all(n)
    };
    let (row_range, col_range) = (strided(rows), strided(cols));
    let values = ndarray::Array2::from_shape_fn((row_range.len(), col_range.len()), |(y, x)| {
        let mut acc = crate::engine::reduce::Accumulator::default();
        for r in crate::engine::reduce::bin(&row_range, y) {
            for c in crate::engine::reduce::bin(&col_range, x) {
                acc.add(slice[[r, c]]);
            }
        }
        // A cell that is NaN or infinite in the file stays visible as such when alone.
        if acc.count() == 0 && row_range.step * col_range.step == 1 {
            slice[[row_range.at(y), col_range.at(x)]]
        } else {
            acc.value(reduce)
        }
    });
    (values, row_range, col_range)
}

/// Compares `loaded` with `reference` under a file type's default rule.
pub fn compare_stored(reference: &ArrayD<f64>, loaded: &ArrayD<f64>, rule: UlpRule) -> Comparison {
    let mut comparison = compare(reference, loaded, Tolerance { abs: 0.0, rel: 0.0 });
    comparison.rule = Some(rule);
    if !comparison.shapes_match() {
        return comparison;
    }
    // Views, not copies: a large table is compared without two more of its size.
    let (reference, loaded) = (squeezed_view(reference), squeezed_view(loaded));
    comparison.outside = reference
        .iter()
        .zip(loaded.iter())
        .filter(|(r, l)| {
            if r.is_infinite() || l.is_infinite() {
                r != l
            } else {
                (*l - *r).abs() > rule.allowed(**r)
            }
        })
        .count();
    comparison
}

/// Whether `loaded` equals `reference` up to a constant added to each row (the last axis is
/// the keys), over the cells where the reference is finite (masked cells, -inf in the
/// reference, are left out: a mask hides them whatever they hold). `allowed(v)` is the error
/// allowed at magnitude `v`. Softmax over a row is blind to such a constant, so two ALiBi
/// tables that differ by one give the same attention.
pub fn equal_up_to_row_constants(
    reference: &ArrayD<f64>,
    loaded: &ArrayD<f64>,
    allowed: impl Fn(f64) -> f64,
) -> bool {
    let (reference, loaded) = (squeezed(reference), squeezed(loaded));
    if reference.shape() != loaded.shape() || reference.ndim() < 2 {
        return false;
    }
    let keys = reference.shape()[reference.ndim() - 1];
    let (reference, loaded) = (
        reference.as_standard_layout().to_owned(),
        loaded.as_standard_layout().to_owned(),
    );
    let (Some(reference), Some(loaded)) = (reference.as_slice(), loaded.as_slice()) else {
        return false;
    };
    reference
        .chunks(keys)
        .zip(loaded.chunks(keys))
        .all(|(r_row, l_row)| {
            let finite: Vec<(f64, f64)> = r_row
                .iter()
                .zip(l_row)
                .filter(|(r, _)| r.is_finite())
                .map(|(r, l)| (*r, *l))
                .collect();
            let Some(&(r0, l0)) = finite.first() else {
                return true;
            };
            // The constant is read off the first cell, its rounding with it: each cell may
            // differ by what its own value and that first cell's allow together (MLX's
            // -43.840618 for -43.8406204 makes a constant of 1.2e-8, beside a diagonal of 0).
            let constant = l0 - r0;
            let first_allowed = allowed(r0.abs().max(l0.abs()));
            finite.iter().all(|&(r, l)| {
                l.is_finite()
                    && (l - r - constant).abs()
                        <= allowed(r.abs().max(l.abs()).max(constant.abs())) + first_allowed
            })
        })
}

/// The spacing of f32 values at `value` (its unit in the last place), for normal magnitudes.
pub fn f32_ulp(value: f64) -> f64 {
    let magnitude = value.abs().max(f64::from(f32::MIN_POSITIVE));
    2f64.powf(magnitude.log2().floor() - 23.0)
}

/// The largest difference between `loaded` and `reference`, in f32 ulps of each reference
/// value (of `floor` where the value is smaller), or `None` when the shapes differ or a
/// non-finite value disagrees. A float32 file computed as `reference` was is within an ulp
/// or two everywhere; another table is off by thousands somewhere.
pub fn f32_ulps_apart(reference: &ArrayD<f64>, loaded: &ArrayD<f64>, floor: f64) -> Option<f64> {
    f32_ulps_apart_by_column(reference.view(), loaded.view(), floor)?
        .into_iter()
        .try_fold(0.0f64, |worst, column| Some(worst.max(column?)))
}

/// [`f32_ulps_apart`] column by column (the last axis): the largest distance in each column,
/// `None` where a non-finite value disagrees; `None` for all when the shapes differ.
pub fn f32_ulps_apart_by_column(
    reference: ArrayViewD<'_, f64>,
    loaded: ArrayViewD<'_, f64>,
    floor: f64,
) -> Option<Vec<Option<f64>>> {
    let (reference, loaded) = (squeeze_view(reference), squeeze_view(loaded));
    if reference.shape() != loaded.shape() {
        return None;
    }
    let columns = reference.shape().last().copied().unwrap_or(1).max(1);
    let (reference, loaded) = (reference.as_standard_layout(), loaded.as_standard_layout());
    let (reference, loaded) = (reference.as_slice()?, loaded.as_slice()?);
    let mut worst = vec![Some(0.0f64); columns];
    for (k, (&r, &l)) in reference.iter().zip(loaded).enumerate() {
        let column = &mut worst[k % columns];
        let Some(so_far) = column else {
            continue;
        };
        if !r.is_finite() || !l.is_finite() {
            if r != l && !(r.is_nan() && l.is_nan()) {
                *column = None;
            }
            continue;
        }
        *so_far = so_far.max((l - r).abs() / f32_ulp(r.abs().max(floor)));
    }
    Some(worst)
}

/// The shape without its length-1 axes, so that `[n]`, `[1, n]` and `[n, 1]` compare.
pub fn into_squeezed(array: ArrayD<f64>) -> ArrayD<f64> {
    let shape: Vec<usize> = array.shape().iter().copied().filter(|&n| n != 1).collect();
    let shape = if shape.is_empty() && !array.is_empty() {
        vec![1]
    } else {
        shape
    };
    // Only axes of length 1 go, so the count is the same and the values stay where they are
    // (a standard-layout array is not copied).
    if shape.iter().product::<usize>() != array.len() {
        return array;
    }
    match array.into_shape_clone(IxDyn(&shape)) {
        Ok(squeezed) => squeezed,
        Err(e) => unreachable!("a reshape to as many elements failed: {e}"),
    }
}

/// The rows a table of `shape` (three or more axes, length-1 axes left out) has when its
/// leading axes are read as rows: `[H, W, D]` is `[H*W, D]`; `None` for fewer axes.
pub fn leading_rows(shape: &[usize]) -> Option<usize> {
    let kept: Vec<usize> = shape.iter().copied().filter(|&n| n != 1).collect();
    (kept.len() >= 3).then(|| kept[..kept.len() - 1].iter().product())
}

/// `table` as `[rows, last axis]` (its leading axes read as rows; see [`leading_rows`]).
pub fn as_rows(table: ArrayD<f64>, rows: usize) -> ArrayD<f64> {
    let columns = table.len() / rows.max(1);
    match table.into_shape_clone(IxDyn(&[rows, columns])) {
        Ok(rows) => rows,
        Err(e) => unreachable!("leading axes read as rows keep every value: {e}"),
    }
}

/// What a report says of a file read with its leading axes as rows.
pub fn read_as_rows_note(shape: &[usize], rows: usize) -> String {
    format!(
        "read as [{rows}, {}]: the file's {shape:?} holds the table's {rows} rows on a grid, taken row by row (as reshape takes them)",
        shape.last().copied().unwrap_or(1)
    )
}

/// Why a `[H, W, D]` file cannot be the grid table `spec` asks for although it holds as many
/// rows: its grid is another one (the 2 x 8 table saved as `[8, 2, 16]`). `None` when the file
/// is not a grid of three axes, or is the one asked for.
pub fn grid_contradiction(spec: &crate::engine::TableSpec, shape: &[usize]) -> Option<String> {
    let (grid, columns_first) = match spec {
        crate::engine::TableSpec::SinCos2d(p) if p.prefix_rows == 0 => {
            (p.grid, p.raster == crate::encoding::grid::Raster::Columns)
        }
        crate::engine::TableSpec::Rope2dAxial(p) => (p.grid, false),
        crate::engine::TableSpec::Rope2dMixed { grid, .. } => (*grid, false),
        _ => return None,
    };
    let &[a, b, _] = shape else {
        return None;
    };
    let asked = if columns_first {
        (grid.grid_w, grid.grid_h)
    } else {
        (grid.grid_h, grid.grid_w)
    };
    (a * b == grid.grid_h * grid.grid_w && (a, b) != asked).then(|| {
        let (h, w) = if columns_first { (b, a) } else { (a, b) };
        format!(
            "its shape {shape:?} is a grid of {h} x {w} patches, and --grid-h {} --grid-w {} asks for {} x {}: the same number of rows in another picture; give the file's grid, --grid-h {h} --grid-w {w}",
            grid.grid_h, grid.grid_w, grid.grid_h, grid.grid_w
        )
    })
}

/// `loaded` as the reference's `[rows, D]` table when it holds the same values on a grid of
/// rows (`[H, W, D]` with `H*W = rows`), with the note saying so; unchanged otherwise.
pub fn rows_as_reference(
    loaded: ArrayD<f64>,
    reference_shape: &[usize],
) -> (ArrayD<f64>, Option<String>) {
    let reference: Vec<usize> = reference_shape
        .iter()
        .copied()
        .filter(|&n| n != 1)
        .collect();
    let shape = loaded.shape().to_vec();
    match (leading_rows(&shape), reference.as_slice()) {
        (Some(rows), &[reference_rows, columns])
            if rows == reference_rows && shape.last() == Some(&columns) =>
        {
            let note = read_as_rows_note(&shape, rows);
            (as_rows(loaded, rows), Some(note))
        }
        _ => (loaded, None),
    }
}

/// `table` with its float32-minimum cells (-3.4e38 or below, how many attention kernels
/// mask rather than with -inf) written as -inf, if it has any.
pub fn with_float32_minimum_as_masked(table: &ArrayD<f64>) -> Option<ArrayD<f64>> {
    let masked = |v: f64| v.is_finite() && v <= -f64::from(f32::MAX);
    table
        .iter()
        .any(|&v| masked(v))
        .then(|| table.mapv(|v| if masked(v) { f64::NEG_INFINITY } else { v }))
}

/// `array` without its axes of length 1, copied.
pub fn squeezed(array: &ArrayD<f64>) -> ArrayD<f64> {
    let shape: Vec<usize> = array.shape().iter().copied().filter(|&n| n != 1).collect();
    let values: Vec<f64> = array.iter().copied().collect();
    let shape = if shape.is_empty() && !values.is_empty() {
        vec![1]
    } else {
        shape
    };
    ArrayD::from_shape_vec(IxDyn(&shape), values).unwrap_or_else(|_| array.clone())
}

/// The largest magnitude of a table's finite values (0 for none).
pub fn largest_magnitude<S, D>(table: &ndarray::ArrayBase<S, D>) -> f64
where
    S: ndarray::Data<Elem = f64>,
    D: ndarray::Dimension,
{
    table
        .iter()
        .filter(|v| v.is_finite())
        .fold(0.0f64, |m, v| m.max(v.abs()))
}

/// `array` without its length-1 axes, as a view ([`squeezed`] without the copy).
fn squeezed_view(array: &ArrayD<f64>) -> ArrayViewD<'_, f64> {
    squeeze_view(array.view())
}

/// `view` without its axes of length 1 (one axis of one value for a single value).
fn squeeze_view(view: ArrayViewD<'_, f64>) -> ArrayViewD<'_, f64> {
    let mut view = view;
    let mut axis = 0;
    while axis < view.ndim() {
        if view.shape()[axis] == 1 {
            view = view.index_axis_move(Axis(axis), 0);
        } else {
            axis += 1;
        }
    }
    if view.ndim() == 0 {
        view = view.insert_axis(Axis(0));
    }
    view
}

/// The index of the `flat`-th element of an array of `shape` in C order.
fn unravel(mut flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut index = vec![0; shape.len()];
    for (axis, &length) in shape.iter().enumerate().rev() {
        index[axis] = flat % length.max(1);
        flat /= length.max(1);
    }
    index
}

/// Compares `loaded` with `reference`, both squeezed. One pass over the values in memory
/// order (identify compares a 16M-value file with dozens of hypotheses); an element's index is
/// worked out only for the worst ones.
pub fn compare(reference: &ArrayD<f64>, loaded: &ArrayD<f64>, tolerance: Tolerance) -> Comparison {
    compare_views(reference.view(), loaded.view(), tolerance)
}

/// [`compare`] of views (a table compared in place, not copied).
pub fn compare_views(
    reference: ndarray::ArrayViewD<'_, f64>,
    loaded: ndarray::ArrayViewD<'_, f64>,
    tolerance: Tolerance,
) -> Comparison {
    let (reference, loaded) = (squeeze_view(reference), squeeze_view(loaded));
    let mut comparison = Comparison {
        reference_shape: reference.shape().to_vec(),
        loaded_shape: loaded.shape().to_vec(),
        max_abs: None,
        max_rel: None,
        infinity_mismatch: None,
        outside: 0,
        tolerance,
        rule: None,
    };
    if reference.shape() != loaded.shape() {
        return comparison;
    }
    let shape = reference.shape().to_vec();
    let (reference, loaded) = (reference.as_standard_layout(), loaded.as_standard_layout());
    let (Some(reference), Some(loaded)) = (reference.as_slice(), loaded.as_slice()) else {
        return comparison;
    };
    let scale = reference
        .iter()
        .filter(|v| v.is_finite())
        .fold(0.0f64, |m, v| m.max(v.abs()));
    let floor = scale * 1e-6;
    // (error, flat index) of the worst absolute and relative errors; the first is element 0
    // until an error beats 0.
    let mut max_abs = (0.0, 0);
    let mut max_rel: Option<(f64, usize)> = None;
    let mut infinity_mismatch = None;
    for (k, (&r, &l)) in reference.iter().zip(loaded).enumerate() {
        if r.is_infinite() || l.is_infinite() {
            if r != l {
                comparison.outside += 1;
                infinity_mismatch.get_or_insert(k);
            }
            continue;
        }
        let error = (l - r).abs();
        if error > tolerance.abs + tolerance.rel * r.abs() {
            comparison.outside += 1;
        }
        if error > max_abs.0 {
            max_abs = (error, k);
        }
        if r.abs() >= floor && r != 0.0 {
            let relative = error / r.abs();
            if max_rel.is_none_or(|(worst, _)| relative > worst) {
                max_rel = Some((relative, k));
            }
        }
    }
    let worst = |(error, k): (f64, usize)| Worst {
        error,
        index: unravel(k, &shape),
        reference: reference.get(k).copied().unwrap_or(0.0),
        loaded: loaded.get(k).copied().unwrap_or(0.0),
    };
    comparison.infinity_mismatch = infinity_mismatch.map(|k| unravel(k, &shape));
    comparison.max_abs = Some(worst(max_abs));
    comparison.max_rel = max_rel.map(worst);
    comparison
}
