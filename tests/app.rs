//! The app driven through AccessKit with egui_kittest, on a real wgpu device (lavapipe in CI):
//! what it shows must follow the controls, and agree with the CPU engine.

mod common;

use common::{click_at, type_number};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use poslab::egui::accesskit::Role;

use poslab::app::{PoslabApp, wgpu_setup};
use poslab::encoding::sinusoidal::SinusoidalParams;
use poslab::engine::{Table, TableSpec, Window, cpu};

fn harness() -> Harness<'static, PoslabApp> {
    Harness::builder()
        // A heatmap's colour range arrives from the device some frames after its texture.
        .with_max_steps(2000)
        .with_size([1100.0, 720.0])
        .wgpu_setup(wgpu_setup())
        .build_eframe(|cc| PoslabApp::new(cc).hide_machine_details())
}

/// The values on screen against the CPU engine: each pixel the mean of the cells it covers
/// (one cell where a pixel covers one), averaged here cell by cell; `sampled_rows` pixel rows
/// spread over the window, or all of them.
fn assert_shown_pixels_are_cell_means(
    harness: &Harness<'_, PoslabApp>,
    params: SinusoidalParams,
    sampled_rows: Option<usize>,
) {
    let shown = harness
        .state()
        .shown_sinusoidal()
        .expect("a table is shown");
    let (rows, cols) = shown.values.dim();
    assert_eq!((rows, cols), (shown.rows.len(), shown.cols.len()));
    let picked: Vec<usize> = match sampled_rows {
        Some(n) => (0..n).map(|k| k * (rows - 1) / (n - 1).max(1)).collect(),
        None => (0..rows).collect(),
    };
    let spec = TableSpec::Sinusoidal(params);
    for y in picked {
        let first = shown.rows.at(y);
        let last = (first + shown.rows.step).min(shown.rows.end);
        let block = Window {
            heads: poslab::engine::Strided::all(1),
            rows: poslab::engine::Strided {
                start: first,
                end: last,
                step: 1,
            },
            cols: poslab::engine::Strided {
                start: shown.cols.start,
                end: shown.cols.end,
                step: 1,
            },
        };
        let Table::Real(cells) = cpu::compute_window(&spec, &block).unwrap() else {
            panic!("a real table")
        };
        let cells = cells
            .into_shape_with_order((last - first, block.cols.len()))
            .unwrap();
        for x in 0..cols {
            let c0 = shown.cols.at(x) - shown.cols.start;
            let c1 = (c0 + shown.cols.step).min(block.cols.len());
            let covered = cells.slice(ndarray::s![.., c0..c1]);
            let mean = covered.sum() / covered.len() as f64;
            let value = shown.values[[y, x]];
            assert!(
                (value - mean).abs() <= 2e-6,
                "pixel ({y}, {x}) covering rows {first}..{last}: {value} vs the cells' mean {mean}"
            );
        }
    }
}

fn assert_shown_table_is_exact(harness: &Harness<'_, PoslabApp>, params: SinusoidalParams) {
    assert_shown_pixels_are_cell_means(harness, params, None);
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
        .get_by_label("Llama-3.1-8B (RoPE, head dim 128, base 500000, llama3 x8)")
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
    assert_eq!(shared.layout, poslab::encoding::PairLayout::Half);
    assert_shown_table_is_exact(&harness, shared.sinusoidal());
}

#[test]
fn sinusoidal_view_snapshot() {
    let mut harness = harness();
    harness.run();
    common::pane_snapshot(&mut harness, "views/sinusoidal");
}

#[test]
fn switching_views_keeps_the_shared_parameters() {
    let mut harness = harness();
    harness.run();
    harness
        .get_by_role_and_label(Role::Slider, "Dimension")
        .set_value_accesskit(32.0);
    harness.run();
    harness.get_by_label("Dot-product decay").click();
    harness.run();
    assert_eq!(harness.state().state.shared.dim, 32);
    // The curve is PE[0]·PE[k] = Σ_i cos(k w_i) with w_i = 10000^(-2i/32), computed here.
    let curve = harness
        .state()
        .shown_dot_decay()
        .expect("a curve is shown")
        .to_vec();
    assert_eq!(curve.len(), 512);
    for [k, value] in curve {
        let expected: f64 = (0..16)
            .map(|i| (k * 10_000f64.powf(-(2 * i) as f64 / 32.0)).cos())
            .sum();
        assert!(
            (value - expected).abs() < 2e-5,
            "k {k}: {value} vs {expected}"
        );
    }
    harness.get_by_label("Normalised").click();
    harness.run();
    let first = harness.state().shown_dot_decay().unwrap()[0];
    assert!(
        (first[1] - 1.0).abs() < 1e-6,
        "normalised curve starts at 1: {first:?}"
    );
}

#[test]
fn dot_decay_view_snapshot() {
    let mut harness = harness();
    harness.run();
    harness.get_by_label("Dot-product decay").click();
    harness.run();
    common::pane_snapshot(&mut harness, "views/dot_decay");
}

#[test]
fn alibi_view_snapshot() {
    let mut harness = harness();
    harness.run();
    harness.get_by_label("ALiBi").click();
    harness.run();
    common::pane_snapshot(&mut harness, "views/alibi");
}

#[test]
fn alibi_small_multiples_snapshot() {
    let mut harness = harness();
    harness.run();
    harness.get_by_label("ALiBi").click();
    harness.run();
    harness.get_by_label("All heads").click();
    harness.run();
    common::pane_snapshot(&mut harness, "views/alibi_small_multiples");
}

use common::MemoryStorage;

#[test]
fn settings_survive_a_restart() {
    let mut harness = harness();
    harness.run();
    harness.get_by_label("ALiBi").click();
    harness.run();
    harness
        .get_by_role_and_label(Role::Slider, "Heads")
        .set_value_accesskit(12.0);
    harness.run();
    let mut storage = MemoryStorage::default();
    eframe::App::save(harness.state_mut(), &mut storage);
    let restored: poslab::app::AppState =
        eframe::get_value(&storage, poslab::app::STATE_KEY).expect("the state was saved");
    assert_eq!(restored, harness.state().state);
    assert_eq!(
        (restored.view, restored.shared.heads),
        (poslab::views::ViewKind::Alibi, 12)
    );
}

#[test]
fn patch_maps_follow_the_grid_and_the_query() {
    let mut harness = harness();
    harness.run();
    harness.get_by_label("2D patch maps").click();
    harness.run();
    harness
        .get_by_role_and_label(Role::Slider, "Grid columns")
        .set_value_accesskit(9.0);
    harness.run();
    let view = harness.state().patch_view();
    let query = view.query;
    let (qx, qy) = (query % 9, query / 9);
    let euclidean = view.shown_map(0).expect("the left map is shown");
    assert_eq!(euclidean.values.dim(), (14, 9));
    for ((y, x), &d) in euclidean.values.indexed_iter() {
        let expected = ((x as f64 - qx as f64).powi(2) + (y as f64 - qy as f64).powi(2)).sqrt();
        assert!(
            (d - expected).abs() < 1e-5,
            "patch ({x}, {y}): {d} vs {expected}"
        );
    }
    // The right map is head 0's 2D ALiBi: -m * distance with m = 2^-1 for 8 heads.
    let alibi = view.shown_map(1).expect("the right map is shown");
    for (&bias, &d) in alibi.values.iter().zip(euclidean.values.iter()) {
        assert!((bias + 0.5 * d).abs() < 1e-5, "{bias} vs {d}");
    }
}

#[test]
fn patch_maps_view_snapshot() {
    let mut harness = harness();
    harness.run();
    harness.get_by_label("2D patch maps").click();
    harness.run();
    common::pane_snapshot(&mut harness, "views/patch_maps");
}

#[test]
fn patch_maps_show_rope_and_mae_similarities() {
    use poslab::encoding::similarity2d::{self, PatchEncoding, PatchSimilarityParams};
    let mut harness = harness();
    harness.run();
    harness.get_by_label("2D patch maps").click();
    harness.run();
    for (item, encoding) in [
        (
            "MAE sin-cos similarity",
            PatchEncoding::SinCos {
                dim: 128,
                base: 10_000.0,
            },
        ),
        (
            "axial RoPE similarity",
            PatchEncoding::AxialRope {
                dim: 128,
                theta: 100.0,
            },
        ),
    ] {
        harness.get_by_label("Lower map").click();
        harness.run();
        harness.get_by_label(item).click();
        harness.run();
        let view = harness.state().patch_view();
        let grid = view.grid;
        let expected = similarity2d::table(&PatchSimilarityParams { grid, encoding }).unwrap();
        let shown = view.shown_map(1).expect("the right map is shown");
        for (p, &value) in shown.values.iter().enumerate() {
            let want = expected[[view.query, p]];
            assert!(
                (value - want).abs() < 2e-6,
                "{item}, patch {p}: {value} vs {want}"
            );
        }
    }
}

