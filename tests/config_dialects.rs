//! Model configs in both of transformers' dialects, one RoPE per layer type or one for all:
//! what poslab reads from each file is what transformers' own rotary embedding computes from
//! it (`tests/data/configs/make.py` saved both), and the lints name what is ignored,
//! conflicting or missing.

use std::path::{Path, PathBuf};
use std::process::Command;

use poslab::import::model_config::{DEFAULT, ModelConfig};
use serde_json::{Value, json};

fn folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/configs")
}

fn poslab(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_poslab"))
        .args(args)
        .output()
        .expect("the poslab binary runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Every config's inverse frequencies and attention factor, layer type by layer type, are
/// transformers' (its float32 buffers, so to float32's precision).
#[test]
fn every_config_gives_the_rope_transformers_computes_from_it() {
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(folder().join("expected.json")).unwrap())
            .unwrap();
    let cases = expected.as_object().unwrap();
    assert!(cases.len() >= 18, "{}", cases.len());
    for (name, layers) in cases {
        let text = std::fs::read_to_string(folder().join(format!("{name}.json"))).unwrap();
        let config = ModelConfig::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let layers = layers.as_object().unwrap();
        assert_eq!(
            config.rope_layers.len(),
            layers.len(),
            "{name}: layer types {:?}",
            config
                .rope_layers
                .iter()
                .map(|l| l.layer_type.clone())
                .collect::<Vec<_>>()
        );
        for (layer_type, want) in layers {
            let chosen = (!layer_type.is_empty()).then_some(layer_type.as_str());
            let one = config
                .layer(chosen)
                .unwrap_or_else(|e| panic!("{name} {layer_type}: {e}"));
            let layer = &one.rope_layers[0];
            layer
                .freqs
                .validate(layer.head_dim, layer.base)
                .unwrap_or_else(|e| panic!("{name} {layer_type}: {e}"));
            let ours = layer.freqs.inv_freq(layer.head_dim, layer.base, 1);
            let theirs: Vec<f64> = want["inv_freq"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect();
            assert_eq!(ours.len(), theirs.len(), "{name} {layer_type}");
            for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
                assert!(
                    (a - b).abs() <= 2e-6 * b.abs(),
                    "{name} {layer_type} pair {i}: poslab {a}, transformers {b}"
                );
            }
            let factor = want["attention_factor"].as_f64().unwrap();
            let ours = layer.freqs.attention_factor();
            assert!(
                (ours - factor).abs() <= 1e-6 * factor,
                "{name} {layer_type}: attention factor {ours} vs {factor}"
            );
        }
    }
}

fn write(dir: &tempfile::TempDir, name: &str, config: &Value) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, config.to_string()).unwrap();
    path.to_str().unwrap().to_owned()
}

fn gemma(parameters: Value) -> Value {
    json!({
        "model_type": "gemma3_text",
        "hidden_size": 2560,
        "num_attention_heads": 8,
        "head_dim": 256,
        "num_hidden_layers": 6,
        "layer_types": ["sliding_attention", "sliding_attention", "sliding_attention",
                        "sliding_attention", "sliding_attention", "full_attention"],
        "max_position_embeddings": 131072,
        "rope_parameters": parameters,
    })
}

/// The Gemma 3 config: both layer types printed, exit 0, each base with its field;
/// without the sliding layers' base, Gemma 3's local default is named as a default.
#[test]
fn a_config_with_a_rope_per_layer_type_reports_each() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        &dir,
        "gemma.json",
        &gemma(json!({
            "full_attention": {"rope_type": "linear", "factor": 8, "rope_theta": 1e6},
            "sliding_attention": {"rope_theta": 1e4}
        })),
    );
    let (code, out, err) = poslab(&["config", &path]);
    assert_eq!(code, Some(0), "{err}");
    for part in [
        "layer type full_attention (1 of 6 layers)",
        "layer type sliding_attention (5 of 6 layers)",
        "base: 1000000  (rope_parameters.full_attention.rope_theta)",
        "base: 10000  (rope_parameters.sliding_attention.rope_theta)",
        "scaling: linear (factor 8)",
        "--layer-type full_attention",
    ] {
        assert!(out.contains(part), "'{part}' in\n{out}");
    }
    assert!(!out.contains("warning"), "{out}");

    let path = write(
        &dir,
        "gemma_default.json",
        &gemma(json!({
            "full_attention": {"rope_type": "linear", "factor": 8, "rope_theta": 1e6},
            "sliding_attention": {"rope_type": "default"}
        })),
    );
    let (code, out, err) = poslab(&["config", &path]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains(&format!(
            "base: 10000  ({DEFAULT}: gemma3_text's rope_local_base_freq, 10000)"
        )),
        "{out}"
    );

    // A table of such a model needs the layer type; each one's is its own.
    let table = dir.path().join("t.npy");
    let table = table.to_str().unwrap();
    let (code, _, err) = poslab(&["table", "rope-inv-freq", "--config", &path, "-o", table]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("a different RoPE per layer type (full_attention, sliding_attention)")
            && err.contains("--layer-type"),
        "{err}"
    );
    for (layer_type, first_pair) in [("full_attention", 1.0 / 8.0), ("sliding_attention", 1.0)] {
        let (code, _, err) = poslab(&[
            "table",
            "rope-inv-freq",
            "--config",
            &path,
            "--layer-type",
            layer_type,
            "-o",
            table,
        ]);
        assert_eq!(code, Some(0), "{err}");
        let values: ndarray::ArrayD<f32> = ndarray_npy::read_npy(table).unwrap();
        assert_eq!(values.len(), 128);
        assert!(
            (f64::from(values[[0]]) - first_pair).abs() < 1e-7,
            "{layer_type}"
        );
    }
    let (code, _, err) = poslab(&[
        "table",
        "rope-inv-freq",
        "--config",
        &path,
        "--layer-type",
        "global",
        "-o",
        table,
    ]);
    assert_eq!(code, Some(2));
    assert!(err.contains("no layer type \"global\""), "{err}");
}

