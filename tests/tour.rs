//! The tour "From counting to sinusoids", driven through AccessKit as a user would: every
//! step's numbers against the formula it shows evaluated here and against the engine's tables,
//! the translation matrix against rotations and the table itself up to Δ = 10,000, the steps'
//! snapshots, and the figures from the command line.

mod common;

use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use ndarray::Array2;
use poslab::egui::accesskit::Role;
use poslab::encoding::PairLayout;

use poslab::app::PoslabApp;
use poslab::encoding::binary::BinaryParams;
use poslab::encoding::sinusoidal::{
    self, SinusoidalParams, Spacing, translation_error, translation_matrix,
};
use poslab::engine::{TableSpec, cpu};
use poslab::scene::tour::{TourCurves, TourFrame, TourHeatmap, TourPanel, TourStep};

fn harness() -> Harness<'static, PoslabApp> {
    common::app_harness()
}

fn open_tour(harness: &mut Harness<'_, PoslabApp>) {
    harness.run();
    harness.get_by_label("From counting to sinusoids").click();
    harness.run();
}

fn set_slider(harness: &mut Harness<'_, PoslabApp>, label: &str, value: f64) {
    harness
        .get_by_role_and_label(Role::Slider, label)
        .set_value_accesskit(value);
    harness.run();
}

fn frame(harness: &mut Harness<'_, PoslabApp>) -> TourFrame {
    harness
        .state_mut()
        .tour_view()
        .shown_frame()
        .expect("a step is drawn")
        .clone()
}

fn heatmap(frame: &TourFrame, index: usize) -> &TourHeatmap {
    match &frame.panels[index] {
        TourPanel::Heatmap(map) => map,
        TourPanel::Curves(_) => panic!("{:?}: panel {index} is a heatmap", frame.step),
    }
}

fn curves(frame: &TourFrame, index: usize) -> &TourCurves {
    match &frame.panels[index] {
        TourPanel::Curves(curves) => curves,
        TourPanel::Heatmap(_) => panic!("{:?}: panel {index} is curves", frame.step),
    }
}

fn engine_table(spec: &TableSpec) -> Array2<f64> {
    cpu::compute(spec)
        .unwrap()
        .into_real()
        .into_dimensionality()
        .unwrap()
}

fn max_difference(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    assert_eq!(a.dim(), b.dim());
    a.iter()
        .zip(b.iter())
        .fold(0.0, |worst, (x, y)| worst.max((x - y).abs()))
}

