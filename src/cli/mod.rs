//! The command line: `poslab table KIND [options] -o FILE` writes any table of the contract
//! (its options and their checks live in [`crate::table_args`]); `poslab figure VIEW [options]
//! -o FILE` (in [`figure`]) a view's figure; `check` and `identify` (in [`check`]) compare a
//! file with poslab's tables; `poslab bench` (in [`crate::bench`]) times the engines. Without a
//! command, `main` opens the app.
//!
//! Every failure a user can cause ends here as one line on stderr and exit status 2, before
//! any output file exists.

use std::ffi::OsString;
use std::path::Path;
use web_time::Instant;

use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

use crate::engine::{self, EngineError, Table, TableSpec, ValueKind};
use crate::export::{self, AtomicFile, OutputFormat, RealDtype};

use crate::bench::BenchArgs;
use crate::table_args::{
    Backend, CliError, Kind, TableArgs, check_options_apply, config, engine_error, one_line,
    output, slope_scale, table_spec, zero_row_index,
};

pub mod app;
pub mod check;
pub mod figure;
pub mod keywords;
pub mod permuted;
mod progress;
pub mod rotation;

/// Exact tables of transformer positional encodings.
#[derive(Debug, Parser)]
#[command(
    name = "poslab",
    version,
    about = "Look inside transformer positional encodings: exact tables of sinusoidal, RoPE, \
             ALiBi, T5 and 2D vision encodings",
    long_about = None,
    allow_negative_numbers = true,
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write one table (an encoding, its angles, biases or indices) to a .npy or .csv file
    Table(TableArgs),
    /// Draw a view's figure to .svg or .png, with no window (the app's export, scripted)
    Figure(Box<figure::FigureArgs>),
    /// Compare a table computed elsewhere (.npy, .csv, .safetensors) with poslab's
    Check(check::CheckArgs),
    /// Say which table a file holds: kind, convention and parameters
    Identify(check::IdentifyArgs),
    /// Read a model's Hugging Face config.json: its positional encoding, and the tables that
    /// reproduce it
    Config(config::ConfigArgs),
    /// Time an engine computing a table at one or more sizes
    Bench(BenchArgs),
    /// Open the app on a view with these settings (no command opens it as last left)
    App(app::AppArgs),
}

/// What a command line asks for.
pub enum Outcome {
    /// A command ran (or was refused): its exit status.
    Exit(i32),
    /// No command, or `poslab app`: the desktop app, with what the command line set (which
    /// `main` opens; the command line never does).
    OpenApp(app::AppLaunch),
}

/// Runs the command `args` names (the program name first); returns its exit status. Without a
/// command this is a usage error: only `main` opens the app (see [`dispatch`]).
pub fn run(args: impl IntoIterator<Item = impl Into<OsString> + Clone>) -> i32 {
    match dispatch(args) {
        Outcome::Exit(status) => status,
        Outcome::OpenApp(_) => finish(Err(CliError::usage(
            "no command given: poslab --help lists them",
        ))),
    }
}

/// Parses `args` (the program name first) and runs the command they name, or says that they
/// name none.
pub fn dispatch(args: impl IntoIterator<Item = impl Into<OsString> + Clone>) -> Outcome {
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    // A weight checked against another is not a table kind: its own options.
    if permuted::asks_for_it(&args) {
        return Outcome::Exit(permuted::run(args));
    }
    let matches = match command().try_get_matches_from(args) {
        Ok(matches) => matches,
        Err(error) => return Outcome::Exit(report_clap_error(&error)),
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(error) => return Outcome::Exit(report_clap_error(&error)),
    };
    match cli.command {
        None => Outcome::OpenApp(app::AppLaunch::default()),
        Some(Command::App(args)) => match app::launch(&args) {
            Ok(launch) => Outcome::OpenApp(launch),
            Err(error) => Outcome::Exit(finish(Err(error))),
        },
        Some(command) => Outcome::Exit(run_command(command, &matches)),
    }
}

