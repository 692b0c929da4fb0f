//! A file that appears at its path complete or not at all, and leaves nothing behind: not on
//! an error, not on Ctrl+C or SIGTERM (the temporary file is removed before the process ends),
//! and not after a kill that no process survives (the temporary file's name says which machine
//! wrote it, its writer holds a lock on it while writing, and a later write in the same folder
//! removes it once no one holds that lock).

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

/// Writes go to a hidden temporary file in the target's folder (so the final rename stays on
/// one file system and is atomic); [`AtomicFile::commit`] renames it into place. Dropping it
/// uncommitted deletes the temporary file. Create it when the bytes are ready to be written,
/// after [`check_writable`] has vouched for the target before the work.
pub struct AtomicFile {
    target: PathBuf,
    writer: BufWriter<EarlyWriteback>,
    _registration: Registration,
}

/// The temporary file, asking the kernel to start writing each few MiB to disk as soon as
/// they are written: the bytes then reach the disk while the rest of the table is computed,
/// and the sync before the rename waits only for the last of them, not for all (for a 256 MiB
/// table that sync was half the command's time).
struct EarlyWriteback {
    file: NamedTempFile,
    written: u64,
    started: u64,
}

/// How many bytes accumulate before their writeback is started.
const WRITEBACK_STEP: u64 = 8 << 20;

impl EarlyWriteback {
    fn start_writeback(&mut self) {
        #[cfg(target_os = "linux")]
        {
            use std::os::unix::io::AsRawFd;
            let length = self.written - self.started;
            // SAFETY: a plain system call on a descriptor this struct owns. Only a hint: where
            // it fails (a file system without it), the final sync still does all the work.
            unsafe {
                libc::sync_file_range(
                    self.file.as_file().as_raw_fd(),
                    self.started as libc::off64_t,
                    length as libc::off64_t,
                    libc::SYNC_FILE_RANGE_WRITE,
                )
            };
        }
        self.started = self.written;
    }
}

impl Write for EarlyWriteback {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        // The file itself, not the NamedTempFile: its errors name the temporary path, which
        // is removed before the message is read.
        let n = self.file.as_file_mut().write(bytes)?;
        self.written += n as u64;
        if self.written - self.started >= WRITEBACK_STEP {
            self.start_writeback();
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.as_file_mut().flush()
    }
}

/// The temporary file's place among those a signal removes, given up when the file is
/// committed or dropped (the NamedTempFile then removes it itself).
struct Registration(Option<usize>);

impl Drop for Registration {
    fn drop(&mut self) {
        interrupt::unregister(self.0.take());
    }
}

/// The start of every temporary file's name: `.poslab.<pid>.<host>.<random>.tmp`.
const TEMP_PREFIX: &str = ".poslab.";
const TEMP_SUFFIX: &str = ".tmp";

/// Where a write to `target` lands. Through a symbolic link (a chain of them, up to 40), the
/// file it names, so that the link stays a link and the new file is made beside the file it
/// replaces; `target` itself otherwise.
pub fn resolved_target(target: &Path) -> PathBuf {
    let mut path = target.to_path_buf();
    for _ in 0..40 {
        match std::fs::read_link(&path) {
            Ok(link) if link.is_absolute() => path = link,
            Ok(link) => path = folder_of(&path).join(link),
            Err(_) => break,
        }
    }
    path
}

impl AtomicFile {
    /// A new file for `target`, written through a symbolic link to the file it names.
    pub fn create(target: &Path) -> std::io::Result<Self> {
        let target = resolved_target(target);
        refuse_what_is_not_a_file(&target)?;
        let folder = folder_of(&target);
        remove_stale_temporaries(folder);
        let (temp, registration) = new_temporary(folder)?;
        Ok(Self {
            target,
            writer: BufWriter::with_capacity(
                1 << 20,
                EarlyWriteback {
                    file: temp,
                    written: 0,
                    started: 0,
                },
            ),
            _registration: registration,
        })
    }

