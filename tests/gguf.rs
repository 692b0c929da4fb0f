//! `.gguf` files: the RoPE llama.cpp runs from each (what its own formulas give from the
//! file's values, computed by `tests/data/gguf/make.py`), `--against` the config.json it was
//! converted from, `--config model.gguf` for tables, and hostile files: each refused in one
//! line, none read past its end, no panic.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};

use poslab::table_args::config::read_config;
use serde_json::Value;

fn folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/gguf")
}

fn gguf(name: &str) -> String {
    folder()
        .join(format!("{name}.gguf"))
        .to_str()
        .unwrap()
        .to_owned()
}

fn data(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(path)
        .to_str()
        .unwrap()
        .to_owned()
}

/// Every file's inverse frequencies, layer type by layer type (and LongRoPE's long ones past
/// the original context), and attention factor are llama.cpp's.
#[test]
fn every_file_gives_the_rope_llama_cpp_runs() {
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(folder().join("expected.json")).unwrap())
            .unwrap();
    for (name, layers) in expected.as_object().unwrap() {
        let config =
            read_config(Path::new(&gguf(name))).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        assert_eq!(
            config.rope_layers.len(),
            layers.as_object().unwrap().len(),
            "{name}"
        );
        for (layer_type, want) in layers.as_object().unwrap() {
            let layer = config
                .rope_layers
                .iter()
                .find(|l| l.layer_type.as_deref().unwrap_or("") == layer_type)
                .unwrap_or_else(|| panic!("{name}: no {layer_type}"));
            layer.freqs.validate(layer.head_dim, layer.base).unwrap();
            let original = layer.freqs.scaling.original_max_position_embeddings;
            let mut lengths = vec![("inv_freq", 1)];
            if let Some(n) = original.filter(|_| want.get("inv_freq_long").is_some()) {
                lengths.push(("inv_freq_long", n + 1));
            }
            for (key, seq) in lengths {
                let ours = layer.freqs.inv_freq(layer.head_dim, layer.base, seq);
                let theirs: Vec<f64> = want[key]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_f64().unwrap())
                    .collect();
                assert_eq!(ours.len(), theirs.len(), "{name} {layer_type} {key}");
                for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
                    assert!(
                        (a - b).abs() <= 1e-12 * b.abs(),
                        "{name} {layer_type} {key} pair {i}: {a} vs llama.cpp's {b}"
                    );
                }
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

/// Each file beside the config.json it was converted from agrees (exit 0), and one with a
/// changed base or factor is named as differing (exit 1).
#[test]
fn against_names_what_differs() {
    let cases = [
        (
            "llama31",
            "tests/data/configs/llama31_v4.json",
            true,
            vec!["converter permuted"],
        ),
        (
            "llama31_base10000",
            "tests/data/configs/llama31_v4.json",
            false,
            vec!["base 10000 here, 500000 there"],
        ),
        (
            "qwen2_yarn",
            "tests/data/configs/qwen2_yarn_v4.json",
            true,
            vec![],
        ),
        (
            "qwen2_yarn",
            "tests/data/configs/qwen2_yarn_v5.json",
            true,
            vec![],
        ),
        (
            "qwen2_yarn_factor2",
            "tests/data/configs/qwen2_yarn_v4.json",
            false,
            vec![
                "yarn factor 2 here, yarn factor 4 there",
                "attention factor: differ",
            ],
        ),
        (
            "phi3_longrope",
            "assets/models/phi-3-vision-128k-instruct.json",
            true,
            vec![],
        ),
        (
            "gemma3",
            "tests/data/configs/gemma3_text_v4.json",
            true,
            vec!["layer type sliding_attention:"],
        ),
    ];
    for (file, config, agree, says) in cases {
        let (code, out) = common::run_poslab(&["config", &gguf(file), "--against", &data(config)]);
        assert_eq!(code, if agree { 0 } else { 1 }, "{file}: {out}");
        assert!(
            out.contains(if agree {
                "result: they agree"
            } else {
                "result: they differ"
            }),
            "{file}: {out}"
        );
        for part in says {
            assert!(out.contains(part), "{file}: '{part}' in {out}");
        }
    }
}

/// `--config model.gguf` gives the tables the file implies: Llama 3.1's rope_freqs give
/// the Llama 3 scaling's frequencies.
#[test]
fn tables_take_a_gguf_as_config() {
    let dir = tempfile::tempdir().unwrap();
    let from_file = dir.path().join("a.npy");
    let from_options = dir.path().join("b.npy");
    let (code, out) = common::run_poslab(&[
        "table",
        "rope-inv-freq",
        "--config",
        &gguf("llama31"),
        "--dtype",
        "f64",
        "-o",
        from_file.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}");
    let mut words = vec!["table", "rope-inv-freq", "--dim", "128"];
    words.extend(common::LLAMA31_ROPE);
    words.extend(["--dtype", "f64", "-o", from_options.to_str().unwrap()]);
    let (code, out) = common::run_poslab(&words);
    assert_eq!(code, 0, "{out}");
    let a: ndarray::ArrayD<f64> = ndarray_npy::read_npy(&from_file).unwrap();
    let b: ndarray::ArrayD<f64> = ndarray_npy::read_npy(&from_options).unwrap();
    assert_eq!(a.len(), 64);
    for (x, y) in a.iter().zip(b.iter()) {
        assert!((x - y).abs() <= 1e-6 * y, "{x} vs {y}");
    }
    // A GGUF with a RoPE per layer type needs --layer-type, as a config.json does.
    let (code, out) = common::run_poslab(&[
        "table",
        "rope-cos",
        "--seq",
        "4",
        "--config",
        &gguf("gemma3"),
        "-o",
        from_file.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("full_attention, sliding_attention"), "{out}");
}

/// GGUF's little-endian pieces, to build hostile files.
struct Writer(Vec<u8>);

impl Writer {
    fn new(tensors: u64, keys: u64) -> Self {
        let mut w = Writer(b"GGUF".to_vec());
        w.u32(3);
        w.u64(tensors);
        w.u64(keys);
        w
    }
    fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend(v.to_le_bytes());
        self
    }
    fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend(v.to_le_bytes());
        self
    }
    fn string(&mut self, s: &str) -> &mut Self {
        self.u64(s.len() as u64);
        self.0.extend(s.as_bytes());
        self
    }
    fn key_text(&mut self, key: &str, value: &str) -> &mut Self {
        self.string(key).u32(8).string(value)
    }
    fn key_f32(&mut self, key: &str, value: f32) -> &mut Self {
        self.string(key).u32(6);
        self.0.extend(value.to_le_bytes());
        self
    }
    fn key_u32(&mut self, key: &str, value: u32) -> &mut Self {
        self.string(key).u32(4).u32(value)
    }
}

fn llama_keys(w: &mut Writer) {
    w.key_text("general.architecture", "llama")
        .key_u32("llama.embedding_length", 4096)
        .key_u32("llama.attention.head_count", 32)
        .key_f32("llama.rope.freq_base", 500000.0);
}

/// Truncated files, counts past the file, wrong value types, a string past the end, lists
/// nested too deep, bad booleans and tensor entries: one line each, exit 2, no panic.
#[test]
fn hostile_files_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut cases: Vec<(String, Vec<u8>, &str)> = Vec::new();
    // Every truncation of a real file.
    let whole = std::fs::read(gguf("llama31")).unwrap();
    for cut in [
        3,
        4,
        10,
        23,
        24,
        40,
        100,
        300,
        whole.len() - 300,
        whole.len() - 290,
    ] {
        cases.push((format!("cut{cut}"), whole[..cut].to_vec(), ""));
    }
    let mut w = Writer::new(1 << 60, 1);
    llama_keys(&mut w);
    cases.push((
        "tensors".into(),
        w.0,
        "says it holds 1152921504606846976 tensors",
    ));
    let w = Writer::new(0, u64::MAX);
    cases.push(("keys".into(), w.0, "metadata keys, more than"));
    let mut w = Writer::new(0, 4);
    w.key_text("general.architecture", "llama")
        .key_u32("llama.embedding_length", 4096)
        .key_u32("llama.attention.head_count", 32)
        .key_text("llama.rope.freq_base", "500000");
    cases.push((
        "text_base".into(),
        w.0,
        "\"llama.rope.freq_base\" is text; it must be a number",
    ));
    let mut w = Writer::new(0, 1);
    w.string("general.architecture").u32(8).u64(1 << 40);
    cases.push(("long_string".into(), w.0, "past the end of the file"));
    let mut w = Writer::new(0, 1);
    w.string("general.architecture").u32(99);
    cases.push(("type99".into(), w.0, "value type 99"));
    let mut w = Writer::new(0, 1);
    w.string("x")
        .u32(9)
        .u32(9)
        .u64(1)
        .u32(9)
        .u64(1)
        .u32(9)
        .u64(1)
        .u32(9)
        .u64(1)
        .u32(9)
        .u64(1);
    cases.push(("deep".into(), w.0, "nesting lists"));
    let mut w = Writer::new(0, 1);
    w.string("x").u32(7);
    w.0.push(2);
    cases.push(("bool".into(), w.0, "boolean byte 2"));
    let mut w = Writer::new(0, 1);
    w.string("x").u32(9).u32(4).u64(1 << 40);
    cases.push(("array".into(), w.0, "cut short"));
    let mut w = Writer::new(1, 4);
    llama_keys(&mut w);
    w.string("rope_freqs.weight").u32(5);
    cases.push(("dims".into(), w.0, "of 5 dimensions"));
    let mut w = Writer::new(1, 4);
    llama_keys(&mut w);
    w.string("rope_freqs.weight")
        .u32(1)
        .u64(64)
        .u32(0)
        .u64(1 << 40);
    w.0.resize(w.0.len() + 64, 0);
    cases.push(("offset".into(), w.0, "past the end of the file"));
    let mut w = Writer::new(1, 4);
    llama_keys(&mut w);
    w.string("rope_freqs.weight")
        .u32(2)
        .u64(1 << 40)
        .u64(1 << 40)
        .u32(0)
        .u64(0);
    cases.push(("huge_tensor".into(), w.0, "larger than a RoPE tensor"));
    let mut w = Writer::new(0, 5);
    llama_keys(&mut w);
    w.key_u32("general.alignment", 3);
    cases.push(("alignment".into(), w.0, "power of two"));
    let mut w = Writer::new(0, 1);
    w.key_text("general.architecture", "toaster");
    cases.push(("arch".into(), w.0, "does not name"));
    let mut w = Writer::new(0, 0);
    w.u32(0);
    cases.push(("no_arch".into(), w.0, "no \"general.architecture\""));
    let mut wrong = Writer::new(0, 0).0;
    wrong[4] = 1;
    cases.push(("v1".into(), wrong, "version 1"));

    for (name, bytes, says) in cases {
        let path = dir.path().join(format!("{name}.gguf"));
        std::fs::write(&path, &bytes).unwrap();
        let (code, out) = common::run_poslab(&["config", path.to_str().unwrap()]);
        assert_eq!(code, 2, "{name}: {out}");
        assert_eq!(out.trim_end().lines().count(), 1, "{name}: one line: {out}");
        assert!(out.contains(says), "{name}: '{says}' in {out}");
        assert!(!out.contains("panicked"), "{name}: {out}");
    }
}

