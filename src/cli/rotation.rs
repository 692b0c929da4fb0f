//! The rotation check (Python's `assert_rope`): what a user's RoPE function returned for inputs
//! `x` at positions, against poslab's exact rotation of the same `x` (`rope-apply` with the
//! same keywords), judged by `check`'s rule for the dtype the function computed in. When it
//! fails, the cause is named: first by the hypotheses of known bugs (the other pairing, the
//! base fallen back to 10000, the scaling dropped or another factor, the attention factor lost
//! or squared, the whole head rotated, positions off by one or cast to float16 or bfloat16),
//! each recomputed exactly and held to the same rule; then, where none explains the outputs,
//! by what they say themselves (each pair's angle and gain, read in each pairing).

use ndarray::{Array2, Array3, ArrayD, Axis};

use super::Command;
use super::keywords::{Value, parse};
use crate::check::Tolerance;
use crate::check::rotation::{
    PairReading, Partner, changed_dims, read_pairs, to_bfloat16, to_float16,
};
use crate::encoding::PairLayout;
use crate::encoding::rope_scaling::ScalingKind;
use crate::engine::{TableSpec, cpu};
use crate::import::StoredFloat;
use crate::table_args::{
    CliError, TableArgs, check_options_apply, config, engine_error, table_spec,
};

/// What the function was given and returned.
pub struct RotationCase {
    /// `[heads, positions, dim]`, as handed to the function.
    pub x: Array3<f64>,
    /// The function's output, the same shape.
    pub y: Array3<f64>,
    /// Each row's position.
    pub positions: Vec<i64>,
    /// The dtype the function computed in: the rule its outputs are held to.
    pub dtype: StoredFloat,
    /// An absolute tolerance of the caller's, in place of the dtype's rule.
    pub atol: Option<f64>,
}

/// The element furthest outside the rule.
#[derive(Debug, Clone)]
pub struct Worst {
    pub head: usize,
    pub row: usize,
    pub position: i64,
    pub dim: usize,
    pub expected: f64,
    pub got: f64,
}

/// The rotation read from the outputs.
#[derive(Debug, Clone)]
pub struct Applied {
    /// The pairing whose pairs keep their norms best, or `None` when neither does (not a
    /// rotation of pairs).
    pub layout: Option<PairLayout>,
    /// The ratio of an output pair's norm to its input's, in that pairing.
    pub gain: f64,
    /// The attention factor the expected rotation has.
    pub expected_gain: f64,
    /// The dims the function changed.
    pub changed: Vec<usize>,
    /// The angles read as a cos cache and identified (`identified: ...` or the closest).
    pub reading: Option<String>,
}

/// What the check found.
pub struct RotationReport {
    pub passes: bool,
    pub max_abs_error: f64,
    pub worst: Option<Worst>,
    pub rule: String,
    pub applied: Applied,
    /// Each cause named, one sentence each (empty when it passes).
    pub causes: Vec<String>,
    pub text: String,
    /// The expected pairing and rotary width.
    pairing: (PairLayout, usize),
}

impl RotationReport {
    /// The pair a dim belongs to in the expected pairing, `None` past the rotary dims.
    pub fn pair_of(&self, dim: usize) -> Option<usize> {
        let (layout, rotary) = self.pairing;
        crate::check::rotation::pair_dims(layout, rotary)
            .iter()
            .position(|&(i, j)| i == dim || j == dim)
    }
}

/// The keywords `keywords` with `key` set to `value` (replaced where given).
fn with(keywords: &[(String, Value)], key: &str, value: Value) -> Vec<(String, Value)> {
    let mut changed: Vec<(String, Value)> =
        keywords.iter().filter(|(k, _)| k != key).cloned().collect();
    changed.push((key.to_owned(), value));
    changed
}

fn without(keywords: &[(String, Value)], keys: &[&str]) -> Vec<(String, Value)> {
    keywords
        .iter()
        .filter(|(k, _)| !keys.contains(&k.as_str()))
        .cloned()
        .collect()
}

/// The rope-apply options of `keywords` at `positions` (each row's).
fn rotation_args(keywords: &[(String, Value)], positions: &[f64]) -> Result<TableArgs, CliError> {
    rotation_args_of("rope-apply", keywords, positions)
}

