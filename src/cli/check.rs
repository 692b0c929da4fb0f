//! `poslab check FILE --as KIND [options]` compares a table computed elsewhere with poslab's;
//! `poslab identify FILE` says which table it is. Exit status: 0 on a match within the
//! tolerance, 1 on a mismatch (or no identification), 2 on bad input.

use std::path::PathBuf;

use clap::parser::ValueSource;
use clap::{ArgMatches, Args};

use crate::check::Tolerance;
use crate::check::identify::{MAX_ELEMENTS, identify_owned};
use crate::engine::{self, cpu};
use crate::import::Selection;
use crate::import::tables::OpenedTable;
use crate::table_args::{
    CliError, TableArgs, check_options_apply, engine_error, finish_table, flag, table_spec,
    tolerance_option,
};

/// The table a command reads, and how close a match must be.
#[derive(Debug, Args)]
pub struct FileArgs {
    /// The table: .npy, .csv or .safetensors
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    #[command(flatten)]
    pub reading: crate::options::FileOptions,

    /// Only these rows of the file (its first axis), in Python slice syntax: 1: leaves out a
    /// CLS row, :-1 the last row, 0:512:2 every other row of the first 512
    #[arg(long, value_name = "A:B", allow_hyphen_values = true)]
    pub rows: Option<String>,

    /// Only these columns of the file (its last axis), in Python slice syntax
    #[arg(long, value_name = "A:B", allow_hyphen_values = true)]
    pub cols: Option<String>,
}

// What the shared options mean to `poslab identify`: the file is read at these positions.
const IDENTIFY_QUIET: &str = "No spinner (shown on stderr while a table of a million values or \
     more is searched, when it is a terminal)";
const IDENTIFY_IDS: &str = "Each token's positions on several axes, a [seq, axes] .npy \
     (Qwen2-VL's get_rope_index, Flux's ids): the file is read as RoPE over those axes \
     (rope-axes), its scheme, widths or sections, base and layout found";
const IDENTIFY_GRID: &str =
    "The positions of a T,H,W grid of tokens in raster order (as rope-axes --grid), read as --ids";
const IDENTIFY_POSITIONS: &str = "One position per row, as `table --positions` takes them (a \
     comma list or a .npy: diffusion timesteps, position ids): the file is read as a sinusoidal \
     table, or plain RoPE angles or caches, at them";
const IDENTIFY_SCALE: &str =
    "What multiplies every position (diffusers' Timesteps(scale=...)); with --positions";

/// Options of `poslab identify`.
#[derive(Debug, Args)]
#[command(
    mut_arg("quiet", |a| a.help(IDENTIFY_QUIET)),
    mut_arg("ids", |a| a.help(IDENTIFY_IDS)),
    mut_arg("grid", |a| a.help(IDENTIFY_GRID)),
    mut_arg("positions", |a| a.help(IDENTIFY_POSITIONS)),
    mut_arg("position_scale", |a| a.requires("positions").value_name("S").help(IDENTIFY_SCALE))
)]
pub struct IdentifyArgs {
    #[command(flatten)]
    pub input: FileArgs,

    #[command(flatten)]
    pub progress: crate::options::Progress,

    #[command(flatten)]
    pub placement: crate::options::PositionOptions,
}

