//! The options read into a table specification: one kind at a time, each value checked
//! against what the kind allows, with one message per bad value.

use super::kinds::*;
use super::reader::Reader;
use super::*;
use crate::options::ModeArg;

/// Every scaling parameter, by clap id.
pub(super) const SCALING_OPTIONS: &[&str] = &[
    "factor",
    "original_max_position_embeddings",
    "max_position_embeddings",
    "low_freq_factor",
    "high_freq_factor",
    "beta_fast",
    "beta_slow",
    "mscale",
    "mscale_all_dim",
    "attention_factor",
    "truncate",
    "long_factor",
    "short_factor",
];

/// The rotary width and scaling of the RoPE options, for a head of `dim`.
pub(super) fn rope_frequencies(args: &TableArgs, dim: usize) -> Result<RopeFrequencies, CliError> {
    // Given frequencies make the base unused: a --base beside them would be ignored silently.
    if args.rope.inv_freq.is_some()
        && let Some(base) = args
            .sinusoidal
            .base
            .filter(|&b| b != crate::encoding::defaults::BASE)
    {
        return Err(CliError::usage(format!(
            "--base {} does not apply with --inv-freq: the frequencies are given, and no base is used; leave --base out",
            base
        )));
    }
    let rotary_dim = match (args.rope.rotary_dim, args.rope.partial_rotary_factor) {
        (Some(_), Some(_)) => {
            return Err(CliError::usage(
                "--rotary-dim and --partial-rotary-factor both set the rotary width: give one",
            ));
        }
        (Some(r), None) => Some(non_negative("rotary_dim", r)?),
        (None, Some(f)) => {
            if !(f.is_finite() && f > 0.0 && f <= 1.0) {
                return Err(CliError::usage(format!(
                    "--partial-rotary-factor {f} is not allowed: use a number above 0 and at most 1"
                )));
            }
            // Python's int(dim * factor).
            Some((dim as f64 * f) as usize)
        }
        (None, None) => None,
    };
    let positions =
        |id: &'static str, value: Option<i64>| value.map(|v| non_negative(id, v)).transpose();
    let list = |id: &'static str, value: &Option<String>| {
        value
            .as_deref()
            .map(|text| factor_list(id, text))
            .transpose()
    };
    Ok(RopeFrequencies {
        rotary_dim,
        scaling: RopeScaling {
            kind: args.scaled.scaling,
            factor: args.scaled.factor,
            original_max_position_embeddings: positions(
                "original_max_position_embeddings",
                args.scaled.original_max_position_embeddings,
            )?,
            max_position_embeddings: positions(
                "max_position_embeddings",
                args.scaled.max_position_embeddings,
            )?,
            low_freq_factor: args.scaled.low_freq_factor,
            high_freq_factor: args.scaled.high_freq_factor,
            beta_fast: args.scaled.beta_fast,
            beta_slow: args.scaled.beta_slow,
            mscale: args.scaled.mscale,
            mscale_all_dim: args.scaled.mscale_all_dim,
            attention_factor: args.scaled.attention_factor,
            truncate: args.scaled.truncate,
            long_factor: list("long_factor", &args.scaled.long_factor)?,
            short_factor: list("short_factor", &args.scaled.short_factor)?,
        },
        given: list("inv_freq", &args.rope.inv_freq)?,
    })
}

/// Numbers are written without spaces, in lists too, as every number option takes them (`--dim
/// ' 5'` is refused): one rule, said plainly.
fn refuse_spaces(id: &'static str, text: &str) -> Result<(), CliError> {
    if text.chars().any(char::is_whitespace) {
        return Err(CliError::usage(format!(
            "{} {} is not allowed: it holds spaces; write numbers without spaces, separated by commas only (e.g. 1,2,3)",
            flag(id),
            crate::table_args::echo(text)
        )));
    }
    Ok(())
}

