//! The commands called with keywords in place of words, returning what they found in place of
//! printing it: what the Python package calls. Each call is parsed as the command line would
//! be (`poslab.table("rope-cos", seq=4)` is `poslab table rope-cos --seq=4`), through the same
//! option groups, checks and engines, so a keyword means what its option means and is refused
//! in the same words.

use std::sync::atomic::{AtomicBool, Ordering};

use clap::{ArgMatches, FromArgMatches};

use super::check::{CheckReport, Handed};
use super::{BlockFinish, Cli, Command, StreamFailure, finished_block, progress};
use crate::check::identify::Identification;
use crate::engine::{self, EngineError, Table, TableSpec, ValueKind};
use crate::export::RealDtype;
use crate::table_args::{
    Backend, CliError, check_options_apply, config, engine_error, one_line, slope_scale,
    table_spec, zero_row_index,
};

pub use crate::options::keywords::Value;

/// A table as `poslab table` writes it, in memory: real values in the `--dtype` asked for, or
/// indices.
pub enum TableValues {
    F32(ndarray::ArrayD<f32>),
    F64(ndarray::ArrayD<f64>),
    Index(ndarray::ArrayD<i32>),
}

/// A table computed for a caller, and the notes the command line would print on stderr (a
/// GPU that could not serve, the CPU engine taking over).
pub struct ComputedTable {
    pub values: TableValues,
    pub notes: Vec<String>,
}

/// The command line's parse of `program subcommand leading... keywords...`: the command and
/// the subcommand's matches. A parse error is the command line's one line, without its
/// `error:`.
pub(super) fn parse(
    subcommand: &str,
    leading: &[&str],
    keywords: &[(String, Value)],
) -> Result<(Command, ArgMatches), CliError> {
    // A table returned, not written: no --output to ask for.
    let command = super::command()
        .mut_subcommand("table", |table| {
            table.mut_arg("output", |output| output.required(false))
        })
        .no_binary_name(true);
    let options = command
        .find_subcommand(subcommand)
        .ok_or_else(|| CliError::usage(format!("no command {subcommand}")))?;
    let mut words: Vec<String> = std::iter::once(subcommand)
        .chain(leading.iter().copied())
        .map(str::to_owned)
        .collect();
    words.extend(crate::options::keywords::words(options, keywords));
    let usage = |error: clap::Error| {
        let line = one_line(&error.render().to_string());
        CliError::usage(line.strip_prefix("error: ").unwrap_or(&line).to_owned())
    };
    let matches = command.try_get_matches_from(words).map_err(usage)?;
    let cli = Cli::from_arg_matches(&matches).map_err(usage)?;
    let sub = matches
        .subcommand_matches(subcommand)
        .cloned()
        .ok_or_else(|| CliError::usage(format!("no command {subcommand}")))?;
    let command = cli
        .command
        .ok_or_else(|| CliError::usage(format!("no command {subcommand}")))?;
    Ok((command, sub))
}

/// The words `keywords` are for `subcommand` (`rotary_dim=64` is `--rotary-dim=64`), to show
/// the command line that does what a call did.
pub fn words(subcommand: &str, keywords: &[(String, Value)]) -> Vec<String> {
    let command = super::command();
    match command.find_subcommand(subcommand) {
        Some(options) => crate::options::keywords::words(options, keywords),
        None => crate::options::keywords::words(&command, keywords),
    }
}

/// Refuses a keyword that names a file to write: these calls return what they compute.
fn refuse_output(matches: &ArgMatches, call: &str) -> Result<(), CliError> {
    if matches.value_source("output") == Some(clap::parser::ValueSource::CommandLine) {
        return Err(CliError::usage(format!(
            "output does not apply to {call}: it returns the array (save it with numpy.save)"
        )));
    }
    Ok(())
}