/// The options of table `kind` with `keywords`, at `positions`.
fn rotation_args_of(
    kind: &str,
    keywords: &[(String, Value)],
    positions: &[f64],
) -> Result<TableArgs, CliError> {
    let list = positions
        .iter()
        .map(|&p| {
            if p.fract() == 0.0 && p.abs() < 9e15 {
                Value::Int(p as i64)
            } else {
                Value::Float(p)
            }
        })
        .collect();
    let keywords = with(keywords, "positions", Value::List(list));
    let (command, matches) = parse("table", &[kind], &keywords)?;
    let Command::Table(mut args) = command else {
        return Err(CliError::usage("not a table"));
    };
    config::apply_config(&mut args, &matches)?;
    check_options_apply(&args, &matches)?;
    Ok(args)
}

/// The exact rotation of each head of `x` (rows `rows` only) under `args`: each head's spec
/// and table.
fn expected(
    args: &mut TableArgs,
    x: &Array3<f64>,
    rows: &[usize],
) -> Result<Vec<(TableSpec, ArrayD<f64>)>, CliError> {
    let mut heads = Vec::new();
    for head in x.axis_iter(Axis(0)) {
        args.handed_input = Some(head.select(Axis(0), rows));
        let spec = table_spec(args)?;
        let table = cpu::compute(&spec).map_err(engine_error)?.into_real();
        heads.push((spec, table));
    }
    args.handed_input = None;
    Ok(heads)
}

/// How the outputs (rows `rows`) compare with the exact rotation under `args`: whether every
/// head passes, and each head's verdict.
fn judge(
    args: &mut TableArgs,
    case: &RotationCase,
    rows: &[usize],
    gain: f64,
) -> Result<Vec<crate::check::Verdict>, CliError> {
    Ok(judged(args, case, rows, gain)?
        .into_iter()
        .map(|judged| judged.verdict)
        .collect())
}

/// One head's verdict, with the rotation it was judged against.
struct Judged {
    verdict: crate::check::Verdict,
    spec: TableSpec,
    table: ArrayD<f64>,
}

/// [`judge`], with each head's exact rotation.
fn judged(
    args: &mut TableArgs,
    case: &RotationCase,
    rows: &[usize],
    gain: f64,
) -> Result<Vec<Judged>, CliError> {
    let explicit = case.atol.map(|abs| Tolerance { abs, rel: 0.0 });
    let mut verdicts = Vec::new();
    for (head, (spec, mut table)) in expected(args, &case.x, rows)?.into_iter().enumerate() {
        if gain != 1.0 {
            table.mapv_inplace(|v| v * gain);
        }
        let got = case
            .y
            .index_axis(Axis(0), head)
            .select(Axis(0), rows)
            .into_dyn();
        let mut verdict = crate::check::verdict::verdict_showing(
            &spec,
            &table,
            &got,
            Some(case.dtype),
            explicit,
            3,
        );
        // A NaN output is never right (the comparison counts only what it can compare).
        if got.iter().any(|v| v.is_nan()) {
            verdict.matches = false;
        }
        verdicts.push(Judged {
            verdict,
            spec,
            table,
        });
    }
    Ok(verdicts)
}

fn all_match(verdicts: &[crate::check::Verdict]) -> bool {
    verdicts.iter().all(|v| v.matches)
}

