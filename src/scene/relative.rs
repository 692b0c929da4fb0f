//! What the Relative positions view and its figure draw: boards of offsets `j - i`, Shaw et
//! al.'s clipped offsets and the embeddings they pick, T5's buckets with their regions, ALiBi's
//! bias as the offset matrix times a slope, the skew trick stage by stage, and 2D offsets on a
//! patch grid with the row and column logits summed. Every number comes from `encoding`.

use serde::{Deserialize, Serialize};

use super::board::{Board, BoardCell, number_label, signed_label};
use crate::encoding::alibi::{self, AlibiMode};
use crate::encoding::grid::GridParams;
use crate::encoding::relative::{
    BucketRange, Relative2dLogits, RelativeClipParams, T5BucketParams, offset_2d,
};
use crate::encoding::skew::{self, SkewContent, SkewCost, SkewStage};
use crate::encoding::{ParamError, check_count};

/// The panels of the view (and `poslab figure relative --panel`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
pub enum RelativePanel {
    /// The [L, L] matrix of offsets j - i
    #[default]
    Offsets,
    /// Shaw et al.: offsets clipped to ±K index 2K + 1 learned embeddings
    Shaw,
    /// T5: offsets grouped into buckets, exact near the query, logarithmic further out
    T5,
    /// ALiBi: the offset matrix times a slope per head
    Alibi,
    /// The skew trick: relative logits to absolute ones by pad, flatten, pad, reshape, slice
    Skew,
    /// 2D relative offsets on a patch grid, row and column embeddings summed
    #[value(name = "2d")]
    TwoD,
}

impl RelativePanel {
    pub const ALL: [RelativePanel; 6] = [
        RelativePanel::Offsets,
        RelativePanel::Shaw,
        RelativePanel::T5,
        RelativePanel::Alibi,
        RelativePanel::Skew,
        RelativePanel::TwoD,
    ];

    pub fn label(self) -> &'static str {
        match self {
            RelativePanel::Offsets => "Offsets j − i",
            RelativePanel::Shaw => "Shaw: clipped",
            RelativePanel::T5 => "T5 buckets",
            RelativePanel::Alibi => "ALiBi bias",
            RelativePanel::Skew => "Skew trick",
            RelativePanel::TwoD => "2D offsets",
        }
    }
}

/// Every setting of the panels, each with the app's default.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RelativeSettings {
    /// Tokens of the offset, Shaw and ALiBi boards.
    pub tokens: usize,
    /// Shaw's clipping distance K.
    pub max_relative: usize,
    /// Tokens of the T5 board (buckets need longer sequences to show their logarithmic part).
    pub t5_tokens: usize,
    pub num_buckets: usize,
    pub max_distance: usize,
    pub bidirectional: bool,
    pub heads: usize,
    pub head: usize,
    pub causal: bool,
    /// Tokens of the skew trick.
    pub skew_tokens: usize,
    pub stage: usize,
    /// The 2D panel's grid, query patch, embedding width and seed.
    pub grid: GridParams,
    pub query: usize,
    pub dim: usize,
    pub seed: u64,
}

impl Default for RelativeSettings {
    fn default() -> Self {
        let t5 = T5BucketParams::default();
        Self {
            tokens: 8,
            max_relative: 3,
            t5_tokens: 48,
            num_buckets: t5.num_buckets,
            max_distance: t5.max_distance,
            bidirectional: t5.bidirectional,
            heads: 8,
            head: 0,
            causal: true,
            skew_tokens: 5,
            stage: 0,
            grid: GridParams {
                grid_h: 5,
                grid_w: 5,
            },
            query: 12,
            dim: 64,
            seed: 0,
        }
    }
}

/// The longest sequences the boards are drawn for: beyond, cells are too small to read.
pub const TOKENS_RANGE: std::ops::RangeInclusive<usize> = 2..=32;
pub const T5_TOKENS_RANGE: std::ops::RangeInclusive<usize> = 2..=256;
pub const SKEW_TOKENS_RANGE: std::ops::RangeInclusive<usize> = 2..=12;
pub const GRID_RANGE: std::ops::RangeInclusive<usize> = 2..=12;
pub const DIM_RANGE: std::ops::RangeInclusive<usize> = 1..=1024;
pub const NUM_BUCKETS_RANGE: std::ops::RangeInclusive<usize> = 2..=128;
pub const MAX_DISTANCE_RANGE: std::ops::RangeInclusive<usize> = 2..=1024;
pub const HEADS_RANGE: std::ops::RangeInclusive<usize> = 1..=64;