/// A LongRoPE factor list: numbers separated by commas, or a 1-D `.npy` file.
pub(super) fn factor_list(id: &'static str, text: &str) -> Result<Vec<f64>, CliError> {
    // A file is named by its .npy extension; anything else is a list of numbers (so that
    // "nan,1" is told it holds no number, not that no such file exists).
    let is_file = text.trim().to_ascii_lowercase().ends_with(".npy");
    if !is_file {
        refuse_spaces(id, text)?;
        return text
            .split(',')
            .map(|part| {
                part.parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| {
                        CliError::usage(format!(
                            "{} {} is not allowed: {} is not a finite number (give numbers separated by commas, or a 1-D .npy file)",
                            flag(id),
                            crate::table_args::echo(text),
                            crate::table_args::echo(part.trim())
                        ))
                    })
            })
            .collect();
    }
    let path = Path::new(text);
    let values = read_input_1d(id, path)?;
    Ok(values)
}

/// ALiBi's `--mode`, causal unless given.
pub(super) fn alibi_mode(args: &TableArgs) -> Result<AlibiMode, CliError> {
    ModeArg::alibi(args.alibi.mode, &kind_name(args.kind)).map_err(CliError::usage)
}

/// sincos-2d-resample's `--mode`, bicubic unless given.
pub(super) fn resample_mode(args: &TableArgs) -> Result<ResampleMode, CliError> {
    ModeArg::resample(args.alibi.mode, &kind_name(args.kind)).map_err(CliError::usage)
}

/// `--from-grid HxW`.
pub(super) fn parse_grid_size(text: &str) -> Result<(usize, usize), CliError> {
    let bad = || {
        CliError::usage(format!(
            "--from-grid {text:?} is not allowed: give rows x columns of patches as HxW, each \
             1 to 65536 (e.g. 14x14)"
        ))
    };
    let (h, w) = text.split_once(['x', 'X']).ok_or_else(bad)?;
    let side = |part: &str| -> Result<usize, CliError> {
        let n: usize = part.trim().parse().map_err(|_| bad())?;
        if encoding::GRID_SIDE_RANGE.contains(&n) {
            Ok(n)
        } else {
            Err(bad())
        }
    };
    Ok((side(h)?, side(w)?))
}

/// The square grid an input's patch rows make, as timm assumes when no old size is given.
pub(super) fn square_grid_of(rows: usize, prefix_rows: usize) -> Result<(usize, usize), CliError> {
    let patches = rows.checked_sub(prefix_rows).ok_or_else(|| {
        CliError::usage(format!(
            "--prefix-rows {prefix_rows} is not allowed: the --input table has only {rows} rows"
        ))
    })?;
    let side = (patches as f64).sqrt().round() as usize;
    if side >= 1 && side * side == patches {
        Ok((side, side))
    } else {
        Err(CliError::usage(format!(
            "the --input table has {patches} patch rows (after {prefix_rows} prefix rows), \
             not a square: give --from-grid HxW"
        )))
    }
}

/// Reads an integer option that must be present, checking it is not negative.
pub(super) fn required(
    kind: Kind,
    id: &'static str,
    value: Option<i64>,
    meaning: &str,
) -> Result<usize, CliError> {
    match value {
        Some(v) => usize::try_from(v)
            .map_err(|_| CliError::usage(format!("{} {v} is not allowed: {meaning}", flag(id)))),
        None => Err(CliError::usage(format!(
            "{} is required for {}: {meaning}",
            flag(id),
            kind_name(kind)
        ))),
    }
}

pub(super) fn non_negative(id: &'static str, value: i64) -> Result<usize, CliError> {
    usize::try_from(value).map_err(|_| {
        CliError::usage(format!(
            "{} {value} is not allowed: must be 0 or more",
            flag(id)
        ))
    })
}