#[test]
fn corkscrew_view_snapshot() {
    let mut harness = harness();
    harness.run();
    harness.get_by_label("RoPE corkscrew (3D)").click();
    harness.run();
    common::pane_snapshot(&mut harness, "views/corkscrew");
}

#[test]
fn a_locked_offset_keeps_the_score() {
    let mut harness = harness();
    harness.run();
    harness.get_by_label("RoPE corkscrew (3D)").click();
    harness.run();
    // A random query and key, so that the score is no special value.
    harness.get_by_label("Query q").click();
    harness.run();
    harness.get_by_label("random").click();
    harness.run();
    let view = harness.state().corkscrew_view();
    let (m, n) = (view.query_position, view.key_position);
    let score = view.shown_score().expect("a score is shown");
    harness.get_by_label("Lock the offset").click();
    harness.run();
    for target in [100.0, 511.0, 300.0, 9.0] {
        harness
            .get_by_role_and_label(Role::Slider, "Query position m")
            .set_value_accesskit(target);
        harness.run();
        let view = harness.state().corkscrew_view();
        assert_eq!(view.query_position, target as u64);
        assert_eq!(
            view.query_position as i64 - view.key_position as i64,
            m as i64 - n as i64
        );
        let moved = view.shown_score().unwrap();
        assert!(
            (moved - score).abs() <= 1e-6,
            "m = {target}: {moved} vs {score}"
        );
    }
    // Unlocked, moving the query alone changes the score.
    harness.get_by_label("Lock the offset").click();
    harness.run();
    harness
        .get_by_role_and_label(Role::Slider, "Query position m")
        .set_value_accesskit(200.0);
    harness.run();
    let view = harness.state().corkscrew_view();
    assert_eq!(view.key_position, 1);
    assert!((view.shown_score().unwrap() - score).abs() > 1e-3);
}

#[test]
fn the_corkscrew_draws_the_chosen_pairs() {
    let mut harness = harness();
    harness.run();
    harness.get_by_label("RoPE corkscrew (3D)").click();
    harness.run();
    let pairs: Vec<usize> = harness
        .state()
        .corkscrew_view()
        .scene()
        .expect("a scene is drawn")
        .helices
        .iter()
        .map(|helix| helix.pair)
        .collect();
    assert_eq!(pairs, vec![0, 8, 16, 24, 32, 40, 48, 56]);
    harness.get_by_label("split").click();
    harness.run();
    assert_eq!(
        harness.state().corkscrew_view().layout,
        poslab::encoding::PairLayout::Half
    );
}

#[test]
fn mixed_rope_frequencies_load_from_a_file() {
    use ndarray_npy::WriteNpyExt;
    use poslab::encoding::similarity2d::{self, PatchEncoding, PatchSimilarityParams};
    let folder = tempfile::tempdir().unwrap();
    // rope-vit's [2, heads, n] parameter: 3 heads of 4 frequency pairs.
    let freqs = ndarray::Array3::from_shape_fn((2, 3, 4), |(axis, head, k)| {
        (0.3 + head as f64) * (k as f64 + 1.0) * if axis == 0 { 0.7 } else { -0.4 }
    });
    let good = folder.path().join("freqs.npy");
    freqs
        .write_npy(std::fs::File::create(&good).unwrap())
        .unwrap();
    let bad = folder.path().join("bad.npy");
    ndarray::Array2::<f64>::zeros((3, 4))
        .write_npy(std::fs::File::create(&bad).unwrap())
        .unwrap();

    let mut harness = harness();
    harness.run();
    harness.get_by_label("2D patch maps").click();
    harness.run();
    harness.get_by_label("Lower map").click();
    harness.run();
    harness.get_by_label("mixed RoPE similarity").click();
    harness.run();
    let load = |harness: &mut Harness<'_, PoslabApp>, path: &std::path::Path| {
        replace_the_text(harness, &path.display().to_string());
        harness.get_by_label("Load").click();
        harness.run();
    };
    load(&mut harness, &bad);
    assert!(
        harness
            .query_by_label_contains("mixed RoPE frequencies are [2, n]")
            .is_some(),
        "a bad file is explained"
    );
    assert!(harness.state().patch_view().loaded.is_none());

    load(&mut harness, &good);
    harness
        .get_by_role_and_label(Role::Slider, "file head")
        .set_value_accesskit(2.0);
    harness.run();
    let view = harness.state().patch_view();
    assert!(view.use_loaded);
    let head = freqs.index_axis(ndarray::Axis(1), 2).to_owned();
    let expected = similarity2d::table(&PatchSimilarityParams {
        grid: view.grid,
        encoding: PatchEncoding::MixedRope { freqs: head },
    })
    .unwrap();
    let shown = view.shown_map(1).expect("the right map is shown");
    for (p, &value) in shown.values.iter().enumerate() {
        let want = expected[[view.query, p]];
        assert!((value - want).abs() < 2e-6, "patch {p}: {value} vs {want}");
    }
}

/// For every view, after changing its controls: the command line the export window prints
/// makes the same figure, byte for byte, as the app's export.
#[test]
fn the_command_line_figure_equals_the_apps_export() {
    use poslab::export::figure::FigureStyle;
    let folder = tempfile::tempdir().unwrap();
    let mut harness = harness();
    harness.run();
    harness
        .get_by_role_and_label(Role::Slider, "Dimension")
        .set_value_accesskit(48.0);
    harness.run();
    let views = [
        "Sinusoidal table",
        "Dot-product decay",
        "ALiBi",
        "RoPE corkscrew (3D)",
        "2D patch maps",
        "Context extension",
        // The context view's other half: a tab within it.
        "Vision transformers: larger images",
    ];
    for (index, view) in views.into_iter().enumerate() {
        harness.get_by_label(view).click();
        harness.run();
        if view == "Vision transformers: larger images" {
            harness
                .get_by_role_and_label(Role::Slider, "run at")
                .set_value_accesskit(18.0);
            harness.get_by_label("bilinear").click();
            harness.run();
        }
        if view == "Context extension" {
            harness
                .get_by_role_and_label(Role::Slider, "Target length L'")
                .set_value_accesskit(20_000.0);
            harness.run();
            harness.get_by_label("Dynamic NTK").click();
            harness.get_by_label("ALiBi at L'").click();
            harness.run();
            // A YaRN parameter edited (what the parameter grid's boxes set).
            harness.state_mut().context_view().methods[4]
                .overrides
                .beta_fast = Some(16.0);
            harness.run();
        }
        if view == "2D patch maps" {
            harness.get_by_label("Lower map").click();
            harness.run();
            harness.get_by_label("mixed RoPE similarity").click();
            harness.run();
        }
        if view == "RoPE corkscrew (3D)" {
            harness.get_by_label("split").click();
            harness.run();
        }
        let export = harness.state().view_export().expect("the view exports");
        let style = FigureStyle {
            width: 500,
            height: 400,
            colormap: poslab::colormap::Colormap::Magma,
            title: Some(format!("view {index}")),
            // Not the default, so that the command line must carry it.
            reduce: poslab::engine::reduce::Reduce::Max,
        };
        common::assert_command_line_figure_equals_export(&export, &style, folder.path(), view);
    }
}

