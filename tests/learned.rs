//! Learned tables: the principal components of a table built from three known directions, the
//! view reading a typed `.npy` and a `.safetensors` tensor chosen by name through AccessKit
//! (its similarity against its own rows' cosines, the sinusoidal twin against the engine's
//! similarity table), bad files refused with their reason while the view keeps what it showed,
//! its snapshot, and its figure from the command line.

mod common;

use common::write_npy_f32 as write_npy;
use poslab::encoding::PairLayout;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use ndarray::{Array1, Array2};
use poslab::egui::accesskit::Role;

use poslab::app::PoslabApp;
use poslab::encoding::learned::principal_components;
use poslab::encoding::random::SplitMix64;
use poslab::encoding::sinusoidal::{SinusoidalParams, Spacing};
use poslab::engine::{TableSpec, cpu};

fn harness() -> Harness<'static, PoslabApp> {
    common::app_harness()
}

/// Opens `path` in the Learned tables view as a drop or the dialog does, and waits for it.
fn open_and_wait(harness: &mut Harness<'_, PoslabApp>, path: &std::path::Path) {
    let ctx = harness.ctx.clone();
    harness.state_mut().learned_view().open(
        &ctx,
        poslab::scene::learned::LearnedSource::path(path.to_owned()),
    );
    harness.state_mut().learned_view().wait();
    harness.run();
}

/// What the view draws once the file being read has arrived.
fn drawn(harness: &mut Harness<'_, PoslabApp>) -> poslab::scene::learned::LearnedAnalysis {
    harness.state_mut().learned_view().wait();
    harness.run();
    harness
        .state_mut()
        .learned_view()
        .shown()
        .expect("a table is drawn")
        .clone()
}

/// Unit vectors, each orthogonal to the ones before (Gram-Schmidt on random vectors).
fn orthonormal(count: usize, dim: usize, seed: u64) -> Vec<Array1<f64>> {
    let mut random = SplitMix64::new(seed);
    let mut out: Vec<Array1<f64>> = Vec::new();
    while out.len() < count {
        let mut v = Array1::from_shape_fn(dim, |_| random.next_unit() - 0.5);
        for u in &out {
            let along = v.dot(u);
            v = v - u * along;
        }
        let norm = v.dot(&v).sqrt();
        out.push(v / norm);
    }
    out
}

/// A smooth table that looks learned: a few slow waves mixed into every column, and noise.
fn learned_like(positions: usize, dim: usize) -> Array2<f64> {
    let mut random = SplitMix64::new(7);
    let mix = Array2::from_shape_fn((6, dim), |_| random.next_unit() - 0.5);
    Array2::from_shape_fn((positions, dim), |(p, c)| {
        let t = p as f64 / positions as f64 * std::f64::consts::TAU;
        let waves = [
            t.sin(),
            t.cos(),
            (2.0 * t).sin(),
            (2.0 * t).cos(),
            (3.0 * t).sin(),
            (3.0 * t).cos(),
        ];
        waves
            .iter()
            .enumerate()
            .map(|(k, w)| w * mix[[k, c]])
            .sum::<f64>()
            * 0.2
            + 0.01 * ((p * 31 + c * 17) % 13) as f64
    })
}

/// The table as float32 reads it back.
fn as_f32(table: &Array2<f64>) -> Array2<f64> {
    table.mapv(|v| f64::from(v as f32))
}

fn cosine(a: ndarray::ArrayView1<f64>, b: ndarray::ArrayView1<f64>) -> f64 {
    a.dot(&b) / (a.dot(&a).sqrt() * b.dot(&b).sqrt())
}

