//! Positions that are not 0, 1, 2, ...: given one per row (diffusion timesteps, packed
//! sequences' position ids, half-step crop coordinates, float32 grids as stored) and scaled
//! (diffusers' `Timesteps(scale=...)`, interpolated grids). The sin/cos and RoPE tables take
//! them through `engine::PositionedTable`; the angle of a row is `position * scale * w`.
//!
//! Exactly, the product is carried to about 104 bits before it is reduced to a fraction of a
//! turn, so a position of any size keeps its angle. In float32, a library rounds the scaled
//! position, or the angle before scaling it: both orders are kept ([`ScaleAt`]), since the two
//! differ by far more than float32 rounding of the result once angles are large.

use super::ParamError;
use super::exact_angle::{DoubleF64, TurnsPerStep};

/// Where the rows of a table sit.
#[derive(Debug, Clone, PartialEq)]
pub enum PositionList {
    /// `start, start + 1, ..., start + count - 1`.
    Counting { start: u64, count: usize },
    /// One position per row, used exactly as stored (a float32 file's values are float32).
    Given(Vec<f64>),
}

/// Which product a float32 computation rounds first when positions are scaled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScaleAt {
    /// `f32(p * s) * w`: the scaled position, then the angle (a scaled grid, `--arith
    /// torch-f32`'s reading of `--position-scale`).
    Position,
    /// `s * f32(p * w)`: the angle, then the scale (diffusers' `get_timestep_embedding`).
    Angle,
}

/// The positions of a table's rows, and what multiplies them.
#[derive(Debug, Clone, PartialEq)]
pub struct Positions {
    pub list: PositionList,
    /// 1 when not given.
    pub scale: f64,
    pub scale_at: ScaleAt,
}

/// The largest scaled position allowed: where float32 and f64 positions still step by at most
/// one, as the counting positions do.
pub const MAX_SCALED_POSITION: f64 = super::MAX_POSITION as f64;