/// A Python slice `start:stop[:step]` of an axis of `len` elements, as Python resolves it
/// (negative indices count from the end, bounds are clamped): the indices it keeps.
pub fn python_slice(id: &str, text: &str, len: usize) -> Result<Vec<usize>, CliError> {
    let bad = |why: &str| {
        CliError::usage(format!(
            "--{id} {} is not allowed: {why} (use Python slice syntax start:stop or start:stop:step, e.g. 1: or :-1)",
            crate::table_args::echo(text)
        ))
    };
    let parts: Vec<&str> = text.split(':').collect();
    if !(2..=3).contains(&parts.len()) {
        return Err(bad("it needs one or two colons"));
    }
    let number = |part: &str| -> Result<Option<i64>, CliError> {
        let part = part.trim();
        if part.is_empty() {
            Ok(None)
        } else {
            // As Python's slices, a bound past either end is the end: a whole number too long
            // for 64 bits saturates rather than being called no number.
            let digits = part.strip_prefix(['-', '+']).unwrap_or(part);
            if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                let negative = part.starts_with('-');
                Ok(Some(part.parse::<i64>().unwrap_or(if negative {
                    i64::MIN
                } else {
                    i64::MAX
                })))
            } else {
                Err(bad(&format!(
                    "{} is not a whole number",
                    crate::table_args::echo(part)
                )))
            }
        }
    };
    let (start, stop) = (number(parts[0])?, number(parts[1])?);
    let step = match parts.get(2) {
        Some(part) => number(part)?.unwrap_or(1),
        None => 1,
    };
    if step <= 0 {
        return Err(bad("the step must be 1 or more"));
    }
    let n = len as i64;
    let resolve = |index: i64| {
        if index < 0 {
            (index + n).max(0)
        } else {
            index.min(n)
        }
    };
    let (start, stop) = (start.map_or(0, resolve), stop.map_or(n, resolve));
    let kept: Vec<usize> = (start..stop)
        .step_by(step as usize)
        .map(|i| i as usize)
        .collect();
    if kept.is_empty() {
        return Err(bad(&format!("it keeps none of the {len} along that axis")));
    }
    Ok(kept)
}

impl FileArgs {
    fn tolerance(&self) -> Result<Tolerance, CliError> {
        tolerance_option(self.reading.atol(), self.reading.rtol())
    }

    /// The table, only the rows and columns of `--rows` and `--cols` read from the file, and
    /// the float type the file stores it in. `work` is what is done with it (`"checking"`),
    /// needing `bytes_per_value` of memory for each value kept: a table that would not fit is
    /// refused before its values are read.
    fn load(
        &self,
        handed: Option<Handed>,
        work: &str,
        bytes_per_value: u64,
        max_values: usize,
    ) -> Result<(ndarray::ArrayD<f64>, Option<crate::import::StoredFloat>), CliError> {
        let available = engine::available_memory_bytes();
        let max_bytes = available.unwrap_or(u64::MAX);
        let source = match handed {
            Some(handed) => {
                if self.reading.tensor.is_some() {
                    return Err(CliError::usage(
                        "--tensor applies to a .safetensors file; an array was handed over",
                    ));
                }
                Err(handed)
            }
            None => Ok(
                OpenedTable::open(&self.file, self.reading.tensor.as_deref(), max_bytes)
                    .map_err(|e| CliError::usage(e.to_string()))?,
            ),
        };
        let shape = match &source {
            Ok(opened) => opened.shape.clone(),
            Err(handed) => handed.values.shape().to_vec(),
        };
        let rows = match &self.rows {
            Some(_) if shape.len() < 2 => {
                return Err(CliError::usage(format!(
                    "--rows applies to a table of two or more axes; {} holds {:?} (use --cols)",
                    self.file.display(),
                    shape
                )));
            }
            Some(rows) => Some(python_slice("rows", rows, shape[0])?),
            None => None,
        };
        let cols = match (&self.cols, shape.last()) {
            (Some(_), None) => {
                return Err(CliError::usage(format!(
                    "--cols applies to a table of one or more axes; {} holds a single value",
                    self.file.display()
                )));
            }
            (Some(cols), Some(&last)) => Some(python_slice("cols", cols, last)?),
            (None, _) => None,
        };
        let selection = Selection {
            rows: rows.as_deref(),
            cols: cols.as_deref(),
        };
        let kept = selection.kept_shape(&shape);
        let values: u128 = kept.iter().map(|&n| n as u128).product();
        if values > max_values as u128 {
            return Err(CliError::usage(format!(
                "{}: {work} {values} values ({kept:?}) is more than poslab does (up to {max_values}): give part of the table (--rows, --cols)",
                self.file.display()
            )));
        }
        // A handed table is in memory already: what it needs beyond itself is the work's.
        let held = if source.is_err() { 8 } else { 0 };
        let needed = values * u128::from(bytes_per_value.saturating_sub(held));
        if let Some(available) = available
            && needed > u128::from(available)
        {
            let part = if kept == shape { "its" } else { "the chosen" };
            return Err(CliError::usage(format!(
                "{}: {work} {part} {values} values ({kept:?}) needs about {} of memory, more than the {} available: free memory, or give part of the table (--rows, --cols)",
                self.file.display(),
                engine::human_bytes(needed),
                engine::human_bytes(u128::from(available)),
            )));
        }
        match source {
            Ok(opened) => {
                let stored = opened.stored;
                let table = opened
                    .read(selection, max_bytes)
                    .map_err(|e| CliError::usage(e.to_string()))?;
                Ok((table, stored))
            }
            Err(handed) => {
                // As a file's values are read: a NaN is no table value.
                if let Some((index, _)) = handed.values.indexed_iter().find(|(_, v)| v.is_nan()) {
                    return Err(CliError::usage(format!(
                        "{}: holds NaN at index {:?}; values must be numbers (infinities are allowed, NaN is not)",
                        self.file.display(),
                        ndarray::Dimension::slice(&index)
                    )));
                }
                Ok((selection.of(handed.values), handed.stored))
            }
        }
    }
}