/// Reads the arrays named by `--input` or `--freqs`, as 2-D f64 arrays.
pub(super) fn read_input_1d(id: &'static str, path: &Path) -> Result<Vec<f64>, CliError> {
    let max_bytes = engine::available_memory_bytes().unwrap_or(u64::MAX);
    let array = import::read_npy_f64(path, max_bytes)
        .map_err(|e| CliError::usage(format!("{} {e}", flag(id))))?;
    if array.ndim() != 1 {
        return Err(CliError::usage(format!(
            "{} {} has shape {:?}; it must be a 1-D array of factors",
            flag(id),
            path.display(),
            array.shape()
        )));
    }
    if array.is_empty() {
        return Err(CliError::usage(format!(
            "--positions {} holds no positions: give at least one",
            path.display()
        )));
    }
    Ok(array.iter().copied().collect())
}

pub(super) fn read_input_2d(
    id: &'static str,
    path: &Path,
) -> Result<ndarray::Array2<f64>, CliError> {
    let max_bytes = engine::available_memory_bytes().unwrap_or(u64::MAX);
    let array = import::read_npy_f64(path, max_bytes)
        .map_err(|e| CliError::usage(format!("{} {e}", flag(id))))?;
    let shape = array.shape().to_vec();
    array.into_dimensionality::<Ix2>().map_err(|_| {
        let expected = if id == "input" {
            "[seq, dim]"
        } else {
            "[2, dim/2]"
        };
        CliError::usage(format!(
            "{} {} has shape {shape:?}; it must be a 2-D array {expected}",
            flag(id),
            path.display()
        ))
    })
}

/// The table named by `poslab table`'s words (`KIND [options]`, no output needed), as the
/// Check view takes it: every check of the command line, and its one-line messages.
pub fn table_spec_from_words(words: &[String]) -> Result<TableSpec, String> {
    let command = TableArgs::augment_args(clap::Command::new("table").no_binary_name(true))
        .mut_arg("output", |output| output.required(false));
    let matches = command
        .try_get_matches_from(words)
        .map_err(|e| one_line(&e.render().to_string()))?;
    let mut args = TableArgs::from_arg_matches(&matches).map_err(|e| one_line(&e.to_string()))?;
    config::apply_config(&mut args, &matches).map_err(|e| e.message)?;
    for id in ["output", "backend", "dtype", "arith", "freq_form"] {
        if matches.value_source(id) == Some(ValueSource::CommandLine) {
            return Err(format!(
                "{} does not apply here: give the kind and its options",
                flag(id)
            ));
        }
    }
    check_options_apply(&args, &matches).map_err(|e| e.message)?;
    table_spec(&args).map_err(|e| e.message)
}

/// A table named by its kind and keywords (`rotary_dim=64`, as Python passes them): read as
/// the words `KIND --rotary-dim=64 ...` are, with the same messages.
pub fn table_spec_from_keywords(
    kind: &str,
    keywords: &[(String, crate::options::keywords::Value)],
) -> Result<TableSpec, String> {
    let command = TableArgs::augment_args(clap::Command::new("table"));
    let mut words = vec![kind.to_owned()];
    words.extend(crate::options::keywords::words(&command, keywords));
    table_spec_from_words(&words)
}

/// The precision lab's compute type: `--arith f32|bf16|f16`, float32 when not given.
pub(super) fn compute_type(
    args: &TableArgs,
) -> Result<crate::encoding::precision::ComputeType, CliError> {
    use crate::options::ArithmeticArg;
    match args.arithmetic.arith {
        ArithmeticArg::Exact => Ok(crate::encoding::precision::ComputeType::F32),
        other => other.compute_type().ok_or_else(|| {
            CliError::usage(format!(
                "--arith {} does not apply to {}: give the type the model computes in, f32, bf16 or f16",
                other
                    .to_possible_value()
                    .map(|v| v.get_name().to_owned())
                    .unwrap_or_default(),
                super::kind_name(args.kind)
            ))
        }),
    }
}

