//! The Layouts view's boards: one head's q in RoPE's two pair layouts and the rotation each
//! applies (2x2 blocks on the diagonal, or on the four quadrant diagonals), the same cells
//! moved by the row permutation that carries one to the other; then a model of H query heads
//! and K kv heads: k's rows as stored, permuted per kv head, and permuted with the query head
//! count (the grouped-query bug), with every query head's score q·k at the chosen offset each
//! way. The maths is [`crate::encoding::pair_permutation`].

use super::board::{Board, BoardCell, number_label};
use crate::encoding::PairLayout;
use crate::encoding::pair_permutation::{Direction, score, source_rows};
use crate::encoding::random::SplitMix64;

/// The view's settings: one head's width, the heads, the offset between query and key.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct LayoutsSettings {
    /// Rows of one head (its q and k width): even.
    pub head_dim: usize,
    /// Query heads H.
    pub heads: usize,
    /// Key/value heads K, dividing H.
    pub kv_heads: usize,
    /// The query sits this many positions after the key.
    pub offset: u64,
    /// The random q and k.
    pub seed: u64,
    /// RoPE's base.
    pub base: f64,
}

impl Default for LayoutsSettings {
    fn default() -> Self {
        Self {
            head_dim: 8,
            heads: 4,
            kv_heads: 2,
            offset: 3,
            seed: 1,
            base: crate::encoding::defaults::BASE,
        }
    }
}

/// Each setting's range, for the view's controls and the figure's options.
pub const HEAD_DIM_RANGE: std::ops::RangeInclusive<usize> = 2..=32;
pub const HEADS_RANGE: std::ops::RangeInclusive<usize> = 1..=32;
pub const OFFSET_MAX: u64 = 1_000_000;

impl LayoutsSettings {
    /// Checks each setting against its range, naming the option.
    pub fn validate(&self) -> Result<(), String> {
        if !HEAD_DIM_RANGE.contains(&self.head_dim) || !self.head_dim.is_multiple_of(2) {
            return Err(format!(
                "--head-dim {} is not allowed: use an even number from {} to {}",
                self.head_dim,
                HEAD_DIM_RANGE.start(),
                HEAD_DIM_RANGE.end()
            ));
        }
        if !HEADS_RANGE.contains(&self.heads) {
            return Err(format!(
                "--heads {} is not allowed: use {} to {}",
                self.heads,
                HEADS_RANGE.start(),
                HEADS_RANGE.end()
            ));
        }
        if self.kv_heads == 0
            || self.kv_heads > self.heads
            || !self.heads.is_multiple_of(self.kv_heads)
        {
            return Err(format!(
                "--kv-heads {} is not allowed with --heads {}: use a divisor of {}",
                self.kv_heads, self.heads, self.heads
            ));
        }
        if self.offset > OFFSET_MAX {
            return Err(format!(
                "--offset {} is not allowed: use 0 to {OFFSET_MAX}",
                self.offset
            ));
        }
        crate::encoding::check_base("base", self.base).map_err(|e| e.to_string())
    }

    /// The kv heads' divisors of H, for the control that picks K.
    pub fn kv_choices(heads: usize) -> Vec<usize> {
        (1..=heads).filter(|k| heads.is_multiple_of(*k)).collect()
    }

    /// The rows per group when k (K heads) is permuted as H heads: `None` where they do not
    /// split into groups of an even size (the reshape would fail).
    pub fn bug_group(&self) -> Option<usize> {
        let rows = self.kv_heads * self.head_dim;
        (rows.is_multiple_of(self.heads) && (rows / self.heads).is_multiple_of(2))
            .then(|| rows / self.heads)
    }
}

/// One query head's score `RoPE(q, Δ) · RoPE(k, 0)` three ways.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HeadScores {
    /// Meta's rows, interleaved RoPE.
    pub original: f64,
    /// Rows permuted per kv head, half RoPE.
    pub permuted: f64,
    /// k permuted as H heads, half RoPE (`None` where that permutation cannot be made).
    pub with_query_count: Option<f64>,
}