/// `poslab table KIND [keywords]`, computed into memory. `cancel`, when set, stops the work
/// between blocks (an error that says so).
pub fn table(
    kind: &str,
    keywords: &[(String, Value)],
    cancel: &AtomicBool,
) -> Result<ComputedTable, CliError> {
    let (command, matches) = parse("table", &[kind], keywords)?;
    let Command::Table(mut args) = command else {
        return Err(CliError::usage("not a table"));
    };
    config::apply_config(&mut args, &matches)?;
    refuse_output(&matches, "poslab.table")?;
    check_options_apply(&args, &matches)?;
    let spec = table_spec(&args)?;
    // The whole table is held, as f64 while it is computed.
    let shape = spec
        .check_fits(engine::available_memory_bytes())
        .map_err(|e| CliError::usage(e.to_string()))?;
    let index = spec.value_kind() == ValueKind::Index;
    let finish = BlockFinish {
        slope: slope_scale(&args, &spec)?,
        zero_row: zero_row_index(args.zero_row, index, &shape)?,
        dtype: args.dtype,
        quiet: true,
    };
    let mut notes = Vec::new();
    let arith = args.arithmetic()?;
    if args.backend == Backend::Gpu {
        if spec.cpu_only() {
            return Err(engine_error(spec.cpu_only_error().into()));
        }
        match engine::gpu::GpuEngine::new_headless() {
            Ok(gpu) => {
                let blocks = engine::blocks::gpu_blocks(
                    &gpu,
                    &spec,
                    arith,
                    engine::blocks::GPU_BLOCK_VALUES,
                )
                .map_err(engine_error)?;
                match gather(&spec, &shape, &finish, blocks, true, cancel) {
                    Ok(values) => return Ok(ComputedTable { values, notes }),
                    Err(StreamFailure::Gpu(reason)) => notes.push(format!(
                        "note: {reason}; computing on the CPU engine instead"
                    )),
                    Err(StreamFailure::Other(error)) => return Err(error),
                }
            }
            Err(reason) => notes.push(format!(
                "note: {reason}; computing on the CPU engine instead"
            )),
        }
    }
    progress::check_setup(&spec, args.consent.yes)?;
    let source = engine::blocks::CpuBlockSource::new(&spec, arith).map_err(engine_error)?;
    progress::refuse_beyond(
        &spec,
        progress::estimate_seconds(&spec, &source),
        args.consent.yes,
    )?;
    let blocks = source.blocks(engine::blocks::BLOCK_VALUES);
    // As `poslab table` writes them: the next block is computed while this one is converted
    // and kept.
    let gathered = std::thread::scope(|scope| {
        let (sender, receiver) = std::sync::mpsc::sync_channel(1);
        scope.spawn(move || {
            for (window, block) in blocks {
                // The gatherer stops receiving only when it failed or was cancelled.
                if cancel.load(Ordering::Relaxed) || sender.send((window, Ok(block))).is_err() {
                    break;
                }
            }
        });
        gather(&spec, &shape, &finish, receiver.into_iter(), false, cancel)
    });
    match gathered {
        Ok(values) => Ok(ComputedTable { values, notes }),
        Err(StreamFailure::Gpu(reason)) => Err(CliError::runtime(reason)),
        Err(StreamFailure::Other(error)) => Err(error),
    }
}

/// The blocks of a table, in C order, finished as a file's are and gathered into one array of
/// `shape` in the dtype asked for.
fn gather(
    spec: &TableSpec,
    shape: &[usize],
    finish: &BlockFinish,
    blocks: impl Iterator<Item = (engine::Window, Result<Table, EngineError>)>,
    on_gpu: bool,
    cancel: &AtomicBool,
) -> Result<TableValues, StreamFailure> {
    let values: usize = shape.iter().product();
    let (mut reals, mut indices) = (Vec::new(), Vec::new());
    let mut narrow: Vec<f32> = Vec::new();
    match (spec.value_kind(), finish.dtype) {
        (ValueKind::Index, _) => indices.reserve_exact(values),
        (ValueKind::Real, RealDtype::F32) => narrow.reserve_exact(values),
        (ValueKind::Real, RealDtype::F64) => reals.reserve_exact(values),
    }
    for (window, block) in blocks {
        if cancel.load(Ordering::Relaxed) {
            return Err(StreamFailure::Other(CliError::runtime("interrupted")));
        }
        match finished_block(&window, block, spec, finish, on_gpu)? {
            Table::Index(block) => indices.extend(block.iter()),
            Table::Real(block) if finish.dtype == RealDtype::F32 => {
                narrow.extend(block.iter().map(|&v| v as f32))
            }
            Table::Real(block) => reals.extend(block.iter()),
        }
    }
    let shaped = |error: ndarray::ShapeError| {
        StreamFailure::Other(CliError::runtime(format!(
            "the engine's blocks do not make a table of shape {shape:?}: {error}"
        )))
    };
    let shape = ndarray::IxDyn(shape);
    Ok(match (spec.value_kind(), finish.dtype) {
        (ValueKind::Index, _) => {
            TableValues::Index(ndarray::ArrayD::from_shape_vec(shape, indices).map_err(shaped)?)
        }
        (ValueKind::Real, RealDtype::F32) => {
            TableValues::F32(ndarray::ArrayD::from_shape_vec(shape, narrow).map_err(shaped)?)
        }
        (ValueKind::Real, RealDtype::F64) => {
            TableValues::F64(ndarray::ArrayD::from_shape_vec(shape, reals).map_err(shaped)?)
        }
    })
}