/// Builds the table's specification from the options, checking each as it is read.
pub(crate) fn table_spec(args: &TableArgs) -> Result<TableSpec, CliError> {
    let r = Reader::new(args)?;
    let spec = match super::kinds::registered(r.kind) {
        Some(entry) => (entry.read)(&r)?,
        None => builtin_spec(&r)?,
    };
    let spec = placed(spec, args, r.given_positions)?;
    spec.validate()?;
    Ok(spec)
}

/// The specification of a kind written into [`TableSpec`]'s own variants.
fn builtin_spec(r: &Reader) -> Result<TableSpec, CliError> {
    let (args, kind) = (r.args, r.kind);
    Ok(match kind {
        Kind::Sinusoidal => TableSpec::Sinusoidal(r.sinusoidal()?),
        Kind::DotDecay => TableSpec::DotDecay {
            params: r.sinusoidal()?,
            anchor: non_negative("anchor", args.sinusoidal.anchor.unwrap_or(0))?,
        },
        Kind::Similarity => TableSpec::Similarity(r.sinusoidal()?),
        Kind::RopeInvFreq => {
            let seq = r.current_length()?;
            let dim = r.even_dim()?;
            TableSpec::RopeInvFreq {
                dim,
                base: args.sinusoidal.base(),
                seq,
                freqs: rope_frequencies(args, dim)?,
            }
        }
        Kind::RopeAttentionFactor => {
            let dim = r.even_dim()?;
            TableSpec::RopeAttentionFactor {
                dim,
                base: args.sinusoidal.base(),
                freqs: rope_frequencies(args, dim)?,
            }
        }
        Kind::RopeAngles => {
            let (params, freqs) = r.rope_params()?;
            TableSpec::RopeAngles { params, freqs }
        }
        Kind::RopeCos | Kind::RopeSin => {
            let layout = args.sinusoidal.layout.unwrap_or_default();
            let part = if kind == Kind::RopeCos {
                CachePart::Cos
            } else {
                CachePart::Sin
            };
            r.rope_cache(layout, part)?
        }
        Kind::RopeAxes => TableSpec::RopeAxes(Box::new(rope_axes_params(args)?)),
        // The format is the layout of a pair's two values: halves or side by side.
        Kind::RopeCosSin => match args.format {
            CacheFormat::Vllm => r.rope_cache(PairLayout::Half, CachePart::CosSin)?,
            CacheFormat::Pairs => r.rope_cache(PairLayout::Interleaved, CachePart::CosSin)?,
            CacheFormat::Halves => r.rope_cache(PairLayout::Half, CachePart::CosSinHalves)?,
        },
        Kind::RopeCacheError => rope_cache_error(r)?,
        Kind::RopeScoreDrift => rope_score_drift(r)?,
        Kind::RopeUnseen => rope_unseen(r)?,
        Kind::RopeApply => rope_apply(r)?,
        Kind::AlibiSlopes => TableSpec::AlibiSlopes { heads: r.heads()? },
        Kind::Alibi if args.alibi.form != AlibiForm::Relative => alibi_keys(r)?,
        Kind::Alibi => alibi(r)?,
        Kind::Alibi2d => TableSpec::Alibi2d {
            params: Alibi2dParams {
                heads: r.heads()?,
                grid: r.grid()?,
            },
            head: r.head()?,
        },
        Kind::PatchDistance => TableSpec::PatchDistance {
            grid: r.grid()?,
            metric: args.grid2d.metric,
        },
        Kind::SinCos2d => TableSpec::SinCos2d(SinCos2dParams {
            grid: r.grid()?,
            dim: r.dim_of_4()?,
            base: args.sinusoidal.base(),
            order: crate::encoding::grid::parse_order(&args.grid2d.order)?,
            raster: args.grid2d.raster,
            prefix_rows: non_negative("prefix_rows", args.grid2d.prefix_rows)?,
            position_scale: grid_position_scale(args)?,
            coordinates: Default::default(),
        }),
        Kind::SinCos2dResample => sincos_2d_resample(r)?,
        Kind::Rope2dAxial => TableSpec::Rope2dAxial(AxialParams {
            grid: r.grid()?,
            dim: r.dim_of_4()?,
            theta: args.axes.theta.unwrap_or(100.0),
            values: args.axes.values,
            layout: args.sinusoidal.layout,
            axis_order: args.axes.axis_order,
            position_scale: grid_position_scale(args)?,
        }),
        Kind::Rope2dMixed => rope_2d_mixed(r)?,
        Kind::T5Buckets => TableSpec::T5Buckets(T5BucketParams {
            seq: r.seq()?,
            num_buckets: non_negative("num_buckets", args.relative.num_buckets())?,
            max_distance: non_negative("max_distance", args.relative.max_distance())?,
            bidirectional: args.relative.bidirectional(),
        }),
        Kind::RelativeClip => TableSpec::RelativeClip(RelativeClipParams {
            seq: r.seq()?,
            max_relative: required(
                kind,
                "max_relative",
                args.relative.max_relative,
                "the clipping distance K, 0 to 1073741824",
            )?,
        }),
        Kind::Binary => TableSpec::Binary(BinaryParams {
            seq: r.seq()?,
            dim: r.dim("the number of bits, 1 to 1048576")?,
            start: r.start()?,
        }),
        _ => unreachable!("{kind:?} is a registered kind, read by its own module"),
    })
}

