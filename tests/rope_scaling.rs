//! RoPE scaling and partial rotary: the inverse frequencies of every Hugging Face scaling type
//! against values computed independently, the identities each type promises, and float32
//! emulation against the float32 steps written out.

use poslab::encoding::rope_scaling::{RopeFrequencies, RopeScaling, ScalingKind};

// Hugging Face transformers' modeling_rope_utils formulas, written again in Python with NumPy
// float64 (`_compute_linear_scaling_rope_parameters`, `_compute_ntk_parameters`,
// `_compute_dynamic_ntk_parameters`, `_compute_yarn_parameters` with truncate and mscale,
// `_compute_llama3_parameters`, `_compute_longrope_parameters`), e.g.
//   def yarn(R, base, factor, orig, beta_fast=32, beta_slow=1, truncate=True, ...):
//       def cdim(rot): return (R * math.log(orig / (rot * 2 * math.pi))) / (2 * math.log(base))
//       low, high = cdim(beta_fast), cdim(beta_slow)
//       if truncate: low, high = math.floor(low), math.ceil(high)
//       low, high = max(low, 0), min(high, R - 1)
//       ramp = np.clip((np.arange(R // 2) - low) / (high - low), 0, 1)
//       pos = base ** (np.arange(0, R, 2) / R); ef = 1 - ramp
//       return (1 / (factor * pos)) * (1 - ef) + (1 / pos) * ef
// printed at pair indices 0, 5, 11, 17, 23, 31 (R = 64) and 0, 9, 20, 33, 47, 63 (R = 128).
const I64: [usize; 6] = [0, 5, 11, 17, 23, 31];
const I128: [usize; 6] = [0, 9, 20, 33, 47, 63];

struct Case {
    name: &'static str,
    rotary: usize,
    base: f64,
    seq: usize,
    scaling: RopeScaling,
    expected: [f64; 6],
    attention: f64,
}

fn scaling(kind: ScalingKind) -> RopeScaling {
    RopeScaling {
        kind,
        ..Default::default()
    }
}

