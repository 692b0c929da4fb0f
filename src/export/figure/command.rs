//! A figure as the `poslab figure` command that makes it: the words the app's export dialog
//! shows, which the command line reads back into the same [`FigureSpec`]. Each figure writes
//! its own options ([`super::FigureKind::write_options`]); the style options are written here.

use super::options::{Words, value_name, view_name};
use super::{FigureSpec, FigureStyle};

/// The `poslab figure` command that makes the figure of `spec` in `style` (the app's export
/// dialog shows it). Mixed RoPE frequencies loaded from a file are named `FREQS.npy`: the app
/// keeps their values, not their path.
pub fn command_line(spec: &FigureSpec, style: &FigureStyle, output: &str) -> String {
    command_words(spec, style, output)
        .iter()
        .map(|w| shell_quote(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// [`command_line`] as the words a program is run with.
pub fn command_words(spec: &FigureSpec, style: &FigureStyle, output: &str) -> Vec<String> {
    let mut options = Words::default();
    spec.write_options(&mut options);
    let mut words: Vec<String> = vec!["poslab".into(), "figure".into(), view_name(spec.view())];
    words.extend(options.into_vec());
    let defaults = FigureStyle::default();
    if style.width != defaults.width {
        words.extend(["--width".into(), style.width.to_string()]);
    }
    if style.height != defaults.height {
        words.extend(["--height".into(), style.height.to_string()]);
    }
    // A figure of curves alone takes neither: the command would be refused.
    let colours = spec.colours_cells();
    if colours && style.colormap != defaults.colormap {
        words.extend(["--colormap".into(), value_name(style.colormap)]);
    }
    if colours && style.reduce != defaults.reduce {
        words.extend(["--reduce".into(), style.reduce.label().to_owned()]);
    }
    if let Some(title) = &style.title {
        words.extend(["--title".into(), title.clone()]);
    }
    words.extend(["-o".into(), output.to_owned()]);
    words
}

/// A word as a POSIX shell reads it back.
pub fn shell_quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_.,:/=+".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The `poslab table` command that writes the table of `spec` to `output` (the app's export
/// dialog shows it beside a saved table); `None` for a table no options describe.
pub fn table_command_line(
    spec: &crate::engine::TableSpec,
    dtype: crate::engine::RealDtype,
    output: &str,
) -> Option<String> {
    let mut words: Vec<String> = vec!["poslab".into(), "table".into()];
    words.extend(crate::table_args::words::table_words(spec)?);
    // An index table is int32 whatever the float width.
    if spec.value_kind() == crate::engine::ValueKind::Real && dtype != Default::default() {
        words.extend(["--dtype".into(), value_name(dtype)]);
    }
    words.extend(["-o".into(), output.to_owned()]);
    Some(
        words
            .iter()
            .map(|w| shell_quote(w))
            .collect::<Vec<_>>()
            .join(" "),
    )
}
