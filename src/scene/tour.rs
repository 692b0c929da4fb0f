//! What the tour "From counting to sinusoids" draws, step by step: the guesses a position code
//! goes through (the index, the index over the length, binary, sines at binary and at geometric
//! frequencies) up to the sinusoidal table, its translation matrix `T(Δ)`, the dot product of
//! its rows and the columns that turn within a length. Each step is a [`TourFrame`]: a formula,
//! a few sentences, one line of numbers measured on the settings, and panels of curves or
//! heatmaps. The app's view and its figure both draw these frames. Every number comes from
//! `encoding`.

use crate::encoding::PairLayout;
use std::ops::RangeInclusive;

use ndarray::Array2;
use serde::{Deserialize, Serialize};

use crate::encoding::binary::{self, BinaryParams};
use crate::encoding::guesses;
use crate::encoding::sinusoidal::{self, SinusoidalParams, Spacing};
use crate::encoding::{ParamError, check_base, check_count};

/// Widths the tour offers (even: the final table is made of pairs).
pub const DIM_RANGE: RangeInclusive<usize> = 2..=512;
/// Lengths the tour offers.
pub const LENGTH_RANGE: RangeInclusive<usize> = 8..=4096;
/// Bases the tour offers.
pub const BASE_RANGE: RangeInclusive<f64> = 2.0..=1_000_000.0;
/// Shifts the translation step offers.
pub const DELTA_RANGE: RangeInclusive<u64> = 0..=10_000;

/// The steps of the tour, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum TourStep {
    #[default]
    Counting,
    Normalised,
    Binary,
    BinarySines,
    GeometricSines,
    Pairs,
    Translation,
    DotProduct,
    Dials,
}

/// Which settings a step reads (the others' controls are disabled there).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Uses {
    pub dim: bool,
    pub base: bool,
    pub delta: bool,
    pub anchor: bool,
    pub pair: bool,
}

impl TourStep {
    pub const ALL: [TourStep; 9] = [
        TourStep::Counting,
        TourStep::Normalised,
        TourStep::Binary,
        TourStep::BinarySines,
        TourStep::GeometricSines,
        TourStep::Pairs,
        TourStep::Translation,
        TourStep::DotProduct,
        TourStep::Dials,
    ];

    /// 0 for the first step.
    pub fn index(self) -> usize {
        Self::ALL.iter().position(|&s| s == self).unwrap_or(0)
    }

    /// Step `number` (1 for the first), as `poslab figure tour --step` counts.
    pub fn from_number(number: usize) -> Option<Self> {
        number
            .checked_sub(1)
            .and_then(|k| Self::ALL.get(k).copied())
    }

    pub fn next(self) -> Option<Self> {
        Self::ALL.get(self.index() + 1).copied()
    }

    pub fn previous(self) -> Option<Self> {
        self.index().checked_sub(1).map(|k| Self::ALL[k])
    }

    /// The step's name in the step list, numbered.
    pub fn title(self) -> String {
        let name = match self {
            TourStep::Counting => "Count the positions",
            TourStep::Normalised => "Divide by the length",
            TourStep::Binary => "Count in binary",
            TourStep::BinarySines => "Smooth each bit into a sine",
            TourStep::GeometricSines => "Slow the dials down",
            TourStep::Pairs => "Pair each sine with a cosine",
            TourStep::Translation => "A shift is a matrix: T(Δ)",
            TourStep::DotProduct => "Near positions look alike",
            TourStep::Dials => "Which dials turn",
        };
        format!("{}. {name}", self.index() + 1)
    }

    pub fn uses(self) -> Uses {
        let none = Uses {
            dim: false,
            base: false,
            delta: false,
            anchor: false,
            pair: false,
        };
        match self {
            TourStep::Counting | TourStep::Normalised => none,
            TourStep::Binary | TourStep::BinarySines => Uses { dim: true, ..none },
            TourStep::GeometricSines | TourStep::Dials => Uses {
                dim: true,
                base: true,
                ..none
            },
            TourStep::Pairs => Uses {
                dim: true,
                base: true,
                pair: true,
                ..none
            },
            TourStep::Translation => Uses {
                dim: true,
                base: true,
                delta: true,
                anchor: true,
                pair: false,
            },
            TourStep::DotProduct => Uses {
                dim: true,
                base: true,
                anchor: true,
                ..none
            },
        }
    }
}