/// Runs one parsed command; returns its exit status.
fn run_command(command: Command, matches: &ArgMatches) -> i32 {
    let result = match command {
        Command::Table(mut args) => {
            let table_matches = matches
                .subcommand_matches("table")
                .expect("clap returned the table subcommand without its matches");
            config::apply_config(&mut args, table_matches)
                .and_then(|()| write_table(&args, table_matches))
        }
        Command::Check(mut args) => {
            let check_matches = matches
                .subcommand_matches("check")
                .expect("clap returned the check subcommand without its matches");
            if let Err(error) = config::apply_config(&mut args.table, check_matches) {
                return finish(Err(error));
            }
            return finish(check::run_check(&args, check_matches));
        }
        Command::Config(args) => return finish(config::run_config(&args)),
        Command::Identify(args) => {
            let identify_matches = matches
                .subcommand_matches("identify")
                .expect("clap returned the identify subcommand without its matches");
            return finish(check::run_identify(&args, identify_matches));
        }
        Command::Figure(args) => {
            let figure_matches = matches
                .subcommand_matches("figure")
                .expect("clap returned the figure subcommand without its matches");
            figure::write_figure(&args, figure_matches)
        }
        Command::App(_) => unreachable!("dispatch opens the app itself"),
        Command::Bench(mut args) => {
            let bench_matches = matches
                .subcommand_matches("bench")
                .expect("clap returned the bench subcommand without its matches");
            // A model's config fills in what it decides, as for poslab table.
            if let Err(error) = config::apply_config(&mut args.table, bench_matches) {
                return finish(Err(error));
            }
            crate::bench::run(&args, bench_matches)
        }
    };
    finish(result.map(|()| 0))
}

/// The exit status of a command's outcome, reporting an error on stderr.
fn finish(result: Result<i32, CliError>) -> i32 {
    match result {
        Ok(status) => status,
        Err(error) => {
            // One line, whatever a file or a name put in it: control characters (a newline
            // in a tensor's name, a terminal escape) are written as escapes.
            output::note(&format!(
                "error: {}",
                crate::import::printable(&error.message)
            ));
            error.exit_code
        }
    }
}

/// The command line, with the list of table kinds under the top-level help.
fn command() -> clap::Command {
    let kinds: Vec<String> = Kind::value_variants()
        .iter()
        .filter_map(|kind| kind.to_possible_value())
        .map(|value| {
            let help = value.get_help().map(|h| h.to_string()).unwrap_or_default();
            format!("  {:<15} {help}", value.get_name())
        })
        .collect();
    Cli::command()
        .mut_subcommand("bench", |bench| {
            bench.mut_arg("output", |output| output.required(false).hide(true))
        })
        .mut_subcommand("check", |check| {
            check
                .mut_arg("output", |output| output.required(false).hide(true))
                .mut_arg("kind", |kind| {
                    kind.long("as")
                        .help("What the table should be: a kind of poslab table")
                })
        })
        .after_help(format!(
            "Table kinds (poslab table --help for every option, its default and range):\n{}",
            kinds.join("\n")
        ))
}

/// Prints help and version as clap does, and any other clap error as a single line.
fn report_clap_error(error: &clap::Error) -> i32 {
    use clap::error::ErrorKind;
    match error.kind() {
        // The help itself is the result: one that could not be written is a failure.
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            match output::print(&error.render().to_string()) {
                Ok(()) => 0,
                Err(failure) => finish(Err(failure)),
            }
        }
        _ => {
            output::note(&crate::import::printable(&one_line(
                &error.render().to_string(),
            )));
            2
        }
    }
}

/// What is done to each block of a table before it is written.
struct BlockFinish {
    /// ALiBi's slope scaling (`--slope-scaling`).
    slope: Option<f64>,
    /// The row `--zero-row` zeroes.
    zero_row: Option<usize>,
    dtype: RealDtype,
    /// No progress bar (`--quiet`).
    quiet: bool,
}

/// Why a streamed write stopped: the GPU engine failed (the CPU engine can take over), or
/// anything else.
enum StreamFailure {
    Gpu(String),
    Other(CliError),
}

impl From<CliError> for StreamFailure {
    fn from(error: CliError) -> Self {
        StreamFailure::Other(error)
    }
}

