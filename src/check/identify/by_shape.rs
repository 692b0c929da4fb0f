//! The hypotheses a table's number of axes suggests: a 1-D table is frequencies, slopes or a
//! dot-product curve; a 2-D one a position table, a cache, biases of one head, a grid's; a 3-D
//! one heads of biases, or (cos, sin) pairs.

use super::*;

/// The search for a table of its number of axes.
pub(super) fn search_by_shape(search: &mut Search) {
    match search.table.ndim() {
        1 => one_dimensional(search),
        2 => two_dimensional(search),
        3 => three_dimensional(search),
        _ => {}
    }
}

fn one_dimensional(search: &mut Search) {
    let Ok(values) = search.table.clone().into_dimensionality::<Ix1>() else {
        return;
    };
    let n = values.len();
    if n >= 2 {
        inverse_frequencies(search, values.as_slice().unwrap_or(&[]));
    }
    if let Ok(slopes) = alibi::slopes(n) {
        let description = if n == 1 {
            "ALiBi slope of 1 head (2^-8)".to_owned()
        } else {
            format!("ALiBi slopes of {n} heads")
        };
        search.name_words(
            description.clone(),
            TableWords {
                kind: "alibi-slopes",
                options: vec![("heads", n.to_string())],
            },
        );
        search.consider(description, ndarray::Array1::from(slopes).into_dyn());
    }
}

pub(super) fn two_dimensional(search: &mut Search) {
    let Ok(table) = search.table.clone().into_dimensionality::<Ix2>() else {
        return;
    };
    for transposed in [false, true] {
        let view = if transposed {
            table.t().to_owned()
        } else {
            table.clone()
        };
        let orient = |reference: Array2<f64>| {
            if transposed {
                reference.reversed_axes().into_dyn()
            } else {
                reference.into_dyn()
            }
        };
        let suffix = if transposed { ", transposed" } else { "" };
        sinusoidal(search, &view, &orient, suffix);
        rope_tables(search, &view, &orient, suffix);
    }
    let (rows, cols) = table.dim();
    if rows == cols && rows >= 2 {
        alibi_head(search, &table);
        alibi_2d_head(search, &table);
        patch_distances(search, rows);
        relative::relative_indices(search, &table);
    }
    alibi_per_key(search, &table);
    sincos_2d_tables(search, &table);
    axial_rope_tables(search, &table);
}

/// ALiBi biases of every head `[heads, seq, seq]`; Meta's rotary table `[seq, dim/2, 2]`.
fn three_dimensional(search: &mut Search) {
    let Ok(table) = search.table.clone().into_dimensionality::<Ix3>() else {
        return;
    };
    let (heads, seq, keys) = table.dim();
    if keys == 2 {
        complex_pairs(search, &table);
    }
    alibi_window(search, &table);
    if seq != keys {
        return;
    }
    for mode in [AlibiMode::Causal, AlibiMode::Symmetric] {
        let params = AlibiParams { heads, seq, mode };
        if let Some(reference) = noted(cpu::compute(&TableSpec::Alibi { params, head: None })) {
            let mode_name = match mode {
                AlibiMode::Causal => "causal",
                AlibiMode::Symmetric => "symmetric",
            };
            let description = format!("ALiBi biases, {heads} heads, {seq} positions, {mode_name}");
            search.name_words(
                description.clone(),
                alibi_words(heads, seq, &[("mode", mode_name.to_owned())]),
            );
            search.consider(description, reference.into_real());
        }
    }
    alibi_broadcast_causal(search, &table);
    alibi_2d(search, &table);
}

/// Meta's `freqs_cis` (`torch.polar(1, outer(t, freqs))`, complex64) as
/// `torch.view_as_real` stores it: `[seq, dim/2, 2]`, each pair's cos then sin. Laid out as
/// `[seq, dim]` that is a sinusoidal table, interleaved and cos first, so it is tried as one.
fn complex_pairs(search: &mut Search, table: &ndarray::Array3<f64>) {
    let (positions, pairs, _) = table.dim();
    let Ok(flat) = table
        .as_standard_layout()
        .to_owned()
        .into_shape_with_order((positions, 2 * pairs))
    else {
        return;
    };
    let orient = |reference: Array2<f64>| {
        reference
            .into_shape_with_order((positions, pairs, 2))
            .map(|r| r.into_dyn())
            // Not reached: the reference has the flattened table's shape. An empty table
            // would only make the hypothesis a shape mismatch.
            .unwrap_or_else(|_| ArrayD::zeros(ndarray::IxDyn(&[0])))
    };
    sinusoidal(
        search,
        &flat,
        &orient,
        ", stored as [seq, dim/2, 2] (cos, sin) pairs: Meta's freqs_cis through torch.view_as_real",
    );
    // The same pairs as a RoPE cache, read through its frequencies: scaled ones too
    // (torchtune's Llama 3 cache).
    if pairs >= 2 {
        rope_cache(
            search,
            &flat,
            &orient,
            "",
            PairLayout::Interleaved,
            CachePart::CosSin,
        );
    }
}
