//! Hostile inputs, round three: control characters in names and titles, and the other probes
//! of issue 32 that the command line must meet with one clear line and nothing left behind.

mod common;

/// An SVG document as the strict XML parser of usvg reads it.
fn parses(svg: &str) -> bool {
    resvg::usvg::Tree::from_str(svg, &resvg::usvg::Options::default()).is_ok()
}

#[test]
fn control_characters_in_titles_and_names_never_break_a_file_or_a_line() {
    let folder = tempfile::tempdir().unwrap();
    let svg = folder.path().join("x.svg");
    let png = folder.path().join("x.png");
    let title = "a\u{1}b\u{1b}]0;pwned\u{7}<c&d";
    for out in [&svg, &png] {
        let (code, text) = common::run_poslab(&[
            "figure",
            "sinusoidal",
            "--seq",
            "16",
            "--dim",
            "8",
            "--title",
            title,
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{text}");
    }
    let document = std::fs::read_to_string(&svg).unwrap();
    assert!(parses(&document), "the SVG is well-formed XML");
    assert!(document.contains("a\\u{1}b\\u{1b}]0;pwned\\u{7}&lt;c&amp;d"));
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));

    // Tensor names with a newline and a terminal escape: the learned figure names its tensor,
    // and an error naming one stays one line with the escape written out.
    let table: Vec<f32> = (0..32).map(|k| (k as f32 * 0.37).sin()).collect();
    let named = folder.path().join("named.safetensors");
    common::safetensors_file(&named, &[("pos\nembed\u{1b}[31m", &table, vec![8, 4])]);
    let (code, text) = common::run_poslab(&[
        "figure",
        "learned",
        "--file",
        named.to_str().unwrap(),
        "-o",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{text}");
    assert!(parses(&std::fs::read_to_string(&svg).unwrap()));
    let (code, text) = common::run_poslab(&[
        "figure",
        "learned",
        "--file",
        named.to_str().unwrap(),
        "--tensor",
        "no\nsuch\u{1b}[0m",
        "-o",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{text}");
    assert_eq!(text.trim_end().lines().count(), 1, "one line: {text:?}");
    assert!(!text.contains('\u{1b}'), "{text:?}");
}