/// Computes `spec` block by block on the chosen engine and writes each block as it comes, so
/// that memory holds one block however large the table; a GPU that cannot serve hands over to
/// the CPU engine with a one-line note. Returns a description of the engine that ran.
fn stream_table(
    args: &TableArgs,
    spec: &TableSpec,
    shape: &[usize],
    format: OutputFormat,
    finish: &BlockFinish,
    output: &Path,
) -> Result<String, CliError> {
    let arith = args.arithmetic()?;
    if args.backend == Backend::Gpu && spec.cpu_only() {
        return Err(engine_error(spec.cpu_only_error().into()));
    }
    // A .csv line is a whole row: its blocks are never part of one.
    let [_, _, cols] = spec.matrix_shape();
    let whole_rows = |values: usize| match format {
        OutputFormat::Csv if shape.len() == 2 => values.max(cols),
        _ => values,
    };
    if args.backend == Backend::Gpu {
        match engine::gpu::GpuEngine::new_headless() {
            Ok(gpu) => {
                // The GPU similarity kernel computes its window's offsets first: a block per
                // table, not per few rows.
                let block_values = if matches!(spec, TableSpec::Similarity(_)) {
                    spec.check_fits(engine::available_memory_bytes())
                        .map_err(|e| CliError::usage(e.to_string()))?;
                    usize::MAX
                } else {
                    whole_rows(engine::blocks::GPU_BLOCK_VALUES)
                };
                // A .npy takes the device's bytes as they come, unless something changes them
                // on the way (ALiBi's slope scaling, a zeroed row).
                let streamed = format == OutputFormat::Npy
                    && finish.slope.is_none()
                    && finish.zero_row.is_none();
                let written = if streamed {
                    let source = gpu.block_source(spec, arith).map_err(engine_error)?;
                    write_gpu_npy(spec, shape, finish, output, &source)
                } else {
                    let blocks = engine::blocks::gpu_blocks(&gpu, spec, arith, block_values)
                        .map_err(engine_error)?;
                    write_blocks(spec, shape, format, finish, output, blocks, true)
                };
                match written {
                    Ok(()) => {
                        return Ok(format!(
                            "gpu: {}, at most {block_values} values a block",
                            gpu.adapter_description()
                        ));
                    }
                    Err(StreamFailure::Gpu(reason)) => {
                        output::note(&format!(
                            "note: {reason}; computing on the CPU engine instead"
                        ));
                    }
                    Err(StreamFailure::Other(error)) => return Err(error),
                }
            }
            Err(reason) => output::note(&format!(
                "note: {reason}; computing on the CPU engine instead"
            )),
        }
    }
    let block_values = whole_rows(engine::blocks::BLOCK_VALUES);
    // Set up once (the part no sample can time is bounded first), then a few rows timed:
    // work estimated beyond ten minutes is refused unless --yes, before anything is written.
    progress::check_setup(spec, args.consent.yes)?;
    let source = engine::blocks::CpuBlockSource::new(spec, arith).map_err(engine_error)?;
    progress::refuse_beyond(
        spec,
        progress::estimate_seconds(spec, &source),
        args.consent.yes,
    )?;
    let blocks = source.blocks(block_values);
    // The next block is computed while this one is converted and written: the two take about
    // as long as each other.
    let written = std::thread::scope(|scope| {
        let (sender, receiver) = std::sync::mpsc::sync_channel(1);
        scope.spawn(move || {
            for (window, block) in blocks {
                // The writer stops receiving only when it failed and has returned.
                if sender.send((window, Ok(block))).is_err() {
                    break;
                }
            }
        });
        write_blocks(
            spec,
            shape,
            format,
            finish,
            output,
            receiver.into_iter(),
            false,
        )
    });
    match written {
        Ok(()) => Ok(format!(
            "cpu (f64 reference, {} threads), at most {block_values} values a block",
            rayon::current_num_threads()
        )),
        // The CPU engine's blocks carry no GPU failure.
        Err(StreamFailure::Gpu(reason)) => Err(CliError::runtime(reason)),
        Err(StreamFailure::Other(error)) => Err(error),
    }
}

