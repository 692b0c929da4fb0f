//! Reusable drawing pieces: the heatmap with its colour bar, patch-grid maps, the colour maps,
//! the 3D canvas, and the panel that explains a view.

pub mod array_heatmap;
pub mod board;
pub mod canvas3d;
pub mod colorbar;
pub mod explainer;
pub mod grid_map;
pub mod heatmap;
pub mod layout;
pub mod number_box;