/// Checks the function's outputs in `case` against the RoPE `keywords` describe.
pub fn check_rotation(
    keywords: &[(String, Value)],
    case: &RotationCase,
) -> Result<RotationReport, CliError> {
    let (heads, rows, dim) = case.x.dim();
    if case.y.dim() != case.x.dim() {
        return Err(CliError::usage(format!(
            "the function returned shape {:?} for an input of shape [1, {heads}, {rows}, {dim}]: it must return the rotated input, the same shape",
            case.y.shape()
        )));
    }
    if case.positions.len() != rows {
        return Err(CliError::usage("one position per row is needed"));
    }
    let positions: Vec<f64> = case.positions.iter().map(|&p| p as f64).collect();
    let mut args = rotation_args(keywords, &positions)?;
    let all: Vec<usize> = (0..rows).collect();
    let judged = judged(&mut args, case, &all, 1.0)?;
    // Every head's rotation has the same frequencies and pairing: the first head's says them.
    let spec = &judged
        .first()
        .ok_or_else(|| CliError::usage("no heads to rotate"))?
        .spec;
    let (_, rotary, attention) = spec
        .rope_frequencies()
        .ok_or_else(|| CliError::usage("not a RoPE rotation"))?;
    let layout = match spec.unpositioned() {
        TableSpec::RopeApply { layout, .. } => *layout,
        _ => PairLayout::default(),
    };
    let passes = judged.iter().all(|j| j.verdict.matches);
    // The rule, and the reading that passed where the exact rotation alone did not (PyTorch's
    // float32 computation).
    let rule = judged
        .first()
        .map(|j| {
            let mut rule = j.verdict.comparison.rule_text();
            if let Some(reading) = j
                .verdict
                .notes
                .iter()
                .find_map(|n| n.strip_prefix("verdict: "))
            {
                rule = format!("{rule}; {reading}");
            }
            rule
        })
        .unwrap_or_default();
    let max_abs_error = if case.y.iter().any(|v| v.is_nan()) {
        f64::NAN
    } else {
        judged
            .iter()
            .map(|j| j.verdict.comparison.max_abs_error())
            .fold(0.0, f64::max)
    };
    let worst = if passes {
        largest_error(&judged, case)
    } else {
        first_outside(&judged, case)
    };
    let applied = read_applied(case, layout, rotary, attention, &positions, !passes);
    let causes = if passes {
        Vec::new()
    } else {
        let mut causes = named_causes(keywords, case, &args, (rotary, attention))?;
        if causes.is_empty() {
            causes = read_causes(&applied, layout, rotary, dim);
        }
        causes
    };
    let text = report_text(
        (layout, rotary),
        passes,
        max_abs_error,
        worst.as_ref(),
        &rule,
        &applied,
        &causes,
        case,
    );
    Ok(RotationReport {
        passes,
        max_abs_error,
        worst,
        rule,
        applied,
        causes,
        text,
        pairing: (layout, rotary),
    })
}

/// Where the outputs first differ: the first row (in the order given, the positions rising)
/// with an element outside the rule, and its element furthest outside, of any head.
fn first_outside(judged: &[Judged], case: &RotationCase) -> Option<Worst> {
    let (_, rows, dim) = case.x.dim();
    // A float32 output is also held to PyTorch's float32 computation (2 ulp of the largest
    // value), as the verdict holds it: its rounding of long positions' angles is no bug.
    let torch: Vec<Option<(ArrayD<f64>, f64)>> = judged
        .iter()
        .map(|j| {
            (case.dtype == StoredFloat::F32 && !j.verdict.matches)
                .then(|| float32_rotation(&j.spec))
                .flatten()
        })
        .collect();
    for row in 0..rows {
        let mut worst: Option<(f64, Worst)> = None;
        for (head, Judged { verdict, table, .. }) in judged.iter().enumerate() {
            if verdict.matches {
                continue;
            }
            for d in 0..dim {
                let (expected, got) = (table[[row, d]], case.y[[head, row, d]]);
                if !verdict.comparison.is_outside(expected, got) {
                    continue;
                }
                if let Some((torch, allowed)) = &torch[head]
                    && (got - torch[[row, d]]).abs() <= *allowed
                {
                    continue;
                }
                let error = if got.is_finite() {
                    (got - expected).abs()
                } else {
                    f64::INFINITY
                };
                if worst.as_ref().is_none_or(|(e, _)| error > *e) {
                    let position = case.positions[row];
                    worst = Some((
                        error,
                        Worst {
                            head,
                            row,
                            position,
                            dim: d,
                            expected,
                            got,
                        },
                    ));
                }
            }
        }
        if let Some((_, worst)) = worst {
            return Some(worst);
        }
    }
    None
}

