//! File dialogs that never block the app: each runs on a thread of its own (on the web, on the
//! page's event loop) and its answer is picked up by a later frame.
//!
//! On the web a chosen file's bytes are read and handed over to [`crate::import::handed_over`]
//! under the file's name, which is the "path" the answer gives; saving is a download there (see
//! the export window), so there is no save dialog.

use std::path::PathBuf;
use std::sync::mpsc::{Receiver, TryRecvError, channel};

/// What a view says when its dialog gave no file, `then` saying what to do on the desktop (on
/// the web, where there is always a picker, only a cancel gives none).
pub fn no_file_chosen(then: &str) -> String {
    if cfg!(target_arch = "wasm32") {
        "No file chosen: choose one, or drop it on the page".to_owned()
    } else {
        format!("No file chosen (cancelled, or no file dialog on this desktop): {then}")
    }
}

/// A path box's hint: `desktop` there; on the web, where a path names a file opened in the
/// page, that.
pub fn path_hint(desktop: &'static str) -> &'static str {
    if cfg!(target_arch = "wasm32") {
        "a file opened in this page"
    } else {
        desktop
    }
}

/// A dialog the user has not answered yet.
pub struct PendingDialog {
    answer: Receiver<Option<PathBuf>>,
}

/// How a pending dialog stands this frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DialogAnswer {
    Waiting,
    /// A file was chosen.
    Chosen(PathBuf),
    /// Cancelled, or no dialog could be shown (no desktop portal).
    Cancelled,
}

impl PendingDialog {
    /// Asks for an existing file with one of `extensions`.
    pub fn open_file(ctx: &egui::Context, title: &str, filter: &str, extensions: &[&str]) -> Self {
        let dialog = rfd::AsyncFileDialog::new()
            .set_title(title)
            .add_filter(filter, extensions);
        Self::spawn(ctx, move || dialog.pick_file())
    }

    /// Asks where to save a file, suggesting `file_name`.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn save_file(
        ctx: &egui::Context,
        title: &str,
        file_name: &str,
        filter: &str,
        extensions: &[&str],
    ) -> Self {
        let dialog = rfd::AsyncFileDialog::new()
            .set_title(title)
            .set_file_name(file_name)
            .add_filter(filter, extensions);
        Self::spawn(ctx, move || dialog.save_file())
    }

    /// Shows the dialog `show` opens, where it runs (its future need not be `Send`).
    fn spawn<F>(ctx: &egui::Context, show: impl FnOnce() -> F + Send + 'static) -> Self
    where
        F: Future<Output = Option<rfd::FileHandle>> + 'static,
    {
        let (sender, answer) = channel();
        let ctx = ctx.clone();
        // No thread: the receiver is dropped with the sender and the answer reads as cancelled.
        let _ = crate::jobs::detach(move || async move {
            let chosen = match show().await {
                Some(handle) => Some(chosen_path(handle).await),
                None => None,
            };
            let _ = sender.send(chosen);
            ctx.request_repaint();
        });
        Self { answer }
    }

    /// The answer, once there is one.
    ///
    /// (On the web, a file that could not be read answers as cancelled.)
    pub fn poll(&self) -> DialogAnswer {
        match self.answer.try_recv() {
            Ok(Some(path)) => DialogAnswer::Chosen(path),
            Ok(None) | Err(TryRecvError::Disconnected) => DialogAnswer::Cancelled,
            Err(TryRecvError::Empty) => DialogAnswer::Waiting,
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
async fn chosen_path(handle: rfd::FileHandle) -> PathBuf {
    handle.path().to_path_buf()
}

/// The browser's file, read and handed over under its name.
#[cfg(target_arch = "wasm32")]
async fn chosen_path(handle: rfd::FileHandle) -> PathBuf {
    let bytes = handle.read().await;
    crate::import::handed_over::add(&handle.file_name(), bytes.into())
}