/// Writes the blocks of a table, in C order, to a temporary file renamed to `output` once
/// every block is in.
fn write_blocks(
    spec: &TableSpec,
    shape: &[usize],
    format: OutputFormat,
    finish: &BlockFinish,
    output: &Path,
    blocks: impl Iterator<Item = (engine::Window, Result<Table, EngineError>)>,
    on_gpu: bool,
) -> Result<(), StreamFailure> {
    let values = shape.iter().map(|&n| n as u64).product::<u64>();
    let progress = progress::Progress::new(values, finish.quiet);
    let failed = |e: &dyn std::fmt::Display| write_failed(output, e);
    let mut file = create_table_file(spec, shape, format, finish.dtype, output)?;
    for (window, block) in blocks {
        let block = finished_block(&window, block, spec, finish, on_gpu)?;
        export::write_block(file.writer(), &block, format, finish.dtype).map_err(|e| failed(&e))?;
        progress.advance(block.len() as u64);
    }
    file.commit().map_err(|e| failed(&export::io_text(&e)))?;
    Ok(())
}

/// A block as it is kept: the engine's failure sorted (the GPU's, which the CPU engine can take
/// over, or another), ALiBi's slope scaling and the padding row applied, its range checked.
fn finished_block(
    window: &engine::Window,
    block: Result<Table, EngineError>,
    spec: &TableSpec,
    finish: &BlockFinish,
    on_gpu: bool,
) -> Result<Table, StreamFailure> {
    let mut block = match block {
        Ok(block) => block,
        Err(EngineError::Gpu(reason)) => return Err(StreamFailure::Gpu(reason.to_string())),
        Err(other) => return Err(engine_error(other).into()),
    };
    if let Table::Real(values) = &mut block {
        if let Some(factor) = finish.slope {
            values.mapv_inplace(|v| v * factor);
        }
        if let Some(row) = finish.zero_row
            && (window.rows.start..window.rows.end).contains(&row)
        {
            values
                .index_axis_mut(ndarray::Axis(0), row - window.rows.start)
                .fill(0.0);
        }
    }
    check_range(&block, spec, finish.dtype, on_gpu)?;
    Ok(block)
}

/// Writing `output` failed, for `why`.
fn write_failed(output: &Path, why: &dyn std::fmt::Display) -> CliError {
    CliError::runtime(format!("writing {} failed: {why}", output.display()))
}

/// The temporary file a table of `shape` is written to (renamed to `output` on commit), its
/// room reserved and, for a `.npy`, its header written.
fn create_table_file(
    spec: &TableSpec,
    shape: &[usize],
    format: OutputFormat,
    dtype: RealDtype,
    output: &Path,
) -> Result<AtomicFile, CliError> {
    let mut file = AtomicFile::create(output).map_err(|e| {
        CliError::runtime(format!(
            "writing {} failed: cannot create a file there ({})",
            output.display(),
            io_problem(&e)
        ))
    })?;
    if format == OutputFormat::Npy {
        let index = spec.value_kind() == ValueKind::Index;
        let header = export::npy_header(shape, index, dtype);
        let value_bytes = if index { 4 } else { dtype.bytes() };
        let values = shape.iter().map(|&n| n as u64).product::<u64>();
        file.reserve((header.len() as u64).saturating_add(values.saturating_mul(value_bytes)));
        std::io::Write::write_all(file.writer(), &header)
            .map_err(|e| write_failed(output, &export::io_text(&e)))?;
    }
    Ok(file)
}