/// The element of the largest error, of any head (for a rotation that passes).
fn largest_error(judged: &[Judged], case: &RotationCase) -> Option<Worst> {
    let (head, worst) = judged
        .iter()
        .enumerate()
        .filter_map(|(head, j)| j.verdict.comparison.max_abs.as_ref().map(|w| (head, w)))
        .max_by(|(_, a), (_, b)| a.error.total_cmp(&b.error))?;
    let [row, dim] = worst.index[..] else {
        return None;
    };
    Some(Worst {
        head,
        row,
        position: case.positions[row],
        dim,
        expected: worst.reference,
        got: worst.loaded,
    })
}

/// The rotation of `spec` as PyTorch computes it in float32, and the 2 ulp (of its largest
/// value) a float32 output may be from it.
fn float32_rotation(spec: &TableSpec) -> Option<(ArrayD<f64>, f64)> {
    let table = cpu::compute_arith(spec, crate::encoding::torch_f32::Arithmetic::TORCH)
        .ok()?
        .into_real();
    let largest = crate::check::largest_magnitude(&table);
    Some((table, 2.0 * crate::check::f32_ulp(largest)))
}

/// What the outputs say: the pairing that keeps norms, its gain, the dims changed, and the
/// angles identified.
fn read_applied(
    case: &RotationCase,
    layout: PairLayout,
    rotary: usize,
    attention: f64,
    positions: &[f64],
    identify: bool,
) -> Applied {
    let noise = match case.dtype {
        StoredFloat::F64 => 1e-12,
        StoredFloat::F32 => 1e-6,
        StoredFloat::F16 => 2e-3,
        StoredFloat::Bf16 => 1e-2,
    };
    let readings: Vec<PairReading> = [layout, other(layout)]
        .into_iter()
        .map(|l| read_pairs(case.x.view(), case.y.view(), l, rotary))
        .collect();
    let best = readings
        .iter()
        .min_by(|a, b| a.spread.total_cmp(&b.spread))
        .filter(|r| r.spread <= 0.05 + 4.0 * noise);
    let reading = best
        .filter(|_| identify)
        .map(|r| identify_angles(r, rotary, positions));
    Applied {
        layout: best.map(|r| r.layout),
        gain: best.map_or(f64::NAN, |r| r.gain),
        expected_gain: attention,
        changed: changed_dims(case.x.view(), case.y.view(), noise),
        reading,
    }
}

fn other(layout: PairLayout) -> PairLayout {
    match layout {
        PairLayout::Half => PairLayout::Interleaved,
        PairLayout::Interleaved => PairLayout::Half,
    }
}

/// The angles read as the cos cache of their pairing, identified at their positions.
fn identify_angles(reading: &PairReading, rotary: usize, positions: &[f64]) -> String {
    let pairs = crate::check::rotation::pair_dims(reading.layout, rotary);
    let mut cache = Array2::zeros((reading.angles.nrows(), rotary));
    for (k, &(i, j)) in pairs.iter().enumerate() {
        for s in 0..reading.angles.nrows() {
            let c = reading.angles[[s, k]].cos();
            cache[[s, i]] = c;
            cache[[s, j]] = c;
        }
    }
    let at = crate::encoding::positions::Positions {
        list: crate::encoding::positions::PositionList::Given(positions.to_vec()),
        scale: 1.0,
        scale_at: crate::encoding::positions::ScaleAt::Position,
    };
    let found = crate::check::identify::identify_at_positions(
        cache.into_dyn(),
        &at,
        Tolerance {
            abs: 2e-2,
            rel: 0.0,
        },
        None,
    );
    found.reading_line()
}

/// A known bug, as the options or positions that would reproduce it.
struct Hypothesis {
    keywords: Vec<(String, Value)>,
    /// The rows it can say something of, and the positions it puts them at.
    rows: Vec<usize>,
    positions: Vec<f64>,
    /// What multiplies the expected rotation beyond the options.
    gain: f64,
    said: String,
}

