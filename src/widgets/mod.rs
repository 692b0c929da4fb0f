//! Reusable drawing pieces: the heatmap with its colour bar, patch-grid maps, the colour maps,
//! and the 3D canvas.

pub mod canvas3d;
pub mod colormap;
pub mod grid_map;
pub mod heatmap;
pub mod layout;