/// Each lint the issue lists, from a small config: a warning naming the field, exit 0, and
/// exit 1 under --strict.
#[test]
fn every_lint_names_its_field() {
    let dir = tempfile::tempdir().unwrap();
    let llama = |scaling: Value| {
        json!({
            "model_type": "llama",
            "hidden_size": 4096,
            "num_attention_heads": 32,
            "max_position_embeddings": 131072,
            "rope_theta": 500000.0,
            "rope_scaling": scaling,
        })
    };
    let yarn =
        json!({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768});
    let with = |base: &Value, key: &str, value: Value| {
        let mut changed = base.clone();
        changed[key] = value;
        changed
    };
    let cases: Vec<(Value, &str, &str)> = vec![
        (
            llama(with(&yarn, "rope_colour", json!(3))),
            "rope_scaling.rope_colour",
            "a field poslab does not know",
        ),
        (
            llama(with(
                &with(&yarn, "attention_factor", json!(1.2)),
                "mscale",
                json!(0.7),
            )),
            "rope_scaling.mscale",
            "attention_factor beside it",
        ),
        (
            llama(with(&yarn, "low_freq_factor", json!(1.0))),
            "rope_scaling.low_freq_factor",
            "is ignored: yarn scaling does not read it",
        ),
        (
            llama(with(&yarn, "type", json!("linear"))),
            "rope_scaling.type",
            "transformers reads rope_type",
        ),
        (
            llama(
                json!({"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0}),
            ),
            "rope_scaling.original_max_position_embeddings",
            "takes max_position_embeddings (131072) in its place",
        ),
        (
            llama(json!({"rope_type": "linear", "factor": 0.5})),
            "rope_scaling.factor",
            "below 1",
        ),
        (
            json!({"model_type": "stablelm", "hidden_size": 2048, "num_attention_heads": 32,
                   "rope_parameters": {"rope_type": "default", "rope_theta": 10000, "partial_rotary_factor": 0.3}}),
            "rope_parameters.partial_rotary_factor",
            "19 dimensions, an odd number",
        ),
        (
            with(&llama(yarn.clone()), "max_position_embeddings", json!(8192)),
            "max_position_embeddings",
            "below original_max_position_embeddings 32768",
        ),
        (
            json!({"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
                   "rope_theta": 500000.0, "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0}}),
            "rope_theta",
            "transformers 5 takes rope_parameters.rope_theta",
        ),
        (
            with(
                &llama(yarn.clone()),
                "rope_parameters",
                json!({"rope_type": "default", "rope_theta": 1e4}),
            ),
            "rope_parameters",
            "rope_scaling beside it is read instead",
        ),
    ];
    for (k, (config, field, words)) in cases.iter().enumerate() {
        let path = write(&dir, &format!("lint{k}.json"), config);
        let (code, out, err) = poslab(&["config", &path]);
        assert_eq!(code, Some(0), "{field}: {out}{err}");
        let line = out
            .lines()
            .find(|l| l.starts_with(&format!("warning: {field}: ")))
            .unwrap_or_else(|| panic!("no warning on {field} in\n{out}"));
        assert!(line.contains(words), "{field}: {line}");
        let (code, _, _) = poslab(&["config", &path, "--strict"]);
        assert_eq!(code, Some(1), "{field} under --strict");
    }
}

/// The shipped models' configs and transformers' own round trips raise no lint.
#[test]
fn clean_configs_raise_no_lint() {
    let mut paths: Vec<PathBuf> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/models"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
    for name in [
        "llama31_v5",
        "gemma3_text_v5",
        "modernbert_v5",
        "qwen2_yarn_v5",
        "deepseek_v2_yarn_v5",
    ] {
        paths.push(folder().join(format!("{name}.json")));
    }
    for path in paths {
        let config = ModelConfig::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert!(
            config.lints.is_empty(),
            "{}: {:?}",
            path.display(),
            config.lints
        );
        let (code, out, _) = poslab(&["config", path.to_str().unwrap(), "--strict"]);
        assert_eq!(code, Some(0), "{}: {out}", path.display());
    }
}

/// The pair layout is how the model's transformers code pairs the weights' dims: halves
/// (rotate_half) for most; interleaved for GPT-J, DeepSeek-V2 and Llama 4 (view_as_complex),
/// and for DeepSeek-V3's kin unless `rope_interleave` is false.
#[test]
fn the_pair_layout_follows_each_models_code() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (json!({"model_type": "llama"}), "halves"),
        (json!({"model_type": "gptj"}), "interleaved"),
        (json!({"model_type": "deepseek_v2"}), "interleaved"),
        (json!({"model_type": "llama4_text"}), "interleaved"),
        (json!({"model_type": "deepseek_v3"}), "interleaved"),
        (
            json!({"model_type": "deepseek_v3", "rope_interleave": false}),
            "halves",
        ),
        (
            json!({"model_type": "mistral4", "rope_interleave": true}),
            "interleaved",
        ),
    ];
    for (k, (mut config, pairs)) in cases.into_iter().enumerate() {
        config["hidden_size"] = json!(1024);
        config["num_attention_heads"] = json!(8);
        let path = write(&dir, &format!("layout{k}.json"), &config);
        let (code, out, err) = poslab(&["config", &path]);
        assert_eq!(code, Some(0), "{config}: {err}");
        let line = out.lines().find(|l| l.starts_with("pairs: ")).unwrap();
        assert!(
            line.starts_with(&format!("pairs: {pairs}")),
            "{config}: {line}"
        );
    }
}
