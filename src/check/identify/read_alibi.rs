//! ALiBi: slopes, biases, the per-key forms of BLOOM and MPT, and CROMA's 2D biases.

use super::*;

/// ALiBi as BLOOM and MPT store it, `[heads, 1, seq]` (squeezed to `[heads, seq]`): one bias
/// per key, `m_h j` or `m_h (j - (seq - 1))`, with the reference rule's slopes.
pub(super) fn alibi_per_key(search: &mut Search, table: &Array2<f64>) {
    let (heads, seq) = table.dim();
    if seq < 2 || heads > 1 << 16 || table.iter().any(|v| !v.is_finite()) {
        return;
    }
    let Ok(slopes) = alibi::slopes(heads) else {
        return;
    };
    for (form, name) in [
        (
            alibi::AlibiForm::Bloom,
            "BLOOM's build_alibi_tensor, m_h · j",
        ),
        (
            alibi::AlibiForm::Mpt,
            "MPT's build_alibi_bias, m_h · (j - (seq - 1))",
        ),
    ] {
        let reference = Array2::from_shape_fn((heads, seq), |(h, j)| {
            alibi::key_bias(slopes[h], form, j, seq)
        });
        let form_name = match form {
            alibi::AlibiForm::Bloom => "bloom",
            _ => "mpt",
        };
        let description =
            format!("ALiBi as {name} per key, {heads} heads, {seq} keys (--form {form_name})");
        search.name_words(
            description.clone(),
            alibi_words(heads, seq, &[("form", form_name.to_owned())]),
        );
        search.consider(description, reference.into_dyn());
    }
}

/// One ALiBi head `[seq, seq]`, causal or symmetric, its slope read off `[1, 0]`.
pub(super) fn alibi_head(search: &mut Search, table: &Array2<f64>) {
    let seq = table.nrows();
    // Least squares over the lower triangle: bias = -m (i - j).
    let below_diagonal = table
        .indexed_iter()
        .filter(|((i, j), _)| j < i)
        .map(|((i, j), &bias)| ((i - j) as f64, bias));
    let Some(fitted) = fitted_slope(below_diagonal) else {
        return;
    };
    let (slope, owners, owner) = named_slope(fitted);
    for mode in [AlibiMode::Causal, AlibiMode::Symmetric] {
        let reference =
            Array2::from_shape_fn((seq, seq), |(i, j)| alibi::bias_value(slope, mode, i, j));
        let mode_name = match mode {
            AlibiMode::Causal => "causal",
            AlibiMode::Symmetric => "symmetric",
        };
        let description = format!(
            "ALiBi bias of one head, {mode_name}, slope {slope} = 2^{:.3} ({owners}), {seq} positions",
            slope.log2()
        );
        if let Some((heads, head)) = owner {
            search.name_words(
                description.clone(),
                alibi_words(
                    heads,
                    seq,
                    &[("head", head.to_string()), ("mode", mode_name.to_owned())],
                ),
            );
        }
        search.consider(description, reference.into_dyn());
    }
}

/// One head of CROMA's 2D ALiBi, `[P, P]`: `-m` times the Euclidean distance between
/// patches, on every grid of `P` patches at least 2 wide and 2 high (a 1 x P grid is the
/// symmetric 1D head), with `m` fitted on the first row.
pub(super) fn alibi_2d_head(search: &mut Search, table: &Array2<f64>) {
    let patches = table.nrows();
    if patches > 4096 {
        return;
    }
    for grid_h in (2..patches).filter(|h| patches.is_multiple_of(*h) && patches / h >= 2) {
        let grid = GridParams {
            grid_h,
            grid_w: patches / grid_h,
        };
        let first_row = table
            .row(0)
            .into_iter()
            .enumerate()
            .map(|(key, &bias)| (grid.distance(0, key, DistanceMetric::Euclidean), bias));
        let Some(fitted) = fitted_slope(first_row) else {
            continue;
        };
        let (slope, owners, owner) = named_slope(fitted);
        let bias = |query: usize, key: usize| alibi::bias_2d_value(slope, &grid, query, key);
        let description = format!(
            "2D ALiBi bias of one head (CROMA), slope {slope} = 2^{:.3} ({owners}), \
             {grid_h} x {} grid, -m · Euclidean distance between patches",
            slope.log2(),
            grid.grid_w
        );
        if let Some((heads, head)) = owner {
            search.name_words(
                description.clone(),
                TableWords {
                    kind: "alibi-2d",
                    options: vec![
                        ("heads", heads.to_string()),
                        ("head", head.to_string()),
                        ("grid_h", grid_h.to_string()),
                        ("grid_w", grid.grid_w.to_string()),
                    ],
                },
            );
        }
        search.consider_probed(
            description,
            Array2::from_shape_fn((patches.min(PROBE_ROWS), patches), |(q, k)| bias(q, k))
                .into_dyn(),
            || Some(Array2::from_shape_fn((patches, patches), |(q, k)| bias(q, k)).into_dyn()),
        );
    }
}

