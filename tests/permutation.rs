//! `poslab check FILE --as permuted-from ORIGINAL`: weights permuted between RoPE's pair layouts
//! by transformers' own code (`tests/data/permute/make.py`, H = 32, K = 8): its GGUF loader's
//! reverse permute matches, in float32 and cast to bfloat16; the same loader without
//! `num_key_value_heads`, `PermuteForRope` on a grouped-query key (the query head count) and
//! its inverse are mismatches with the heads and the cause named. Then hostile input, and a
//! file larger than the memory limit checked in bounded memory.

mod common;

use std::path::Path;

use common::run_poslab;

const Q: &str = "model.layers.0.self_attn.q_proj.weight";
const K: &str = "model.layers.0.self_attn.k_proj.weight";
const META_Q: &str = "layers.0.attention.wq.weight";
const META_K: &str = "layers.0.attention.wk.weight";

fn data(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/permute")
        .join(name)
        .to_str()
        .unwrap()
        .to_owned()
}

/// `poslab check FILE --tensor Q_OR_K --as permuted-from meta --tensor META --heads 32 [...]`.
fn check(file: &str, key: bool, extra: &[&str]) -> (i32, String) {
    let (permuted, original) = if key { (K, META_K) } else { (Q, META_Q) };
    let (file, meta) = (data(file), data("meta.safetensors"));
    let mut args = vec![
        "check",
        &file,
        "--tensor",
        permuted,
        "--as",
        "permuted-from",
        &meta,
        "--tensor",
        original,
        "--heads",
        "32",
    ];
    if key {
        args.extend(["--kv-heads", "8"]);
    }
    args.extend(extra);
    run_poslab(&args)
}

#[test]
fn transformers_gguf_loader_permutes_q_and_k_right_in_float32_and_bfloat16() {
    for file in ["gguf_loader.safetensors", "gguf_loader_bf16.safetensors"] {
        for key in [false, true] {
            let (code, text) = check(file, key, &["--head-dim", "128"]);
            assert_eq!(code, 0, "{text}");
            assert!(text.starts_with("MATCH: "), "{text}");
            let heads = if key {
                "8 heads of 128"
            } else {
                "32 heads of 128"
            };
            assert!(text.contains(heads), "{text}");
            assert_eq!(
                text.contains("compared in bfloat16"),
                file.contains("bf16"),
                "{text}"
            );
        }
    }
    // The original is the loader's output permuted back: half-to-interleaved.
    let (hf, meta) = (data("gguf_loader.safetensors"), data("meta.safetensors"));
    let (code, text) = run_poslab(&[
        "check",
        &meta,
        "--tensor",
        META_K,
        "--as=permuted-from",
        &hf,
        "--tensor",
        K,
        "--heads",
        "32",
        "--kv-heads",
        "8",
        "--direction",
        "half-to-interleaved",
    ]);
    assert_eq!(code, 0, "{text}");
}

#[test]
fn a_key_permuted_with_the_query_head_count_is_named_with_its_heads() {
    let (code, text) = check("permute_for_rope.safetensors", true, &[]);
    assert_eq!(code, 1, "{text}");
    assert!(text.starts_with("MISMATCH: "), "{text}");
    assert!(text.contains("8 of 8 heads differ: 0-7"), "{text}");
    assert!(
        text.contains("permuted as 32 heads of 32 rows (the query head count) where this key projection has 8 kv heads of 128: permute k_proj with num_key_value_heads"),
        "{text}"
    );
    // Its query projection is right.
    assert_eq!(check("permute_for_rope.safetensors", false, &[]).0, 0);
    // The inverse op on k: both mistakes.
    let (code, text) = check("inverse.safetensors", true, &[]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("(the query head count)")
            && text.contains("and the other way (half-to-interleaved, not interleaved-to-half)"),
        "{text}"
    );
    let (code, text) = check("inverse.safetensors", false, &[]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("32 of 32 heads differ: 0-31")
            && text.contains("permuted half-to-interleaved, the other way"),
        "{text}"
    );
}

#[test]
fn a_loader_without_the_kv_head_count_leaves_the_rows_and_is_named() {
    for key in [false, true] {
        let (code, text) = check("gguf_loader_no_kv.safetensors", key, &[]);
        assert_eq!(code, 1, "{text}");
        assert!(text.contains("it was not permuted"), "{text}");
    }
}