#[test]
fn principal_components_recover_three_known_directions() {
    let (positions, dim) = (240, 10);
    let directions = orthonormal(3, dim, 42);
    let mean = Array1::from_shape_fn(dim, |c| 0.3 * c as f64 - 1.0);
    // Over whole periods these three are uncorrelated with zero mean: variances 9/2, 4/2, 1/2.
    let amplitude = |k: usize, p: usize| {
        let t = p as f64 / positions as f64 * std::f64::consts::TAU;
        match k {
            0 => 3.0 * t.sin(),
            1 => 2.0 * t.cos(),
            _ => (2.0 * t).sin(),
        }
    };
    let table = Array2::from_shape_fn((positions, dim), |(p, c)| {
        mean[c]
            + (0..3)
                .map(|k| amplitude(k, p) * directions[k][c])
                .sum::<f64>()
    });
    let principal = principal_components(&table, 3);
    for c in 0..dim {
        assert!((principal.mean[c] - mean[c]).abs() < 1e-12);
    }
    for (k, direction) in directions.iter().enumerate() {
        let found = principal.components.row(k);
        let along = found.dot(direction);
        assert!((along.abs() - 1.0).abs() < 1e-10, "component {k}: {along}");
        let sign = along.signum();
        for p in 0..positions {
            let want = sign * amplitude(k, p);
            assert!(
                (principal.projections[[p, k]] - want).abs() < 1e-10,
                "component {k}, position {p}"
            );
        }
    }
    for (share, want) in principal.explained.iter().zip([9.0, 4.0, 1.0]) {
        assert!((share - want / 14.0).abs() < 1e-12, "{share}");
    }
}

#[test]
fn the_view_draws_a_typed_table_and_a_named_tensor_beside_the_sinusoidal_one() {
    let folder = tempfile::tempdir().unwrap();
    let (positions, dim) = (96, 24);
    let table = learned_like(positions, dim);
    let npy = folder.path().join("wpe.npy");
    write_npy(&npy, &table);
    let mut harness = harness();
    harness.run();
    harness.get_by_label("Learned tables").click();
    harness.run();
    harness
        .get_by_role_and_label(Role::TextInput, "or path:")
        .click();
    harness.run();
    harness
        .get_by_role_and_label(Role::TextInput, "or path:")
        .type_text(npy.to_str().unwrap());
    harness.run();
    harness.get_by_label("Load").click();
    harness.run();
    let shown = drawn(&mut harness);
    let stored = as_f32(&table);
    assert_eq!(shown.learned.table, stored);
    for ((i, j), &v) in shown.learned.similarity.indexed_iter() {
        let want = cosine(stored.row(i), stored.row(j));
        assert!((v - want).abs() < 1e-12, "({i}, {j})");
    }
    // The sinusoidal twin: its cosine is the engine's PE[i]·PE[j] over d/2 (every row's
    // length is sqrt(d/2)).
    let params = SinusoidalParams {
        seq: positions,
        dim,
        base: 10_000.0,
        start: 0,
        layout: PairLayout::Interleaved,
        spacing: Spacing::Vaswani,
        ..SinusoidalParams::default()
    };
    let engine = cpu::compute(&TableSpec::Similarity(params))
        .unwrap()
        .into_real();
    for ((i, j), &v) in shown.sinusoidal.similarity.indexed_iter() {
        assert!(
            (v - engine[[i, j]] / (dim / 2) as f64).abs() < 1e-12,
            "({i}, {j})"
        );
    }
    assert_eq!(
        harness
            .query_all_by_label_contains("cosine similarity of rows")
            .count(),
        2,
        "the learned table's and the sinusoidal one's"
    );

    // A safetensors file with two tensors: the one named like a position embedding is read.
    let model = folder.path().join("model.safetensors");
    let other = learned_like(10, 3);
    let f32s = |t: &Array2<f64>| t.iter().map(|&v| v as f32).collect::<Vec<f32>>();
    let (a, b) = (f32s(&other), f32s(&table));
    common::safetensors_file(
        &model,
        &[
            ("wte.weight", &a, vec![10, 3]),
            ("position_embeddings.weight", &b, vec![1, positions, dim]),
        ],
    );
    open_and_wait(&mut harness, &model);
    let view = harness.state_mut().learned_view();
    assert_eq!(
        view.shown().unwrap().tensor.as_deref(),
        Some("position_embeddings.weight")
    );
    assert_eq!(view.tensors().len(), 2);
    assert_eq!(view.shown().unwrap().learned.table, stored);
    // Choosing the other tensor by name in the menu draws it.
    harness.get_by_label("Tensor").click();
    harness.run();
    harness.get_by_label("wte.weight").click();
    harness.run();
    harness.state_mut().learned_view().wait();
    harness.run();
    let view = harness.state_mut().learned_view();
    assert_eq!(view.shown().unwrap().tensor.as_deref(), Some("wte.weight"));
    assert_eq!(view.shown().unwrap().learned.table, as_f32(&other));
}

