//! `poslab table rope-stretch` against its formulas written here another way: Llama 3's
//! piecewise wavelength rule, NTK's base change, linear's constant factor and LongRoPE's
//! published factors (transformers' own code is compared in python/tests/test_stretch.py).

mod common;

use common::run_poslab;
use std::f64::consts::PI;
use std::path::Path;

fn stretch(args: &[&str]) -> Vec<f64> {
    let folder = tempfile::tempdir().unwrap();
    let out = folder.path().join("stretch.npy");
    let mut words = vec!["table", "rope-stretch", "--dtype", "f64", "-o"];
    words.push(out.to_str().unwrap());
    words.extend_from_slice(args);
    let (code, text) = run_poslab(&words);
    assert_eq!(code, 0, "{text}");
    let table = poslab::import::tables::read_table(&out, None, u64::MAX).unwrap();
    table.iter().copied().collect()
}

fn assert_close(got: &[f64], expected: &[f64], rel: f64) {
    assert_eq!(got.len(), expected.len());
    for (i, (g, e)) in got.iter().zip(expected).enumerate() {
        assert!((g - e).abs() <= rel * e.abs(), "pair {i}: {g} against {e}");
    }
}

#[test]
fn llama3_leaves_short_wavelengths_slows_long_ones_by_the_factor_and_blends_between() {
    let (dim, base, factor, original) = (128usize, 500_000.0f64, 8.0, 8192.0);
    let mut args = vec!["--dim", "128"];
    args.extend(common::LLAMA31_ROPE);
    let got = stretch(&args);
    // Meta's rule, by wavelength: under original / 4 kept, over original / 1 divided by the
    // factor, between them a blend of the two frequencies.
    let expected: Vec<f64> = (0..dim / 2)
        .map(|i| {
            let wavelength = 2.0 * PI * base.powf(2.0 * i as f64 / dim as f64);
            if wavelength < original / 4.0 {
                1.0
            } else if wavelength > original {
                factor
            } else {
                let smooth = (original / wavelength - 1.0) / 3.0;
                1.0 / ((1.0 - smooth) / factor + smooth)
            }
        })
        .collect();
    assert_close(&got, &expected, 1e-12);
    assert!(got.contains(&1.0) && got.contains(&8.0) && got.iter().any(|&s| s > 1.0 && s < 8.0));
}

#[test]
fn ntk_turns_each_pair_by_the_base_change_to_its_power() {
    let (rotary, factor) = (64usize, 4.0f64);
    let got = stretch(&["--dim", "64", "--scaling", "ntk", "--factor", "4"]);
    // base' = base * factor^(R / (R - 2)), so pair i turns (base' / base)^(2i / R) times slower.
    let grown = factor.powf(rotary as f64 / (rotary as f64 - 2.0));
    let expected: Vec<f64> = (0..rotary / 2)
        .map(|i| grown.powf(2.0 * i as f64 / rotary as f64))
        .collect();
    assert_close(&got, &expected, 1e-12);
    assert_eq!(got[0], 1.0);
}

#[test]
fn linear_is_the_factor_for_every_rotated_pair_and_partial_rotary_has_fewer_pairs() {
    let got = stretch(&[
        "--dim",
        "128",
        "--partial-rotary-factor",
        "0.25",
        "--scaling",
        "linear",
        "--factor",
        "2.5",
    ]);
    assert_eq!(got, vec![2.5; 16]);
    assert_eq!(stretch(&["--dim", "8"]), vec![1.0; 4]);
}

#[test]
fn longrope_stretches_by_the_factors_phi3_publishes() {
    let config =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/models/phi-3-vision-128k-instruct.json");
    let text = std::fs::read_to_string(&config).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let list = |name: &str| -> Vec<f64> {
        json["rope_scaling"][name]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect()
    };
    let original = json["original_max_position_embeddings"].as_u64().unwrap();
    let config = config.to_str().unwrap();
    for (seq, factors) in [(original, "short_factor"), (original + 1, "long_factor")] {
        let seq = seq.to_string();
        let got = stretch(&["--config", config, "--seq", &seq]);
        assert_close(&got, &list(factors), 1e-12);
    }
}

#[test]
fn what_the_stretch_does_not_read_is_refused_in_one_line() {
    for (args, message) in [
        (
            vec!["--dim", "64", "--seq", "9"],
            "--seq changes nothing for rope-stretch under --scaling none",
        ),
        (
            vec!["--dim", "64", "--inv-freq", "1,0.5"],
            "--inv-freq does not apply to rope-stretch",
        ),
        (vec!["--dim", "63"], "--dim 63 is not allowed"),
        (vec![], "--dim is required for rope-stretch"),
        (
            vec!["--dim", "64", "--backend", "gpu"],
            "rope-stretch is computed by the CPU engine only",
        ),
        (
            vec!["--dim", "64", "--scaling", "linear"],
            "--scaling linear needs --factor",
        ),
    ] {
        let folder = tempfile::tempdir().unwrap();
        let out = folder.path().join("never.npy");
        let mut words = vec!["table", "rope-stretch", "-o", out.to_str().unwrap()];
        words.extend(args.iter().copied());
        let (code, text) = run_poslab(&words);
        assert_eq!(code, 2, "{args:?}: {text}");
        assert!(!out.exists(), "{args:?} wrote a file");
        assert!(text.contains(message), "{args:?}: {text}");
        assert_eq!(text.trim().lines().count(), 1, "{text}");
    }
}
