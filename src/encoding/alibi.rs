//! ALiBi (Press et al. 2022): per-head slopes and the linear distance biases they scale,
//! in 1D (causal or symmetric) and in 2D between image patches (CROMA).

use ndarray::{Array2, Array3, Axis, Zip};

use super::grid::GridParams;
use super::{HEADS_RANGE, ParamError, SEQ_RANGE, check_count};

/// How a model's code stores ALiBi (`alibi --form`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum AlibiForm {
    /// `[heads, seq, seq]` biases -m_h |i - j| (the paper's relative form).
    #[default]
    Relative,
    /// `[heads, 1, seq]` m_h * j per key: Hugging Face BLOOM's build_alibi_tensor.
    Bloom,
    /// `[heads, 1, seq]` m_h * (j - (seq - 1)) per key: MPT's build_alibi_bias.
    Mpt,
}

/// The per-key bias a stored form holds for key `j` of `seq`: both equal the causal relative
/// bias `-m (i - j)` up to `m i` or `m (seq - 1 - i)`, a constant per query row.
pub fn key_bias(slope: f64, form: AlibiForm, key: usize, seq: usize) -> f64 {
    match form {
        AlibiForm::Bloom => slope * key as f64,
        AlibiForm::Mpt | AlibiForm::Relative => slope * (key as f64 - (seq - 1) as f64),
    }
}

/// Whether a query may look at later keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum AlibiMode {
    /// Keys after the query are masked with -inf (decoder attention).
    #[default]
    Causal,
    /// Both directions get -m |i - j| (encoder attention).
    Symmetric,
}

/// Parameters of a 1D ALiBi bias table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AlibiParams {
    pub heads: usize,
    pub seq: usize,
    pub mode: AlibiMode,
}

impl Default for AlibiParams {
    fn default() -> Self {
        Self {
            heads: 8,
            seq: 64,
            mode: AlibiMode::Causal,
        }
    }
}

impl AlibiParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        check_count("heads", self.heads, HEADS_RANGE)?;
        check_count("seq", self.seq, SEQ_RANGE)
    }
}

/// Parameters of a 2D ALiBi bias table between the patches of a grid.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Alibi2dParams {
    pub heads: usize,
    pub grid: GridParams,
}

impl Default for Alibi2dParams {
    fn default() -> Self {
        Self {
            heads: 8,
            grid: GridParams::default(),
        }
    }
}

impl Alibi2dParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        check_count("heads", self.heads, HEADS_RANGE)?;
        self.grid.validate()
    }
}

/// The head slopes of ofirpress/attention_with_linear_biases `get_slopes`.
///
/// For `n` a power of two: `m_h = 2^(-8(h+1)/n)`. Otherwise the slopes of the largest power of
/// two `c < n`, followed by every other slope of `2c` heads (`2^(-4(2k+1)/c)`), `n - c` of them.
/// Al-Khateeb et al.'s ALiBi interpolation (the survey's slope scaling): run at `seq` beyond
/// the trained length `trained`, every slope is multiplied by `trained / seq`; within it,
/// `None` (unchanged).
pub fn slope_scale(trained: usize, seq: usize) -> Option<f64> {
    (seq > trained).then(|| trained as f64 / seq as f64)
}

/// What the last of `seq` causal queries attends to when content scores are equal: the
/// softmax of its biases `-m k` over the key distances `k = 0 .. seq-1`, at distance
/// `distance`: `e^{-m k} / Σ_k e^{-m k}`, the sum in closed form.
pub fn last_query_attention(slope: f64, seq: usize, distance: usize) -> f64 {
    // Σ_{k<seq} e^{-m k} = (1 - e^{-m seq}) / (1 - e^{-m}), exact for small m via expm1.
    let total = if slope == 0.0 {
        seq as f64
    } else {
        (-slope * seq as f64).exp_m1() / (-slope).exp_m1()
    };
    (-slope * distance as f64).exp() / total
}