fn cases() -> Vec<Case> {
    let linear = |factor| RopeScaling {
        factor: Some(factor),
        ..scaling(ScalingKind::Linear)
    };
    let ntk = |factor| RopeScaling {
        factor: Some(factor),
        ..scaling(ScalingKind::Ntk)
    };
    let dynamic = |factor, max| RopeScaling {
        factor: Some(factor),
        max_position_embeddings: Some(max),
        ..scaling(ScalingKind::Dynamic)
    };
    let yarn = |factor, original| RopeScaling {
        factor: Some(factor),
        original_max_position_embeddings: Some(original),
        ..scaling(ScalingKind::Yarn)
    };
    let llama3 = RopeScaling {
        factor: Some(8.0),
        original_max_position_embeddings: Some(8192),
        low_freq_factor: Some(1.0),
        high_freq_factor: Some(4.0),
        ..scaling(ScalingKind::Llama3)
    };
    vec![
        Case {
            name: "linear, R 64",
            rotary: 64,
            base: 10_000.0,
            seq: 16,
            scaling: linear(4.0),
            expected: [
                0.25,
                0.059284342641541386,
                0.010542412585714556,
                0.0018747355233311397,
                0.000333380358040831,
                3.33380358040831e-05,
            ],
            attention: 1.0,
        },
        Case {
            name: "linear, R 128",
            rotary: 128,
            base: 500_000.0,
            seq: 16,
            scaling: linear(8.0),
            expected: [
                0.125,
                0.019746601238630396,
                0.002070055010124306,
                0.0001440053425328476,
                8.160728247435943e-06,
                3.068925988914511e-07,
            ],
            attention: 1.0,
        },
        Case {
            name: "ntk, R 64",
            rotary: 64,
            base: 10_000.0,
            seq: 16,
            scaling: ntk(4.0),
            expected: [
                1.0,
                0.1896241075311665,
                0.0257849212599381,
                0.0035062111723950054,
                0.00047677154649791134,
                3.3338035804083106e-05,
            ],
            attention: 1.0,
        },
        Case {
            name: "ntk, R 128",
            rotary: 128,
            base: 500_000.0,
            seq: 16,
            scaling: ntk(8.0),
            expected: [
                1.0,
                0.11737334668187746,
                0.008558085867866671,
                0.000387633636510096,
                1.3838375256997599e-05,
                3.068925988914511e-07,
            ],
            attention: 1.0,
        },
        Case {
            name: "dynamic below max_position_embeddings (the default frequencies)",
            rotary: 64,
            base: 10_000.0,
            seq: 3000,
            scaling: dynamic(2.0, 4096),
            expected: [
                1.0,
                0.23713737056616555,
                0.042169650342858224,
                0.007498942093324559,
                0.001333521432163324,
                0.0001333521432163324,
            ],
            attention: 1.0,
        },
        Case {
            name: "dynamic above, R 64",
            rotary: 64,
            base: 10_000.0,
            seq: 10_000,
            scaling: dynamic(2.0, 4096),
            expected: [
                1.0,
                0.19053571060051644,
                0.026058417914347203,
                0.0035638523721281392,
                0.00048740655599549835,
                3.434421394706348e-05,
            ],
            attention: 1.0,
        },
        Case {
            name: "dynamic above, R 128",
            rotary: 128,
            base: 500_000.0,
            seq: 40_000,
            scaling: dynamic(4.0, 8192),
            expected: [
                1.0,
                0.10581291349989164,
                0.006796857446297604,
                0.0002650381956368522,
                8.052378473764426e-06,
                1.4851513292289505e-07,
            ],
            attention: 1.0,
        },
        Case {
            name: "yarn, R 64",
            rotary: 64,
            base: 10_000.0,
            seq: 16,
            scaling: yarn(4.0, 4096),
            expected: [
                1.0,
                0.23713737056616555,
                0.039736785900001015,
                0.00447052317102041,
                0.000333380358040831,
                3.33380358040831e-05,
            ],
            attention: 1.138629436111989,
        },
        Case {
            name: "yarn without truncation, R 128",
            rotary: 128,
            base: 1_000_000.0,
            seq: 16,
            scaling: RopeScaling {
                truncate: Some(false),
                ..yarn(4.0, 32_768)
            },
            expected: [
                1.0,
                0.14330125702369628,
                0.01333521432163324,
                0.00045183033491207167,
                9.810474396211341e-06,
                3.102344401879299e-07,
            ],
            attention: 1.138629436111989,
        },
        Case {
            name: "yarn as DeepSeek-V2 (mscale = mscale_all_dim)",
            rotary: 128,
            base: 10_000.0,
            seq: 16,
            scaling: RopeScaling {
                mscale: Some(0.707),
                mscale_all_dim: Some(0.707),
                ..yarn(40.0, 4096)
            },
            expected: [
                1.0,
                0.27384196342643613,
                0.056234132519034905,
                0.004438067157220334,
                2.8869549617236455e-05,
                2.8869549617236457e-06,
            ],
            attention: 1.0,
        },
        Case {
            name: "llama3, R 64",
            rotary: 64,
            base: 500_000.0,
            seq: 16,
            scaling: llama3.clone(),
            expected: [
                1.0,
                0.12868737343265052,
                0.010989528534539826,
                0.00017850781276799638,
                1.0017868402809974e-05,
                3.7673226901739635e-07,
            ],
            attention: 1.0,
        },
        Case {
            name: "llama3, R 128",
            rotary: 128,
            base: 500_000.0,
            seq: 16,
            scaling: llama3,
            expected: [
                1.0,
                0.15797280990904317,
                0.016560440080994446,
                0.00031269375038406517,
                8.160728247435943e-06,
                3.068925988914511e-07,
            ],
            attention: 1.0,
        },
        Case {
            name: "longrope, long factors (seq beyond the original length)",
            rotary: 64,
            base: 10_000.0,
            seq: 5000,
            scaling: RopeScaling {
                factor: Some(32.0),
                original_max_position_embeddings: Some(4096),
                long_factor: Some((0..32).map(|i| 1.0 + 0.05 * i as f64).collect()),
                short_factor: Some(vec![1.0; 32]),
                ..scaling(ScalingKind::Longrope)
            },
            expected: [
                1.0,
                0.18970989645293246,
                0.02720622602765047,
                0.004053482212607869,
                0.0006202425265875924,
                5.2294958124051924e-05,
            ],
            attention: 1.1902380714238083,
        },
    ]
}

#[test]
fn every_scaling_matches_hugging_faces_formulas() {
    for case in cases() {
        let freqs = RopeFrequencies {
            rotary_dim: None,
            scaling: case.scaling.clone(),
            ..Default::default()
        };
        freqs
            .validate(case.rotary, case.base)
            .unwrap_or_else(|e| panic!("{}: {e}", case.name));
        let inv = freqs.inv_freq(case.rotary, case.base, case.seq);
        assert_eq!(inv.len(), case.rotary / 2, "{}", case.name);
        let indices = if case.rotary == 64 { I64 } else { I128 };
        for (&i, &expected) in indices.iter().zip(&case.expected) {
            let error = (inv[i] - expected).abs() / expected;
            assert!(
                error < 1e-13,
                "{}: [{i}] {} vs {expected}",
                case.name,
                inv[i]
            );
        }
        let attention = freqs.attention_factor();
        assert!(
            (attention - case.attention).abs() < 1e-15,
            "{}: attention factor {attention} vs {}",
            case.name,
            case.attention
        );
    }
}

