//! What views draw, built from the encodings: 3D scenes (geometry in f64, handed to the GPU as
//! f32, and the camera that looks at it) and boards of labelled cells for the teaching views.
//! No GPU objects and no UI live here.

pub mod board;
pub mod camera;
pub mod context;
pub mod corkscrew;
pub mod dot_decay;
pub mod learned;
pub mod precision;
pub mod relative;
pub mod tour;
