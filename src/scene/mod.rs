//! What views draw, built from the encodings: 3D scenes (geometry in f64, handed to the GPU as
//! f32, and the camera that looks at it) and boards of labelled cells for the teaching views.
//! No GPU objects and no UI live here.

pub mod axes;
pub mod board;
pub mod camera;
pub mod context;
pub mod corkscrew;
pub mod dot_decay;
pub mod layouts;
pub mod learned;
pub mod precision;
pub mod relative;
pub mod tour;

/// The colour of series `k` of `n` (a helix, a head): one colour each along the turbo map,
/// without its darkest and palest ends, the same in every chart of a view and its figure.
pub fn series_color(k: usize, n: usize) -> [u8; 3] {
    let t = if n > 1 {
        k as f64 / (n - 1) as f64
    } else {
        0.0
    };
    let c = colorous::TURBO.eval_continuous(0.12 + 0.76 * t);
    [c.r, c.g, c.b]
}
