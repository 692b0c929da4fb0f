//! `poslab figure VIEW [options] -o out.svg|out.png`: a view's figure with no window and no
//! display. The defaults are the app's, so `poslab figure VIEW -o f.svg` is what the app exports
//! before any control is touched. Each figure reads its own options (`export::figure`'s
//! modules); this checks the ones every figure shares and writes the file.

use clap::parser::ValueSource;
use clap::{ArgMatches, Args};

pub use crate::export::figure::FigureArgs;
use crate::export::figure::budget::{Budget, with_budget};
use crate::export::figure::{
    FigureFormat, FigureSpec, FigureStyle, FigureView, MAX_SCALE, SIZE_RANGE, build_figure,
    view_name,
};
use crate::table_args::{CliError, flag};

/// Refuses an option the view's figure does not read, naming the ones it does.
fn check_options_apply(view: FigureView, matches: &ArgMatches) -> Result<(), CliError> {
    const EVERY_VIEW: &[&str] = &[
        "view", "output", "width", "height", "scale", "colormap", "title", "reduce", "yes", "quiet",
    ];
    let accepted = view.options();
    let command = FigureArgs::augment_args(clap::Command::new("figure"));
    // An option as the user types it: its long name, which is not always its id (`--as`
    // sets `expected`).
    let typed = |id: &str| {
        command
            .get_arguments()
            .find(|a| a.get_id().as_str() == id)
            .and_then(|a| a.get_long())
            .map_or_else(|| flag(id), |long| format!("--{long}"))
    };
    for id in command.get_arguments().map(|a| a.get_id().as_str()) {
        if matches.value_source(id) != Some(ValueSource::CommandLine)
            || EVERY_VIEW.contains(&id)
            || accepted.contains(&id)
        {
            continue;
        }
        let list: Vec<String> = accepted.iter().map(|id| typed(id)).collect();
        return Err(CliError::usage(format!(
            "{} does not apply to the {} figure; its options are {}",
            typed(id),
            view_name(view),
            list.join(" ")
        )));
    }
    Ok(())
}

/// `poslab figure`: checks everything, builds the figure, writes it atomically.
pub(crate) fn write_figure(args: &FigureArgs, matches: &ArgMatches) -> Result<(), CliError> {
    check_options_apply(args.view, matches)?;
    let output = args
        .destination
        .output
        .as_deref()
        .ok_or_else(|| CliError::usage("--output is required: a .svg or .png file name"))?;
    if !(1.0..=f64::from(MAX_SCALE)).contains(&args.scale) {
        return Err(CliError::usage(format!(
            "--scale {} is not allowed: use 1 to {MAX_SCALE}",
            args.scale
        )));
    }
    let format = FigureFormat::from_path(output, args.scale as f32).ok_or_else(|| {
        CliError::usage(format!(
            "--output {}: the file name must end in .svg or .png",
            output.display()
        ))
    })?;
    if format == FigureFormat::Svg
        && matches.value_source("scale") == Some(ValueSource::CommandLine)
    {
        return Err(CliError::usage(
            "--scale applies to .png figures; an .svg is vector and has no scale",
        ));
    }
    let size = |id: &'static str, value: i64| {
        u32::try_from(value)
            .ok()
            .filter(|v| SIZE_RANGE.contains(v))
            .ok_or_else(|| {
                CliError::usage(format!(
                    "--{id} {value} is not allowed: use {} to {} pixels",
                    SIZE_RANGE.start(),
                    SIZE_RANGE.end()
                ))
            })
    };
    let (width, height) = (size("width", args.width)?, size("height", args.height)?);
    if let FigureFormat::Png { scale } = format {
        crate::export::figure::check_png_size(width, height, scale).map_err(CliError::usage)?;
    }
    let style = FigureStyle {
        width,
        height,
        colormap: args.colormap,
        title: args.title.clone(),
        reduce: args.reduce,
    };
    if output.is_dir() {
        return Err(CliError::usage(format!(
            "--output {} is a folder; give a file name ending in .svg or .png",
            output.display()
        )));
    }
    let spec = FigureSpec::from_options(args)?;
    if !spec.colours_cells() {
        for id in ["colormap", "reduce"] {
            if matches.value_source(id) == Some(ValueSource::CommandLine) {
                return Err(CliError::usage(format!(
                    "--{id} changes nothing here: the {} figure draws curves and lines, no cells to colour",
                    view_name(args.view)
                )));
            }
        }
    }
    // Fail on an unwritable folder before the work.
    super::check_output(output)?;
    let budget = Budget {
        bound_seconds: crate::cli::progress::MAX_UNASKED_SECONDS,
        yes: args.consent.yes,
        quiet: args.progress.quiet,
    };
    let figure = with_budget(budget, || build_figure(&spec, &style))
        .map_err(|e| CliError::usage(e.to_string()))?;
    figure
        .write(output, format)
        .map_err(|e| CliError::runtime(format!("writing {} failed: {e}", output.display())))
}
