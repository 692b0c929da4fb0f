//! The status bar's facts: which engine runs, the size of the last table (or what a 3D view
//! drew), how long it took.

use std::time::Duration;

use crate::engine::Window;
use crate::engine::reduce::Sampling;

/// How one pixel of the last heatmap relates to the table's cells, in words.
pub fn sampling_text(sampling: Sampling, rows_per_pixel: usize, cols_per_pixel: usize) -> String {
    let cells = |n: usize, one: &str, many: &str| {
        if n == 1 {
            format!("1 {one}")
        } else {
            format!("{} {many}", crate::numbers::thousands(n as u64))
        }
    };
    let per_pixel = format!(
        "{} × {}",
        cells(rows_per_pixel, "row", "rows"),
        cells(cols_per_pixel, "column", "columns")
    );
    match sampling {
        Sampling::Exact => "1 pixel = 1 cell".to_owned(),
        Sampling::Reduced(reduce) => format!("1 pixel = {} of {per_pixel}", reduce.label()),
        Sampling::PointSampled => {
            format!("1 pixel = 1 cell sampled from {per_pixel} (too many cells to reduce)")
        }
    }
}

#[derive(Default)]
pub struct Status {
    /// The shape of the last table drawn, and how much of it was computed.
    pub last_table: Option<Vec<usize>>,
    pub last_window: Option<(usize, usize)>,
    /// How the last table's cells became pixels, and how many one pixel covers `(rows, cols)`.
    pub last_sampling: Option<(Sampling, usize, usize)>,
    pub last_compute: Option<Duration>,
    /// What a 3D view drew, in words.
    pub scene: Option<String>,
    pub error: Option<String>,
    /// What is being computed for the view this frame (the oldest first); cleared at the start
    /// of every frame, filled by what draws.
    pub pending: Vec<crate::jobs::Pending>,
}

impl Status {
    pub fn computed(
        &mut self,
        table_shape: Vec<usize>,
        window: &Window,
        sampling: Sampling,
        took: Duration,
    ) {
        self.last_table = Some(table_shape);
        self.last_window = Some((window.rows.len(), window.cols.len()));
        self.last_sampling = Some((sampling, window.rows.step, window.cols.step));
        self.last_compute = Some(took);
        self.error = None;
    }

    /// A 3D scene was built.
    pub fn built_scene(&mut self, description: String, took: Duration) {
        self.scene = Some(description);
        self.last_compute = Some(took);
        self.error = None;
    }

    /// A result this view shows is on its way.
    pub fn pending(&mut self, pending: crate::jobs::Pending) {
        self.pending.push(pending);
    }

    /// What the status bar says while results are pending: the oldest of them, how long it
    /// has run, and how many others wait.
    pub fn pending_text(&self) -> Option<String> {
        let oldest = self.pending.iter().min_by_key(|p| p.since)?;
        let progress = oldest
            .progress
            .filter(|p| *p > 0.0)
            .map(|p| format!(", {:.0}%", p * 100.0))
            .unwrap_or_default();
        let others = match self.pending.len() - 1 {
            0 => String::new(),
            1 => " (and 1 more)".to_owned(),
            n => format!(" (and {n} more)"),
        };
        Some(format!(
            "{} … {:.1} s{progress}{others}",
            oldest.what,
            oldest.since.elapsed().as_secs_f64()
        ))
    }

    pub fn error(&mut self, message: String) {
        self.error = Some(message);
    }
}
