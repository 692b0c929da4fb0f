//! A table named by keywords (as the Python package passes them) is the table the command
//! line's words name, refused in the same words: both go through the same option groups.

use poslab::options::keywords::Value;
use poslab::table_args::{table_spec_from_keywords, table_spec_from_words};

fn keywords(pairs: &[(&str, Value)]) -> Vec<(String, Value)> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

fn words(text: &str) -> Vec<String> {
    text.split(' ').map(str::to_owned).collect()
}

#[test]
fn keywords_name_the_table_their_options_name() {
    let cases = [
        (
            "rope-cos",
            keywords(&[
                ("seq", Value::Int(64)),
                ("dim", Value::Int(128)),
                ("base", Value::Float(500_000.0)),
                ("layout", Value::Text("half".into())),
                ("scaling", Value::Text("llama3".into())),
                ("factor", Value::Float(8.0)),
                ("low_freq_factor", Value::Float(1.0)),
                ("high_freq_factor", Value::Float(4.0)),
                ("original_max_position_embeddings", Value::Int(8192)),
            ]),
            "rope-cos --seq 64 --dim 128 --base 500000 --layout half --scaling llama3 --factor 8 \
             --low-freq-factor 1 --high-freq-factor 4 --original-max-position-embeddings 8192",
        ),
        (
            "sinusoidal",
            keywords(&[
                (
                    "positions",
                    Value::List(vec![Value::Int(0), Value::Float(1.5)]),
                ),
                ("position_scale", Value::Text("1/3".into())),
                ("dim", Value::Int(8)),
                ("first", Value::Text("cos".into())),
                ("scale", Value::Float(0.125)),
            ]),
            "sinusoidal --positions 0,1.5 --position-scale 1/3 --dim 8 --first cos --scale 0.125",
        ),
        (
            "t5-buckets",
            keywords(&[
                ("seq", Value::Int(32)),
                ("bidirectional", Value::Bool(false)),
                ("num_buckets", Value::Int(16)),
            ]),
            "t5-buckets --seq 32 --bidirectional false --num-buckets 16",
        ),
        (
            "alibi",
            keywords(&[
                ("heads", Value::Int(6)),
                ("seq", Value::Int(20)),
                ("slope_scaling", Value::Bool(true)),
                ("train_len", Value::Int(10)),
            ]),
            "alibi --heads 6 --seq 20 --slope-scaling true --train-len 10",
        ),
    ];
    for (kind, pairs, text) in cases {
        let by_keywords = table_spec_from_keywords(kind, &pairs).unwrap();
        let by_words = table_spec_from_words(&words(text)).unwrap();
        assert_eq!(
            format!("{by_keywords:?}"),
            format!("{by_words:?}"),
            "{text}"
        );
    }
}

#[test]
fn a_bad_keyword_is_refused_in_the_command_lines_words() {
    for (kind, pairs, text) in [
        (
            "sinusoidal",
            keywords(&[
                ("seq", Value::Int(4)),
                ("dim", Value::Int(8)),
                ("heads", Value::Int(2)),
            ]),
            "sinusoidal --seq 4 --dim 8 --heads 2",
        ),
        (
            "rope-angles",
            keywords(&[("seq", Value::Int(4)), ("dim", Value::Int(7))]),
            "rope-angles --seq 4 --dim 7",
        ),
        (
            "rope-angles",
            keywords(&[
                ("seq", Value::Int(4)),
                ("dim", Value::Int(8)),
                ("start", Value::Int(-1)),
            ]),
            "rope-angles --seq 4 --dim 8 --start=-1",
        ),
        (
            "rope-cos",
            keywords(&[
                ("seq", Value::Int(4)),
                ("dim", Value::Int(8)),
                ("factor", Value::Float(2.0)),
            ]),
            "rope-cos --seq 4 --dim 8 --factor 2",
        ),
    ] {
        let by_keywords = table_spec_from_keywords(kind, &pairs).unwrap_err();
        let by_words = table_spec_from_words(&words(text)).unwrap_err();
        assert_eq!(by_keywords, by_words, "{text}");
    }
    // A keyword that is no option at all.
    let unknown = table_spec_from_keywords("sinusoidal", &keywords(&[("colour", Value::Int(1))]))
        .unwrap_err();
    assert!(unknown.contains("--colour"), "{unknown}");
}