impl RelativeSettings {
    pub fn t5(&self) -> T5BucketParams {
        T5BucketParams {
            seq: self.t5_tokens,
            num_buckets: self.num_buckets,
            max_distance: self.max_distance,
            bidirectional: self.bidirectional,
        }
    }

    pub fn shaw(&self) -> RelativeClipParams {
        RelativeClipParams {
            seq: self.tokens,
            max_relative: self.max_relative,
        }
    }

    pub fn alibi_mode(&self) -> AlibiMode {
        if self.causal {
            AlibiMode::Causal
        } else {
            AlibiMode::Symmetric
        }
    }

    pub fn skew_stage(&self) -> SkewStage {
        SkewStage::from_index(self.stage)
    }

    /// Every setting moved into the range the view's controls offer (settings read back from
    /// a file may hold anything); T5's combination of buckets and distance is left to
    /// [`Self::validate`], which says what is wrong with it.
    pub fn clamped(mut self) -> Self {
        let clamp = |v: usize, r: std::ops::RangeInclusive<usize>| v.clamp(*r.start(), *r.end());
        self.tokens = clamp(self.tokens, TOKENS_RANGE);
        self.max_relative = self.max_relative.min(TOKENS_RANGE.end() - 1);
        self.t5_tokens = clamp(self.t5_tokens, T5_TOKENS_RANGE);
        self.num_buckets = clamp(self.num_buckets, NUM_BUCKETS_RANGE);
        self.max_distance = clamp(self.max_distance, MAX_DISTANCE_RANGE);
        self.heads = clamp(self.heads, HEADS_RANGE);
        self.head = self.head.min(self.heads - 1);
        self.skew_tokens = clamp(self.skew_tokens, SKEW_TOKENS_RANGE);
        self.stage = self.stage.min(SkewStage::ALL.len() - 1);
        self.grid.grid_h = clamp(self.grid.grid_h, GRID_RANGE);
        self.grid.grid_w = clamp(self.grid.grid_w, GRID_RANGE);
        self.query = self.query.min(self.grid.patches() - 1);
        self.dim = clamp(self.dim, DIM_RANGE);
        self
    }

    /// Checks the settings `panel` uses.
    pub fn validate(&self, panel: RelativePanel) -> Result<(), ParamError> {
        match panel {
            RelativePanel::Offsets => check_count("tokens", self.tokens, TOKENS_RANGE),
            RelativePanel::Shaw => {
                check_count("tokens", self.tokens, TOKENS_RANGE)?;
                check_count(
                    "max-relative",
                    self.max_relative,
                    0..=TOKENS_RANGE.end() - 1,
                )
            }
            RelativePanel::T5 => {
                check_count("tokens", self.t5_tokens, T5_TOKENS_RANGE)?;
                check_count("num-buckets", self.num_buckets, NUM_BUCKETS_RANGE)?;
                check_count("max-distance", self.max_distance, MAX_DISTANCE_RANGE)?;
                let t5 = self.t5();
                if t5.bidirectional && t5.num_buckets < 4 {
                    return Err(ParamError::new(
                        "num-buckets",
                        t5.num_buckets,
                        format!(
                            "use 4 to {} for bidirectional buckets, which split them between earlier and later keys",
                            NUM_BUCKETS_RANGE.end()
                        ),
                    ));
                }
                let exact = t5.max_exact();
                if t5.max_distance <= exact {
                    return Err(ParamError::new(
                        "max-distance",
                        t5.max_distance,
                        format!(
                            "use {} to {}: past the {exact} exact buckets (num-buckets / {})",
                            exact + 1,
                            MAX_DISTANCE_RANGE.end(),
                            if t5.bidirectional { 4 } else { 2 }
                        ),
                    ));
                }
                t5.validate()
            }
            RelativePanel::Alibi => {
                check_count("tokens", self.tokens, TOKENS_RANGE)?;
                check_count("heads", self.heads, HEADS_RANGE)?;
                alibi::check_head(self.head, self.heads)
            }
            RelativePanel::Skew => {
                check_count("tokens", self.skew_tokens, SKEW_TOKENS_RANGE)?;
                check_count("stage", self.stage, 0..=SkewStage::ALL.len() - 1)?;
                check_count("dim", self.dim, DIM_RANGE)
            }
            RelativePanel::TwoD => {
                check_count("grid-h", self.grid.grid_h, GRID_RANGE)?;
                check_count("grid-w", self.grid.grid_w, GRID_RANGE)?;
                check_count("query", self.query, 0..=self.grid.patches() - 1)?;
                check_count("dim", self.dim, DIM_RANGE)
            }
        }
    }
}

