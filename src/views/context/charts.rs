//! The language half's charts: wavelengths per method, the fitted score, the long-term decay,
//! ALiBi at L', the survey's accuracies and the summary table.

use super::*;
use crate::widgets::layout::NiceAxes;

/// `log10` of a wavelength, as the chart plots it.
pub(super) fn log10(v: f64) -> f64 {
    v.max(f64::MIN_POSITIVE).log10()
}

pub(super) fn wavelength_ui(
    ui: &mut egui::Ui,
    curves: &[MethodCurves],
    shown: &[bool],
    model: &RopeModel,
    target: usize,
    height: f32,
) {
    // The legend in a row above: inside, it hid a third of the curves.
    let mut entries: Vec<(egui::Color32, String)> = vec![
        (
            trained_color(ui.ctx()),
            format!(
                "L = {} (dashed)",
                crate::numbers::thousands(model.trained as u64)
            ),
        ),
        (
            target_color(ui.ctx()),
            format!("L' = {} (dotted)", crate::numbers::thousands(target as u64)),
        ),
    ];
    entries.extend(
        curves
            .iter()
            .zip(shown)
            .filter(|(curve, visible)| **visible && !curve.reach.is_empty())
            .map(|(curve, _)| {
                (
                    method_color32(curve.kind),
                    method_label(curve.kind).to_owned(),
                )
            }),
    );
    let legend_height = crate::widgets::layout::legend_row(ui, &entries);
    let response = crate::widgets::layout::wavelength_plot("context_wavelengths")
        .height(height - legend_height)
        .show(ui, |plot_ui| {
            plot_ui.hline(
                HLine::new(
                    format!("L = {}", model.trained),
                    log10(model.trained as f64),
                )
                .color(trained_color(plot_ui.ctx()))
                .style(egui_plot::LineStyle::dashed_loose()),
            );
            plot_ui.hline(
                HLine::new(format!("L' = {target}"), log10(target as f64))
                    .color(target_color(plot_ui.ctx()))
                    .width(1.5)
                    .style(egui_plot::LineStyle::dotted_dense()),
            );
            for (curve, &visible) in curves.iter().zip(shown) {
                if !visible || curve.reach.is_empty() {
                    continue;
                }
                let points: Vec<[f64; 2]> = curve
                    .reach
                    .iter()
                    .enumerate()
                    .map(|(i, r)| [i as f64, log10(r.wavelength)])
                    .collect();
                plot_ui.line(
                    Line::new(method_label(curve.kind), PlotPoints::from(points))
                        .color(method_color32(curve.kind))
                        .width(1.5),
                );
            }
            plot_ui.pointer_coordinate()
        });
    crate::widgets::layout::record_plot(ui.ctx(), "context_wavelengths", &response.transform);
    let pairs = curves.first().map_or(0, |c| c.reach.len());
    if response.response.hovered()
        && let Some(pointer) = response.inner
        && pairs > 0
    {
        let pair = (pointer.x.round().max(0.0) as usize).min(pairs - 1);
        let mut text = format!("pair {pair} (dims {} and {})", 2 * pair, 2 * pair + 1);
        if let Some(trained) = curves.first().and_then(|c| c.reach.get(pair)) {
            text.push_str(&format!(
                "\nin training (L = {}): {:.4} turns{}",
                model.trained,
                trained.trained_turns,
                if trained.trained_turns >= 1.0 {
                    ", every angle seen"
                } else {
                    ", part of a turn"
                }
            ));
        }
        for (curve, &visible) in curves.iter().zip(shown) {
            if let (true, Some(r)) = (visible, curve.reach.get(pair)) {
                text.push_str(&format!(
                    "\n{}: wavelength {:.1}, {:.4} turns over L'{}",
                    method_label(curve.kind),
                    r.wavelength,
                    r.target_turns,
                    match r.first_unseen {
                        Some(p) => format!(", unseen angles from distance {p}"),
                        None => String::new(),
                    }
                ));
            }
        }
        response.response.on_hover_text_at_pointer(text);
    }
}

