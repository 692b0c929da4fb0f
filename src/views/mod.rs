//! One file per view. A view draws; the engines compute what it asks for.

pub mod sinusoidal;

use serde::{Deserialize, Serialize};

/// The views the picker offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum ViewKind {
    #[default]
    Sinusoidal,
}

impl ViewKind {
    pub const ALL: [ViewKind; 1] = [ViewKind::Sinusoidal];

    pub fn label(self) -> &'static str {
        match self {
            ViewKind::Sinusoidal => "Sinusoidal table",
        }
    }
}