/// A cell whose id is its place in a `cols`-wide board.
fn cell(cols: usize, row: usize, col: usize) -> BoardCell {
    BoardCell {
        id: row * cols + col,
        row,
        col,
        value: None,
        label: String::new(),
        short_label: String::new(),
        detail: String::new(),
        region: 0,
        outlined: false,
    }
}

/// A `[len, len]` board of query `i` (row) and key `j` (column), each cell made by `fill`.
fn square_board(
    title: String,
    len: usize,
    value_name: &str,
    fill: impl Fn(usize, usize, &mut BoardCell),
) -> Board {
    let mut cells = Vec::with_capacity(len * len);
    for i in 0..len {
        for j in 0..len {
            let mut c = cell(len, i, j);
            fill(i, j, &mut c);
            cells.push(c);
        }
    }
    Board {
        title,
        rows: len,
        cols: len,
        range: Board::value_range(&cells),
        cells,
        row_name: "query i".into(),
        col_name: "key j".into(),
        numbered: true,
        value_name: value_name.into(),
    }
}

/// The boards of `panel`, left to right.
pub fn boards(panel: RelativePanel, settings: &RelativeSettings) -> Result<Vec<Board>, ParamError> {
    settings.validate(panel)?;
    Ok(match panel {
        RelativePanel::Offsets => vec![offsets_board(settings.tokens)],
        RelativePanel::Shaw => shaw_boards(&settings.shaw()),
        RelativePanel::T5 => vec![t5_board(&settings.t5()), t5_ranges_board(&settings.t5())],
        RelativePanel::Alibi => vec![alibi_board(settings)?],
        RelativePanel::Skew => vec![skew_board(settings.skew_tokens, settings.skew_stage())?],
        RelativePanel::TwoD => two_d_boards(settings)?,
    })
}

fn offsets_board(len: usize) -> Board {
    square_board(
        format!("Offsets j − i, L = {len}"),
        len,
        "offset j − i",
        |i, j, c| {
            let offset = j as i64 - i as i64;
            c.value = Some(offset as f64);
            c.label = signed_label(offset);
            c.short_label = c.label.clone();
            c.detail = format!(
                "query {i}, key {j}: offset {}\n{}",
                signed_label(offset),
                match offset {
                    0 => "the query itself".to_owned(),
                    o if o > 0 => format!("the key is {o} after the query"),
                    o => format!("the key is {} before the query", -o),
                }
            );
        },
    )
}

fn shaw_boards(params: &RelativeClipParams) -> Vec<Board> {
    let k = params.max_relative as i64;
    let matrix = square_board(
        format!("clip(j − i, −{k}, {k}), L = {}", params.seq),
        params.seq,
        "clipped offset",
        |i, j, c| {
            let offset = j as i64 - i as i64;
            let index = params.index(offset);
            let clipped = index as i64 - k;
            c.value = Some(clipped as f64);
            c.label = signed_label(clipped);
            c.short_label = c.label.clone();
            c.region = u8::from(offset.abs() > k);
            c.detail = format!(
                "query {i}, key {j}: offset {} clipped to {}\nuses embedding w[{index}] (index clip + K)",
                signed_label(offset),
                signed_label(clipped)
            );
        },
    );
    let rows = 2 * params.max_relative + 1;
    let cells: Vec<BoardCell> = (0..rows)
        .map(|index| {
            let clipped = index as i64 - k;
            let mut c = cell(1, index, 0);
            c.value = Some(clipped as f64);
            c.label = format!("w[{index}]: {}", signed_label(clipped));
            c.short_label = index.to_string();
            c.detail = format!(
                "embedding {index} of {rows}: for offset {}{}",
                signed_label(clipped),
                if index == 0 {
                    " and every offset before it"
                } else if index == rows - 1 {
                    " and every offset after it"
                } else {
                    ""
                }
            );
            c
        })
        .collect();
    let table = Board {
        title: format!("{rows} embeddings"),
        rows,
        cols: 1,
        range: Board::value_range(&cells),
        cells,
        row_name: "index".into(),
        col_name: String::new(),
        numbered: false,
        value_name: "clipped offset".into(),
    };
    vec![matrix, table]
}