/// Above charts of earlier settings while the new ones are computed: which settings they show.
pub(super) fn stale_charts_note(ui: &mut egui::Ui, key: &CurvesKey) {
    ui.colored_label(
        ui.visuals().warn_fg_color,
        format!(
            "computing… the charts below are still those of {} at L' = {}",
            short_name(&key.model.name),
            key.target
        ),
    );
}

/// The fitted score's size `|a(s)|` per shown method against distance, `L` marked, on a log
/// axis: about 1 where it was fitted, and as many decades as an extrapolated score climbs
/// (orders of magnitude past `L`, its sign flipping from point to point), so that the blow-up
/// is the picture and not a footnote.
pub(super) fn fitted_score_ui(
    ui: &mut egui::Ui,
    fit: &context::FittedScore,
    lines: &[(ScalingKind, String, Vec<[f64; 2]>)],
    model: &RopeModel,
    target: usize,
    height: f32,
) {
    let last_trained = (model.trained - 1) as f64;
    let size = |v: f64| {
        v.abs()
            .max(crate::export::figure::context::SCORE_FLOOR)
            .log10()
    };
    // The curves fill the whole chart, so its legend sits above it rather than over them.
    let mut entries: Vec<(egui::Color32, String)> = vec![(
        trained_color(ui.ctx()),
        format!(
            "L = {} (trained)",
            crate::numbers::thousands(model.trained as u64)
        ),
    )];
    entries.extend(
        lines
            .iter()
            .map(|(kind, _, _)| (method_color32(*kind), method_label(*kind).to_owned())),
    );
    entries.push((
        egui::Color32::from_gray(150),
        "fitted points, in [0, L)".to_owned(),
    ));
    let legend_height = crate::widgets::layout::legend_row(ui, &entries);
    let response = Plot::new("context_fitted_score")
        .height(height - legend_height)
        .x_axis_label(format!(
            "distance s = m − n (a point every {:.0} positions)",
            (target as f64 / context::CURVE_POINTS as f64).max(1.0)
        ))
        .x_grid_spacer(crate::widgets::layout::nice_ticks)
        .x_axis_formatter(|mark, _| crate::widgets::layout::tick_label(mark))
        .y_grid_spacer(crate::widgets::layout::decade_ticks)
        .y_axis_formatter(|mark, _| crate::widgets::layout::power_label(10, mark))
        .y_axis_label("|score a(s)|, log")
        .label_formatter(|hover| {
            let (name, point) = match hover {
                egui_plot::HoverPosition::NearDataPoint {
                    plot_name,
                    position,
                    ..
                } => (*plot_name, position),
                egui_plot::HoverPosition::Elsewhere { position } => ("", position),
            };
            Some(format!(
                "{name}\ns = {}\n|a(s)| = {}",
                crate::numbers::thousands(point.x.max(0.0).round() as u64),
                crate::numbers::scientific(10f64.powf(point.y), 3)
            ))
        })
        .show(ui, |plot_ui| {
            plot_ui.vline(
                VLine::new(format!("L = {}", model.trained), last_trained)
                    .color(trained_color(plot_ui.ctx()))
                    .style(egui_plot::LineStyle::dashed_loose()),
            );
            for (kind, label, points) in lines {
                let sizes: Vec<[f64; 2]> = points.iter().map(|&[s, v]| [s, size(v)]).collect();
                plot_ui.line(
                    Line::new(label.clone(), PlotPoints::from(sizes))
                        .color(method_color32(*kind))
                        .width(1.2),
                );
            }
            let fitted: Vec<[f64; 2]> = fit.points.iter().map(|&(s, v)| [s, size(v)]).collect();
            plot_ui.points(
                egui_plot::Points::new("fitted points", PlotPoints::from(fitted))
                    .color(egui::Color32::from_gray(150))
                    .radius(1.5),
            );
        });
    crate::widgets::layout::record_plot(ui.ctx(), "context_fitted_score", &response.transform);
}