/// The tour's settings, shared by every step, each with the app's default (the article's
/// figure: d = 128, L = 256, anchored at position 128).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TourSettings {
    /// Columns of the tables, d (even).
    pub dim: usize,
    pub base: f64,
    /// Positions, L.
    pub length: usize,
    /// The shift of the translation step.
    pub delta: u64,
    /// The row a: the dot product's anchor and the translation step's example row.
    pub anchor: usize,
    /// The pair whose circle the sine-cosine step draws.
    pub pair: usize,
}

impl Default for TourSettings {
    fn default() -> Self {
        Self {
            dim: 128,
            base: 10_000.0,
            length: 256,
            delta: 10,
            anchor: 128,
            pair: 8,
        }
    }
}

impl TourSettings {
    /// The settings brought into the controls' ranges (from a hand-edited settings file).
    pub fn clamped(mut self) -> Self {
        self.dim = self.dim.clamp(*DIM_RANGE.start(), *DIM_RANGE.end()) & !1;
        self.base = if self.base.is_finite() {
            self.base.clamp(*BASE_RANGE.start(), *BASE_RANGE.end())
        } else {
            Self::default().base
        };
        self.length = self
            .length
            .clamp(*LENGTH_RANGE.start(), *LENGTH_RANGE.end());
        self.delta = self.delta.min(*DELTA_RANGE.end());
        self.anchor = self.anchor.min(self.length - 1);
        self.pair = self.pair.min(self.dim / 2 - 1);
        self
    }

    /// Checks every setting, naming the first one out of range.
    pub fn validate(&self) -> Result<(), ParamError> {
        check_count("length", self.length, LENGTH_RANGE)?;
        check_count("dim", self.dim, DIM_RANGE)?;
        if !self.dim.is_multiple_of(2) {
            return Err(ParamError::new(
                "dim",
                self.dim,
                "the sinusoidal table is made of sine-cosine pairs: use an even number",
            ));
        }
        check_base("base", self.base)?;
        if !BASE_RANGE.contains(&self.base) {
            return Err(ParamError::new(
                "base",
                self.base,
                format!("use {} to {}", BASE_RANGE.start(), BASE_RANGE.end()),
            ));
        }
        if !DELTA_RANGE.contains(&self.delta) {
            return Err(ParamError::new(
                "delta",
                self.delta,
                format!("use {} to {}", DELTA_RANGE.start(), DELTA_RANGE.end()),
            ));
        }
        check_count("anchor", self.anchor, 0..=self.length - 1)?;
        check_count("pair", self.pair, 0..=self.dim / 2 - 1)
    }

    /// The sinusoidal table the last steps show: Vaswani et al.'s, sine and cosine interleaved.
    pub fn sinusoidal(&self) -> SinusoidalParams {
        SinusoidalParams {
            seq: self.length,
            dim: self.dim,
            base: self.base,
            start: 0,
            layout: PairLayout::Interleaved,
            spacing: Spacing::Vaswani,
            ..SinusoidalParams::default()
        }
    }
}

/// One step as drawn: its formula, what it says, one line measured on the settings, and its
/// panels side by side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TourFrame {
    pub step: TourStep,
    pub formula: String,
    pub text: String,
    /// Numbers measured on these settings.
    pub measured: String,
    pub panels: Vec<TourPanel>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum TourPanel {
    Heatmap(TourHeatmap),
    Curves(TourCurves),
}

/// A table drawn as a heatmap, row 0 at the top.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TourHeatmap {
    pub title: String,
    #[serde(with = "crate::jobs::remote::bulk")]
    pub values: Array2<f64>,
    /// The value range the colours span.
    pub range: (f64, f64),
    pub row_name: String,
    pub col_name: String,
    /// A line over the cells, in cell units: `(x, y)` with cell `(row, col)` spanning
    /// `col..col + 1` across and `row..row + 1` down.
    pub overlay: Vec<[f64; 2]>,
    /// What the overlay marks (its legend).
    pub overlay_name: String,
}

/// Curves and point sets in data coordinates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TourCurves {
    pub title: String,
    pub x_name: String,
    pub y_name: String,
    pub curves: Vec<Curve>,
    /// One unit as long across as down (a circle stays round).
    pub equal_aspect: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Curve {
    pub name: String,
    pub points: Vec<[f64; 2]>,
    pub color: [u8; 3],
    /// Dots instead of a line.
    pub dots: bool,
}

const BLUE: [u8; 3] = [66, 133, 244];
const ORANGE: [u8; 3] = [244, 140, 36];
const GREY: [u8; 3] = [150, 150, 150];