/// Where an offset falls in T5's scheme: 0 exact, 1 logarithmic, 2 the last bucket (at or past
/// `max_distance`), 3 a later key of a unidirectional model (bucket 0, like the query itself).
pub fn t5_region(params: &T5BucketParams, offset: i64) -> u8 {
    if !params.bidirectional && offset > 0 {
        return 3;
    }
    let distance = offset.unsigned_abs() as usize;
    if distance < params.max_exact() {
        0
    } else if distance < params.max_distance {
        1
    } else {
        2
    }
}

fn t5_board(params: &T5BucketParams) -> Board {
    let region_name = ["exact", "logarithmic", "past max-distance", "later key"];
    square_board(
        format!(
            "T5 buckets, L = {}, {} buckets, max-distance {}, {}",
            params.seq,
            params.num_buckets,
            params.max_distance,
            if params.bidirectional {
                "bidirectional"
            } else {
                "unidirectional"
            }
        ),
        params.seq,
        "bucket",
        |i, j, c| {
            let offset = j as i64 - i as i64;
            let bucket = params.bucket(offset);
            let region = t5_region(params, offset);
            c.value = Some(bucket as f64);
            c.label = bucket.to_string();
            c.short_label = c.label.clone();
            c.region = region;
            c.detail = format!(
                "query {i}, key {j}: offset {} is in bucket {bucket} ({} region)",
                signed_label(offset),
                region_name[region as usize]
            );
        },
    )
}

/// A T5 bucket's offsets as text: `-3`, `-12 … -8`, `≤ -91`, `≥ 91`.
pub fn bucket_range_text(range: &BucketRange) -> String {
    match (range.from, range.to) {
        (Some(a), Some(b)) if a == b => signed_label(a),
        (Some(a), Some(b)) => format!("{} … {}", signed_label(a), signed_label(b)),
        (None, Some(b)) => format!("≤ {}", signed_label(b)),
        (Some(a), None) => format!("≥ {}", signed_label(a)),
        (None, None) => "every offset".to_owned(),
    }
}

/// Every bucket with the offsets it holds, one row each, from the most negative offset.
fn t5_ranges_board(params: &T5BucketParams) -> Board {
    let region_name = ["exact", "log", "last", "later"];
    let cells: Vec<BoardCell> = params
        .bucket_ranges()
        .iter()
        .enumerate()
        .map(|(row, range)| {
            let offset = range.from.or(range.to).unwrap_or(0);
            let region = t5_region(params, offset);
            let mut c = cell(1, row, 0);
            c.value = Some(f64::from(range.bucket));
            c.label = format!("{}: {}", range.bucket, bucket_range_text(range));
            c.short_label = range.bucket.to_string();
            c.region = region;
            c.detail = format!(
                "bucket {} holds the offsets {} ({} region)",
                range.bucket,
                bucket_range_text(range),
                region_name[region as usize]
            );
            c
        })
        .collect();
    Board {
        title: "Bucket: offsets j − i".into(),
        rows: cells.len(),
        cols: 1,
        range: Board::value_range(&cells),
        cells,
        row_name: String::new(),
        col_name: String::new(),
        numbered: false,
        value_name: "bucket".into(),
    }
}

