//! The patch maps' methods: which `[P, P]` table each one is (a distance, one head of 2D ALiBi,
//! or a 2D encoding's similarity), shared by the app's view, its figure and `poslab figure`.

use serde::{Deserialize, Serialize};

use crate::encoding::alibi::Alibi2dParams;
use crate::encoding::grid::{DistanceMetric, GridParams};
use crate::encoding::similarity2d::{PatchEncoding, PatchSimilarityParams, random_mixed_freqs};
use crate::engine::TableSpec;

/// What a patch map shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
pub enum PatchMethod {
    Euclidean,
    Manhattan,
    Chebyshev,
    /// The 2D ALiBi bias of the selected head (CROMA).
    #[value(name = "alibi-2d")]
    Alibi2d,
    /// Axial RoPE similarity (rope-vit, theta 100).
    AxialRope,
    /// Mixed RoPE similarity, frequencies from rope-vit's random initialisation.
    MixedRope,
    /// MAE 2D sin-cos similarity.
    SinCos,
}

impl PatchMethod {
    pub const ALL: [PatchMethod; 7] = [
        PatchMethod::Euclidean,
        PatchMethod::Manhattan,
        PatchMethod::Chebyshev,
        PatchMethod::Alibi2d,
        PatchMethod::AxialRope,
        PatchMethod::MixedRope,
        PatchMethod::SinCos,
    ];

    pub fn label(self) -> &'static str {
        match self {
            PatchMethod::Euclidean => "Euclidean distance",
            PatchMethod::Manhattan => "Manhattan distance",
            PatchMethod::Chebyshev => "Chebyshev distance",
            PatchMethod::Alibi2d => "2D ALiBi bias",
            PatchMethod::AxialRope => "axial RoPE similarity",
            PatchMethod::MixedRope => "mixed RoPE similarity",
            PatchMethod::SinCos => "MAE sin-cos similarity",
        }
    }

    /// The `[P, P]` table of this method (one head of it for ALiBi).
    pub fn spec(
        self,
        grid: GridParams,
        heads: usize,
        head: usize,
        encoding: &PatchMapSettings,
    ) -> TableSpec {
        let distance = |metric| TableSpec::PatchDistance { grid, metric };
        let similarity =
            |encoding| TableSpec::PatchSimilarity(PatchSimilarityParams { grid, encoding });
        let dim = encoding.dim;
        match self {
            PatchMethod::AxialRope => similarity(PatchEncoding::AxialRope {
                dim,
                theta: ROPE_VIT_THETA,
            }),
            PatchMethod::MixedRope => similarity(PatchEncoding::MixedRope {
                freqs: match &encoding.loaded_freqs {
                    Some(freqs) => freqs.clone(),
                    None => random_mixed_freqs(dim, ROPE_VIT_THETA, encoding.seed)
                        .unwrap_or_else(|_| ndarray::Array2::zeros((2, 1))),
                },
            }),
            PatchMethod::SinCos => similarity(PatchEncoding::SinCos {
                dim,
                base: encoding.base,
            }),
            PatchMethod::Euclidean => distance(DistanceMetric::Euclidean),
            PatchMethod::Manhattan => distance(DistanceMetric::Manhattan),
            PatchMethod::Chebyshev => distance(DistanceMetric::Chebyshev),
            PatchMethod::Alibi2d => TableSpec::Alibi2d {
                params: Alibi2dParams { heads, grid },
                head: Some(head),
            },
        }
    }
}

/// rope-vit's frequency base.
const ROPE_VIT_THETA: f64 = 100.0;

/// What the similarity methods take besides the grid.
#[derive(Debug, Clone, PartialEq)]
pub struct PatchMapSettings {
    /// The head dimension, a multiple of 4.
    pub dim: usize,
    /// MAE sin-cos base.
    pub base: f64,
    /// Seed of the mixed RoPE frequencies' random initialisation.
    pub seed: u64,
    /// Mixed RoPE frequencies `[2, n]` from a file, used instead of the seeded ones.
    pub loaded_freqs: Option<ndarray::Array2<f64>>,
}
