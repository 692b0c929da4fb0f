//! One file per view. A view draws; the engines compute what it asks for.

pub mod alibi;
pub mod dot_decay;
pub mod sinusoidal;

use serde::{Deserialize, Serialize};

/// The views the picker offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum ViewKind {
    #[default]
    Sinusoidal,
    DotDecay,
    Alibi,
}

impl ViewKind {
    pub const ALL: [ViewKind; 3] = [ViewKind::Sinusoidal, ViewKind::DotDecay, ViewKind::Alibi];

    pub fn label(self) -> &'static str {
        match self {
            ViewKind::Sinusoidal => "Sinusoidal table",
            ViewKind::DotDecay => "Dot-product decay",
            ViewKind::Alibi => "ALiBi",
        }
    }
}