fn alibi_board(settings: &RelativeSettings) -> Result<Board, ParamError> {
    let slopes = alibi::slopes(settings.heads)?;
    let slope = slopes[settings.head];
    let mode = settings.alibi_mode();
    let mut board = square_board(
        format!(
            "ALiBi head {} of {}: −m·|j − i|, m = {}",
            settings.head,
            settings.heads,
            crate::numbers::power_of(2, slope.log2(), 3)
        ),
        settings.tokens,
        "bias",
        |i, j, c| {
            let bias = alibi::bias_value(slope, mode, i, j);
            let offset = j as i64 - i as i64;
            c.value = bias.is_finite().then_some(bias);
            c.label = number_label(bias, 3);
            c.short_label = number_label(bias, 1);
            c.detail = if bias.is_finite() {
                format!(
                    "query {i}, key {j}: offset {}, bias −m·|j − i| = −{slope}·{} = {bias}",
                    signed_label(offset),
                    offset.abs()
                )
            } else {
                format!(
                    "query {i}, key {j}: a later key, masked with −∞ (causal attention never sees it)"
                )
            };
        },
    );
    // The colour scale of the finite biases.
    board.range = Board::value_range(&board.cells);
    Ok(board)
}

/// The label of a skew cell: `q2·r-1`, or `0` for padding.
fn skew_labels(content: SkewContent) -> (String, String) {
    match content {
        SkewContent::Logit { query, offset } => (
            format!("q{query}·r{}", signed_label(offset)),
            format!("{query},{}", signed_label(offset)),
        ),
        SkewContent::Zero => ("0".into(), "0".into()),
    }
}

/// The board of one stage of the skew trick for `len` tokens.
pub fn skew_board(len: usize, stage: SkewStage) -> Result<Board, ParamError> {
    let (rows, cols) = stage.layout(len);
    let cells: Vec<BoardCell> = skew::stage_cells(len, stage)?
        .into_iter()
        .map(|c| {
            let (label, short_label) = skew_labels(c.content);
            // What the final slice keeps, marked from the reshape on.
            let width = 2 * len - 1;
            let kept = c.id / width < len && c.id % width >= len - 1;
            let region = match stage {
                SkewStage::Reshaped => u8::from(kept),
                SkewStage::ColumnPadded | SkewStage::FlatPadded => {
                    u8::from(c.content == SkewContent::Zero)
                }
                _ => 0,
            };
            let detail = match c.content {
                SkewContent::Logit { query, offset } => format!(
                    "q{query} · r[{}]: query {query}'s logit for the key at offset {}{}",
                    signed_label(offset),
                    signed_label(offset),
                    if stage == SkewStage::Sliced {
                        format!(" = key {}", c.col)
                    } else {
                        String::new()
                    }
                ),
                SkewContent::Zero => "a padding zero".into(),
            };
            BoardCell {
                id: c.id,
                row: c.row,
                col: c.col,
                value: match c.content {
                    SkewContent::Logit { offset, .. } => Some(offset as f64),
                    SkewContent::Zero => None,
                },
                label,
                short_label,
                detail,
                region,
                outlined: false,
            }
        })
        .collect();
    let flat = stage.shape(len).0 == 1;
    let max_offset = (len - 1) as f64;
    Ok(Board {
        title: format!("{}: [{}]", stage.title(), shape_text(stage, len)),
        rows,
        cols,
        cells,
        row_name: match stage {
            _ if flat => "line".into(),
            SkewStage::Reshaped => "row".into(),
            _ => "query i".into(),
        },
        col_name: match stage {
            SkewStage::Relative => "column o + L − 1 (offset o)".into(),
            SkewStage::Sliced => "key j".into(),
            _ if flat => format!(
                "one array of {} drawn in lines of {}: flat index = line × {} + place in line",
                stage.shape(len).1,
                skew::flat_line(len),
                skew::flat_line(len)
            ),
            _ => "column".into(),
        },
        numbered: true,
        range: (-max_offset.max(1.0), max_offset.max(1.0)),
        value_name: "offset j − i".into(),
    })
}

/// A stage's shape as text, `5, 9`.
fn shape_text(stage: SkewStage, len: usize) -> String {
    match stage.shape(len) {
        (1, n) => n.to_string(),
        (r, c) => format!("{r}, {c}"),
    }
}

/// The memory the skew trick saves, as the view and the figure say it.
pub fn skew_cost_text(len: usize, dim: usize) -> String {
    let cost = SkewCost::new(len, dim);
    format!(
        "Memory for L = {len}, d = {dim}: gathering r(j−i) for every pair is [L, L, d] = {} values; \
         the skew trick needs q·R^T [L, 2L−1] and its padded copy, {} values ({}× less)",
        cost.gathered_embeddings,
        cost.skew_values,
        number_label(cost.gathered_embeddings as f64 / cost.skew_values as f64, 1)
    )
}

