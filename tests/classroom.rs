//! Designed for a classroom: presentation mode (large type, the light theme, the controls folded
//! away), the keys a presenter steps with, and the pictures a projector shows.

mod common;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use poslab::app::PoslabApp;
use poslab::egui::{Key, Modifiers};
use poslab::views::ViewKind;

fn harness() -> Harness<'static, PoslabApp> {
    common::app_harness()
}

#[test]
fn presentation_mode_zooms_lightens_folds_the_controls_and_gives_them_back() {
    let mut harness = harness();
    harness.run();
    let zoom_before = harness.ctx.zoom_factor();
    assert_eq!(harness.ctx.theme(), poslab::egui::Theme::Dark);
    harness.key_press(Key::F5);
    harness.run();
    let state = &harness.state().state;
    assert!(state.appearance.present && state.appearance.controls_hidden);
    assert_eq!(harness.ctx.theme(), poslab::egui::Theme::Light);
    // The harness window is 1100 points wide at zoom 1: the floor, 1.25, applies.
    assert_eq!(
        harness.ctx.zoom_factor(),
        poslab::app::presentation::PRESENT_MIN_ZOOM
    );
    assert!(
        harness.query_all_by_label("Dimension").next().is_none(),
        "the controls are folded"
    );
    harness.snapshot("classroom/present_sinusoidal");
    // Esc ends it: the theme, zoom and controls come back as they were.
    harness.key_press(Key::Escape);
    harness.run();
    let state = &harness.state().state;
    assert!(!state.appearance.present && !state.appearance.controls_hidden);
    assert_eq!(harness.ctx.theme(), poslab::egui::Theme::Dark);
    assert_eq!(harness.ctx.zoom_factor(), zoom_before);
    assert!(harness.query_all_by_label("Dimension").next().is_some());
    // The light theme on its own, and Ctrl+B folding the controls at a desk.
    harness.get_by_label("light").click();
    harness.run();
    assert_eq!(harness.ctx.theme(), poslab::egui::Theme::Light);
    harness.key_press_modifiers(Modifiers::COMMAND, Key::B);
    harness.run();
    assert!(harness.query_all_by_label("Dimension").next().is_none());
    harness.get_by_label("Show controls").click();
    harness.run();
    assert!(harness.query_all_by_label("Dimension").next().is_some());
}

#[test]
fn page_down_steps_through_the_tour_and_then_the_views() {
    let mut harness = common::app_harness_with(|app| {
        app.launched(&poslab::cli::app::AppLaunch {
            view: Some(ViewKind::Tour),
            present: true,
            ..Default::default()
        })
    });
    harness.run();
    assert!(harness.state().state.appearance.present);
    let steps = poslab::scene::tour::TourStep::ALL.len();
    for step in 1..steps {
        harness.key_press(Key::PageDown);
        harness.run();
        assert_eq!(harness.state_mut().tour_view().step.index(), step);
    }
    assert_eq!(harness.state().state.view, ViewKind::Tour);
    // Past the last step, the next view.
    harness.key_press(Key::PageDown);
    harness.run();
    let second = harness.state().state.view;
    assert_ne!(second, ViewKind::Tour);
    // Page Up goes back into the tour at its last step; Ctrl+Page Down skips whole views.
    harness.key_press(Key::PageUp);
    harness.run();
    assert_eq!(harness.state().state.view, ViewKind::Tour);
    harness.key_press_modifiers(Modifiers::COMMAND, Key::PageDown);
    harness.run();
    assert_eq!(harness.state().state.view, second);
    harness.key_press_modifiers(Modifiers::COMMAND, Key::PageUp);
    harness.key_press_modifiers(Modifiers::COMMAND, Key::PageUp);
    harness.run();
    assert_ne!(harness.state().state.view, ViewKind::Tour, "it wraps round");
    // The bar's buttons do the same for a mouse.
    harness.get_by_label("Next view").click();
    harness.run();
    assert_eq!(harness.state().state.view, ViewKind::Tour);
}