#[test]
fn the_export_window_saves_the_figure_and_the_data() {
    let folder = tempfile::tempdir().unwrap();
    let mut harness = harness();
    harness.run();
    harness.get_by_label("Export…").click();
    harness.run();
    let save = |harness: &mut Harness<'_, PoslabApp>, format: &str, path: &std::path::Path| {
        harness.get_by_label(format).click();
        harness.run();
        harness
            .get_by_role_and_label(Role::TextInput, "or file:")
            .click();
        harness.run();
        harness.key_press_modifiers(poslab::egui::Modifiers::COMMAND, poslab::egui::Key::A);
        harness
            .get_by_role_and_label(Role::TextInput, "or file:")
            .type_text(&path.display().to_string());
        harness.run();
        harness.get_by_label("Save").click();
        for _ in 0..200 {
            harness.step();
            if !harness.state().export_window().busy() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        harness.run();
        harness.state().export_window().message.clone()
    };
    let svg = folder.path().join("figure");
    let message = save(&mut harness, "Figure, SVG (vector)", &svg);
    assert!(
        matches!(&message, Some(Ok(text)) if text.starts_with("Saved")),
        "{message:?}"
    );
    assert!(
        folder.path().join("figure.svg").is_file(),
        "the extension is added"
    );

    let npy = folder.path().join("table.npy");
    let message = save(&mut harness, "Data, .npy", &npy);
    assert!(matches!(message, Some(Ok(_))), "{message:?}");
    let bytes = std::fs::read(&npy).unwrap();
    let table = poslab::import::parse_npy_f64(&bytes).unwrap();
    assert_eq!(table.shape(), &[512, 128]);
    // The dialog's command writes the same file.
    let command = harness
        .get_by_role_and_label(Role::MultilineTextInput, "The same table from a terminal:")
        .value()
        .expect("the command");
    let words: Vec<String> = command.split_whitespace().map(str::to_owned).collect();
    assert_eq!(words[..3], ["poslab", "table", "sinusoidal"], "{command}");
    assert_eq!(words.last(), Some(&npy.display().to_string()), "{command}");
    let again = folder.path().join("again.npy");
    let mut words = words;
    *words.last_mut().unwrap() = again.display().to_string();
    assert_eq!(poslab::cli::run(words), 0, "{command}");
    assert_eq!(std::fs::read(&again).unwrap(), bytes, "{command}");

    // A folder that does not exist: a message, and no file.
    let missing = folder.path().join("nowhere").join("x.csv");
    let message = save(&mut harness, "Data, .csv", &missing);
    assert!(matches!(message, Some(Err(_))), "{message:?}");
    assert!(!missing.exists());
}

#[test]
fn the_check_view_identifies_and_compares_a_file() {
    // A relative path, the same on every machine, since the view (and its snapshot) shows it.
    let folder = std::path::Path::new("target/check_view_test");
    std::fs::create_dir_all(folder).unwrap();
    let path = folder.join("pe.npy");
    let status = poslab::cli::run([
        "poslab",
        "table",
        "sinusoidal",
        "--seq",
        "64",
        "--dim",
        "16",
        "--layout",
        "split",
        "-o",
        path.to_str().unwrap(),
    ]);
    assert_eq!(status, 0);
    let mut harness = harness();
    harness.run();
    harness.get_by_label("Check a table").click();
    harness.run();
    harness
        .get_by_role_and_label(Role::TextInput, "or file:")
        .click();
    harness.run();
    harness
        .get_by_role_and_label(Role::TextInput, "or file:")
        .type_text(path.to_str().unwrap());
    harness.run();
    harness.get_by_label("Load").click();
    settle_check(&mut harness);
    let outcome = harness.state().check_view().outcome().expect("an outcome");
    assert!(outcome.matches, "{}", outcome.report);
    assert!(
        outcome.report.contains("split layout"),
        "{}",
        outcome.report
    );
    common::pane_snapshot(&mut harness, "views/check");

    // Against the side panel's sinusoidal table: its sizes are the file's (64 x 16, not the
    // panel's), said so; the side panel's interleaved layout is not the file's split one, and
    // the diagnosis says the columns are the reference's in another order.
    harness.get_by_label("Compare with").click();
    harness.run();
    harness.get_by_label("sinusoidal").click();
    settle_check(&mut harness);
    assert!(
        harness
            .query_by_label_contains("--seq 64 --dim 16 from the file's shape [64, 16]")
            .is_some()
    );
    let outcome = harness.state().check_view().outcome().unwrap();
    assert!(!outcome.matches);
    assert!(
        outcome.report.starts_with("shape [64, 16]")
            && outcome.report.contains("columns in another order"),
        "{}",
        outcome.report
    );

    // Any kind with its options, as poslab table takes them.
    harness.get_by_label("Compare with").click();
    harness.run();
    harness
        .get_by_label("a kind and options of poslab table…")
        .click();
    harness.run();
    let type_options = |harness: &mut Harness<'_, PoslabApp>, text: &str| {
        harness
            .get_by_role_and_label(Role::TextInput, "poslab table")
            .click();
        harness.run();
        harness.key_press_modifiers(poslab::egui::Modifiers::COMMAND, poslab::egui::Key::A);
        harness
            .get_by_role_and_label(Role::TextInput, "poslab table")
            .type_text(text);
        harness.run();
        // Nothing is read before Enter.
        harness.key_press(poslab::egui::Key::Enter);
        settle_check(harness);
    };
    type_options(&mut harness, "sinusoidal --seq 64 --dim 15");
    assert!(
        harness
            .query_by_label_contains("--dim 15 is not allowed")
            .is_some()
    );
    type_options(&mut harness, "sinusoidal --seq 64 --dim 16 --layout split");
    let outcome = harness.state().check_view().outcome().unwrap();
    assert!(outcome.matches, "{}", outcome.report);
    type_options(&mut harness, "sinusoidal --seq 64 --dim 16");
    let outcome = harness.state().check_view().outcome().unwrap();
    assert!(!outcome.matches, "{}", outcome.report);

    // Its figure: the export and the command line it prints give the same file.
    let export = harness
        .state()
        .view_export()
        .expect("the Check view exports its figure");
    assert!(export.data.is_none(), "the data is the user's own file");
    let style = poslab::export::figure::FigureStyle::default();
    let svg = common::assert_command_line_figure_equals_export(&export, &style, folder, "check");
    assert!(svg.contains("pe.npy: MISMATCH with sinusoidal --seq 64 --dim 16"));
}

/// Steps the app until the Check view's comparison, run off the UI thread, is shown.
fn settle_check(harness: &mut Harness<'_, PoslabApp>) {
    for step in 0..500 {
        harness.step();
        let view = harness.state().check_view();
        // Done when shown, or when nothing runs (a bad option starts nothing).
        if !view.busy() && (view.outcome().is_some() || step > 5) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    harness.run();
}

/// Replaces what the view's one text box holds with `text`, typed.
fn replace_the_text(harness: &mut Harness<'_, PoslabApp>, text: &str) {
    harness.get_by_role(Role::TextInput).click();
    harness.run();
    harness.key_press_modifiers(poslab::egui::Modifiers::COMMAND, poslab::egui::Key::A);
    harness.run();
    harness.get_by_role(Role::TextInput).type_text(text);
    harness.run();
}

#[test]
fn clicking_a_patch_makes_it_the_query() {
    let mut harness = harness();
    harness.run();
    harness.get_by_label("2D patch maps").click();
    harness.run();
    // Patch (3, 10) of the right map: column 3, row 10.
    let target = harness
        .state()
        .patch_view()
        .patch_on_screen(1, 3, 10)
        .expect("the map was drawn");
    click_at(&mut harness, target);
    let view = harness.state().patch_view();
    assert_eq!(view.query, 10 * 14 + 3);
    // The left map (Euclidean distance) now measures from there.
    let map = view.shown_map(0).unwrap();
    assert_eq!(map.values[[10, 3]], 0.0);
    assert!((map.values[[0, 0]] - (9.0f64 + 100.0).sqrt()).abs() < 1e-5);
}

#[test]
fn keyboard_habits_step_the_position_and_open_a_table() {
    use poslab::egui::{Key, Modifiers};
    let mut harness = harness();
    harness.run();
    harness.get_by_label("RoPE corkscrew (3D)").click();
    harness.run();
    let start = harness.state().corkscrew_view().query_position;
    harness.key_press(Key::ArrowRight);
    harness.run();
    harness.key_press(Key::ArrowRight);
    harness.run();
    harness.key_press(Key::ArrowLeft);
    harness.run();
    assert_eq!(harness.state().corkscrew_view().query_position, start + 1);
    // Ctrl+O opens a table to check (no desktop portal here: the dialog answers at once).
    harness.key_press_modifiers(Modifiers::COMMAND, Key::O);
    harness.run();
    assert_eq!(harness.state().state.view, poslab::views::ViewKind::Check);
}

#[test]
fn a_typed_dimension_is_applied_whole_when_editing_ends() {
    let mut harness = harness();
    harness.run();
    for (typed, expected) in [("32", 32), ("768", 768), ("512", 512), ("64", 64)] {
        let before = harness.state().state.shared.dim;
        type_number(&mut harness, "Dimension", typed, |h| {
            // No keystroke reaches the table before Enter.
            assert_eq!(h.state().state.shared.dim, before, "while typing {typed}");
        });
        assert_eq!(harness.state().state.shared.dim, expected, "typed {typed}");
        assert!(harness.query_by_label_contains("must be even").is_none());
    }
    assert_shown_table_is_exact(&harness, harness.state().state.shared.sinusoidal());
    // An odd dimension becomes the next even one, and the row says why.
    type_number(&mut harness, "Dimension", "33", |_| {});
    assert_eq!(harness.state().state.shared.dim, 34);
    assert!(
        harness
            .query_by_label_contains("Dimension must be even (pairs of sin and cos): using 34")
            .is_some()
    );
    // Out of range and not a number: said, and nothing else changes.
    type_number(&mut harness, "Base", "20000000", |_| {});
    assert_eq!(harness.state().state.shared.base, 1e7);
    assert!(
        harness
            .query_by_label_contains("20000000 is above the largest base, 10000000: using 10000000")
            .is_some()
    );
    type_number(&mut harness, "Sequence length", "12x", |_| {});
    assert_eq!(harness.state().state.shared.seq, 512);
    assert!(
        harness
            .query_by_label_contains(
                "\"12x\" is not a number: Sequence length takes 1 to 1048576; kept 512"
            )
            .is_some()
    );
    // The next good value clears the note.
    type_number(&mut harness, "Dimension", "30", |_| {});
    assert_eq!(harness.state().state.shared.dim, 30);
    assert!(harness.query_by_label_contains("must be even").is_none());
}

#[test]
fn a_half_typed_sequence_length_leaves_other_views_alone() {
    let mut harness = harness();
    harness.run();
    harness.get_by_label("ALiBi").click();
    harness.run();
    harness
        .get_by_role_and_label(Role::Slider, "Sequence length")
        .set_value_accesskit(8192.0);
    harness.run();
    harness
        .get_by_role_and_label(Role::Slider, "Query position")
        .set_value_accesskit(5000.0);
    harness.run();
    let shown_query = |h: &Harness<'_, PoslabApp>| {
        let state = h.state();
        state.alibi_view().shown_query(&state.state.shared)
    };
    assert_eq!(shown_query(&harness), 5000);
    type_number(&mut harness, "Sequence length", "2048", |h| {
        assert_eq!(h.state().state.shared.seq, 8192);
        assert_eq!(shown_query(h), 5000);
    });
    assert_eq!(harness.state().state.shared.seq, 2048);
    assert_eq!(shown_query(&harness), 2047);
    // The view kept the query asked for: a longer sequence brings it back.
    type_number(&mut harness, "Sequence length", "8192", |_| {});
    assert_eq!(shown_query(&harness), 5000);
}

