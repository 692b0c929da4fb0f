//! Splitting a view's area into the rectangles its plots fill, so that every plot gets a size
//! of its own instead of whatever the one before it left over.

/// The left `fraction` of `rect` and the rest, `gap` points apart.
pub fn split_columns(rect: egui::Rect, fraction: f32, gap: f32) -> (egui::Rect, egui::Rect) {
    let x = rect.left() + (rect.width() - gap) * fraction;
    (
        egui::Rect::from_min_max(rect.min, egui::pos2(x, rect.bottom())),
        egui::Rect::from_min_max(egui::pos2(x + gap, rect.top()), rect.max),
    )
}

/// The top `fraction` of `rect` and the rest, `gap` points apart.
pub fn split_rows(rect: egui::Rect, fraction: f32, gap: f32) -> (egui::Rect, egui::Rect) {
    let y = rect.top() + (rect.height() - gap) * fraction;
    (
        egui::Rect::from_min_max(rect.min, egui::pos2(rect.right(), y)),
        egui::Rect::from_min_max(egui::pos2(rect.left(), y + gap), rect.max),
    )
}

/// Where each plot of the last frame was drawn: its name, its data area on screen, and points
/// per unit along x and y. Kept so that tests can check that every plot has room and that square
/// matrices stay square.
#[derive(Debug, Clone, Default)]
pub struct PlotPlacements(pub Vec<(String, egui::Rect, [f64; 2])>);

fn placements_id() -> egui::Id {
    egui::Id::NULL.with("poslab plot placements")
}

/// Notes where the plot `name` was drawn this frame.
pub fn record_plot(ctx: &egui::Context, name: &str, transform: &egui_plot::PlotTransform) {
    ctx.data_mut(|d| {
        d.get_temp_mut_or_default::<PlotPlacements>(placements_id())
            .0
            .push((name.to_owned(), *transform.frame(), transform.dpos_dvalue()));
    });
}

/// Forgets the last frame's placements (at the start of a frame).
pub fn clear_plots(ctx: &egui::Context) {
    ctx.data_mut(|d| d.remove::<PlotPlacements>(placements_id()));
}

/// The plots drawn since the frame began.
pub fn plot_placements(ctx: &egui::Context) -> Vec<(String, egui::Rect, [f64; 2])> {
    ctx.data(|d| d.get_temp::<PlotPlacements>(placements_id()))
        .map(|p| p.0)
        .unwrap_or_default()
}

/// Tick marks on a 1-2-5 grid, one level of them labelled: the finest whose labels stand at
/// least 61 points apart, so that a 300-point axis over 512 positions reads 0, 100, ..., 500
/// instead of one lonely "0", and labels never crowd.
pub fn nice_ticks(input: egui_plot::GridInput) -> Vec<egui_plot::GridMark> {
    let (low, high) = input.bounds;
    let smallest = input.base_step_size.abs();
    if !(low.is_finite() && high.is_finite()) || high <= low || smallest.is_nan() || smallest <= 0.0
    {
        return Vec::new();
    }
    // egui_plot's base step is its minimum grid spacing, 8 points.
    let points_per_unit = 8.0 / smallest;
    let at_least = |minimum: f64| {
        let decade = 10f64.powf(minimum.log10().floor());
        [1.0, 2.0, 5.0, 10.0]
            .into_iter()
            .map(|f| f * decade)
            .find(|&step| step >= minimum * (1.0 - 1e-9))
            .unwrap_or(10.0 * decade)
    };
    let grid_step = at_least(smallest);
    // egui_plot labels marks more than 60 points apart.
    let label_step = at_least(61.0 / points_per_unit).max(grid_step);
    if (high - low) / grid_step > 4000.0 {
        return Vec::new();
    }
    let first = (low / grid_step).ceil() as i64;
    let last = (high / grid_step).floor() as i64;
    (first..=last)
        .map(|k| {
            let value = k as f64 * grid_step;
            let ratio = value / label_step;
            let labelled = (ratio - ratio.round()).abs() < 1e-6;
            egui_plot::GridMark {
                value,
                step_size: if labelled { label_step } else { grid_step },
            }
        })
        .collect()
}

/// Ticks for a log10 axis (values are exponents): one per decade, labelled by the caller's
/// formatter; several decades to a label when they crowd.
pub fn decade_ticks(input: egui_plot::GridInput) -> Vec<egui_plot::GridMark> {
    let (low, high) = input.bounds;
    if !(low.is_finite() && high.is_finite()) || high <= low || high - low > 400.0 {
        return Vec::new();
    }
    (low.ceil() as i64..=high.floor() as i64)
        .map(|k| egui_plot::GridMark {
            value: k as f64,
            step_size: if k % 10 == 0 {
                10.0
            } else if k % 5 == 0 {
                5.0
            } else if k % 2 == 0 {
                2.0
            } else {
                1.0
            },
        })
        .collect()
}

