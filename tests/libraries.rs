//! Tables made by today's libraries' own code (in `tests/data/libraries`, remade by `make.py`
//! there from the libraries installed from the registry): checked with the options a user
//! types from each library's parameters, each matches at the default tolerance, `identify`
//! names the reading, and the same check with one parameter wrong is a mismatch.

mod common;

use common::run_poslab as run;

/// One library table and how a user checks it.
struct Case {
    file: &'static str,
    /// `check`'s options, from the library's parameters.
    options: &'static [&'static str],
    /// What `check`'s verdict says (beyond MATCH), when a reading other than the plain
    /// comparison is needed.
    check_says: &'static [&'static str],
    /// What `identify` says.
    identify_says: &'static [&'static str],
    /// The options with one parameter wrong.
    wrong: &'static [&'static str],
}

fn data(file: &str) -> String {
    format!("{}/tests/data/libraries/{file}", env!("CARGO_MANIFEST_DIR"))
}

fn check(file: &str, options: &[&str]) -> (i32, String) {
    let path = data(file);
    let mut args = vec!["check", path.as_str()];
    args.extend_from_slice(options);
    run(&args)
}

fn assert_case(case: &Case) {
    let (status, text) = check(case.file, case.options);
    assert_eq!(status, 0, "{}: check {:?}\n{text}", case.file, case.options);
    assert!(text.contains("MATCH"), "{}:\n{text}", case.file);
    for said in case.check_says {
        assert!(
            text.contains(said),
            "{}: check should say {said:?}:\n{text}",
            case.file
        );
    }
    let (status, text) = check(case.file, case.wrong);
    assert_eq!(
        status, 1,
        "{}: check {:?} should mismatch\n{text}",
        case.file, case.wrong
    );
    let (status, text) = run(&["identify", &data(case.file)]);
    assert_eq!(status, 0, "{}: identify\n{text}", case.file);
    let first = text.lines().next().unwrap_or_default();
    assert!(first.starts_with("identified: "), "{}:\n{text}", case.file);
    for said in case.identify_says {
        assert!(
            first.contains(said),
            "{}: identify should say {said:?}:\n{text}",
            case.file
        );
    }
}

#[test]
fn diffusers_timestep_embeddings_match_as_diffusers_makes_them() {
    // get_timestep_embedding(arange(64), 32, flip_sin_to_cos=True, downscale_freq_shift=0).
    assert_case(&Case {
        file: "diffusers_timestep_flip.npy",
        options: &[
            "--as",
            "sinusoidal",
            "--seq",
            "64",
            "--dim",
            "32",
            "--layout",
            "split",
            "--first",
            "cos",
        ],
        check_says: &[],
        identify_says: &[
            "split layout, cos first, Vaswani spacing, base 10000",
            "positions 0..63",
        ],
        wrong: &[
            "--as",
            "sinusoidal",
            "--seq",
            "64",
            "--dim",
            "32",
            "--layout",
            "split",
        ],
    });
    // get_timestep_embedding(arange(936, 1000), 64, max_period=2000): its float32 exponent is
    // rounded before exp, 10 ulp and more from the exact frequencies.
    assert_case(&Case {
        file: "diffusers_timestep_shift1.npy",
        options: &[
            "--as",
            "sinusoidal",
            "--seq",
            "64",
            "--start",
            "936",
            "--dim",
            "64",
            "--max-period",
            "2000",
            "--spacing",
            "t2t",
            "--layout",
            "split",
        ],
        check_says: &[
            "diffusers' get_timestep_embedding (max_period=2000, downscale_freq_shift=1)",
        ],
        identify_says: &[
            "tensor2tensor spacing, base 2000,",
            "positions 936..999",
            "as diffusers' get_timestep_embedding forms it",
        ],
        wrong: &[
            "--as",
            "sinusoidal",
            "--seq",
            "64",
            "--start",
            "936",
            "--dim",
            "64",
            "--max-period",
            "10000",
            "--spacing",
            "t2t",
            "--layout",
            "split",
        ],
    });
}

#[test]
fn x_transformers_scaled_sinusoidal_embedding_matches_with_its_scale() {
    // ScaledSinusoidalEmbedding(32): split, sin first, scale dim^-0.5 (a float32 parameter).
    assert_case(&Case {
        file: "xtransformers_scaled.npy",
        options: &[
            "--as",
            "sinusoidal",
            "--seq",
            "64",
            "--dim",
            "32",
            "--layout",
            "split",
            "--scale",
            "0.17677669529663687",
        ],
        check_says: &[],
        identify_says: &[
            "split layout, sin first, Vaswani spacing, base 10000, scale 0.176776695 (dim^-0.5",
        ],
        wrong: &[
            "--as",
            "sinusoidal",
            "--seq",
            "64",
            "--dim",
            "32",
            "--layout",
            "split",
        ],
    });
}

#[test]
fn mlx_sinusoidal_encoding_matches_with_its_recipe_and_exp() {
    // SinusoidalPositionalEncoding(32, cos_first=True): frequencies 1 to 1e-4 inclusive (t2t),
    // scale sqrt(2/32), formed with MLX's own float32 exp.
    assert_case(&Case {
        file: "mlx_sinusoidal_cos_first.npy",
        options: &[
            "--as",
            "sinusoidal",
            "--seq",
            "64",
            "--dim",
            "32",
            "--layout",
            "split",
            "--spacing",
            "t2t",
            "--first",
            "cos",
            "--scale",
            "0.25",
        ],
        check_says: &["MLX's SinusoidalPositionalEncoding (min_freq=1/10000, max_freq=1)"],
        identify_says: &[
            "split layout, cos first, tensor2tensor spacing, base 10000, scale 0.250000000 (sqrt(2/dim)",
        ],
        wrong: &[
            "--as",
            "sinusoidal",
            "--seq",
            "64",
            "--dim",
            "32",
            "--layout",
            "split",
            "--spacing",
            "t2t",
            "--first",
            "cos",
            "--scale",
            "0.2501",
        ],
    });
}

