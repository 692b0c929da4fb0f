//! 3D scenes: geometry built from the encodings (in f64, handed to the GPU as f32) and the
//! camera that looks at it. No GPU objects and no UI live here.

pub mod camera;
pub mod corkscrew;
