//! The source's layers only point down: a module may use its own layer and those below, never
//! one above (docs/architecture.md). Read from the sources, so that a new upward import fails
//! here rather than in a review.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Each top-level module of `src/` and its layer, lowest first.
const LAYERS: &[(&str, u32)] = &[
    ("jobs", 0),
    ("colormap", 0),
    ("numbers", 0),
    ("encoding", 0),
    ("engine", 1),
    ("import", 2),
    ("options", 2),
    ("scene", 2),
    ("check", 3),
    ("table_args", 3),
    ("export", 4),
    ("bench", 5),
    ("ui", 6),
    ("widgets", 7),
    ("views", 8),
    ("app", 9),
    ("cli", 9),
    ("web", 9),
];

fn rust_files(folder: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(folder).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// The top-level module a file of `src/` belongs to.
fn module_of(root: &Path, path: &Path) -> String {
    let relative = path.strip_prefix(root).expect("under src/");
    let first = relative
        .components()
        .next()
        .expect("a path component")
        .as_os_str()
        .to_string_lossy()
        .into_owned();
    first.trim_end_matches(".rs").to_owned()
}

/// The top-level modules `text` names as `crate::NAME`.
fn crate_references(text: &str) -> Vec<String> {
    text.match_indices("crate::")
        .filter(|(at, _)| {
            // Not `poslab_crate::` or the like: the word must start there.
            let before = text[..*at].chars().next_back();
            !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
        .map(|(at, _)| {
            text[at + "crate::".len()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect()
        })
        .collect()
}

#[test]
fn no_module_uses_a_layer_above_its_own() {
    let layer: BTreeMap<&str, u32> = LAYERS.iter().copied().collect();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut upward = Vec::new();
    for path in &files {
        let module = module_of(&root, path);
        let Some(&own) = layer.get(module.as_str()) else {
            continue;
        };
        let text = std::fs::read_to_string(path).expect("a source file reads");
        let shown = path
            .strip_prefix(Path::new(env!("CARGO_MANIFEST_DIR")))
            .expect("under the crate")
            .to_string_lossy()
            .replace('\\', "/");
        for target in crate_references(&text) {
            let Some(&theirs) = layer.get(target.as_str()) else {
                continue;
            };
            if theirs <= own {
                continue;
            }
            upward.push(format!(
                "{shown} (layer {own}) uses crate::{target} (layer {theirs})"
            ));
        }
    }
    upward.sort();
    upward.dedup();
    assert!(
        upward.is_empty(),
        "imports from a higher layer:\n{}",
        upward.join("\n")
    );
}

#[test]
fn every_top_level_module_has_a_layer() {
    let layer: BTreeMap<&str, u32> = LAYERS.iter().copied().collect();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(root.join("lib.rs")).expect("src/lib.rs reads");
    for line in lib.lines() {
        if let Some(name) = line
            .strip_prefix("pub mod ")
            .and_then(|r| r.strip_suffix(';'))
        {
            assert!(
                layer.contains_key(name),
                "src/{name} has no layer in LAYERS"
            );
        }
    }
}

#[test]
fn the_reader_finds_what_it_should() {
    // The test above is only as good as this reading.
    let refs =
        crate_references("use crate::engine::Table; x = my_crate::views; crate::ui::STATE_KEY");
    assert_eq!(refs, vec!["engine".to_owned(), "ui".to_owned()]);
}