/// RoFormer's long-term decay bound per shown method (times the attention factor squared).
pub(super) fn decay_ui(
    ui: &mut egui::Ui,
    lines: &[(ScalingKind, String, Vec<[f64; 2]>)],
    model: &RopeModel,
    height: f32,
) {
    let response = Plot::new("context_decay")
        .height(height)
        .legend(
            crate::widgets::layout::legend()
                .position(egui_plot::Corner::RightTop)
                .follow_insertion_order(true),
        )
        .x_axis_label("relative distance r (positions)")
        .nice_axes()
        .y_axis_label("bound on |q·k| (RoFormer)")
        .show(ui, |plot_ui| {
            plot_ui.vline(
                VLine::new(format!("L = {}", model.trained), (model.trained - 1) as f64)
                    .color(trained_color(plot_ui.ctx()))
                    .style(egui_plot::LineStyle::dashed_loose()),
            );
            for (kind, label, points) in lines {
                plot_ui.line(
                    Line::new(label.clone(), PlotPoints::from(points.clone()))
                        .color(method_color32(*kind))
                        .width(1.2),
                );
            }
        });
    crate::widgets::layout::record_plot(ui.ctx(), "context_decay", &response.transform);
}

/// Each shown method's fitted score at distances up to `L'`, named with its largest value
/// past `L`.
pub(super) fn score_lines(
    fit: &context::FittedScore,
    curves: &[MethodCurves],
    shown: &[bool],
    model: &RopeModel,
    target: usize,
) -> Vec<(ScalingKind, String, Vec<[f64; 2]>)> {
    let last_trained = (model.trained - 1) as f64;
    curves
        .iter()
        .zip(shown)
        .filter(|(curve, visible)| **visible && !curve.theta.is_empty())
        .map(|(curve, _)| {
            let points = context::score_curve(fit, &curve.theta, curve.attention, target);
            let name = method_label(curve.kind);
            let label = match context::largest_past(&points, last_trained) {
                Some(largest) if largest >= 1e3 => {
                    format!(
                        "{name}: |a| up to {} past L",
                        crate::numbers::scientific(largest, 3)
                    )
                }
                Some(largest) => format!("{name}: |a| up to {largest:.3} past L"),
                None => name.to_owned(),
            };
            (curve.kind, label, points)
        })
        .collect()
}

/// Each shown method's long-term decay bound times its attention factor squared.
pub(super) fn decay_lines(
    curves: &[MethodCurves],
    shown: &[bool],
    target: usize,
) -> Vec<(ScalingKind, String, Vec<[f64; 2]>)> {
    curves
        .iter()
        .zip(shown)
        .filter(|(curve, visible)| **visible && !curve.theta.is_empty())
        .map(|(curve, _)| {
            let points = context::decay_curve(&curve.theta, curve.attention, target);
            (curve.kind, method_label(curve.kind).to_owned(), points)
        })
        .collect()
}

