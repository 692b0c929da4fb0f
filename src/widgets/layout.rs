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