/// `spec` at the positions `--positions` gives or `--position-scale` scales, when either was
/// given; as it is otherwise.
fn placed(
    spec: TableSpec,
    args: &TableArgs,
    given: Option<Vec<f64>>,
) -> Result<TableSpec, CliError> {
    use crate::encoding::positions::{PositionList, Positions, ScaleAt};
    let scale = args
        .placement
        .position_scale
        .as_deref()
        .map(|text| one_position_scale(text, &spec))
        .transpose()?;
    // A grid's scale is its own (per axis), not its rows'.
    if (given.is_none() && scale.is_none()) || is_grid_kind(&spec) {
        return Ok(spec);
    }
    spec.validate()?;
    let rows = spec.axes().and_then(|a| a.first().copied()).unwrap_or(0);
    let list = match given {
        Some(values) => PositionList::Given(values),
        None => PositionList::Counting {
            start: non_negative("start", args.sinusoidal.start())? as u64,
            count: rows,
        },
    };
    Ok(TableSpec::AtPositions(Box::new(engine::PositionedTable {
        table: spec,
        positions: Positions {
            list,
            scale: scale.unwrap_or(1.0),
            scale_at: ScaleAt::Position,
        },
    })))
}

/// `--position-scale` as numbers: one, or for a grid `sy,sx`; each checked where it is used.
pub(crate) fn position_scales(text: &str) -> Result<Vec<f64>, CliError> {
    refuse_spaces("position_scale", text)?;
    // A fraction `a/b` keeps the quotient exact where a decimal would be typed short
    // (diffusers' base_size / grid: 4/6, not 0.6667).
    let number = |part: &str| -> Option<f64> {
        match part.split_once('/') {
            Some((a, b)) => Some(a.trim().parse::<f64>().ok()? / b.trim().parse::<f64>().ok()?),
            None => part.trim().parse::<f64>().ok(),
        }
    };
    let values: Option<Vec<f64>> = text.split(',').map(number).collect();
    match values {
        Some(values) if (1..=2).contains(&values.len()) => Ok(values),
        _ => Err(CliError::usage(format!(
            "--position-scale {text:?} is not allowed: give a number or a fraction, or for a grid kind sy,sx (e.g. 0.5, 1/3 or 4/6,4/10)"
        ))),
    }
}