#[test]
fn a_preset_sets_every_parameter_and_says_when_modified() {
    let mut harness = harness();
    harness.run();
    let choose = |harness: &mut Harness<'_, PoslabApp>, name: &str| {
        harness.get_by_label("Preset").click();
        harness.run();
        harness.get_by_label(name).click();
        harness.run();
    };
    choose(
        &mut harness,
        "Llama-3.1-8B (RoPE, head dim 128, base 500000, llama3 x8)",
    );
    choose(
        &mut harness,
        "vit-base-patch16-224 (learned, 14 x 14 patches, d 768)",
    );
    let shared = harness.state().state.shared;
    assert_eq!(
        (
            shared.dim,
            shared.base,
            shared.heads,
            shared.seq,
            shared.start
        ),
        (768, 10_000.0, 12, 196, 0)
    );
    assert_eq!(
        (shared.layout, shared.spacing),
        (
            poslab::encoding::PairLayout::Interleaved,
            poslab::encoding::sinusoidal::Spacing::Vaswani
        )
    );
    let menu = |harness: &Harness<'_, PoslabApp>| harness.get_by_label("Preset").value();
    // The closed menu names the model; its tooltip says what the preset sets.
    assert_eq!(menu(&harness).as_deref(), Some("vit-base-patch16-224"));
    harness.get_by_label("split").click();
    harness.run();
    // Cut to fit: the panel keeps its width.
    assert_eq!(menu(&harness).as_deref(), Some("vit-base-pat… (modified)"));
    // Choosing it again restores every parameter.
    choose(
        &mut harness,
        "vit-base-patch16-224 (learned, 14 x 14 patches, d 768)",
    );
    assert_eq!(
        harness.state().state.shared.layout,
        poslab::encoding::PairLayout::Interleaved
    );
}

#[test]
fn a_million_positions_are_drawn_as_the_mean_of_the_rows_each_pixel_holds() {
    let mut harness = harness();
    harness.run();
    type_number(&mut harness, "Sequence length", "1048576", |_| {});
    harness.run();
    let shared = harness.state().state.shared;
    assert_eq!(shared.seq, 1_048_576);
    let shown = harness.state().shown_sinusoidal().unwrap();
    let rows_per_pixel = shown.rows.step;
    assert!(rows_per_pixel > 1000, "{rows_per_pixel} rows a pixel");
    // The status bar says how many rows one pixel holds, and how they are reduced.
    let said = format!(
        "1 pixel = mean of {} rows × 1 column",
        poslab::numbers::thousands(rows_per_pixel as u64)
    );
    assert!(
        harness.query_by_label_contains(&said).is_some(),
        "the status bar says {said:?}"
    );
    assert_shown_pixels_are_cell_means(&harness, shared.sinusoidal(), Some(12));
    // Fast columns average out to about 0 over a thousand rows; point sampling drew them as
    // stripes of anything between -1 and 1.
    let fastest = shown.values.column(0);
    assert!(
        fastest.iter().all(|v| v.abs() < 0.01),
        "column 0: {fastest:?}"
    );
    // The envelope: min and max of the same pixels. Stepped with pauses until the new
    // reduction is shown: `run` counts frames, and a release build spins through its 2000
    // while the worker still reduces a million rows (each frame asks for a repaint while a
    // job is pending).
    harness.get_by_label("max").click();
    let said = format!(
        "1 pixel = max of {} rows",
        poslab::numbers::thousands(rows_per_pixel as u64)
    );
    step_until(&mut harness, |h| h.query_by_label_contains(&said).is_some());
    assert!(harness.query_by_label_contains(&said).is_some(), "{said:?}");
    let shown = harness.state().shown_sinusoidal().unwrap();
    assert!(shown.values.column(0).iter().all(|&v| v > 0.999));
    // The colour bar spans every cell the picture covers, not only the pixels' maxima: from
    // the table's least value to cos 0 = 1 (tests/classroom.rs checks it cell by cell).
    let (low, high) = harness.state().shown_sinusoidal_range();
    let min = shown.values.iter().copied().fold(f64::INFINITY, f64::min);
    assert!(low < min && low >= -1.0, "{low} under the pixels' {min}");
    assert_eq!(high, 1.0);
}

#[test]
fn the_status_and_the_heatmap_follow_a_typed_dimension_at_once() {
    let mut harness = harness();
    harness.run();
    // Open the column plot under the heatmap, then widen the table.
    harness.state_mut().select_sinusoidal_column(Some(3));
    harness.run();
    type_number(&mut harness, "Dimension", "512", |_| {});
    let shown = harness.state().shown_sinusoidal().unwrap();
    // Every column of the new table is on screen, none of the old one's only.
    assert_eq!((shown.cols.start, shown.cols.end), (0, 512));
    let said = format!(
        "(computed {} × {} on screen)",
        shown.rows.len(),
        shown.cols.len()
    );
    assert!(
        harness.query_by_label(&said).is_some(),
        "the status bar names the window shown: {said}"
    );
    assert!(harness.query_by_label_contains("table 512 × 512").is_some());
}

#[test]
fn a_patch_grid_change_keeps_the_querys_column_and_row() {
    let mut harness = harness();
    harness.run();
    harness.get_by_label("2D patch maps").click();
    harness.run();
    // The default query is patch 7 * 14 + 7: column 7, row 7.
    assert_eq!(harness.state().patch_view().query, 7 * 14 + 7);
    harness
        .get_by_role_and_label(Role::Slider, "Grid columns")
        .set_value_accesskit(20.0);
    harness.run();
    assert_eq!(harness.state().patch_view().query, 7 * 20 + 7);
    // A grid too small for it: clamped to the last column and row.
    harness
        .get_by_role_and_label(Role::Slider, "Grid columns")
        .set_value_accesskit(4.0);
    harness.run();
    harness
        .get_by_role_and_label(Role::Slider, "Grid rows")
        .set_value_accesskit(5.0);
    harness.run();
    assert_eq!(harness.state().patch_view().query, 4 * 4 + 3);
}