/// What the view shows for one set of settings.
#[derive(Debug, Clone, PartialEq)]
pub struct LayoutsScene {
    pub settings: LayoutsSettings,
    /// Query head 0's q as Meta stores it (interleaved rows).
    pub q: Vec<f64>,
    /// Its kv head's k, the same way.
    pub k: Vec<f64>,
    /// For each half-layout row of a head, the interleaved row it holds.
    pub order: Vec<usize>,
    /// Every query head's scores.
    pub heads: Vec<HeadScores>,
    /// For each row of the K kv heads' k: its source row, permuted per kv head, and as H heads.
    pub k_rows: Vec<usize>,
    pub k_rows_bug: Option<Vec<usize>>,
}

impl LayoutsScene {
    /// Query heads whose score with k permuted as H heads differs from the original.
    pub fn broken_heads(&self) -> Vec<usize> {
        self.heads
            .iter()
            .enumerate()
            .filter(|(_, s)| s.with_query_count.is_some_and(|v| differs(v, s.original)))
            .map(|(h, _)| h)
            .collect()
    }

    /// Whether every correctly permuted score equals the original (always, up to rounding).
    pub fn permuted_scores_equal(&self) -> bool {
        self.heads.iter().all(|s| !differs(s.permuted, s.original))
    }
}

/// Scores further apart than rounding in a sum of a few dozen products.
fn differs(a: f64, b: f64) -> bool {
    (a - b).abs() > 1e-9 * (1.0 + b.abs())
}

/// q and k of every head, each value a multiple of 0.05 in [-1, 1] (short labels).
fn vectors(count: usize, dim: usize, random: &mut SplitMix64) -> Vec<Vec<f64>> {
    (0..count)
        .map(|_| {
            (0..dim)
                .map(|_| ((random.next_unit() * 40.0).round() - 20.0) / 20.0)
                .collect()
        })
        .collect()
}

/// The scene of `settings` (checked first).
pub fn scene(settings: &LayoutsSettings) -> Result<LayoutsScene, String> {
    settings.validate()?;
    let s = settings;
    let d = s.head_dim;
    let order = source_rows(d, 1, Direction::InterleavedToHalf)
        .ok_or_else(|| format!("--head-dim {d} is not allowed: use an even number"))?;
    let mut random = SplitMix64::new(s.seed);
    let qs = vectors(s.heads, d, &mut random);
    let ks = vectors(s.kv_heads, d, &mut random);
    let k_flat: Vec<f64> = ks.concat();
    let rows = s.kv_heads * d;
    let k_rows = source_rows(rows, s.kv_heads, Direction::InterleavedToHalf)
        .ok_or_else(|| "the kv heads do not split into heads".to_owned())?;
    let k_rows_bug = s
        .bug_group()
        .and_then(|_| source_rows(rows, s.heads, Direction::InterleavedToHalf));
    let gather = |v: &[f64], order: &[usize]| order.iter().map(|&r| v[r]).collect::<Vec<f64>>();
    let k_right = gather(&k_flat, &k_rows);
    let k_bug = k_rows_bug.as_ref().map(|o| gather(&k_flat, o));
    let group = s.heads / s.kv_heads;
    let heads = (0..s.heads)
        .map(|h| {
            let g = h / group;
            let q_half = gather(&qs[h], &order);
            let head = |v: &[f64]| v[g * d..(g + 1) * d].to_vec();
            HeadScores {
                original: score(&qs[h], &ks[g], PairLayout::Interleaved, s.base, s.offset, 0),
                permuted: score(
                    &q_half,
                    &head(&k_right),
                    PairLayout::Half,
                    s.base,
                    s.offset,
                    0,
                ),
                with_query_count: k_bug
                    .as_ref()
                    .map(|k| score(&q_half, &head(k), PairLayout::Half, s.base, s.offset, 0)),
            }
        })
        .collect();
    Ok(LayoutsScene {
        settings: *settings,
        q: qs[0].clone(),
        k: ks[0].clone(),
        order,
        heads,
        k_rows,
        k_rows_bug,
    })
}

