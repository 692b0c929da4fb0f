//! The status bar's facts: which engine runs, the size of the last table (or what a 3D view
//! drew), how long it took.

use std::time::Duration;

use crate::engine::Window;

#[derive(Default)]
pub struct Status {
    /// The shape of the last table drawn, and how much of it was computed.
    pub last_table: Option<Vec<usize>>,
    pub last_window: Option<(usize, usize)>,
    pub last_compute: Option<Duration>,
    /// What a 3D view drew, in words.
    pub scene: Option<String>,
    pub error: Option<String>,
}

impl Status {
    pub fn computed(&mut self, table_shape: Vec<usize>, window: &Window, took: Duration) {
        self.last_table = Some(table_shape);
        self.last_window = Some((window.rows.len(), window.cols.len()));
        self.last_compute = Some(took);
        self.error = None;
    }

    /// A 3D scene was built.
    pub fn built_scene(&mut self, description: String, took: Duration) {
        self.scene = Some(description);
        self.last_compute = Some(took);
        self.error = None;
    }

    pub fn error(&mut self, message: String) {
        self.error = Some(message);
    }
}