#[test]
fn pinned_curves_follow_the_normalisation() {
    let mut harness = harness();
    harness.run();
    harness.get_by_label("Dot-product decay").click();
    harness.run();
    harness.get_by_label("Pin curve").click();
    harness.run();
    let raw = harness.state().shown_pins()[0].1.clone();
    // PE[a]·PE[a] = d/2 = 64 at offset 0.
    assert!((raw[0][1] - 64.0).abs() < 1e-4, "{:?}", raw[0]);
    harness.get_by_label("Normalised").click();
    harness.run();
    let normalised = harness.state().shown_pins()[0].1.clone();
    for (a, b) in raw.iter().zip(&normalised) {
        assert!((a[1] / 64.0 - b[1]).abs() < 1e-9);
    }
    // Pinned while normalised, drawn raw again when the toggle goes off.
    harness.get_by_label("Pin curve").click();
    harness.run();
    harness.get_by_label("Normalised").click();
    harness.run();
    let pins = harness.state().shown_pins();
    assert!((pins[1].1[0][1] - 64.0).abs() < 1e-4);
}

#[test]
fn the_corkscrew_draws_far_enough_for_its_markers_and_shares_the_layout() {
    let mut harness = harness();
    harness.run();
    harness.get_by_label("RoPE corkscrew (3D)").click();
    harness.run();
    harness
        .get_by_role_and_label(Role::Slider, "Positions drawn")
        .set_value_accesskit(16.0);
    harness.run();
    assert_eq!(
        harness
            .state()
            .corkscrew_view()
            .scene()
            .unwrap()
            .position_count,
        16
    );
    harness
        .get_by_role_and_label(Role::Slider, "Query position m")
        .set_value_accesskit(300.0);
    harness.run();
    let scene = harness.state().corkscrew_view().scene().unwrap();
    assert!(
        scene.position_count >= 301,
        "drawn: {}",
        scene.position_count
    );
    // The corkscrew's pairing and the side panel's layout are one setting.
    harness.get_by_label("split").click();
    harness.run();
    assert_eq!(
        harness.state().state.shared.layout,
        poslab::encoding::PairLayout::Half
    );
    assert_eq!(
        harness.state().corkscrew_view().layout,
        poslab::encoding::PairLayout::Half
    );
    harness.get_by_label("interleaved").click();
    harness.run();
    assert_eq!(
        harness.state().state.shared.layout,
        poslab::encoding::PairLayout::Interleaved
    );
    // A random key: its own helices join the scene, and the frame still renders.
    harness.get_by_label("Key k").click();
    harness.run();
    harness.get_by_label("random").click();
    harness.run();
    let scene = harness.state().corkscrew_view().scene().unwrap();
    assert_eq!(scene.key_helices.len(), scene.helices.len());
    harness
        .render()
        .expect("the corkscrew renders with the key's helices");
}

/// Every plot of the last frame inside a 1280 x 800 window with room to read it, and the
/// heatmaps of square matrices with square cells.
fn assert_plots_fit(harness: &Harness<'_, PoslabApp>, what: &str, square: &[&str]) {
    let window = poslab::egui::Rect::from_min_size(
        poslab::egui::Pos2::ZERO,
        poslab::egui::vec2(1280.0, 800.0),
    );
    let placements = poslab::widgets::layout::plot_placements(&harness.ctx);
    assert!(!placements.is_empty(), "{what}: no plot drawn");
    for (name, frame, per_unit) in &placements {
        assert!(
            window.expand(1.0).contains_rect(*frame),
            "{what}: {name} at {frame:?} runs off the window"
        );
        assert!(
            frame.width() >= 120.0 && frame.height() >= 120.0,
            "{what}: {name} is squeezed to {:?}",
            frame.size()
        );
        if square.contains(&name.as_str()) {
            let (x, y) = (per_unit[0].abs(), per_unit[1].abs());
            assert!(
                (x - y).abs() <= 0.01 * x.max(y),
                "{what}: {name} has cells {x} x {y} points"
            );
        }
    }
}

#[test]
fn every_plot_keeps_a_usable_size_at_1280_by_800() {
    let big = || {
        Harness::builder()
            // A heatmap's colour range arrives from the device some frames after its texture.
            .with_max_steps(2000)
            .with_size([1280.0, 800.0])
            .wgpu_setup(wgpu_setup())
            .build_eframe(|cc| PoslabApp::new(cc).hide_machine_details())
    };
    let mut harness = big();
    harness.run();
    harness.get_by_label("Dot-product decay").click();
    harness.run();
    harness.get_by_label("RoPE long-term decay").click();
    harness.run();
    assert_plots_fit(
        &harness,
        "dot-product decay with the bound",
        &["similarity"],
    );
    let names: Vec<String> = poslab::widgets::layout::plot_placements(&harness.ctx)
        .into_iter()
        .map(|p| p.0)
        .collect();
    assert!(
        names.contains(&"rope_long_term_decay".to_owned()),
        "{names:?}"
    );

    let mut harness = big();
    harness.run();
    harness.get_by_label("ALiBi").click();
    harness.run();
    for (label, value) in [("Heads", 12.0), ("Sequence length", 8192.0)] {
        harness
            .get_by_role_and_label(Role::Slider, label)
            .set_value_accesskit(value);
        harness.run();
    }
    assert_plots_fit(&harness, "ALiBi, 12 heads, 8192 positions", &["alibi_bias"]);

    let mut harness = big();
    harness.run();
    harness.get_by_label("2D patch maps").click();
    harness.run();
    assert_plots_fit(
        &harness,
        "patch maps",
        &["patch_map_0", "patch_map_1", "patch_matrix"],
    );

    let mut harness = big();
    harness.run();
    harness.state_mut().select_sinusoidal_column(Some(5));
    harness.run();
    assert_plots_fit(&harness, "sinusoidal table with a column", &[]);
}

/// Opens the export window and types `path` into its file box.
fn type_export_path(harness: &mut Harness<'_, PoslabApp>, path: &std::path::Path) {
    harness.get_by_label("Export…").click();
    harness.run();
    harness
        .get_by_role_and_label(Role::TextInput, "or file:")
        .click();
    harness.run();
    harness
        .get_by_role_and_label(Role::TextInput, "or file:")
        .type_text(&path.display().to_string());
    harness.run();
}

#[test]
fn enter_saves_and_a_new_format_replaces_the_extension() {
    let folder = tempfile::tempdir().unwrap();
    let mut harness = harness();
    harness.run();
    let field = |h: &Harness<'_, PoslabApp>| h.state().export_window().path_text.clone();
    let svg = folder.path().join("pe.svg");
    type_export_path(&mut harness, &svg);
    // Switching to PNG makes pe.png of pe.svg, not pe.svg.png.
    harness.get_by_label("Figure, PNG").click();
    harness.run();
    let png = folder.path().join("pe.png");
    assert_eq!(field(&harness), png.display().to_string());
    harness
        .get_by_role_and_label(Role::TextInput, "or file:")
        .click();
    harness.run();
    harness.key_press(poslab::egui::Key::Enter);
    // A deadline, not a count of frames: a loaded machine (the other tests on every core)
    // takes seconds to draw and encode the PNG.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::time::Instant::now() < deadline {
        harness.step();
        if png.is_file() && !harness.state().export_window().busy() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(png.is_file(), "Enter saved {}", png.display());
    assert!(!folder.path().join("pe.svg.png").exists());
}

#[test]
fn play_moves_the_query_at_the_speed_its_control_shows() {
    let mut harness = harness();
    harness.run();
    harness.get_by_label("RoPE corkscrew (3D)").click();
    harness.run();
    harness.get_by_label("Play").click();
    // The frame that starts playing starts its clock.
    harness.step();
    let start = harness.state().corkscrew_view().query_position;
    // egui_kittest's clock: each step is a quarter of a second (slower than 10 frames a
    // second, as a software renderer draws), so 20 steps are 5 seconds at 8 positions/s.
    for _ in 0..20 {
        harness.step();
    }
    let moved = harness.state().corkscrew_view().query_position - start;
    assert!(
        (39..=41).contains(&moved),
        "moved {moved} positions in 5 s at 8/s"
    );
    harness.get_by_label("Pause").click();
    harness.run();
}