/// `(x, y)` points from `y` values at `x = first, first + 1, ...`.
fn points_from(first: f64, values: impl IntoIterator<Item = f64>) -> Vec<[f64; 2]> {
    values
        .into_iter()
        .enumerate()
        .map(|(k, v)| [first + k as f64, v])
        .collect()
}

fn line(name: impl Into<String>, points: Vec<[f64; 2]>, color: [u8; 3]) -> Curve {
    Curve {
        name: name.into(),
        points,
        color,
        dots: false,
    }
}

fn heatmap(title: impl Into<String>, values: Array2<f64>, range: (f64, f64)) -> TourHeatmap {
    TourHeatmap {
        title: title.into(),
        values,
        range,
        row_name: "position p".into(),
        col_name: "column".into(),
        overlay: Vec::new(),
        overlay_name: String::new(),
    }
}

/// A number with thousands separated, for the measured lines.
fn grouped(value: f64) -> String {
    if value.abs() >= 1e15 {
        return crate::numbers::scientific(value, 4);
    }
    crate::numbers::grouped(value)
}

/// The position at which pair `i`'s angle reaches one radian: `base^(2i/d)`.
pub fn turn_position(settings: &TourSettings, pair: usize) -> f64 {
    settings.base.powf((2 * pair) as f64 / settings.dim as f64)
}

/// How many pairs turn by at least a radian within the length (positions `0..L`).
pub fn turning_pairs(settings: &TourSettings) -> usize {
    (0..settings.dim / 2)
        .take_while(|&i| turn_position(settings, i) <= (settings.length - 1) as f64)
        .count()
}

/// Step `step` drawn for `settings`.
pub fn frame(step: TourStep, settings: &TourSettings) -> Result<TourFrame, ParamError> {
    settings.validate()?;
    let s = settings;
    Ok(match step {
        TourStep::Counting => counting_frame(step, s),
        TourStep::Normalised => normalised_frame(step, s),
        TourStep::Binary => binary_frame(step, s)?,
        TourStep::BinarySines => binary_sines_frame(step, s),
        TourStep::GeometricSines => geometric_sines_frame(step, s),
        TourStep::Pairs => pairs_frame(step, s)?,
        TourStep::Translation => translation_frame(step, s)?,
        TourStep::DotProduct => dot_product_frame(step, s)?,
        TourStep::Dials => dials_frame(step, s)?,
    })
}

/// A step's frame: its formula, its text, what it measures, and its panels.
fn tour_frame(
    step: TourStep,
    formula: String,
    text: &'static str,
    measured: String,
    panels: Vec<TourPanel>,
) -> TourFrame {
    TourFrame {
        step,
        formula,
        text: text.to_owned(),
        measured,
        panels,
    }
}

/// The tour's step "Count the positions".
fn counting_frame(step: TourStep, s: &TourSettings) -> TourFrame {
    let length = s.length;
    tour_frame(
        step,
        "PE[p] = p".into(),
        "The plainest code gives each token its index. It does say where the token is, but the values grow with the sequence: added to token embeddings whose entries are about 1 in size, they drown the token's meaning, and a model trained on short texts never saw the large ones.",
        format!(
            "At L = {length}, the last position adds {} to its embedding.",
            length - 1
        ),
        vec![TourPanel::Curves(TourCurves {
            title: "The index as the code".into(),
            x_name: "position p".into(),
            y_name: "PE[p]".into(),
            curves: vec![line(
                "PE[p] = p",
                points_from(0.0, guesses::counting(length)),
                BLUE,
            )],
            equal_aspect: false,
        })],
    )
}

/// The tour's step "Divide by the length".
fn normalised_frame(step: TourStep, s: &TourSettings) -> TourFrame {
    let length = s.length;
    let longer = 2 * length;
    tour_frame(
        step,
        "PE[p] = p / L".into(),
        "Dividing by the length keeps every value in [0, 1). But now a value means different positions in sequences of different lengths: the code says how far through the text a token is, not where it is, and a model cannot learn what \"the next token\" looks like.",
        format!(
            "0.5 is position {} when L = {length}, and position {length} when L = {longer}.",
            length / 2
        ),
        vec![TourPanel::Curves(TourCurves {
            title: "The index over the length".into(),
            x_name: "position p".into(),
            y_name: "PE[p]".into(),
            curves: vec![
                line(
                    format!("L = {length}"),
                    points_from(0.0, guesses::normalised(length)),
                    BLUE,
                ),
                line(
                    format!("L = {longer}"),
                    points_from(0.0, guesses::normalised(longer)),
                    ORANGE,
                ),
                line("0.5", vec![[0.0, 0.5], [longer as f64, 0.5]], GREY),
            ],
            equal_aspect: false,
        })],
    )
}