/// The share of the last query's attention ([`last_query_attention`]) on keys at distance
/// `from` or more: `e^{-m from} (1 - e^{-m (seq - from)}) / (1 - e^{-m seq})`.
pub fn last_query_attention_beyond(slope: f64, seq: usize, from: usize) -> f64 {
    ln_last_query_attention_beyond(slope, seq, from).exp()
}

/// The natural log of [`last_query_attention_beyond`], finite where the share itself is too
/// small for an f64 (a steep head's, thousands of positions away); `-inf` when no key is that
/// far.
pub fn ln_last_query_attention_beyond(slope: f64, seq: usize, from: usize) -> f64 {
    if from >= seq {
        return f64::NEG_INFINITY;
    }
    if slope == 0.0 {
        return ((seq - from) as f64 / seq as f64).ln();
    }
    let ln_one_minus = |x: f64| (-(-x).exp_m1()).ln();
    -slope * from as f64 + ln_one_minus(slope * (seq - from) as f64)
        - ln_one_minus(slope * seq as f64)
}

pub fn slopes(heads: usize) -> Result<Vec<f64>, ParamError> {
    check_count("heads", heads, HEADS_RANGE)?;
    Ok(slopes_unchecked(heads))
}

/// [`slopes`] for a head count already checked.
pub(crate) fn slopes_unchecked(heads: usize) -> Vec<f64> {
    // Same operations as the reference (start * ratio^i), so f64 results agree to the bit.
    let power_of_two = |n: usize| -> Vec<f64> {
        let start = 2f64.powf(-(2f64.powf(-((n as f64).log2() - 3.0))));
        (0..n).map(|i| start * start.powf(i as f64)).collect()
    };
    if heads.is_power_of_two() {
        return power_of_two(heads);
    }
    let closest = 1usize << heads.ilog2();
    let mut slopes = power_of_two(closest);
    slopes.extend(
        slopes_unchecked(2 * closest)
            .into_iter()
            .step_by(2)
            .take(heads - closest),
    );
    slopes
}

/// Bias of one head: `-m |i - j|`, with `-inf` for `j > i` in causal mode.
pub fn bias_head(params: &AlibiParams, head: usize) -> Result<Array2<f64>, ParamError> {
    params.validate()?;
    check_head(head, params.heads)?;
    let slope = slopes_unchecked(params.heads)[head];
    let mut bias = Array2::<f64>::zeros((params.seq, params.seq));
    fill_head(bias.view_mut(), slope, params.mode);
    Ok(bias)
}

/// The `[heads, seq, seq]` bias of every head.
pub fn bias(params: &AlibiParams) -> Result<Array3<f64>, ParamError> {
    params.validate()?;
    let slopes = slopes_unchecked(params.heads);
    let mut bias = Array3::<f64>::zeros((params.heads, params.seq, params.seq));
    for (head, slope) in bias.axis_iter_mut(Axis(0)).zip(slopes) {
        fill_head(head, slope, params.mode);
    }
    Ok(bias)
}

fn fill_head(mut bias: ndarray::ArrayViewMut2<f64>, slope: f64, mode: AlibiMode) {
    Zip::indexed(bias.rows_mut()).par_for_each(|query, mut row| {
        for (key, value) in row.iter_mut().enumerate() {
            *value = bias_value(slope, mode, query, key);
        }
    });
}

/// The bias of one head for `query` (row) and `key` (column).
pub fn bias_value(slope: f64, mode: AlibiMode, query: usize, key: usize) -> f64 {
    if mode == AlibiMode::Causal && key > query {
        f64::NEG_INFINITY
    } else {
        negate_distance(slope, query.abs_diff(key) as f64)
    }
}

/// The distances `|i - j|` of the unmasked cells in a block of an ALiBi matrix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlockDistances {
    /// Unmasked cells.
    pub count: u64,
    pub sum: u128,
    pub min: u64,
    pub max: u64,
}