#[test]
fn a_wrong_pair_list_keeps_the_last_valid_pairs_and_says_why() {
    let mut harness = harness();
    harness.run();
    harness.get_by_label("RoPE corkscrew (3D)").click();
    harness.run();
    harness.get_by_label("list").click();
    harness.run();
    let before = harness
        .state()
        .corkscrew_view()
        .scene()
        .map(|scene| scene.helices.len())
        .expect("the list's helices");
    let field = harness.get_by_role(Role::TextInput);
    field.click();
    harness.run();
    harness.key_press_modifiers(poslab::egui::Modifiers::COMMAND, poslab::egui::Key::A);
    harness.get_by_role(Role::TextInput).type_text("0, 99, abc");
    harness.key_press(poslab::egui::Key::Enter);
    harness.run();
    assert!(
        harness
            .query_by_label_contains("still drawing the last valid pairs")
            .is_some(),
        "the error says the last pairs stay"
    );
    let after = harness
        .state()
        .corkscrew_view()
        .scene()
        .map(|s| s.helices.len());
    assert_eq!(after, Some(before), "the 3D view keeps its helices");
    assert!(
        harness
            .query_by_label_contains("needs eframe's wgpu device")
            .is_none()
    );
}

#[test]
fn the_export_path_follows_the_view() {
    let folder = tempfile::tempdir().unwrap();
    let mut harness = harness();
    harness.run();
    let field = |h: &Harness<'_, PoslabApp>| h.state().export_window().path_text.clone();
    let mine = folder.path().join("slide3.svg");
    type_export_path(&mut harness, &mine);
    // Typed for this view: kept while it is shown.
    harness.run();
    assert_eq!(field(&harness), mine.display().to_string());
    // Another view: the folder stays, the file is that view's, so Save cannot overwrite the
    // first view's figure.
    // Through AccessKit: the export window may lie over the picker.
    harness.get_by_label("ALiBi").click_accesskit();
    harness.run();
    let name = harness.state().view_export().unwrap().name;
    assert!(name.starts_with("alibi"), "{name}");
    assert_eq!(
        field(&harness),
        folder
            .path()
            .join(format!("{name}.svg"))
            .display()
            .to_string()
    );
}

/// Opens `view`, presses its open button, and checks that with no file dialog (no desktop
/// portal here: the dialog answers "nothing" within moments) the view says so and puts the
/// keyboard in its path box `field`; `noted` reads whether the view has its note.
fn open_without_a_dialog(view: &str, button: &str, field: &str, noted: fn(&mut PoslabApp) -> bool) {
    let mut harness = harness();
    harness.run();
    harness.get_by_label(view).click();
    harness.run();
    harness.get_by_label(button).click();
    for _ in 0..200 {
        harness.step();
        if noted(harness.state_mut()) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    harness.run();
    assert!(
        harness
            .query_by_label_contains("no file dialog on this desktop")
            .is_some()
    );
    assert!(
        harness
            .get_by_role_and_label(Role::TextInput, field)
            .is_focused()
    );
}

#[test]
fn the_learned_views_open_without_a_file_dialog_says_so_too() {
    open_without_a_dialog("Learned tables", "Open table…", "or path:", |app| {
        app.learned_view().dialog_note.is_some()
    });
}

#[test]
fn open_without_a_file_dialog_says_so_and_offers_the_path_box() {
    open_without_a_dialog("Check a table", "Open…", "or file:", |app| {
        app.check_view().dialog_note.is_some()
    });
}

#[test]
fn each_views_own_settings_survive_a_restart() {
    let mut harness = harness();
    harness.run();
    // Corkscrew: every 4th pair, m = 40.
    harness.get_by_label("RoPE corkscrew (3D)").click();
    harness.run();
    harness
        .get_by_role_and_label(Role::Slider, "Query position m")
        .set_value_accesskit(40.0);
    harness.run();
    // Patch maps: methods and a query patch.
    harness.get_by_label("2D patch maps").click();
    harness.run();
    harness
        .get_by_role_and_label(Role::Slider, "Grid columns")
        .set_value_accesskit(10.0);
    harness.run();
    // Dot-product decay: a pin and the normalisation.
    harness.get_by_label("Dot-product decay").click();
    harness.run();
    harness.get_by_label("Pin curve").click();
    harness.run();
    harness.get_by_label("Normalised").click();
    harness.run();
    // ALiBi: symmetric, query 100.
    harness.get_by_label("ALiBi").click();
    harness.run();
    harness.get_by_label("Causal").click();
    harness
        .get_by_role_and_label(Role::Slider, "Query position")
        .set_value_accesskit(100.0);
    harness.run();

    let mut storage = MemoryStorage::default();
    eframe::App::save(harness.state_mut(), &mut storage);
    let mut restarted = self::harness();
    restarted.state_mut().restore(&storage);
    restarted.run();
    let (before, after) = (harness.state(), restarted.state());
    assert_eq!(after.corkscrew_view().query_position, 40);
    assert_eq!(
        (after.patch_view().grid, after.patch_view().query),
        (before.patch_view().grid, before.patch_view().query)
    );
    assert_eq!(after.patch_view().grid.grid_w, 10);
    assert_eq!(after.shown_pins(), before.shown_pins());
    assert_eq!(after.shown_pins().len(), 1);
    assert!(!after.alibi_view().causal);
    assert_eq!(after.alibi_view().query, 100);
}

/// Steps the app with pauses until `done` holds (at most 30 s), then lets it settle: `run`
/// counts frames, and a release build spins through its 2000 while a worker still reduces a
/// million rows (each frame asks for a repaint while a job is pending), the more so when the
/// other tests load the machine.
fn step_until(
    harness: &mut Harness<'static, PoslabApp>,
    done: impl Fn(&Harness<'static, PoslabApp>) -> bool,
) {
    for _ in 0..3000 {
        harness.step();
        if done(harness) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    harness.run();
}

#[test]
fn a_column_of_a_million_rows_is_drawn_as_means_with_its_envelope() {
    let mut harness = harness();
    harness.run();
    type_number(&mut harness, "Sequence length", "1048576", |_| {});
    harness.state_mut().select_sinusoidal_column(Some(0));
    step_until(&mut harness, |h| h.state().shown_column_curve().is_some());
    let (mean, envelope) = harness.state().shown_column_curve().expect("a curve");
    assert!(mean.len() <= 4096);
    // Column 0 turns once every 2π positions: over 256 rows it averages to about 0, and its
    // rows reach about -1 and 1. One row per point drew a false slow wave here.
    assert!(mean.iter().all(|p| p[1].abs() < 0.01), "{:?}", &mean[..4]);
    let (low, high) = envelope.expect("an envelope");
    assert!(low.iter().all(|p| p[1] < -0.99) && high.iter().all(|p| p[1] > 0.99));
    assert!(
        harness
            .query_by_label_contains("Each point is the mean of 256 rows")
            .is_some()
    );
    // A short table draws every row.
    type_number(&mut harness, "Sequence length", "300", |_| {});
    harness.run();
    let (mean, envelope) = harness.state().shown_column_curve().unwrap();
    assert_eq!(mean.len(), 300);
    assert!(envelope.is_none());
    for p in mean {
        assert!((p[1] - p[0].sin()).abs() < 1e-6);
    }
}

#[test]
fn a_long_dot_product_curve_is_the_mean_over_each_points_offsets() {
    let mut harness = harness();
    harness.run();
    harness.get_by_label("Dot-product decay").click();
    harness.run();
    type_number(&mut harness, "Sequence length", "100000", |_| {});
    harness.run();
    let curve = harness.state().shown_dot_decay().unwrap().to_vec();
    // About a point per pixel of the plot (a power of two, at least 256): 100000 offsets make
    // `per_point` offsets a point, the last point fewer.
    let per_point = (curve[1][0] - curve[0][0]) as usize;
    assert!(per_point > 1 && 100_000 / per_point >= 256, "{per_point}");
    assert_eq!(curve.len(), 100_000usize.div_ceil(per_point));
    assert!(
        harness
            .query_by_label_contains(&format!(
                "{} offsets a point (light: min, max)",
                poslab::numbers::thousands(per_point as u64)
            ))
            .is_some()
    );
    let envelope = harness
        .state()
        .dot_decay_view()
        .shown_envelope()
        .expect("the min and max of each point's offsets")
        .to_vec();
    assert_eq!(envelope.len(), curve.len());
    let freqs: Vec<f64> = (0..64)
        .map(|i| 10_000f64.powf(-((2 * i) as f64) / 128.0))
        .collect();
    for k in [0, 1, 7, curve.len() / 2, curve.len() - 1] {
        let first = per_point * k;
        let last = (first + per_point).min(100_000);
        // Σ_i cos(j w_i) summed over the point's offsets j, then averaged, written out.
        let mean = (first..last)
            .map(|j| freqs.iter().map(|w| (j as f64 * w).cos()).sum::<f64>())
            .sum::<f64>()
            / (last - first) as f64;
        let centre = (first + last - 1) as f64 / 2.0;
        assert_eq!(curve[k][0], centre);
        assert!(
            (curve[k][1] - mean).abs() < 1e-9,
            "point {k}: {} vs {mean}",
            curve[k][1]
        );
        // The envelope: the least and largest of the same sums, written out.
        let (low, high) = (first..last)
            .map(|j| freqs.iter().map(|w| (j as f64 * w).cos()).sum::<f64>())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            });
        assert!((envelope[k][0] - low).abs() < 1e-8, "point {k}: min");
        assert!((envelope[k][1] - high).abs() < 1e-8, "point {k}: max");
    }
    // The peak at k = 0 keeps its height, d/2 = 64, which the first point's mean does not.
    assert!((envelope[0][1] - 64.0).abs() < 1e-9);
    assert!(curve[0][1] < 60.0);
}

#[test]
fn the_check_view_shows_where_a_file_differs() {
    let folder = std::path::Path::new("target/check_view_where_test");
    std::fs::create_dir_all(folder).unwrap();
    let path = folder.join("three.npy");
    // Vaswani's table written out here, three elements changed.
    let (seq, dim) = (512, 128);
    let mut table = ndarray::Array2::from_shape_fn((seq, dim), |(p, c)| {
        let w = 1.0 / 10_000f64.powf(2.0 * (c / 2) as f64 / dim as f64);
        if c % 2 == 0 {
            (p as f64 * w).sin()
        } else {
            (p as f64 * w).cos()
        }
    });
    table[[40, 5]] += 0.1;
    table[[300, 64]] -= 0.05;
    table[[470, 120]] += 0.02;
    common::write_npy_f32(&path, &table);
    let launch = poslab::cli::app::AppLaunch {
        check: Some(path.clone()),
        ..Default::default()
    };
    let mut harness = common::app_harness_with(|app| app.launched(&launch));
    settle_check(&mut harness);
    harness.get_by_label("Compare with").click();
    harness.run();
    harness.get_by_label("sinusoidal").click();
    settle_check(&mut harness);
    let outcome = harness.state().check_view().outcome().expect("an outcome");
    assert!(!outcome.matches);
    let located = outcome.located.clone().expect("located");
    assert_eq!(located.count, 3);
    assert!(
        harness
            .query_by_label_contains("3 elements outside the tolerance, in 3 of 512 rows")
            .is_some()
    );
    assert!(
        harness
            .query_by_label_contains("Diagnosis: 3 scattered")
            .is_some()
    );
    // Four pictures: the map of elements outside joins the three.
    harness.run();
    assert!(harness.query_by_label("outside the tolerance").is_some());
    // A click on an element of the list outlines it in every picture.
    harness.get_by_label_contains("[300, 64]").click();
    harness.run();
    assert_eq!(
        harness.state().check_view().focused_cell(),
        Some(&vec![300, 64])
    );
    // The pictures zoomed to it: a few dozen rows tall, not the table's 512.
    let rows_shown = |harness: &egui_kittest::Harness<'_, poslab::app::PoslabApp>| {
        let placements = poslab::widgets::layout::plot_placements(&harness.ctx);
        let pictures: Vec<f64> = placements
            .iter()
            .filter(|(name, _, _)| name.starts_with("check_") && !name.contains("error_by"))
            .map(|(_, frame, scale)| f64::from(frame.height()) / scale[1].abs())
            .collect();
        assert!(!pictures.is_empty(), "no picture in {placements:?}");
        pictures
    };
    assert!(rows_shown(&harness).iter().all(|&rows| rows < 200.0));
    // Another file starts whole, not at the zoom the last one had.
    let other = folder.join("three_again.npy");
    std::fs::copy(&path, &other).unwrap();
    harness.state_mut().check_view_mut().load(&other, None);
    harness.run();
    harness.run();
    let rows = rows_shown(&harness);
    assert!(rows.iter().all(|&rows| rows >= 512.0), "{rows:?}");
}