/// The tour's step "Count in binary".
fn binary_frame(step: TourStep, s: &TourSettings) -> Result<TourFrame, ParamError> {
    let length = s.length;
    let table = binary::table(&BinaryParams {
        seq: length,
        dim: s.dim,
        start: 0,
    })?;
    let needed = guesses::changing_bits(length);
    let changing = needed.min(s.dim);
    // Too few bits to count to L: the code repeats.
    let repeats = if needed > s.dim {
        format!(
            " {} bits count only to {}: from position {} on, the code repeats an earlier one.",
            s.dim,
            grouped(2f64.powi(s.dim as i32) - 1.0),
            grouped(2f64.powi(s.dim as i32))
        )
    } else {
        String::new()
    };
    Ok(tour_frame(
        step,
        "PE[p, j] = bit j of p = floor(p / 2^j) mod 2".into(),
        "Write the position in binary, one column per bit: every value is 0 or 1 at any length, and d columns count to 2^d. Bit 0 flips at every step, bit j every 2^j steps. But the code jumps: 7 (0111) and 8 (1000) differ in four columns although they are neighbours, and nothing lies between two positions.",
        format!(
            "At L = {length}, only bits 0 to {} change; the other {} of {} columns stay 0.{repeats}",
            changing.saturating_sub(1),
            s.dim - changing,
            s.dim
        ),
        vec![TourPanel::Heatmap(TourHeatmap {
            col_name: "bit j".into(),
            ..heatmap("Binary code (the engine's binary table)", table, (0.0, 1.0))
        })],
    ))
}

/// The tour's step "Smooth each bit into a sine".
fn binary_sines_frame(step: TourStep, s: &TourSettings) -> TourFrame {
    let length = s.length;
    let table = guesses::binary_sines(length, s.dim);
    let peaking = (0..s.dim)
        .take_while(|&j| {
            (length - 1) as f64 * guesses::binary_frequency(j) >= std::f64::consts::FRAC_PI_2
        })
        .count();
    tour_frame(
        step,
        "PE[p, j] = sin(p · π / 2^(j+1))".into(),
        "Replace each bit by a sine of about its period: the columns become smooth dials that take values in [-1, 1], the first turning a quarter turn per step, each next one half as fast. (A sine with bit 0's own period of 2 is 0 at every whole position, so the dials start one octave lower.) The code is now continuous, but the slow dials hardly move and the fast ones repeat every few steps.",
        format!(
            "Dial 0 repeats every 4 positions, dial j every 2^(j+2). Within L = {length}, dials 0 to {} reach their peak; the other {} stay near sin 0.",
            peaking.saturating_sub(1),
            s.dim - peaking
        ),
        vec![TourPanel::Heatmap(TourHeatmap {
            col_name: "dial j".into(),
            ..heatmap("Sines at binary frequencies", table, (-1.0, 1.0))
        })],
    )
}

/// The tour's step "Slow the dials down".
fn geometric_sines_frame(step: TourStep, s: &TourSettings) -> TourFrame {
    let length = s.length;
    let table = guesses::geometric_sines(length, s.dim, s.base);
    let slowest = std::f64::consts::TAU / guesses::geometric_frequency(s.dim - 1, s.dim, s.base);
    tour_frame(
        step,
        "PE[p, j] = sin(p · base^(-j/d))".into(),
        "Nothing forces the speeds to halve. Spread them geometrically from 1 radian per step down towards 1/base instead: the fastest dial still tells neighbours apart, the slowest needs about 2π·base positions for one turn, so no position repeats within any length in use, and the speed still falls steadily from column to column.",
        format!(
            "Wavelengths from 6.28 positions (column 0) to {} (column {}).",
            grouped(slowest),
            s.dim - 1
        ),
        vec![TourPanel::Heatmap(TourHeatmap {
            col_name: "dial j".into(),
            ..heatmap("Sines at geometric frequencies", table, (-1.0, 1.0))
        })],
    )
}