impl BlockDistances {
    /// The mean, minimum and maximum bias of the block's unmasked cells for `slope`, in that
    /// order (`-inf` for a block that is all masked). The smallest bias is at the largest
    /// distance.
    pub fn biases(&self, slope: f64) -> [f64; 3] {
        if self.count == 0 {
            return [f64::NEG_INFINITY; 3];
        }
        let mean = self.sum as f64 / self.count as f64;
        [
            negate_distance(slope, mean),
            negate_distance(slope, self.max as f64),
            negate_distance(slope, self.min as f64),
        ]
    }
}

/// The distances of the unmasked cells of rows (queries) `rows` and columns (keys) `cols`, in
/// closed form, whatever the block's size: along one row the distances run in steps of one on
/// each side of the diagonal, and over the rows of each band (above the columns, across them,
/// below them) the runs' counts and sums are polynomials of degree two in the row, summed by
/// Faulhaber's formulas.
pub fn block_distances(
    mode: AlibiMode,
    rows: std::ops::Range<usize>,
    cols: std::ops::Range<usize>,
) -> BlockDistances {
    let mut out = BlockDistances {
        min: u64::MAX,
        ..Default::default()
    };
    if rows.is_empty() || cols.is_empty() {
        out.min = 0;
        return out;
    }
    let (c0, c1) = (cols.start as u128, cols.end as u128);
    let width = c1 - c0;
    let symmetric = mode == AlibiMode::Symmetric;
    let mut add = |count: u128, sum: u128, min: u128, max: u128| {
        if count > 0 {
            out.count += count as u64;
            out.sum += sum;
            out.min = out.min.min(min as u64);
            out.max = out.max.max(max as u64);
        }
    };
    let clamp = |lo: usize, hi: usize| (lo.max(rows.start) as u128, hi.min(rows.end) as u128);
    // Queries before every key: only keys after them, at c0 - i ..= c1 - 1 - i.
    let (a, b) = clamp(0, cols.start);
    if symmetric && a < b {
        let n = b - a;
        // Each row: width * (c0 + c1 - 1 - 2i) / 2, an integer for every row.
        let sum = width * (n * (c0 + c1 - 1) - 2 * sum_of(a, b)) / 2;
        add(width * n, sum, c0 - (b - 1), c1 - 1 - a);
    }
    // Queries among the keys: k = i - c0 keys before (distances 0..=k), and in symmetric mode
    // t = c1 - 1 - i after (distances 1..=t).
    let (a, b) = clamp(cols.start, cols.end);
    if a < b {
        let (k0, k1) = (a - c0, b - c0);
        let triangle = (sum_of_squares(k0, k1) + sum_of(k0, k1)) / 2;
        add(sum_of(k0, k1) + (k1 - k0), triangle, 0, k1 - 1);
        if symmetric {
            let (t0, t1) = (c1 - b, c1 - a);
            let triangle = (sum_of_squares(t0, t1) + sum_of(t0, t1)) / 2;
            add(sum_of(t0, t1), triangle, 1, t1 - 1);
        }
    }
    // Queries after every key: keys before them at i - (c1 - 1) ..= i - c0.
    let (a, b) = clamp(cols.end, usize::MAX);
    if a < b {
        let n = b - a;
        let sum = width * (2 * sum_of(a, b) - n * (c0 + c1 - 1)) / 2;
        add(width * n, sum, a + 1 - c1, b - 1 - c0);
    }
    if out.count == 0 {
        out.min = 0;
    }
    out
}

/// `a + (a + 1) + ... + (b - 1)`.
fn sum_of(a: u128, b: u128) -> u128 {
    // Sums from 0: (b - 1) b / 2 - (a - 1) a / 2.
    let below = |n: u128| n * n.saturating_sub(1) / 2;
    below(b) - below(a)
}

/// `a² + (a + 1)² + ... + (b - 1)²`.
fn sum_of_squares(a: u128, b: u128) -> u128 {
    // 0² + ... + (n - 1)² = (n - 1) n (2n - 1) / 6.
    let below = |n: u128| n.saturating_sub(1) * n * (2 * n).saturating_sub(1) / 6;
    below(b) - below(a)
}