/// Identify names a RoPE table as `poslab table` words that `poslab check` confirms make it:
/// transformers' caches from a start, its dynamic NTK cache, vLLM's cos-sin rows and
/// LongRoPE's inverse frequencies, each made by the library itself (tests/data/libraries).
#[test]
fn identify_names_rope_tables_as_words_that_make_them() {
    let data = |name: &str| {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/libraries")
            .join(name)
            .to_str()
            .unwrap()
            .to_owned()
    };
    for (file, kind, says) in [
        (
            "hf_llama31_sin_from_5000.npy",
            "rope-sin",
            &[("start", "5000"), ("scaling", "llama3")][..],
        ),
        (
            "hf_rope_cos_from_1000.npy",
            "rope-cos",
            &[("start", "1000"), ("base", "10000")][..],
        ),
        (
            "hf_dynamic_cos_from_4000.npy",
            "rope-cos",
            &[("scaling", "dynamic"), ("max_position_embeddings", "2048")][..],
        ),
        (
            "vllm_yarn_cos_sin_rows_100.npy",
            "rope-cos-sin",
            &[("format", "vllm"), ("scaling", "yarn")][..],
        ),
        ("hf_longrope_inv_freq_long.npy", "rope-inv-freq", &[][..]),
        (
            "diffusers_timestep_flip.npy",
            "sinusoidal",
            &[("first", "cos"), ("layout", "split")][..],
        ),
        (
            "xtransformers_scaled.npy",
            "sinusoidal",
            &[("scale", "0.17677")][..],
        ),
        (
            "mlx_sinusoidal_cos_first.npy",
            "sinusoidal",
            &[("spacing", "t2t"), ("scale", "0.25")][..],
        ),
        (
            "mlx_alibi_offset.npy",
            "alibi",
            &[("queries", "4"), ("mode", "symmetric")][..],
        ),
        ("bloom_full_causal_alibi.npy", "alibi", &[][..]),
        (
            "hunyuandit_rope_cos.npy",
            "rope-2d-axial",
            &[("values", "cos")][..],
        ),
        (
            "timm_axial_rope_cos_xy_half.npy",
            "rope-2d-axial",
            &[("layout", "half"), ("axis_order", "xy")][..],
        ),
        (
            "timm_sincos2d_48x40.npy",
            "sincos-2d",
            &[("grid_h", "48")][..],
        ),
        (
            "diffusers_sincos2d_6x10.npy",
            "sincos-2d",
            &[("position_scale", "2/3,2/5")][..],
        ),
        (
            "hunyuandit_crop_rope_sin.npy",
            "rope-2d-axial",
            &[("position_scale", "2/3")][..],
        ),
    ] {
        let found = poslab::cli::keywords::identify(&data(file), None, &[])
            .unwrap_or_else(|e| panic!("{file}: {}", e.message));
        assert!(found.identification.found(), "{file}");
        let (found_kind, options) = found.table.unwrap_or_else(|| {
            panic!(
                "{file}: no words for {:?}",
                found.identification.best().map(|b| &b.description)
            )
        });
        assert_eq!(found_kind, kind, "{file}");
        for (id, value) in says {
            let given = options
                .iter()
                .find(|(k, _)| k == id)
                .map(|(_, v)| format!("{v:?}"));
            assert!(
                given.as_deref().is_some_and(|g| g.contains(value)),
                "{file}: {id} = {given:?}, {options:?}"
            );
        }
    }
}

/// At the positions given to identify, the words hold those positions: transformers' cache of
/// two packed sequences and diffusers' embedding of float timesteps.
#[test]
fn identify_at_given_positions_names_them_in_its_words() {
    let data = |name: &str| {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/libraries")
            .join(name)
            .to_str()
            .unwrap()
            .to_owned()
    };
    // Qwen2-VL's M-RoPE and Flux's per-axis RoPE at the token ids given.
    for (file, ids, split) in [
        (
            "qwen2vl_mrope_cos.npy",
            "qwen2vl_position_ids.npy",
            "mrope_section",
        ),
        ("flux_rope_sin.npy", "flux_ids.npy", "axes_dim"),
    ] {
        let keywords = vec![("ids".to_owned(), Value::Text(data(ids)))];
        let found = poslab::cli::keywords::identify(&data(file), None, &keywords)
            .unwrap_or_else(|e| panic!("{file}: {}", e.message));
        let (kind, options) = found.table.unwrap_or_else(|| panic!("{file}: no words"));
        assert_eq!(kind, "rope-axes", "{file}");
        assert!(
            options.iter().any(|(k, _)| k == split),
            "{file}: {options:?}"
        );
        assert!(
            options
                .iter()
                .any(|(k, v)| k == "ids" && *v == Value::Text(data(ids))),
            "{file}: {options:?}"
        );
    }
    for (file, positions, kind) in [
        (
            "llama_packed_rope_cos.npy",
            "llama_packed_position_ids.npy",
            "rope-cos",
        ),
        (
            "diffusers_float_timestep_embedding.npy",
            "diffusers_float_timesteps.npy",
            "sinusoidal",
        ),
    ] {
        let keywords = vec![("positions".to_owned(), Value::Text(data(positions)))];
        let found = poslab::cli::keywords::identify(&data(file), None, &keywords)
            .unwrap_or_else(|e| panic!("{file}: {}", e.message));
        let (found_kind, options) = found.table.unwrap_or_else(|| {
            panic!(
                "{file}: no words for {:?}",
                found.identification.best().map(|b| &b.description)
            )
        });
        assert_eq!(found_kind, kind, "{file}");
        assert!(
            options
                .iter()
                .any(|(k, v)| k == "positions" && *v == Value::Text(data(positions))),
            "{file}: {options:?}"
        );
    }
}