/// The tour's step "Pair each sine with a cosine".
fn pairs_frame(step: TourStep, s: &TourSettings) -> Result<TourFrame, ParamError> {
    let length = s.length;
    let params = s.sinusoidal();
    let table = sinusoidal::table(&params)?;
    let w = params.frequencies()[s.pair];
    let circle: Vec<[f64; 2]> = (0..length)
        .map(|p| [table[[p, 2 * s.pair + 1]], table[[p, 2 * s.pair]]])
        .collect();
    Ok(tour_frame(
        step,
        "PE[p, 2i] = sin(p·ω_i),  PE[p, 2i+1] = cos(p·ω_i),  ω_i = base^(-2i/d)".into(),
        "Give each speed two columns, its sine and its cosine: each pair is a point on the unit circle that turns by ω_i per step, one hand of a clock. This is the table of \"Attention is all you need\" (sine and cosine interleaved). Moving every position by the same offset turns every pair by a fixed angle, which one linear map can do (next step).",
        format!(
            "Pair {} (columns {} and {}) turns {:.4}° per position: one turn every {} positions.",
            s.pair,
            2 * s.pair,
            2 * s.pair + 1,
            w.to_degrees(),
            if std::f64::consts::TAU / w < 100.0 {
                format!("{:.2}", std::f64::consts::TAU / w)
            } else {
                grouped(std::f64::consts::TAU / w)
            }
        ),
        vec![
            TourPanel::Heatmap(heatmap(
                "The sinusoidal table (the engine's)",
                table,
                (-1.0, 1.0),
            )),
            TourPanel::Curves(TourCurves {
                title: format!("Pair {}: every position on its circle", s.pair),
                x_name: format!("cos(p·ω_{}), column {}", s.pair, 2 * s.pair + 1),
                y_name: format!("sin(p·ω_{}), column {}", s.pair, 2 * s.pair),
                curves: vec![Curve {
                    name: format!("p = 0 to {}", length - 1),
                    points: circle,
                    color: BLUE,
                    dots: true,
                }],
                equal_aspect: true,
            }),
        ],
    ))
}

/// The tour's step "A shift is a matrix: T(Δ)".
fn translation_frame(step: TourStep, s: &TourSettings) -> Result<TourFrame, ParamError> {
    let length = s.length;
    let params = s.sinusoidal();
    let sinusoidal::Translation {
        matrix: t,
        shifted,
        via_matrix,
        error,
    } = sinusoidal::translate(&params, s.delta)?;
    let a = s.anchor;
    Ok(tour_frame(step,
    "PE[p + Δ] = PE[p] · T(Δ),  T(Δ) = diag(R(ω_0·Δ), ..., R(ω_(d/2-1)·Δ)),  R(φ) = [cos φ, -sin φ; sin φ, cos φ]".into(),
    "Since each pair is a point on a circle, shifting every position by Δ turns pair i by ω_i·Δ. Those 2 x 2 rotations, stacked along the diagonal, make one matrix T(Δ) that moves any row by Δ, whatever the row: the same weights work at every position, which is what lets attention learn \"the token three back\".",
    format!(
        "Checked on all {length} rows at Δ = {}: the largest |PE[p + Δ] - PE[p]·T(Δ)| is {:.1e}.",
        s.delta, error
    ),
    vec![
        TourPanel::Heatmap(TourHeatmap {
            row_name: "row k of T".into(),
            col_name: "column c of T".into(),
            ..heatmap(format!("T({})", s.delta), t, (-1.0, 1.0))
        }),
        TourPanel::Curves(TourCurves {
            title: format!("Row a = {a}, moved by Δ = {}", s.delta),
            x_name: "column c".into(),
            y_name: "value".into(),
            curves: vec![
                line(
                    format!("PE[{}] (computed)", a as u64 + s.delta),
                    points_from(0.0, shifted.row(a).iter().copied()),
                    BLUE,
                ),
                Curve {
                    name: format!("PE[{a}] · T({})", s.delta),
                    points: points_from(0.0, via_matrix.row(a).iter().copied()),
                    color: ORANGE,
                    dots: true,
                },
            ],
            equal_aspect: false,
        }),
    ],
))
}