#[test]
fn every_step_holds_what_its_formula_says() {
    let (length, dim, base) = (100usize, 24usize, 500.0f64);
    let mut harness = harness();
    open_tour(&mut harness);
    // Width and base are set where a step uses them, then every step is visited with Next.
    harness.get_by_label("5. Slow the dials down").click();
    harness.run();
    set_slider(&mut harness, "Length L", length as f64);
    set_slider(&mut harness, "Width d", dim as f64);
    set_slider(&mut harness, "Frequency base", base);
    harness.get_by_label("1. Count the positions").click();
    harness.run();
    let params = SinusoidalParams {
        seq: length,
        dim,
        base,
        start: 0,
        layout: PairLayout::Interleaved,
        spacing: Spacing::Vaswani,
        ..SinusoidalParams::default()
    };
    let omega = |i: usize| base.powf(-((2 * i) as f64) / dim as f64);
    for (k, step) in TourStep::ALL.into_iter().enumerate() {
        if k > 0 {
            harness.get_by_label("Next").click();
            harness.run();
        }
        let frame = frame(&mut harness);
        assert_eq!(frame.step, step);
        assert!(harness.query_by_label_contains(&frame.text).is_some());
        assert!(harness.query_by_label_contains(&frame.measured).is_some());
        match step {
            TourStep::Counting => {
                let points = &curves(&frame, 0).curves[0].points;
                assert_eq!(points.len(), length);
                assert!(points.iter().all(|p| p[1] == p[0]));
                assert!(frame.measured.contains("adds 99"), "{}", frame.measured);
            }
            TourStep::Normalised => {
                let lines = &curves(&frame, 0).curves;
                for (line, n) in lines.iter().zip([length, 2 * length]) {
                    assert_eq!(line.points.len(), n);
                    for p in &line.points {
                        assert!((p[1] * n as f64 - p[0]).abs() < 1e-12);
                    }
                }
            }
            TourStep::Binary => {
                let values = &heatmap(&frame, 0).values;
                let engine = engine_table(&TableSpec::Binary(BinaryParams {
                    seq: length,
                    dim,
                    start: 0,
                }));
                assert_eq!(values, &engine);
                for ((p, j), &v) in values.indexed_iter() {
                    assert_eq!(v, ((p >> j) & 1) as f64, "bit {j} of {p}");
                }
                // 99 is 1100011: seven bits change below 100.
                assert!(
                    frame.measured.contains("bits 0 to 6 change"),
                    "{}",
                    frame.measured
                );
            }
            TourStep::BinarySines => {
                for ((p, j), &v) in heatmap(&frame, 0).values.indexed_iter() {
                    let want = (p as f64 * std::f64::consts::PI / 2f64.powi(j as i32 + 1)).sin();
                    assert!((v - want).abs() < 1e-13, "({p}, {j}): {v} against {want}");
                }
            }
            TourStep::GeometricSines => {
                for ((p, j), &v) in heatmap(&frame, 0).values.indexed_iter() {
                    let want = (p as f64 / base.powf(j as f64 / dim as f64)).sin();
                    assert!((v - want).abs() < 1e-12, "({p}, {j}): {v} against {want}");
                }
            }
            TourStep::Pairs => {
                let table = &heatmap(&frame, 0).values;
                assert_eq!(table, &engine_table(&TableSpec::Sinusoidal(params)));
                for ((p, c), &v) in table.indexed_iter() {
                    let angle = p as f64 * omega(c / 2);
                    let want = if c % 2 == 0 { angle.sin() } else { angle.cos() };
                    assert!((v - want).abs() < 1e-12);
                }
                // Every position of the pair lies on the unit circle.
                for p in &curves(&frame, 1).curves[0].points {
                    assert!((p[0].hypot(p[1]) - 1.0).abs() < 1e-15);
                }
            }
            TourStep::Translation => {
                let t = &heatmap(&frame, 0).values;
                assert_eq!(t, &translation_matrix(&params, 10).unwrap());
                // The computed row and the row moved by T(10) agree, value by value.
                let lines = &curves(&frame, 1).curves;
                for (a, b) in lines[0].points.iter().zip(&lines[1].points) {
                    assert!((a[1] - b[1]).abs() < 1e-12);
                }
                let moved = engine_table(&TableSpec::Sinusoidal(SinusoidalParams {
                    start: 10,
                    ..params
                }));
                let anchor = 128.min(length - 1);
                for (c, p) in lines[0].points.iter().enumerate() {
                    assert_eq!(p[1], moved[[anchor, c]]);
                }
            }
            TourStep::DotProduct => {
                let points = &curves(&frame, 0).curves[0].points;
                let anchor = 128.min(length - 1);
                let engine = cpu::compute(&TableSpec::DotDecay { params, anchor })
                    .unwrap()
                    .into_real();
                for (j, p) in points.iter().enumerate() {
                    let k = j as f64 - anchor as f64;
                    assert_eq!(p[0], k);
                    let direct: f64 =
                        (0..dim / 2).map(|i| (k * omega(i)).cos()).sum::<f64>() / (dim / 2) as f64;
                    assert!((p[1] - direct).abs() < 1e-12, "k {k}");
                    assert!((p[1] - engine[[j]] / (dim / 2) as f64).abs() < 1e-15);
                }
                assert_eq!(points[anchor][1], 1.0);
            }
            TourStep::Dials => {
                let map = heatmap(&frame, 0);
                assert_eq!(map.values, engine_table(&TableSpec::Sinusoidal(params)));
                // The edge: pair i at base^(2i/d), where its angle reaches one radian.
                for (i, p) in map.overlay.iter().enumerate() {
                    assert_eq!(p[0], (2 * i + 1) as f64);
                    assert!((p[1] * omega(i) - 1.0).abs() < 1e-12);
                }
                let turning = (0..dim / 2).filter(|&i| 99.0 * omega(i) >= 1.0).count();
                assert!(
                    frame
                        .measured
                        .contains(&format!("({} of {dim} columns)", 2 * turning)),
                    "{}",
                    frame.measured
                );
            }
        }
    }
    assert!(harness.get_by_label("Next").accesskit_node().is_disabled());
    // The arrow keys step back, as Prev does.
    harness.key_press(poslab::egui::Key::ArrowLeft);
    harness.run();
    assert_eq!(frame(&mut harness).step, TourStep::DotProduct);
    harness.get_by_label("Prev").click();
    harness.run();
    assert_eq!(frame(&mut harness).step, TourStep::Translation);
}

