//! The `poslab` binary: with a command, the command line runs it; without one, the desktop app
//! opens.

use poslab::cli::{self, Outcome};

/// The system's allocator, except that an allocation it cannot make (a memory limit, `ulimit
/// -v`, a cgroup) ends the command with one line and exit status 2, its temporary files
/// removed, instead of Rust's abort (status 134, and a file left behind).
#[global_allocator]
static ALLOCATOR: ExitWhenOutOfMemory = ExitWhenOutOfMemory;

struct ExitWhenOutOfMemory;

// SAFETY: every call is passed to the system allocator unchanged; only a null result is acted
// on, and then the process ends.
unsafe impl std::alloc::GlobalAlloc for ExitWhenOutOfMemory {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let pointer = unsafe { std::alloc::System.alloc(layout) };
        if pointer.is_null() {
            out_of_memory(layout.size());
        }
        pointer
    }

    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let pointer = unsafe { std::alloc::System.alloc_zeroed(layout) };
        if pointer.is_null() {
            out_of_memory(layout.size());
        }
        pointer
    }

    unsafe fn realloc(
        &self,
        pointer: *mut u8,
        layout: std::alloc::Layout,
        new_size: usize,
    ) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        let moved = unsafe { std::alloc::System.realloc(pointer, layout, new_size) };
        if moved.is_null() {
            out_of_memory(new_size);
        }
        moved
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { std::alloc::System.dealloc(pointer, layout) }
    }
}

/// Ends the process after an allocation of `size` bytes failed: nothing here may allocate, so
/// the line is assembled on the stack and written with one system call.
fn out_of_memory(size: usize) -> ! {
    poslab::export::remove_temporary_files();
    let mut line = [0u8; 192];
    let mut at = 0;
    let mut put = |bytes: &[u8]| {
        for &b in bytes {
            if at < line.len() {
                line[at] = b;
                at += 1;
            }
        }
    };
    put(b"error: out of memory: an allocation of ");
    let mut digits = [0u8; 20];
    let mut n = size;
    let mut count = 0;
    loop {
        digits[count] = b'0' + (n % 10) as u8;
        count += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    digits[..count].reverse();
    put(&digits[..count]);
    put(b" bytes failed (a memory limit: ulimit -v, a cgroup); give a smaller size, or more memory\n");
    #[cfg(unix)]
    // SAFETY: write and _exit are async-signal-safe and allocate nothing.
    unsafe {
        libc::write(2, line.as_ptr().cast(), at);
        libc::_exit(2);
    }
    #[cfg(not(unix))]
    std::process::abort();
}

fn main() {
    quiet_device_selection();
    if std::env::args_os().len() > 1 {
        end_quietly_on_closed_pipe();
    }
    let status = match cli::dispatch(std::env::args_os()) {
        Outcome::Exit(status) => status,
        Outcome::OpenApp(_) if no_display() => {
            poslab::table_args::output::note(
                "error: there is no display to open the app's window on (neither DISPLAY nor WAYLAND_DISPLAY is set); the command line still works: poslab --help",
            );
            1
        }
        Outcome::OpenApp(launch) => match poslab::app::run(launch) {
            Ok(()) => 0,
            Err(error) => {
                poslab::table_args::output::note(&format!(
                    "error: the app could not open a window ({error}); the command line still \
                     works: poslab --help"
                ));
                1
            }
        },
    };
    std::process::exit(status);
}

/// Whether this is a Linux (or BSD) session without a display server to open a window on: said
/// plainly, before winit's message (which names a source file of the machine it was built on).
fn no_display() -> bool {
    cfg!(all(unix, not(target_os = "macos")))
        && ["DISPLAY", "WAYLAND_DISPLAY", "WAYLAND_SOCKET"]
            .iter()
            .all(|name| std::env::var_os(name).is_none_or(|value| value.is_empty()))
}

/// Mesa's device-selection layer (an implicit Vulkan layer) asks Wayland for the compositor's
/// GPU whenever a Vulkan instance is made, and outside a desktop session (no XDG_RUNTIME_DIR)
/// libwayland prints an error line for it, twice, on runs that then succeed. poslab picks its
/// adapter itself, so there the layer is switched off by its own documented variable.
fn quiet_device_selection() {
    if std::env::var_os("XDG_RUNTIME_DIR").is_none()
        && std::env::var_os("NODEVICE_SELECT").is_none()
    {
        // SAFETY: the first thing main does: no other thread exists yet to read the environment.
        unsafe { std::env::set_var("NODEVICE_SELECT", "1") };
    }
}

/// A command whose reader goes away (`poslab identify t.npy | head -1`) ends as other command
/// line tools do, by SIGPIPE, not with a panic and a backtrace from the next `println!` (Rust
/// ignores SIGPIPE by default, turning it into a write error). Only for commands: the app keeps
/// the default, so a broken connection is an error it can report. A table being written is
/// still removed on SIGPIPE, like on Ctrl+C (the export's signal handlers).
fn end_quietly_on_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: before any other thread exists; resets one signal's disposition.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
