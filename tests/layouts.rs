//! The Layouts view: what it shows is the permutation conversion scripts apply (checked against
//! transformers' `view(n_heads, d/2, 2, ...).transpose(1, 2)` written out here), the scores it
//! prints are RoPE's scores computed independently (a complex product per pair), its controls
//! change them, Page Down plays the reorder, and the figure the command line makes is the app's
//! export. Snapshots at a desk and presenting.

mod common;

use egui_kittest::kittest::Queryable;
use poslab::egui::Key;
use poslab::egui::accesskit::Role;
use poslab::encoding::PairLayout;
use poslab::scene::layouts::{LayoutsSettings, q_board, rotation_board, scene};
use poslab::views::ViewKind;

/// `RoPE(q, m) · RoPE(k, n)` for interleaved pairs, as Meta's complex product computes it:
/// `Re(Σ q_c k_c* e^{i(m-n)θ})`, with `q_c = q[2i] + i q[2i+1]`.
fn complex_score(q: &[f64], k: &[f64], base: f64, delta: f64) -> f64 {
    let d = q.len();
    (0..d / 2)
        .map(|i| {
            let theta = base.powf(-((2 * i) as f64) / d as f64);
            let (qr, qi, kr, ki) = (q[2 * i], q[2 * i + 1], k[2 * i], k[2 * i + 1]);
            // q_c * conj(k_c) = (qr kr + qi ki) + i (qi kr - qr ki)
            let (re, im) = (qr * kr + qi * ki, qi * kr - qr * ki);
            re * (delta * theta).cos() - im * (delta * theta).sin()
        })
        .sum()
}

#[test]
fn the_half_board_is_the_conversion_scripts_row_order_and_the_scores_are_ropes() {
    for settings in [
        LayoutsSettings::default(),
        LayoutsSettings {
            head_dim: 16,
            heads: 8,
            kv_heads: 2,
            offset: 100_000,
            seed: 9,
            base: 500_000.0,
        },
    ] {
        let scene = scene(&settings).unwrap();
        let d = settings.head_dim;
        // w.view(1, d/2, 2, cols).transpose(1, 2): new row t*d/2 + j is old row 2j + t.
        let half = q_board(&scene, PairLayout::Half);
        for j in 0..d / 2 {
            for t in 0..2 {
                let cell = half.cell(0, t * d / 2 + j).unwrap();
                assert_eq!(cell.label, format!("q{}", 2 * j + t));
            }
        }
        let expected = complex_score(&scene.q, &scene.k, settings.base, settings.offset as f64);
        let got = scene.heads[0];
        let tolerance = 1e-9 * (1.0 + expected.abs());
        assert!(
            (got.original - expected).abs() < tolerance,
            "{got:?} {expected}"
        );
        assert!(
            (got.permuted - expected).abs() < tolerance,
            "{got:?} {expected}"
        );
        // Every rotation entry is cos or ±sin of Δθ_i at the pair's two dims in each layout.
        let matrix = rotation_board(&scene, PairLayout::Half);
        for i in 0..d / 2 {
            let angle = settings.offset as f64 * settings.base.powf(-((2 * i) as f64) / d as f64);
            let (a, b) = (i, i + d / 2);
            let value = |r, c| matrix.cell(r, c).and_then(|c| c.value).unwrap();
            assert!((value(a, a) - angle.cos()).abs() < 1e-9);
            assert!((value(a, b) + angle.sin()).abs() < 1e-9);
            assert!((value(b, a) - angle.sin()).abs() < 1e-9);
        }
        assert_eq!(matrix.cells.len(), 2 * d);
    }
}

#[test]
fn the_view_shows_the_bug_follows_its_controls_and_exports_its_figure() {
    let folder = tempfile::tempdir().unwrap();
    let mut harness = common::app_harness_with(|app| {
        app.launched(&poslab::cli::app::AppLaunch {
            view: Some(ViewKind::Layouts),
            ..Default::default()
        })
    });
    harness.run();
    let shown = harness.state().layouts_view().shown().cloned().unwrap();
    assert_eq!(shown.settings, LayoutsSettings::default());
    assert!(shown.permuted_scores_equal());
    assert_eq!(shown.broken_heads(), vec![0, 1, 2, 3]);
    assert!(
        harness
            .query_by_label_contains("4 of 4 query heads get wrong scores")
            .is_some()
    );
    common::pane_snapshot(&mut harness, "views/layouts");
    // Eight query heads over two kv heads of 16: the bug permutes groups of 4 rows.
    harness
        .get_by_role_and_label(Role::Slider, "head dim d")
        .set_value_accesskit(16.0);
    harness
        .get_by_role_and_label(Role::Slider, "query heads H")
        .set_value_accesskit(8.0);
    harness.run();
    let shown = harness.state().layouts_view().shown().cloned().unwrap();
    assert_eq!((shown.settings.head_dim, shown.settings.heads), (16, 8));
    assert_eq!(shown.settings.kv_heads, 2);
    assert_eq!(shown.broken_heads().len(), 8);
    assert!(
        harness
            .query_by_label_contains("k permuted as 8 heads of 4 rows instead of 2 kv heads of 16")
            .is_some()
    );
    // K = H: the query head count is right.
    harness.state_mut().layouts_view_mut().settings.kv_heads = 8;
    harness.run();
    let shown = harness.state().layouts_view().shown().cloned().unwrap();
    assert!(shown.broken_heads().is_empty());
    assert!(harness.query_by_label_contains("K = H").is_some());
    harness.state_mut().layouts_view_mut().settings.kv_heads = 2;
    harness.run();
    let export = harness.state().view_export().expect("the view exports");
    // Its data: k_proj's row order for its 2 kv heads of 16.
    assert!(
        matches!(&export.data, Some(poslab::engine::TableSpec::Registered(table))
            if table.downcast::<poslab::encoding::pair_permutation::PermutationParams>()
                .is_some_and(|p| p.heads == 2 && p.head_dim == 16)),
        "{:?}",
        export.data
    );
    let style = poslab::export::figure::FigureStyle::default();
    let svg =
        common::assert_command_line_figure_equals_export(&export, &style, folder.path(), "layouts");
    assert!(
        svg.contains("8 query heads, 2 kv heads"),
        "the figure's title"
    );
}

#[test]
fn page_down_plays_the_reorder_then_moves_on_and_presenting_is_readable() {
    let mut harness = common::app_harness_with(|app| {
        app.launched(&poslab::cli::app::AppLaunch {
            view: Some(ViewKind::Layouts),
            present: true,
            ..Default::default()
        })
    });
    harness.run();
    common::pane_snapshot(&mut harness, "classroom/present_layouts");
    harness.key_press(Key::PageDown);
    harness.step();
    harness.step();
    assert_eq!(harness.state().state.view, ViewKind::Layouts);
    assert!(harness.state().layouts_view().is_animating());
    // It ends, and another Page Down moves on.
    harness.run();
    assert!(!harness.state().layouts_view().is_animating());
    harness.key_press(Key::PageDown);
    harness.run();
    assert_ne!(harness.state().state.view, ViewKind::Layouts);
}
