//! Real models' configs: every file of assets/models loads, `poslab config` says what the
//! model cards say, and `--config` fills in the options `poslab table` and `check` take.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use ndarray::Array1;
use ndarray_npy::read_npy;
use poslab::import::model_config::{ModelConfig, PositionEncoding};

fn models() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/models")
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

fn model(name: &str) -> String {
    models().join(name).to_str().unwrap().to_owned()
}

#[test]
fn every_shipped_config_loads_and_names_its_source() {
    let mut count = 0;
    for entry in std::fs::read_dir(models()).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let config =
            ModelConfig::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            text.contains("\"_source\": \"https://huggingface.co/"),
            "{}",
            path.display()
        );
        if let PositionEncoding::Rope {
            head_dim,
            base,
            freqs,
            ..
        } = &config.encoding
        {
            freqs
                .validate(*head_dim, *base)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
        count += 1;
    }
    assert!(count >= 15, "{count} configs");
}

#[test]
fn poslab_config_says_what_the_model_cards_say() {
    // Checked by hand against the model cards' config.json: Llama 3.1 8B has 32 heads of
    // 4096 / 32 = 128, rope_theta 500000 and the llama3 rope_scaling (8, 1, 4, 8192);
    // GPT-NeoX-20B rotates rotary_pct 0.25 of its 6144 / 64 = 96-wide heads, 24 dimensions;
    // DeepSeek-V2-Lite rotates qk_rope_head_dim 64 with YaRN factor 40 over 4096 positions
    // and mscale = mscale_all_dim, so its attention factor is 1.
    let cases = [
        (
            "llama-3.1-8b.json",
            vec![
                "head dim: 128",
                "rotary dim: 128  (default: the whole head)",
                "base: 500000",
                "scaling: llama3 (factor 8, low freq factor 1, high freq factor 4, original max position embeddings 8192)",
                "attention factor: 1  (",
                "context: 131072",
            ],
        ),
        (
            "gpt-neox-20b.json",
            vec![
                "head dim: 96",
                "rotary dim: 24 (partial: the last 72 dimensions pass through)",
                "base: 10000",
                "pairs: halves",
                "scaling: none",
            ],
        ),
        (
            "deepseek-v2-lite.json",
            vec![
                "head dim: 64",
                "scaling: yarn (factor 40",
                "mscale 0.707, mscale all dim 0.707",
                "attention factor: 1  (",
                "context: 163840",
            ],
        ),
        (
            "gpt-j-6b.json",
            vec!["head dim: 256", "rotary dim: 64", "pairs: interleaved"],
        ),
        // sqrt(1 + ln(131072 / 4096) / ln(4096)), HF's LongRoPE attention factor.
        (
            "phi-3-vision-128k-instruct.json",
            vec![
                "head dim: 96",
                "scaling: longrope",
                "attention factor: 1.19023807",
            ],
        ),
        ("bloom-560m.json", vec!["ALiBi, 16 heads", "BLOOM"]),
        ("mpt-7b.json", vec!["ALiBi, 32 heads", "MPT"]),
        (
            "t5-base.json",
            vec!["32 buckets, max distance 128, 12 heads"],
        ),
        ("vit-mae-base.json", vec!["14 x 14 patches, dim 768"]),
        (
            "vit-base-patch16-224.json",
            vec!["learned absolute positions, a [197, 768] table"],
        ),
    ];
    for (file, expected) in cases {
        let (code, stdout, stderr) = poslab(&["config", &model(file)]);
        assert_eq!(code, Some(0), "{file}: {stderr}");
        for part in expected {
            assert!(stdout.contains(part), "{file}: '{part}' in\n{stdout}");
        }
        // Every command it prints runs.
        let dir = tempfile::tempdir().unwrap();
        for line in stdout
            .lines()
            .filter(|l| l.trim_start().starts_with("poslab table"))
        {
            let mut words: Vec<String> =
                line.split_whitespace().skip(1).map(str::to_owned).collect();
            let output = words.last_mut().unwrap();
            *output = dir
                .path()
                .join(output.as_str())
                .to_str()
                .unwrap()
                .to_owned();
            let words: Vec<&str> = words.iter().map(String::as_str).collect();
            let (code, _, stderr) = poslab(&words);
            assert_eq!(code, Some(0), "{file}: {line}: {stderr}");
        }
    }
}

