//! Checking a projection whose rows were reordered from one RoPE pair layout to the other (see
//! [`crate::encoding::pair_permutation`]): by its rows, each compared exactly with the row of
//! the original it should hold, and by the attention scores the two give under RoPE. A
//! mismatch names the heads that differ and, where the rows show one, the known cause: not
//! permuted, the wrong direction, permuted twice, a key projection permuted with the query
//! head count (llama.cpp's converter under grouped-query attention), or heads of another size
//! (a head dim split across heads).

use std::collections::HashSet;
use std::fmt::Write as _;

use ndarray::ArrayView2;

use crate::encoding::pair_permutation::{Question, score, source_rows};

/// A row order a known mistake gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cause {
    /// The rows are in the original order.
    NotPermuted,
    /// Permuted the other way.
    WrongDirection,
    /// Permuted twice in the asked direction.
    Twice,
    /// A key projection of K heads permuted as the H query heads (`reversed`: and the other
    /// way).
    QueryHeadCount { query_heads: usize, reversed: bool },
    /// Permuted as `groups` heads of `size` rows each (`reversed`: and the other way).
    OtherHeads {
        groups: usize,
        size: usize,
        reversed: bool,
    },
}

impl Cause {
    /// One sentence naming the cause and what to look at.
    pub fn sentence(&self, question: &Question, head_dim: usize) -> String {
        let direction = question.direction.name();
        let heads = question.heads();
        let way = |reversed: bool| {
            if reversed {
                format!(
                    " and the other way ({}, not {direction})",
                    question.direction.reversed().name()
                )
            } else {
                String::new()
            }
        };
        match self {
            Cause::NotPermuted => {
                "the rows are in the original order: it was not permuted (was the permutation skipped for this projection?)".to_owned()
            }
            Cause::WrongDirection => format!(
                "it was permuted {}, the other way from {direction}: use the inverse permutation (view(heads, 2, d/2) where view(heads, d/2, 2) was meant, or the reverse)",
                question.direction.reversed().name()
            ),
            Cause::Twice => format!(
                "it was permuted {direction} twice: the permutation was applied to weights already permuted"
            ),
            Cause::QueryHeadCount {
                query_heads,
                reversed,
            } => format!(
                "it was permuted as {query_heads} heads of {} rows (the query head count) where this key projection has {heads} kv heads of {head_dim}{}: permute k_proj with num_key_value_heads (the grouped-query bug of llama.cpp's converter and of GGUF loaders that un-permute without it)",
                head_dim * heads / query_heads,
                way(*reversed)
            ),
            Cause::OtherHeads {
                groups,
                size,
                reversed,
            } if *size < head_dim => format!(
                "it was permuted as {groups} heads of {size} rows{}: each head of {head_dim} was split across {} groups (the head dim given to the permutation is wrong; check n_heads and head_dim)",
                way(*reversed),
                head_dim / size
            ),
            Cause::OtherHeads {
                groups,
                size,
                reversed,
            } => format!(
                "it was permuted as {groups} heads of {size} rows{}, where it has {heads} heads of {head_dim}: heads were merged (check n_heads and head_dim)",
                way(*reversed)
            ),
        }
    }
}

/// The outcome of comparing a permuted projection's rows with the original's.
#[derive(Debug, Clone, PartialEq)]
pub struct RowVerdict {
    pub matches: bool,
    pub head_dim: usize,
    /// The projection's heads (of its own count) holding a row that differs.
    pub wrong_heads: Vec<usize>,
    /// Rows of the permuted projection that are a row of the original somewhere.
    pub rows_found: usize,
    /// Rows of the original equal to another of its rows (whose places cannot be told apart).
    pub repeated_rows: usize,
    pub rows: usize,
    pub cause: Option<Cause>,
}

impl RowVerdict {
    /// The verdict's lines after its first: the heads that differ and the cause.
    pub fn details(&self, question: &Question) -> String {
        let mut text = String::new();
        if self.repeated_rows > 0 {
            let _ = writeln!(
                text,
                "  note: {} of the original's {} rows repeat another of its rows (zero rows?): where those stand cannot be told apart",
                self.repeated_rows, self.rows
            );
        }
        let heads = question.heads();
        if self.matches {
            let _ = writeln!(
                text,
                "  each of its {heads} heads of {} rows holds the original's rows reordered {}",
                self.head_dim,
                question.direction.name()
            );
            return text;
        }
        let _ = writeln!(
            text,
            "  {} of {heads} heads differ: {}",
            self.wrong_heads.len(),
            ranges(&self.wrong_heads)
        );
        match &self.cause {
            Some(cause) => {
                let _ = writeln!(text, "  cause: {}", cause.sentence(question, self.head_dim));
            }
            None if self.rows_found == 0 => {
                let _ = writeln!(
                    text,
                    "  no row of it is a row of the original: other weights, or values changed (cast, scaled, fused)"
                );
            }
            None => {
                let _ = writeln!(
                    text,
                    "  {} of its {} rows are rows of the original, in an order that is no known permutation",
                    self.rows_found, self.rows
                );
            }
        }
        text
    }
}