/// A million metadata keys are read (and not kept longer than needed), as are the long
/// lists of text a tokenizer stores.
#[test]
fn a_million_keys_and_a_vocabulary_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let keys = 1_000_000u64;
    let mut w = Writer::new(0, keys + 5);
    llama_keys(&mut w);
    // tokenizer.ggml.tokens: a list of 50,000 strings.
    w.string("tokenizer.ggml.tokens").u32(9).u32(8).u64(50_000);
    for i in 0..50_000 {
        w.string(&format!("tok{i}"));
    }
    for i in 0..keys {
        w.key_u32(&format!("k{i}"), i as u32);
    }
    let path = dir.path().join("many.gguf");
    std::fs::File::create(&path)
        .unwrap()
        .write_all(&w.0)
        .unwrap();
    let (code, out) = common::run_poslab(&["config", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("base: 500000"), "{out}");
}

/// A 2 GB file whose weights are never written (sparse) is inspected: the header is all
/// that is read.
#[test]
fn a_large_sparse_file_is_read_without_its_weights() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = Writer::new(1, 4);
    llama_keys(&mut w);
    let weights: u64 = 2 << 30;
    w.string("token_embd.weight")
        .u32(1)
        .u64(weights / 4)
        .u32(0)
        .u64(0);
    let path = dir.path().join("big.gguf");
    let mut file = std::fs::File::create(&path).unwrap();
    file.write_all(&w.0).unwrap();
    file.set_len(64 + w.0.len() as u64 + weights).unwrap();
    drop(file);
    let (code, out) = common::run_poslab(&["config", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("GGUF version 3, 1 tensor;"), "{out}");
}