impl Positions {
    /// How many rows the positions make.
    pub fn len(&self) -> usize {
        match &self.list {
            PositionList::Counting { count, .. } => *count,
            PositionList::Given(values) => values.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The length of the sequence the rows belong to, as Hugging Face's dynamic RoPE reads it
    /// from position ids: the largest position (unscaled, at least 0) + 1.
    pub fn current_length(&self) -> usize {
        let largest = match &self.list {
            PositionList::Counting { start, count } => {
                (*start as f64) + count.saturating_sub(1) as f64
            }
            PositionList::Given(values) => values.iter().copied().fold(0.0, f64::max),
        };
        if largest.is_finite() {
            (largest.max(0.0).floor() as usize).saturating_add(1)
        } else {
            usize::MAX
        }
    }

    /// Whether the positions are 0, 1, 2, ... from some start, unscaled: a table of positions
    /// that needs no wrapper.
    pub fn is_counting(&self) -> bool {
        matches!(self.list, PositionList::Counting { .. }) && self.scale == 1.0
    }

    pub fn validate(&self) -> Result<(), ParamError> {
        if !(self.scale.is_finite() && self.scale > 0.0) {
            return Err(ParamError::new(
                "position_scale",
                shown(self.scale),
                "use a finite number above 0",
            ));
        }
        match &self.list {
            PositionList::Counting { start, count } => {
                super::check_count("seq", *count, super::SEQ_RANGE)?;
                super::check_start(*start, *count)?;
            }
            PositionList::Given(values) => {
                super::check_count("positions", values.len(), super::SEQ_RANGE).map_err(|_| {
                    ParamError::new(
                        "positions",
                        format!("({} values)", values.len()),
                        format!("give 1 to {} positions", super::SEQ_RANGE.end()),
                    )
                })?;
                if let Some((row, bad)) = values.iter().enumerate().find(|(_, p)| !p.is_finite()) {
                    return Err(ParamError::new(
                        "positions",
                        format!("(row {row}: {bad})"),
                        "every position must be a finite number",
                    ));
                }
            }
        }
        let largest = match &self.list {
            PositionList::Counting { start, count } => (*start + *count as u64 - 1) as f64,
            PositionList::Given(values) => values.iter().fold(0.0f64, |m, p| m.max(p.abs())),
        };
        if largest * self.scale > MAX_SCALED_POSITION {
            return Err(if self.scale == 1.0 {
                ParamError::new(
                    "positions",
                    format!("(largest {largest:e})"),
                    "every position must lie within ±(2^53 - 1)",
                )
            } else {
                ParamError::new(
                    "position_scale",
                    shown(self.scale),
                    format!(
                        "the scaled positions reach {:e} (the largest position, {largest:e}, times the scale); they must stay within ±(2^53 - 1)",
                        largest * self.scale
                    ),
                )
            });
        }
        Ok(())
    }

    /// Row `row`'s position before the scale, as stored.
    pub fn stored(&self, row: usize) -> f64 {
        match &self.list {
            PositionList::Counting { start, .. } => (*start + row as u64) as f64,
            PositionList::Given(values) => values[row],
        }
    }

    /// Row `row`'s scaled position, exactly (the product of two f64 to about 106 bits).
    pub fn exact(&self, row: usize) -> DoubleF64 {
        DoubleF64::from_f64(self.stored(row)).mul_f64(self.scale)
    }

    /// The angle of frequency `w` at row `row` in 2^-128 turn (see `exact_angle::sin_cos`).
    pub fn turns(&self, row: usize, w: DoubleF64) -> u128 {
        TurnsPerStep::of(w * self.exact(row)).0
    }

    /// The angle of frequency `w` at row `row` in radians, rounded once.
    pub fn angle(&self, row: usize, w: DoubleF64) -> f64 {
        (w * self.exact(row)).to_f64()
    }

    /// The float32 angle of the float32 frequency `freq` at row `row`: the position rounded to
    /// float32 (as `timesteps.float()` and `position_ids.float()` do), times the scale in the
    /// order [`ScaleAt`] says, each product rounded.
    pub fn angle_f32(&self, row: usize, freq: f64) -> f32 {
        let (p, w) = (self.stored(row) as f32, freq as f32);
        if self.scale == 1.0 {
            return p * w;
        }
        let s = self.scale as f32;
        match self.scale_at {
            ScaleAt::Position => (p * s) * w,
            ScaleAt::Angle => s * (p * w),
        }
    }

    /// The first `rows` positions, as given (a table's first rows).
    pub fn first(&self, rows: usize) -> Self {
        self.rows(0..rows)
    }

    /// The positions of rows `range` (within the rows there are), as given.
    pub fn rows(&self, range: std::ops::Range<usize>) -> Self {
        let end = range.end.min(self.len());
        Self {
            list: PositionList::Given(
                (range.start.min(end)..end)
                    .map(|r| self.stored(r))
                    .collect(),
            ),
            ..self.clone()
        }
    }

    /// The same positions with the scale applied in the other float32 order.
    pub fn with_scale_at(&self, scale_at: ScaleAt) -> Self {
        Self {
            scale_at,
            ..self.clone()
        }
    }

    /// What the rows are, for a report: "positions 3, 3.5, ... (20 given), times 1000".
    pub fn describe(&self) -> String {
        let list = match &self.list {
            PositionList::Counting { start, count } => {
                format!("positions {start} to {}", *start + *count as u64 - 1)
            }
            PositionList::Given(values) => {
                let shown: Vec<String> = values.iter().take(3).map(|p| format!("{p}")).collect();
                let more = if values.len() > 3 { ", ..." } else { "" };
                format!(
                    "positions {}{more} ({} given)",
                    shown.join(", "),
                    values.len()
                )
            }
        };
        if self.scale == 1.0 {
            list
        } else {
            format!("{list}, times {}", self.scale)
        }
    }
}

/// A number as typed for the small and middling, in exponent form for the huge and tiny (a
/// scale of 1e300 is not printed with its 300 zeros).
fn shown(value: f64) -> String {
    if value != 0.0 && !(1e-6..1e15).contains(&value.abs()) {
        format!("{value:e}")
    } else {
        format!("{value}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::exact_angle;

    fn given(values: &[f64], scale: f64) -> Positions {
        Positions {
            list: PositionList::Given(values.to_vec()),
            scale,
            scale_at: ScaleAt::Position,
        }
    }

    #[test]
    fn exact_angles_at_given_positions_match_the_counting_ones() {
        // The integer path (turns per step times the position) and the given path (the
        // product in double-double, then reduced) are two computations of one angle.
        let w = DoubleF64::from_f64(0.731);
        let positions = given(&[0.0, 1.0, 12345.0, 9_007_199_254_740_991.0], 1.0);
        for (row, p) in [0u64, 1, 12345, (1 << 53) - 1].into_iter().enumerate() {
            let counted = exact_angle::sin_cos(TurnsPerStep::of(w).at(p));
            let given = exact_angle::sin_cos(positions.turns(row, w));
            assert!(
                (counted.0 - given.0).abs() < 1e-15,
                "{p}: {counted:?} {given:?}"
            );
            assert!(
                (counted.1 - given.1).abs() < 1e-15,
                "{p}: {counted:?} {given:?}"
            );
        }
    }

    #[test]
    fn half_steps_and_scales_are_the_products_they_name() {
        let w = DoubleF64::from_f64(0.25);
        // 3.5 * 0.25 = 0.875 rad, and 0.5 * 1000 * 0.25 = 125 rad, both exact in f64.
        let positions = given(&[3.5, 0.5], 1.0);
        let (sin, cos) = exact_angle::sin_cos(positions.turns(0, w));
        assert!((sin - 0.875f64.sin()).abs() < 1e-16 && (cos - 0.875f64.cos()).abs() < 1e-16);
        let scaled = given(&[0.5], 1000.0);
        assert_eq!(scaled.angle(0, w), 125.0);
        let (sin, _) = exact_angle::sin_cos(scaled.turns(0, w));
        assert!((sin - 125f64.sin()).abs() < 1e-14, "{sin}");
    }

    #[test]
    fn float32_orders_round_different_products() {
        // p = 0.3f32, s = 1000, w = 0.7f32: f32(p * s) * w and s * f32(p * w).
        let positions = given(&[f64::from(0.3f32)], 1000.0);
        let (p, s, w) = (0.3f32, 1000f32, 0.7f32);
        assert_eq!(positions.angle_f32(0, f64::from(w)), (p * s) * w);
        let angle_first = positions.with_scale_at(ScaleAt::Angle);
        assert_eq!(angle_first.angle_f32(0, f64::from(w)), s * (p * w));
    }

    #[test]
    fn bad_positions_are_named() {
        let nan = given(&[0.0, f64::NAN], 1.0).validate().unwrap_err();
        assert!(nan.to_string().contains("row 1"), "{nan}");
        let zero = given(&[1.0], 0.0).validate().unwrap_err();
        assert!(zero.to_string().contains("--position-scale 0"), "{zero}");
        let huge = given(&[1e10], 1e10).validate().unwrap_err();
        assert!(huge.to_string().contains("2^53"), "{huge}");
        assert!(given(&[-4.5, 0.0, 7.25], 2.0).validate().is_ok());
    }
}
