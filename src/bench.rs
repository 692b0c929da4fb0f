//! `poslab bench`: how long an engine takes to compute a table, so that the same binary can be
//! measured on any machine. Speed is measured here and in `benches/`, never in tests.

use std::time::Duration;
use web_time::Instant;

use clap::{ArgMatches, Args};

use crate::encoding::torch_f32::Arithmetic;
use crate::engine::gpu::GpuEngine;
use crate::engine::{self, TableSpec, cpu};
use crate::table_args::output::{print, print_line};
use crate::table_args::{
    Backend, CliError, TableArgs, check_options_apply, engine_error, table_spec,
};

/// Options of `poslab bench`: the table's own options, and the sizes to time.
#[derive(Debug, Args)]
#[command(after_long_help = BENCH_NOTES)]
pub struct BenchArgs {
    #[command(flatten)]
    pub table: TableArgs,

    /// A size to time, as option=value pairs that override the table's options, e.g.
    /// seq=65536,dim=1024 (repeat --size for several; options: seq, dim, heads, grid-h,
    /// grid-w, start)
    #[arg(long, value_name = "OPTION=VALUE,...")]
    pub size: Vec<String>,

    /// Timed runs per size; the median is reported (1 to 1000)
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub repeats: i64,
}

const BENCH_NOTES: &str = "\
For each size, prints the median time of the computation itself (GPU timestamps where the
adapter has them, otherwise submission to completion) and the bytes of table written per
second. The CPU engine computes f64 (8 bytes a value), the GPU engine f32 (4 bytes). On the
GPU it also prints the ceiling, measured in the same run: a kernel that only stores, over the
same tiles (fill ms, and the share of the compute time it takes: 100% is the card's write
speed), and the median time with the table streamed back to main memory, tile by tile while
the next computes, with the rate of that readback (the bytes over the time it added).

Examples:
  poslab bench sinusoidal --size seq=4096,dim=1024 --size seq=65536,dim=4096 --backend gpu
  poslab bench alibi --heads 32 --size seq=4096 --backend cpu";

/// One size's measurements.
struct Measurement {
    size: String,
    shape: Vec<usize>,
    compute: Duration,
    bytes: u64,
    /// A store-only kernel over the same tiles (GPU only): the ceiling of `compute`.
    fill: Option<Duration>,
    with_readback: Duration,
}
/// Runs `poslab bench`.
pub fn run(args: &BenchArgs, matches: &ArgMatches) -> Result<(), CliError> {
    check_options_apply(&args.table, matches)?;
    if args.table.destination.output.is_some() {
        return Err(CliError::usage(
            "--output does not apply to poslab bench: it times the engines and writes no file",
        ));
    }
    let repeats = usize::try_from(args.repeats)
        .ok()
        .filter(|n| (1..=1000).contains(n))
        .ok_or_else(|| {
            CliError::usage(format!(
                "--repeats {} is not allowed: must be from 1 to 1000",
                args.repeats
            ))
        })?;
    let sizes: Vec<String> = if args.size.is_empty() {
        vec![String::new()]
    } else {
        args.size.clone()
    };
    // Every size is checked before any is timed.
    let specs = sizes
        .iter()
        .map(|size| {
            let spec = table_spec(&with_size(&args.table, size)?)?;
            spec.check_fits(engine::available_memory_bytes())
                .map_err(|e| CliError::usage(e.to_string()))?;
            Ok((size.clone(), spec))
        })
        .collect::<Result<Vec<_>, CliError>>()?;
    if args.table.backend == Backend::Gpu && specs[0].1.cpu_only() {
        return Err(crate::table_args::engine_error(
            specs[0].1.cpu_only_error().into(),
        ));
    }
    let gpu = match args.table.backend {
        Backend::Cpu => None,
        Backend::Gpu => {
            Some(GpuEngine::new_headless().map_err(|e| CliError::usage(e.to_string()))?)
        }
    };
    let engine_name = gpu.as_ref().map_or_else(
        || format!("cpu (f64, {} threads)", rayon::current_num_threads()),
        |g| format!("gpu: {}", g.adapter_description()),
    );
    print_line(&format!(
        "poslab bench {} on {engine_name}, median of {repeats}",
        specs[0].1.kind_name()
    ))?;
    let arith = args.table.arithmetic()?;
    let mut results = Vec::new();
    for (size, spec) in &specs {
        let measurement = match &gpu {
            None => measure_cpu(spec, arith, repeats)?,
            Some(gpu) => measure_gpu(gpu, spec, arith, repeats)?,
        };
        results.push(Measurement {
            size: if size.is_empty() {
                "(as given)".to_owned()
            } else {
                size.clone()
            },
            ..measurement
        });
    }
    if let Some(gpu) = &gpu {
        let timing = gpu.time_kernels(&specs[0].1, arith).map_err(engine_error)?;
        print_line(&format!(
            "compute time from {}",
            if timing.timestamped {
                "GPU timestamps"
            } else {
                "submission to completion (no timestamp queries)"
            }
        ))?;
    }
    print_table(&results)
}

