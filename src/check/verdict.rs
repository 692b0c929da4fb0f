//! The verdict of `poslab check` and the app's Check view, one for both: a file compared with
//! an exact table under the file type's default rule (or the tolerance given), then the readings
//! that make a mismatch a match: PyTorch's own float32 computation, and, for causal ALiBi,
//! equality up to a constant per query row.

use ndarray::ArrayD;

use super::{Comparison, Tolerance, UlpRule, compare, compare_stored, equal_up_to_row_constants};
use crate::encoding::torch_f32::libraries::FrequencyRecipe;
use crate::encoding::torch_f32::{AVX512_BLOCK, Arithmetic, FreqForm, TorchMode};
use crate::engine::{TableSpec, cpu};
use crate::import::StoredFloat;

/// A file checked against a table.
#[derive(Debug, Clone)]
pub struct Verdict {
    pub comparison: Comparison,
    /// Lines after the comparison's report: what else the file was found to be.
    pub notes: Vec<String>,
    /// Whether the file passes: the comparison, or one of the readings above.
    pub matches: bool,
    /// Where a file that does not pass differs (shapes equal).
    pub located: Option<super::Located>,
}

impl Verdict {
    /// The comparison's report, the notes, then where the file differs.
    pub fn report(&self) -> String {
        let mut text = self.summary();
        if let Some(located) = &self.located {
            text.push_str(&located.report());
        }
        text
    }

    /// The comparison's report and the notes, without where the file differs.
    pub fn summary(&self) -> String {
        let mut text = self.comparison.report();
        for note in &self.notes {
            text.push_str(note);
            text.push('\n');
        }
        text
    }
}

/// Checks `loaded` against `reference` (the table of `spec`). `explicit` is a tolerance the
/// user gave; without one, a file that says how it stores its values (`stored`) is held to
/// what that type can hold, and a float32 file that PyTorch's float32 computation reproduces
/// to 2 ulp matches. A file that does not pass is located, its worst elements listed.
pub fn verdict(
    spec: &TableSpec,
    reference: &ArrayD<f64>,
    loaded: &ArrayD<f64>,
    stored: Option<StoredFloat>,
    explicit: Option<Tolerance>,
) -> Verdict {
    verdict_showing(
        spec,
        reference,
        loaded,
        stored,
        explicit,
        super::locate::DEFAULT_SHOWN,
    )
}