/// The one `--position-scale` of a kind whose rows are positions.
fn one_position_scale(text: &str, spec: &TableSpec) -> Result<f64, CliError> {
    match position_scales(text)?[..] {
        [scale] => Ok(scale),
        _ if is_grid_kind(spec) => Ok(1.0),
        _ => Err(CliError::usage(format!(
            "--position-scale {text:?} is not allowed for {}: its positions have one axis, so give one number (sy,sx is for grid kinds)",
            spec.kind_name()
        ))),
    }
}

/// Whether `spec`'s positions are a grid's, scaled per axis by the spec itself.
fn is_grid_kind(spec: &TableSpec) -> bool {
    matches!(spec, TableSpec::SinCos2d(_) | TableSpec::Rope2dAxial(_))
}

/// A grid's `--position-scale`: `(sy, sx)`, one number for both axes; `[1, 1]` without it.
fn grid_position_scale(args: &TableArgs) -> Result<[f64; 2], CliError> {
    Ok(match args.placement.position_scale.as_deref() {
        None => [1.0, 1.0],
        Some(text) => match position_scales(text)?[..] {
            [both] => [both, both],
            [sy, sx] => [sy, sx],
            _ => unreachable!("position_scales gives one or two numbers"),
        },
    })
}

/// The most positions a range of `--positions` may give: as many rows as any table has.
const MOST_RANGE_POSITIONS: u64 = 1 << 24;

/// `--positions` with ranges, as identify writes positions: `0..63` (both ends included),
/// `0..3,8,10..12`; whole numbers from 0 up.
fn position_ranges(text: &str) -> Result<Vec<f64>, CliError> {
    refuse_spaces("positions", text)?;
    let refuse = |part: &str, why: &str| {
        CliError::usage(format!(
            "--positions {} is not allowed: {} {why} (give numbers or ranges A..B of whole numbers, both ends included, separated by commas)",
            crate::table_args::echo(text),
            crate::table_args::echo(part)
        ))
    };
    let mut positions = Vec::new();
    for part in text.split(',') {
        let Some((first, last)) = part.split_once("..") else {
            positions.push(
                part.parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| refuse(part, "is not a finite number"))?,
            );
            continue;
        };
        let (Ok(first), Ok(last)) = (first.parse::<u64>(), last.parse::<u64>()) else {
            return Err(refuse(part, "is not a range of whole numbers"));
        };
        if first > last {
            return Err(refuse(part, "ends before it starts"));
        }
        if last - first >= MOST_RANGE_POSITIONS - positions.len() as u64 {
            return Err(refuse(
                part,
                &format!("gives more than {MOST_RANGE_POSITIONS} positions"),
            ));
        }
        positions.extend((first..=last).map(|p| p as f64));
    }
    Ok(positions)
}

/// float16's largest finite value.
const FLOAT16_MAX: u64 = 65504;

/// The last position float16 rounds to a finite value (to 65504): from 65520 on, half way to
/// the next power of two, a position rounds to infinity, and its angles and cache are NaN.
const FLOAT16_LAST_POSITION: u64 = 65519;

/// Refuses positions up to `last` cast to float16 (`--positions-in f16`) where it cannot hold
/// them: they would overflow to infinity, and the table be NaN.
pub(super) fn float16_holds_positions(
    last: u64,
    positions_in: Option<crate::encoding::precision::ComputeType>,
) -> Result<(), CliError> {
    use crate::encoding::precision::ComputeType;
    match positions_in {
        Some(ComputeType::F16) if last > FLOAT16_LAST_POSITION => Err(CliError::usage(format!(
            "--positions-in f16 is not allowed with positions up to {last}: float16's largest finite value is {FLOAT16_MAX}, and positions from 65520 on round to infinity (NaN angles); keep the last position at {FLOAT16_LAST_POSITION} or below (--start, --seq), or cast them to bf16"
        ))),
        _ => Ok(()),
    }
}

