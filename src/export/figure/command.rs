//! A figure as the `poslab figure` command that makes it: the words the app's export dialog
//! shows, which the command line reads back into the same [`FigureSpec`].

use clap::ValueEnum;

use super::{FigureSpec, FigureStyle};
use crate::encoding::alibi::AlibiMode;
use crate::encoding::rope::RopeLayout;
use crate::encoding::sinusoidal::{SinusoidalLayout, Spacing};
use crate::engine::patch_maps::PatchMethod;
use crate::scene::corkscrew::ProbeVector;

/// The views `poslab figure` draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FigureView {
    /// The [seq, dim] sinusoidal table as a heatmap
    Sinusoidal,
    /// PE[a]·PE[a+k] against the offset k
    DotDecay,
    /// ALiBi bias matrices: one head (--head) or all heads as small multiples
    Alibi,
    /// Two per-query patch maps side by side (--left, --right)
    Patches,
    /// RoPE helices in 3D, projected as vector lines
    Corkscrew,
    /// A table from a file (--file) next to poslab's reference and their difference
    Check,
    /// Context extension: wavelengths per method, unseen angles, and a --chart
    Context,
    /// Context extension for ViTs: a position table resampled to a larger grid, and the 2D
    /// encodings that need no resampling
    ContextVision,
    /// Relative positions: offsets, Shaw's clipping, T5 buckets, ALiBi, the skew trick
    /// (--stage), 2D offsets (--panel)
    Relative,
    /// The tour "From counting to sinusoids", one step (--step 1 to 9)
    Tour,
    /// A learned position table (--file, --tensor) beside the sinusoidal one: similarity,
    /// principal components, --columns against position
    Learned,
}

/// The view's name on the command line.
pub fn view_name(view: FigureView) -> String {
    value_name(view)
}