/// The known bugs, each recomputed exactly: those that reproduce the outputs, in words.
fn named_causes(
    keywords: &[(String, Value)],
    case: &RotationCase,
    args: &TableArgs,
    (rotary, attention): (usize, f64),
) -> Result<Vec<String>, CliError> {
    let layout = args.sinusoidal.layout.unwrap_or_default();
    let positions: Vec<f64> = case.positions.iter().map(|&p| p as f64).collect();
    let mut hypotheses = option_hypotheses(
        keywords,
        args,
        &positions,
        (rotary, attention, case.x.dim().2),
    );
    hypotheses.extend(position_hypotheses(keywords, &positions));
    let mut causes = mixed_causes(keywords, case, layout, rotary)?;
    for hypothesis in hypotheses {
        // A hypothesis the options refuse (a factor out of range) is no explanation.
        let Ok(mut args) = rotation_args(&hypothesis.keywords, &hypothesis.positions) else {
            continue;
        };
        let sub = RotationCase {
            x: case.x.select(Axis(1), &hypothesis.rows),
            y: case.y.select(Axis(1), &hypothesis.rows),
            positions: hypothesis.positions.iter().map(|&p| p as i64).collect(),
            dtype: case.dtype,
            atol: case.atol,
        };
        let sub_rows: Vec<usize> = (0..hypothesis.rows.len()).collect();
        if let Ok(verdicts) = judge(&mut args, &sub, &sub_rows, hypothesis.gain)
            && all_match(&verdicts)
        {
            causes.push(hypothesis.said);
        }
    }
    Ok(causes)
}

/// The bugs of a setting lost or changed: the other layout, the base fallen back to 10000, the
/// scaling dropped or another factor, the attention factor squared or dropped, the whole head
/// rotated.
fn option_hypotheses(
    keywords: &[(String, Value)],
    args: &TableArgs,
    positions: &[f64],
    (rotary, attention, dim): (usize, f64, usize),
) -> Vec<Hypothesis> {
    let all: Vec<usize> = (0..positions.len()).collect();
    let layout = args.sinusoidal.layout.unwrap_or_default();
    let base = args.sinusoidal.base();
    let scaling = args.scaled.scaling;
    let factor = args.scaled.factor;
    let mut hypotheses = Vec::new();
    let mut plain = |keywords: Vec<(String, Value)>, gain: f64, said: String| {
        hypotheses.push(Hypothesis {
            keywords,
            rows: all.clone(),
            positions: positions.to_vec(),
            gain,
            said,
        });
    };
    let other_layout = other(layout);
    plain(
        with(
            keywords,
            "layout",
            Value::Text(other_layout.rope_name().to_owned()),
        ),
        1.0,
        format!(
            "the function pairs dims as {} where {} pairs were expected: check `layout` (transformers' rotate_half pairs halves, (i, i + d/2); GPT-J, Meta's original Llama code and llama.cpp's normal RoPE interleave, (2i, 2i + 1)), or whether q_proj and k_proj were permuted for the other layout",
            describe_layout(other_layout),
            describe_layout(layout)
        ),
    );
    if base != 10_000.0 {
        plain(
            with(keywords, "base", Value::Float(10_000.0)),
            1.0,
            format!(
                "the function rotates by base 10000, not {}: the base fell back to the default; check where `rope_theta` is read (transformers v5 moved it into `rope_parameters`)",
                crate::options::ranges::format_number(base)
            ),
        );
    }
    if scaling != ScalingKind::None {
        plain(
            with(keywords, "scaling", Value::Text("none".to_owned())),
            1.0,
            format!(
                "the function rotates by the unscaled frequencies: the {} scaling is read but not applied; check `rope_scaling` / `rope_parameters` (`rope_type`, `factor`) reach the rotary embedding",
                scaling.name()
            ),
        );
        if let Some(given) = factor {
            for f in [2.0, 4.0, 8.0, 16.0, 32.0, 40.0, 64.0] {
                if f != given {
                    plain(
                        with(keywords, "factor", Value::Float(f)),
                        1.0,
                        format!(
                            "the function applies {} scaling with factor {f}, not {}: check `factor`",
                            scaling.name(),
                            crate::options::ranges::format_number(given)
                        ),
                    );
                }
            }
        }
    }
    if attention != 1.0 {
        // The factor given as the scaling's own attention_factor where the scaling takes one
        // (so that PyTorch's float32 reading applies), else multiplied in.
        let factor_of = |value: f64| -> (Vec<(String, Value)>, f64) {
            let given = with(keywords, "attention_factor", Value::Float(value));
            if rotation_args(&given, positions).is_ok() {
                (given, 1.0)
            } else {
                (keywords.to_vec(), value / attention)
            }
        };
        let (squared, gain) = factor_of(attention * attention);
        plain(
            squared,
            gain,
            format!(
                "the outputs are scaled by {:.6} = the attention factor {attention:.6} squared: it is applied twice (to cos and sin, and again to q, k or the scores); check `attention_factor` (`mscale`, `mscale_all_dim`)",
                attention * attention
            ),
        );
        let (dropped, gain) = factor_of(1.0);
        plain(
            dropped,
            gain,
            format!(
                "the outputs are not scaled by the attention factor {attention:.6}, which {} multiplies cos and sin by: it was dropped or collapsed to 1.0; check `attention_factor` (`mscale`, `mscale_all_dim`)",
                scaling.name()
            ),
        );
    }
    if rotary < dim {
        plain(
            with(
                &without(keywords, &["partial_rotary_factor"]),
                "rotary_dim",
                Value::Int(dim as i64),
            ),
            1.0,
            format!(
                "the function rotates all {dim} dims of the head where only the first {rotary} turn: check `partial_rotary_factor` / `rotary_dim`"
            ),
        );
    }
    hypotheses
}

