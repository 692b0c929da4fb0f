//! The CPU engine: every table in f64 on ndarray, parallel over rows with rayon.
//! It is the reference that the GPU engine and the tests compare against.

use ndarray::Array1;

use super::{EngineError, Table, TableSpec};
use crate::encoding::{alibi, binary, grid, relative, rope, rope2d, sinusoidal};

/// Computes `spec` after checking its parameters and that it fits in available memory.
pub fn compute(spec: &TableSpec) -> Result<Table, EngineError> {
    spec.validate()?;
    spec.check_fits(super::available_memory_bytes())?;
    Ok(compute_validated(spec)?)
}

fn compute_validated(spec: &TableSpec) -> Result<Table, crate::encoding::ParamError> {
    let real = |a: ndarray::ArrayD<f64>| Table::Real(a);
    Ok(match spec {
        TableSpec::Sinusoidal(p) => real(sinusoidal::table(p)?.into_dyn()),
        TableSpec::DotDecay { params, anchor } => {
            real(sinusoidal::dot_decay(params, *anchor)?.into_dyn())
        }
        TableSpec::Similarity(p) => real(sinusoidal::similarity(p)?.into_dyn()),
        TableSpec::RopeInvFreq { dim, base } => real(rope::inv_freq(*dim, *base)?.into_dyn()),
        TableSpec::RopeAngles(p) => real(rope::angles(p)?.into_dyn()),
        TableSpec::RopeApply {
            input,
            layout,
            base,
            start,
        } => real(rope::apply(input.view(), *layout, *base, *start)?.into_dyn()),
        TableSpec::AlibiSlopes { heads } => real(Array1::from(alibi::slopes(*heads)?).into_dyn()),
        TableSpec::Alibi { params, head } => match head {
            Some(h) => real(alibi::bias_head(params, *h)?.into_dyn()),
            None => real(alibi::bias(params)?.into_dyn()),
        },
        TableSpec::Alibi2d { params, head } => match head {
            Some(h) => real(alibi::bias_2d_head(params, *h)?.into_dyn()),
            None => real(alibi::bias_2d(params)?.into_dyn()),
        },
        TableSpec::PatchDistance { grid, metric } => {
            real(grid::patch_distance(grid, *metric)?.into_dyn())
        }
        TableSpec::SinCos2d(p) => real(grid::sincos_2d(p)?.into_dyn()),
        TableSpec::Rope2dAxial(p) => real(rope2d::axial_angles(p)?.into_dyn()),
        TableSpec::Rope2dMixed { grid, freqs } => {
            real(rope2d::mixed_angles(grid, freqs.view())?.into_dyn())
        }
        TableSpec::T5Buckets(p) => Table::Index(relative::t5_buckets(p)?.into_dyn()),
        TableSpec::RelativeClip(p) => Table::Index(relative::relative_clip(p)?.into_dyn()),
        TableSpec::Binary(p) => real(binary::table(p)?.into_dyn()),
    })
}