/// Where interleaved row `row` of a head of `d` lies in `layout`.
fn position_in(layout: PairLayout, row: usize, d: usize) -> usize {
    match layout {
        PairLayout::Interleaved => row,
        // Interleaved row 2j + t is half row t*d/2 + j.
        PairLayout::Half => (row % 2) * (d / 2) + row / 2,
    }
}

/// A layout's name and pairs, short enough for a board's title.
pub fn layout_title(layout: PairLayout) -> &'static str {
    match layout {
        PairLayout::Interleaved => "q as stored: pairs (2i, 2i+1)",
        PairLayout::Half => "q permuted: pairs (i, i + d/2)",
    }
}

/// One head's q as a row of cells in `layout`: each cell is a row of Meta's q_proj (labelled
/// with its interleaved number, coloured by its pair), placed where the layout puts it.
pub fn q_board(scene: &LayoutsScene, layout: PairLayout) -> Board {
    let d = scene.settings.head_dim;
    let cells = (0..d)
        .map(|row| {
            let pair = row / 2;
            let col = position_in(layout, row, d);
            BoardCell {
                id: row,
                row: 0,
                col,
                value: Some(pair as f64),
                label: format!("q{row}"),
                short_label: row.to_string(),
                detail: format!(
                    "Meta's row {row} of q ({:+.2}): dim {} of pair {pair}, which turns by Δ·θ_{pair}; {} layout puts it at dim {col}",
                    scene.q[row],
                    row % 2,
                    layout.rope_name()
                ),
                region: 0,
                outlined: false,
            }
        })
        .collect::<Vec<_>>();
    let mut cells = cells;
    cells.sort_by_key(|c| c.col);
    Board {
        title: layout_title(layout).to_owned(),
        rows: 1,
        cols: d,
        cells,
        row_name: String::new(),
        col_name: "dim".to_owned(),
        numbered: true,
        range: (0.0, (d / 2).saturating_sub(1).max(1) as f64),
        value_name: "pair i".to_owned(),
    }
}

/// The d x d rotation by the offset's angles in `layout`: `cos` on the diagonal, `∓sin` where
/// each pair's two dims meet. Each cell keeps its id (its place in the interleaved matrix), so
/// that the interleaved board turns into the half one by moving cells.
pub fn rotation_board(scene: &LayoutsScene, layout: PairLayout) -> Board {
    let s = &scene.settings;
    let d = s.head_dim;
    let thetas = crate::encoding::rope::inv_freq(d, s.base)
        .map(|t| t.to_vec())
        .unwrap_or_default();
    let mut cells = Vec::new();
    for pair in 0..d / 2 {
        let angle = s.offset as f64 * thetas.get(pair).copied().unwrap_or(0.0);
        let (sin, cos) = angle.sin_cos();
        let (a, b) = (2 * pair, 2 * pair + 1);
        for (r, c, value, label) in [
            (a, a, cos, format!("c{pair}")),
            (a, b, -sin, format!("-s{pair}")),
            (b, a, sin, format!("s{pair}")),
            (b, b, cos, format!("c{pair}")),
        ] {
            let (row, col) = (position_in(layout, r, d), position_in(layout, c, d));
            let name = if label.starts_with('c') {
                format!("cos(Δ·θ_{pair})")
            } else if label.starts_with('-') {
                format!("−sin(Δ·θ_{pair})")
            } else {
                format!("sin(Δ·θ_{pair})")
            };
            cells.push(BoardCell {
                id: r * d + c,
                row,
                col,
                value: Some(value),
                label,
                short_label: String::new(),
                detail: format!(
                    "R[{row}][{col}] = {name} = {value:.4} (Δ = {}, θ_{pair} = {:.4e}): pair {pair}, Meta's rows {r} and {c}",
                    s.offset,
                    thetas.get(pair).copied().unwrap_or(0.0)
                ),
                region: 0,
                outlined: false,
            });
        }
    }
    cells.sort_by_key(|c| (c.row, c.col));
    Board {
        title: match layout {
            PairLayout::Interleaved => format!("rotation by Δ = {}, interleaved", s.offset),
            PairLayout::Half => format!("rotation by Δ = {}, half", s.offset),
        },
        rows: d,
        cols: d,
        cells,
        row_name: "dim".to_owned(),
        col_name: "dim".to_owned(),
        numbered: true,
        range: (-1.0, 1.0),
        value_name: "value".to_owned(),
    }
}