#[test]
fn config_fills_the_options_the_command_line_leaves_out() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    let config = model("llama-3.1-8b.json");
    let (code, _, stderr) = poslab(&[
        "table",
        "rope-inv-freq",
        "--config",
        &config,
        "-o",
        &path("a.npy"),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let b = path("b.npy");
    let (code, _, stderr) = poslab(
        &[
            &["table", "rope-inv-freq", "--dim", "128"][..],
            &common::LLAMA31_ROPE,
            &["-o", &b],
        ]
        .concat(),
    );
    assert_eq!(code, Some(0), "{stderr}");
    let (a, b): (Array1<f32>, Array1<f32>) = (
        read_npy(path("a.npy")).unwrap(),
        read_npy(path("b.npy")).unwrap(),
    );
    assert_eq!(a, b);
    // An option on the command line wins over the config, and a scaling given there brings
    // its own parameters.
    let (code, _, stderr) = poslab(&[
        "table",
        "rope-inv-freq",
        "--config",
        &config,
        "--scaling",
        "none",
        "-o",
        &path("c.npy"),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let c: Array1<f32> = read_npy(path("c.npy")).unwrap();
    assert_eq!(c[0], a[0]);
    assert!(
        c[63] > 7.0 * a[63],
        "unscaled slow frequency {} vs {}",
        c[63],
        a[63]
    );
    // check takes it too: the file just written is Llama 3.1's.
    let (code, stdout, _) = poslab(&[
        "check",
        &path("a.npy"),
        "--as",
        "rope-inv-freq",
        "--config",
        &config,
    ]);
    assert_eq!(code, Some(0), "{stdout}");
    // A config for a kind the model does not use, and bad files: exit 2, one line, no file.
    let not_json = path("bad.json");
    std::fs::write(&not_json, "{ not json").unwrap();
    let unknown = path("unknown.json");
    std::fs::write(&unknown, r#"{"model_type": "llama", "hidden_size": 64, "num_attention_heads": 2, "rope_scaling": {"type": "magic", "factor": 2}}"#).unwrap();
    let folder = dir.path().to_str().unwrap().to_owned();
    for (words, says) in [
        (
            vec!["table", "alibi", "--seq", "8", "--config", &config],
            "does not use alibi tables",
        ),
        (
            vec!["table", "rope-inv-freq", "--config", &not_json],
            "is not valid JSON",
        ),
        (
            vec!["table", "rope-inv-freq", "--config", &unknown],
            "is \"magic\", a rope type poslab does not compute",
        ),
        (
            vec!["table", "rope-inv-freq", "--config", &folder],
            "is not a regular file",
        ),
        (vec!["config", &path("missing.json")], "cannot be read"),
    ] {
        let mut words = words.clone();
        let out = path("never.npy");
        if words[0] == "table" {
            words.extend(["-o", &out]);
        }
        let (code, _, stderr) = poslab(&words);
        assert_eq!(code, Some(2), "{words:?}: {stderr}");
        assert!(stderr.contains(says), "{words:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        if words[0] == "table" {
            assert!(
                stderr.starts_with("error: --config "),
                "the option is named: {stderr}"
            );
        }
        assert!(!Path::new(&out).exists());
    }
}

/// A field poslab reads must be the type it expects: a wrong type was read as absent, giving
/// the default and a wrong table (`"rope_theta": "500000"` made a base-10000 table). Each is
/// refused, naming the field, in one line, by `config`, `table --config` and `figure context`.
#[test]
fn wrong_typed_or_impossible_fields_are_refused_naming_the_field() {
    let folder = tempfile::tempdir().unwrap();
    let llama: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(model("llama-2-7b.json")).unwrap()).unwrap();
    let mpt: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(model("mpt-7b.json")).unwrap()).unwrap();
    let with = |base: &serde_json::Value, path: &[&str], value: serde_json::Value| {
        let mut config = base.clone();
        let mut at = &mut config;
        for key in &path[..path.len() - 1] {
            at = at
                .as_object_mut()
                .unwrap()
                .entry(key.to_string())
                .or_insert_with(|| serde_json::json!({}));
        }
        at[path[path.len() - 1]] = value;
        config
    };
    use serde_json::json;
    let cases = [
        (
            with(&llama, &["rope_theta"], json!("500000")),
            "\"rope_theta\" is \"500000\"",
        ),
        (
            with(&llama, &["rope_theta"], json!(null)),
            "\"rope_theta\" is null",
        ),
        (
            with(&llama, &["rope_theta"], json!(true)),
            "\"rope_theta\" is true",
        ),
        (
            with(&llama, &["rope_theta"], json!([500000])),
            "\"rope_theta\" is [500000]",
        ),
        (
            with(&llama, &["rope_theta"], json!({"a": 1})),
            "\"rope_theta\" is {\"a\":1}",
        ),
        (
            with(&llama, &["rope_theta"], json!("NaN")),
            "\"rope_theta\" is \"NaN\"",
        ),
        (
            with(&llama, &["rope_theta"], json!(0.5)),
            "\"rope_theta\" is 0.5",
        ),
        (
            with(&llama, &["partial_rotary_factor"], json!(2)),
            "\"partial_rotary_factor\" is 2",
        ),
        (
            with(&llama, &["partial_rotary_factor"], json!("nan")),
            "\"partial_rotary_factor\" is \"nan\"",
        ),
        (
            with(&llama, &["rope_scaling"], json!([1, 2])),
            "\"rope_scaling\" is [1,2]",
        ),
        (
            with(&llama, &["rope_parameters"], json!("yarn")),
            "\"rope_parameters\" is \"yarn\"",
        ),
        (
            with(
                &llama,
                &["rope_scaling"],
                json!({"rope_type": "linear", "factor": "4"}),
            ),
            "\"rope_scaling.factor\" is \"4\"",
        ),
        (
            with(&llama, &["rope_scaling"], json!({"rope_type": 3})),
            "\"rope_scaling.rope_type\" is 3",
        ),
        (
            with(&mpt, &["attn_config", "alibi"], json!("yes")),
            "\"alibi\" is \"yes\"",
        ),
        (
            with(&llama, &["head_dim"], json!(2_097_152)),
            "head width of 2097152",
        ),
        (
            with(&llama, &["head_dim"], json!(1u64 << 30)),
            "head width of 1073741824",
        ),
        (
            with(&llama, &["head_dim"], json!(1u64 << 40)),
            "head width of 1099511627776",
        ),
        (with(&llama, &["head_dim"], json!(127)), "head width of 127"),
        (
            with(&llama, &["rotary_dim"], json!(256)),
            "rotates 256 of a head of 128",
        ),
    ];
    for (k, (config, says)) in cases.iter().enumerate() {
        let path = folder.path().join(format!("config{k}.json"));
        std::fs::write(&path, config.to_string()).unwrap();
        let path = path.to_str().unwrap();
        let out = folder.path().join("out.svg");
        for args in [
            vec!["config", path],
            vec![
                "table",
                "rope-cos",
                "--config",
                path,
                "--seq",
                "8",
                "-o",
                out.to_str().unwrap(),
            ],
        ] {
            let (code, stdout, stderr) = poslab(&args);
            assert_eq!(code, Some(2), "{args:?}: {stdout}{stderr}");
            assert!(stderr.contains(says), "{args:?}: {stderr}");
            assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
        }
        if !says.contains("alibi") {
            let (code, _, stderr) = poslab(&[
                "figure",
                "context",
                "--model",
                path,
                "-o",
                out.to_str().unwrap(),
            ]);
            assert_eq!(code, Some(2), "figure context: {stderr}");
            assert!(stderr.contains(says), "figure context: {stderr}");
            assert!(!out.exists());
        }
    }
}

/// A model's name is only ever shown: a terminal escape in `_name_or_path` is printed as an
/// escape, not sent to the terminal.
#[test]
fn a_name_with_control_characters_is_shown_escaped() {
    let folder = tempfile::tempdir().unwrap();
    let mut config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(model("llama-2-7b.json")).unwrap()).unwrap();
    config["_name_or_path"] = serde_json::json!("\u{1b}]0;pwned\u{7}\nsecond line");
    let path = folder.path().join("config.json");
    std::fs::write(&path, config.to_string()).unwrap();
    let (code, stdout, _) = poslab(&["config", path.to_str().unwrap()]);
    assert_eq!(code, Some(0));
    assert!(
        !stdout.contains('\u{1b}') && !stdout.contains('\u{7}'),
        "{stdout:?}"
    );
    assert!(
        stdout.contains("\\u{1b}]0;pwned\\u{7}\\nsecond line"),
        "{stdout}"
    );
}
