//! Files the browser handed over: the web page has no file system, so a file chosen in the
//! browser's picker or dropped on the page is held here, by its name, and read from memory
//! wherever the desktop would open a path (the views keep working with names).
//!
//! Only the web page adds files; on the desktop the list stays empty and every path is a
//! file on disk. The list holds the last few files only, so that a session of many files does
//! not keep them all.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Why a name is not a file on the web page, where only handed-over files exist.
pub const NOT_HELD: &str = "is not open in this page (a web page reads only the files chosen with Open… or dropped on it, the last four): open it again";

/// A file's bytes, shared without copying.
#[derive(Clone)]
pub struct Bytes(Arc<[u8]>);

impl Bytes {
    /// The bytes, shared.
    pub fn shared(&self) -> Arc<[u8]> {
        self.0.clone()
    }
}

impl AsRef<[u8]> for Bytes {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// Files kept at once: a table, a model's config and a few more; an older one is dropped (and
/// a view that opens it again says it is not there).
const KEPT_FILES: usize = 4;

static FILES: Mutex<Vec<(PathBuf, Bytes)>> = Mutex::new(Vec::new());

/// Holds `bytes` under `name` (replacing a file of the same name), and returns the path the
/// views open it by.
pub fn add(name: &str, bytes: Arc<[u8]>) -> PathBuf {
    let path = PathBuf::from(name);
    let mut files = FILES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    files.retain(|(held, _)| held != &path);
    if files.len() >= KEPT_FILES {
        files.remove(0);
    }
    files.push((path.clone(), Bytes(bytes)));
    path
}

/// The bytes of the file handed over as `path`, if it is held.
pub fn get(path: &Path) -> Option<Bytes> {
    let files = FILES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    files
        .iter()
        .find(|(held, _)| held == path)
        .map(|(_, bytes)| bytes.clone())
}

/// The text of `path`: a file handed over, else the file on disk.
pub fn read_to_string(path: &Path) -> std::io::Result<String> {
    match get(path) {
        Some(bytes) => String::from_utf8(bytes.as_ref().to_vec())
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e)),
        None if cfg!(target_arch = "wasm32") => {
            Err(std::io::Error::new(std::io::ErrorKind::NotFound, NOT_HELD))
        }
        None => std::fs::read_to_string(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handed_over_table_is_read_by_its_name_and_the_oldest_is_dropped() {
        // A .npy of three float32 values, made by hand: the header NumPy writes, then the data.
        let header = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
        let mut npy = b"\x93NUMPY\x01\x00".to_vec();
        let padded = format!("{header:<117}\n");
        npy.extend_from_slice(&(padded.len() as u16).to_le_bytes());
        npy.extend_from_slice(padded.as_bytes());
        for v in [1.5f32, -2.0, 0.25] {
            npy.extend_from_slice(&v.to_le_bytes());
        }
        let name = "handed_over_test_table.npy";
        let path = add(name, npy.into());
        let table = crate::import::read_npy_f64(&path, 1 << 20).expect("read from memory");
        assert_eq!(table.iter().copied().collect::<Vec<_>>(), [1.5, -2.0, 0.25]);
        for k in 0..KEPT_FILES {
            add(
                &format!("handed_over_test_other_{k}.csv"),
                Arc::from(&b"1"[..]),
            );
        }
        assert!(get(&path).is_none(), "the oldest file is dropped");
        let error = crate::import::read_npy_f64(&path, 1 << 20).expect_err("no longer held");
        assert!(error.to_string().contains(name), "{error}");
    }
}