/// The positions of `--positions`: a comma list, or a `.npy` whose axes but one have length
/// 1 (transformers' `position_ids` are `[1, seq]`), its values as stored.
pub(crate) fn position_list(text: &str) -> Result<Vec<f64>, CliError> {
    let is_file = text.trim().to_ascii_lowercase().ends_with(".npy");
    if !is_file && text.contains("..") {
        return position_ranges(text);
    }
    if !is_file {
        return factor_list("positions", text);
    }
    let path = Path::new(text);
    let max_bytes = engine::available_memory_bytes().unwrap_or(u64::MAX);
    // Integer position ids (int64 in transformers) as well as floats.
    let array = import::tables::read_table(path, None, max_bytes)
        .map_err(|e| CliError::usage(format!("--positions {e}")))?;
    if array.shape().iter().filter(|&&n| n != 1).count() > 1 {
        return Err(CliError::usage(format!(
            "--positions {} has shape {:?}; it must hold one position per row: a 1-D array, or one whose other axes have length 1 ([1, seq])",
            path.display(),
            array.shape()
        )));
    }
    Ok(array.iter().copied().collect())
}

/// A comma list of counts (`--axes-dim 16,56,56`, `--mrope-section 16,24,24`, `--grid 2,3,4`).
pub(crate) fn count_list(id: &'static str, text: &str, what: &str) -> Result<Vec<usize>, CliError> {
    let bad = || {
        CliError::usage(format!(
            "{} {text:?} is not allowed: give {what} as a comma list of whole numbers, each 1 or more (e.g. 16,24,24)",
            flag(id)
        ))
    };
    let values: Vec<usize> = text
        .split(',')
        .map(|part| part.trim().parse::<usize>().ok().filter(|&n| n >= 1))
        .collect::<Option<_>>()
        .ok_or_else(bad)?;
    if values.is_empty() || values.len() > 8 {
        return Err(bad());
    }
    Ok(values)
}

/// `rope-axes`' parameters: positions from `--ids` or `--grid`, the split from `--axes-dim`
/// or `--mrope-section --dim`, the base from `--theta` or `--base`.
fn rope_axes_params(
    args: &TableArgs,
) -> Result<crate::encoding::rope_axes::RopeAxesParams, CliError> {
    use crate::encoding::rope_axes::{AxesSplit, RopeAxesParams};
    let split = match (&args.axes.axes_dim, &args.axes.mrope_section) {
        (Some(dims), None) => {
            let dims = count_list("axes_dim", dims, "each axis's RoPE width")?;
            // --dim says nothing --axes-dim does not, and must not contradict it.
            let total: usize = dims.iter().sum();
            if let Some(dim) = args.sizes.dim
                && usize::try_from(dim).ok() != Some(total)
            {
                return Err(CliError::usage(format!(
                    "--dim {dim} is not allowed with --axes-dim {}: the axes' widths make a RoPE of {total} dimensions; give --dim {total}, or leave --dim out",
                    dims.iter()
                        .map(|d| d.to_string())
                        .collect::<Vec<_>>()
                        .join(",")
                )));
            }
            AxesSplit::AxesDim(dims)
        }
        (None, Some(sections)) => AxesSplit::MropeSection {
            dim: match args.sizes.dim {
                Some(d) => non_negative("dim", d)?,
                None => {
                    return Err(CliError::usage(
                        "rope-axes --mrope-section needs --dim, the width of the one RoPE the sections share (twice the sum of the sections)",
                    ));
                }
            },
            sections: count_list("mrope_section", sections, "each axis's pairs")?,
        },
        _ => {
            return Err(CliError::usage(
                "rope-axes needs --axes-dim D0,D1,... (Flux: each axis's own RoPE) or --mrope-section S0,S1,... with --dim (Qwen2-VL: one RoPE's pairs split among the axes)",
            ));
        }
    };
    let ids = match (&args.placement.ids, &args.placement.grid) {
        (Some(path), _) => read_ids(path, &split)?,
        (None, Some(grid)) => grid_positions(grid)?,
        (None, None) => {
            return Err(CliError::usage(
                "rope-axes needs each token's positions: --ids IDS.npy ([seq, axes]) or --grid T,H,W",
            ));
        }
    };
    if args.axes.theta.is_some()
        && args
            .sinusoidal
            .base
            .is_some_and(|b| b != crate::encoding::defaults::BASE)
    {
        return Err(CliError::usage(
            "give the base once: --theta or --base (the same number for rope-axes)",
        ));
    }
    let layout = args.sinusoidal.layout.unwrap_or_default();
    Ok(RopeAxesParams {
        ids,
        theta: args.axes.theta.unwrap_or(args.sinusoidal.base()),
        split,
        values: args.axes.values,
        layout,
    })
}