/// ALiBi at `L'`: the last query's attention over key distances for one head (log scale), or
/// the share of attention beyond `L` for every head, with the trained slopes and scaled ones.
pub(super) fn alibi_ui(
    ui: &mut egui::Ui,
    settings: &mut AlibiSettings,
    trained: usize,
    target: usize,
) {
    use crate::encoding::alibi;
    ui.horizontal(|ui| {
        ui.add(crate::widgets::number_box::NumberBox::drag(&mut settings.heads).range(1..=128).prefix("heads "))
            .on_hover_text("Heads of the ALiBi model: head h has slope 2^(-8(h+1)/heads) (powers of two; the reference rule otherwise)");
        settings.head = settings.head.min(settings.heads - 1);
        ui.add_enabled(
            !settings.all_heads,
            crate::widgets::number_box::NumberBox::slider(&mut settings.head, 0..=settings.heads - 1).text("head"),
        );
        ui.checkbox(&mut settings.all_heads, "All heads")
            .on_hover_text("Per head, the share of the last query's attention on keys farther than L");
    });
    let Ok(slopes) = alibi::slopes(settings.heads) else {
        return;
    };
    let scale = alibi::slope_scale(trained, target).unwrap_or(1.0);
    let height = ui.available_height();
    let last = target.saturating_sub(1);
    let plot = Plot::new("context_alibi")
        .height(height)
        .legend(
            crate::widgets::layout::legend()
                .position(egui_plot::Corner::RightTop)
                .follow_insertion_order(true),
        )
        .x_grid_spacer(crate::widgets::layout::nice_ticks)
        .x_axis_formatter(|mark, _| crate::widgets::layout::tick_label(mark));
    if settings.all_heads {
        let response = plot
            .x_axis_label("head")
            .y_grid_spacer(crate::widgets::layout::nice_ticks)
            .y_axis_formatter(|mark, _| crate::widgets::layout::power_label(10, mark))
            .y_axis_label(format!(
                "attention on keys at L = {trained} or farther (log)"
            ))
            .include_y(0.0)
            .show(ui, |plot_ui| {
                for (label, factor) in [("trained slopes", 1.0), ("slopes × L/L'", scale)] {
                    let points: Vec<[f64; 2]> = slopes
                        .iter()
                        .enumerate()
                        .map(|(h, m)| {
                            let ln =
                                alibi::ln_last_query_attention_beyond(m * factor, target, trained);
                            [h as f64, ln / std::f64::consts::LN_10]
                        })
                        .filter(|p| p[1].is_finite())
                        .collect();
                    plot_ui.line(Line::new(label, PlotPoints::from(points)).width(2.0));
                }
            });
        crate::widgets::layout::record_plot(ui.ctx(), "context_alibi", &response.transform);
        return;
    }
    let slope = slopes[settings.head];
    let distances = context::sample_distances(target, context::CURVE_POINTS);
    let response = plot
        .x_axis_label(format!(
            "key distance k from the last query (position {last})"
        ))
        .y_grid_spacer(crate::widgets::layout::decade_ticks)
        .y_axis_formatter(|mark, _| crate::widgets::layout::power_label(10, mark))
        .y_axis_label("attention weight (log)")
        .show(ui, |plot_ui| {
            plot_ui.vline(
                VLine::new(format!("L = {trained}"), trained as f64)
                    .style(egui_plot::LineStyle::dashed_loose()),
            );
            for (label, m) in [
                (
                    format!("m = {}", crate::numbers::scientific(slope, 4)),
                    slope,
                ),
                (
                    format!(
                        "m · L/L' = {}",
                        crate::numbers::scientific(slope * scale, 4)
                    ),
                    slope * scale,
                ),
            ] {
                let points: Vec<[f64; 2]> = distances
                    .iter()
                    .map(|&k| alibi::last_query_attention(m, target, k as usize))
                    .zip(&distances)
                    .filter(|(w, _)| *w > 0.0)
                    .map(|(w, &k)| [k, w.log10()])
                    .collect();
                plot_ui.line(Line::new(label, PlotPoints::from(points)).width(1.5));
            }
        });
    crate::widgets::layout::record_plot(ui.ctx(), "context_alibi", &response.transform);
}

pub(super) fn survey_ui(ui: &mut egui::Ui, height: f32) {
    let Ok(series) = context::survey_series() else {
        return;
    };
    let response = Plot::new("context_survey")
        .height(height)
        .legend(
            crate::widgets::layout::legend()
                .position(egui_plot::Corner::RightBottom)
                .follow_insertion_order(true),
        )
        .x_axis_label("test resolution (px), trained at 224")
        .nice_axes()
        .y_axis_label("ImageNet-100 top-1 (%)")
        .show(ui, |plot_ui| {
            plot_ui.vline(
                VLine::new("trained at 224 px", f64::from(SURVEY_TRAINING_RESOLUTION))
                    .style(egui_plot::LineStyle::dashed_loose()),
            );
            for (k, s) in series.iter().enumerate() {
                let points: Vec<[f64; 2]> =
                    s.points.iter().map(|&(r, a)| [f64::from(r), a]).collect();
                // The figure's colours, in the same order.
                let [r, g, b] = context::METHOD_COLORS[k % context::METHOD_COLORS.len()];
                plot_ui.line(
                    Line::new(s.method.clone(), PlotPoints::from(points))
                        .color(egui::Color32::from_rgb(r, g, b))
                        .width(1.5),
                );
            }
        });
    crate::widgets::layout::record_plot(ui.ctx(), "context_survey", &response.transform);
}