#[test]
fn each_scaling_keeps_its_promise() {
    let base = 500_000.0;
    let plain = RopeFrequencies::default().inv_freq(128, base, 1);
    // Linear: every frequency divided by the factor (positions divided by it).
    let linear = RopeFrequencies {
        rotary_dim: None,
        scaling: RopeScaling {
            factor: Some(8.0),
            ..scaling(ScalingKind::Linear)
        },
        given: None,
    };
    for (s, p) in linear.inv_freq(128, base, 1).iter().zip(&plain) {
        assert_eq!(*s, p / 8.0);
    }
    // Llama 3: wavelengths below original/high_freq_factor untouched, above
    // original/low_freq_factor divided by the factor.
    let llama3 = RopeFrequencies {
        rotary_dim: None,
        scaling: RopeScaling {
            factor: Some(8.0),
            original_max_position_embeddings: Some(8192),
            low_freq_factor: Some(1.0),
            high_freq_factor: Some(4.0),
            ..scaling(ScalingKind::Llama3)
        },
        given: None,
    };
    let (mut kept, mut divided) = (0, 0);
    for (s, p) in llama3.inv_freq(128, base, 1).iter().zip(&plain) {
        let wavelength = std::f64::consts::TAU / p;
        if wavelength < 2048.0 {
            assert_eq!(s, p);
            kept += 1;
        } else if wavelength > 8192.0 {
            assert_eq!(*s, p / 8.0);
            divided += 1;
        } else {
            assert!(*s < *p && *s > p / 8.0, "a medium frequency lies between");
        }
    }
    assert!(kept > 10 && divided > 10, "{kept} kept, {divided} divided");
    // Dynamic: the default frequencies up to max_position_embeddings, lower beyond.
    let dynamic = RopeFrequencies {
        rotary_dim: None,
        scaling: RopeScaling {
            factor: Some(2.0),
            max_position_embeddings: Some(4096),
            ..scaling(ScalingKind::Dynamic)
        },
        given: None,
    };
    assert_eq!(dynamic.inv_freq(128, base, 4096), plain);
    let longer = dynamic.inv_freq(128, base, 4097);
    assert!(longer[1..].iter().zip(&plain[1..]).all(|(l, p)| l < p));
    // Partial rotary: R = dim * factor pairs, theta_i = base^(-2i/R).
    let partial = RopeFrequencies {
        rotary_dim: Some(32),
        scaling: RopeScaling::default(),
        ..Default::default()
    };
    let inv = partial.inv_freq(128, 10_000.0, 1);
    assert_eq!(inv.len(), 16);
    assert!((inv[8] - 0.01).abs() < 1e-17, "{}", inv[8]);
}

#[test]
fn bad_scaling_parameters_are_refused_by_name() {
    let check = |scaling: RopeScaling, rotary: Option<usize>| {
        RopeFrequencies {
            rotary_dim: rotary,
            scaling,
            ..Default::default()
        }
        .validate(128, 10_000.0)
        .map_err(|e| e.to_string())
    };
    let with = |kind, factor| RopeScaling {
        factor,
        ..scaling(kind)
    };
    assert!(
        check(with(ScalingKind::Linear, None), None)
            .unwrap_err()
            .contains("--scaling linear needs --factor")
    );
    assert!(
        check(with(ScalingKind::Linear, Some(0.5)), None)
            .unwrap_err()
            .contains("--factor 0.5")
    );
    assert!(
        check(RopeScaling::default(), Some(130))
            .unwrap_err()
            .contains("--rotary-dim 130")
    );
    assert!(
        check(RopeScaling::default(), Some(31))
            .unwrap_err()
            .contains("--rotary-dim 31")
    );
    let llama3 = RopeScaling {
        factor: Some(8.0),
        original_max_position_embeddings: Some(8192),
        low_freq_factor: Some(4.0),
        high_freq_factor: Some(1.0),
        ..scaling(ScalingKind::Llama3)
    };
    assert!(
        check(llama3, None)
            .unwrap_err()
            .contains("--low-freq-factor 4")
    );
    let longrope = RopeScaling {
        original_max_position_embeddings: Some(4096),
        factor: Some(4.0),
        long_factor: Some(vec![1.0; 10]),
        short_factor: Some(vec![1.0; 64]),
        ..scaling(ScalingKind::Longrope)
    };
    assert!(
        check(longrope, None)
            .unwrap_err()
            .contains("one factor per rotated pair, 64")
    );
}
