//! The window's colour themes, as the app's menu and `poslab app --theme` name them.

use serde::{Deserialize, Serialize};

/// The window's colours.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
pub enum ThemeChoice {
    /// Light text on dark grey: easy on the eyes at a desk
    #[default]
    Dark,
    /// Dark text on white: what a projector shows best
    Light,
}

impl ThemeChoice {
    pub fn label(self) -> &'static str {
        match self {
            Self::Dark => "dark",
            Self::Light => "light",
        }
    }

    pub fn egui(self) -> egui::Theme {
        match self {
            Self::Dark => egui::Theme::Dark,
            Self::Light => egui::Theme::Light,
        }
    }
}
