//! A result that arrives after the settings it was asked for have gone back to those on
//! screen is labelled with its own settings, not the frame's: otherwise a coarse picture asked
//! for in between stays on screen as if it were current (the tour's last step, drawn in
//! presentation mode as one flat colour per column).

use egui_kittest::Harness;
use ndarray::Array2;
use poslab::colormap::Colormap;
use poslab::egui;
use poslab::engine::reduce::Reduce;
use poslab::widgets::array_heatmap::ArrayHeatmap;

struct State {
    heatmap: ArrayHeatmap,
    values: Array2<f64>,
    height: f32,
}

#[test]
fn a_picture_asked_for_in_between_does_not_stay_as_the_current_one() {
    // Large enough that reducing it takes longer than a frame.
    let (rows, cols) = (4096, 2048);
    let state = State {
        heatmap: ArrayHeatmap::default(),
        values: Array2::from_shape_fn((rows, cols), |(r, c)| ((r * 7 + c * 3) % 11) as f64),
        height: 400.0,
    };
    let mut harness = Harness::builder()
        .with_size([700.0, 500.0])
        .with_max_steps(2000)
        .build_ui_state(
            |ui, state: &mut State| {
                let rect =
                    egui::Rect::from_min_size(ui.max_rect().min, egui::vec2(600.0, state.height));
                ui.scope_builder(egui::UiBuilder::new().max_rect(rect), |ui| {
                    state.heatmap.ui(
                        ui,
                        "stale",
                        &state.values,
                        0,
                        (0.0, 10.0),
                        ("column", "row"),
                        Reduce::Mean,
                        Colormap::default(),
                    );
                });
            },
            state,
        );
    harness.run();
    let fine = harness.state().heatmap.shown_bins().expect("a picture");
    // One frame squeezed to a few pixels asks for a coarse picture...
    harness.state_mut().height = 60.0;
    harness.step();
    harness.step();
    // ...and the next is back at the size whose picture is on screen, before it arrives.
    harness.state_mut().height = 400.0;
    harness.run();
    let shown = harness.state().heatmap.shown_bins().expect("a picture");
    assert_eq!(
        shown.0.step, fine.0.step,
        "the coarse picture stayed: {shown:?}, wanted {fine:?}"
    );
}
