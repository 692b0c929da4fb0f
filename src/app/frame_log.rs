//! The frame log, for measuring how the app answers: with `POSLAB_FRAME_LOG=PATH` set, one line
//! per frame is appended to PATH: seconds since the app started, the milliseconds the frame's
//! own work took (update and UI, not the renderer's), and `1` when a result the view shows is
//! pending, else `0`.

use std::io::Write;
use std::time::Duration;
use web_time::Instant;

/// The variable that names the log.
pub const FRAME_LOG_VARIABLE: &str = "POSLAB_FRAME_LOG";

pub struct FrameLog {
    file: std::io::LineWriter<std::fs::File>,
    started: Instant,
    /// Set once a write failed: the app goes on without the log, having said why once.
    failed: bool,
}

impl FrameLog {
    /// The log named by `POSLAB_FRAME_LOG`, if set; a file that cannot be opened is reported on
    /// standard error and the app runs without it.
    pub fn from_environment() -> Option<Self> {
        let path = std::env::var_os(FRAME_LOG_VARIABLE)?;
        match std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
        {
            Ok(file) => Some(Self {
                file: std::io::LineWriter::new(file),
                started: Instant::now(),
                failed: false,
            }),
            Err(error) => {
                eprintln!(
                    "warning: {FRAME_LOG_VARIABLE}: cannot open {}: {error}; no frame log is written",
                    std::path::Path::new(&path).display()
                );
                None
            }
        }
    }

    /// One frame: its own work took `took`; `pending` when a result it shows is on its way.
    pub fn record(&mut self, took: Duration, pending: bool) {
        if self.failed {
            return;
        }
        let line = format!(
            "{:.4} {:.3} {}\n",
            self.started.elapsed().as_secs_f64(),
            took.as_secs_f64() * 1e3,
            u8::from(pending)
        );
        if let Err(error) = self.file.write_all(line.as_bytes()) {
            eprintln!("warning: {FRAME_LOG_VARIABLE}: {error}; the frame log stops here");
            self.failed = true;
        }
    }
}