#[test]
fn the_translation_matrix_moves_every_row_exactly_up_to_a_shift_of_10000() {
    for (dim, base) in [(2, 10_000.0), (128, 10_000.0), (512, 500_000.0), (64, 10.0)] {
        let params = SinusoidalParams {
            seq: 300,
            dim,
            base,
            start: 0,
            layout: PairLayout::Interleaved,
            spacing: Spacing::Vaswani,
            ..SinusoidalParams::default()
        };
        for delta in [0u64, 1, 2, 7, 100, 1234, 4096, 9999, 10_000] {
            let error = translation_error(&params, delta).unwrap();
            assert!(error < 1e-12, "d {dim} base {base} Δ {delta}: {error:e}");
            // Block i is the rotation by Δ·ω_i and nothing lies off the blocks.
            let t = translation_matrix(&params, delta).unwrap();
            for ((r, c), &v) in t.indexed_iter() {
                let want = if r / 2 != c / 2 {
                    0.0
                } else {
                    let phi = delta as f64 * base.powf(-((r / 2 * 2) as f64) / dim as f64);
                    match (r % 2, c % 2) {
                        (0, 0) | (1, 1) => phi.cos(),
                        (1, 0) => phi.sin(),
                        _ => -phi.sin(),
                    }
                };
                // Δ·ω in plain f64 is off by up to ulp(10^4), which the exact angle is not.
                assert!((v - want).abs() < 1e-11, "d {dim} Δ {delta} T[{r}, {c}]");
            }
        }
    }
    // The split layout pairs column i with column d/2 + i: the same property holds.
    let split = SinusoidalParams {
        seq: 64,
        dim: 16,
        base: 10_000.0,
        start: 3,
        layout: PairLayout::Half,
        spacing: Spacing::Vaswani,
        ..SinusoidalParams::default()
    };
    assert!(translation_error(&split, 777).unwrap() < 1e-12);
    // And T(a)·T(b) = T(a + b).
    let a = translation_matrix(&split, 300).unwrap();
    let b = translation_matrix(&split, 477).unwrap();
    let ab = translation_matrix(&split, 777).unwrap();
    assert!(max_difference(&a.dot(&b), &ab) < 1e-13);
    let _ = sinusoidal::table(&split).unwrap();
}

#[test]
fn the_tour_shows_the_translation_error_at_a_shift_of_10000() {
    let mut harness = harness();
    open_tour(&mut harness);
    harness.get_by_label("7. A shift is a matrix: T(Δ)").click();
    harness.run();
    set_slider(&mut harness, "Shift Δ", 10_000.0);
    let frame = frame(&mut harness);
    let error: f64 = frame
        .measured
        .rsplit(" is ")
        .next()
        .and_then(|s| s.trim_end_matches('.').parse().ok())
        .unwrap_or_else(|| panic!("no error in {:?}", frame.measured));
    assert!(frame.measured.contains("Δ = 10000"), "{}", frame.measured);
    assert!(error < 1e-12, "{error:e}");
    assert!(harness.query_by_label_contains(&frame.measured).is_some());
}

#[test]
fn tour_snapshots() {
    let mut harness = harness();
    open_tour(&mut harness);
    for (k, _) in TourStep::ALL.iter().enumerate() {
        if k > 0 {
            harness.get_by_label("Next").click();
            harness.run();
        }
        common::pane_snapshot(&mut harness, &format!("views/tour_{}", k + 1));
    }
}

#[test]
fn the_tour_figures_from_the_command_line_equal_the_apps_export() {
    use poslab::export::figure::FigureStyle;
    let folder = tempfile::tempdir().unwrap();
    let mut harness = harness();
    open_tour(&mut harness);
    harness
        .get_by_label("6. Pair each sine with a cosine")
        .click();
    harness.run();
    set_slider(&mut harness, "Length L", 64.0);
    set_slider(&mut harness, "Width d", 32.0);
    set_slider(&mut harness, "Pair i", 3.0);
    harness.get_by_label("1. Count the positions").click();
    harness.run();
    let style = FigureStyle {
        width: 800,
        height: 500,
        ..FigureStyle::default()
    };
    for k in 0..TourStep::ALL.len() {
        if k > 0 {
            harness.get_by_label("Next").click();
            harness.run();
        }
        let export = harness.state().view_export().expect("the tour exports");
        assert_eq!(export.name, format!("tour_step{}", k + 1));
        let svg = common::assert_command_line_figure_equals_export(
            &export,
            &style,
            folder.path(),
            &format!("tour{k}"),
        );
        assert!(svg.contains(&format!("step {}.", k + 1)));
    }
}