#[test]
fn bad_input_is_one_line_naming_what_is_allowed() {
    let cases: [(&[&str], &str); 8] = [
        (
            &["--kv-heads", "3"],
            "--kv-heads 3 is not allowed with --heads 32",
        ),
        (
            &["--head-dim", "64"],
            "32 heads of --head-dim 64 would be 2048 rows",
        ),
        (
            &["--head-dim", "-2"],
            "--head-dim -2 is not allowed: use 2 to 1048576",
        ),
        (
            &["--atol", "1"],
            "--atol does not apply to --as permuted-from",
        ),
        (
            &["--seq", "4"],
            "--seq does not apply to --as permuted-from",
        ),
        (&["--tensor", "x"], "--tensor is given at most twice"),
        (&["--direction", "sideways"], "invalid value 'sideways'"),
        (
            &["--kv-heads", "0"],
            "--kv-heads 0 is not allowed: use 1 to 65536",
        ),
    ];
    for (extra, message) in cases {
        let (code, text) = check("gguf_loader.safetensors", false, extra);
        assert_eq!(code, 2, "{extra:?}: {text}");
        assert_eq!(text.trim_end().lines().count(), 1, "{extra:?}: {text}");
        assert!(text.contains(message), "{extra:?}: {text}");
    }
    let meta = data("meta.safetensors");
    let hf = data("gguf_loader.safetensors");
    // Each: FILE and its tensor, ORIGINAL and its tensor, then the rest.
    let words = |file: &str, tensor: &str, original: &str, theirs: &str, rest: &str| {
        let mut words = vec!["check".to_owned(), file.to_owned()];
        if !tensor.is_empty() {
            words.extend(["--tensor".to_owned(), tensor.to_owned()]);
        }
        words.extend(["--as".into(), "permuted-from".into(), original.to_owned()]);
        if !theirs.is_empty() {
            words.extend(["--tensor".to_owned(), theirs.to_owned()]);
        }
        words.extend(rest.split_whitespace().map(str::to_owned));
        words
    };
    let runs = [
        (
            words(&hf, Q, &meta, "", "--heads 32"),
            "meta.safetensors: has no tensor 'model.layers.0.self_attn.q_proj.weight'; it holds",
        ),
        (words(&hf, "", &meta, "", "--heads 32"), "holds 2 tensors"),
        (
            words(&hf, Q, "/dev/zero", META_Q, "--heads 32"),
            "not a table poslab reads",
        ),
        (
            words(&hf, K, &meta, META_Q, "--heads 32"),
            "has shape [1024, 8] where",
        ),
        (words(&hf, Q, &meta, META_Q, ""), "--heads is required"),
    ];
    for (args, message) in runs {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, text) = run_poslab(&args);
        assert_eq!(code, 2, "{args:?}: {text}");
        assert_eq!(text.trim_end().lines().count(), 1, "{args:?}: {text}");
        assert!(text.contains(message), "{args:?}: {text}");
    }
}

/// Two 128 MiB bfloat16 weights, [4096, 16384], checked under a 150 MB address-space limit:
/// neither fits, so both are streamed. The permuted file is written here by the conversion
/// script's formula (row h*d + t*d/2 + j of the result is row h*d + 2j + t of the original).
#[test]
fn weights_larger_than_memory_are_checked_a_row_at_a_time() {
    let folder = tempfile::tempdir().unwrap();
    let (rows, cols, d) = (4096usize, 16384usize, 128usize);
    let value = |row: usize, col: usize| -> [u8; 2] {
        // Distinct rows: the row's number in the first two columns.
        let v = match col {
            0 => (row / 64) as f32,
            1 => (row % 64) as f32,
            _ => ((row * 31 + col * 7) % 97) as f32 / 8.0,
        };
        half::bf16::from_f32(v).to_le_bytes()
    };
    let write = |name: &str, source: &dyn Fn(usize) -> usize| {
        let path = folder.path().join(name);
        let header = format!(
            r#"{{"w":{{"dtype":"BF16","shape":[{rows},{cols}],"data_offsets":[0,{}]}}}}"#,
            rows * cols * 2
        );
        let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        use std::io::Write;
        file.write_all(&(header.len() as u64).to_le_bytes())
            .unwrap();
        file.write_all(header.as_bytes()).unwrap();
        let mut line = vec![0u8; cols * 2];
        for r in 0..rows {
            let s = source(r);
            for c in 0..cols {
                line[2 * c..2 * c + 2].copy_from_slice(&value(s, c));
            }
            file.write_all(&line).unwrap();
        }
        file.flush().unwrap();
        path.to_str().unwrap().to_owned()
    };
    let original = write("original.safetensors", &|r| r);
    let permuted = write("permuted.safetensors", &|r| {
        let (h, within) = (r / d, r % d);
        let (t, j) = (within / (d / 2), within % (d / 2));
        h * d + 2 * j + t
    });
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_poslab"));
    command.args([
        "check",
        &permuted,
        "--as",
        "permuted-from",
        &original,
        "--heads",
        "32",
    ]);
    common::limit_resource(&mut command, libc::RLIMIT_AS, 150_000_000);
    let output = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.starts_with("MATCH: "), "{stdout}");
}