#[test]
fn the_check_view_holds_a_file_to_its_float_type_as_the_command_line_does() {
    let folder = std::path::Path::new("target/check_view_test");
    std::fs::create_dir_all(folder).unwrap();
    let path = folder.join("torch_pe.npy");
    // PyTorch's float32 table at position 10^6: far from the exact one, as torch computes it.
    let status = poslab::cli::run([
        "poslab",
        "table",
        "sinusoidal",
        "--seq",
        "32",
        "--dim",
        "64",
        "--start",
        "1000000",
        "--arith",
        "torch-f32",
        "-o",
        path.to_str().unwrap(),
    ]);
    assert_eq!(status, 0);
    let mut harness = harness();
    harness.run();
    harness.get_by_label("Check a table").click();
    harness.run();
    harness
        .get_by_role_and_label(Role::TextInput, "or file:")
        .click();
    harness.run();
    harness
        .get_by_role_and_label(Role::TextInput, "or file:")
        .type_text(path.to_str().unwrap());
    harness.run();
    harness.get_by_label("Load").click();
    settle_check(&mut harness);
    harness.get_by_label("Compare with").click();
    harness.run();
    harness
        .get_by_label("a kind and options of poslab table…")
        .click();
    harness.run();
    harness
        .get_by_role_and_label(Role::TextInput, "poslab table")
        .click();
    harness.run();
    harness
        .get_by_role_and_label(Role::TextInput, "poslab table")
        .type_text("sinusoidal --seq 32 --dim 64 --start 1000000");
    harness.run();
    harness.key_press(poslab::egui::Key::Enter);
    settle_check(&mut harness);
    // As poslab check without --atol/--rtol: the float32 rule, then PyTorch's own computation.
    let outcome = harness.state().check_view().outcome().unwrap();
    assert!(outcome.matches, "{}", outcome.report);
    assert!(
        outcome.report.contains("the default for a float32 file")
            && outcome
                .report
                .contains("MATCH as PyTorch computes it in float32"),
        "{}",
        outcome.report
    );
    // A tolerance of one's own replaces both, as --atol/--rtol do.
    harness.get_by_label("tolerance by file type").click();
    settle_check(&mut harness);
    let outcome = harness.state().check_view().outcome().unwrap();
    assert!(!outcome.matches, "{}", outcome.report);
    assert!(
        outcome.report.contains("tolerance 1e-5 absolute"),
        "{}",
        outcome.report
    );
}

#[test]
fn the_context_view_follows_the_model_the_target_and_the_methods() {
    use poslab::encoding::rope_scaling::ScalingKind;
    let mut harness = harness();
    harness.run();
    harness.get_by_label("Context extension").click();
    harness.run();
    harness.get_by_label("Model").click();
    harness.run();
    harness.get_by_label("Llama-3.1-8B").click();
    harness.run();
    harness
        .get_by_role_and_label(Role::Slider, "Target length L'")
        .set_value_accesskit(65_536.0);
    harness.run();
    // Choosing Llama 3.1 ticks its own method, Llama 3 (the sixth).
    assert!(harness.state_mut().context_view().methods[5].shown);
    let view = harness.state_mut().context_view();
    let model = view.model();
    assert_eq!(model.name, "meta-llama/Llama-3.1-8B");
    assert_eq!((model.trained, model.base), (8192, 500_000.0));
    assert_eq!(view.shown_target(), 65_536);
    let shown: Vec<bool> = view.methods.iter().map(|m| m.shown).collect();
    // The defaults (extrapolation, PI, NTK, YaRN) and Llama 3, the model's own.
    assert_eq!(shown, [true, true, true, false, true, true, false]);
    let unseen = view.unseen_spec().unwrap();
    let curves: Vec<_> = view
        .curves()
        .iter()
        .map(|c| (c.kind, c.freqs.clone(), c.reach.clone()))
        .collect();
    for (kind, freqs, reach) in curves {
        let Ok(freqs) = freqs else {
            assert_eq!(kind, ScalingKind::Longrope);
            continue;
        };
        // The wavelengths drawn are 2π over the engine's inverse frequencies at L'.
        let spec = TableSpec::RopeInvFreq {
            dim: model.head_dim,
            base: model.base,
            seq: 65_536,
            freqs,
        };
        let Table::Real(theta) = cpu::compute(&spec).unwrap() else {
            panic!("real")
        };
        assert_eq!(theta.len(), reach.len());
        for (t, r) in theta.iter().zip(&reach) {
            let expected = std::f64::consts::TAU / t;
            assert!(
                (r.wavelength - expected).abs() <= 1e-12 * expected,
                "{kind:?}"
            );
        }
    }
    // The lower charts are tabs.
    harness.get_by_label("ALiBi at L'").click();
    harness.run();
    assert_eq!(
        harness.state_mut().context_view().lower,
        poslab::export::figure::context::ContextChart::Alibi
    );
    // The map is Llama 3.1's trained frequencies against extrapolation at L'.
    let TableSpec::RopeUnseen(params) = unseen else {
        panic!("the map is an unseen-angle table")
    };
    assert_eq!(params.seq, 65_536);
    assert_eq!(params.freqs.scaling.kind, ScalingKind::None);
    assert_eq!(params.model, model);
}

