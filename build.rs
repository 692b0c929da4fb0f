//! Embeds every model config of assets/models in the binary (the app's presets and
//! `poslab config`'s examples read them), so that the files stay the one list of models.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    // Read when the script runs, not when it was compiled: a build script compiled for another
    // checkout of the same source (a worktree sharing the target folder) must still read this
    // one's models.
    let manifest = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let folder = Path::new(&manifest).join("assets/models");
    println!("cargo:rerun-if-changed={}", folder.display());
    // No models would silently leave the app without presets: fail the build instead.
    let mut files: Vec<_> = std::fs::read_dir(&folder)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", folder.display()))
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    assert!(
        !files.is_empty(),
        "{} holds no model config",
        folder.display()
    );
    files.sort();
    let mut code = String::from(
        "/// Every file of assets/models, by file name, sorted: (name, text).\npub const MODEL_CONFIGS: &[(&str, &str)] = &[\n",
    );
    for path in &files {
        println!("cargo:rerun-if-changed={}", path.display());
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let _ = writeln!(
            code,
            "    ({name:?}, include_str!({:?})),",
            path.display().to_string()
        );
    }
    code.push_str("];\n");
    let out = Path::new(&std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("models.rs");
    std::fs::write(out, code).expect("OUT_DIR is writable");
}