/// A table handed over in memory (the Python package's arrays) in place of FILE, which then
/// only names it: its values, and the float type it was held in, when one.
pub struct Handed {
    pub values: ndarray::ArrayD<f64>,
    pub stored: Option<crate::import::StoredFloat>,
}

/// What `poslab check` found: the verdict, and the text it prints.
pub struct CheckReport {
    pub verdict: crate::check::Verdict,
    /// The name of the kind checked against.
    pub kind: &'static str,
    pub text: String,
}

/// A spinner while `values` are worked on, from a million of them (below, the work is done
/// in about a second).
fn spinner(work: &str, values: usize, quiet: bool) -> super::progress::Working {
    super::progress::Working::new(format!("{work} {values} values"), quiet || values < 1 << 20)
}

/// Memory `poslab check` needs at most for each value of the file: the file's values and the
/// reference (8 bytes each), and, for a file that does not match as it is, a table of another
/// reading at a time (PyTorch's float32, a library's own frequencies) with its work. Measured:
/// a float32 16M-value RoPE cos table that matches peaks at 272 MB (16 bytes a value), one
/// checked against the wrong base at 665 MB (41 bytes a value, every reading tried).
const CHECK_BYTES_PER_VALUE: u64 = 40;

/// Memory `poslab identify` needs at least for each value of the file: its values and one
/// hypothesis's table (8 bytes each) and that table's comparison. The search itself holds
/// each family's tables to the memory left, and says when it could not try them all
/// (`Identification::cut_short`); a 16M-value table peaks at 0.9 to 1.3 GB.
const IDENTIFY_BYTES_PER_VALUE: u64 = 24;

/// Options of `poslab check`.
#[derive(Debug, Args)]
#[command(after_long_help = CHECK_NOTES)]
pub struct CheckArgs {
    #[command(flatten)]
    pub input: FileArgs,

    /// How many of the elements outside the tolerance to list, worst first (0 to 1000000)
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub show: i64,

    /// What the table should be: a kind of `poslab table` with its options (--as KIND)
    #[command(flatten)]
    pub table: TableArgs,
}

const CHECK_NOTES: &str = "\
The options after --as KIND are those of poslab table KIND (poslab table --help). The report
gives the largest absolute and relative errors and where they are; exit status 0 means every
element is within the tolerance, 1 a mismatch, 2 bad input. Where the exact table does not
match, the kinds PyTorch computes in float32 are compared with PyTorch's own float32
computation (--arith torch-f32, either --freq-form): within 2 ulp of it is a match too.
A mismatch lists the elements outside the tolerance, worst first (--show N of them: index,
reference, file, |error| and, for a typed file, the error in ulps of its type), how many rows
and columns hold any, and names the pattern when one is clear: whole columns (a layout slip,
columns swapped), every row shifted (the start), an error growing with position, one cell.

Examples:
  poslab check inv_freq.npy --as rope-inv-freq --dim 128 --base 500000
  poslab check model.safetensors --tensor alibi --as alibi --heads 8 --seq 512
  poslab check k_hf.npy --as permuted-from k_meta.npy --heads 32 --kv-heads 8
      (a weight permuted between the pair layouts: poslab check --as permuted-from --help)
  poslab identify pe.npy";

