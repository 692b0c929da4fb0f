//! The source's layers only point down: a module may use its own layer and those below, never
//! one above (docs/architecture.md). Read from the sources, so that a new upward import fails
//! here rather than in a review.

mod common;

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
    common::rust_files(&root, &mut files);
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

/// A file's module path under `src/`: `["engine", "gpu", "plan"]` for src/engine/gpu/plan.rs,
/// `["engine", "gpu"]` for its mod.rs.
fn module_path(root: &Path, path: &Path) -> Vec<String> {
    let relative = path.strip_prefix(root).expect("under src/");
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().expect("a file name");
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        parts.push(stem.to_owned());
    }
    parts
}

/// The module paths `text` (the source of the file at `own`) names: `crate::a::b`, `super::c`,
/// and each item of a `use` group (`crate::a::{b, c::d}`).
fn named_paths(text: &str, own: &[String], is_mod_file: bool) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let word = |c: char| c.is_alphanumeric() || c == '_';
    for (at, _) in text
        .match_indices("crate::")
        .chain(text.match_indices("super::"))
    {
        if text[..at].chars().next_back().is_some_and(word) {
            continue;
        }
        let mut base: Vec<String> = if text[at..].starts_with("crate::") {
            Vec::new()
        } else {
            // `super::` from a file's module is its parent; from a mod.rs, the grandparent.
            let mut parent = own.to_vec();
            if !is_mod_file || !parent.is_empty() {
                parent.pop();
            }
            parent
        };
        let mut rest = &text[at..];
        rest = rest.split_once("::").map_or("", |(_, r)| r);
        while let Some(r) = rest.strip_prefix("super::") {
            base.pop();
            rest = r;
        }
        let path: String = rest.chars().take_while(|&c| word(c) || c == ':').collect();
        let mut segments: Vec<String> = base;
        segments.extend(
            path.split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_owned),
        );
        let group = rest[path.len()..].strip_prefix('{');
        found.push(segments.clone());
        if let Some(group) = group {
            let inner = group.split('}').next().unwrap_or_default();
            for item in inner.split(',') {
                let item = item.trim().split(" as ").next().unwrap_or_default();
                let mut full = segments.clone();
                full.extend(
                    item.split("::")
                        .map(|s| s.trim().trim_matches(|c| c == '{' || c == '}'))
                        .filter(|s| !s.is_empty() && *s != "self")
                        .map(str::to_owned),
                );
                found.push(full);
            }
        }
    }
    found
}

#[test]
fn no_files_beside_each_other_use_each_other() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    common::rust_files(&root, &mut files);
    let modules: BTreeMap<Vec<String>, PathBuf> = files
        .iter()
        .map(|path| (module_path(&root, path), path.clone()))
        .collect();
    // The file a path lands in: its longest prefix that is a module of its own.
    let file_of = |path: &[String]| -> Option<Vec<String>> {
        (1..=path.len())
            .rev()
            .map(|k| path[..k].to_vec())
            .find(|prefix| modules.contains_key(prefix))
    };
    let mut uses: BTreeMap<Vec<String>, Vec<Vec<String>>> = BTreeMap::new();
    for (own, path) in &modules {
        let text = std::fs::read_to_string(path).expect("a source file reads");
        // Tests inside a file may use anything; comments name what they like.
        let code: String = text
            .split("#[cfg(test)]\nmod tests")
            .next()
            .unwrap_or_default()
            .lines()
            .filter(|line| !line.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let text = code.as_str();
        let is_mod_file = path.ends_with("mod.rs");
        let mut targets: Vec<Vec<String>> = named_paths(text, own, is_mod_file)
            .iter()
            .filter_map(|named| file_of(named))
            // A module and the files it declares (its mod.rs and their parent) aside.
            .filter(|target| target != own && !own.starts_with(target) && !target.starts_with(own))
            .collect();
        targets.sort();
        targets.dedup();
        uses.insert(own.clone(), targets);
    }
    // A circle: a file reached again from itself.
    let mut circles = Vec::new();
    for start in uses.keys() {
        let mut stack = vec![(start.clone(), vec![start.clone()])];
        let mut seen = std::collections::BTreeSet::new();
        while let Some((at, trail)) = stack.pop() {
            for next in uses.get(&at).into_iter().flatten() {
                if next == start {
                    circles.push(
                        trail
                            .iter()
                            .map(|m| m.join("/"))
                            .collect::<Vec<_>>()
                            .join(" -> "),
                    );
                } else if seen.insert(next.clone()) {
                    let mut longer = trail.clone();
                    longer.push(next.clone());
                    stack.push((next.clone(), longer));
                }
            }
        }
    }
    assert!(
        circles.is_empty(),
        "files that use each other:\n{}",
        circles.join("\n")
    );
}

#[test]
fn the_path_reader_finds_groups_and_parents() {
    let own = vec![
        "export".to_owned(),
        "figure".to_owned(),
        "context".to_owned(),
    ];
    let found = named_paths(
        "use super::options::{FigureArgs, Words};\nuse crate::scene::{self, context::X};",
        &own,
        false,
    );
    let joined: Vec<String> = found.iter().map(|p| p.join("/")).collect();
    for expected in [
        "export/figure/options/FigureArgs",
        "export/figure/options/Words",
        "scene/context/X",
    ] {
        assert!(joined.contains(&expected.to_owned()), "{joined:?}");
    }
}