/// The table's options with `size` (`seq=4096,dim=1024`) applied.
fn with_size(table: &TableArgs, size: &str) -> Result<TableArgs, CliError> {
    let mut args = table.clone();
    let mut seen: Vec<String> = Vec::new();
    for pair in size.split(',').filter(|p| !p.trim().is_empty()) {
        let (option, value) = pair.split_once('=').ok_or_else(|| {
            CliError::usage(format!(
                "--size {size}: expected option=value pairs such as seq=4096,dim=1024"
            ))
        })?;
        let value: i64 = value.trim().parse().map_err(|_| {
            CliError::usage(format!("--size {size}: {option}={value} is not an integer"))
        })?;
        let option = option.trim();
        if seen.iter().any(|o| o == option) {
            return Err(CliError::usage(format!(
                "--size {size}: {option} is given twice; give each option once per size"
            )));
        }
        seen.push(option.to_owned());
        // A size sets options of the kind's own: another would time a table it does not make.
        let id = option.replace('-', "_");
        if ["seq", "dim", "heads", "grid_h", "grid_w", "start"].contains(&id.as_str())
            && !crate::table_args::options_of(table.kind).contains(&id.as_str())
        {
            return Err(CliError::usage(format!(
                "--size {size}: {option} does not apply to {}; its size options are {}",
                crate::table_args::kind_name(table.kind),
                ["seq", "dim", "heads", "grid_h", "grid_w", "start"]
                    .iter()
                    .filter(|id| crate::table_args::options_of(table.kind).contains(id))
                    .map(|id| id.replace('_', "-"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        match option {
            "seq" => args.sizes.seq = Some(value),
            "dim" => args.sizes.dim = Some(value),
            "heads" => args.sizes.heads = Some(value),
            "grid-h" => args.sizes.grid_h = Some(value),
            "grid-w" => args.sizes.grid_w = Some(value),
            "start" => args.sinusoidal.start = Some(value),
            other => {
                return Err(CliError::usage(format!(
                    "--size {size}: {other} cannot be set by a size; use seq, dim, heads, grid-h, grid-w or start"
                )));
            }
        }
    }
    Ok(args)
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn element_count(spec: &TableSpec) -> u64 {
    spec.shape()
        .map_or(0, |s| s.iter().map(|&n| n as u64).product())
}

fn measure_cpu(
    spec: &TableSpec,
    arith: Arithmetic,
    repeats: usize,
) -> Result<Measurement, CliError> {
    let mut times = Vec::with_capacity(repeats);
    for _ in 0..repeats {
        let started = Instant::now();
        let table = cpu::compute_arith(spec, arith).map_err(engine_error)?;
        times.push(started.elapsed());
        drop(table);
    }
    let time = median(times);
    Ok(Measurement {
        size: String::new(),
        shape: spec.shape().unwrap_or_default(),
        compute: time,
        bytes: element_count(spec) * 8,
        fill: None,
        with_readback: time,
    })
}

fn measure_gpu(
    gpu: &GpuEngine,
    spec: &TableSpec,
    arith: Arithmetic,
    repeats: usize,
) -> Result<Measurement, CliError> {
    // One untimed run of each compiles the pipelines and warms the driver.
    gpu.time_kernels(spec, arith).map_err(engine_error)?;
    gpu.time_fill(spec, arith).map_err(engine_error)?;
    // The kernel and the fill alternate, so that both see the same state of the machine.
    let (mut kernel, mut fill) = (Vec::with_capacity(repeats), Vec::with_capacity(repeats));
    for _ in 0..repeats {
        kernel.push(
            gpu.time_kernels(spec, arith)
                .map_err(engine_error)?
                .duration,
        );
        fill.push(gpu.time_fill(spec, arith).map_err(engine_error)?.duration);
    }
    // Read back into main memory that is already the process's (as a caller that reuses its
    // buffer has it), so that what is timed is the device's work and the copies.
    let bytes = element_count(spec) * 4;
    let bytes_here = usize::try_from(bytes).map_err(|_| {
        CliError::usage(format!(
            "a table of {bytes} bytes is beyond this machine's address space"
        ))
    })?;
    let mut host = vec![0u8; bytes_here];
    let source = gpu.block_source(spec, arith).map_err(engine_error)?;
    let mut total = Vec::with_capacity(repeats);
    for _ in 0..repeats {
        let started = Instant::now();
        let mut at = 0;
        source
            .stream(&mut |tile| {
                host[at..at + tile.len()].copy_from_slice(tile);
                at += tile.len();
                Ok(())
            })
            .map_err(engine_error)?;
        total.push(started.elapsed());
    }
    Ok(Measurement {
        size: String::new(),
        shape: spec.shape().unwrap_or_default(),
        compute: median(kernel),
        bytes,
        fill: Some(median(fill)),
        with_readback: median(total),
    })
}

fn print_table(results: &[Measurement]) -> Result<(), CliError> {
    let size_width = results
        .iter()
        .map(|m| m.size.len())
        .max()
        .unwrap_or(4)
        .max(4);
    let shape_width = results
        .iter()
        .map(|m| format!("{:?}", m.shape).len())
        .max()
        .unwrap_or(5)
        .max(5);
    let gpu = results.iter().any(|m| m.fill.is_some());
    let rate = |bytes: u64, time: Duration| {
        let seconds = time.as_secs_f64();
        if seconds > 0.0 {
            bytes as f64 / seconds / 1e9
        } else {
            f64::INFINITY
        }
    };
    let mut text = String::new();
    if gpu {
        text += &format!(
            "{:<size_width$}  {:<shape_width$}  {:>12}  {:>12}  {:>9}  {:>10}  {:>17}  {:>15}\n",
            "size",
            "shape",
            "compute ms",
            "GB/s written",
            "fill ms",
            "of ceiling",
            "with readback ms",
            "readback GB/s"
        );
    } else {
        text += &format!(
            "{:<size_width$}  {:<shape_width$}  {:>12}  {:>12}\n",
            "size", "shape", "compute ms", "GB/s written"
        );
    }
    for m in results {
        let line = format!(
            "{:<size_width$}  {:<shape_width$}  {:>12.3}  {:>12.2}",
            m.size,
            format!("{:?}", m.shape),
            m.compute.as_secs_f64() * 1e3,
            rate(m.bytes, m.compute),
        );
        match m.fill {
            Some(fill) => {
                // The readback's own rate: the bytes over what it added to the compute.
                let added = m.with_readback.saturating_sub(m.compute);
                text += &format!(
                    "{line}  {:>9.3}  {:>9.0}%  {:>17.3}  {:>15.2}\n",
                    fill.as_secs_f64() * 1e3,
                    100.0 * fill.as_secs_f64() / m.compute.as_secs_f64().max(1e-12),
                    m.with_readback.as_secs_f64() * 1e3,
                    rate(m.bytes, added),
                );
            }
            None => text += &format!("{line}\n"),
        }
    }
    print(&text)
}