/// How the command line spells a value of one of its enums.
pub fn value_name(value: impl ValueEnum) -> String {
    value
        .to_possible_value()
        .map(|v| v.get_name().to_owned())
        .unwrap_or_default()
}

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
    let mut words: Vec<String> = vec!["poslab".into(), "figure".into()];
    let mut push = |flag: &str, value: String| {
        words.push(format!("--{flag}"));
        words.push(value);
    };
    let layout = |l: SinusoidalLayout| match l {
        SinusoidalLayout::Interleaved => "interleaved",
        SinusoidalLayout::Split => "split",
    };
    let spacing = |s: Spacing| match s {
        Spacing::Vaswani => "vaswani",
        Spacing::T2t => "t2t",
    };
    let view = match spec {
        FigureSpec::Sinusoidal(p) | FigureSpec::DotDecay { params: p, .. } => {
            push("seq", p.seq.to_string());
            push("dim", p.dim.to_string());
            push("base", p.base.to_string());
            push("start", p.start.to_string());
            push("layout", layout(p.layout).into());
            push("spacing", spacing(p.spacing).into());
            if let FigureSpec::DotDecay {
                anchor, normalised, ..
            } = spec
            {
                push("anchor", anchor.to_string());
                if *normalised {
                    words.push("--normalised".into());
                }
                FigureView::DotDecay
            } else {
                FigureView::Sinusoidal
            }
        }
        FigureSpec::Alibi { params, head } => {
            push("seq", params.seq.to_string());
            push("heads", params.heads.to_string());
            push(
                "mode",
                match params.mode {
                    AlibiMode::Causal => "causal",
                    AlibiMode::Symmetric => "symmetric",
                }
                .into(),
            );
            if let Some(head) = head {
                push("head", head.to_string());
            }
            FigureView::Alibi
        }
        FigureSpec::Patches {
            grid,
            query,
            methods,
            heads,
            head,
            settings,
        } => {
            let method = |m: PatchMethod| value_name(m);
            push("grid-h", grid.grid_h.to_string());
            push("grid-w", grid.grid_w.to_string());
            push("query", query.to_string());
            push("left", method(methods[0]));
            push("right", method(methods[1]));
            push("heads", heads.to_string());
            push("head", head.to_string());
            push("dim", settings.dim.to_string());
            push("base", settings.base.to_string());
            if settings.loaded_freqs.is_some() {
                push("freqs", "FREQS.npy".into());
            } else {
                push("seed", settings.seed.to_string());
            }
            FigureView::Patches
        }
        FigureSpec::Check(c) => {
            push("file", c.file.display().to_string());
            if let Some(tensor) = &c.tensor {
                push("tensor", tensor.clone());
            }
            if !c.expected.is_empty() {
                push("as", c.expected.join(" "));
            }
            push("atol", format!("{:e}", c.tolerance.abs));
            push("rtol", format!("{:e}", c.tolerance.rel));
            FigureView::Check
        }
        FigureSpec::Context(c) => {
            use super::context::ContextModelSource;
            push(
                "model",
                match &c.source {
                    ContextModelSource::Shipped(stem) => stem.clone(),
                    ContextModelSource::File(path) => path.display().to_string(),
                },
            );
            push("target", c.target.to_string());
            let shown: Vec<&str> = c.shown.iter().map(|k| k.name()).collect();
            push("methods", shown.join(","));
            push("map", c.map.name().to_owned());
            let set: Vec<String> = c
                .overrides
                .iter()
                .flat_map(|(kind, overrides)| overrides.words(*kind))
                .collect();
            if !set.is_empty() {
                push("set", set.join(","));
            }
            push("chart", value_name(c.chart));
            if c.chart == super::context::ContextChart::Alibi {
                push("heads", c.alibi.heads.to_string());
                if !c.alibi.all_heads {
                    push("head", c.alibi.head.to_string());
                }
            }
            FigureView::Context
        }
        FigureSpec::ContextVision(v) => {
            let p = &v.params;
            match &v.learned {
                // The table's grid and width are the file's.
                Some((file, tensor)) => {
                    push("file", file.display().to_string());
                    if let Some(tensor) = tensor {
                        push("tensor", tensor.clone());
                    }
                }
                None => {
                    push("trained-grid", p.train_side.to_string());
                    push("dim", p.dim.to_string());
                }
            }
            push("grid", p.target_side.to_string());
            push("resample", value_name(p.mode));
            push("antialias", p.antialias.to_string());
            push("query", p.query.to_string());
            push("heads", v.heads.to_string());
            push("head", v.head.to_string());
            FigureView::ContextVision
        }
        FigureSpec::Relative(r) => {
            use crate::scene::relative::RelativePanel;
            let s = &r.settings;
            push("panel", value_name(r.panel));
            match r.panel {
                RelativePanel::Offsets => push("tokens", s.tokens.to_string()),
                RelativePanel::Shaw => {
                    push("tokens", s.tokens.to_string());
                    push("max-relative", s.max_relative.to_string());
                }
                RelativePanel::T5 => {
                    push("tokens", s.t5_tokens.to_string());
                    push("num-buckets", s.num_buckets.to_string());
                    push("max-distance", s.max_distance.to_string());
                    push("bidirectional", s.bidirectional.to_string());
                }
                RelativePanel::Alibi => {
                    push("tokens", s.tokens.to_string());
                    push("heads", s.heads.to_string());
                    push("head", s.head.to_string());
                    push("mode", value_name(s.alibi_mode()));
                }
                RelativePanel::Skew => {
                    push("tokens", s.skew_tokens.to_string());
                    push("stage", (s.skew_stage().index() + 1).to_string());
                    push("dim", s.dim.to_string());
                }
                RelativePanel::TwoD => {
                    push("grid-h", s.grid.grid_h.to_string());
                    push("grid-w", s.grid.grid_w.to_string());
                    push("query", s.query.to_string());
                    push("dim", s.dim.to_string());
                    push("seed", s.seed.to_string());
                }
            }
            FigureView::Relative
        }
        FigureSpec::Learned(l) => {
            push("file", l.source.path.display().to_string());
            if let Some(tensor) = &l.source.tensor {
                push("tensor", tensor.clone());
            }
            let columns: Vec<String> = l.columns.iter().map(|c| c.to_string()).collect();
            push("columns", columns.join(","));
            FigureView::Learned
        }
        FigureSpec::Tour(t) => {
            let s = &t.settings;
            let uses = t.step.uses();
            push("step", (t.step.index() + 1).to_string());
            push("seq", s.length.to_string());
            if uses.dim {
                push("dim", s.dim.to_string());
            }
            if uses.base {
                push("base", s.base.to_string());
            }
            if uses.delta {
                push("delta", s.delta.to_string());
            }
            if uses.anchor {
                push("anchor", s.anchor.to_string());
            }
            if uses.pair {
                push("pair", s.pair.to_string());
            }
            FigureView::Tour
        }
        FigureSpec::Corkscrew(c) => {
            let vector = |v: ProbeVector| match v {
                ProbeVector::UnitPairs => "unit-pairs".to_owned(),
                ProbeVector::Ones => "ones".to_owned(),
                ProbeVector::Random(seed) => format!("random:{seed}"),
            };
            let pairs: Vec<String> = c.pairs.iter().map(|p| p.to_string()).collect();
            push("seq", c.seq.to_string());
            push("dim", c.dim.to_string());
            push("base", c.base.to_string());
            push("start", c.first_position.to_string());
            push(
                "layout",
                match c.layout {
                    RopeLayout::Interleaved => "interleaved",
                    RopeLayout::Half => "half",
                }
                .into(),
            );
            push("pairs", pairs.join(","));
            push("positions", c.position_count.to_string());
            push("m", c.query_position.to_string());
            push("n", c.key_position.to_string());
            push("query-vector", vector(c.query));
            push("key-vector", vector(c.key));
            if let Some(camera) = c.camera {
                let mut parts = vec![
                    camera.yaw_rad.to_degrees(),
                    camera.pitch_rad.to_degrees(),
                    camera.distance,
                ];
                if camera.target != glam::Vec3::ZERO {
                    parts.extend(camera.target.to_array());
                }
                let parts: Vec<String> = parts.iter().map(|v| format!("{v}")).collect();
                // One word, so that a negative yaw is not read as an option.
                words.push(format!("--camera={}", parts.join(",")));
            }
            FigureView::Corkscrew
        }
    };
    words.insert(2, view_name(view));
    let defaults = FigureStyle::default();
    if style.width != defaults.width {
        words.extend(["--width".into(), style.width.to_string()]);
    }
    if style.height != defaults.height {
        words.extend(["--height".into(), style.height.to_string()]);
    }
    if style.colormap != defaults.colormap {
        words.extend(["--colormap".into(), value_name(style.colormap)]);
    }
    if style.reduce != defaults.reduce {
        words.extend(["--reduce".into(), style.reduce.label().to_owned()]);
    }
    if let Some(title) = &style.title {
        words.extend(["--title".into(), title.clone()]);
    }
    words.extend(["-o".into(), output.to_owned()]);
    words
}

/// A word as a POSIX shell reads it back.
fn shell_quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_.,:/=+".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}
