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
    // Captions and legends (small type) grow to the body's size, not only by the zoom.
    let body = poslab::egui::TextStyle::Body
        .resolve(&harness.ctx.global_style())
        .size;
    assert_eq!(poslab::app::presentation::small_points(&harness.ctx), body);
    common::pane_snapshot(&mut harness, "classroom/present_sinusoidal");
    // Quitting while presenting keeps the desk's theme for the next run, not presentation's.
    let mut storage = common::MemoryStorage::default();
    eframe::App::save(harness.state_mut(), &mut storage);
    let saved: poslab::app::AppState =
        eframe::get_value(&storage, poslab::app::STATE_KEY).expect("the state was saved");
    assert_eq!(
        saved.appearance.theme,
        poslab::app::presentation::ThemeChoice::Dark
    );
    assert!(!saved.appearance.present);
    assert_eq!(
        saved.appearance.desk_zoom,
        Some(zoom_before),
        "the desk's zoom, given back at the next start"
    );
    // Esc ends it: the theme, zoom and controls come back as they were.
    harness.key_press(Key::Escape);
    harness.run();
    let state = &harness.state().state;
    assert!(!state.appearance.present && !state.appearance.controls_hidden);
    assert_eq!(harness.ctx.theme(), poslab::egui::Theme::Dark);
    assert_eq!(harness.ctx.zoom_factor(), zoom_before);
    assert_eq!(poslab::app::presentation::small_points(&harness.ctx), 9.0);
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

/// F5 pressed twice in a row, before presentation mode's zoom has taken effect (egui takes a
/// zoom at the next frame): the desk's zoom comes back, not the projector's.
#[test]
fn presenting_for_one_frame_gives_the_desks_zoom_back() {
    let mut harness = harness();
    harness.run();
    let zoom_before = harness.ctx.zoom_factor();
    harness.key_press(Key::F5);
    harness.step();
    harness.key_press(Key::F5);
    harness.step();
    harness.run();
    assert!(!harness.state().state.appearance.present);
    assert_eq!(harness.ctx.zoom_factor(), zoom_before);
    let mut storage = common::MemoryStorage::default();
    eframe::App::save(harness.state_mut(), &mut storage);
    let saved: poslab::app::AppState =
        eframe::get_value(&storage, poslab::app::STATE_KEY).expect("the state was saved");
    assert_eq!(saved.appearance.desk_zoom, Some(zoom_before));
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
    assert_eq!(harness.state_mut().tour_view().step.index(), steps - 1);
    harness.key_press_modifiers(Modifiers::COMMAND, Key::PageDown);
    harness.run();
    assert_eq!(harness.state().state.view, second);
    harness.key_press_modifiers(Modifiers::COMMAND, Key::PageUp);
    harness.key_press_modifiers(Modifiers::COMMAND, Key::PageUp);
    harness.run();
    assert_ne!(harness.state().state.view, ViewKind::Tour, "it wraps round");
    // Page Down from the last view wraps round into the tour at its first step, as a deck
    // starts again at its first slide.
    harness.key_press(Key::PageDown);
    harness.run();
    assert_eq!(harness.state().state.view, ViewKind::Tour);
    assert_eq!(harness.state_mut().tour_view().step.index(), 0);
    harness.key_press_modifiers(Modifiers::COMMAND, Key::PageUp);
    harness.run();
    // The bar's buttons do the same for a mouse.
    harness.get_by_label("Next view").click();
    harness.run();
    assert_eq!(harness.state().state.view, ViewKind::Tour);
}

/// The smallest and largest cell of `spec`, cell by cell on the CPU engine (one bin over the
/// whole table, reduced by min and by max).
fn every_cell_range(spec: &poslab::engine::TableSpec) -> (f64, f64) {
    use poslab::engine::reduce::{Reduce, compute_reduced_cpu};
    use poslab::engine::{Strided, Window};
    let [_, rows, cols] = spec.matrix_shape();
    let window = Window {
        heads: Strided::all(1),
        rows: Strided {
            start: 0,
            end: rows,
            step: rows,
        },
        cols: Strided {
            start: 0,
            end: cols,
            step: cols,
        },
    };
    let low = compute_reduced_cpu(spec, &window, Reduce::Min).unwrap()[[0, 0]];
    let high = compute_reduced_cpu(spec, &window, Reduce::Max).unwrap()[[0, 0]];
    (low, high)
}