/// `rope-cos-sin`, evaluated here from the formula: vLLM's `cos_sin_cache` is
/// `cat(cos(t w), sin(t w))` of the `R/2` angles of each position; pairs are `stack(cos, sin)`.
#[test]
fn rope_cos_sin_is_vllm_cache_and_torchtune_pairs_by_the_formula() {
    let (seq, dim, base, start) = (7usize, 12usize, 500.0f64, 3u64);
    let half = dim / 2;
    let w = |i: usize| base.powf(-((2 * i) as f64) / dim as f64);
    let angle = |r: usize, i: usize| (start + r as u64) as f64 * w(i);
    let dir = tempfile::tempdir().unwrap();
    for (format, shape) in [("vllm", vec![seq, dim]), ("pairs", vec![seq, half, 2])] {
        let out = dir.path().join(format!("{format}.npy"));
        let (status, text) = run(&[
            "table",
            "rope-cos-sin",
            "--format",
            format,
            "--seq",
            "7",
            "--dim",
            "12",
            "--base",
            "500",
            "--start",
            "3",
            "--dtype",
            "f64",
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(status, 0, "{text}");
        let table = poslab::import::read_npy_f64(&out, u64::MAX).unwrap();
        assert_eq!(table.shape(), shape.as_slice(), "{format}");
        let values: Vec<f64> = table.iter().copied().collect();
        for r in 0..seq {
            for i in 0..half {
                let (sin, cos) = angle(r, i).sin_cos();
                let (at_cos, at_sin) = match format {
                    "vllm" => (r * dim + i, r * dim + half + i),
                    _ => (r * dim + 2 * i, r * dim + 2 * i + 1),
                };
                assert!(
                    (values[at_cos] - cos).abs() < 1e-14,
                    "{format} cos [{r}, {i}]"
                );
                assert!(
                    (values[at_sin] - sin).abs() < 1e-14,
                    "{format} sin [{r}, {i}]"
                );
            }
        }
    }
    // Options that do not apply are refused, naming the one to use.
    let out = dir.path().join("refused.npy");
    let (status, text) = run(&[
        "table",
        "rope-cos-sin",
        "--seq",
        "4",
        "--dim",
        "8",
        "--layout",
        "half",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(status, 2, "{text}");
    assert!(text.contains("--layout"), "{text}");
}

#[test]
fn torchtune_caches_match_as_pairs() {
    // RotaryPositionalEmbeddings(64, max_seq_len=128).cache: [128, 32, 2] float32.
    assert_case(&Case {
        file: "torchtune_rope_cache.npy",
        options: &[
            "--as",
            "rope-cos-sin",
            "--format",
            "pairs",
            "--seq",
            "128",
            "--dim",
            "64",
        ],
        check_says: &["as PyTorch computes it in float32"],
        identify_says: &[
            "RoPE cos-sin cache, (cos, sin) pairs (--format pairs",
            "positions 0..127, base 10000",
        ],
        wrong: &[
            "--as",
            "rope-cos-sin",
            "--format",
            "pairs",
            "--seq",
            "128",
            "--dim",
            "64",
            "--base",
            "20000",
        ],
    });
    // Llama3ScaledRoPE(64, max_seq_len=256, base=500000) with its defaults (8, 1, 4, 8192).
    let mut llama3 = vec![
        "--as",
        "rope-cos-sin",
        "--format",
        "pairs",
        "--seq",
        "256",
        "--dim",
        "64",
    ];
    llama3.extend(common::LLAMA31_ROPE);
    let (status, text) = check("torchtune_llama3_cache.npy", &llama3);
    assert_eq!(status, 0, "{text}");
    let plain = &llama3[..10];
    let (status, text) = check("torchtune_llama3_cache.npy", plain);
    assert_eq!(
        status, 1,
        "without its scaling the cache is a mismatch:\n{text}"
    );
    // At 256 positions the slowest pairs turn by 1e-4 rad, which only their sines show:
    // identify reads each pair's angle from both values.
    let (status, text) = run(&["identify", &data("torchtune_llama3_cache.npy")]);
    assert_eq!(status, 0, "{text}");
    let first = text.lines().next().unwrap_or_default();
    for said in [
        "RoPE cos-sin cache, (cos, sin) pairs",
        "base 500000, Llama 3 scaling, factor 8, original context 8192, low_freq_factor 1, high_freq_factor 4",
    ] {
        assert!(first.contains(said), "should say {said:?}:\n{text}");
    }
}

#[test]
fn vllm_cos_sin_caches_match_under_their_scalings() {
    // RotaryEmbedding(head_size=64, rotary_dim=64, max_position_embeddings=128, base=10000).
    assert_case(&Case {
        file: "vllm_cos_sin_cache.npy",
        options: &["--as", "rope-cos-sin", "--seq", "128", "--dim", "64"],
        check_says: &["as PyTorch computes it in float32"],
        identify_says: &[
            "RoPE cos-sin cache, vLLM's layout",
            "positions 0..127, base 10000,",
        ],
        wrong: &[
            "--as",
            "rope-cos-sin",
            "--format",
            "pairs",
            "--seq",
            "128",
            "--dim",
            "64",
        ],
    });
    // YaRN x4 from 64 positions on a rotary width of 32: 256 positions, times mscale.
    let yarn: &[&str] = &[
        "--as",
        "rope-cos-sin",
        "--seq",
        "256",
        "--dim",
        "32",
        "--scaling",
        "yarn",
        "--factor",
        "4",
        "--original-max-position-embeddings",
        "64",
    ];
    let (status, text) = check("vllm_yarn_cos_sin_cache.npy", yarn);
    assert_eq!(status, 0, "{text}");
    let (status, text) = check("vllm_yarn_cos_sin_cache.npy", &yarn[..6]);
    assert_eq!(status, 1, "without YaRN the cache is a mismatch:\n{text}");
    // An original context of 64, shorter than any model's: identify still names it.
    let (status, text) = run(&["identify", &data("vllm_yarn_cos_sin_cache.npy")]);
    assert_eq!(status, 0, "{text}");
    assert!(
        text.lines().next().unwrap_or_default().contains(
            "vLLM's layout (every cosine, then every sine: --format vllm), dim 32 (the rotary part of a head), positions 0..255, base 10000, YaRN scaling, factor 4, original context 64"
        ),
        "{text}"
    );
    // NTKScalingRotaryEmbedding(scaling_factor=2): the base doubled, every frequency divided
    // by 2^(2/64), which is a linear scaling by that factor.
    let factor = 2f64.powf(2.0 / 64.0).to_string();
    let ntk = [
        "--as",
        "rope-cos-sin",
        "--seq",
        "128",
        "--dim",
        "64",
        "--base",
        "20000",
        "--scaling",
        "linear",
        "--factor",
        factor.as_str(),
    ];
    let (status, text) = check("vllm_ntk_cos_sin_cache.npy", &ntk);
    assert_eq!(status, 0, "{text}");
    let (status, text) = check("vllm_ntk_cos_sin_cache.npy", &ntk[..8]);
    assert_eq!(status, 1, "the doubled base alone is a mismatch:\n{text}");
    let (status, text) = run(&["identify", &data("vllm_ntk_cos_sin_cache.npy")]);
    assert_eq!(status, 0, "{text}");
    assert!(
        text.starts_with("identified: RoPE cos-sin cache, vLLM's layout"),
        "{text}"
    );
    assert!(text.contains("base 20000, linear scaling"), "{text}");
}

#[test]
fn alibi_windows_of_x_transformers_and_mlx_match_and_are_identified() {
    // AlibiPositionalBias(heads=4, total_heads=6)(5, 12): the last 5 of 12 queries, two heads
    // without ALiBi after the four sloped ones.
    assert_case(&Case {
        file: "xtransformers_alibi_window.npy",
        options: &[
            "--as",
            "alibi",
            "--heads",
            "4",
            "--zero-heads",
            "2",
            "--seq",
            "12",
            "--queries",
            "5",
            "--mode",
            "symmetric",
        ],
        check_says: &[],
        identify_says: &[
            "4 sloped heads and 2 of slope 0 after them (--zero-heads 2)",
            "the last 5 queries (positions 7..11) over 12 keys",
            "symmetric",
        ],
        wrong: &[
            "--as",
            "alibi",
            "--heads",
            "6",
            "--seq",
            "12",
            "--queries",
            "5",
            "--mode",
            "symmetric",
        ],
    });
    // ALiBi.create_alibi_matrix(20, 20, num_heads=6, offset=16): [1, 6, 4, 20].
    assert_case(&Case {
        file: "mlx_alibi_offset.npy",
        options: &[
            "--as",
            "alibi",
            "--heads",
            "6",
            "--seq",
            "20",
            "--queries",
            "4",
            "--mode",
            "symmetric",
        ],
        check_says: &[],
        identify_says: &[
            "6 sloped heads, the last 4 queries (positions 16..19) over 20 keys",
            "symmetric",
        ],
        wrong: &[
            "--as",
            "alibi",
            "--heads",
            "6",
            "--seq",
            "20",
            "--queries",
            "5",
            "--mode",
            "symmetric",
        ],
    });
}

/// MLX's causal ALiBi (its biases plus `create_additive_causal_mask`, the float32 minimum
/// above the diagonal rather than -inf) is what `--mode causal` computes, after softmax: check
/// says "equivalent" and exits 0, as identify reads it; symmetric is still a mismatch.
#[test]
fn mlx_causal_alibi_masked_with_the_float32_minimum_is_equivalent() {
    let causal = [
        "--as", "alibi", "--heads", "12", "--seq", "64", "--mode", "causal",
    ];
    let (status, text) = check("mlx_causal_alibi.npy", &causal);
    assert_eq!(status, 0, "{text}");
    assert!(
        text.contains("verdict: equivalent: masked with the float32 minimum (-3.4e38) where the reference has -inf, equal elsewhere"),
        "{text}"
    );
    let mut symmetric = causal;
    symmetric[7] = "symmetric";
    let (status, text) = check("mlx_causal_alibi.npy", &symmetric);
    assert_eq!(status, 1, "{text}");
    let (status, text) = run(&["identify", &data("mlx_causal_alibi.npy")]);
    assert_eq!(status, 0, "{text}");
    assert!(
        text.contains("read its float32-minimum cells (-3.4e38) as masked"),
        "{text}"
    );
    assert!(
        text.contains("identified: ALiBi biases, 12 heads, 64 positions, causal"),
        "{text}"
    );
}

/// diffusers' `Timesteps(scale=1000)` over 64 timesteps k/64 is a sinusoidal table at
/// positions k * 15.625: identify names it given those positions (a range, as identify writes
/// positions), though pair after pair turns by more than half a turn a row (an alias).
#[test]
fn diffusers_scaled_timesteps_are_identified_at_their_positions() {
    let (status, text) = run(&[
        "identify",
        &data("diffusers_timesteps_scale1000.npy"),
        "--positions",
        "0..63",
        "--position-scale",
        "15.625",
    ]);
    assert_eq!(status, 0, "{text}");
    assert!(
        text.starts_with(
            "identified: sinusoidal, split layout, sin first, tensor2tensor spacing, base 10000, d = 32, at the positions 0, 1, 2, ... (64 given), times 15.625"
        ),
        "{text}"
    );
}

/// vLLM's fixed NTK (base 10000 x 2, every frequency divided by 2^(2/64)) is read with its
/// factor as that power, not as the fitted 1.02189715989...
#[test]
fn vllm_fixed_ntk_is_read_with_its_round_power() {
    let (status, text) = run(&["identify", &data("vllm_ntk_cos_sin_cache.npy")]);
    assert_eq!(status, 0, "{text}");
    let exact = 2f64.powf(2.0 / 64.0);
    assert!(
        text.contains(&format!("base 20000, linear scaling (Position Interpolation), factor {exact} = 2^(2/64) (vLLM's fixed NTK by 2")),
        "{text}"
    );
}

/// `--queries` and `--zero-heads`, evaluated here from the rule: head h < heads has slope
/// 2^(-8(h+1)/heads) (a power of two), the others 0; query r is position seq - Q + r.
#[test]
fn alibi_queries_and_zero_heads_follow_the_rule() {
    let (heads, zero, seq, queries) = (4usize, 3usize, 9usize, 4usize);
    let dir = tempfile::tempdir().unwrap();
    for (mode, causal) in [("causal", true), ("symmetric", false)] {
        let out = dir.path().join(format!("{mode}.npy"));
        let (status, text) = run(&[
            "table",
            "alibi",
            "--heads",
            "4",
            "--zero-heads",
            "3",
            "--seq",
            "9",
            "--queries",
            "4",
            "--mode",
            mode,
            "--dtype",
            "f64",
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(status, 0, "{text}");
        let table = poslab::import::tables::read_table(&out, None, u64::MAX).unwrap();
        assert_eq!(table.shape(), &[heads + zero, queries, seq]);
        for ((h, r, k), &value) in table.indexed_iter().map(|(i, v)| ((i[0], i[1], i[2]), v)) {
            let slope = if h < heads {
                2f64.powf(-8.0 * (h + 1) as f64 / heads as f64)
            } else {
                0.0
            };
            let query = seq - queries + r;
            let expected = if causal && k > query {
                f64::NEG_INFINITY
            } else {
                -slope * query.abs_diff(k) as f64
            };
            assert!(
                value == expected,
                "{mode} [{h}, {r}, {k}]: {value} vs {expected}"
            );
        }
    }
}

/// The largest distance in float32 ulps between two float32 tables (read widened to f64).
fn f32_ulps(a: &ndarray::ArrayD<f64>, b: &ndarray::ArrayD<f64>) -> i64 {
    assert_eq!(a.shape(), b.shape());
    let ordered = |v: f64| {
        let bits = (v as f32).to_bits() as i32;
        i64::from(if bits < 0 { i32::MIN - bits } else { bits })
    };
    a.iter()
        .zip(b)
        .map(|(&x, &y)| (ordered(x) - ordered(y)).abs())
        .max()
        .unwrap_or(0)
}

/// Writes `poslab table` with `options` (float32) and reads it back.
fn table_f32(options: &[&str]) -> ndarray::ArrayD<f64> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t.npy");
    let mut args = vec!["table"];
    args.extend_from_slice(options);
    args.extend_from_slice(&["-o", out.to_str().unwrap()]);
    let (status, text) = run(&args);
    assert_eq!(status, 0, "{args:?}\n{text}");
    poslab::import::tables::read_table(&out, None, u64::MAX).unwrap()
}

#[test]
fn qwen2_vl_mrope_caches_are_reproduced_and_their_sections_named() {
    // Qwen2VLRotaryEmbedding (head_dim 32, mrope_section 4,6,6, theta 10000) at the position
    // ids get_rope_index gives 3 text tokens, a 2 x 3 grid of image tokens and 2 text tokens.
    let ids = data("qwen2vl_position_ids.npy");
    for (file, values) in [
        ("qwen2vl_mrope_cos.npy", "cos"),
        ("qwen2vl_mrope_sin.npy", "sin"),
    ] {
        let options = [
            "--as",
            "rope-axes",
            "--ids",
            ids.as_str(),
            "--mrope-section",
            "4,6,6",
            "--dim",
            "32",
            "--values",
            values,
            "--layout",
            "half",
        ];
        let (status, text) = check(file, &options);
        assert_eq!(status, 0, "{file}\n{text}");
        // PyTorch's float32 computation, as poslab emulates it, within 2 ulp of the library's.
        let ours = table_f32(&[&["rope-axes"], &options[2..], &["--arith", "torch-f32"]].concat());
        let theirs =
            poslab::import::tables::read_table(std::path::Path::new(&data(file)), None, u64::MAX)
                .unwrap();
        let ulps = f32_ulps(&ours, &theirs);
        assert!(ulps <= 2, "{file}: {ulps} ulp from transformers' values");
        // Sections in another order turn the wrong pairs.
        let wrong = [&options[..4], &["--mrope-section", "6,6,4"], &options[6..]].concat();
        let (status, text) = check(file, &wrong);
        assert_eq!(status, 1, "{file}: sections 6,6,4 should mismatch\n{text}");
        let (status, text) = run(&["identify", &data(file), "--ids", &ids]);
        assert_eq!(status, 0, "{text}");
        assert!(
            text.starts_with("identified: RoPE over 3 position axes, M-RoPE (Qwen2-VL): --mrope-section 4,6,6 --dim 32, theta 10000"),
            "{text}"
        );
        assert!(text.contains("half (the row of angles twice)"), "{text}");
        assert!(
            text.contains("pairs 0-3 by axis 0, pairs 4-9 by axis 1, pairs 10-15 by axis 2"),
            "{text}"
        );
    }
}

#[test]
fn flux_rope_is_reproduced_and_its_axes_named() {
    // diffusers' FluxPosEmbed(theta=10000, axes_dim=[8, 12, 12]) at float32 ids: 4 text tokens
    // (all 0), then a 3 x 5 latent grid [0, h, w]. It computes in float64, then rounds.
    let ids = data("flux_ids.npy");
    for (file, values) in [("flux_rope_cos.npy", "cos"), ("flux_rope_sin.npy", "sin")] {
        let options = [
            "--as",
            "rope-axes",
            "--ids",
            ids.as_str(),
            "--axes-dim",
            "8,12,12",
            "--values",
            values,
        ];
        let (status, text) = check(file, &options);
        assert_eq!(status, 0, "{file}\n{text}");
        let ours = table_f32(&[&["rope-axes"], &options[2..]].concat());
        let theirs =
            poslab::import::tables::read_table(std::path::Path::new(&data(file)), None, u64::MAX)
                .unwrap();
        let ulps = f32_ulps(&ours, &theirs);
        assert!(ulps <= 2, "{file}: {ulps} ulp from diffusers' values");
        let wrong = [&options[..], &["--layout", "half"]].concat();
        let (status, text) = check(file, &wrong);
        assert_eq!(status, 1, "{file}: the half layout should mismatch\n{text}");
        let (status, text) = run(&["identify", &data(file), "--ids", &ids]);
        assert_eq!(status, 0, "{text}");
        assert!(
            text.starts_with("identified: RoPE over 3 position axes, per-axis RoPE (Flux, diffusers' FluxPosEmbed): --axes-dim 8,12,12, theta 10000"),
            "{text}"
        );
        assert!(
            text.contains("interleaved (each angle twice in a row)"),
            "{text}"
        );
    }
}

/// `rope-axes` angles on a grid, evaluated here: token t of a 2 x 3 x 4 grid sits at
/// (t / 12, t / 4 % 3, t % 4); M-RoPE pair i turns theta^(-2i/D) times its section's position,
/// per-axis pair i of axis k turns theta^(-2i/d_k) times axis k's.
#[test]
fn rope_axes_angles_follow_both_schemes() {
    let position = |t: usize| [(t / 12) as f64, (t / 4 % 3) as f64, (t % 4) as f64];
    let mrope = table_f32(&[
        "rope-axes",
        "--grid",
        "2,3,4",
        "--mrope-section",
        "1,2,2",
        "--dim",
        "10",
        "--theta",
        "100",
        "--dtype",
        "f64",
    ]);
    let axis_of = [0, 1, 1, 2, 2];
    for t in 0..24 {
        for i in 0..5 {
            let expected = position(t)[axis_of[i]] * 100f64.powf(-((2 * i) as f64) / 10.0);
            assert!(
                (mrope[[t, i]] - expected).abs() < 1e-12,
                "M-RoPE [{t}, {i}]"
            );
        }
    }
    let per_axis = table_f32(&[
        "rope-axes",
        "--grid",
        "2,3,4",
        "--axes-dim",
        "2,4,6",
        "--base",
        "100",
        "--dtype",
        "f64",
    ]);
    let pairs: Vec<(usize, usize, usize)> = [(0usize, 2usize), (1, 4), (2, 6)]
        .iter()
        .flat_map(|&(axis, d)| (0..d / 2).map(move |i| (axis, i, d)))
        .collect();
    for t in 0..24 {
        for (j, &(axis, i, d)) in pairs.iter().enumerate() {
            let expected = position(t)[axis] * 100f64.powf(-((2 * i) as f64) / d as f64);
            assert!(
                (per_axis[[t, j]] - expected).abs() < 1e-12,
                "per-axis [{t}, {j}]"
            );
        }
    }
    // A split that does not fill --dim, and positions with the wrong number of axes, are
    // refused with the rule.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.npy");
    let (status, text) = run(&[
        "table",
        "rope-axes",
        "--grid",
        "2,3,4",
        "--mrope-section",
        "1,2,1",
        "--dim",
        "10",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(status, 2, "{text}");
    assert!(text.contains("add up to dim/2 = 5"), "{text}");
    let (status, text) = run(&[
        "table",
        "rope-axes",
        "--grid",
        "2,3",
        "--axes-dim",
        "2,4,6",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(status, 2, "{text}");
    assert!(text.contains("one column per axis"), "{text}");
}

#[test]
fn given_inverse_frequencies_replace_the_formula() {
    // rotary-embedding-torch, freqs_for="pixel", max_freq=64: linspace(1, 32, 8) * pi,
    // rotating a [12, 16] input in interleaved pairs (its rotate_half pairs 2i and 2i+1).
    let input = data("rotary_pixel_input.npy");
    let freqs = data("rotary_pixel_freqs.npy");
    let options = [
        "--as",
        "rope-apply",
        "--input",
        input.as_str(),
        "--inv-freq",
        freqs.as_str(),
        "--layout",
        "interleaved",
    ];
    let (status, text) = check("rotary_pixel_rotated.npy", &options);
    assert_eq!(status, 0, "{text}");
    let (status, text) = check("rotary_pixel_rotated.npy", &options[..4]);
    assert_eq!(
        status, 1,
        "the formula's frequencies are not these:\n{text}"
    );
    // The frequencies as given, and angles made from them, evaluated here.
    let given = table_f32(&[
        "rope-inv-freq",
        "--dim",
        "8",
        "--inv-freq",
        "1,0.5,0.3,0.1",
        "--dtype",
        "f64",
    ]);
    assert_eq!(
        given.iter().copied().collect::<Vec<_>>(),
        vec![1.0, 0.5, 0.3, 0.1]
    );
    let angles = table_f32(&[
        "rope-angles",
        "--seq",
        "5",
        "--dim",
        "8",
        "--start",
        "7",
        "--inv-freq",
        "1,0.5,0.3,0.1",
        "--dtype",
        "f64",
    ]);
    for p in 0..5 {
        for (i, w) in [1.0, 0.5, 0.3, 0.1].into_iter().enumerate() {
            assert!(
                (angles[[p, i]] - (7 + p) as f64 * w).abs() < 1e-12,
                "[{p}, {i}]"
            );
        }
    }
    // No scaling applies to frequencies given as they are, and they must fit the head.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.npy");
    for (extra, message) in [
        (
            vec!["--scaling", "linear", "--factor", "2"],
            "must be none with --inv-freq",
        ),
        (vec!["--inv-freq", "1,0,0.5"], "greater than 0"),
        (
            vec!["--inv-freq", "1,0.5,0.2,0.1,0.01"],
            "more than the head width 8",
        ),
    ] {
        let mut args = vec!["table", "rope-cos", "--seq", "3", "--dim", "8"];
        if !extra.contains(&"--inv-freq") {
            args.extend(["--inv-freq", "1,0.5"]);
        }
        args.extend(extra.iter().copied());
        args.extend(["-o", out.to_str().unwrap()]);
        let (status, text) = run(&args);
        assert_eq!(status, 2, "{args:?}: {text}");
        assert!(text.contains(message), "{args:?}: {text}");
    }
}

#[test]
fn a_padded_m2m100_table_matches_with_its_zero_row() {
    // transformers' M2M100SinusoidalPositionalEmbedding.get_embedding(1024, 64, padding_idx=1):
    // fairseq's table, row 1 zeroed; at 1024 positions its float32 rounding exceeds 8 ulp, so
    // only the float32 readings pass it, and they must know the padding row.
    let options = [
        "--as",
        "sinusoidal",
        "--seq",
        "1024",
        "--dim",
        "64",
        "--spacing",
        "t2t",
        "--layout",
        "split",
        "--zero-row",
        "1",
    ];
    let (status, text) = check("m2m100_padded_sinusoidal.npy", &options);
    assert_eq!(status, 0, "{text}");
    assert!(
        text.contains("row 1 is all zeros, as --zero-row 1 asks"),
        "{text}"
    );
    assert!(text.contains("verdict: MATCH"), "{text}");
    // Without the padding row, or with another row said to be it, the file does not match.
    let (status, text) = check("m2m100_padded_sinusoidal.npy", &options[..10]);
    assert_eq!(status, 1, "{text}");
    let other = [&options[..10], &["--zero-row", "2"]].concat();
    let (status, text) = check("m2m100_padded_sinusoidal.npy", &other);
    assert_eq!(status, 1, "{text}");
    // The same with the positions given: the rows on each side of the padding row keep theirs.
    let positions: Vec<String> = (0..1024).map(|p| p.to_string()).collect();
    let positions = positions.join(",");
    let given = [
        &options[..2],
        &["--positions", positions.as_str()],
        &options[4..],
    ]
    .concat();
    let (status, text) = check("m2m100_padded_sinusoidal.npy", &given);
    assert_eq!(status, 0, "{text}");
    assert!(text.contains("verdict: MATCH"), "{text}");
    // identify finds the padding row and names the whole table: positions 0..1023, the
    // padding row zeroed.
    let (status, text) = run(&["identify", &data("m2m100_padded_sinusoidal.npy")]);
    assert_eq!(status, 0, "{text}");
    assert!(text.contains("row 1 is all zeros"), "{text}");
    let reading = text
        .lines()
        .find(|l| l.starts_with("identified: "))
        .unwrap_or_default();
    for said in [
        "sinusoidal, split layout, sin first, tensor2tensor spacing, base 10000",
        "d = 64",
        "positions 0..1023, row 1 zeroed (--zero-row 1)",
    ] {
        assert!(reading.contains(said), "should say {said:?}:\n{text}");
    }
}

/// `check FILE options` matches, saying each of `says`; with `wrong` it is a mismatch.
fn assert_check_only(file: &str, options: &[&str], says: &[&str], wrong: &[&str]) {
    let (status, text) = check(file, options);
    assert_eq!(status, 0, "{file}: check {options:?}\n{text}");
    assert!(text.contains("MATCH"), "{file}:\n{text}");
    for said in says {
        assert!(
            text.contains(said),
            "{file}: check should say {said:?}:\n{text}"
        );
    }
    let (status, text) = check(file, wrong);
    assert_eq!(status, 1, "{file}: check {wrong:?} should mismatch\n{text}");
}

#[test]
fn diffusion_timesteps_match_at_their_float32_positions() {
    let steps = data("diffusers_float_timesteps.npy");
    // get_timestep_embedding(float32 timesteps in [0, 1000), 64, flip_sin_to_cos=True,
    // downscale_freq_shift=0): SD3's and Flux's time projection.
    let options = [
        "--as",
        "sinusoidal",
        "--positions",
        steps.as_str(),
        "--dim",
        "64",
        "--layout",
        "split",
        "--first",
        "cos",
    ];
    let mut wrong = options.to_vec();
    wrong.extend_from_slice(&["--spacing", "t2t"]);
    assert_check_only(
        "diffusers_float_timestep_embedding.npy",
        &options,
        &["float32"],
        &wrong,
    );
    // The same embedding at the timesteps rounded to whole steps is not the file.
    let (status, text) = check(
        "diffusers_float_timestep_embedding.npy",
        &[
            "--as",
            "sinusoidal",
            "--seq",
            "24",
            "--dim",
            "64",
            "--layout",
            "split",
            "--first",
            "cos",
        ],
    );
    assert_eq!(status, 1, "{text}");

    // Timesteps in [0, 1] with scale=1000 (shift 1: t2t spacing): diffusers scales the
    // float32 angle, which only that reading reproduces.
    let unit = data("diffusers_unit_timesteps.npy");
    let options = [
        "--as",
        "sinusoidal",
        "--positions",
        unit.as_str(),
        "--position-scale",
        "1000",
        "--dim",
        "32",
        "--layout",
        "split",
        "--spacing",
        "t2t",
    ];
    let mut wrong = options.to_vec();
    wrong[5] = "999";
    assert_check_only(
        "diffusers_scaled_timestep_embedding.npy",
        &options,
        &["the scale applied to the float32 angle"],
        &wrong,
    );
    // identify, given the positions, names each embedding's convention and base.
    for (file, positions, scale, says) in [
        (
            "diffusers_float_timestep_embedding.npy",
            steps.as_str(),
            None,
            "sinusoidal, split layout, cos first, Vaswani spacing, base 10000, d = 64, at the positions",
        ),
        (
            "diffusers_scaled_timestep_embedding.npy",
            unit.as_str(),
            Some("1000"),
            "sinusoidal, split layout, sin first, tensor2tensor spacing, base 10000, d = 32, at the positions",
        ),
    ] {
        let path = data(file);
        let mut args = vec!["identify", path.as_str(), "--positions", positions];
        if let Some(scale) = scale {
            args.extend_from_slice(&["--position-scale", scale]);
        }
        let (status, text) = run(&args);
        assert_eq!(status, 0, "{args:?}\n{text}");
        let first = text.lines().next().unwrap_or_default();
        assert!(first.starts_with(&format!("identified: {says}")), "{text}");
        if scale.is_some() {
            assert!(first.contains("(24 given), times 1000"), "{text}");
        }
    }
    // Positions that are not the file's rows are refused.
    let path = data("diffusers_float_timestep_embedding.npy");
    let (status, text) = run(&["identify", &path, "--positions", "0,1,2"]);
    assert_eq!(status, 2, "{text}");
    assert!(text.contains("one position per row"), "{text}");
}

#[test]
fn rope_caches_at_half_steps_and_packed_ids_match() {
    // diffusers' get_1d_rotary_pos_embed(32, 3 + 0.5 k, use_real=True): each angle twice.
    let half_steps: Vec<String> = (0..20)
        .map(|k| (3.0 + 0.5 * k as f64).to_string())
        .collect();
    let half_steps = half_steps.join(",");
    for (file, kind) in [
        ("diffusers_half_step_rope_cos.npy", "rope-cos"),
        ("diffusers_half_step_rope_sin.npy", "rope-sin"),
    ] {
        let options = [
            "--as",
            kind,
            "--positions",
            half_steps.as_str(),
            "--dim",
            "32",
            "--layout",
            "interleaved",
        ];
        let wrong = [
            "--as",
            kind,
            "--start",
            "3",
            "--seq",
            "20",
            "--dim",
            "32",
            "--layout",
            "interleaved",
        ];
        assert_check_only(file, &options, &[], &wrong);
    }
    // Llama's cache for two packed sequences, position ids [0..7, 0..9] as transformers
    // stores them ([1, 16] int64).
    let ids = data("llama_packed_position_ids.npy");
    let options = [
        "--as",
        "rope-cos",
        "--positions",
        ids.as_str(),
        "--dim",
        "64",
        "--base",
        "500000",
        "--layout",
        "half",
    ];
    let wrong = [
        "--as", "rope-cos", "--seq", "16", "--dim", "64", "--base", "500000", "--layout", "half",
    ];
    assert_check_only("llama_packed_rope_cos.npy", &options, &[], &wrong);
    // identify, given the positions, names the cache, its layout and base.
    for (file, positions, says) in [
        (
            "llama_packed_rope_cos.npy",
            ids.as_str(),
            "RoPE cos cache, half layout (Hugging Face), dim 64, base 500000, at the positions 0, 1, 2, ... (16 given)",
        ),
        (
            "diffusers_half_step_rope_cos.npy",
            half_steps.as_str(),
            "RoPE cos cache, interleaved layout, dim 32, base 10000, at the positions 3, 3.5, 4, ... (20 given)",
        ),
        (
            "diffusers_half_step_rope_sin.npy",
            half_steps.as_str(),
            "RoPE sin cache, interleaved layout, dim 32, base 10000, at the positions 3, 3.5, 4",
        ),
    ] {
        let (status, text) = run(&["identify", &data(file), "--positions", positions]);
        assert_eq!(status, 0, "{file}: {text}");
        assert!(
            text.starts_with(&format!("identified: {says}")),
            "{file}: {text}"
        );
    }
    // Scalings at given positions: Llama 3.1's sin cache at packed ids, one sequence from
    // position 4000 (make.py's offset_caches).
    let far = data("packed_far_position_ids.npy");
    let mut llama31 = vec![
        "--as",
        "rope-sin",
        "--positions",
        far.as_str(),
        "--dim",
        "64",
        "--layout",
        "half",
    ];
    llama31.extend(common::LLAMA31_ROPE);
    assert_check_only(
        "hf_llama31_sin_packed_far.npy",
        &llama31,
        &[],
        &llama31[..10],
    );
    let (status, text) = run(&[
        "identify",
        &data("hf_llama31_sin_packed_far.npy"),
        "--positions",
        far.as_str(),
    ]);
    assert_eq!(status, 0, "{text}");
    assert!(
        text.starts_with(
            "identified: RoPE sin cache, half layout (Hugging Face), dim 64, at the positions 4000, 4001, 4002, ... (64 given), base 500000, Llama 3 scaling, factor 8, original context 8192"
        ),
        "{text}"
    );
}

#[test]
fn axial_2d_rope_caches_of_timm_hunyuandit_and_rotary_embedding_torch_match() {
    // Each made on a 4 x 6 grid, dim 32, theta 10000 (make.py's axial_rope).
    let grid = [
        "--grid-h", "4", "--grid-w", "6", "--dim", "32", "--theta", "10000",
    ];
    let case = |file: &'static str,
                more: &[&'static str],
                wrong: &[&'static str],
                says: &'static [&'static str]| {
        let mut options = vec!["--as", "rope-2d-axial"];
        options.extend_from_slice(&grid);
        options.extend_from_slice(more);
        let mut wrong_options = vec!["--as", "rope-2d-axial"];
        wrong_options.extend_from_slice(&grid);
        wrong_options.extend_from_slice(wrong);
        let options: &'static [&'static str] = Vec::leak(options);
        let wrong: &'static [&'static str] = Vec::leak(wrong_options);
        assert_case(&Case {
            file,
            options,
            check_says: &[],
            identify_says: says,
            wrong,
        });
    };
    // timm's build_rotary_pos_embed: 'ij' grids, y's bands first, each value twice.
    case(
        "timm_axial_rope_sin.npy",
        &[
            "--values",
            "sin",
            "--layout",
            "interleaved",
            "--axis-order",
            "yx",
        ],
        &["--values", "sin", "--layout", "interleaved"],
        &[
            "sin",
            "4 x 6 grid",
            "y's angles first",
            "timm",
            "base 10000",
        ],
    );
    case(
        "timm_axial_rope_cos.npy",
        &[
            "--values",
            "cos",
            "--layout",
            "interleaved",
            "--axis-order",
            "yx",
        ],
        &["--values", "cos", "--layout", "half", "--axis-order", "yx"],
        &["cos", "4 x 6 grid", "y's angles first", "timm"],
    );
    // rotate_half=True with 'xy' indexing.
    case(
        "timm_axial_rope_cos_xy_half.npy",
        &["--values", "cos", "--layout", "half"],
        &["--values", "cos", "--layout", "half", "--axis-order", "yx"],
        &["cos", "x's angles first", "rotate_half"],
    );
    // HunyuanDiT: its "h" half turns with the column coordinate, so x first.
    case(
        "hunyuandit_rope_cos.npy",
        &["--values", "cos", "--layout", "interleaved"],
        &[
            "--values",
            "cos",
            "--layout",
            "interleaved",
            "--axis-order",
            "yx",
        ],
        &["cos", "x's angles first", "HunyuanDiT"],
    );
    case(
        "hunyuandit_rope_sin.npy",
        &["--values", "sin", "--layout", "interleaved"],
        &["--values", "sin", "--layout", "half"],
        &["sin", "x's angles first", "HunyuanDiT"],
    );
    // Scaled coordinates (make.py's scaled_axial_rope): timm's EVA scheme at a 6 x 4 grid
    // from a 4 x 2 pretraining grid (k / 6 * 4 and k / 4 * 2 in float32), and HunyuanDiT on
    // a 6 x 6 grid of base size 4 (torch.linspace(0, 4 * 5 / 6, 6) in float32).
    let eva: &[&'static str] = &["--grid-h", "6", "--grid-w", "4", "--axis-order", "yx"];
    let hunyuan: &[&'static str] = &["--grid-h", "6", "--grid-w", "6"];
    for (file, values, grid, right, wrong, says) in [
        (
            "timm_eva_ref_rope_cos.npy",
            "cos",
            eva,
            "2/3,1/2",
            "1/2,2/3",
            ["6 x 4 grid", "timm"],
        ),
        (
            "timm_eva_ref_rope_sin.npy",
            "sin",
            eva,
            "2/3,1/2",
            "1/2,2/3",
            ["6 x 4 grid", "timm"],
        ),
        (
            "hunyuandit_crop_rope_cos.npy",
            "cos",
            hunyuan,
            "2/3",
            "0.667",
            ["6 x 6 grid", "HunyuanDiT"],
        ),
        (
            "hunyuandit_crop_rope_sin.npy",
            "sin",
            hunyuan,
            "2/3",
            "0.667",
            ["6 x 6 grid", "HunyuanDiT"],
        ),
    ] {
        let mut options = vec!["--as", "rope-2d-axial", "--dim", "32", "--theta", "10000"];
        options.extend_from_slice(grid);
        options.extend(["--values", values, "--layout", "interleaved"]);
        let with_scale = |scale: &'static str| {
            let mut options = options.clone();
            options.extend(["--position-scale", scale]);
            Vec::leak(options) as &'static [&'static str]
        };
        let scale_said: &'static str = String::leak(format!("--position-scale {right}"));
        assert_case(&Case {
            file,
            options: with_scale(right),
            check_says: &[],
            identify_says: Vec::leak(vec![values, says[0], says[1], scale_said]),
            wrong: with_scale(wrong),
        });
    }
    // rotary-embedding-torch's get_axial_freqs(4, 6): angles, rows' axis first, each twice.
    case(
        "rotary_axial_freqs.npy",
        &["--layout", "interleaved", "--axis-order", "yx"],
        &["--layout", "interleaved"],
        &["angles", "y's angles first", "rotary-embedding-torch"],
    );
}

#[test]
fn bloom_full_causal_biases_are_equivalent_and_identified() {
    // transformers' build_alibi_tensor broadcast over the queries, masked with the float32
    // minimum: equal to -m_h (i - j) up to a constant per row.
    assert_case(&Case {
        file: "bloom_full_causal_alibi.npy",
        options: &["--as", "alibi", "--heads", "4", "--seq", "12"],
        check_says: &["equivalent", "float32 minimum"],
        identify_says: &[
            "4 heads",
            "12 positions",
            "BLOOM",
            "float32 minimum",
            "equivalent",
        ],
        wrong: &[
            "--as",
            "alibi",
            "--heads",
            "4",
            "--seq",
            "12",
            "--mode",
            "symmetric",
        ],
    });
}

#[test]
fn timm_float32_sincos_2d_tables_match_as_torch_computes_them() {
    // build_sincos2d_pos_embed([48, 40], dim=64): float32 bands and angles, which on this grid
    // move 40 values by more than 8 ulp from the exact table.
    let options: &[&str] = &[
        "--as",
        "sincos-2d",
        "--grid-h",
        "48",
        "--grid-w",
        "40",
        "--dim",
        "64",
        "--order",
        "sin-y,sin-x,cos-y,cos-x",
    ];
    assert_case(&Case {
        file: "timm_sincos2d_48x40.npy",
        options,
        check_says: &["MATCH as PyTorch computes it in float32 (--arith torch-f32"],
        identify_says: &["2D sin-cos, 48 x 40 grid, dim 64, base 10000, timm order"],
        wrong: &[
            "--as",
            "sincos-2d",
            "--grid-h",
            "48",
            "--grid-w",
            "40",
            "--dim",
            "64",
        ],
    });
    // --arith torch-f32 writes it, to 1 ulp (torch's SLEEF sin/cos against correctly rounded
    // ones); the GPU engine refuses it rather than computing something else.
    let table = table_f32(&[
        "sincos-2d",
        "--grid-h",
        "48",
        "--grid-w",
        "40",
        "--dim",
        "64",
        "--order",
        "sin-y,sin-x,cos-y,cos-x",
        "--arith",
        "torch-f32",
    ]);
    let file = poslab::import::tables::read_table(
        std::path::Path::new(&data("timm_sincos2d_48x40.npy")),
        None,
        u64::MAX,
    )
    .unwrap();
    assert!(f32_ulps(&table, &file) <= 1);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("gpu.npy");
    let (status, text) = run(&[
        "table",
        "sincos-2d",
        "--grid-h",
        "4",
        "--grid-w",
        "4",
        "--dim",
        "16",
        "--arith",
        "torch-f32",
        "--backend",
        "gpu",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(status, 2, "{text}");
    assert!(text.contains("CPU engine only"), "{text}");
}

/// The factors of `tests/data/libraries/make.py`'s small Phi-3 (16 pairs, 64 positions
/// extended to 2048), as its config lists them.
const LONGROPE_LONG: &str =
    "1.07,1.12,1.15,1.42,1.57,1.8,2.13,2.13,3.01,5.91,6.95,9.07,11.13,15.41,19.81,24.9373893737793";
const LONGROPE_SHORT: &str = "1,1,1.02,1.05,1.05,1.1,1.15,1.25,1.4,1.55,1.7,1.9,2.1,2.35,2.6,2.9";

#[test]
fn longrope_of_a_model_poslab_does_not_ship_matches_and_its_factors_are_recovered() {
    let scaling = [
        "--base",
        "10000",
        "--scaling",
        "longrope",
        "--original-max-position-embeddings",
        "64",
        "--max-position-embeddings",
        "2048",
    ];
    let lists =
        |long: &'static str, short: &'static str| ["--long-factor", long, "--short-factor", short];
    let cases: [(&str, &[&str], &[&str]); 3] = [
        // Phi-3's cos cache over 256 positions: beyond 64, so the long factors, times
        // sqrt(1 + ln 32 / ln 64).
        (
            "hf_longrope_cos_long_256.npy",
            &[
                "--as", "rope-cos", "--seq", "256", "--dim", "32", "--layout", "half",
            ],
            &[
                // Every factor the file pins to 0.1%; the slowest pairs hardly turn in 256
                // positions, and are said to.
                "base 10000, LongRoPE scaling, factors 1.07,1.12,1.15,1.42,1.57,1.8,2.13,2.13,3.01,5.91,6.95,",
                "pairs 11 to 15 turn too little over these positions",
                "attention factor 1.3540064 = sqrt(1 + ln s / ln L)",
                "L 64 and s 32 (its 256 positions beyond L: these are the long factors",
            ],
        ),
        // Its sin cache over 64 positions: the short factors, every one pinned.
        (
            "hf_longrope_sin_short_64.npy",
            &[
                "--as", "rope-sin", "--seq", "64", "--dim", "32", "--layout", "half",
            ],
            &[
                "base 10000, LongRoPE scaling, factors 1,1,1.02,1.05,1.05,1.1,1.15,1.25,1.4,1.55,1.7,1.9,2.1,2.35,2.6,2.9 (each the roundest",
                "L 64 and s 32 (the file's 64 positions within L: these are the short factors",
            ],
        ),
        // The inverse frequencies beyond 64 positions: the long factors, the last one as it
        // is (not round) to 7 digits.
        (
            "hf_longrope_inv_freq_long.npy",
            &["--as", "rope-inv-freq", "--dim", "32", "--seq", "128"],
            &[
                &format!(
                    "base 10000, LongRoPE scaling, factors {}",
                    "1.07,1.12,1.15,1.42,1.57,1.8,2.13,2.13,3.01,5.91,6.95,9.07,11.13,15.41,19.81,24.93739 (15 of 16 round"
                ),
                "does not say whether these are the short factors or the long ones",
            ],
        ),
    ];
    for (file, kind, says) in cases {
        let options = |long, short| -> Vec<&str> {
            kind.iter()
                .chain(&scaling)
                .chain(&lists(long, short))
                .copied()
                .collect()
        };
        let (status, text) = check(file, &options(LONGROPE_LONG, LONGROPE_SHORT));
        assert_eq!(status, 0, "{file}: {text}");
        assert!(text.contains("MATCH"), "{file}: {text}");
        // The lists swapped: the other factors at this length.
        let (status, text) = check(file, &options(LONGROPE_SHORT, LONGROPE_LONG));
        assert_eq!(status, 1, "{file} with the lists swapped: {text}");
        let (status, text) = run(&["identify", &data(file)]);
        assert_eq!(status, 0, "{file}: {text}");
        let first = text.lines().next().unwrap_or_default();
        assert!(first.starts_with("identified: "), "{file}: {text}");
        for said in says {
            assert!(first.contains(said), "{file}: should say {said:?}:\n{text}");
        }
    }
}

/// Writes the f64 inverse frequencies `values` with `--inv-freq` and identifies them.
fn identify_frequencies(values: &[f64]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("freqs.npy");
    let list = values
        .iter()
        .map(|v| format!("{v:e}"))
        .collect::<Vec<_>>()
        .join(",");
    let dim = (2 * values.len()).to_string();
    let (status, text) = run(&[
        "table",
        "rope-inv-freq",
        "--dim",
        &dim,
        "--inv-freq",
        &list,
        "--dtype",
        "f64",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(status, 0, "{text}");
    // 0 identified, 1 no match.
    let (status, text) = run(&["identify", out.to_str().unwrap()]);
    assert!(status == 0 || status == 1, "{text}");
    text
}

#[test]
fn longrope_factors_are_read_under_their_own_base_and_never_from_arbitrary_frequencies() {
    // base 500000: 1 / (f_i · 500000^(2i/16)), evaluated here. Base 1000000 keeps these
    // factors at least 1 and non-decreasing too, but not round.
    let factors = [1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0];
    let values: Vec<f64> = factors
        .iter()
        .enumerate()
        .map(|(i, f)| 1.0 / (f * 500_000f64.powf(i as f64 / 8.0)))
        .collect();
    let text = identify_frequencies(&values);
    assert!(
        text.starts_with(
            "identified: RoPE inverse frequencies, dim 16, base 500000, LongRoPE scaling, factors 1,1.25,1.5,2,3,4,6,8 (each"
        ),
        "{text}"
    );
    // Factors that fall from one pair to the next under base 10000 (LongRoPE only grows
    // them); under base 1000 they grow, but are not round: no LongRoPE reading.
    let values: Vec<f64> = [1.0, 1.5, 1.2, 2.0]
        .iter()
        .enumerate()
        .map(|(i, f)| 1.0 / (f * 10_000f64.powf(i as f64 / 4.0)))
        .collect();
    let text = identify_frequencies(&values);
    assert!(!text.contains("LongRoPE"), "{text}");
    // Factors below 1 (extrapolation) are no LongRoPE list either.
    let values: Vec<f64> = [1.0, 0.5, 0.5, 0.5]
        .iter()
        .enumerate()
        .map(|(i, f)| 1.0 / (f * 10_000f64.powf(i as f64 / 4.0)))
        .collect();
    let text = identify_frequencies(&values);
    assert!(!text.contains("LongRoPE"), "{text}");
}

#[test]
fn diffusers_scaled_2d_sincos_grids_match_with_their_float32_coordinates() {
    // get_2d_sincos_pos_embed(32, grid, base_size, interpolation_scale): coordinates
    // k / (grid / base_size) / interpolation_scale in float32, then a float64 table.
    let cases: [(&str, &[&str], &str, bool); 4] = [
        // SD3's shape, 12 over base 4: thirds, as returned (float64) and as models keep it.
        (
            "diffusers_sincos2d_thirds_f64.npy",
            &[
                "--grid-h",
                "12",
                "--grid-w",
                "12",
                "--position-scale",
                "1/3",
            ],
            "--position-scale 1/3",
            true,
        ),
        (
            "diffusers_sincos2d_thirds_f32.npy",
            &[
                "--grid-h",
                "12",
                "--grid-w",
                "12",
                "--position-scale",
                "1/3",
            ],
            "--position-scale 1/3",
            false,
        ),
        // PixArt's interpolation_scale 2.
        (
            "diffusers_sincos2d_pixart.npy",
            &["--grid-h", "8", "--grid-w", "8", "--position-scale", "0.5"],
            "--position-scale 1/2",
            false,
        ),
        // 6 high and 10 wide over base 4: 4/6 down, 4/10 across.
        (
            "diffusers_sincos2d_6x10.npy",
            &[
                "--grid-h",
                "6",
                "--grid-w",
                "10",
                "--position-scale",
                "4/6,4/10",
            ],
            "--position-scale 2/3,2/5",
            true,
        ),
    ];
    for (file, options, identified, float64) in cases {
        let mut right = vec!["--as", "sincos-2d", "--dim", "32"];
        right.extend_from_slice(options);
        let (status, text) = check(file, &right);
        assert_eq!(status, 0, "{file}: {text}");
        assert!(text.contains("MATCH"), "{file}: {text}");
        // A float64 file holds the float32 coordinates to the last bit: only that reading
        // passes its strict rule.
        assert_eq!(
            text.contains("coordinates formed in float32 as diffusers' get_2d_sincos_pos_embed"),
            float64,
            "{file}: {text}"
        );
        // Unscaled, or the axes' scales swapped: a mismatch.
        let unscaled = &right[..right.len() - 2];
        let (status, text) = check(file, unscaled);
        assert_eq!(status, 1, "{file} unscaled: {text}");
        if options[5].contains(',') {
            let mut swapped = right.clone();
            *swapped.last_mut().unwrap() = "4/10,4/6";
            let (status, text) = check(file, &swapped);
            assert_eq!(status, 1, "{file} swapped: {text}");
        }
        let (status, text) = run(&["identify", &data(file)]);
        assert_eq!(status, 0, "{file}: {text}");
        let first = text.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("identified: 2D sin-cos") && first.contains(identified),
            "{file}: {text}"
        );
        if float64 {
            assert!(
                first.contains("formed in float32 as diffusers forms them"),
                "{file}: {text}"
            );
        }
    }
}

#[test]
fn keras_hub_sine_encoding_and_rotary_embedding_match() {
    // SinePositionEncoding(max_wavelength=10000) on [1, 64, 32]: sin in even columns, cos in
    // odd, its float32 timescales (1/10000) ** (2 (i // 2) / 32) read as its own frequencies.
    assert_case(&Case {
        file: "keras_sine_position_encoding.npy",
        options: &[
            "--as",
            "sinusoidal",
            "--seq",
            "64",
            "--dim",
            "32",
            "--layout",
            "interleaved",
        ],
        check_says: &["float32 from float32 frequencies its library's exp or pow formed"],
        identify_says: &["sinusoidal, interleaved layout, sin first, Vaswani spacing, base 10000"],
        wrong: &[
            "--as",
            "sinusoidal",
            "--seq",
            "64",
            "--dim",
            "32",
            "--layout",
            "split",
        ],
    });
    // RotaryEmbedding rotates half pairs (its frequencies repeated as two halves), plain at
    // max_wavelength 10000 and with rope_type="linear", scaling_factor 4 at 500000.
    let input = data("keras_rope_input.npy");
    for (file, extra) in [
        ("keras_rope_rotated.npy", &[][..]),
        (
            "keras_rope_linear4_rotated.npy",
            &["--base", "500000", "--scaling", "linear", "--factor", "4"][..],
        ),
    ] {
        let mut options = vec!["--as", "rope-apply", "--input", input.as_str()];
        options.extend_from_slice(extra);
        let (status, text) = check(file, &[options.as_slice(), &["--layout", "half"]].concat());
        assert_eq!(status, 0, "{file}: {text}");
        assert!(text.contains("MATCH"), "{file}: {text}");
        let (status, text) = check(
            file,
            &[options.as_slice(), &["--layout", "interleaved"]].concat(),
        );
        assert_eq!(status, 1, "{file} in interleaved pairs: {text}");
    }
}

#[test]
fn caches_of_a_window_that_does_not_start_at_zero_are_read_with_their_start() {
    // make.py's offset_caches: transformers' cos from position 1000, Llama 3.1's sin and cos
    // from 5000, and vLLM's YaRN cos_sin_cache rows 100..163. The wrong start is a mismatch.
    let mut llama31 = vec!["--layout", "half"];
    llama31.extend(common::LLAMA31_ROPE);
    let yarn = [
        "--scaling",
        "yarn",
        "--factor",
        "4",
        "--original-max-position-embeddings",
        "64",
    ];
    let dynamic = [
        "--layout",
        "half",
        "--scaling",
        "dynamic",
        "--factor",
        "2",
        "--max-position-embeddings",
        "2048",
    ];
    for (file, kind, dim, more, start, says) in [
        (
            "hf_rope_cos_from_1000.npy",
            "rope-cos",
            "64",
            &["--layout", "half"][..],
            "1000",
            &[
                "cos cache",
                "half layout",
                "positions 1000..1063 (--start 1000)",
                "base 10000",
            ][..],
        ),
        (
            "hf_llama31_sin_from_5000.npy",
            "rope-sin",
            "64",
            &llama31[..],
            "5000",
            &[
                "sin cache",
                "positions 5000..5063 (--start 5000)",
                "base 500000, Llama 3 scaling, factor 8, original context 8192",
            ],
        ),
        // Its cos cache: flat on the slow pairs so far out, so the slowest frequency (and the
        // factor fitted from it alone) is pinned loosely; it was read as LongRoPE's factors.
        (
            "hf_llama31_cos_from_5000.npy",
            "rope-cos",
            "64",
            &llama31[..],
            "5000",
            &[
                "cos cache",
                "half layout",
                "positions 5000..5063 (--start 5000)",
                "base 500000, Llama 3 scaling, factor 8, original context 8192",
            ],
        ),
        // Dynamic NTK from position 4000 of a model trained on 2048: transformers grows the
        // base from the largest position + 1 (4064), which identify now reads too (it read the
        // 64 rows and found only "a base that is not round").
        (
            "hf_dynamic_cos_from_4000.npy",
            "rope-cos",
            "64",
            &dynamic[..],
            "4000",
            &[
                "positions 4000..4063 (--start 4000)",
                "dynamic NTK scaling, factor 2, max_position_embeddings 2048 (at length 4064)",
            ],
        ),
        (
            "vllm_yarn_cos_sin_rows_100.npy",
            "rope-cos-sin",
            "32",
            &yarn[..],
            "100",
            &[
                "vLLM's layout",
                "positions 100..163 (--start 100)",
                "YaRN scaling, factor 4, original context 64",
            ],
        ),
    ] {
        let options = |start: &'static str| -> &'static [&'static str] {
            let mut options = vec!["--as", kind, "--seq", "64", "--dim", dim, "--start", start];
            options.extend_from_slice(more);
            Vec::leak(options)
        };
        let wrong = if start == "1000" { "1001" } else { "1000" };
        assert_case(&Case {
            file,
            options: options(start),
            check_says: &[],
            identify_says: says,
            wrong: options(wrong),
        });
    }
}

/// `--as rope-apply` of make.py's rotation_at_positions: its input `input`, at its positions.
fn rotation_options(input: &str) -> Vec<String> {
    [
        "--as".to_owned(),
        "rope-apply".to_owned(),
        "--input".to_owned(),
        data(input),
        "--positions".to_owned(),
        data("hf_rotation_positions.npy"),
    ]
    .to_vec()
}

#[test]
fn a_float32_rotation_at_given_positions_is_read_as_pytorch_computes_it() {
    // make.py's rotation_at_positions: transformers' Llama rotation of one head in float32 at
    // positions up to 131071. Its float32 angles are 6e-3 off at 10^5: the exact rotation does
    // not match, PyTorch's float32 one does (it was refused at --positions, accepted at
    // --start, before issue 48).
    let options = rotation_options("hf_rotation_input.npy");
    let options: Vec<&str> = options.iter().map(String::as_str).collect();
    let (status, text) = check(
        "hf_rotation_rotated.npy",
        &[&options[..], &["--layout", "half", "--base", "500000"]].concat(),
    );
    assert_eq!(status, 0, "{text}");
    assert!(
        text.contains("MATCH as PyTorch computes it in float32"),
        "{text}"
    );
    // The other pairing, or the base Llama 2 used, is no match.
    for wrong in [
        &["--layout", "interleaved"][..],
        &["--layout", "half", "--base", "10000"],
    ] {
        let (status, text) = check("hf_rotation_rotated.npy", &[&options[..], wrong].concat());
        assert_eq!(status, 1, "{wrong:?}: {text}");
    }
}

#[test]
fn a_float16_rotation_is_read_as_pytorch_computes_it_then_stores_it() {
    // make.py's rotation_at_positions in float16: cos and sin computed in float32 and cast,
    // the products in float16. At 131071 its float32 angles alone are off by more than 8
    // float16 ulps of the exact rotation; of PyTorch's float32 one it is within them.
    let mut options = rotation_options("hf_rotation_input_f16.npy");
    options.extend(["--layout".to_owned(), "half".to_owned()]);
    let options: Vec<&str> = options.iter().map(String::as_str).collect();
    let (status, text) = check(
        "hf_rotation_rotated_f16.npy",
        &[&options[..], &["--base", "500000"]].concat(),
    );
    assert_eq!(status, 0, "{text}");
    assert!(
        text.contains("as PyTorch computes it in float32 (--arith torch-f32), stored in float16"),
        "{text}"
    );
    let (status, text) = check(
        "hf_rotation_rotated_f16.npy",
        &[&options[..], &["--base", "10000"]].concat(),
    );
    assert_eq!(status, 1, "{text}");
}
