//! A file that appears at its path complete or not at all.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

/// Writes go to a hidden temporary file in the target's folder (so the final rename stays on
/// one file system and is atomic); [`AtomicFile::commit`] renames it into place. Dropping it
/// uncommitted deletes the temporary file.
pub struct AtomicFile {
    target: PathBuf,
    writer: BufWriter<NamedTempFile>,
}

impl AtomicFile {
    /// Creates the temporary file now, so that an unwritable folder is reported before any work.
    pub fn create(target: &Path) -> std::io::Result<Self> {
        let folder = match target.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        let mut builder = tempfile::Builder::new();
        builder.prefix(".poslab-").suffix(".tmp");
        // Created as any new file would be (0666 less the umask), not private like a
        // temporary file: this one becomes the user's file.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o666));
        }
        let temp = builder.tempfile_in(folder)?;
        Ok(Self {
            target: target.to_owned(),
            writer: BufWriter::with_capacity(1 << 20, temp),
        })
    }

    pub fn writer(&mut self) -> &mut impl Write {
        &mut self.writer
    }

    /// Flushes, syncs and renames the file into place.
    pub fn commit(self) -> std::io::Result<()> {
        let temp = self.writer.into_inner().map_err(|e| e.into_error())?;
        temp.as_file().sync_all()?;
        temp.persist(&self.target).map_err(|e| e.error)?;
        Ok(())
    }
}