fn two_d_boards(settings: &RelativeSettings) -> Result<Vec<Board>, ParamError> {
    let grid = settings.grid;
    let logits = Relative2dLogits::random(grid, settings.dim, settings.seed)?;
    let (qx, qy) = grid.patch_xy(settings.query);
    let make = |title: String, value_name: &str, fill: &dyn Fn(i64, i64, &mut BoardCell)| {
        let mut cells = Vec::with_capacity(grid.patches());
        for y in 0..grid.grid_h {
            for x in 0..grid.grid_w {
                let key = y * grid.grid_w + x;
                let (dy, dx) = offset_2d(&grid, settings.query, key);
                let mut c = cell(grid.grid_w, y, x);
                c.outlined = key == settings.query;
                fill(dy, dx, &mut c);
                c.detail = format!(
                    "patch {key} (row {y}, column {x}): (dy, dx) = ({}, {})\nlogit = q·r_row[{}] + q·r_col[{}] = {:.4} + {:.4} = {:.4}",
                    signed_label(dy),
                    signed_label(dx),
                    signed_label(dy),
                    signed_label(dx),
                    logits.row_terms[(dy + grid.grid_h as i64 - 1) as usize],
                    logits.col_terms[(dx + grid.grid_w as i64 - 1) as usize],
                    logits.logit(dy, dx)
                );
                cells.push(c);
            }
        }
        Board {
            title,
            rows: grid.grid_h,
            cols: grid.grid_w,
            range: Board::value_range(&cells),
            cells,
            row_name: "patch row y".into(),
            col_name: "patch column x".into(),
            numbered: true,
            value_name: value_name.into(),
        }
    };
    let offsets = make(
        format!("(dy, dx) from ({qy}, {qx}); dy picks r_row"),
        "row offset dy",
        &|dy, dx, c| {
            c.value = Some(dy as f64);
            c.label = format!("{},{}", signed_label(dy), signed_label(dx));
            c.short_label = c.label.clone();
        },
    );
    let columns = make("dx picks r_col".into(), "column offset dx", &|_, dx, c| {
        c.value = Some(dx as f64);
        c.label = signed_label(dx);
        c.short_label = c.label.clone();
    });
    let sum = make(
        "logit q·r_row[dy] + q·r_col[dx]".to_owned(),
        "logit",
        &|dy, dx, c| {
            let value = logits.logit(dy, dx);
            c.value = Some(value);
            c.label = format!("{value:.2}");
            c.short_label = format!("{value:.1}");
        },
    );
    Ok(vec![offsets, columns, sum])
}

/// How many embeddings 2D relative attention learns, against one per 2D offset.
pub fn two_d_count_text(grid: GridParams) -> String {
    let (h, w) = (grid.grid_h, grid.grid_w);
    format!(
        "A row table of 2H − 1 = {} and a column table of 2W − 1 = {} embeddings: {} in all, where one per 2D offset would take (2H − 1)(2W − 1) = {}",
        2 * h - 1,
        2 * w - 1,
        2 * h - 1 + 2 * w - 1,
        (2 * h - 1) * (2 * w - 1)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_from_a_bad_file_are_clamped_to_what_every_panel_draws() {
        let bad = RelativeSettings {
            tokens: 0,
            max_relative: 1 << 40,
            t5_tokens: usize::MAX,
            num_buckets: 0,
            max_distance: 0,
            bidirectional: false,
            heads: 0,
            head: 99,
            causal: true,
            skew_tokens: 1000,
            stage: 99,
            grid: GridParams {
                grid_h: 0,
                grid_w: 1 << 20,
            },
            query: usize::MAX,
            dim: 0,
            seed: 1,
        };
        let fixed = bad.clamped();
        for panel in RelativePanel::ALL {
            fixed.validate(panel).unwrap();
            assert!(!boards(panel, &fixed).unwrap().is_empty());
            assert!(boards(panel, &bad).is_err(), "{panel:?}");
        }
    }
}
