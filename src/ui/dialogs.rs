//! File dialogs that never block the app: each runs on a thread of its own and its answer is
//! picked up by a later frame.

use std::path::PathBuf;
use std::sync::mpsc::{Receiver, TryRecvError, channel};

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
        Self::spawn(ctx, async move { dialog.pick_file().await })
    }

    /// Asks where to save a file, suggesting `file_name`.
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
        Self::spawn(ctx, async move { dialog.save_file().await })
    }

    fn spawn(
        ctx: &egui::Context,
        dialog: impl Future<Output = Option<rfd::FileHandle>> + Send + 'static,
    ) -> Self {
        let (sender, answer) = channel();
        let ctx = ctx.clone();
        std::thread::spawn(move || {
            let chosen = pollster::block_on(dialog).map(|handle| handle.path().to_path_buf());
            let _ = sender.send(chosen);
            ctx.request_repaint();
        });
        Self { answer }
    }

    /// The answer, once there is one.
    pub fn poll(&self) -> DialogAnswer {
        match self.answer.try_recv() {
            Ok(Some(path)) => DialogAnswer::Chosen(path),
            Ok(None) | Err(TryRecvError::Disconnected) => DialogAnswer::Cancelled,
            Err(TryRecvError::Empty) => DialogAnswer::Waiting,
        }
    }
}