/// The tour's step "Near positions look alike".
fn dot_product_frame(step: TourStep, s: &TourSettings) -> Result<TourFrame, ParamError> {
    let length = s.length;
    let params = s.sinusoidal();
    let decay = sinusoidal::dot_decay(&params, s.anchor)?;
    let peak = s.dim as f64 / 2.0;
    let a = s.anchor as f64;
    let normalised: Vec<[f64; 2]> = decay
        .iter()
        .enumerate()
        .map(|(j, v)| [j as f64 - a, v / peak])
        .collect();
    // The nearest offset, either side, where it drops below half; and the farthest row.
    let half = normalised
        .iter()
        .filter(|p| p[0] != 0.0 && p[1] < 0.5)
        .map(|p| p[0].abs())
        .reduce(f64::min);
    let farthest = normalised
        .iter()
        .copied()
        .max_by(|a, b| a[0].abs().total_cmp(&b[0].abs()))
        .unwrap_or([0.0, 1.0]);
    Ok(tour_frame(
        step,
        "PE[a] · PE[a + k] = Σ_i cos(k·ω_i), divided by its peak d/2".into(),
        "The dot product of two rows is a sum of cosines of k·ω_i: it depends on the distance k only, not on a. At k = 0 every pair agrees and the sum is d/2; further apart the fast pairs fall out of step and the sum drops, with ripples, so near positions look alike without anything being trained. The article draws this at d = 128, L = 256, anchored at 128.",
        match half {
            Some(k) => format!(
                "It first falls below half its peak at k = ±{k}, and reads {:.3} at the farthest row, k = {}.",
                farthest[1], farthest[0]
            ),
            None => format!(
                "It stays above half its peak at every k within L = {length}: the pairs are too slow to fall out of step."
            ),
        },
        vec![TourPanel::Curves(TourCurves {
            title: format!("PE[{}]·PE[{} + k] / {}", s.anchor, s.anchor, s.dim / 2),
            x_name: "offset k".into(),
            y_name: "normalised dot product".into(),
            curves: vec![line("dot product", normalised, BLUE)],
            equal_aspect: false,
        })],
    ))
}

/// The tour's step "Which dials turn".
fn dials_frame(step: TourStep, s: &TourSettings) -> Result<TourFrame, ParamError> {
    let length = s.length;
    let params = s.sinusoidal();
    let table = sinusoidal::table(&params)?;
    let turning = turning_pairs(s);
    // The edge, pair by pair, a little past the table so that the line leaves it.
    let overlay: Vec<[f64; 2]> = (0..s.dim / 2)
        .map(|i| [(2 * i + 1) as f64, turn_position(s, i)])
        .take_while(|p| p[1] <= 2.0 * length as f64)
        .collect();
    Ok(tour_frame(
        step,
        "pair i has turned one radian from position base^(2i/d) on".into(),
        "Seen whole, most of the table stands still. Pair i turns by a radian only from position base^(2i/d) on, an edge that moves exponentially slowly across the columns (the white line). Left of it the dials have turned; right of it they sit at sin 0 = 0 and cos 0 = 1. That still part is one reason adding the encoding to token embeddings costs them little.",
        format!(
            "Within L = {length}, pairs 0 to {} turn by a radian ({} of {} columns); the other {} pairs never do.",
            turning.saturating_sub(1),
            2 * turning,
            s.dim,
            s.dim / 2 - turning
        ),
        vec![TourPanel::Heatmap(TourHeatmap {
            overlay,
            overlay_name: "one radian turned".into(),
            ..heatmap("The sinusoidal table (the engine's)", table, (-1.0, 1.0))
        })],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_from_a_bad_file_are_brought_into_range() {
        let bad = TourSettings {
            dim: 0,
            base: f64::NAN,
            length: 0,
            delta: u64::MAX,
            anchor: usize::MAX,
            pair: 99,
        }
        .clamped();
        assert!(bad.validate().is_ok(), "{bad:?}");
        let odd = TourSettings {
            dim: 65,
            ..TourSettings::default()
        };
        assert!(odd.validate().is_err());
        assert_eq!(odd.clamped().dim, 64);
    }

    #[test]
    fn the_steps_are_numbered_from_one() {
        assert_eq!(TourStep::from_number(1), Some(TourStep::Counting));
        assert_eq!(TourStep::from_number(9), Some(TourStep::Dials));
        assert_eq!(TourStep::from_number(0), None);
        assert_eq!(TourStep::from_number(10), None);
        assert_eq!(TourStep::Dials.next(), None);
        assert_eq!(TourStep::Counting.previous(), None);
        assert!(TourStep::Pairs.title().starts_with("6. "));
    }

    #[test]
    fn the_article_figure_counts_the_turning_pairs() {
        // d = 128, base 10000, L = 256: pair i turns a radian by 255 while 10000^(2i/128) <= 255,
        // i <= 128 · ln 255 / (2 ln 10000) = 38.5.
        assert_eq!(turning_pairs(&TourSettings::default()), 39);
    }
}
