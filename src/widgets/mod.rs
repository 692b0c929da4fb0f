//! Reusable drawing pieces: the heatmap with its colour bar, and the colour maps.

pub mod colormap;
pub mod heatmap;