/// A bias ([rows]) is a projection's too; an empty tensor is refused. Written here: the
/// permuted bias by the conversion script's formula.
#[test]
fn a_bias_is_checked_and_an_empty_tensor_refused() {
    let folder = tempfile::tempdir().unwrap();
    let write = |name: &str, shape: &[usize], values: &[f32]| {
        let path = folder.path().join(name);
        let mut bytes = poslab::export::npy_header(shape, false, poslab::export::RealDtype::F32);
        for v in values {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        std::fs::write(&path, bytes).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let (heads, d) = (4usize, 16usize);
    let bias: Vec<f32> = (0..heads * d).map(|i| i as f32 * 0.25 - 3.0).collect();
    let permuted: Vec<f32> = (0..heads * d)
        .map(|r| {
            let (h, within) = (r / d, r % d);
            bias[h * d + 2 * (within % (d / 2)) + within / (d / 2)]
        })
        .collect();
    let original = write("b.npy", &[heads * d], &bias);
    let right = write("b_hf.npy", &[heads * d], &permuted);
    let (code, text) = run_poslab(&[
        "check",
        &right,
        "--as",
        "permuted-from",
        &original,
        "--heads",
        "4",
    ]);
    assert_eq!(code, 0, "{text}");
    let (code, text) = run_poslab(&[
        "check",
        &original,
        "--as",
        "permuted-from",
        &original,
        "--heads",
        "4",
    ]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("it was not permuted"), "{text}");
    let empty = write("empty.npy", &[0, 4], &[]);
    let (code, text) = run_poslab(&[
        "check",
        &empty,
        "--as",
        "permuted-from",
        &empty,
        "--heads",
        "4",
    ]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("has no rows"), "{text}");
}

/// `poslab table rope-permutation` indexes Meta's weights into the ones transformers' GGUF
/// loader made (q: 32 heads, k: 8 kv heads), and its inverse indexes them back.
#[test]
fn the_permutation_table_indexes_meta_weights_into_transformers_ones() {
    let folder = tempfile::tempdir().unwrap();
    for (heads, meta_name, hf_name) in [("32", META_Q, Q), ("8", META_K, K)] {
        let read = |file: &str, tensor: &str| {
            poslab::import::tables::read_table(Path::new(&data(file)), Some(tensor), u64::MAX)
                .unwrap()
        };
        let (meta, hf) = (
            read("meta.safetensors", meta_name),
            read("gguf_loader.safetensors", hf_name),
        );
        for (direction, from, to) in [
            ("interleaved-to-half", &meta, &hf),
            ("half-to-interleaved", &hf, &meta),
        ] {
            let out = folder.path().join(format!("order_{heads}_{direction}.npy"));
            let out = out.to_str().unwrap();
            let (code, text) = run_poslab(&[
                "table",
                "rope-permutation",
                "--heads",
                heads,
                "--head-dim",
                "128",
                "--direction",
                direction,
                "-o",
                out,
            ]);
            assert_eq!(code, 0, "{text}");
            let order = poslab::import::tables::read_table(Path::new(out), None, u64::MAX).unwrap();
            assert_eq!(order.shape(), [from.shape()[0]]);
            let indexed = from.select(
                ndarray::Axis(0),
                &order.iter().map(|&v| v as usize).collect::<Vec<_>>(),
            );
            assert_eq!(&indexed, to, "{heads} heads, {direction}");
        }
    }
}
