//! Learned position tables (`[positions, dim]`, e.g. GPT-2's `wpe` or BERT's
//! `position_embeddings.weight`) seen as the curve their rows trace: the cosine similarity
//! between rows, and the rows projected onto their first principal components (with
//! nalgebra's singular value decomposition).

use ndarray::{Array1, Array2};

/// The most positions and columns a learned table may have here: its `[P, P]` similarity
/// matrix and the sinusoidal one beside it take 256 MiB at 4096 positions.
pub const MAX_POSITIONS: usize = 4096;
pub const MAX_DIM: usize = 16_384;
/// The most work a decomposition may take, `P · D · min(P, D)`: about 20 s on two cores (GPT-2
/// XL's 1024 x 1600 table is 1.7e9, about 6 s).
pub const MAX_WORK: f64 = 6e9;

/// Checks that `table` can be drawn: at least 2 positions and 1 column, within the limits,
/// every value finite.
pub fn check_table(table: &Array2<f64>) -> Result<(), String> {
    let (positions, dim) = table.dim();
    if !(2..=MAX_POSITIONS).contains(&positions) {
        return Err(format!(
            "holds {positions} positions: a learned position table has 2 to {MAX_POSITIONS} rows"
        ));
    }
    if !(1..=MAX_DIM).contains(&dim) {
        return Err(format!(
            "holds {dim} columns: a learned position table has 1 to {MAX_DIM}"
        ));
    }
    let work = positions as f64 * dim as f64 * positions.min(dim) as f64;
    if work > MAX_WORK {
        return Err(format!(
            "holds a {positions} x {dim} table, too large to decompose here: P·D·min(P, D) is {work:.1e}, at most {MAX_WORK:.0e} (GPT-2 XL's 1024 x 1600 is 1.7e9)"
        ));
    }
    if let Some(((row, col), _)) = table.indexed_iter().find(|(_, v)| !v.is_finite()) {
        return Err(format!(
            "holds a value that is not finite at row {row}, column {col}"
        ));
    }
    Ok(())
}

/// `[P, P]`: the cosine of the angle between rows `i` and `j` (0 where a row is all zeros).
pub fn cosine_similarity(table: &Array2<f64>) -> Array2<f64> {
    let norms: Vec<f64> = table
        .rows()
        .into_iter()
        .map(|row| row.dot(&row).sqrt())
        .collect();
    let gram = table.dot(&table.t());
    Array2::from_shape_fn(gram.dim(), |(i, j)| {
        let scale = norms[i] * norms[j];
        if scale > 0.0 {
            (gram[[i, j]] / scale).clamp(-1.0, 1.0)
        } else {
            0.0
        }
    })
}

/// The first principal components of a table's rows.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Principal {
    /// The mean row, subtracted before the decomposition.
    #[serde(with = "crate::jobs::remote::bulk")]
    pub mean: Array1<f64>,
    /// `[k, dim]`: unit directions, largest variance first, each signed so that its entry of
    /// largest magnitude is positive.
    #[serde(with = "crate::jobs::remote::bulk")]
    pub components: Array2<f64>,
    /// `[P, k]`: each centred row's coordinates along the components.
    #[serde(with = "crate::jobs::remote::bulk")]
    pub projections: Array2<f64>,
    /// The fraction of the total variance along each component.
    pub explained: Vec<f64>,
}

/// The first `k` principal components of `table`'s rows (fewer when the table has fewer
/// positions or columns), from the singular value decomposition of the centred table.
pub fn principal_components(table: &Array2<f64>, k: usize) -> Principal {
    let (positions, dim) = table.dim();
    let mean = table
        .mean_axis(ndarray::Axis(0))
        .unwrap_or_else(|| Array1::zeros(dim));
    let centred = nalgebra::DMatrix::from_fn(positions, dim, |r, c| table[[r, c]] - mean[c]);
    let svd = nalgebra::linalg::SVD::new(centred, false, true);
    let mut order: Vec<usize> = (0..svd.singular_values.len()).collect();
    order.sort_by(|&a, &b| svd.singular_values[b].total_cmp(&svd.singular_values[a]));
    let total: f64 = svd.singular_values.iter().map(|s| s * s).sum();
    let k = k.min(order.len());
    let v_t = svd.v_t.as_ref();
    let mut components = Array2::zeros((k, dim));
    let mut explained = Vec::with_capacity(k);
    for (n, &index) in order.iter().take(k).enumerate() {
        let row: Vec<f64> = match v_t {
            Some(v_t) => v_t.row(index).iter().copied().collect(),
            None => vec![0.0; dim],
        };
        let largest = row.iter().copied().fold(
            0.0f64,
            |best, v| if v.abs() > best.abs() { v } else { best },
        );
        let sign = if largest < 0.0 { -1.0 } else { 1.0 };
        for (c, v) in row.iter().enumerate() {
            components[[n, c]] = sign * v;
        }
        let s = svd.singular_values[index];
        explained.push(if total > 0.0 { s * s / total } else { 0.0 });
    }
    let centred = table - &mean;
    let projections = centred.dot(&components.t());
    Principal {
        mean,
        components,
        projections,
        explained,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_too_large_to_decompose_are_refused_up_front() {
        let large = Array2::<f64>::zeros((4096, 2048));
        let reason = check_table(&large).unwrap_err();
        assert!(reason.contains("too large to decompose"), "{reason}");
        assert!(check_table(&Array2::<f64>::zeros((1024, 1600))).is_ok());
        assert!(check_table(&Array2::<f64>::zeros((1, 8))).is_err());
        assert!(check_table(&Array2::<f64>::zeros((8, 0))).is_err());
    }

    #[test]
    fn a_zero_row_has_no_direction_and_a_similarity_of_zero() {
        let table = ndarray::array![[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]];
        let similarity = cosine_similarity(&table);
        assert_eq!(similarity[[0, 1]], 0.0);
        assert_eq!(similarity[[1, 1]], 1.0);
        assert_eq!(similarity[[1, 2]], 0.0);
    }
}