#[test]
fn bad_files_say_why_and_keep_the_table_drawn() {
    let folder = tempfile::tempdir().unwrap();
    let good = folder.path().join("good.npy");
    write_npy(&good, &learned_like(32, 8));
    let one_row = folder.path().join("one_row.npy");
    write_npy(&one_row, &learned_like(1, 8));
    let text = folder.path().join("text.npy");
    std::fs::write(&text, "this is not an array").unwrap();
    let with_nan = folder.path().join("nan.npy");
    let mut nan = learned_like(16, 4);
    nan[[3, 2]] = f64::NAN;
    write_npy(&with_nan, &nan);
    let vector = folder.path().join("vector.npy");
    let mut bytes = poslab::export::npy_header(&[5], false, poslab::export::RealDtype::F32);
    bytes.extend(std::iter::repeat_n(0u8, 20));
    std::fs::write(&vector, bytes).unwrap();
    let cases = [
        (folder.path().join("missing.npy"), "missing.npy"),
        (one_row, "2 to 4096 rows"),
        (text, "text.npy"),
        (with_nan, "NaN"),
        (vector, "[rows, dim]"),
        (
            folder.path().to_path_buf(),
            "use a .npy or .safetensors file",
        ),
        (
            folder.path().join("table.csv"),
            "use a .npy or .safetensors file",
        ),
    ];
    let mut harness = harness();
    harness.run();
    harness.get_by_label("Learned tables").click();
    harness.run();
    open_and_wait(&mut harness, &good);
    let before = harness.state_mut().learned_view().shown().unwrap().clone();
    for (path, says) in cases {
        open_and_wait(&mut harness, &path);
        let view = harness.state_mut().learned_view();
        let error = view
            .error()
            .unwrap_or_else(|| panic!("{} is refused", path.display()))
            .to_owned();
        assert!(error.contains(says), "{}: {error}", path.display());
        assert!(!error.contains('\n'), "one line: {error}");
        assert_eq!(view.shown(), Some(&before), "the table stays drawn");
        assert!(harness.query_by_label_contains(&error).is_some());
    }
    // A good file clears the message.
    open_and_wait(&mut harness, &good);
    assert!(harness.state_mut().learned_view().error().is_none());
}

#[test]
fn learned_view_snapshot() {
    let folder = tempfile::tempdir().unwrap();
    let npy = folder.path().join("wpe.npy");
    write_npy(&npy, &learned_like(128, 32));
    let mut harness = harness();
    harness.run();
    harness.get_by_label("Learned tables").click();
    harness.run();
    common::pane_snapshot(&mut harness, "views/learned_empty");
    open_and_wait(&mut harness, &npy);
    // The path differs from run to run: the field is emptied before the picture.
    harness
        .get_by_role_and_label(Role::TextInput, "or path:")
        .click();
    harness.run();
    harness.key_press_modifiers(poslab::egui::Modifiers::COMMAND, poslab::egui::Key::A);
    harness.key_press(poslab::egui::Key::Backspace);
    harness.get_by_label("Learned tables").click();
    harness.run();
    common::pane_snapshot(&mut harness, "views/learned");
}

