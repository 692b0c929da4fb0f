//! `poslab app [--view NAME] [options]`: opens the app on a view with those settings, so that
//! a lecture can prepare its slides as command lines. Every value is checked against what the
//! app's controls allow before any window opens; a bad one is exit 2 with one line.

use clap::Args;

use crate::encoding::PairLayout;
use crate::options::ranges::{self, Allowed};
use crate::options::{SinusoidalOptions, SizeOptions};
use crate::table_args::CliError;
use crate::ui::params::SharedParams;
use crate::views::ViewKind;

/// Opens the app on a view with the settings given (the others keep what the app saved last)
#[derive(Debug, Clone, Default, Args)]
#[command(
    allow_negative_numbers = true,
    after_help = "Examples:
  poslab app --view sinusoidal --seq 1048576 --dim 4096
  poslab app --view alibi --heads 16 --seq 512
  poslab app --view corkscrew --dim 64 --base 500000
  poslab app --view context --target 131072
  poslab app --check cos_cached.npy
  poslab app --present --view tour",
    // The shared options as the app's controls take them; the rest of their groups is not a
    // control of the app, and refused.
    mut_arg("dim", |a| a.help("Width of the encoding (even, 2 to 4096)")),
    mut_arg("base", |a| a.help("Wavelength scale (2 to 10^7)")),
    mut_arg("seq", |a| a.help("Positions, rows of the table (1 to 1,048,576)")),
    mut_arg("start", |a| a.help("The first row's position (0 to 1,000,000)")),
    mut_arg("heads", |a| a.help("Attention heads (1 to 128)")),
    mut_arg("layout", |a| a.help("How sin and cos pair up in columns")),
    mut_arg("spacing", |a| a.help("How frequencies are spaced")),
    mut_arg("head", |a| a.hide(true)),
    mut_arg("grid_h", |a| a.hide(true)),
    mut_arg("grid_w", |a| a.hide(true)),
    mut_arg("max_period", |a| a.hide(true)),
    mut_arg("first", |a| a.hide(true)),
    mut_arg("anchor", |a| a.hide(true))
)]
pub struct AppArgs {
    /// The view to open on
    #[arg(long, value_enum)]
    pub view: Option<ViewKind>,
    #[command(flatten)]
    pub sizes: SizeOptions,
    #[command(flatten)]
    pub sinusoidal: SinusoidalOptions,
    /// The context lab's target length L', in positions (2 to 1,048,576)
    #[arg(long, value_name = "L'")]
    pub target: Option<i64>,
    /// A table to check (.npy, .csv or .safetensors): opens the Check view on it
    #[arg(long, value_name = "FILE")]
    pub check: Option<std::path::PathBuf>,
    /// Opens in presentation mode: large type for a projector, the light theme, the controls
    /// folded away (F5 or Esc ends it; Page Down steps through the tour and the views)
    #[arg(long)]
    pub present: bool,
    /// The window's colours (kept for the next run)
    #[arg(long, value_enum)]
    pub theme: Option<crate::ui::theme::ThemeChoice>,
}

/// What the app opens with: a view, and the shared settings given on the command line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AppLaunch {
    pub view: Option<ViewKind>,
    pub dim: Option<usize>,
    pub base: Option<f64>,
    pub seq: Option<usize>,
    pub start: Option<u64>,
    pub heads: Option<usize>,
    pub layout: Option<PairLayout>,
    pub spacing: Option<crate::encoding::sinusoidal::Spacing>,
    /// The context lab's `L'`.
    pub target: Option<usize>,
    /// A table the Check view opens (read when the app starts, off the UI thread).
    pub check: Option<std::path::PathBuf>,
    /// Presentation mode from the start.
    pub present: bool,
    pub theme: Option<crate::ui::theme::ThemeChoice>,
}

impl AppLaunch {
    /// Sets what was given in `params`, leaving the rest.
    pub fn apply(&self, params: &mut SharedParams) {
        let given = |value: Option<_>, field: &mut _| {
            if let Some(value) = value {
                *field = value;
            }
        };
        given(self.dim, &mut params.dim);
        given(self.seq, &mut params.seq);
        given(self.heads, &mut params.heads);
        if let Some(base) = self.base {
            params.base = base;
        }
        if let Some(start) = self.start {
            params.start = start;
        }
        if let Some(layout) = self.layout {
            params.layout = layout;
        }
        if let Some(spacing) = self.spacing {
            params.spacing = spacing;
        }
    }
}