    /// Reserves `bytes` on disk for the file, so the file system allocates its blocks in one
    /// piece instead of a few at a time as the writes arrive. Only a hint: where it cannot
    /// (another system, a file system without `fallocate`), the writes allocate as usual.
    pub fn reserve(&mut self, bytes: u64) {
        #[cfg(target_os = "linux")]
        {
            use std::os::unix::io::AsRawFd;
            let fd = self.writer.get_ref().file.as_file().as_raw_fd();
            // SAFETY: a plain system call on a descriptor this struct owns.
            unsafe { libc::fallocate(fd, 0, 0, bytes as libc::off64_t) };
        }
        #[cfg(not(target_os = "linux"))]
        let _ = bytes;
    }

    pub fn writer(&mut self) -> &mut impl Write {
        &mut self.writer
    }

    /// Flushes, syncs and renames the file into place.
    /// A file it replaces keeps its permissions (a private 0600 file stays private); the new
    /// file is a new inode, so another hard link to the old one keeps the old contents.
    pub fn commit(self) -> std::io::Result<()> {
        let temp = self.writer.into_inner().map_err(|e| e.into_error())?.file;
        if let Ok(existing) = std::fs::metadata(&self.target)
            && existing.is_file()
        {
            temp.as_file().set_permissions(existing.permissions())?;
        }
        temp.as_file().sync_all()?;
        temp.persist(&self.target).map_err(|e| e.error)?;
        Ok(())
    }
}

/// Removes every temporary file this process is writing, at once, allocating nothing: for a
/// process about to end on a failure no error path can report (an allocation that failed).
pub fn remove_temporary_files() {
    interrupt::remove_all();
}

/// Refuses, before any work, a target that could not be written: a folder where no file can
/// be created, or a name longer than the file system allows (which would otherwise fail only
/// at the final rename). Leaves nothing behind.
pub fn check_writable(target: &Path) -> std::io::Result<()> {
    let target = &resolved_target(target);
    refuse_what_is_not_a_file(target)?;
    drop(new_temporary(folder_of(target))?);
    Ok(())
}

/// Refuses a target that is there and is not a regular file (a device, a FIFO, a socket, a
/// folder, a loop of symbolic links, after [`resolved_target`]): the rename would replace the
/// node or the link with a file. Also stat's own errors ("File name too long", whether or not
/// the file exists).
fn refuse_what_is_not_a_file(target: &Path) -> std::io::Result<()> {
    let metadata = match std::fs::symlink_metadata(target) {
        Ok(metadata) => metadata,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    let kind = metadata.file_type();
    if kind.is_file() {
        return Ok(());
    }
    let what = if kind.is_dir() {
        "a folder"
    } else if kind.is_symlink() {
        "a loop of symbolic links"
    } else {
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            if kind.is_char_device() || kind.is_block_device() {
                "a device"
            } else if kind.is_fifo() {
                "a FIFO (a named pipe)"
            } else if kind.is_socket() {
                "a socket"
            } else {
                "not a regular file"
            }
        }
        #[cfg(not(unix))]
        "not a regular file"
    };
    Err(std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("it is {what}, and poslab writes only regular files, never replacing one of those"),
    ))
}

/// Bytes this user may still write to the file system that holds `target`'s folder; `None`
/// where the system does not say.
pub fn free_bytes(target: &Path) -> Option<u64> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let folder = std::ffi::CString::new(folder_of(target).as_os_str().as_bytes()).ok()?;
        // SAFETY: statvfs only writes the struct it is given; a zeroed one is a valid start.
        let mut stats: libc::statvfs = unsafe { std::mem::zeroed() };
        if unsafe { libc::statvfs(folder.as_ptr(), &mut stats) } != 0 {
            return None;
        }
        #[allow(clippy::unnecessary_cast)] // the fields' widths differ between systems
        Some((stats.f_bavail as u64).saturating_mul(stats.f_frsize as u64))
    }
    #[cfg(not(unix))]
    {
        let _ = target;
        None
    }
}