/// The three ways a grouped-query model's weights are shown: as stored, permuted right, and
/// with k permuted as the query heads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    /// Meta's rows, interleaved RoPE.
    Stored,
    /// q and k permuted per head (k per kv head), half RoPE.
    Permuted,
    /// k permuted as H heads, half RoPE: the grouped-query bug.
    AsQueryHeads,
}

impl Way {
    pub const ALL: [Way; 3] = [Way::Stored, Way::Permuted, Way::AsQueryHeads];

    /// What the way is, in a line.
    pub fn title(self, settings: &LayoutsSettings) -> String {
        match self {
            Way::Stored => "as Meta stores them, interleaved RoPE".to_owned(),
            Way::Permuted => format!(
                "permuted per head (k per kv head of {}), half RoPE",
                settings.head_dim
            ),
            Way::AsQueryHeads => format!(
                "k permuted as {} heads (the query head count), half RoPE",
                settings.heads
            ),
        }
    }

    /// k's row order this way: for each row, the stored row it holds.
    fn k_order(self, scene: &LayoutsScene) -> Option<Vec<usize>> {
        match self {
            Way::Stored => Some((0..scene.k_rows.len()).collect()),
            Way::Permuted => Some(scene.k_rows.clone()),
            Way::AsQueryHeads => scene.k_rows_bug.clone(),
        }
    }

    /// A query head's score this way.
    fn score(self, scores: &HeadScores) -> Option<f64> {
        match self {
            Way::Stored => Some(scores.original),
            Way::Permuted => Some(scores.permuted),
            Way::AsQueryHeads => scores.with_query_count,
        }
    }
}

/// The ways that can be made for a scene: all three, or two where k cannot be permuted as H
/// heads.
pub fn ways(scene: &LayoutsScene) -> Vec<Way> {
    Way::ALL
        .into_iter()
        .filter(|&way| way != Way::AsQueryHeads || scene.k_rows_bug.is_some())
        .collect()
}

/// k's rows of the K kv heads, one line per way (stored, permuted per kv head, permuted as H
/// heads): each cell labelled with the stored row it holds and coloured by that row's pair
/// within its head; borders fall between kv heads; a row in another place than the right
/// permutation puts it is outlined.
pub fn k_rows_board(scene: &LayoutsScene) -> Board {
    let s = &scene.settings;
    let d = s.head_dim;
    let rows = scene.k_rows.len();
    let ways = ways(scene);
    let mut cells = Vec::new();
    for (line, way) in ways.iter().enumerate() {
        let Some(order) = way.k_order(scene) else {
            continue;
        };
        for (col, &source) in order.iter().enumerate() {
            let wrong = *way == Way::AsQueryHeads && source != scene.k_rows[col];
            cells.push(BoardCell {
                id: line * rows + col,
                row: line,
                col,
                value: Some(((source % d) / 2) as f64),
                label: source.to_string(),
                short_label: String::new(),
                detail: format!(
                    "{}: row {col} of k_proj holds stored row {source} (kv head {}, pair {}){}",
                    way.title(s),
                    source / d,
                    (source % d) / 2,
                    if wrong {
                        format!(
                            "; permuted per kv head it would hold row {}",
                            scene.k_rows[col]
                        )
                    } else {
                        String::new()
                    }
                ),
                region: (col / d) as u8,
                outlined: wrong,
            });
        }
    }
    Board {
        title: format!("k's rows, {}", lines_said(&ways)),
        rows: ways.len(),
        cols: rows,
        cells,
        row_name: String::new(),
        col_name: "row of k_proj".to_owned(),
        numbered: false,
        range: (0.0, (d / 2).saturating_sub(1).max(1) as f64),
        value_name: "pair in its head".to_owned(),
    }
}

/// What each line of a board of `ways` is, in the title.
fn lines_said(ways: &[Way]) -> String {
    let names: Vec<&str> = ways
        .iter()
        .map(|way| match way {
            Way::Stored => "stored",
            Way::Permuted => "per head",
            Way::AsQueryHeads => "as H heads (outlined: wrong)",
        })
        .collect();
    names.join(" / ")
}