/// Checks every value against what the side panel's control for it allows.
pub fn launch(args: &AppArgs) -> Result<AppLaunch, CliError> {
    let checked = |flag: &str, allowed: &Allowed, value: Option<f64>| {
        let Some(value) = value else {
            return Ok(None);
        };
        if !value.is_finite() {
            return Err(CliError::usage(format!(
                "--{flag} {value}: not a finite number"
            )));
        }
        match allowed.allowed(value) {
            (_, Some(why)) => Err(CliError::usage(format!(
                "--{flag} {}: {why}",
                ranges::format_number(value)
            ))),
            (allowed, None) => Ok(Some(allowed)),
        }
    };
    // Options of the shared groups that are no control of the app.
    let s = &args.sinusoidal;
    for (flag, given) in [
        ("head", args.sizes.head.is_some()),
        ("grid-h", args.sizes.grid_h.is_some()),
        ("grid-w", args.sizes.grid_w.is_some()),
        ("max-period", s.max_period.is_some()),
        ("first", s.first.is_some()),
        ("anchor", s.anchor.is_some()),
    ] {
        if given {
            return Err(CliError::usage(format!(
                "--{flag} does not apply to poslab app; its settings are --view --dim --base --seq --start --heads --layout --spacing --target --check --present --theme"
            )));
        }
    }
    let count = |flag: &str, allowed: &Allowed, value: Option<i64>| {
        checked(flag, allowed, value.map(|v| v as f64))
    };
    let dim = count("dim", &ranges::DIM, args.sizes.dim)?;
    let seq = count("seq", &ranges::SEQ, args.sizes.seq)?;
    let start = count("start", &ranges::START, s.start)?;
    let heads = count("heads", &ranges::HEADS, args.sizes.heads)?;
    let base = checked("base", &ranges::BASE, s.base)?;
    let target = count("target", &ranges::TARGET, args.target)?;
    // The table to check is looked at before any window opens.
    if let Some(path) = &args.check
        && !cfg!(target_arch = "wasm32")
    {
        match std::fs::metadata(path) {
            Ok(metadata) if metadata.is_file() => {}
            Ok(_) => {
                return Err(CliError::usage(format!(
                    "--check {}: is not a file (a .npy, .csv or .safetensors table is needed)",
                    path.display()
                )));
            }
            Err(error) => {
                return Err(CliError::usage(format!(
                    "--check {}: cannot be read: {error}",
                    path.display()
                )));
            }
        }
    }
    Ok(AppLaunch {
        view: args.view,
        dim: dim.map(|v| v as usize),
        base,
        seq: seq.map(|v| v as usize),
        start: start.map(|v| v as u64),
        heads: heads.map(|v| v as usize),
        layout: s.layout,
        spacing: s.spacing,
        target: target.map(|v| v as usize),
        check: args.check.clone(),
        present: args.present,
        theme: args.theme,
    })
}

/// What a link to the web page opens with: its query, `?view=alibi&heads=16&seq=512`, read as
/// `poslab app --view alibi --heads 16 --seq 512` is (a flag without a value, `?present`, is
/// the switch). The message says what was wrong, as the command line would.
pub fn launch_from_query(query: &str) -> Result<AppLaunch, String> {
    use crate::options::keywords::{self, Value};
    let mut pairs = Vec::new();
    for pair in query.trim_start_matches('?').split('&') {
        if pair.is_empty() {
            continue;
        }
        let (name, value) = match pair.split_once('=') {
            Some((name, value)) => (name, Value::Text(url_decoded(value))),
            None => (pair, Value::Bool(true)),
        };
        pairs.push((url_decoded(name).replace('-', "_"), value));
    }
    let command = <AppArgs as clap::Args>::augment_args(
        clap::Command::new("poslab-page")
            .no_binary_name(true)
            .disable_help_flag(true),
    );
    let words = keywords::words(&command, &pairs);
    let matches = command.try_get_matches_from(&words).map_err(|error| {
        let text = error.render().to_string();
        let first = text.lines().next().unwrap_or_default();
        format!(
            "The link's settings were not used: {}",
            first.trim_start_matches("error: ")
        )
    })?;
    let args = <AppArgs as clap::FromArgMatches>::from_arg_matches(&matches)
        .map_err(|error| format!("The link's settings were not used: {error}"))?;
    if args.check.is_some() {
        return Err(
            "The link's settings were not used: a web page opens a table to check with Open… or by dropping it on the page, not from a link"
                .to_owned(),
        );
    }
    launch(&args).map_err(|error| format!("The link's settings were not used: {}", error.message))
}

/// `%41` and `+` as a URL's query writes them (a `%` not followed by two hex digits is kept).
fn url_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let hex = |b: u8| (b as char).to_digit(16);
    let mut out = Vec::with_capacity(bytes.len());
    let mut k = 0;
    while k < bytes.len() {
        match bytes[k] {
            b'+' => out.push(b' '),
            b'%' if k + 2 < bytes.len() => match (hex(bytes[k + 1]), hex(bytes[k + 2])) {
                (Some(high), Some(low)) => {
                    out.push((high * 16 + low) as u8);
                    k += 2;
                }
                _ => out.push(b'%'),
            },
            byte => out.push(byte),
        }
        k += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_opens_on_the_settings_its_query_names() {
        let launch = launch_from_query("?view=alibi&heads=16&seq=512&base=1e4&present").unwrap();
        assert_eq!(launch.view, Some(ViewKind::Alibi));
        assert_eq!((launch.heads, launch.seq), (Some(16), Some(512)));
        assert_eq!(launch.base, Some(10_000.0));
        assert!(launch.present);
        assert_eq!(
            launch_from_query("?view=context&target=1048576")
                .unwrap()
                .target,
            Some(1_048_576)
        );
        assert_eq!(launch_from_query("").unwrap(), AppLaunch::default());
        assert_eq!(
            launch_from_query("view=dot%2Ddecay&layout=split")
                .unwrap()
                .view,
            Some(ViewKind::DotDecay)
        );
    }

    #[test]
    fn a_bad_link_says_what_was_wrong_in_one_line() {
        for (query, says) in [
            ("?dim=7", "--dim 7"),
            ("?view=nowhere", "nowhere"),
            ("?colour=red", "--colour"),
            ("?check=table.npy", "Open…"),
            ("?seq=%ZZ", "'%ZZ' for '--seq"),
            ("?target=1", "--target 1"),
            ("?target=2000000", "--target 2000000"),
        ] {
            let error = launch_from_query(query).expect_err(query);
            assert!(error.contains(says), "{query}: {error}");
            assert!(!error.contains('\n'), "{query}: {error}");
        }
    }
}