/// The slope `m > 0` of `bias = -m · distance` fitted by least squares to `(distance, bias)`
/// pairs (infinite biases, masked cells, left out); `None` when none fits.
pub(super) fn fitted_slope(points: impl Iterator<Item = (f64, f64)>) -> Option<f64> {
    let (weighted, squares) = points
        .filter(|(_, bias)| bias.is_finite())
        .fold((0.0, 0.0), |(w, s), (distance, bias)| {
            (w - bias * distance, s + distance * distance)
        });
    let fitted = weighted / squares;
    (fitted.is_finite() && fitted > 0.0).then_some(fitted)
}

/// The reference rule's slope nearest `fitted` and the (heads, head) that have it, as the
/// rule assigns them ("head 3 of 8, or head 1 of 4"); `fitted` itself when no head count
/// up to 128 gives a slope within 1e-4 of it; and the first (heads, head), the fewest heads.
/// An `alibi` table's `poslab table` words: its heads and length, then `more`.
pub(super) fn alibi_words(heads: usize, seq: usize, more: &[(&'static str, String)]) -> TableWords {
    let mut options = vec![("heads", heads.to_string()), ("seq", seq.to_string())];
    options.extend(more.iter().cloned());
    TableWords {
        kind: "alibi",
        options,
    }
}

fn named_slope(fitted: f64) -> (f64, String, Option<(usize, usize)>) {
    let mut slope = None;
    let mut first_owner = None;
    // Powers of two first: the head counts models use.
    let counts = (0..8)
        .map(|k| 1usize << k)
        .chain((1..=128usize).filter(|n| !n.is_power_of_two()));
    let owners: Vec<String> = counts
        .filter_map(|heads| {
            let slopes = alibi::slopes(heads).ok()?;
            let head = slopes
                .iter()
                .position(|&m| (m - fitted).abs() <= 1e-4 * fitted)?;
            slope.get_or_insert(slopes[head]);
            first_owner.get_or_insert((heads, head));
            Some(format!("head {head} of {heads}"))
        })
        .take(3)
        .collect();
    let slope = slope.unwrap_or(fitted);
    let owners = if owners.is_empty() {
        "a slope no head count gives".to_owned()
    } else {
        owners.join(", or ")
    };
    (slope, owners, first_owner)
}

/// CROMA's 2D ALiBi of every head, `[heads, P, P]`: `-m_h` times the Euclidean distance
/// between patches, on every grid of `P` patches at least 2 wide and 2 high; a grid is ruled
/// out on the first head before the whole table is made.
pub(super) fn alibi_2d(search: &mut Search, table: &ndarray::Array3<f64>) {
    let (heads, patches, _) = table.dim();
    if patches > 4096 {
        return;
    }
    let Ok(slopes) = alibi::slopes(heads) else {
        return;
    };
    for grid_h in (2..patches).filter(|h| patches.is_multiple_of(*h) && patches / h >= 2) {
        let grid = GridParams {
            grid_h,
            grid_w: patches / grid_h,
        };
        let description = format!(
            "2D ALiBi biases (CROMA), {heads} heads, {grid_h} x {} grid, -m_h · Euclidean \
             distance between patches",
            grid.grid_w
        );
        // The first head, as the first "row" of the table's first axis.
        let first_head = ndarray::Array3::from_shape_fn((1, patches, patches), |(_, q, k)| {
            alibi::bias_2d_value(slopes[0], &grid, q, k)
        });
        let params = Alibi2dParams { heads, grid };
        search.name_words(
            description.clone(),
            TableWords {
                kind: "alibi-2d",
                options: vec![
                    ("heads", heads.to_string()),
                    ("grid_h", grid_h.to_string()),
                    ("grid_w", grid.grid_w.to_string()),
                ],
            },
        );
        search.consider_probed(description, first_head.into_dyn(), || {
            super::noted(cpu::compute(&TableSpec::Alibi2d { params, head: None }))
                .map(|reference| reference.into_real())
        });
    }
}

/// ALiBi of the last `Q` queries over `K` keys, `[heads, Q, K]` (`alibi --queries Q`: a
/// decoding step with a cache, x-transformers and MLX), or with heads of slope 0 after the
/// sloped ones (`--zero-heads`, x-transformers' heads without ALiBi), square or not. Each head's
/// slope is read off its first query's bias on key 0, `-m (K - Q)`; the heads whose slope is 0
/// must all come last, and the sloped ones must have the reference rule's slopes for their
/// count (else the hypothesis is still compared, and misses).
pub(super) fn alibi_window(search: &mut Search, table: &ndarray::Array3<f64>) {
    let (heads, queries, keys) = table.dim();
    if queries > keys || keys < 2 || heads > 1 << 16 {
        return;
    }
    let first_query = keys - queries;
    let sloped = if first_query == 0 {
        // The first query is key 0 itself: read each head on its last query instead.
        (0..heads)
            .take_while(|&h| table[[h, queries - 1, 0]] != 0.0)
            .count()
    } else {
        (0..heads).take_while(|&h| table[[h, 0, 0]] != 0.0).count()
    };
    let zero_heads = heads - sloped;
    // The plain table is tried elsewhere; an empty head count has no slopes.
    if sloped == 0 || (first_query == 0 && zero_heads == 0) {
        return;
    }
    for mode in [AlibiMode::Causal, AlibiMode::Symmetric] {
        let spec = TableSpec::AlibiWindow {
            params: AlibiParams {
                heads: sloped,
                seq: keys,
                mode,
            },
            queries,
            zero_heads,
            head: None,
        };
        let Some(reference) = noted(cpu::compute(&spec)) else {
            continue;
        };
        let mode_name = match mode {
            AlibiMode::Causal => "causal",
            AlibiMode::Symmetric => "symmetric",
        };
        let zeros = if zero_heads > 0 {
            format!(" and {zero_heads} of slope 0 after them (--zero-heads {zero_heads})")
        } else {
            String::new()
        };
        let positions = if queries == keys {
            format!("{keys} positions")
        } else {
            format!(
                "the last {queries} queries (positions {first_query}..{}) over {keys} keys (--seq {keys} --queries {queries})",
                keys - 1
            )
        };
        let description =
            format!("ALiBi biases, {sloped} sloped heads{zeros}, {positions}, {mode_name}");
        let mut more = vec![("mode", mode_name.to_owned())];
        if queries != keys {
            more.push(("queries", queries.to_string()));
        }
        if zero_heads > 0 {
            more.push(("zero_heads", zero_heads.to_string()));
        }
        search.name_words(description.clone(), alibi_words(sloped, keys, &more));
        search.consider(description, reference.into_real());
    }
}

/// ALiBi's causal biases `[heads, seq, seq]` as a decoder adds BLOOM's or MPT's per-key form:
/// broadcast over the queries and masked above the diagonal (with `-inf`, or with the float32
/// minimum as `masked_fill(mask, finfo.min)` does). Each row differs from `-m_h (i - j)` by a
/// constant, so the attention after softmax is the same: equivalent, and said so.
pub(super) fn alibi_broadcast_causal(search: &mut Search, table: &ndarray::Array3<f64>) {
    let (heads, seq, keys) = table.dim();
    if seq != keys || seq < 2 || heads > 1 << 16 {
        return;
    }
    let Ok(slopes) = alibi::slopes(heads) else {
        return;
    };
    // The mask the file uses, read off the cell above the first diagonal.
    let masked = table[[0, 0, 1]];
    let mask_name = if masked == f64::NEG_INFINITY {
        "-inf"
    } else if masked == f64::from(f32::MIN) {
        "the float32 minimum (-3.4e38)"
    } else {
        return;
    };
    for (form, name) in [
        (alibi::AlibiForm::Bloom, "BLOOM's m_h · j"),
        (alibi::AlibiForm::Mpt, "MPT's m_h · (j - (seq - 1))"),
    ] {
        let reference = ndarray::Array3::from_shape_fn((heads, seq, seq), |(h, i, j)| {
            if j > i {
                masked
            } else {
                alibi::key_bias(slopes[h], form, j, seq)
            }
        });
        search.consider(
            format!(
                "ALiBi biases, {heads} heads, {seq} positions, causal, stored as {name} for every query, masked with {mask_name}: equivalent to -m_h · (i - j) (each row differs by a constant: the same attention after softmax)"
            ),
            reference.into_dyn(),
        );
    }
}