#[test]
fn context_view_snapshot() {
    let mut harness = harness();
    harness.run();
    harness.get_by_label("Context extension").click();
    harness.run();
    common::pane_snapshot(&mut harness, "views/context");
}

#[test]
fn a_typed_config_path_sets_the_context_model_and_a_bad_one_says_why() {
    let folder = tempfile::tempdir().unwrap();
    let bad = folder.path().join("bert.json");
    std::fs::write(
        &bad,
        r#"{"model_type": "bert", "hidden_size": 768, "num_attention_heads": 12, "max_position_embeddings": 512}"#,
    )
    .unwrap();
    let good = folder.path().join("config.json");
    std::fs::write(
        &good,
        r#"{"_name_or_path": "my/tiny-rope", "model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "max_position_embeddings": 1024, "rope_theta": 50000.0}"#,
    )
    .unwrap();
    let mut harness = harness();
    harness.run();
    harness.get_by_label("Context extension").click();
    harness.run();
    let type_path = |harness: &mut Harness<'_, PoslabApp>, path: &std::path::Path| {
        replace_the_text(harness, &path.display().to_string());
        harness.key_press(poslab::egui::Key::Enter);
        harness.run();
    };
    type_path(&mut harness, &bad);
    assert!(
        harness
            .query_by_label_contains("does not use RoPE")
            .is_some(),
        "a config without RoPE is explained"
    );
    assert_eq!(
        harness.state_mut().context_view().model().name,
        "meta-llama/Llama-2-7b-hf"
    );
    type_path(&mut harness, &good);
    let view = harness.state_mut().context_view();
    let model = view.model();
    assert_eq!(
        (
            model.name.as_str(),
            model.head_dim,
            model.base,
            model.trained
        ),
        ("my/tiny-rope", 64, 50_000.0, 1024)
    );
    assert!(view.file_error.is_none());
    // The export names the file, so that the command line reads the same model.
    let words = poslab::export::figure::command_words(
        &poslab::export::figure::FigureSpec::Context(Box::new(view.figure())),
        &Default::default(),
        "out.svg",
    );
    assert!(words.contains(&good.display().to_string()), "{words:?}");
}

#[test]
fn the_vision_lab_resamples_and_a_click_moves_the_query() {
    let mut harness = harness();
    harness.run();
    harness.get_by_label("Context extension").click();
    harness.run();
    harness
        .get_by_label("Vision transformers: larger images")
        .click();
    harness.run();
    harness
        .get_by_role_and_label(Role::Slider, "run at")
        .set_value_accesskit(20.0);
    harness.run();
    let at = harness
        .state_mut()
        .context_view()
        .vision_patch_on_screen(1, 3, 15)
        .expect("the map was drawn");
    click_at(&mut harness, at);
    let view = harness.state_mut().context_view();
    assert_eq!(view.vision.target_side, 20);
    assert_eq!(view.vision.query, 15 * 20 + 3);
    let expected = view.vision.maps().unwrap();
    for (k, values) in [(0, &expected.resampled), (1, &expected.direct)] {
        let shown = view.shown_vision_map(k).expect("a map is shown");
        assert_eq!(&shown.values, values, "map {k}");
    }
    let difference = &expected.resampled - &expected.direct;
    assert_eq!(view.shown_vision_map(2).unwrap().values, difference);
    common::pane_snapshot(&mut harness, "views/context_vision");
}

#[test]
fn a_learned_position_table_is_resampled_and_exported_as_the_command_line_draws_it() {
    let folder = tempfile::tempdir().unwrap();
    // [1, 1 + 6 x 6, 8]: timm's layout, CLS row first.
    let mut random = poslab::encoding::random::SplitMix64::new(9);
    let table = ndarray::Array3::from_shape_simple_fn((1, 37, 8), || random.next_unit() as f32);
    let good = folder.path().join("pos_embed.npy");
    ndarray_npy::write_npy(&good, &table).unwrap();
    let bad = folder.path().join("bad.npy");
    ndarray_npy::write_npy(&bad, &ndarray::Array2::<f32>::zeros((40, 8))).unwrap();
    let mut harness = harness();
    harness.run();
    harness.get_by_label("Context extension").click();
    harness.run();
    harness
        .get_by_label("Vision transformers: larger images")
        .click();
    harness.run();
    let load = |harness: &mut Harness<'_, PoslabApp>, path: &std::path::Path| {
        harness.state_mut().context_view().table_path_text = path.display().to_string();
        harness.run();
        harness.get_by_label("Load").click();
        harness.run();
    };
    load(&mut harness, &bad);
    assert!(
        harness.query_by_label_contains("has 40 rows").is_some(),
        "a table of no square grid is explained"
    );
    assert!(!harness.state_mut().context_view().use_learned);
    load(&mut harness, &good);
    let view = harness.state_mut().context_view();
    assert!(view.use_learned && view.learned_error.is_none());
    let figure = view.vision_figure();
    assert_eq!((figure.params.train_side, figure.params.dim), (6, 8));
    let shown = view
        .shown_vision_map(1)
        .expect("the resampled map")
        .values
        .clone();
    let poslab::views::context::VisionPanels::Learned(maps) = view.vision_maps().unwrap().clone()
    else {
        panic!("the learned table's maps")
    };
    assert_eq!(shown, maps.resampled);
    // The export, and the command line it prints, draw the same figure.
    let export = harness
        .state()
        .view_export()
        .expect("the vision half exports");
    let style = poslab::export::figure::FigureStyle::default();
    let words = poslab::export::figure::command_words(&export.figure, &style, "cli.svg");
    assert!(words.contains(&good.display().to_string()), "{words:?}");
    common::assert_command_line_figure_equals_export(&export, &style, folder.path(), "learned");
}

/// A model's config opened in the Check view draws its RoPE per layer type (off the UI
/// thread) and says every setting with its field, without the table comparison's controls.
#[test]
fn the_check_view_draws_a_model_files_rope_per_layer_type() {
    let mut harness = harness();
    harness.run();
    harness.get_by_label("Check a table").click();
    harness.run();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/configs/gemma3_layer_types.json");
    harness.state_mut().check_view_mut().load(&path, None);
    for _ in 0..500 {
        harness.step();
        if harness.state().check_view().model_file().is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    harness.run();
    let model = harness
        .state()
        .check_view()
        .model_file()
        .expect("the model file is shown");
    let names: Vec<&str> = model.layers.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["full_attention", "sliding_attention"]);
    // The global layers' linear factor 8 stretches every wavelength eightfold.
    let full = &model.layers[0];
    assert!(full.is_scaled && !model.layers[1].is_scaled);
    assert!((full.scaled[5] / full.unscaled[5] - 8.0).abs() < 1e-9);
    assert!(
        harness
            .query_by_label("layer type full_attention (1 of 6 layers):")
            .is_some()
    );
    assert!(
        harness
            .query_by_label_contains("base: 10000  (rope_parameters.sliding_attention.rope_theta)")
            .is_some()
    );
    assert!(harness.query_by_label("Compare with").is_none());
    let placements = poslab::widgets::layout::plot_placements(&harness.ctx);
    assert!(
        placements
            .iter()
            .any(|(name, _, _)| name == "check_model_wavelengths"),
        "{placements:?}"
    );
    // A table opened next replaces it.
    let table = std::path::Path::new("target/check_view_test");
    std::fs::create_dir_all(table).unwrap();
    let table = table.join("after_model.npy");
    assert_eq!(
        poslab::cli::run([
            "poslab",
            "table",
            "sinusoidal",
            "--seq",
            "8",
            "--dim",
            "8",
            "-o",
            table.to_str().unwrap(),
        ]),
        0
    );
    harness.state_mut().check_view_mut().load(&table, None);
    settle_check(&mut harness);
    assert!(harness.state().check_view().model_file().is_none());
}