/// `poslab check FILE --as KIND [keywords]`: `file` names the file to read, or, with a table
/// `handed` over, only names that table in the report.
pub fn check(
    file: &str,
    handed: Option<Handed>,
    kind: &str,
    keywords: &[(String, Value)],
) -> Result<CheckReport, CliError> {
    let (command, matches) = parse("check", &[file, "--as", kind], keywords)?;
    let Command::Check(mut args) = command else {
        return Err(CliError::usage("not a check"));
    };
    config::apply_config(&mut args.table, &matches)?;
    super::check::check_table(&args, &matches, handed)
}

/// What `poslab identify` found, and the table it names as keywords where identify can say
/// them and `poslab check` confirms that they make the file's table.
pub struct Identified {
    pub identification: Identification,
    /// `(kind, options)` such that `poslab table kind options` gives the file's table.
    pub table: Option<(String, Vec<(String, Value)>)>,
}

/// `poslab identify FILE [keywords]`, as [`check`] reads `file` and `handed`.
pub fn identify(
    file: &str,
    handed: Option<Handed>,
    keywords: &[(String, Value)],
) -> Result<Identified, CliError> {
    let (command, matches) = parse("identify", &[file], keywords)?;
    let Command::Identify(args) = command else {
        return Err(CliError::usage("not an identify"));
    };
    // The words are checked against the file as `poslab check` would: kept only where they
    // give its table (they cannot say an amplitude no scaling gives, for one).
    let again = handed.as_ref().map(|h| Handed {
        values: h.values.clone(),
        stored: h.stored,
    });
    let identification = super::check::identify_table(&args, &matches, handed)?;
    let table = identification
        .best()
        .filter(|_| identification.found())
        .and_then(|best| best.table.clone())
        .and_then(|words| {
            // The options that are the call's own (the positions it was given) take the
            // call's values; without them the words say nothing.
            let options = words
                .options
                .iter()
                .map(|(id, text)| {
                    if text == crate::check::identify::FROM_THE_CALL {
                        // A token grid stands in for the ids it gives.
                        let accepted: &[&str] = if *id == "ids" {
                            &["ids", "grid"]
                        } else {
                            &[id]
                        };
                        keywords
                            .iter()
                            .find(|(key, _)| accepted.contains(&key.as_str()))
                            .map(|(key, value)| (key.clone(), value.clone()))
                    } else {
                        Some(((*id).to_owned(), typed_value(text)))
                    }
                })
                .collect::<Option<Vec<_>>>()?;
            Some((words.kind.to_owned(), options))
        })
        .filter(|(kind, options)| {
            // The tolerance the identification used, if the caller gave one.
            let tolerances: Vec<(String, Value)> = keywords
                .iter()
                .filter(|(key, _)| key == "atol" || key == "rtol")
                .cloned()
                .collect();
            let all: Vec<(String, Value)> = options.iter().cloned().chain(tolerances).collect();
            let handed = again.as_ref().map(|h| Handed {
                values: h.values.clone(),
                stored: h.stored,
            });
            check(file, handed, kind, &all).is_ok_and(|report| report.verdict.matches)
        });
    Ok(Identified {
        identification,
        table,
    })
}

/// A RoPE model's configuration (one layer type's, where it has several) as the Python
/// package returns it.
pub struct RopeConfig {
    /// The model's name (`_name_or_path`, or its type).
    pub model: String,
    /// The options of the RoPE kinds that reproduce it, as keywords.
    pub options: Vec<(String, Value)>,
    /// What its scaling multiplies cos and sin by.
    pub attention_factor: f64,
    /// Each setting (by keyword, and `attention_factor`, `context`) to the config field it was
    /// read from, or "default: ...".
    pub sources: Vec<(String, String)>,
    /// The config's warnings: fields ignored, conflicting or missing, each "field: message".
    pub warnings: Vec<String>,
    /// The layer type this RoPE is (`None` for a model with one RoPE).
    pub layer_type: Option<String>,
    /// The layer types it covers, as the config's `layer_types` names them (empty when the
    /// config names none).
    pub layer_types: Vec<String>,
    /// What `poslab config` prints.
    pub text: String,
}