/// `poslab check`.
pub(crate) fn run_check(args: &CheckArgs, matches: &ArgMatches) -> Result<i32, CliError> {
    let report = check_table(args, matches, None)?;
    crate::table_args::output::print(&report.text)?;
    Ok(if report.verdict.matches { 0 } else { 1 })
}

/// `poslab check`'s work: the file (or the table `handed` over) against the kind's table.
pub fn check_table(
    args: &CheckArgs,
    matches: &ArgMatches,
    handed: Option<Handed>,
) -> Result<CheckReport, CliError> {
    for id in ["output", "dtype", "backend", "arith", "freq_form"] {
        if matches.value_source(id) == Some(ValueSource::CommandLine) {
            return Err(CliError::usage(format!(
                "{} does not apply to poslab check: the reference is computed exactly by the CPU engine",
                flag(id)
            )));
        }
    }
    check_options_apply(&args.table, matches)?;
    let tolerance = args.input.tolerance()?;
    let spec = table_spec(&args.table)?;
    spec.check_fits(engine::available_memory_bytes())
        .map_err(|e| CliError::usage(e.to_string()))?;
    let (loaded, stored) =
        args.input
            .load(handed, "checking", CHECK_BYTES_PER_VALUE, usize::MAX)?;
    let file_shape = loaded.shape().to_vec();
    let reference = cpu::compute(&spec).map_err(engine_error)?;
    let reference = finish_table(reference, &args.table, &spec)?.into_real();
    // An explicit tolerance is the user's own; without one, a file that says how it stores
    // its values is held to what that type can hold.
    let explicit = ["atol", "rtol"]
        .iter()
        .any(|id| matches.value_source(id) == Some(ValueSource::CommandLine));
    let show = usize::try_from(args.show)
        .ok()
        .filter(|n| *n <= 1_000_000)
        .ok_or_else(|| {
            CliError::usage(format!(
                "--show {} is not allowed: use 0 to 1000000 elements",
                args.show
            ))
        })?;
    // A grid of rows ([H, W, D]) is read as the table's [H*W, D], and said so; but not a grid
    // the file's own axes say is another (8 x 2 for a 2 x 8 table: the same rows, another
    // picture).
    if let Some(problem) = crate::check::grid_contradiction(&spec, loaded.shape()) {
        return Err(CliError::usage(format!(
            "{}: {problem}",
            args.input.file.display()
        )));
    }
    let (loaded, read_as) = crate::check::rows_as_reference(loaded, reference.shape());
    let working = spinner("checking", loaded.len(), args.table.progress.quiet);
    let verdict = crate::check::verdict::verdict_showing(
        &spec,
        &reference,
        &loaded,
        stored,
        explicit.then_some(tolerance),
        show,
    );
    let (verdict, preface) =
        match crate::table_args::zero_row_index(args.table.zero_row, false, reference.shape())? {
            Some(row) if !verdict.matches => padding_row_verdict(
                verdict,
                (&spec, &reference, &loaded, row),
                stored,
                explicit.then_some(tolerance),
                show,
            ),
            _ => (verdict, Vec::new()),
        };
    drop(working);
    let mut text = format!("{}: {}\n", args.input.file.display(), spec.kind_name());
    // The shape lines below are of the compared table, its axes of length 1 left out: the
    // file's own shape first where that differs ([4, 1, 16]; a 0-d array's []).
    let compared: Vec<usize> = file_shape.iter().copied().filter(|&n| n != 1).collect();
    if file_shape.is_empty() {
        text.push_str("file shape [] (a single value, compared as [1])\n");
    } else if compared != file_shape {
        text.push_str(&format!(
            "file shape {file_shape:?} (compared without its axes of length 1)\n"
        ));
    }
    for line in read_as.into_iter().chain(preface) {
        text.push_str(&line);
        text.push('\n');
    }
    text.push_str(&verdict.report());
    Ok(CheckReport {
        verdict,
        kind: spec.kind_name(),
        text,
    })
}