/// The 2D bias of one head between patches `query` and `key`.
pub fn bias_2d_value(slope: f64, grid: &GridParams, query: usize, key: usize) -> f64 {
    negate_distance(
        slope,
        grid.distance(query, key, super::grid::DistanceMetric::Euclidean),
    )
}

/// `-slope * distance`, with `+0` rather than `-0` on the diagonal.
fn negate_distance(slope: f64, distance: f64) -> f64 {
    if distance == 0.0 {
        0.0
    } else {
        -slope * distance
    }
}

/// Bias of one head between patches: `-m sqrt(dx² + dy²)` (CROMA `get_2dalibi`).
pub fn bias_2d_head(params: &Alibi2dParams, head: usize) -> Result<Array2<f64>, ParamError> {
    params.validate()?;
    check_head(head, params.heads)?;
    let slope = slopes_unchecked(params.heads)[head];
    let mut bias = Array2::<f64>::zeros((params.grid.patches(), params.grid.patches()));
    fill_head_2d(bias.view_mut(), slope, &params.grid);
    Ok(bias)
}

/// The `[heads, P, P]` 2D bias of every head.
pub fn bias_2d(params: &Alibi2dParams) -> Result<Array3<f64>, ParamError> {
    params.validate()?;
    let patches = params.grid.patches();
    let slopes = slopes_unchecked(params.heads);
    let mut bias = Array3::<f64>::zeros((params.heads, patches, patches));
    for (head, slope) in bias.axis_iter_mut(Axis(0)).zip(slopes) {
        fill_head_2d(head, slope, &params.grid);
    }
    Ok(bias)
}

fn fill_head_2d(mut bias: ndarray::ArrayViewMut2<f64>, slope: f64, grid: &GridParams) {
    Zip::indexed(bias.rows_mut()).par_for_each(|query, mut row| {
        for (key, value) in row.iter_mut().enumerate() {
            *value = bias_2d_value(slope, grid, query, key);
        }
    });
}

/// Checks that `head` is one of `heads` (0-based).
pub fn check_head(head: usize, heads: usize) -> Result<(), ParamError> {
    if head < heads {
        Ok(())
    } else {
        Err(ParamError::new(
            "head",
            head,
            format!(
                "must be a head of the table, from 0 to {} (heads - 1)",
                heads - 1
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_querys_attention_sums_to_one_and_is_the_softmax() {
        for (slope, seq) in [(0.5, 10usize), (1.0 / 256.0, 5000), (1e-9, 300), (0.0, 7)] {
            let weights: Vec<f64> = (0..seq)
                .map(|k| last_query_attention(slope, seq, k))
                .collect();
            let total: f64 = weights.iter().sum();
            assert!((total - 1.0).abs() < 1e-12, "{slope} {seq}: {total}");
            // The softmax of the biases, computed directly.
            let direct: f64 = (0..seq).map(|k| (-slope * k as f64).exp()).sum();
            let k = 3.min(seq - 1);
            assert!((weights[k] - (-slope * k as f64).exp() / direct).abs() < 1e-15);
        }
        for (slope, seq, from) in [
            (0.5, 10usize, 3usize),
            (1.0 / 256.0, 5000, 4096),
            (0.0, 7, 2),
            (0.1, 5, 9),
        ] {
            let summed: f64 = (from.min(seq)..seq)
                .map(|k| last_query_attention(slope, seq, k))
                .sum();
            assert!((last_query_attention_beyond(slope, seq, from) - summed).abs() < 1e-12);
        }
        // A steep head far away: e^{-0.5 * 4096}, far below f64's range, in logs.
        let ln = ln_last_query_attention_beyond(0.5, 16_384, 4096);
        assert!((ln + 2048.0).abs() < 1e-9, "{ln}");
        assert_eq!(slope_scale(512, 256), None);
        assert_eq!(slope_scale(512, 2048), Some(0.25));
    }
}