/// Why a file of `needed` bytes cannot go where `free` bytes are left, if it cannot.
pub fn space_problem(needed: u64, free: u64) -> Option<String> {
    use crate::engine::human_bytes;
    (needed > free).then(|| {
        format!(
            "it needs at least {} and the file system there has {} free",
            human_bytes(u128::from(needed)),
            human_bytes(u128::from(free))
        )
    })
}

/// A temporary file in `folder` named after this process and machine, noted for removal on a
/// signal before it exists: noted after, a signal in between would leave it behind.
fn new_temporary(folder: &Path) -> std::io::Result<(NamedTempFile, Registration)> {
    let prefix = format!("{TEMP_PREFIX}{}.{}.", std::process::id(), host_name());
    let mut registration = Registration(None);
    let file = tempfile::Builder::new()
        .prefix(&prefix)
        .suffix(TEMP_SUFFIX)
        .make_in(folder, |path| {
            // A name taken already (by this process: the name holds its id) is tried again
            // with another; the slot follows the name.
            interrupt::unregister(registration.0.take());
            registration.0 = interrupt::register(path);
            let mut options = std::fs::OpenOptions::new();
            options.read(true).write(true).create_new(true);
            // Created as any new file would be (0666 less the umask), not private like a
            // temporary file: this one becomes the user's file.
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                options.mode(0o666);
            }
            let file = options.open(path)?;
            hold_lock(&file);
            Ok(file)
        })?;
    Ok((file, registration))
}

/// Takes an exclusive lock on a temporary file for as long as it is open: while a writer
/// holds it, no clean-up (of this machine, in any container sharing the folder) takes the file
/// for a dead writer's. Only a hint where the file system has no locks.
fn hold_lock(file: &std::fs::File) {
    #[cfg(unix)]
    {
        use std::os::unix::io::AsRawFd;
        // SAFETY: a plain system call on a descriptor the caller owns.
        unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    }
    #[cfg(not(unix))]
    let _ = file;
}

/// How long a temporary file must have gone unwritten before it may be taken for a dead
/// writer's: a fresh one may be between its creation and its lock.
const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(10);

/// Where the file system has no locks, how long a temporary file must have gone unwritten
/// before it is taken for a dead writer's: far past any write poslab makes.
const STALE_WITHOUT_LOCKS: std::time::Duration = std::time::Duration::from_secs(7 * 24 * 3600);

/// Whether the temporary file at `path` was left by a writer that is gone: nobody holds its
/// lock (a live writer does, whatever its process namespace), and it has not been written for
/// [`STALE_AFTER`]; without locks, for [`STALE_WITHOUT_LOCKS`]. Never by its process id alone:
/// a writer in another PID namespace has an id that means nothing here.
fn left_by_a_dead_writer(path: &Path) -> bool {
    let Ok(metadata) = std::fs::symlink_metadata(path) else {
        return false;
    };
    let age = metadata
        .modified()
        .ok()
        .and_then(|modified| modified.elapsed().ok())
        .unwrap_or_default();
    if !metadata.is_file() || age < STALE_AFTER {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        use std::os::unix::io::AsRawFd;
        // Not following a link, never waiting on a device or a FIFO put in its place.
        let Ok(file) = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(path)
        else {
            return false;
        };
        // SAFETY: a plain system call on a descriptor owned here; the lock goes with it.
        let locked = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if locked == 0 {
            return true;
        }
        let error = std::io::Error::last_os_error().raw_os_error();
        // Held: a live writer. No locks on this file system: only a great age says.
        error != Some(libc::EWOULDBLOCK) && age >= STALE_WITHOUT_LOCKS
    }
    #[cfg(not(unix))]
    {
        age >= STALE_WITHOUT_LOCKS
    }
}

fn folder_of(target: &Path) -> &Path {
    match target.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

/// This machine's name, as temporary files carry it ("unknown" when the system does not say).
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|name| name.trim().to_owned())
        .ok()
        .filter(|name| {
            !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
        })
        .unwrap_or_else(|| "unknown".to_owned())
}

