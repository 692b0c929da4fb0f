//! Reusable drawing pieces: the heatmap with its colour bar, the colour maps, and the 3D canvas.

pub mod canvas3d;
pub mod colormap;
pub mod heatmap;
pub mod layout;