/// A BLOOM GGUF (no RoPE in llama.cpp, ALiBi from its max bias) reads as ALiBi; a model
/// llama.cpp runs without either is said to.
#[test]
fn alibi_and_ropeless_architectures_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = Writer::new(0, 3);
    w.key_text("general.architecture", "bloom")
        .key_u32("bloom.attention.head_count", 16)
        .key_f32("bloom.attention.max_alibi_bias", 8.0);
    let path = dir.path().join("bloom.gguf");
    std::fs::write(&path, &w.0).unwrap();
    let (code, out) = common::run_poslab(&["config", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("ALiBi, 16 heads"), "{out}");
    let mut w = Writer::new(0, 1);
    w.key_text("general.architecture", "gpt2");
    let path = dir.path().join("gpt2.gguf");
    std::fs::write(&path, &w.0).unwrap();
    let (code, out) = common::run_poslab(&["config", path.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("which llama.cpp runs without RoPE"), "{out}");
}

/// A FIFO given as a config is refused at once, not waited on (its open would block until a
/// writer came).
#[cfg(unix)]
#[test]
fn a_fifo_is_refused_not_waited_on() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("config.gguf");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let (code, out) = common::run_poslab(&["config", fifo.to_str().unwrap()]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("is not a regular file"), "{out}");
}
