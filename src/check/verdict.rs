//! The verdict of `poslab check` and the app's Check view, one for both: a file compared with
//! an exact table under the file type's default rule (or the tolerance given), then the readings
//! that make a mismatch a match: PyTorch's own float32 computation, and, for causal ALiBi,
//! equality up to a constant per query row.

use ndarray::ArrayD;

use super::{Comparison, Tolerance, UlpRule, compare, compare_stored, equal_up_to_row_constants};
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
}

impl Verdict {
    /// The comparison's report, then the notes.
    pub fn report(&self) -> String {
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
/// to 2 ulp matches.
pub fn verdict(
    spec: &TableSpec,
    reference: &ArrayD<f64>,
    loaded: &ArrayD<f64>,
    stored: Option<StoredFloat>,
    explicit: Option<Tolerance>,
) -> Verdict {
    let tolerance = explicit.unwrap_or_default();
    let comparison = match (stored, explicit) {
        (Some(stored), None) => compare_stored(
            reference,
            loaded,
            UlpRule::default_for(stored, ulp_floor(spec, reference)),
        ),
        _ => compare(reference, loaded, tolerance),
    };
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
            notes.push("verdict: equivalent: equal up to a constant per query row (the same attention after softmax)".to_owned());
            matches = true;
        }
    }
    if !matches
        && comparison.shapes_match()
        && let Some((mode, ulps)) = torch_f32_match(spec, loaded)
    {
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
            format!("(--arith torch-f32{build})")
        } else {
            format!("(--arith torch-f32 --freq-form {form}{build})")
        };
        // An explicit tolerance is the user's own: the float32 match is reported, not applied.
        if explicit.is_some() {
            notes.push(format!("note: it is within {ulps:.2} ulp of the same table computed as PyTorch computes it in float32 {how}; without --atol/--rtol that counts as a match"));
        } else {
            notes.push(format!("verdict: MATCH as PyTorch computes it in float32 {how}: within {ulps:.2} ulp of that computation, so the differences above are float32 rounding"));
            matches = true;
        }
    }
    Verdict {
        comparison,
        notes,
        matches,
    }
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
        let floor = match spec {
            crate::engine::TableSpec::RopeApply { .. } => scale,
            _ => scale / 4096.0,
        };
        let ulps = super::f32_ulps_apart(&torch, loaded, floor)?;
        (ulps <= 2.0).then_some((mode, ulps))
    })
}