/// [`verdict`], listing the `show` worst elements of a file that does not pass.
pub fn verdict_showing(
    spec: &TableSpec,
    reference: &ArrayD<f64>,
    loaded: &ArrayD<f64>,
    stored: Option<StoredFloat>,
    explicit: Option<Tolerance>,
    show: usize,
) -> Verdict {
    let tolerance = explicit.unwrap_or_default();
    let comparison = compare_under_rule(reference, loaded, stored, explicit, spec);
    let mut notes = Vec::new();
    let mut matches = comparison.matches();
    if let TableSpec::Alibi { params, .. } = spec
        && params.mode == crate::encoding::alibi::AlibiMode::Causal
    {
        let shape = loaded.shape();
        let per_key =
            shape.len() >= 2 && shape[shape.len() - 2] == 1 && shape.last() == Some(&params.seq);
        if !comparison.shapes_match() && per_key {
            notes.push("this file holds one bias per key ([heads, 1, seq]), as BLOOM and MPT store ALiBi: check it with --as alibi --form bloom (m_h * j) or --form mpt (m_h * (j - (seq - 1)))".to_owned());
        }
        // The ulp of the file's type (or the tolerance given) at each magnitude.
        let allowed = |magnitude: f64| match (stored, explicit) {
            (Some(stored), None) => 8.0 * stored.ulp(magnitude.max(f64::MIN_POSITIVE)),
            _ => tolerance.abs + tolerance.rel * magnitude,
        };
        if !matches
            && comparison.shapes_match()
            && equal_up_to_row_constants(reference, loaded, allowed)
        {
            // Masked with the float32 minimum rather than -inf (x-transformers, MLX, many
            // attention kernels): equal as it is where unmasked, or only up to a constant.
            let unmasked = super::with_float32_minimum_as_masked(loaded);
            let note = match &unmasked {
                Some(table)
                    if compare_under_rule(reference, table, stored, explicit, spec).matches() =>
                {
                    "verdict: equivalent: masked with the float32 minimum (-3.4e38) where the reference has -inf, equal elsewhere (the same attention after softmax)"
                }
                Some(_) => {
                    "verdict: equivalent: masked with the float32 minimum (-3.4e38) where the reference has -inf, and equal elsewhere up to a constant per query row (the same attention after softmax)"
                }
                None => {
                    "verdict: equivalent: equal up to a constant per query row (the same attention after softmax)"
                }
            };
            notes.push(note.to_owned());
            matches = true;
        }
    }
    if !matches
        && comparison.shapes_match()
        && let Some(float32_grid) = float32_grid_coordinates(spec)
        && let Ok(table) = crate::engine::cpu::compute(&float32_grid)
    {
        let table = table.into_real();
        if compare_under_rule(&table, loaded, stored, explicit, spec).matches() {
            matches = float32_reading(
                "with the grid's coordinates formed in float32 as diffusers' \
                 get_2d_sincos_pos_embed forms them (arange(g) / (g / base_size) / \
                 interpolation_scale: k / f32(1/s) per axis) before its float64 table",
                explicit.is_some(),
                &mut notes,
            );
        }
    }
    if !matches && comparison.shapes_match() {
        // The first order any reading reproduces (under a tolerance of the user's, the first
        // that adds a note).
        for (variant, order) in scale_orders(spec) {
            let noted = notes.len();
            matches = float32_readings(&variant, loaded, explicit, order, &mut notes);
            if matches || notes.len() > noted {
                break;
            }
        }
    }
    if !matches
        && comparison.shapes_match()
        && explicit.is_none()
        && let Some(narrow @ (StoredFloat::F16 | StoredFloat::Bf16)) = stored
        && narrow_of_float32(spec, loaded, narrow)
    {
        // A float16 or bfloat16 file of a kind PyTorch computes in float32: its float32
        // angles (off by 4e-3 rad at 10^5) then its narrow rounding.
        notes.push(format!(
            "verdict: MATCH as PyTorch computes it in float32 (--arith torch-f32), stored in {}: within 8 ulp of that type of that computation",
            narrow.name()
        ));
        matches = true;
    }
    let located = if matches {
        None
    } else {
        super::locate(&comparison, reference, loaded, stored, show)
    };
    Verdict {
        comparison,
        notes,
        matches,
        located,
    }
}

/// A scaled 2D sin-cos table with its coordinates formed in float32 as diffusers forms them;
/// `None` for other tables.
fn float32_grid_coordinates(spec: &TableSpec) -> Option<TableSpec> {
    use crate::encoding::grid::GridCoordinates;
    match spec {
        TableSpec::SinCos2d(p) if !p.is_plain_grid() && p.coordinates == GridCoordinates::Exact => {
            let mut float32 = *p;
            float32.coordinates = GridCoordinates::Float32Quotient;
            Some(TableSpec::SinCos2d(float32))
        }
        _ => None,
    }
}

/// The float32 orders of a table's position scale: the spec as given, then, for positions
/// scaled, the scale applied to the float32 angle instead, with how a report says so.
fn scale_orders(spec: &TableSpec) -> Vec<(TableSpec, &'static str)> {
    use crate::encoding::positions::ScaleAt;
    let mut orders = vec![(spec.clone(), "")];
    if let TableSpec::AtPositions(placed) = spec
        && placed.positions.scale != 1.0
    {
        let mut other = placed.clone();
        other.positions = placed.positions.with_scale_at(ScaleAt::Angle);
        orders.push((
            TableSpec::AtPositions(other),
            ", the scale applied to the float32 angle (diffusers' get_timestep_embedding(scale=...))",
        ));
    }
    orders
}

