//! The dot-product decay curve `PE[a]·PE[a+k]` against the offset `k`, as the Dot-product decay
//! view and its figure draw it: one point per `per_point` offsets, the mean of those it stands
//! for (in closed form) where it stands for several, since one offset in many would draw the
//! fast terms' aliasing as wiggles.

use crate::encoding::sinusoidal::SinusoidalParams;
use crate::engine::reduce::{Reduce, bin, compute_reduced_cpu};
use crate::engine::{EngineError, Strided, Table, TableSpec, Window};

/// `(k, PE[anchor]·PE[anchor + k])` for every offset of the table, divided by `d/2` when
/// `normalised`; `exact` computes a window where a point is one offset (the app's engine, or
/// the CPU engine for a figure).
pub fn decay_curve(
    params: &SinusoidalParams,
    anchor: usize,
    normalised: bool,
    per_point: usize,
    exact: impl FnOnce(&TableSpec, &Window) -> Result<Table, EngineError>,
) -> Result<Vec<[f64; 2]>, EngineError> {
    let (spec, window) = decay_window(params, anchor, per_point);
    let values: Vec<f64> = if window.cols.step > 1 {
        compute_reduced_cpu(&spec, &window, Reduce::Mean)?
            .into_iter()
            .collect()
    } else {
        exact(&spec, &window)?.into_real().into_iter().collect()
    };
    Ok(decay_points(params, anchor, normalised, &window, &values))
}

/// The table and the window of a decay curve of `per_point` offsets a point: where a point is
/// one offset, the window an engine computes ([`decay_points`] makes the curve of its values).
pub fn decay_window(
    params: &SinusoidalParams,
    anchor: usize,
    per_point: usize,
) -> (TableSpec, Window) {
    let spec = TableSpec::DotDecay {
        params: *params,
        anchor,
    };
    let window = Window {
        heads: Strided::all(1),
        rows: Strided::all(1),
        cols: Strided {
            step: per_point.max(1),
            ..Strided::all(params.seq)
        },
    };
    (spec, window)
}

/// The curve of `values`, the products of `window` ([`decay_window`]), at each point's
/// centre offset, divided by `d/2` when `normalised`.
pub fn decay_points(
    params: &SinusoidalParams,
    anchor: usize,
    normalised: bool,
    window: &Window,
    values: &[f64],
) -> Vec<[f64; 2]> {
    let scale = if normalised {
        2.0 / params.dim as f64
    } else {
        1.0
    };
    values
        .iter()
        .enumerate()
        .map(|(k, &v)| {
            let keys = bin(&window.cols, k);
            let centre = keys.start as f64 + (keys.len() - 1) as f64 / 2.0;
            [centre - anchor as f64, v * scale]
        })
        .collect()
}

/// For each point of a curve of `per_point` offsets a point (as [`decay_curve`] bins them), the
/// least and the largest `PE[anchor]·PE[anchor + k]` over the offsets it covers, divided by
/// `d/2` when `normalised`: what a mean hides (the peak at k = 0 is d/2; a mean of 2048 offsets
/// around it is a fifth of that). Summed by angle addition, a bin at a time on every core,
/// checking `cancel` between bins: `seq·d/2` products, seconds at a million rows and d = 4096.
pub fn decay_envelope(
    params: &SinusoidalParams,
    anchor: usize,
    normalised: bool,
    per_point: usize,
    cancel: &crate::jobs::Cancel,
) -> Result<Result<Vec<[f64; 2]>, EngineError>, crate::jobs::Cancelled> {
    use rayon::prelude::*;
    let values = match crate::encoding::sinusoidal::SinusoidalValues::new(params) {
        Ok(values) => values,
        Err(error) => return Ok(Err(error.into())),
    };
    let scale = values.dot_scale()
        * if normalised {
            2.0 / params.dim as f64
        } else {
            1.0
        };
    let freqs = params.frequencies().to_vec();
    let keys = Strided {
        step: per_point.max(1),
        ..Strided::all(params.seq)
    };
    let envelope: Result<Vec<[f64; 2]>, crate::jobs::Cancelled> = (0..keys.len())
        .into_par_iter()
        .map(|x| {
            cancel.check()?;
            let cells = bin(&keys, x);
            let first = cells.start as f64 - anchor as f64;
            let mut sums = vec![0.0; cells.len()];
            for &w in &freqs {
                // (cos, sin) of the first offset's angle, then turned by w each offset.
                let (mut s, mut c) = (first * w).sin_cos();
                let (step_s, step_c) = w.sin_cos();
                for sum in &mut sums {
                    *sum += c;
                    (c, s) = (c * step_c - s * step_s, s * step_c + c * step_s);
                }
            }
            let (low, high) = crate::engine::range::extremes(sums.into_iter());
            Ok([low * scale, high * scale])
        })
        .collect();
    envelope.map(Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The envelope's edges are the least and largest of the exact values each bin covers, and
    /// the peak at k = 0 keeps its full height, d/2, where the mean of its bin falls short.
    #[test]
    fn the_envelope_holds_every_offsets_extremes() {
        let params = SinusoidalParams {
            seq: 3000,
            dim: 64,
            ..Default::default()
        };
        let (anchor, per_point) = (1000, 37);
        let exact = crate::encoding::sinusoidal::dot_decay(&params, anchor).unwrap();
        let envelope = decay_envelope(&params, anchor, false, per_point, &Default::default())
            .unwrap()
            .unwrap();
        let keys = Strided {
            step: per_point,
            ..Strided::all(params.seq)
        };
        assert_eq!(envelope.len(), keys.len());
        for (x, [low, high]) in envelope.iter().enumerate() {
            let cells = bin(&keys, x);
            let (want_low, want_high) = exact.as_slice().unwrap()[cells.clone()]
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
                    (lo.min(v), hi.max(v))
                });
            assert!(
                (low - want_low).abs() < 1e-9,
                "bin {x}: {low} against {want_low}"
            );
            assert!(
                (high - want_high).abs() < 1e-9,
                "bin {x}: {high} against {want_high}"
            );
        }
        let peak = envelope[anchor / per_point][1];
        assert!((peak - 32.0).abs() < 1e-9, "the peak {peak}");
        let means = decay_curve(&params, anchor, false, per_point, |_, _| unreachable!()).unwrap();
        let mean = means[anchor / per_point][1];
        assert!(mean < peak - 5.0, "the mean {mean} hides the peak");
    }
}