/// `poslab config FILE` for a RoPE model: its options as keywords (`poslab.table(kind,
/// **options)` gives its tables), for the layer type named or the one RoPE it has. A config
/// without RoPE, one no table can be made from, or one with a RoPE per layer type and none
/// named is refused in the command line's words.
pub fn rope_config(
    path: &std::path::Path,
    layer_type: Option<&str>,
) -> Result<RopeConfig, CliError> {
    let whole = crate::table_args::config::read_config(path)?;
    let config = whole
        .layer(layer_type)
        .map_err(|e| CliError::usage(format!("{}: {e}", path.display())))?;
    one_rope_config(&whole, &config, path)
}

/// Every RoPE of a config, one per layer type (one for a model with one RoPE).
pub fn rope_configs(path: &std::path::Path) -> Result<Vec<RopeConfig>, CliError> {
    let whole = crate::table_args::config::read_config(path)?;
    if whole.rope_layers.is_empty() {
        return rope_config(path, None).map(|one| vec![one]);
    }
    whole
        .rope_layers
        .iter()
        .map(|layer| {
            let config = whole
                .layer(layer.layer_type.as_deref())
                .map_err(|e| CliError::usage(format!("{}: {e}", path.display())))?;
            one_rope_config(&whole, &config, path)
        })
        .collect()
}

/// One RoPE (`config`, chosen from `whole`) as Python's `RopeConfig`.
fn one_rope_config(
    whole: &crate::import::model_config::ModelConfig,
    config: &crate::import::model_config::ModelConfig,
    path: &std::path::Path,
) -> Result<RopeConfig, CliError> {
    if let Some(problem) = crate::table_args::config::config_problem(config) {
        return Err(CliError::usage(format!("{}: {problem}", path.display())));
    }
    let (options, attention_factor) =
        crate::table_args::config::rope_settings(config).ok_or_else(|| {
            CliError::usage(format!(
                "{}: {} does not use RoPE (poslab config {} says what it uses)",
                path.display(),
                config.name,
                path.display()
            ))
        })?;
    let options = options
        .into_iter()
        .map(|(id, text)| (id.to_owned(), typed_value(&text)))
        .collect();
    let layer = config.rope_layers.first();
    let layer_type = layer.and_then(|l| l.layer_type.clone());
    let typed = whole.rope_layers.iter().any(|l| l.layer_type.is_some());
    let layer_types = match (&layer_type, typed) {
        (Some(name), _) => vec![name.clone()],
        (None, true) => whole
            .rope_layers
            .iter()
            .filter_map(|l| l.layer_type.clone())
            .collect(),
        (None, false) => Vec::new(),
    };
    Ok(RopeConfig {
        text: crate::table_args::config::describe(whole, path),
        model: config.name.clone(),
        options,
        attention_factor,
        sources: layer
            .map(|l| {
                l.sources
                    .iter()
                    .map(|(id, source)| ((*id).to_owned(), source.clone()))
                    .collect()
            })
            .unwrap_or_default(),
        warnings: whole.lints.iter().map(|l| l.to_string()).collect(),
        layer_type,
        layer_types,
    })
}

/// An option's text as the value a keyword gives it: a whole number, a number, a switch, a
/// comma list of numbers, or text.
fn typed_value(text: &str) -> Value {
    if let Ok(whole) = text.parse::<i64>() {
        return Value::Int(whole);
    }
    if let Ok(number) = text.parse::<f64>() {
        return Value::Float(number);
    }
    match text {
        "true" => return Value::Bool(true),
        "false" => return Value::Bool(false),
        _ => {}
    }
    if text.contains(',') {
        let numbers: Option<Vec<Value>> = text
            .split(',')
            .map(|part| part.trim().parse::<f64>().ok().map(Value::Float))
            .collect();
        if let Some(numbers) = numbers {
            return Value::List(numbers);
        }
    }
    Value::Text(text.to_owned())
}
