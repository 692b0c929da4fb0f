//! The app never waits: with an engine slowed down on purpose, frames keep coming while a
//! result is pending, the view and the status bar say so, a superseded result is never shown,
//! and the exact picture arrives afterwards.

mod common;

use std::time::{Duration, Instant};

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use poslab::app::{PoslabApp, wgpu_setup};

/// The app with every block of a window taking `delay` longer.
fn slow_harness(delay: Duration) -> Harness<'static, PoslabApp> {
    Harness::builder()
        .with_max_steps(4000)
        .with_size([1100.0, 720.0])
        .wgpu_setup(wgpu_setup())
        .build_eframe(move |cc| {
            PoslabApp::new(cc)
                .hide_machine_details()
                .with_slow_engine(delay)
        })
}

/// Steps frames (without waiting for the result) until `done` holds; panics after 60 s.
fn step_until(harness: &mut Harness<'_, PoslabApp>, mut done: impl FnMut(&PoslabApp) -> bool) {
    let until = Instant::now() + Duration::from_secs(60);
    while !done(harness.state()) {
        assert!(Instant::now() < until, "the app never got there");
        harness.step();
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn shown_columns(app: &PoslabApp) -> Option<usize> {
    app.shown_sinusoidal().map(|data| data.cols.end)
}

#[test]
fn a_slow_engine_leaves_the_view_drawing_and_saying_what_is_pending() {
    let mut harness = slow_harness(Duration::from_millis(400));
    step_until(&mut harness, |app| {
        !app.is_computing() && shown_columns(app) == Some(128)
    });
    assert!(!harness.state().sinusoidal_shows_preview());

    harness.state_mut().state.shared.dim = 256;
    // A few frames: each returns although every block of the new table takes 400 ms.
    for _ in 0..3 {
        harness.step();
    }
    assert!(harness.state().is_computing());
    // What the status bar says (the label is there from the second frame on).
    harness.step();
    assert!(
        harness
            .query_all_by_label_contains("computing 512 × 256 …")
            .count()
            >= 1,
        "the status bar names what is computing"
    );
    // Until the new picture comes, the old one is veiled as the previous settings', or a
    // preview of the new one is shown as a preview: never a stale picture as current.
    use poslab::widgets::heatmap::Freshness;
    match harness.state().sinusoidal_freshness() {
        Some(Freshness::Stale) => {
            assert_eq!(shown_columns(harness.state()), Some(128));
            assert!(
                harness
                    .query_by_label_contains("the picture is of the previous settings")
                    .is_some()
            );
        }
        Some(Freshness::Preview) => assert!(harness.state().sinusoidal_shows_preview()),
        other => panic!("while pending, the picture is {other:?}"),
    }
    step_until(&mut harness, |app| !app.is_computing());
    assert_eq!(shown_columns(harness.state()), Some(256));
    assert!(!harness.state().sinusoidal_shows_preview());
    // The exact picture holds the engine's values.
    let data = harness.state().shown_sinusoidal().expect("a picture");
    // Vaswani's table written out: interleaved, base 10000, d = 256.
    let vaswani = |p: usize, c: usize| {
        let w = 10000f64.powf(-((c / 2 * 2) as f64) / 256.0);
        if c.is_multiple_of(2) {
            (p as f64 * w).sin()
        } else {
            (p as f64 * w).cos()
        }
    };
    for (k, &value) in data.values.iter().enumerate().step_by(97) {
        let (r, c) = (k / data.values.ncols(), k % data.values.ncols());
        let (row, col) = (
            data.rows.start + r * data.rows.step,
            data.cols.start + c * data.cols.step,
        );
        let expected = vaswani(row, col);
        assert!(
            (value - expected).abs() < 1e-6,
            "cell ({row}, {col}): {value} vs {expected}"
        );
    }
}

#[test]
fn a_superseded_result_is_never_shown() {
    let mut harness = slow_harness(Duration::from_millis(150));
    step_until(&mut harness, |app| {
        !app.is_computing() && shown_columns(app) == Some(128)
    });
    // 64 asked for, then 96 before 64's exact picture can have arrived.
    harness.state_mut().state.shared.dim = 64;
    harness.step();
    harness.state_mut().state.shared.dim = 96;
    harness.step();
    let mut seen = Vec::new();
    step_until(&mut harness, |app| {
        seen.push((shown_columns(app), app.sinusoidal_shows_preview()));
        !app.is_computing()
    });
    // 64's preview may have come before 96 was asked for; its exact picture never does.
    assert!(
        !seen.contains(&(Some(64), false)),
        "the superseded table was shown: {seen:?}"
    );
    assert_eq!(shown_columns(harness.state()), Some(96));
}

#[test]
fn dragging_over_many_values_computes_a_handful() {
    let mut harness = slow_harness(Duration::from_millis(100));
    step_until(&mut harness, |app| !app.is_computing());
    let mut shown = Vec::new();
    for dim in (130..=330).step_by(2) {
        harness.state_mut().state.shared.dim = dim;
        harness.step();
        if let Some(cols) = shown_columns(harness.state())
            && !harness.state().sinusoidal_shows_preview()
            && shown.last() != Some(&cols)
        {
            shown.push(cols);
        }
    }
    step_until(&mut harness, |app| !app.is_computing());
    let last = shown_columns(harness.state());
    assert_eq!(last, Some(330));
    // 101 values dragged over, and only a few exact pictures were ever drawn.
    assert!(
        shown.len() <= 10,
        "{} exact pictures for one drag: {shown:?}",
        shown.len()
    );
}

#[test]
fn a_view_box_applies_what_is_typed_once_on_enter() {
    // The patch grid: "3" then "2" is 32, and no grid of 3 rows is ever computed.
    let mut harness = common::app_harness();
    harness.run();
    harness.get_by_label("2D patch maps").click();
    harness.run();
    let before = harness.state().patch_view().grid.grid_h;
    let mut during = Vec::new();
    common::type_number(&mut harness, "Grid rows", "32", |h| {
        during.push(h.state().patch_view().grid.grid_h);
    });
    assert_eq!(during, vec![before, before], "a keystroke was applied");
    assert_eq!(harness.state().patch_view().grid.grid_h, 32);
    // Beyond the range: set to its end, and said, without moving the controls beside and
    // below the box (the next click must land where the pointer was aimed).
    let controls = |harness: &egui_kittest::Harness<'_, poslab::app::PoslabApp>| {
        ["Grid columns", "ALiBi head"].map(|label| {
            harness
                .get_by_role_and_label(poslab::egui::accesskit::Role::Slider, label)
                .rect()
        })
    };
    let before = controls(&harness);
    common::type_number(&mut harness, "Grid rows", "99", |_| {});
    assert_eq!(harness.state().patch_view().grid.grid_h, 64);
    assert!(
        harness
            .query_by_label_contains("99 is above the largest grid rows, 64: set to 64")
            .is_some()
    );
    assert_eq!(controls(&harness), before, "the note moved the controls");
    // Escape keeps the value the box had.
    common::number_box(&harness, "Grid columns").click();
    harness.run();
    common::number_box(&harness, "Grid columns").type_text("7");
    harness.run();
    harness.key_press(poslab::egui::Key::Escape);
    harness.run();
    assert_eq!(harness.state().patch_view().grid.grid_w, 14);
    // The side panel's boxes too.
    common::number_box(&harness, "Dimension").click();
    harness.run();
    common::number_box(&harness, "Dimension").type_text("64");
    harness.run();
    harness.key_press(poslab::egui::Key::Escape);
    harness.run();
    assert_eq!(harness.state().state.shared.dim, 128);

    // The tour's length, in another view, the same way.
    harness.get_by_label("From counting to sinusoids").click();
    harness.run();
    let before = harness.state_mut().tour_view().settings.length;
    let mut during = Vec::new();
    common::type_number(&mut harness, "Length L", "32", |h| {
        during.push(h.state().tour_settings().length);
    });
    assert_eq!(during, vec![before, before], "a keystroke was applied");
    assert_eq!(harness.state_mut().tour_view().settings.length, 32);
}
