//! The `poslab` binary: parse the command line and run what it asks for.

fn main() {
    std::process::exit(poslab::cli::run(std::env::args_os()));
}