#[test]
fn the_learned_figure_from_the_command_line_equals_the_apps_export() {
    use poslab::export::figure::FigureStyle;
    let folder = tempfile::tempdir().unwrap();
    let npy = folder.path().join("wpe.npy");
    write_npy(&npy, &learned_like(64, 16));
    let mut harness = harness();
    harness.run();
    harness.get_by_label("Learned tables").click();
    harness.run();
    assert!(
        harness.state().view_export().is_none(),
        "nothing to export before a table"
    );
    open_and_wait(&mut harness, &npy);
    harness
        .get_by_role_and_label(Role::TextInput, "Columns")
        .click();
    harness.run();
    harness.key_press_modifiers(poslab::egui::Modifiers::COMMAND, poslab::egui::Key::A);
    harness
        .get_by_role_and_label(Role::TextInput, "Columns")
        .type_text("3, 7");
    harness.run();
    // A half-typed list is never read: the columns apply on Enter.
    harness.key_press(poslab::egui::Key::Enter);
    harness.run();
    let export = harness.state().view_export().expect("the table exports");
    let style = FigureStyle {
        width: 1200,
        height: 700,
        ..FigureStyle::default()
    };
    let svg =
        common::assert_command_line_figure_equals_export(&export, &style, folder.path(), "learned");
    assert!(svg.contains("column 7") && !svg.contains("column 0"));
    // A column the table does not have is refused before anything is drawn.
    let words: Vec<String> = ["poslab", "figure", "learned", "--file"]
        .iter()
        .map(|s| s.to_string())
        .chain([
            folder.path().join("wpe.npy").display().to_string(),
            "--columns".into(),
            "16".into(),
            "-o".into(),
            folder.path().join("x.svg").display().to_string(),
        ])
        .collect();
    assert_eq!(poslab::cli::run(&words), 2);
    assert!(!folder.path().join("x.svg").exists());
}

#[test]
fn the_example_table_opens_from_its_button_and_from_the_command_line() {
    let folder = tempfile::tempdir().unwrap();
    let mut harness = harness();
    harness.run();
    harness.get_by_label("Learned tables").click();
    harness.run();
    harness.get_by_label_contains("Open the example").click();
    harness.run();
    let shown = drawn(&mut harness);
    assert_eq!(shown.learned.table.dim(), (512, 384));
    assert_eq!(
        shown.tensor.as_deref(),
        Some("embeddings.position_embeddings.weight")
    );
    // The first values of rows 0 and 1, read from the model's own model.safetensors by
    // Python's struct module (not by poslab), as float32.
    let published: [(usize, [f32; 4]); 2] = [
        (
            0,
            [-0.085_554_17, -0.032_915_67, -0.017_028_086, 0.104_158_536],
        ),
        (
            1,
            [
                -0.032_721_207,
                0.002_271_948_8,
                0.021_104_142,
                0.018_687_705,
            ],
        ),
    ];
    for (row, values) in published {
        for (column, want) in values.into_iter().enumerate() {
            assert_eq!(
                shown.learned.table[[row, column]],
                f64::from(want),
                "[{row}, {column}]"
            );
        }
    }
    // The default columns show four different periods of the sinusoidal companion, all
    // within the table's length, none a solid block of oscillation.
    let columns = poslab::scene::learned::default_columns(512, 384);
    assert_eq!(columns.len(), 4);
    let periods: Vec<f64> = columns
        .iter()
        .map(|&c| std::f64::consts::TAU * 10_000f64.powf((c & !1) as f64 / 384.0))
        .collect();
    for (period, target) in periods.iter().zip([64.0, 128.0, 256.0, 512.0]) {
        assert!(
            (period / target - 1.0).abs() < 0.1,
            "{columns:?}: periods {periods:?}"
        );
    }
    common::pane_snapshot(&mut harness, "views/learned_example");

    // The app's export names the example, and the command line draws the same figure.
    let export = harness.state().view_export().expect("the example exports");
    let style = poslab::export::figure::FigureStyle {
        width: 1200,
        height: 700,
        ..Default::default()
    };
    let svg =
        common::assert_command_line_figure_equals_export(&export, &style, folder.path(), "learned");
    assert!(svg.contains("all-MiniLM-L6-v2"));
    let png = folder.path().join("x.png");
    let (code, out) = common::run_poslab(&[
        "figure",
        "learned",
        "--example",
        "-o",
        png.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(std::fs::read(&png).unwrap().starts_with(b"\x89PNG"));
    let (code, out) = common::run_poslab(&[
        "figure",
        "learned",
        "--example",
        "--file",
        png.to_str().unwrap(),
        "-o",
        folder.path().join("y.png").to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(out.contains("--file and --example"), "{out}");
}