/// Compares the rows of a permuted projection with the original's, by their fingerprints
/// (equal fingerprints: equal rows).
pub fn judge_rows(
    original: &[u128],
    permuted: &[u128],
    question: &Question,
) -> Result<RowVerdict, String> {
    let rows = original.len();
    if permuted.len() != rows {
        return Err(format!(
            "has {} rows where the original has {rows}: a permutation keeps the rows",
            permuted.len()
        ));
    }
    let head_dim = question.head_dim_of(rows)?;
    let heads = question.heads();
    let expected = source_rows(rows, heads, question.direction)
        .ok_or_else(|| format!("has {rows} rows, which do not split into {heads} heads"))?;
    let holds = |order: &[usize]| (0..rows).all(|r| permuted[r] == original[order[r]]);
    let mut wrong_heads: Vec<usize> = (0..rows)
        .filter(|&r| permuted[r] != original[expected[r]])
        .map(|r| r / head_dim)
        .collect();
    wrong_heads.dedup();
    let matches = wrong_heads.is_empty();
    let cause = if matches {
        None
    } else {
        known_orders(rows, head_dim, question)
            .into_iter()
            .find(|(_, order)| holds(order))
            .map(|(cause, _)| cause)
    };
    let known: HashSet<u128> = original.iter().copied().collect();
    let repeated_rows = rows - known.len();
    Ok(RowVerdict {
        matches,
        head_dim,
        wrong_heads,
        rows_found: permuted.iter().filter(|p| known.contains(p)).count(),
        repeated_rows,
        rows,
        cause,
    })
}

/// The row orders known mistakes give, most telling first.
fn known_orders(rows: usize, head_dim: usize, question: &Question) -> Vec<(Cause, Vec<usize>)> {
    let heads = question.heads();
    let direction = question.direction;
    let mut orders = vec![(Cause::NotPermuted, (0..rows).collect::<Vec<_>>())];
    if let Some(order) = source_rows(rows, heads, direction.reversed()) {
        orders.push((Cause::WrongDirection, order));
    }
    if let Some(once) = source_rows(rows, heads, direction) {
        orders.push((Cause::Twice, once.iter().map(|&s| once[s]).collect()));
    }
    for (way, reversed) in [(direction, false), (direction.reversed(), true)] {
        if question.kv_heads.is_some_and(|k| k != question.query_heads)
            && let Some(order) = source_rows(rows, question.query_heads, way)
        {
            orders.push((
                Cause::QueryHeadCount {
                    query_heads: question.query_heads,
                    reversed,
                },
                order,
            ));
        }
        // Heads of 2 rows are left as they are (one pair): that is "not permuted".
        for size in (4..=rows)
            .step_by(2)
            .filter(|s| rows.is_multiple_of(*s) && *s != head_dim)
        {
            if let Some(order) = source_rows(rows, rows / size, way) {
                orders.push((
                    Cause::OtherHeads {
                        groups: rows / size,
                        size,
                        reversed,
                    },
                    order,
                ));
            }
        }
    }
    orders
}

/// `0-3, 5, 7-9`.
pub fn ranges(values: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < values.len() {
        let mut j = i;
        while j + 1 < values.len() && values[j + 1] == values[j] + 1 {
            j += 1;
        }
        parts.push(if j == i {
            values[i].to_string()
        } else {
            format!("{}-{}", values[i], values[j])
        });
        i = j + 1;
    }
    parts.join(", ")
}

/// The scores of two projections pairs under RoPE, one in each layout.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoreComparison {
    /// For each query head, the largest |difference| of its scores over the positions tried,
    /// relative to |q_h| |k_g| (the largest a score can be).
    pub worst_per_head: Vec<f64>,
    /// Where the largest difference is: (query head, m, n, score before, score after).
    pub worst: Option<(usize, u64, u64, f64, f64)>,
}

/// Two projections and a hidden vector: `q = W_q x`, `k = W_k x` per head.
pub struct Projections<'a> {
    pub query: ArrayView2<'a, f64>,
    pub key: ArrayView2<'a, f64>,
}

