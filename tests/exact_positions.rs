//! Tables at large starts against values computed independently in 400-bit arithmetic
//! (mpmath: `sin(p * base^(-2i/d))` with the frequency and the product exact): both engines
//! were 5e-5 off at 2^40 and 0.37 near 2^53 when angles were `p * w` in f64.

use poslab::encoding::PairLayout;
use poslab::encoding::rope::{CachePart, RopeParams};
use poslab::encoding::rope_scaling::{RopeFrequencies, RopeScaling, ScalingKind};
use poslab::encoding::sinusoidal::SinusoidalParams;
use poslab::engine::{TableSpec, cpu};

/// Rows `start` and `start + 1` of a sinusoidal table, dim 8, base 10000 (interleaved).
const SINUSOIDAL: [(u64, [[f64; 8]; 2]); 3] = [
    (
        4294967296,
        [
            [
                -0.4619865795138349,
                -0.886886915197821,
                -0.35431612732587664,
                -0.9351257038049982,
                -0.9993441903354107,
                0.036210347179536265,
                0.9871152852869154,
                -0.16001066699733404,
            ],
            [
                -0.9959020201362075,
                -0.09043874329412574,
                -0.4459028165195494,
                -0.8950813807805037,
                -0.9989321261055182,
                0.046201812024086714,
                0.9869547810889849,
                -0.16099770211277492,
            ],
        ],
    ),
    (
        1099511627776,
        [
            [
                -0.40570501153282873,
                -0.914004071991557,
                -0.9991275513998706,
                0.041762854712039665,
                0.15230704357016212,
                -0.988333225424966,
                -0.29443958213616656,
                -0.9556700960433363,
            ],
            [
                -0.9883112598106106,
                -0.15244951207387902,
                -0.989966746812078,
                0.14130053151460897,
                0.14241626074857563,
                -0.9898068542268202,
                -0.29539510485315273,
                -0.9553751786752652,
            ],
        ],
    ),
    (
        4503599627370496,
        [
            [
                0.8742173026236351,
                -0.4855348677422206,
                0.9943467543128597,
                0.10618160004201058,
                0.8957856635125717,
                -0.4444862709300949,
                -0.8691581023699702,
                0.49453431942043463,
            ],
            [
                0.06377812111975718,
                -0.9979641031953171,
                0.999979634189202,
                0.00638210050294893,
                0.8912960859740127,
                -0.453421754140012,
                -0.8686631335539572,
                0.49540323011080584,
            ],
        ],
    ),
];

/// Rows of the rope-cos cache (half layout), dim 8, base 500000, linear scaling by 8.
const LINEAR_COS: [(u64, [[f64; 8]; 2]); 3] = [
    (
        4294967296,
        [
            [
                -0.9451738260608966,
                0.7621416696106186,
                -0.8457924232723885,
                -0.01885151955123185,
                -0.9451738260608966,
                0.7621416696106186,
                -0.8457924232723885,
                -0.01885151955123185,
            ],
            [
                -0.9785140016629175,
                0.7590899438845946,
                -0.8458867225649618,
                -0.01885816623932215,
                -0.9785140016629175,
                0.7590899438845946,
                -0.8458867225649618,
                -0.01885816623932215,
            ],
        ],
    ),
    (
        1099511627776,
        [
            [
                -0.9425943741386156,
                -0.3626377081434954,
                0.9005017236330675,
                0.113639889804371,
                -0.9425943741386156,
                -0.3626377081434954,
                0.9005017236330675,
                0.113639889804371,
            ],
            [
                -0.9768738051152583,
                -0.35825294318798834,
                0.9004248377856079,
                0.11364649460686665,
                -0.9768738051152583,
                -0.35825294318798834,
                0.9004248377856079,
                0.11364649460686665,
            ],
        ],
    ),
    (
        4503599627370496,
        [
            [
                0.9664615627795423,
                0.8684568513760406,
                -0.14101050181364036,
                0.04978631297057801,
                0.9664615627795423,
                0.8684568513760406,
                -0.14101050181364036,
                0.04978631297057801,
            ],
            [
                0.9269030267614048,
                0.8661167966806328,
                -0.14118550996970258,
                0.04977967334367945,
                0.9269030267614048,
                0.8661167966806328,
                -0.14118550996970258,
                0.04977967334367945,
            ],
        ],
    ),
];

/// Rows of rope-angles, dim 8, base 10000: `p * 10^-i`.
const ANGLES: [(u64, [[f64; 4]; 2]); 3] = [
    (
        4294967296,
        [
            [4294967296.0, 429496729.6, 42949672.96, 4294967.296],
            [4294967297.0, 429496729.7, 42949672.97, 4294967.297],
        ],
    ),
    (
        1099511627776,
        [
            [
                1099511627776.0,
                109951162777.6,
                10995116277.76,
                1099511627.776,
            ],
            [
                1099511627777.0,
                109951162777.7,
                10995116277.77,
                1099511627.777,
            ],
        ],
    ),
    (
        4503599627370496,
        [
            [
                4503599627370496.0,
                450359962737049.6,
                45035996273704.96,
                4503599627370.496,
            ],
            [
                4503599627370497.0,
                450359962737049.7,
                45035996273704.97,
                4503599627370.497,
            ],
        ],
    ),
];

fn values(spec: &TableSpec) -> Vec<f64> {
    cpu::compute(spec)
        .unwrap()
        .into_real()
        .iter()
        .copied()
        .collect()
}

fn assert_within(got: &[f64], expected: &[f64], tolerance: impl Fn(f64) -> f64, what: &str) {
    assert_eq!(got.len(), expected.len());
    for (k, (&g, &e)) in got.iter().zip(expected).enumerate() {
        assert!(
            (g - e).abs() <= tolerance(e),
            "{what} element {k}: {g:e} vs the 400-bit value {e:e}"
        );
    }
}

#[test]
fn sinusoidal_and_rope_values_are_exact_at_large_starts() {
    for (start, rows) in SINUSOIDAL {
        let spec = TableSpec::Sinusoidal(SinusoidalParams {
            seq: 2,
            dim: 8,
            base: 10_000.0,
            start,
            ..Default::default()
        });
        let expected: Vec<f64> = rows.iter().flatten().copied().collect();
        // A few ulp of values of magnitude 1.
        assert_within(
            &values(&spec),
            &expected,
            |_| 1e-15,
            &format!("sinusoidal at {start}"),
        );
    }
    for (start, rows) in LINEAR_COS {
        let spec = TableSpec::RopeCache {
            params: RopeParams {
                seq: 2,
                dim: 8,
                base: 500_000.0,
                start,
            },
            freqs: RopeFrequencies {
                rotary_dim: None,
                scaling: RopeScaling {
                    kind: ScalingKind::Linear,
                    factor: Some(8.0),
                    ..Default::default()
                },
                given: None,
            },
            layout: PairLayout::Half,
            part: CachePart::Cos,
        };
        let expected: Vec<f64> = rows.iter().flatten().copied().collect();
        assert_within(
            &values(&spec),
            &expected,
            |_| 1e-15,
            &format!("rope-cos at {start}"),
        );
    }
    for (start, rows) in ANGLES {
        let spec = TableSpec::RopeAngles {
            params: RopeParams {
                seq: 2,
                dim: 8,
                base: 10_000.0,
                start,
            },
            freqs: Default::default(),
        };
        let expected: Vec<f64> = rows.iter().flatten().copied().collect();
        // Rounded once: within one ulp of the exact angle.
        assert_within(
            &values(&spec),
            &expected,
            |e| e.abs() * f64::EPSILON,
            &format!("rope-angles at {start}"),
        );
    }
}
