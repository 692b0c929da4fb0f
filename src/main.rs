//! The `poslab` binary: with a command, the command line runs it; without one, the desktop app
//! opens.

use poslab::cli::{self, Outcome};

fn main() {
    quiet_device_selection();
    if std::env::args_os().len() > 1 {
        end_quietly_on_closed_pipe();
    }
    let status = match cli::dispatch(std::env::args_os()) {
        Outcome::Exit(status) => status,
        Outcome::OpenApp(launch) => match poslab::app::run(launch) {
            Ok(()) => 0,
            Err(error) => {
                eprintln!(
                    "error: the app could not open a window ({error}); the command line still \
                     works: poslab --help"
                );
                1
            }
        },
    };
    std::process::exit(status);
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