/// The positions of `--ids`: `[seq, axes]`, or `[axes, seq]` (as transformers'
/// `position_ids[:, 0, :]` holds them) read the other way when only that reading has one
/// column per axis.
fn read_ids(
    path: &Path,
    split: &crate::encoding::rope_axes::AxesSplit,
) -> Result<ndarray::Array2<f64>, CliError> {
    use crate::encoding::rope_axes::AxesSplit;
    let axes = match split {
        AxesSplit::AxesDim(dims) => dims.len(),
        AxesSplit::MropeSection { sections, .. } => sections.len(),
    };
    read_positions(
        path,
        |_, cols| cols == axes,
        &format!("[seq, {axes}] (one column per axis the split names)"),
    )
}

/// The positions in `path`, `[rows, cols]` with axes of length 1 left out (a batch of one),
/// as `fits(rows, cols)` wants them: as stored, or the other way round; `wanted` says what
/// fits, for the message.
fn read_positions(
    path: &Path,
    fits: impl Fn(usize, usize) -> bool,
    wanted: &str,
) -> Result<ndarray::Array2<f64>, CliError> {
    let max_bytes = engine::available_memory_bytes().unwrap_or(u64::MAX);
    let table = import::tables::read_table(path, None, max_bytes)
        .map_err(|e| CliError::usage(format!("--ids {e}")))?;
    let shape = table.shape().to_vec();
    let bad = || {
        CliError::usage(format!(
            "--ids {} has shape {shape:?}; it must be {wanted}",
            path.display()
        ))
    };
    let kept: Vec<usize> = shape.iter().copied().filter(|&n| n != 1).collect();
    let (rows, cols) = match kept.as_slice() {
        [rows, cols] => (*rows, *cols),
        [n] => (*n, 1),
        [] => (1, 1),
        _ => return Err(bad()),
    };
    let flat = table
        .into_shape_with_order((rows, cols))
        .map_err(|_| bad())?;
    if fits(rows, cols) {
        Ok(flat)
    } else if fits(cols, rows) {
        Ok(flat.reversed_axes().as_standard_layout().to_owned())
    } else {
        Err(bad())
    }
}

/// The positions of `--grid T,H,W`: every token of the grid in raster order.
pub(crate) fn grid_positions(grid: &str) -> Result<ndarray::Array2<f64>, CliError> {
    let sides = count_list("grid", grid, "the grid's size on each axis")?;
    let tokens = sides.iter().try_fold(1usize, |n, &s| n.checked_mul(s));
    if tokens.is_none_or(|n| n > 1 << 24) {
        return Err(CliError::usage(format!(
            "--grid {grid:?} is not allowed: the grid may hold at most 2^24 tokens"
        )));
    }
    Ok(crate::encoding::rope_axes::grid_ids(&sides))
}

/// The positions of `--ids` for a table of `seq` rows, as `identify` reads them: `[seq, axes]`,
/// or `[axes, seq]` read the other way; axes of length 1 left out.
pub(crate) fn positions_for_rows(
    path: &Path,
    seq: usize,
) -> Result<ndarray::Array2<f64>, CliError> {
    read_positions(
        path,
        |rows, _| rows == seq,
        &format!("[seq, axes] with one row per row of the table ({seq})"),
    )
}