/// The float32 readings of `loaded` as `spec` (shapes equal): PyTorch's own computation, a
/// library's own float32 frequencies, a library's recipe; each one that reproduces the file
/// adds its note; returns whether one is a match. `order` says how a scale was applied.
fn float32_readings(
    spec: &TableSpec,
    loaded: &ArrayD<f64>,
    explicit: Option<Tolerance>,
    order: &str,
    notes: &mut Vec<String>,
) -> bool {
    let mut matches = false;
    if let Some((mode, ulps)) = torch_f32_match(spec, loaded) {
        let form = match mode.form {
            FreqForm::Pow => "pow",
            FreqForm::Exp => "exp",
        };
        let build = if mode.block == AVX512_BLOCK {
            ", an AVX-512 build"
        } else {
            ""
        };
        // ALiBi slopes have no frequency form: only sin/cos tables name theirs.
        let how = if matches!(
            spec,
            TableSpec::AlibiSlopes { .. } | TableSpec::AlibiKeys { .. }
        ) {
            format!("(--arith torch-f32{build}{order})")
        } else {
            format!("(--arith torch-f32 --freq-form {form}{build}{order})")
        };
        // An explicit tolerance is the user's own: the float32 match is reported, not applied.
        if explicit.is_some() {
            notes.push(format!("note: it is within {ulps:.2} ulp of the same table computed as PyTorch computes it in float32 {how}; without --atol/--rtol that counts as a match"));
        } else {
            notes.push(format!("verdict: MATCH as PyTorch computes it in float32 {how}: within {ulps:.2} ulp of that computation, so the differences above are float32 rounding"));
            matches = true;
        }
    }
    if !matches && own_frequencies_table(spec, loaded).is_some() {
        let how = format!(
            "in float32 from float32 frequencies its library's exp or pow formed (each within \
             {OWN_FREQUENCY_ULPS} ulp of PyTorch's or of the exact one rounded: MKL's exp in \
             PyTorch's x86 builds, CUDA's powf, NumPy's, TensorFlow's), the angle f32(p)·ω \
             rounded once{order} and sin/cos within 2 ulp"
        );
        matches |= float32_reading(&how, explicit.is_some(), notes);
    }
    if !matches
        && let TableSpec::Sinusoidal(params) = spec.unpositioned()
        && let Some(recipe) = library_recipe_match(spec, params, loaded)
    {
        let how = format!(
            "in float32 as {}, the angle f32(p)·ω rounded once{order} and sin/cos within 2 ulp",
            recipe.describe(params)
        );
        matches |= float32_reading(&how, explicit.is_some(), notes);
    }
    matches
}

/// Says that a float32 reading (`how`) reproduces the file: a match, or, under a tolerance of
/// the user's (which is theirs to keep), a note; returns whether it is a match.
fn float32_reading(how: &str, explicit: bool, notes: &mut Vec<String>) -> bool {
    if explicit {
        notes.push(format!(
            "note: it matches {how}; without --atol/--rtol that counts as a match"
        ));
        false
    } else {
        notes.push(format!(
            "verdict: MATCH {how}, so the differences above are float32 rounding"
        ));
        true
    }
}

/// `loaded` compared with `reference` under the rule the verdict applies: the file type's
/// default when it has one and no tolerance was given, else the tolerance.
fn compare_under_rule(
    reference: &ArrayD<f64>,
    loaded: &ArrayD<f64>,
    stored: Option<StoredFloat>,
    explicit: Option<Tolerance>,
    spec: &TableSpec,
) -> Comparison {
    match (stored, explicit) {
        (Some(stored), None) => compare_stored(
            reference,
            loaded,
            UlpRule::default_for(stored, ulp_floor(spec, reference)),
        ),
        _ => compare(reference, loaded, explicit.unwrap_or_default()),
    }
}

/// How far, in float32 ulps, a library's float32 frequency may be from PyTorch's or from the
/// exact one: the error of the `exp` or `pow` that forms it (SLEEF's and MKL's 1 ulp, CUDA's
/// `powf` 4 ulp) and of the rounding of the reciprocal.
pub const OWN_FREQUENCY_ULPS: i32 = 4;