#[test]
fn colour_bars_span_the_tables_true_range_at_a_million_rows() {
    let mut harness = harness();
    harness.run();
    {
        let shared = &mut harness.state_mut().state.shared;
        shared.seq = 1 << 20;
        shared.dim = 16;
        shared.heads = 8;
    }
    harness.run();
    // The sinusoidal table drawn as means of 1,000-odd rows a pixel: the means span about
    // ±0.6 in the slow columns, the bar the cells' own -1 to 1.
    let shown = harness.state().shown_sinusoidal().unwrap();
    assert!(shown.rows.step > 1000);
    let pixels_high = shown
        .values
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    let spec = poslab::engine::TableSpec::Sinusoidal(harness.state().state.shared.sinusoidal());
    let (low, high) = harness.state().shown_sinusoidal_range();
    let want = every_cell_range(&spec);
    assert!(pixels_high < want.1 - 1e-3, "the pixels alone fall short");
    assert!(
        (low - want.0).abs() < 1e-9 && (high - want.1).abs() < 1e-9,
        "bar {low}..{high}, cells {want:?}"
    );
    assert_eq!(high, 1.0, "cos 0 = 1 at position 0");

    // The similarity matrix PE[i]·PE[j] of a million positions: its top is d/2 = 8 exactly
    // (every pair adds sin² + cos² on the diagonal), its bottom the least of
    // Σ cos(k w_i) over every offset k, summed here term by term.
    harness.get_by_label("Dot-product decay").click();
    harness.run();
    let freqs = harness.state().state.shared.sinusoidal().frequencies();
    let lowest = (0..1u64 << 20)
        .map(|k| freqs.iter().map(|w| (k as f64 * w).cos()).sum::<f64>())
        .fold(f64::INFINITY, f64::min);
    let (low, high) = harness.state().dot_decay_view().shown_similarity_range();
    assert_eq!(high, 8.0);
    assert!((low - lowest).abs() < 1e-9, "bar {low}, cells {lowest}");

    // ALiBi's bias of head 0 (m = 2⁻¹ of 8 heads): 0 on the diagonal, -m·(L - 1) in the far
    // corner, whatever a pixel's mean says.
    harness.get_by_label("ALiBi").click();
    harness.run();
    let (low, high) = harness.state().alibi_view().shown_range();
    let seq = harness
        .state()
        .state
        .shared
        .seq
        .min(poslab::views::alibi::MAX_SEQ);
    assert_eq!(high, 0.0);
    assert_eq!(low, -0.5 * (seq - 1) as f64);
    common::pane_snapshot(&mut harness, "classroom/alibi_true_range");
}

#[test]
fn a_long_preset_name_neither_widens_the_panel_nor_breaks_its_label() {
    let mut harness = harness();
    harness.run();
    let view_left = |harness: &Harness<'_, PoslabApp>| {
        harness
            .get_by_label_contains("What am I looking at")
            .rect()
            .left()
    };
    let before = view_left(&harness);
    let longest = poslab::ui::params::presets()
        .iter()
        .max_by_key(|p| p.name.len())
        .unwrap();
    assert!(longest.name.len() > 20, "{}", longest.name);
    {
        let state = &mut harness.state_mut().state;
        state.preset = Some(longest.name.clone());
        state.shared = longest.params;
        // Moved: "(modified)" makes it longer still.
        state.shared.base += 1.0;
    }
    harness.run();
    // The side panel from the preset row down, and the view beside it (not the view picker
    // above, which a new view would change: nor the crop's height, so a fixed one).
    let preset_top = harness
        .query_all_by_label("Preset")
        .map(|node| node.rect().top())
        .fold(f32::INFINITY, f32::min);
    let window = harness.ctx.content_rect();
    let crop = poslab::egui::Rect::from_min_size(
        poslab::egui::pos2(window.left(), preset_top - 8.0),
        poslab::egui::vec2(window.width(), 340.0),
    )
    .intersect(window);
    common::region_snapshot(&mut harness, crop, "classroom/long_preset");
    assert_eq!(view_left(&harness), before, "the panel keeps its width");
    for node in harness.query_all_by_label("Preset") {
        let rect = node.rect();
        assert!(
            rect.width() > rect.height(),
            "\"Preset\" in one line: {rect:?}"
        );
    }
}

#[test]
fn the_tours_last_step_in_presentation_mode_draws_every_row() {
    let mut harness = common::app_harness_with(|mut app| {
        app.tour_view().step = poslab::scene::tour::TourStep::Dials;
        app.launched(&poslab::cli::app::AppLaunch {
            view: Some(ViewKind::Tour),
            present: true,
            ..Default::default()
        })
    });
    harness.run();
    // Every row of the table has a bin of its own: the picture varies down each column (a
    // flat colour per column is the columns' means over every row).
    let rows = harness
        .state_mut()
        .tour_view()
        .shown_frame()
        .and_then(|frame| match frame.panels.first() {
            Some(poslab::scene::tour::TourPanel::Heatmap(map)) => Some(map.values.nrows()),
            _ => None,
        })
        .expect("the step's table");
    let [bins, _] = harness.state_mut().tour_view().shown_bins();
    let (row_bins, _) = bins.expect("the table drawn");
    assert_eq!((row_bins.start, row_bins.end, row_bins.step), (0, rows, 1));
    common::pane_snapshot(&mut harness, "classroom/present_tour_dials");
}