/// Removes `folder`'s temporary files left by a poslab process of this machine that is gone
/// (killed with SIGKILL, or the machine lost power): see [`left_by_a_dead_writer`]. Another
/// machine's, or a live writer's (in this container or another), are left alone.
fn remove_stale_temporaries(folder: &Path) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    let host = host_name();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        let Some((_, owner)) = temporary_owner(name) else {
            continue;
        };
        if owner == host && left_by_a_dead_writer(&entry.path()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The process id and machine a temporary file's name gives.
fn temporary_owner(name: &str) -> Option<(u32, &str)> {
    let rest = name.strip_prefix(TEMP_PREFIX)?.strip_suffix(TEMP_SUFFIX)?;
    let (pid, rest) = rest.split_once('.')?;
    let (host, random) = rest.rsplit_once('.')?;
    (!random.is_empty() && !host.is_empty()).then_some(())?;
    Some((pid.parse().ok()?, host))
}

/// What SIGINT, SIGTERM, SIGHUP and every other signal that ends a process do while temporary
/// files are open: remove them, then end the process as the signal would have.
#[cfg(unix)]
mod interrupt {
    use std::ffi::CString;
    use std::path::Path;
    use std::sync::atomic::{AtomicPtr, Ordering};

    /// Temporary files being written, as C strings for `unlink` (a signal handler may neither
    /// allocate nor lock). A path is never freed once stored, since a handler may be reading
    /// it; a process writes few files, so what stays is a few bytes each.
    const SLOTS: usize = 64;
    static PATHS: [AtomicPtr<libc::c_char>; SLOTS] =
        [const { AtomicPtr::new(std::ptr::null_mut()) }; SLOTS];

    /// Notes `path` for removal on a signal; `None` when every slot is taken (the file is then
    /// removed on errors and drops only).
    pub(super) fn register(path: &Path) -> Option<usize> {
        install_handlers();
        use std::os::unix::ffi::OsStrExt;
        let c_path = CString::new(path.as_os_str().as_bytes()).ok()?;
        let raw = c_path.into_raw();
        for (slot, entry) in PATHS.iter().enumerate() {
            if entry
                .compare_exchange(
                    std::ptr::null_mut(),
                    raw,
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                )
                .is_ok()
            {
                return Some(slot);
            }
        }
        // SAFETY: `raw` came from `into_raw` just above and was stored nowhere.
        drop(unsafe { CString::from_raw(raw) });
        None
    }

    pub(super) fn unregister(slot: Option<usize>) {
        if let Some(slot) = slot {
            // Leaked on purpose: see PATHS.
            PATHS[slot].store(std::ptr::null_mut(), Ordering::SeqCst);
        }
    }

    fn install_handlers() {
        static INSTALL: std::sync::Once = std::sync::Once::new();
        INSTALL.call_once(|| {
            // Past the file size limit (ulimit -f), a write fails with EFBIG, reported as
            // "file size limit exceeded", instead of SIGXFSZ ending the process with no word
            // and the temporary file left behind.
            // SAFETY: resets one signal's disposition; no handler runs.
            unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
            // Every signal whose default is to end the process, so that none leaves a
            // temporary file; but SIGSEGV and SIGBUS, whose handler Rust's runtime keeps to
            // report a stack overflow.
            let named = [
                libc::SIGINT,
                libc::SIGTERM,
                libc::SIGHUP,
                libc::SIGPIPE,
                libc::SIGQUIT,
                libc::SIGUSR1,
                libc::SIGUSR2,
                libc::SIGALRM,
                libc::SIGVTALRM,
                libc::SIGPROF,
                libc::SIGXCPU,
                libc::SIGIO,
                #[cfg(any(target_os = "linux", target_os = "android"))]
                libc::SIGPWR,
                libc::SIGSYS,
                libc::SIGTRAP,
                libc::SIGABRT,
                libc::SIGILL,
                libc::SIGFPE,
                #[cfg(any(target_os = "linux", target_os = "android"))]
                libc::SIGSTKFLT,
            ];
            // The real-time signals end the process too, unless handled.
            #[cfg(any(target_os = "linux", target_os = "android"))]
            let real_time = libc::SIGRTMIN()..=libc::SIGRTMAX();
            #[cfg(not(any(target_os = "linux", target_os = "android")))]
            let real_time = 1..=0;
            for signal in named.into_iter().chain(real_time) {
                // SAFETY: the handler only calls async-signal-safe functions (unlink, signal,
                // raise) and reads atomics.
                unsafe {
                    let previous =
                        libc::signal(signal, on_signal as *const () as libc::sighandler_t);
                    // A signal the process was told to ignore (nohup; SIGPIPE in the app, where
                    // Rust ignores it) stays ignored.
                    if previous == libc::SIG_IGN {
                        libc::signal(signal, libc::SIG_IGN);
                    }
                }
            }
        });
    }

    /// Removes every temporary file being written; allocates nothing and calls only unlink,
    /// so a signal handler or an allocator that has failed may call it.
    pub(super) fn remove_all() {
        for entry in &PATHS {
            let path = entry.swap(std::ptr::null_mut(), Ordering::SeqCst);
            if !path.is_null() {
                // SAFETY: a NUL-terminated path from CString::into_raw, never freed.
                unsafe { libc::unlink(path) };
            }
        }
    }

    extern "C" fn on_signal(signal: libc::c_int) {
        remove_all();
        // SAFETY: async-signal-safe; ends the process as the signal does by default (exit
        // status 128 + signal for a shell).
        unsafe {
            libc::signal(signal, libc::SIG_DFL);
            libc::raise(signal);
        }
    }
}

/// Elsewhere, temporary files are removed on errors and drops only.
#[cfg(not(unix))]
mod interrupt {
    pub(super) fn register(_: &std::path::Path) -> Option<usize> {
        None
    }
    pub(super) fn unregister(_: Option<usize>) {}

    pub(super) fn remove_all() {}
}

#[cfg(test)]
mod tests {
    use super::{free_bytes, space_problem, temporary_owner};
    use crate::export::OutputFormat;

    #[test]
    fn a_table_that_cannot_fit_is_named_with_both_sizes() {
        assert_eq!(space_problem(10, 10), None);
        assert_eq!(
            space_problem(16 << 20, 10 << 20).as_deref(),
            Some("it needs at least 16.0 MiB and the file system there has 10.0 MiB free")
        );
        // 4096 x 512 values: 8 MiB of f32 in a .npy, at least 4 MiB of text in a .csv.
        assert_eq!(OutputFormat::Npy.least_bytes(4096 * 512, 4), 8 << 20);
        assert_eq!(OutputFormat::Csv.least_bytes(4096 * 512, 8), 4 << 20);
        assert_eq!(OutputFormat::Npy.least_bytes(u64::MAX, 8), u64::MAX);
    }

    #[cfg(unix)]
    #[test]
    fn the_free_space_of_a_folder_is_known() {
        let folder = tempfile::tempdir().unwrap();
        let free = free_bytes(&folder.path().join("table.npy")).unwrap();
        assert!(free > 0);
        // A folder that does not exist has no file system to ask.
        assert_eq!(
            free_bytes(std::path::Path::new("/no/such/folder/t.npy")),
            None
        );
    }

    #[test]
    fn a_temporary_name_gives_its_process_and_machine() {
        assert_eq!(
            temporary_owner(".poslab.1234.box-7.lab.org.Ab3xYz.tmp"),
            Some((1234, "box-7.lab.org"))
        );
        assert_eq!(temporary_owner(".poslab-Ab3xYz.tmp"), None);
        assert_eq!(temporary_owner("pe.npy"), None);
        assert_eq!(temporary_owner(".poslab.x.host.r.tmp"), None);
    }
}