/// Whether `loaded` is a sin/cos table (sinusoidal, RoPE angles, caches, rotations) computed in
/// float32 from float32 frequencies of its own library, as every library computes it once its
/// `exp` or `pow` has formed the frequencies (MKL's `exp` in PyTorch's x86 builds, CUDA's
/// `powf`, NumPy's and TensorFlow's): angles `f32(p) * freq` rounded once, sin and cos to 2
/// ulp. The frequencies tried for each pair are PyTorch's (either form, either vector width)
/// and the exact one rounded to float32, each moved by up to [`OWN_FREQUENCY_ULPS`]; each
/// column (which depends on one frequency) must match one of them. Tables are computed only
/// until every column has matched. Returns the table of the columns that matched, laid out as
/// `spec`'s (squeezed).
pub fn own_frequencies_table(spec: &TableSpec, loaded: &ArrayD<f64>) -> Option<ArrayD<f64>> {
    let exact = crate::engine::exact_frequencies(spec);
    let centers = std::iter::once(exact.clone())
        .chain(
            TorchMode::all()
                .into_iter()
                .map(|mode| crate::engine::torch_frequencies(spec, mode)),
        )
        .collect();
    let floor = |scale: f64| match spec {
        TableSpec::RopeApply { .. } => scale,
        _ => scale / 4096.0,
    };
    fit_own_frequencies(centers, loaded.view(), floor, |freqs| {
        let table = cpu::compute_with_float32_frequencies(spec, freqs).ok()?;
        Some(super::squeezed(&table.into_real()))
    })
}

/// The library recipe ([`FrequencyRecipe`]) that makes `loaded`, if one does: see
/// [`recipe_table`].
fn library_recipe_match(
    spec: &TableSpec,
    params: &crate::encoding::sinusoidal::SinusoidalParams,
    loaded: &ArrayD<f64>,
) -> Option<FrequencyRecipe> {
    FrequencyRecipe::applying_to(params)
        .into_iter()
        .find(|&recipe| recipe_table(spec, params, recipe, loaded).is_some())
}

/// The table of `spec` (a sinusoidal table of `params`) in float32 from `recipe`'s float32
/// frequencies, each moved by up to [`OWN_FREQUENCY_ULPS`] (the library's `exp`), as
/// [`own_frequencies_table`] fits them to `loaded`; `None` when the recipe does not apply or
/// some column matches none of them.
pub fn recipe_table(
    spec: &TableSpec,
    params: &crate::encoding::sinusoidal::SinusoidalParams,
    recipe: FrequencyRecipe,
    loaded: &ArrayD<f64>,
) -> Option<ArrayD<f64>> {
    if !FrequencyRecipe::applying_to(params).contains(&recipe) {
        return None;
    }
    let centers = vec![recipe.frequencies(params)];
    fit_own_frequencies(
        centers,
        loaded.view(),
        |scale| scale / 4096.0,
        |freqs| {
            let table = cpu::compute_with_float32_frequencies(spec, freqs).ok()?;
            Some(super::squeezed(&table.into_real()))
        },
    )
}

/// The search of [`own_frequencies_table`] for any table made from per-pair frequencies:
/// `centers` are frequency vectors (exact or a library's, one value per pair) whose float32
/// neighbours are tried; `make` makes the table from float32 frequencies (widened to f64), laid
/// out as `loaded`; `floor` gives, from the table's largest magnitude, the magnitude below which
/// errors are measured in ulps of the floor. Returns the table of the matched columns.
pub(crate) fn fit_own_frequencies(
    centers: Vec<Vec<f64>>,
    loaded: ndarray::ArrayViewD<'_, f64>,
    floor: impl Fn(f64) -> f64,
    make: impl Fn(Vec<f64>) -> Option<ArrayD<f64>>,
) -> Option<ArrayD<f64>> {
    let pairs = centers.first()?.len();
    let valid =
        |freqs: &Vec<f64>| freqs.len() == pairs && freqs.iter().all(|w| w.is_finite() && *w > 0.0);
    let centers: Vec<Vec<f64>> = centers.into_iter().filter(valid).collect();
    if pairs == 0 || centers.is_empty() {
        return None;
    }
    // Each pair's candidates, nearest a centre first.
    let candidates: Vec<Vec<f32>> = (0..pairs)
        .map(|pair| {
            let mut list: Vec<f32> = Vec::new();
            for distance in 0..=OWN_FREQUENCY_ULPS {
                for center in &centers {
                    for step in [distance, -distance] {
                        let moved = (center[pair] as f32)
                            .to_bits()
                            .checked_add_signed(step)
                            .map(f32::from_bits)
                            .filter(|w| w.is_finite() && *w > 0.0);
                        if let Some(w) = moved.filter(|w| !list.contains(w)) {
                            list.push(w);
                        }
                    }
                }
            }
            list
        })
        .collect();
    let rounds = candidates.iter().map(Vec::len).max().unwrap_or(0);
    // The table of the columns matched so far, and which they are.
    let mut found: Option<(ArrayD<f64>, Vec<bool>)> = None;
    for round in 0..rounds {
        let freqs: Vec<f64> = candidates
            .iter()
            .map(|list| f64::from(*list.get(round).unwrap_or(&list[0])))
            .collect();
        let table = make(freqs)?.as_standard_layout().to_owned();
        let floor = floor(super::largest_magnitude(&table));
        let by_column = super::f32_ulps_apart_by_column(table.view(), loaded.view(), floor)?;
        let (composite, matched) =
            found.get_or_insert_with(|| (table.clone(), vec![false; by_column.len()]));
        let columns = matched.len();
        let newly: Vec<bool> = matched
            .iter_mut()
            .zip(by_column)
            .map(|(column, ulps)| {
                let fits = !*column && ulps.is_some_and(|u| u <= 2.0);
                *column |= fits;
                fits
            })
            .collect();
        if let (Some(to), Some(from)) = (composite.as_slice_mut(), table.as_slice()) {
            for (k, (to, from)) in to.iter_mut().zip(from).enumerate() {
                if newly[k % columns] {
                    *to = *from;
                }
            }
        }
        if matched.iter().all(|&m| m) {
            return found.map(|(composite, _)| composite);
        }
    }
    None
}