/// A tick label with as many decimals as its step needs (0.05 steps read 0.35, not 0.4), whole
/// numbers grouped (1,000,000), as [`crate::numbers::tick`] writes it.
pub fn tick_label(mark: egui_plot::GridMark) -> String {
    crate::numbers::tick(mark.value, mark.step_size)
}

/// The label of a mark on a log axis whose values are the exponents of `base`: `10³`, `2⁻⁵`.
pub fn power_label(base: u32, mark: egui_plot::GridMark) -> String {
    let exponent = mark.value.round();
    if (mark.value - exponent).abs() < 1e-9 {
        crate::numbers::power(base, exponent as i64)
    } else {
        crate::numbers::scientific(f64::from(base).powf(mark.value), 3)
    }
}

/// Round-number ticks and their labels on both axes of a plot, as every chart of the app has.
pub trait NiceAxes {
    fn nice_axes(self) -> Self;
}

impl NiceAxes for egui_plot::Plot<'_> {
    fn nice_axes(self) -> Self {
        self.x_grid_spacer(nice_ticks)
            .x_axis_formatter(|mark, _| tick_label(mark))
            .y_grid_spacer(nice_ticks)
            .y_axis_formatter(|mark, _| tick_label(mark))
    }
}

/// The legend every chart uses: entries in the order they were drawn (the order the view
/// chose, not alphabetical, so column 96 comes before column 126), on a card opaque enough to
/// read over the curves behind it.
pub fn legend() -> egui_plot::Legend {
    egui_plot::Legend::default()
        .follow_insertion_order(true)
        .background_alpha(0.85)
}

/// A legend as a row of coloured names above a chart whose curves leave no corner free,
/// wrapping onto more rows where it must (never inside an entry); returns the height it took.
pub fn legend_row(ui: &mut egui::Ui, entries: &[(egui::Color32, String)]) -> f32 {
    let top = ui.cursor().top();
    let font = egui::TextStyle::Small.resolve(ui.style());
    let text_color = ui.visuals().text_color();
    ui.horizontal_wrapped(|ui| {
        ui.spacing_mut().item_spacing.x = 14.0;
        for (color, name) in entries {
            let mut job = egui::text::LayoutJob::default();
            let format = |color| egui::TextFormat::simple(font.clone(), color);
            job.append("● ", 0.0, format(*color));
            job.append(name, 0.0, format(text_color));
            ui.add(egui::Label::new(job).wrap_mode(egui::TextWrapMode::Extend));
        }
    });
    ui.cursor().top() - top
}

/// A plot of wavelengths per pair: pairs along x, wavelengths in positions on a log scale
/// along y (the values given as `log10`), with the axes' ticks and labels.
pub fn wavelength_plot(id: impl egui::AsIdSalt) -> egui_plot::Plot<'static> {
    egui_plot::Plot::new(id)
        .x_axis_label("pair i")
        .x_grid_spacer(nice_ticks)
        .x_axis_formatter(|mark, _| tick_label(mark))
        .y_grid_spacer(decade_ticks)
        .y_axis_formatter(|mark, _| power_label(10, mark))
        .y_axis_label("wavelength 2π/θ_i (positions, log)")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The labels egui_plot draws on an x axis of `points` over `0..range`: marks whose step is
    /// at least 60 points apart (its minimum label spacing), as it decides.
    fn labelled(range: f64, points: f64) -> Vec<f64> {
        let per_unit = points / range;
        let input = egui_plot::GridInput {
            bounds: (0.0, range),
            // egui_plot asks for steps of at least 8 points.
            base_step_size: 8.0 / per_unit,
        };
        nice_ticks(input)
            .into_iter()
            .filter(|m| m.step_size * per_unit > 60.0)
            .map(|m| m.value)
            .collect()
    }

    #[test]
    fn every_axis_gets_several_labels() {
        for range in [
            10.0,
            64.0,
            196.0,
            512.0,
            4096.0,
            8192.0,
            100_000.0,
            1_048_576.0,
        ] {
            for points in [200.0, 300.0, 450.0, 800.0, 1200.0] {
                let labels = labelled(range, points);
                // A label needs 60 points: a short axis holds two, a longer one three or more.
                let wanted = if points >= 300.0 { 3 } else { 2 };
                assert!(
                    labels.len() >= wanted,
                    "{range} over {points} points: labels {labels:?}"
                );
                // Evenly spaced: one step between every pair of neighbours.
                let gaps: Vec<f64> = labels.windows(2).map(|w| w[1] - w[0]).collect();
                assert!(
                    gaps.iter().all(|g| (g - gaps[0]).abs() < 1e-9 * gaps[0]),
                    "{gaps:?}"
                );
            }
        }
    }

    #[test]
    fn labels_show_the_decimals_their_step_needs() {
        let mark = |value, step_size| egui_plot::GridMark { value, step_size };
        assert_eq!(tick_label(mark(0.35, 0.05)), "0.35");
        assert_eq!(tick_label(mark(300.0, 100.0)), "300");
        assert_eq!(tick_label(mark(-0.0, 1.0)), "0");
        assert_eq!(tick_label(mark(2.5, 0.5)), "2.5");
    }
}
