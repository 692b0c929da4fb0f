//! `poslab config FILE.json`, and `--config FILE.json` for `table` and `check`: a model's
//! Hugging Face config turned into the options of the tables that reproduce its encoding.

use crate::encoding::PairLayout;
use std::path::{Path, PathBuf};

use clap::parser::ValueSource;
use clap::{ArgMatches, Args};

use super::{CliError, Kind, TableArgs, flag, kind_name, options_of};
use crate::encoding::rope_scaling::{RopeScaling, ScalingKind};
use crate::import::model_config::gguf::{RopeTensors, from_gguf};
use crate::import::model_config::{AlibiForm, ModelConfig, PositionEncoding, RopeLayer};

/// Options of `poslab config`.
#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// A Hugging Face config.json (or one of poslab's assets/models files)
    #[arg(value_name = "FILE.json")]
    pub file: PathBuf,

    /// Exit with status 1 when the config has a warning (a field ignored, conflicting or
    /// missing), not only print it
    #[arg(long)]
    pub strict: bool,

    /// Compare with another config of the same model (a .gguf with its config.json, or the
    /// reverse): the inverse frequency of every pair, the attention factor, the rotary width
    /// and the pair layout, per layer type; exit status 1 when they differ
    #[arg(long, value_name = "FILE")]
    pub against: Option<PathBuf>,
}

/// Configs are small; a larger file is not one (a GGUF file is read in part, at any size).
const MAX_CONFIG_BYTES: u64 = 16 << 20;

/// Reads and parses a model's config (`config.json`) or a `.gguf` file's RoPE, with one-line
/// errors naming the file.
pub fn read_config(path: &Path) -> Result<ModelConfig, CliError> {
    let problem = |what: String| CliError::usage(format!("{} {what}", path.display()));
    if let Some(bytes) = crate::import::handed_over::get(path) {
        let bytes = bytes.as_ref();
        if bytes.starts_with(b"GGUF") {
            let header = crate::import::gguf::read_header_bytes(bytes)
                .map_err(|e| problem(e.to_string()))?;
            let tensors = gguf_tensors(|name| header.read_tensor_bytes(bytes, name))
                .map_err(|e| problem(e.to_string()))?;
            return from_gguf(&header, &tensors).map_err(|e| problem(e.to_string()));
        }
    } else if cfg!(target_arch = "wasm32") {
        return Err(problem(crate::import::handed_over::NOT_HELD.to_owned()));
    } else if is_gguf(path) {
        let header = crate::import::gguf::read_header(path).map_err(|e| problem(e.to_string()))?;
        let tensors = gguf_tensors(|name| header.read_tensor(path, name))
            .map_err(|e| problem(e.to_string()))?;
        return from_gguf(&header, &tensors).map_err(|e| problem(e.to_string()));
    }
    let size = match crate::import::handed_over::get(path) {
        Some(bytes) => bytes.as_ref().len() as u64,
        None => {
            let metadata =
                std::fs::metadata(path).map_err(|e| problem(format!("cannot be read: {e}")))?;
            if !metadata.is_file() {
                return Err(problem("is not a regular file".to_owned()));
            }
            metadata.len()
        }
    };
    if size > MAX_CONFIG_BYTES {
        return Err(problem(format!(
            "is {size} bytes; a model config is at most {MAX_CONFIG_BYTES} (a .gguf file starts with the bytes GGUF)"
        )));
    }
    let text = crate::import::handed_over::read_to_string(path)
        .map_err(|e| problem(format!("cannot be read: {e}")))?;
    ModelConfig::parse(&text).map_err(|e| problem(e.to_string()))
}

/// Whether the file starts with GGUF's magic bytes. Only a regular file is opened: a FIFO or
/// a device would make the open or the read wait (the caller then says what it is).
fn is_gguf(path: &Path) -> bool {
    use std::io::Read;
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut magic = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok()
        && &magic == b"GGUF"
}