/// Writes a GPU table to a `.npy` tile by tile as the device hands its tiles over: its f32
/// (or i32) bytes as they are, or widened to f64 for `--dtype f64`, into a temporary file
/// renamed to `output` once every value is in.
fn write_gpu_npy(
    spec: &TableSpec,
    shape: &[usize],
    finish: &BlockFinish,
    output: &Path,
    source: &engine::gpu::GpuBlocks<'_>,
) -> Result<(), StreamFailure> {
    let values = shape.iter().map(|&n| n as u64).product::<u64>();
    let progress = progress::Progress::new(values, finish.quiet);
    let failed = |e: &dyn std::fmt::Display| write_failed(output, e);
    let mut file = create_table_file(spec, shape, OutputFormat::Npy, finish.dtype, output)?;
    let index = spec.value_kind() == ValueKind::Index;
    // Why the consumer stopped, where it was not the engine.
    let mut stopped: Option<CliError> = None;
    let mut widened: Vec<u8> = Vec::new();
    let streamed = source.stream(&mut |bytes| {
        let mut write = |bytes: &[u8]| {
            std::io::Write::write_all(file.writer(), bytes)
                .map_err(|e| failed(&export::io_text(&e)))
        };
        let result = if index {
            write(bytes)
        } else {
            let floats: &[f32] = bytemuck::cast_slice(bytes);
            check_range_f32(floats, spec).and_then(|()| match finish.dtype {
                RealDtype::F32 => write(bytes),
                RealDtype::F64 => {
                    widened.clear();
                    widened.extend(floats.iter().flat_map(|&v| f64::from(v).to_le_bytes()));
                    write(&widened)
                }
            })
        };
        progress.advance((bytes.len() / 4) as u64);
        result.map_err(|error| {
            stopped = Some(error);
            EngineError::Gpu(engine::gpu::GpuError::Readback(
                "the file stopped".to_owned(),
            ))
        })
    });
    if let Some(error) = stopped {
        return Err(StreamFailure::Other(error));
    }
    match streamed {
        Ok(()) => {}
        Err(EngineError::Gpu(reason)) => return Err(StreamFailure::Gpu(reason.to_string())),
        Err(other) => return Err(engine_error(other).into()),
    }
    file.commit().map_err(|e| failed(&export::io_text(&e)))?;
    Ok(())
}

/// [`check_range`] for float32 values as the GPU engine computed them: an infinity where the
/// kind has none means its inputs overflowed float32.
fn check_range_f32(values: &[f32], spec: &TableSpec) -> Result<(), CliError> {
    if values
        .iter()
        .fold(true, |finite, v| finite & !v.is_infinite())
    {
        return Ok(());
    }
    let masks = matches!(
        spec,
        TableSpec::Alibi { .. } | TableSpec::AlibiWindow { .. }
    );
    if masks {
        return Ok(());
    }
    Err(overflowed(spec, true))
}

/// A table whose values overflowed to infinity, and what to do about it.
fn overflowed(spec: &TableSpec, on_gpu: bool) -> CliError {
    let why = if on_gpu {
        "the GPU engine computes in float32: try --backend cpu"
    } else {
        "even in f64: give smaller inputs"
    };
    CliError::usage(format!(
        "the {} table overflowed to infinity: its inputs are too large ({why})",
        spec.kind_name()
    ))
}

