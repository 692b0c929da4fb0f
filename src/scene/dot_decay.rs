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
    let values: Vec<f64> = if window.cols.step > 1 {
        compute_reduced_cpu(&spec, &window, Reduce::Mean)?
            .into_iter()
            .collect()
    } else {
        exact(&spec, &window)?.into_real().into_iter().collect()
    };
    let scale = if normalised {
        2.0 / params.dim as f64
    } else {
        1.0
    };
    Ok(values
        .iter()
        .enumerate()
        .map(|(k, &v)| {
            let keys = bin(&window.cols, k);
            let centre = keys.start as f64 + (keys.len() - 1) as f64 / 2.0;
            [centre - anchor as f64, v * scale]
        })
        .collect())
}