/// The bugs of positions moved: off by one either way, cast to float16 or bfloat16. Each keeps
/// the rows whose moved position the check can compute.
fn position_hypotheses(keywords: &[(String, Value)], positions: &[f64]) -> Vec<Hypothesis> {
    let rows = positions.len();
    let moved = |f: &dyn Fn(f64) -> f64| -> (Vec<usize>, Vec<f64>) {
        (0..rows)
            .filter_map(|r| {
                let p = f(positions[r]);
                (p.is_finite() && p >= 0.0).then_some((r, p))
            })
            .unzip()
    };
    let mut moved_hypotheses = Vec::new();
    for (shift, said) in [
        (
            1.0,
            "the function rotates position p as p + 1: the position ids are off by one (counted from 1, or a cache offset added twice); check `position_ids`",
        ),
        (
            -1.0,
            "the function rotates position p as p - 1: the position ids are off by one; check `position_ids` and the cache offset",
        ),
    ] {
        let (kept, at) = moved(&|p| p + shift);
        moved_hypotheses.push((kept, at, said.to_owned()));
    }
    if positions.iter().any(|&p| to_float16(p) != p) {
        let (kept, at) = moved(&to_float16);
        moved_hypotheses.push((kept, at, "the function's positions were cast to float16: whole numbers are exact only up to 2048 and infinite past 65504; keep position ids in int64 (or float32) until the angle is formed".to_owned()));
    }
    if positions.iter().any(|&p| to_bfloat16(p) != p) {
        let (kept, at) = moved(&to_bfloat16);
        moved_hypotheses.push((kept, at, "the function's positions were cast to bfloat16 (257 reads as 256): keep position ids in int64 (or float32) until the angle is formed".to_owned()));
    }
    let mut hypotheses = Vec::new();
    for (kept, at, said) in moved_hypotheses {
        // A hypothesis that moves no row, or keeps too few, says nothing.
        if kept.len() * 2 < rows || at.iter().zip(&kept).all(|(p, &r)| *p == positions[r]) {
            continue;
        }
        hypotheses.push(Hypothesis {
            keywords: keywords.to_vec(),
            rows: kept,
            positions: at,
            gain: 1.0,
            said,
        });
    }
    hypotheses
}