/// The RoPE tensors of a GGUF file, each read by `read`.
fn gguf_tensors(
    read: impl Fn(&str) -> Result<Option<Vec<f64>>, crate::import::gguf::GgufError>,
) -> Result<RopeTensors, crate::import::gguf::GgufError> {
    Ok(RopeTensors {
        freqs: read("rope_freqs.weight")?,
        long: read("rope_factors_long.weight")?,
        short: read("rope_factors_short.weight")?,
    })
}

fn number(value: f64) -> String {
    format!("{value}")
}

/// The scaling's options, by clap id, as the command line spells them.
fn scaling_options(scaling: &RopeScaling) -> Vec<(&'static str, String)> {
    scaling.as_options()
}

/// Every option (by clap id, with its value) the config sets for the tables of its encoding.
fn encoding_options(config: &ModelConfig) -> Vec<(&'static str, String)> {
    match &config.encoding {
        PositionEncoding::Rope {
            head_dim,
            base,
            freqs,
            layout,
        } => {
            let mut options = vec![("dim", head_dim.to_string())];
            // Frequencies given outright take no base (poslab table refuses the two together).
            match &freqs.given {
                Some(given) => options.push((
                    "inv_freq",
                    crate::encoding::rope_scaling::number_list(given),
                )),
                None => options.push(("base", number(*base))),
            }
            if let Some(rotary) = freqs.rotary_dim {
                options.push(("rotary_dim", rotary.to_string()));
            }
            options.push((
                "layout",
                match layout {
                    PairLayout::Half => "half",
                    PairLayout::Interleaved => "interleaved",
                }
                .to_owned(),
            ));
            options.extend(scaling_options(&freqs.scaling));
            options
        }
        PositionEncoding::Alibi { heads, .. } => vec![("heads", heads.to_string())],
        PositionEncoding::T5 {
            buckets,
            max_distance,
            ..
        } => vec![
            ("num_buckets", buckets.to_string()),
            ("max_distance", max_distance.to_string()),
        ],
        PositionEncoding::Sinusoidal { dim } => {
            vec![("dim", dim.to_string()), ("layout", "split".to_owned())]
        }
        PositionEncoding::SinCos2d { grid, dim } => vec![
            ("grid_h", grid.to_string()),
            ("grid_w", grid.to_string()),
            ("dim", dim.to_string()),
        ],
        PositionEncoding::Learned { .. } => Vec::new(),
    }
}

/// The kinds whose tables reproduce the config's encoding, with a sentence on each.
fn reproducing_kinds(config: &ModelConfig) -> Vec<(Kind, &'static str)> {
    match &config.encoding {
        PositionEncoding::Rope { .. } => vec![
            (
                Kind::RopeInvFreq,
                "inverse frequencies (the inv_freq buffer)",
            ),
            (Kind::RopeCos, "cos cache (times the attention factor)"),
            (Kind::RopeSin, "sin cache"),
            (Kind::RopeAttentionFactor, "attention factor"),
        ],
        PositionEncoding::Alibi { .. } => vec![
            (Kind::AlibiSlopes, "slopes"),
            (Kind::Alibi, "causal biases"),
        ],
        PositionEncoding::T5 { .. } => vec![(Kind::T5Buckets, "relative position buckets")],
        PositionEncoding::Sinusoidal { .. } => vec![(Kind::Sinusoidal, "sinusoidal table")],
        PositionEncoding::SinCos2d { .. } => {
            vec![(Kind::SinCos2d, "2D sin-cos table (without its CLS row)")]
        }
        PositionEncoding::Learned { .. } => Vec::new(),
    }
}

/// The options of `kind` that the config sets, by clap id.
fn options_for(config: &ModelConfig, kind: Kind) -> Vec<(&'static str, String)> {
    let accepted = options_of(kind);
    encoding_options(config)
        .into_iter()
        .filter(|(id, _)| {
            accepted.contains(id)
                || (accepted.contains(&"scaling") && super::SCALING_OPTIONS.contains(id))
        })
        .collect()
}