/// The scores `RoPE(q_h, m) · RoPE(k_g, n)` of every query head `h` (with its kv head `g`)
/// at each position pair, from the original projections in the direction's source layout
/// and from the permuted ones in its target layout.
pub fn compare_scores(
    original: &Projections,
    permuted: &Projections,
    question: &Question,
    hidden: &[f64],
    positions: &[(u64, u64)],
) -> Result<ScoreComparison, String> {
    let query_heads = question.query_heads;
    let kv_heads = question.heads();
    let head_dim = question.head_dim_of(original.key.nrows())?;
    if kv_heads == 0 || !query_heads.is_multiple_of(kv_heads) {
        return Err(format!(
            "kv_heads={kv_heads} does not divide heads={query_heads}: each kv head serves a whole group of query heads"
        ));
    }
    let project = |w: &ArrayView2<f64>| w.dot(&ndarray::ArrayView1::from(hidden)).to_vec();
    let (q, k) = (project(&original.query), project(&original.key));
    let (q2, k2) = (project(&permuted.query), project(&permuted.key));
    let from = question.direction.from_layout();
    let to = question.direction.to_layout();
    let head = |v: &[f64], h: usize| v[h * head_dim..(h + 1) * head_dim].to_vec();
    let norm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
    let mut worst_per_head = vec![0.0f64; query_heads];
    let mut worst: Option<(usize, u64, u64, f64, f64)> = None;
    let mut worst_error = -1.0;
    for (h, worst_here) in worst_per_head.iter_mut().enumerate() {
        let g = h / (query_heads / kv_heads);
        let (qh, kg, qh2, kg2) = (head(&q, h), head(&k, g), head(&q2, h), head(&k2, g));
        let scale = (norm(&qh) * norm(&kg)).max(f64::MIN_POSITIVE);
        for &(m, n) in positions {
            let before = score(&qh, &kg, from, 10_000.0, m, n);
            let after = score(&qh2, &kg2, to, 10_000.0, m, n);
            let error = if after.is_finite() {
                (after - before).abs() / scale
            } else {
                f64::INFINITY
            };
            *worst_here = worst_here.max(error);
            if error > worst_error {
                worst_error = error;
                worst = Some((h, m, n, before, after));
            }
        }
    }
    Ok(ScoreComparison {
        worst_per_head,
        worst,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::pair_permutation::Direction;

    fn question(kv: Option<usize>) -> Question {
        Question {
            query_heads: 4,
            kv_heads: kv,
            head_dim: None,
            direction: Direction::InterleavedToHalf,
        }
    }

    /// Rows `0..n` stand for distinct rows; a permuted projection lists which it holds.
    fn prints(order: &[usize]) -> Vec<u128> {
        order.iter().map(|&r| r as u128 + 1000).collect()
    }

    #[test]
    fn each_known_mistake_is_named() {
        let (kv, d) = (2, 8);
        let rows = kv * d;
        let original = prints(&(0..rows).collect::<Vec<_>>());
        let q = question(Some(kv));
        let right = source_rows(rows, kv, Direction::InterleavedToHalf).unwrap();
        let verdict = judge_rows(&original, &prints(&right), &q).unwrap();
        assert!(verdict.matches && verdict.cause.is_none());
        let cases = [
            ((0..rows).collect::<Vec<_>>(), Cause::NotPermuted),
            (
                source_rows(rows, kv, Direction::HalfToInterleaved).unwrap(),
                Cause::WrongDirection,
            ),
            (
                source_rows(rows, 4, Direction::InterleavedToHalf).unwrap(),
                Cause::QueryHeadCount {
                    query_heads: 4,
                    reversed: false,
                },
            ),
            (
                source_rows(rows, 1, Direction::InterleavedToHalf).unwrap(),
                Cause::OtherHeads {
                    groups: 1,
                    size: 16,
                    reversed: false,
                },
            ),
        ];
        for (order, cause) in cases {
            let verdict = judge_rows(&original, &prints(&order), &q).unwrap();
            assert!(!verdict.matches);
            assert_eq!(verdict.cause, Some(cause));
            assert_eq!(verdict.rows_found, rows);
        }
        // Both mistakes at once (heads of 4 rows are the same either way; of 8 they differ).
        let two = Question {
            query_heads: 2,
            kv_heads: Some(1),
            ..q
        };
        let order = source_rows(rows, 2, Direction::HalfToInterleaved).unwrap();
        let verdict = judge_rows(&original, &prints(&order), &two).unwrap();
        assert_eq!(
            verdict.cause,
            Some(Cause::QueryHeadCount {
                query_heads: 2,
                reversed: true
            })
        );
        // One head wrong: that head, and no cause.
        let mut one = right.clone();
        one.swap(9, 10);
        let verdict = judge_rows(&original, &prints(&one), &q).unwrap();
        assert_eq!((verdict.wrong_heads, verdict.cause), (vec![1], None));
        // Other values: no row found.
        let other: Vec<u128> = (0..rows as u128).collect();
        assert_eq!(judge_rows(&original, &other, &q).unwrap().rows_found, 0);
    }

    #[test]
    fn rows_that_do_not_split_into_heads_are_refused() {
        let q = question(None);
        assert!(q.head_dim_of(30).unwrap_err().contains("--heads 4"));
        assert!(q.head_dim_of(12).unwrap_err().contains("even"));
        let stated = Question {
            head_dim: Some(16),
            ..q
        };
        assert!(
            stated
                .head_dim_of(32)
                .unwrap_err()
                .contains("--head-dim 16")
        );
        assert_eq!(ranges(&[0, 1, 2, 5, 7, 8]), "0-2, 5, 7-8");
    }
}