/// The bugs of code that mixes two pairings: cos and sin laid out for one, partners taken by
/// the other; partial rotary's rotate_half applied across the whole head. Each is recomputed
/// from the exact tables and explains the outputs when it is within 2% of the input's largest
/// value everywhere (any other rotation is off by the size of the input somewhere).
fn mixed_causes(
    keywords: &[(String, Value)],
    case: &RotationCase,
    layout: PairLayout,
    rotary: usize,
) -> Result<Vec<String>, CliError> {
    let (_, rows, dim) = case.x.dim();
    let positions: Vec<f64> = case.positions.iter().map(|&p| p as f64).collect();
    let tables = |kind: &str| -> Result<Array2<f64>, CliError> {
        let keywords = with(
            &with(keywords, "dim", Value::Int(dim as i64)),
            "layout",
            Value::Text(layout.rope_name().to_owned()),
        );
        let args = rotation_args_of(kind, &keywords, &positions)?;
        let spec = table_spec(&args)?;
        let table = cpu::compute(&spec).map_err(engine_error)?.into_real();
        table
            .into_dimensionality::<ndarray::Ix2>()
            .map_err(|_| CliError::runtime(format!("{kind} is not a table of rows")))
    };
    let (cos, sin) = (tables("rope-cos")?, tables("rope-sin")?);
    if cos.nrows() != rows || cos.ncols() != rotary {
        return Ok(Vec::new());
    }
    let scale = case.x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let explains = |partner| {
        let y = crate::check::rotation::rotate_with(&case.x, &cos, &sin, partner);
        y.iter()
            .zip(case.y.iter())
            .all(|(e, g)| (e - g).abs() <= 0.02 * scale)
    };
    let mut causes = Vec::new();
    let (other_partner, own) = match layout {
        PairLayout::Half => (Partner::Interleaved, "halves"),
        PairLayout::Interleaved => (Partner::Halves { width: rotary }, "interleaved"),
    };
    if explains(other_partner) {
        causes.push(format!(
            "the function takes cos and sin laid out in {own} but rotates pairs as {}: one layout for the tables and another for rotate_half / rotate_every_two; check that both follow `layout`",
            describe_layout(other(layout))
        ));
    }
    if rotary < dim && layout == PairLayout::Half && explains(Partner::Halves { width: dim }) {
        causes.push(format!(
            "the function pairs dim i with i + {} (rotate_half across the whole head of {dim}) where partial rotary pairs it with i + {} within the first {rotary} dims: apply rotate_half to q[..., :rotary_dim] only (`partial_rotary_factor`)",
            dim / 2,
            rotary / 2
        ));
    }
    Ok(causes)
}

fn describe_layout(layout: PairLayout) -> &'static str {
    match layout {
        PairLayout::Half => "halves (i, i + d/2)",
        PairLayout::Interleaved => "interleaved (2i, 2i + 1)",
    }
}

/// Where no known bug explains the outputs: what they say themselves.
fn read_causes(applied: &Applied, layout: PairLayout, rotary: usize, dim: usize) -> Vec<String> {
    let mut causes = Vec::new();
    let Some(read) = applied.layout else {
        causes.push("the outputs are not a rotation of pairs: in neither pairing does each pair keep its norm (up to one gain) from position to position; check that the function rotates each pair of q by the cos and sin of its own position".to_owned());
        return causes;
    };
    if read != layout {
        causes.push(format!(
            "the function pairs dims as {} where {} pairs were expected: check `layout`, or whether q_proj and k_proj were permuted for the other layout",
            describe_layout(read),
            describe_layout(layout)
        ));
    }
    let expected = applied.expected_gain;
    let near = |a: f64, b: f64| (a / b - 1.0).abs() <= 1e-2;
    if !near(applied.gain, expected) {
        let why = if expected != 1.0 && near(applied.gain, expected * expected) {
            ", its square: it is applied twice"
        } else if expected != 1.0 && near(applied.gain, 1.0) {
            ": it was dropped or collapsed to 1.0"
        } else {
            ""
        };
        causes.push(format!(
            "the outputs' pairs are {:.6} times their inputs' norms where the attention factor is {expected:.6}{why}; check `attention_factor` (`mscale`, `mscale_all_dim`)",
            applied.gain
        ));
    }
    let rotated: Vec<usize> = (0..rotary).collect();
    if applied.changed != rotated && !applied.changed.is_empty() {
        causes.push(format!(
            "the function changes {} of the {dim} dims ({}) where the first {rotary} rotate: check `partial_rotary_factor` / `rotary_dim`, and that pairs are formed within the rotary part",
            applied.changed.len(),
            dims_text(&applied.changed)
        ));
    }
    causes
}