/// Every query head's score q·k at the offset, one line per way (a score that is not the
/// stored weights' is outlined).
pub fn scores_board(scene: &LayoutsScene) -> Board {
    let s = &scene.settings;
    let group = s.heads / s.kv_heads;
    let ways = ways(scene);
    let mut cells = Vec::new();
    for (line, way) in ways.iter().enumerate() {
        for (h, scores) in scene.heads.iter().enumerate() {
            let Some(value) = way.score(scores) else {
                continue;
            };
            let wrong = differs(value, scores.original);
            cells.push(BoardCell {
                id: line * s.heads + h,
                row: line,
                col: h,
                value: Some(value),
                label: number_label(value, 2),
                short_label: number_label(value, 1),
                detail: format!(
                    "query head {h} (kv head {}), {}: q·k at Δ = {} is {value:.6}{}",
                    h / group,
                    way.title(s),
                    s.offset,
                    if wrong {
                        format!(
                            ", not {:.6}: this head attends to the wrong keys",
                            scores.original
                        )
                    } else {
                        " (the stored weights' score)".to_owned()
                    }
                ),
                region: 0,
                outlined: wrong,
            });
        }
    }
    let range = Board::value_range(&cells);
    Board {
        title: format!("q·k at Δ = {} per query head, the same ways", s.offset),
        rows: ways.len(),
        cols: s.heads,
        cells,
        row_name: String::new(),
        col_name: "query head".to_owned(),
        numbered: false,
        range,
        value_name: "q·k".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The half board's cells are the interleaved board's, moved by the permutation; the
    /// correctly permuted scores equal the original ones; the bug breaks heads.
    #[test]
    fn the_boards_move_cells_and_the_scores_agree() {
        let scene = scene(&LayoutsSettings::default()).unwrap();
        let (a, b) = (
            rotation_board(&scene, PairLayout::Interleaved),
            rotation_board(&scene, PairLayout::Half),
        );
        assert_eq!(a.cells.len(), 2 * 8);
        for cell in &a.cells {
            let moved = b.cells.iter().find(|c| c.id == cell.id).unwrap();
            assert_eq!(moved.value, cell.value);
            assert_eq!(scene.order[moved.row], cell.row);
            assert_eq!(scene.order[moved.col], cell.col);
        }
        // Half layout: cos of pair i at (i, i) and (i + 4, i + 4), -sin at (i, i + 4).
        let at = |r, c| b.cell(r, c).map(|c| c.label.clone());
        assert_eq!(at(1, 5), Some("-s1".to_owned()));
        assert_eq!(at(5, 1), Some("s1".to_owned()));
        assert!(scene.permuted_scores_equal());
        // 2 kv heads of 8 as 4 heads: groups of 4 rows, each head's rows 1 and 2 swapped
        // only within its halves: every head wrong.
        assert_eq!(scene.broken_heads(), (0..4).collect::<Vec<_>>());
        assert_eq!(
            &scene.k_rows_bug.as_ref().unwrap()[..8],
            [0, 2, 1, 3, 4, 6, 5, 7]
        );
        let q = q_board(&scene, PairLayout::Half);
        let labels: Vec<&str> = q.cells.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels, ["q0", "q2", "q4", "q6", "q1", "q3", "q5", "q7"]);
    }

    #[test]
    fn heads_that_do_not_split_are_refused_and_an_impossible_bug_is_left_out() {
        let bad = LayoutsSettings {
            kv_heads: 3,
            ..Default::default()
        };
        assert!(scene(&bad).unwrap_err().contains("--kv-heads 3"));
        // 1 kv head of 4 rows as 8 heads: half a row each.
        let small = LayoutsSettings {
            head_dim: 4,
            heads: 8,
            kv_heads: 1,
            ..Default::default()
        };
        let s = scene(&small).unwrap();
        assert!(s.k_rows_bug.is_none() && s.broken_heads().is_empty());
        assert_eq!((scores_board(&s).rows, k_rows_board(&s).rows), (2, 2));
    }
}
