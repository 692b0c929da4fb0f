//! The `poslab` binary: with a command, the command line runs it; without one, the desktop app
//! opens.

use poslab::cli::{self, Outcome};

fn main() {
    quiet_device_selection();
    let status = match cli::dispatch(std::env::args_os()) {
        Outcome::Exit(status) => status,
        Outcome::OpenApp => match poslab::app::run() {
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