fn dims_text(dims: &[usize]) -> String {
    let shown: Vec<String> = dims.iter().take(8).map(|d| d.to_string()).collect();
    if dims.len() > 8 {
        format!("{}, ...", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

/// " (pair k, dims i and j)" for a rotated dim, "" for one that passes through.
fn pair_of(dim: usize, (layout, rotary): (PairLayout, usize)) -> String {
    crate::check::rotation::pair_dims(layout, rotary)
        .iter()
        .enumerate()
        .find(|(_, (i, j))| *i == dim || *j == dim)
        .map(|(k, (i, j))| format!(" (pair {k}: dims {i} and {j})"))
        .unwrap_or_default()
}

#[allow(clippy::too_many_arguments)]
fn report_text(
    pairing: (PairLayout, usize),
    passes: bool,
    max_abs_error: f64,
    worst: Option<&Worst>,
    rule: &str,
    applied: &Applied,
    causes: &[String],
    case: &RotationCase,
) -> String {
    let (heads, rows, dim) = case.x.dim();
    let mut lines = vec![format!(
        "rotation of [1, {heads}, {rows}, {dim}] in {} at positions {} to {}: {}",
        case.dtype.name(),
        case.positions.iter().min().copied().unwrap_or(0),
        case.positions.iter().max().copied().unwrap_or(0),
        if passes { "MATCH" } else { "MISMATCH" }
    )];
    lines.push(format!("largest error {max_abs_error:.3e} ({rule})"));
    let nan = case.y.iter().filter(|v| v.is_nan()).count();
    if nan > 0 {
        lines.push(format!("{nan} outputs are NaN"));
    }
    if !passes && let Some(w) = worst {
        lines.push(format!(
            "first differs at position {} (row {}), head {}, dim {}{}: expected {}, got {}",
            w.position,
            w.row,
            w.head,
            w.dim,
            pair_of(w.dim, pairing),
            w.expected,
            w.got
        ));
    }
    match applied.layout {
        Some(layout) => lines.push(format!(
            "applied: pairs {}, gain {:.6} (expected {:.6})",
            describe_layout(layout),
            applied.gain,
            applied.expected_gain
        )),
        None => lines.push("applied: not a rotation of pairs".to_owned()),
    }
    if let Some(reading) = &applied.reading {
        lines.push(format!(
            "the angles applied, read as a cos cache: {reading}"
        ));
    }
    for cause in causes {
        lines.push(format!("cause: {cause}"));
    }
    lines.join("\n")
}

/// The head width and the default positions of a rotation check: `dim` when given, else the
/// one a `config` among `keywords` decides; positions 0 to 63, then both sides of every context
/// a scaling names (the original one and the extended one), of the powers of two from 256 to
/// 131072, and of 100000, so that a bug that short prompts hide shows.
pub fn rotation_setup(
    dim: Option<usize>,
    keywords: &[(String, Value)],
) -> Result<(usize, Vec<i64>), CliError> {
    let dim = match dim {
        Some(dim) => dim,
        None => {
            let (command, matches) = parse("table", &["rope-cos"], keywords)?;
            let Command::Table(mut args) = command else {
                return Err(CliError::usage("not a table"));
            };
            config::apply_config(&mut args, &matches)?;
            let dim = args.sizes.dim.ok_or_else(|| {
                CliError::usage("dim= is required (the head width), or config= a model's config")
            })?;
            usize::try_from(dim).map_err(|_| {
                CliError::usage(format!(
                    "--dim {dim} is not allowed: the head width is 2 or more"
                ))
            })?
        }
    };
    let args = rotation_args(keywords, &[0.0])?;
    let mut contexts: Vec<i64> = (8..=17).map(|k| 1i64 << k).collect();
    contexts.push(100_000);
    contexts.extend(
        [
            args.scaled.original_max_position_embeddings,
            args.scaled.max_position_embeddings,
        ]
        .into_iter()
        .flatten(),
    );
    let mut positions: Vec<i64> = (0..64).collect();
    for c in contexts {
        positions.extend([c - 1, c, c + 1]);
    }
    positions.sort_unstable();
    positions.dedup();
    Ok((dim, positions))
}