/// A RoPE model's settings as `poslab table`'s options (by clap id, as the command line
/// writes them: dim, base, rotary width, layout, scaling and its parameters) and the attention
/// factor its scaling multiplies cos and sin by; `None` for a model without RoPE.
pub fn rope_settings(config: &ModelConfig) -> Option<(Vec<(&'static str, String)>, f64)> {
    let PositionEncoding::Rope { freqs, .. } = &config.encoding else {
        return None;
    };
    Some((encoding_options(config), freqs.attention_factor()))
}

/// `poslab config`: its exit status is 0, or 1 under `--strict` when there is a warning.
pub fn run_config(args: &ConfigArgs) -> Result<i32, CliError> {
    let config = read_config(&args.file)?;
    super::output::print(&describe(&config, &args.file))?;
    // What `poslab table --config` would refuse is an error here too (exit 2), in its words,
    // but for what a warning already says (a factor below 1, which transformers only warns of).
    for layer in &config.rope_layers {
        let one = ModelConfig {
            encoding: layer.encoding(),
            ..config.clone()
        };
        if let Some(problem) = config_problem(&one)
            && !layer.freqs.scaling.factor.is_some_and(|f| f < 1.0)
        {
            return Err(CliError::usage(format!(
                "{}: {problem}; poslab table --config refuses it",
                args.file.display()
            )));
        }
    }
    if config.rope_layers.is_empty()
        && let Some(problem) = config_problem(&config)
    {
        return Err(CliError::usage(format!(
            "{}: {problem}; poslab table --config refuses it",
            args.file.display()
        )));
    }
    let mut status = i32::from(args.strict && !config.lints.is_empty());
    if let Some(other_path) = &args.against {
        let other = read_config(other_path)?;
        let (lines, agree) = super::against::compare(&config, &other, other_path);
        super::output::print(&(lines.join("\n") + "\n"))?;
        if !agree {
            status = 1;
        }
    }
    Ok(status)
}

/// Why no table can be made as the config says (a scaling factor below 1, a Llama 3 scaling
/// without its original context, ...), in the words the options' checks use; `None` if it can.
pub fn config_problem(config: &ModelConfig) -> Option<String> {
    match &config.encoding {
        PositionEncoding::Rope {
            head_dim,
            base,
            freqs,
            ..
        } => freqs
            .validate(*head_dim, *base)
            .err()
            .map(|e| e.to_string()),
        _ => None,
    }
}

/// The one short block `poslab config` prints.
pub fn describe(config: &ModelConfig, path: &Path) -> String {
    let mut lines = vec![format!(
        "model: {}{}",
        config.name,
        if config.model_type.is_empty() || config.model_type == config.name {
            String::new()
        } else {
            format!(" ({})", config.model_type)
        }
    )];
    if let Some(format) = &config.format {
        lines.push(format!("file: {format}"));
    }
    let context = config
        .context
        .map_or_else(|| "not given".to_owned(), |n| n.to_string());
    match &config.encoding {
        PositionEncoding::Rope { .. } => {
            let typed = config.rope_layers.iter().any(|l| l.layer_type.is_some());
            lines.push(if typed {
                format!(
                    "encoding: RoPE, one per layer type ({})",
                    config
                        .rope_layers
                        .iter()
                        .filter_map(|l| l.layer_type.clone())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            } else {
                "encoding: RoPE".to_owned()
            });
            for layer in &config.rope_layers {
                let indent = match &layer.layer_type {
                    Some(name) => {
                        lines.push(format!(
                            "layer type {name}{}:",
                            layer.layers.map_or_else(String::new, |(n, of)| format!(
                                " ({n} of {of} layers)"
                            ))
                        ));
                        "  "
                    }
                    None => "",
                };
                lines.extend(describe_rope(layer).into_iter().map(|l| format!("{indent}{l}")));
            }
        }
        PositionEncoding::Alibi { heads, form } => {
            lines.push(format!(
                "encoding: ALiBi, {heads} heads, stored as {}",
                match form {
                    AlibiForm::Bloom => "BLOOM's m_h * j per key (build_alibi_tensor)",
                    AlibiForm::Mpt => "MPT's m_h * (j - (seq - 1)) per key (build_alibi_bias)",
                }
            ));
        }
        PositionEncoding::T5 {
            heads,
            buckets,
            max_distance,
        } => lines.push(format!(
            "encoding: T5 relative buckets, {buckets} buckets, max distance {max_distance}, {heads} heads (a learned bias per bucket and head)"
        )),
        PositionEncoding::Sinusoidal { dim } => lines.push(format!(
            "encoding: fixed sinusoidal (the original transformer's), dim {dim}, sin in the first half of the columns and cos in the second"
        )),
        PositionEncoding::SinCos2d { grid, dim } => lines.push(format!(
            "encoding: fixed 2D sin-cos (MAE), {grid} x {grid} patches, dim {dim}, after a CLS row"
        )),
        PositionEncoding::Learned { positions, dim } => lines.push(format!(
            "encoding: learned absolute positions, a [{positions}, {dim}] table of trained vectors: no formula reproduces it (open the weights in the app to look at it)"
        )),
    }
    lines.push(format!(
        "context: {context}{}",
        config
            .rope_layers
            .first()
            .and_then(|l| l.sources.iter().find(|(id, _)| *id == "context"))
            .filter(|_| config.context.is_some())
            .map_or_else(String::new, |(_, source)| format!("  ({source})"))
    ));
    for lint in &config.lints {
        lines.push(format!("warning: {lint}"));
    }
    let kinds = reproducing_kinds(config);
    if !kinds.is_empty() {
        lines.push("tables:".to_owned());
        let seq = config.context.unwrap_or(4096).min(8192).to_string();
        // A model with a RoPE per layer type: each layer type's tables, named by --layer-type.
        let typed: Vec<Option<&str>> = if config.differs_by_layer_type() {
            config
                .rope_layers
                .iter()
                .map(|l| l.layer_type.as_deref())
                .collect()
        } else {
            vec![None]
        };
        let config_words = || {
            vec![
                "--config".to_owned(),
                crate::import::printable(&shell_word(&path.display().to_string())),
            ]
        };
        for layer_type in typed {
            let Ok(one) = config.layer(layer_type) else {
                continue;
            };
            for &(kind, what) in &kinds {
                let mut words = vec!["poslab".to_owned(), "table".to_owned(), kind_name(kind)];
                let accepted = options_of(kind);
                // The length only where the table has one row per position.
                if accepted.contains(&"seq")
                    && !matches!(kind, Kind::RopeInvFreq | Kind::AlibiSlopes)
                {
                    words.push("--seq".to_owned());
                    words.push(seq.clone());
                }
                let options = options_for(&one, kind);
                // A factor list of thousands of numbers makes a command no one types: the
                // config itself then gives the options (`--config`), as poslab table reads it.
                if let Some(name) = layer_type {
                    words.extend(config_words());
                    words.push("--layer-type".to_owned());
                    words.push(shell_word(name));
                } else if options.iter().map(|(_, v)| v.len()).sum::<usize>() > LONGEST_OPTIONS {
                    words.extend(config_words());
                } else {
                    for (id, value) in options {
                        words.push(flag(id));
                        words.push(value);
                    }
                }
                let file = kind_name(kind).replace('-', "_");
                words.push("-o".to_owned());
                words.push(match layer_type {
                    Some(name) => format!("{}_{file}.npy", shell_word(name)),
                    None => format!("{file}.npy"),
                });
                lines.push(match layer_type {
                    Some(name) => format!("  # {name}: {what}"),
                    None => format!("  # {what}"),
                });
                lines.push(format!("  {}", words.join(" ")));
            }
        }
    }
    lines.join("\n") + "\n"
}

/// One RoPE's lines: each setting in force with the field it came from.
fn describe_rope(layer: &RopeLayer) -> Vec<String> {
    let source = |id: &str| {
        layer
            .sources
            .iter()
            .find(|(i, _)| *i == id)
            .map_or_else(String::new, |(_, s)| format!("  ({s})"))
    };
    let (head_dim, freqs) = (layer.head_dim, &layer.freqs);
    let mut lines = vec![format!("head dim: {head_dim}{}", source("dim"))];
    let rotary = freqs.rotary(head_dim);
    lines.push(format!(
        "rotary dim: {rotary}{}{}",
        if rotary < head_dim {
            format!(
                " (partial: the last {} dimensions pass through)",
                head_dim - rotary
            )
        } else {
            String::new()
        },
        source("rotary_dim")
    ));
    lines.push(format!("base: {}{}", layer.base, source("base")));
    if let Some(given) = &freqs.given {
        lines.push(format!(
            "inverse frequencies: {} given outright, not base^(-2i/R){}",
            given.len(),
            source("inv_freq")
        ));
    }
    lines.push(format!(
        "pairs: {}{}",
        match layer.layout {
            PairLayout::Half => "halves (i, i + R/2), Hugging Face rotate_half",
            PairLayout::Interleaved => "interleaved (2i, 2i+1), GPT-J rotate_every_two",
        },
        source("layout")
    ));
    let scaling = &freqs.scaling;
    let parameters: Vec<String> = scaling_options(scaling)
        .into_iter()
        .filter(|(id, _)| *id != "scaling")
        .map(|(id, value)| {
            let shown = if value.len() > 40 {
                format!("[{} values]", value.split(',').count())
            } else {
                value
            };
            format!("{} {shown}", id.replace('_', " "))
        })
        .collect();
    let parameter_sources: Vec<String> = scaling
        .kind
        .options()
        .iter()
        .filter_map(|id| {
            layer
                .sources
                .iter()
                .find(|(i, _)| i == id)
                .map(|(_, s)| format!("{}: {s}", id.replace('_', " ")))
        })
        .collect();
    lines.push(format!(
        "scaling: {}{}{}",
        scaling.kind.name(),
        if parameters.is_empty() {
            String::new()
        } else {
            format!(" ({})", parameters.join(", "))
        },
        source("scaling")
    ));
    if !parameter_sources.is_empty() {
        lines.push(format!("  from: {}", parameter_sources.join("; ")));
    }
    match freqs.validate(head_dim, layer.base) {
        Ok(()) => lines.push(format!(
            "attention factor: {}{}",
            freqs.attention_factor(),
            source("attention_factor")
        )),
        Err(e) => lines.push(format!("problem: {e}")),
    }
    if let Some(mrope) = &layer.mrope {
        let sum: usize = mrope.section.iter().sum();
        let section = mrope
            .section
            .iter()
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join(",");
        let (order, caveat) = if mrope.interleaved {
            (
                ", interleaved (Qwen3-VL's mrope_interleaved: the axes take turns pair by pair)",
                " (contiguous sections only: poslab does not compute the interleaved order)",
            )
        } else {
            ("", "")
        };
        lines.push(format!(
            "M-RoPE: pairs per position axis (time, height, width) {section}{order}  ({}); a text token has the same position on every axis, so its cos and sin are the tables below; image and video tokens: poslab table rope-axes --mrope-section {section} --dim {} with their --ids{caveat}",
            mrope.source,
            2 * sum,
        ));
    }
    lines
}

/// The most characters of option values a printed command spells out; beyond it the command
/// names the config instead.
const LONGEST_OPTIONS: usize = 400;

/// `word` as a shell reads it back: quoted when it holds anything but plain path characters.
fn shell_word(word: &str) -> String {
    let plain = word
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+,:@".contains(c));
    if plain && !word.is_empty() {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// Fills the options of `args` that the command line left unset from `--config`: every
/// option the config decides for the kind.
pub fn apply_config(args: &mut TableArgs, matches: &ArgMatches) -> Result<(), CliError> {
    let Some(path) = args.config.clone() else {
        return Ok(());
    };
    // The file's own messages name it; here the option that named it comes first.
    let config = read_config(&path)
        .map_err(|e| CliError {
            message: format!("--config {}", e.message),
            ..e
        })?
        .layer(args.layer_type.as_deref())
        .map_err(|e| CliError::usage(format!("--config {}: {e}", path.display())))?;
    let kind = args.kind;
    let options = options_for(&config, kind);
    let fits = reproducing_kinds(&config).iter().any(|(k, _)| *k == kind)
        || matches!(
            (&config.encoding, kind),
            (
                PositionEncoding::Rope { .. },
                Kind::RopeAngles | Kind::RopeApply | Kind::RopeCacheError
            ) | (
                PositionEncoding::Alibi { .. },
                Kind::AlibiSlopes | Kind::Alibi
            )
        )
        || super::kinds::registered(kind)
            .is_some_and(|entry| (entry.fits_config)(&config.encoding));
    if !fits {
        return Err(CliError::usage(format!(
            "--config {}: {} does not use {} tables (poslab config {} says which tables reproduce it)",
            path.display(),
            config.name,
            kind_name(kind),
            path.display()
        )));
    }
    let given = |id: &str| matches.value_source(id) == Some(ValueSource::CommandLine);
    // A scaling chosen on the command line brings its own parameters.
    let scaling_given = given("scaling");
    if !scaling_given && let Some(problem) = config_problem(&config) {
        return Err(CliError::usage(format!(
            "--config {}: {problem}",
            path.display()
        )));
    }
    for (id, value) in options {
        if given(id) || (scaling_given && super::SCALING_OPTIONS.contains(&id)) {
            continue;
        }
        set_option(args, id, &value)?;
    }
    Ok(())
}

/// Sets one option of `args` from its text, as the command line would.
fn set_option(args: &mut TableArgs, id: &str, value: &str) -> Result<(), CliError> {
    let bad = || CliError::usage(format!("--config gives {} the value {value}", flag(id)));
    let float = || value.parse::<f64>().map_err(|_| bad());
    let int = || value.parse::<i64>().map_err(|_| bad());
    match id {
        "dim" => args.sizes.dim = Some(int()?),
        "base" => args.sinusoidal.base = Some(float()?),
        "rotary_dim" => args.rope.rotary_dim = Some(int()?),
        "layout" => {
            args.sinusoidal.layout = Some(match value {
                "half" | "split" => PairLayout::Half,
                _ => PairLayout::Interleaved,
            })
        }
        "scaling" => {
            args.scaled.scaling =
                <ScalingKind as clap::ValueEnum>::from_str(value, false).map_err(|_| bad())?
        }
        "factor" => args.scaled.factor = Some(float()?),
        "original_max_position_embeddings" => {
            args.scaled.original_max_position_embeddings = Some(int()?)
        }
        "max_position_embeddings" => args.scaled.max_position_embeddings = Some(int()?),
        "low_freq_factor" => args.scaled.low_freq_factor = Some(float()?),
        "high_freq_factor" => args.scaled.high_freq_factor = Some(float()?),
        "beta_fast" => args.scaled.beta_fast = Some(float()?),
        "beta_slow" => args.scaled.beta_slow = Some(float()?),
        "mscale" => args.scaled.mscale = Some(float()?),
        "mscale_all_dim" => args.scaled.mscale_all_dim = Some(float()?),
        "attention_factor" => args.scaled.attention_factor = Some(float()?),
        "truncate" => args.scaled.truncate = Some(value == "true"),
        "long_factor" => args.scaled.long_factor = Some(value.to_owned()),
        "inv_freq" => args.rope.inv_freq = Some(value.to_owned()),
        "short_factor" => args.scaled.short_factor = Some(value.to_owned()),
        "heads" => args.sizes.heads = Some(int()?),
        "num_buckets" => args.relative.num_buckets = Some(int()?),
        "max_distance" => args.relative.max_distance = Some(int()?),
        "grid_h" => args.sizes.grid_h = Some(int()?),
        "grid_w" => args.sizes.grid_w = Some(int()?),
        _ => return Err(bad()),
    }
    Ok(())
}