fn io_problem(error: &std::io::Error) -> String {
    match error.kind() {
        std::io::ErrorKind::NotFound => "the folder does not exist".to_owned(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => export::io_text(error),
    }
}

/// Refuses a table whose values overflowed (an infinity where the kind has none: only causal
/// ALiBi masks cells with -inf), or that `<f4` would store as infinities (beyond ±3.4e38):
/// its inputs are too large for the arithmetic or the file type.
fn check_range(
    table: &Table,
    spec: &TableSpec,
    dtype: RealDtype,
    on_gpu: bool,
) -> Result<(), CliError> {
    let Table::Real(values) = table else {
        return Ok(());
    };
    // One branch-free pass first: almost every table is far inside float32's range.
    let limit = f64::from(f32::MAX);
    if values
        .iter()
        .fold(true, |inside, v| inside & (v.abs() <= limit))
    {
        return Ok(());
    }
    let masks = matches!(
        spec,
        TableSpec::Alibi { .. } | TableSpec::AlibiWindow { .. }
    );
    if !masks && values.iter().any(|v| v.is_infinite()) {
        return Err(overflowed(spec, on_gpu));
    }
    if dtype == RealDtype::F32
        && let Some(v) = values
            .iter()
            .find(|v| v.is_finite() && v.abs() > f64::from(f32::MAX))
    {
        return Err(CliError::usage(format!(
            "the {} table holds {v:e}, beyond float32's range (±3.4e38): write it with --dtype f64, or give smaller inputs",
            spec.kind_name()
        )));
    }
    Ok(())
}

/// Refuses, with exit 2, an output that could not be written, before any work.
pub(crate) fn check_output(output: &std::path::Path) -> Result<(), CliError> {
    // "x.npy/" names a folder that is not there: said before the work, not after it.
    let text = output.as_os_str().to_string_lossy();
    if text.ends_with(std::path::MAIN_SEPARATOR) || text.ends_with('/') {
        return Err(CliError::usage(format!(
            "--output {}: ends in a separator, so it names a folder; give a file name",
            output.display()
        )));
    }
    crate::export::check_writable(output).map_err(|e| {
        CliError::usage(format!(
            "--output {}: cannot create a file there ({})",
            output.display(),
            io_problem(&e)
        ))
    })
}

/// `poslab table`: checks everything, computes, writes atomically.
fn write_table(args: &TableArgs, matches: &ArgMatches) -> Result<(), CliError> {
    check_options_apply(args, matches)?;
    let output = args
        .destination
        .output
        .as_deref()
        .ok_or_else(|| CliError::usage("--output is required: a .npy or .csv file name"))?;
    let format = OutputFormat::from_path(output).ok_or_else(|| {
        CliError::usage(format!(
            "--output {}: the file name must end in .npy or .csv",
            output.display()
        ))
    })?;
    if output.is_dir() {
        return Err(CliError::usage(format!(
            "--output {} is a folder; give a file name ending in .npy or .csv",
            output.display()
        )));
    }
    let spec = table_spec(args)?;
    // Written block by block: memory holds the blocks in flight (one computed while one is
    // written; the GPU's are larger), not the table, whose size the disk check below bounds.
    // (The GPU similarity kernel, which needs its whole table, checks that itself.)
    let in_flight = 2 * engine::blocks::BLOCK_VALUES.max(engine::blocks::GPU_BLOCK_VALUES);
    let shape = spec
        .check_streams(engine::available_memory_bytes(), in_flight)
        .map_err(|e| CliError::usage(e.to_string()))?;
    if !format.holds_ndim(shape.len()) {
        let heads = shape[0];
        return Err(CliError::usage(format!(
            "--output {}: {} has shape {shape:?} and a .csv holds 1-D or 2-D tables; \
             pick one head with --head H (0 to {}) or write .npy",
            output.display(),
            spec.kind_name(),
            heads - 1
        )));
    }
    // Before the work: a folder that takes no file, a name too long, a file system without
    // room for the table. The file itself is created when the first block is ready, so an
    // interrupted computation leaves nothing.
    check_output(output)?;
    let index = spec.value_kind() == ValueKind::Index;
    let value_bytes = if index { 4 } else { args.dtype.bytes() };
    let values = shape.iter().map(|&n| n as u64).product::<u64>();
    if let Some(free) = crate::export::free_bytes(output)
        && let Some(problem) =
            crate::export::space_problem(format.least_bytes(values, value_bytes), free)
    {
        return Err(CliError::usage(format!(
            "--output {}: the table does not fit: {problem}; reduce {}, free some space or write it elsewhere",
            output.display(),
            spec.size_options()
        )));
    }
    let finish = BlockFinish {
        slope: slope_scale(args, &spec)?,
        zero_row: zero_row_index(args.zero_row, index, &shape)?,
        dtype: args.dtype,
        quiet: args.progress.quiet,
    };
    let started = Instant::now();
    let engine_used = stream_table(args, &spec, &shape, format, &finish, output)?;
    if args.verbose {
        let dtype = match (spec.value_kind(), args.dtype) {
            (ValueKind::Index, _) => "<i4",
            (ValueKind::Real, RealDtype::F32) => "<f4",
            (ValueKind::Real, RealDtype::F64) => "<f8",
        };
        output::note(&format!("engine: {engine_used}"));
        output::note(&format!(
            "table: {} {shape:?} computed and written as {dtype} to {} in {:.3} ms",
            spec.kind_name(),
            output.display(),
            started.elapsed().as_secs_f64() * 1e3,
        ));
    }
    Ok(())
}