/// A table with a zero padding row (`--zero-row`: fairseq's and M2M100's `padding_idx`) that
/// did not pass: when the file's row is zero as asked, the rows before it and the rows after it
/// are judged apart as the tables of their own positions, the float32 readings too (which know
/// no padding row). Returns the verdict of the rows after it, and the lines to print before it
/// (the padding row, and the rows before it); when the file's row is not zero, or either part
/// differs, the first verdict stands.
fn padding_row_verdict(
    first: crate::check::Verdict,
    (spec, reference, loaded, row): (
        &engine::TableSpec,
        &ndarray::ArrayD<f64>,
        &ndarray::ArrayD<f64>,
        usize,
    ),
    stored: Option<crate::import::StoredFloat>,
    explicit: Option<crate::check::Tolerance>,
    show: usize,
) -> (crate::check::Verdict, Vec<String>) {
    let axis = ndarray::Axis(0);
    let rows = reference.shape()[0];
    let zero_in_file = loaded.ndim() == 2
        && loaded.shape() == reference.shape()
        && loaded.index_axis(axis, row).iter().all(|&v| v == 0.0);
    if !zero_in_file {
        return (first, Vec::new());
    }
    let mut parts = Vec::new();
    for range in [0..row, row + 1..rows] {
        if range.is_empty() {
            continue;
        }
        let Some(part_spec) = rows_of(spec, range.clone()) else {
            return (first, Vec::new());
        };
        let part = |table: &ndarray::ArrayD<f64>| {
            table
                .slice_axis(axis, ndarray::Slice::from(range.clone()))
                .to_owned()
        };
        let verdict = crate::check::verdict::verdict_showing(
            &part_spec,
            &part(reference),
            &part(loaded),
            stored,
            explicit,
            show,
        );
        if !verdict.matches {
            return (first, Vec::new());
        }
        parts.push((range, verdict));
    }
    let Some((last_range, last)) = parts.pop() else {
        return (first, Vec::new());
    };
    let rows_text = |range: &std::ops::Range<usize>| match range.len() {
        1 => format!("row {}", range.start),
        _ => format!("rows {} to {}", range.start, range.end - 1),
    };
    let mut preface = vec![format!(
        "row {row} is all zeros, as --zero-row {row} asks (a padding row); the rows on each side of it are judged as the tables of their own positions"
    )];
    for (range, verdict) in &parts {
        let said = verdict.summary();
        let last_line = said
            .lines()
            .rev()
            .find(|line| line.starts_with("verdict:"))
            .unwrap_or("verdict: MATCH");
        preface.push(format!("{}: {last_line}", rows_text(range)));
    }
    preface.push(format!("{}:", rows_text(&last_range)));
    (last, preface)
}

/// `spec`'s table of rows `range` only (a sinusoidal or RoPE table of positions), as a table of
/// its own: the same parameters, its first position moved.
fn rows_of(spec: &engine::TableSpec, range: std::ops::Range<usize>) -> Option<engine::TableSpec> {
    use engine::TableSpec;
    let moved = |start: u64| start.checked_add(range.start as u64);
    Some(match spec {
        TableSpec::Sinusoidal(p) => {
            TableSpec::Sinusoidal(crate::encoding::sinusoidal::SinusoidalParams {
                seq: range.len(),
                start: moved(p.start)?,
                ..*p
            })
        }
        TableSpec::RopeAngles { params, freqs } => TableSpec::RopeAngles {
            params: crate::encoding::rope::RopeParams {
                seq: range.len(),
                start: moved(params.start)?,
                ..*params
            },
            freqs: freqs.clone(),
        },
        TableSpec::RopeCache {
            params,
            freqs,
            layout,
            part,
        } if !part.is_pairs(*layout) => TableSpec::RopeCache {
            params: crate::encoding::rope::RopeParams {
                seq: range.len(),
                start: moved(params.start)?,
                ..*params
            },
            freqs: freqs.clone(),
            layout: *layout,
            part: *part,
        },
        // At positions of its own: the same table of those rows' positions.
        TableSpec::AtPositions(placed) => {
            let table = rows_of(&placed.table, 0..range.len())?;
            TableSpec::AtPositions(Box::new(engine::PositionedTable {
                table,
                positions: placed.positions.rows(range),
            }))
        }
        _ => return None,
    })
}