/// Per shown method: how many pairs see unseen angles, from which distance, and the attention
/// factor.
pub(super) fn summary_ui(
    ui: &mut egui::Ui,
    curves: &[MethodCurves],
    shown: &[bool],
    model: &RopeModel,
    target: usize,
) {
    egui::Grid::new("context_summary").striped(true).show(ui, |ui| {
        ui.strong("method");
        ui.strong("unseen pairs").on_hover_text(
            "Pairs whose angle at some distance below L' lies beyond every angle they reached in training",
        );
        ui.strong("from").on_hover_text("The shortest distance with an unseen angle in any pair");
        ui.strong("overshoot").on_hover_text(
            "In positions: how far the most overreaching pair's angle goes past the angles it reached in training, counted in that pair's trained steps. Under one position (Position Interpolation's 0.75 at 4x) the unseen angles lie within a step of the trained ones: in practice seen; thousands (extrapolation) is territory the model never met",
        );
        ui.strong("unseen cells").on_hover_text(
            "The share of the map's (distance, pair) cells that are unseen",
        );
        ui.strong("attention").on_hover_text("The factor cos and sin are multiplied by (YaRN, LongRoPE; 1 for the others)");
        ui.end_row();
        for (curve, &visible) in curves.iter().zip(shown) {
            if !visible {
                continue;
            }
            // In the method's colour, as its curves.
            ui.colored_label(method_color32(curve.kind), method_label(curve.kind));
            match &curve.freqs {
                Ok(freqs) => {
                    let unseen = curve.reach.iter().filter(|r| r.first_unseen.is_some()).count();
                    ui.label(format!("{unseen}/{}", curve.reach.len()));
                    match curve.reach.iter().filter_map(|r| r.first_unseen).min() {
                        Some(p) => ui.label(crate::numbers::thousands(p)),
                        None => ui.label("none"),
                    };
                    let beyond = curve
                        .reach
                        .iter()
                        .map(|r| r.beyond_positions)
                        .fold(0.0f64, f64::max);
                    if unseen == 0 {
                        ui.label("—");
                    } else if beyond < 1.0 {
                        ui.label(format!("{beyond:.2}"));
                    } else {
                        ui.label(crate::numbers::thousands(beyond.round() as u64));
                    }
                    let cells = (curve.reach.len() as u64 * target as u64).max(1);
                    let unseen_cells: u64 = curve.reach.iter().map(|r| r.unseen_distances).sum();
                    ui.label(format!("{:.3}%", 100.0 * unseen_cells as f64 / cells as f64))
                        .on_hover_text(format!(
                            "{} of the {} (distance, pair) cells",
                            crate::numbers::thousands(unseen_cells),
                            crate::numbers::thousands(cells)
                        ));
                    ui.label(format!("{:.4}", freqs.attention_factor()));
                }
                Err(reason) => {
                    ui.label(reason.as_str());
                }
            }
            ui.end_row();
        }
    });
    ui.label(format!(
        "{}: head dim {}, rotary {}, base {}, trained on L = {} positions",
        short_name(&model.name),
        model.head_dim,
        model.rotary(),
        model.base,
        model.trained
    ));
}

/// A method's colour, the same in every chart and in the figure.
pub(super) fn method_color32(kind: ScalingKind) -> egui::Color32 {
    let [r, g, b] = context::method_color(kind);
    egui::Color32::from_rgb(r, g, b)
}

/// The trained length's mark: a grey, so that no method's colour is taken, dark enough to
/// read on either theme.
pub(super) fn trained_color(ctx: &egui::Context) -> egui::Color32 {
    if ctx.theme() == egui::Theme::Light {
        egui::Color32::from_gray(110)
    } else {
        egui::Color32::from_gray(140)
    }
}

/// The target length's mark: the text's own colour (near white on the dark theme, near black
/// on the light one a projector shows), so that it stands apart from the trained length's.
pub(super) fn target_color(ctx: &egui::Context) -> egui::Color32 {
    if ctx.theme() == egui::Theme::Light {
        egui::Color32::from_gray(30)
    } else {
        egui::Color32::from_gray(215)
    }
}
