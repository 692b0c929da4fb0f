//! What the app's views and widgets share, below both: the shared parameters and the side
//! panel's rows for them, the engine handle workers compute with, each view's status line,
//! and file dialogs that never block a frame.

pub mod dialogs;
pub mod engine;
pub mod params;
pub mod status;
pub mod theme;

/// The key the app's state is saved under (each view's own settings under keys made from it).
pub const STATE_KEY: &str = "poslab";