/// identify's `--position-scale`: one number or fraction, 1 without it.
fn identify_position_scale(text: Option<&str>) -> Result<f64, CliError> {
    let Some(text) = text else {
        return Ok(1.0);
    };
    match crate::table_args::position_scales(text)?[..] {
        [scale] => Ok(scale),
        _ => Err(CliError::usage(format!(
            "--position-scale {text:?} is not allowed: the file's positions have one axis, so give one number"
        ))),
    }
}

/// `poslab identify`.
pub(crate) fn run_identify(args: &IdentifyArgs, matches: &ArgMatches) -> Result<i32, CliError> {
    let identification = identify_table(args, matches, None)?;
    crate::table_args::output::print_line(&identification.report())?;
    Ok(if identification.found() { 0 } else { 1 })
}

/// `poslab identify`'s work: which table the file (or the table `handed` over) holds.
pub fn identify_table(
    args: &IdentifyArgs,
    matches: &ArgMatches,
    handed: Option<Handed>,
) -> Result<crate::check::identify::Identification, CliError> {
    let (quiet, ids, grid) = (
        args.progress.quiet,
        args.placement.ids.clone(),
        args.placement.grid.clone(),
    );
    // One position per row: checked before the file is read.
    let rows_at = match &args.placement.positions {
        Some(text) => {
            let positions = crate::encoding::positions::Positions {
                list: crate::encoding::positions::PositionList::Given(
                    crate::table_args::position_list(text)?,
                ),
                scale: identify_position_scale(args.placement.position_scale.as_deref())?,
                scale_at: crate::encoding::positions::ScaleAt::Position,
            };
            positions.validate()?;
            Some(positions)
        }
        None => None,
    };
    let args = &args.input;
    let tolerance = args.tolerance()?;
    let (loaded, stored) = args.load(
        handed,
        "identifying",
        IDENTIFY_BYTES_PER_VALUE,
        MAX_ELEMENTS,
    )?;
    // As check: without a tolerance of the user's, the file's type decides (a float32 file
    // may be PyTorch's float32 computation of a hypothesis; a bfloat16 one holds 3 digits).
    let explicit = ["atol", "rtol"]
        .iter()
        .any(|id| matches.value_source(id) == Some(ValueSource::CommandLine));
    let stored = stored.filter(|_| !explicit);
    let positions = match (&ids, &grid) {
        (Some(path), _) => Some(crate::table_args::positions_for_rows(
            path,
            loaded.shape().first().copied().unwrap_or(0),
        )?),
        (None, Some(grid)) => Some(crate::table_args::grid_positions(grid)?),
        (None, None) => None,
    };
    let rows = loaded.shape().first().copied().unwrap_or(0);
    if let Some(ids) = &positions
        && ids.nrows() != rows
    {
        return Err(CliError::usage(format!(
            "--grid gives {} tokens, and {} has {rows} rows: give the grid of the file's tokens",
            ids.nrows(),
            args.file.display()
        )));
    }
    // Positions count the rows of the table the file holds, leading axes of 1 (a batch of
    // one) left out.
    let rows_held = loaded
        .shape()
        .iter()
        .copied()
        .find(|&n| n != 1)
        .unwrap_or(1);
    if let Some(at) = &rows_at
        && at.len() != rows_held
    {
        return Err(CliError::usage(format!(
            "--positions gives {} positions, and {} has {rows_held} rows: give one position per row",
            at.len(),
            args.file.display()
        )));
    }
    let working = spinner("identifying", loaded.len(), quiet);
    let identification = match (positions, rows_at) {
        (Some(ids), _) => {
            crate::check::identify::identify_with_positions(loaded, &ids, tolerance, stored)
        }
        (None, Some(at)) => {
            crate::check::identify::identify_at_positions(loaded, &at, tolerance, stored)
        }
        (None, None) => identify_owned(loaded, tolerance, stored),
    };
    drop(working);
    // A search cut short by memory answers nothing: "no match" would be a wrong answer.
    if let Some(why) = identification.cut_short_text() {
        return Err(CliError::usage(format!("{}: {why}", args.file.display())));
    }
    Ok(identification)
}
