//! The app driven through AccessKit with egui_kittest, on a real wgpu device (lavapipe in CI):
//! what it shows must follow the controls, and agree with the CPU engine.

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use poslab::egui::accesskit::Role;

use poslab::app::{PoslabApp, wgpu_setup};
use poslab::encoding::sinusoidal::SinusoidalParams;
use poslab::engine::{Table, TableSpec, Window, cpu};

fn harness() -> Harness<'static, PoslabApp> {
    Harness::builder()
        .with_size([1100.0, 720.0])
        .wgpu_setup(wgpu_setup())
        .build_eframe(|cc| PoslabApp::new(cc).hide_machine_details())
}

/// The values on screen against the CPU engine for the same window.
fn assert_shown_table_is_exact(harness: &Harness<'_, PoslabApp>, params: SinusoidalParams) {
    let shown = harness
        .state()
        .shown_sinusoidal()
        .expect("a table is shown");
    let window = Window {
        heads: poslab::engine::Strided::all(1),
        rows: shown.rows,
        cols: shown.cols,
    };
    let Table::Real(expected) =
        cpu::compute_window(&TableSpec::Sinusoidal(params), &window).unwrap()
    else {
        panic!("a real table")
    };
    assert_eq!(shown.values.len(), expected.len());
    for (a, b) in shown.values.iter().zip(expected.iter()) {
        assert!((a - b).abs() <= 2e-6, "{a} vs {b}");
    }
}

#[test]
fn the_dimension_slider_changes_the_table_shown() {
    let mut harness = harness();
    harness.run();
    let before = harness.state().state.shared;
    assert_shown_table_is_exact(&harness, before.sinusoidal());

    harness
        .get_by_role_and_label(Role::Slider, "Dimension")
        .set_value_accesskit(64.0);
    harness.run();
    let after = harness.state().state.shared;
    assert_eq!(after.dim, 64);
    let shown = harness.state().shown_sinusoidal().unwrap();
    assert!(shown.cols.end <= 64, "columns shown: {:?}", shown.cols);
    assert_shown_table_is_exact(&harness, after.sinusoidal());
    assert!(harness.query_by_label_contains("table 512 × 64").is_some());
}

#[test]
fn a_preset_sets_a_real_models_parameters() {
    let mut harness = harness();
    harness.run();
    harness.get_by_label("Preset").click();
    harness.run();
    harness
        .get_by_label("Llama-3 (head dim 128, base 500000)")
        .click();
    harness.run();
    let shared = harness.state().state.shared;
    assert_eq!(
        (shared.dim, shared.base, shared.seq),
        (128, 500_000.0, 8192)
    );
    assert_shown_table_is_exact(&harness, shared.sinusoidal());
}

#[test]
fn split_layout_regroups_the_columns() {
    let mut harness = harness();
    harness.run();
    harness.get_by_label("split").click();
    harness.run();
    let shared = harness.state().state.shared;
    assert!(!shared.interleaved);
    assert_shown_table_is_exact(&harness, shared.sinusoidal());
}

#[test]
fn sinusoidal_view_snapshot() {
    let mut harness = harness();
    harness.run();
    harness.snapshot("views/sinusoidal");
}