/// Below which magnitude a file type's default rule measures errors in ulps of a floor rather
/// than of the value: never for tables of magnitudes (frequencies, slopes, the attention
/// factor, where a small value is as significant as a large one), else the ulp at 1 (or at
/// the table's largest value, when smaller), for values that cross zero.
fn ulp_floor(spec: &crate::engine::TableSpec, reference: &ndarray::ArrayD<f64>) -> f64 {
    use crate::engine::TableSpec;
    if matches!(
        spec,
        TableSpec::RopeInvFreq { .. }
            | TableSpec::AlibiSlopes { .. }
            | TableSpec::RopeAttentionFactor { .. }
    ) {
        return 0.0;
    }
    let scale = super::largest_magnitude(reference);
    scale.min(1.0)
}

/// Whether `loaded`, a `narrow` file, is within that type's default rule of the table PyTorch
/// computes in float32 (any of its modes).
fn narrow_of_float32(spec: &TableSpec, loaded: &ArrayD<f64>, narrow: StoredFloat) -> bool {
    if crate::engine::check_arithmetic(spec, Arithmetic::TORCH).is_err() {
        return false;
    }
    TorchMode::all().into_iter().any(|mode| {
        cpu::compute_arith(spec, Arithmetic::TorchF32(mode)).is_ok_and(|torch| {
            let torch = torch.into_real();
            let rule = UlpRule::default_for(narrow, ulp_floor(spec, &torch));
            compare_stored(&torch, loaded, rule).matches()
        })
    })
}

/// The way PyTorch's float32 computation reproduces `loaded` to 2 ulp, if one does: frequencies
/// formed either way, on AVX2 or AVX-512 builds. Values near zero are held to the ulp of the
/// table's largest value (rope-apply: a rotated pair's error follows its inputs' size) or of
/// 2^-12 of it (every other kind).
fn torch_f32_match(
    spec: &crate::engine::TableSpec,
    loaded: &ndarray::ArrayD<f64>,
) -> Option<(TorchMode, f64)> {
    crate::engine::check_arithmetic(spec, Arithmetic::TORCH).ok()?;
    TorchMode::all().into_iter().find_map(|mode| {
        let torch = cpu::compute_arith(spec, Arithmetic::TorchF32(mode))
            .ok()?
            .into_real();
        let scale = super::largest_magnitude(&torch);
        // A rotation's values are of the input's size wherever they sit: its float32 error
        // is measured against the largest, at given positions too.
        let floor = match spec.unpositioned() {
            crate::engine::TableSpec::RopeApply { .. } => scale,
            _ => scale / 4096.0,
        };
        let ulps = super::f32_ulps_apart(&torch, loaded, floor)?;
        (ulps <= 2.0).then_some((mode, ulps))
    })
}
