//! The teaching views: every view's "What am I looking at?" panel, and the Relative positions
//! view, whose boards must hold what the engine's tables hold and what the formulas say,
//! driven through AccessKit as a user would.

mod common;

use common::click_at;
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use ndarray::Array2;
use poslab::egui::accesskit::Role;

use poslab::app::PoslabApp;
use poslab::encoding::random::SplitMix64;
use poslab::encoding::relative::{RelativeClipParams, T5BucketParams};
use poslab::encoding::skew::{self, SkewContent, SkewStage};
use poslab::engine::{Table, TableSpec, cpu};
use poslab::scene::board::Board;
use poslab::views::ViewKind;

fn harness() -> Harness<'static, PoslabApp> {
    common::app_harness()
}

fn open_relative(harness: &mut Harness<'_, PoslabApp>, panel: &str) {
    harness.get_by_label("Relative positions").click();
    harness.run();
    harness.get_by_label(panel).click();
    harness.run();
}

fn boards(harness: &mut Harness<'_, PoslabApp>) -> Vec<Board> {
    harness.state_mut().relative_view().shown_boards().to_vec()
}

/// A board's values as a `[rows, cols]` array (`NaN` where a cell has none).
fn values(board: &Board) -> Array2<f64> {
    let mut out = Array2::from_elem((board.rows, board.cols), f64::NAN);
    for cell in &board.cells {
        out[[cell.row, cell.col]] = cell.value.unwrap_or(f64::NAN);
    }
    out
}

fn index_table(spec: &TableSpec) -> Array2<f64> {
    match cpu::compute(spec).unwrap() {
        Table::Index(t) => t
            .into_dimensionality::<ndarray::Ix2>()
            .unwrap()
            .mapv(f64::from),
        Table::Real(_) => panic!("an index table"),
    }
}

fn set_slider(harness: &mut Harness<'_, PoslabApp>, label: &str, value: f64) {
    harness
        .get_by_role_and_label(Role::Slider, label)
        .set_value_accesskit(value);
    harness.run();
}

#[test]
fn every_view_says_what_it_shows() {
    let mut harness = harness();
    harness.run();
    for view in ViewKind::all() {
        harness.get_by_label(view.label()).click();
        harness.run();
        let explanation = view.explanation();
        assert!(
            harness
                .query_by_label_contains(explanation.formula)
                .is_none(),
            "{view:?}: the panel starts closed"
        );
        harness.get_by_label("What am I looking at?").click();
        harness.run();
        for text in [
            explanation.formula,
            explanation.reading,
            explanation.convention,
        ]
        .into_iter()
        .chain(explanation.try_these.iter().copied())
        {
            assert!(
                harness.query_by_label_contains(text).is_some(),
                "{view:?} does not show {text:?}"
            );
        }
        assert!(explanation.try_these.len() >= 2, "{view:?}: things to try");
    }
}

#[test]
fn the_offset_shaw_and_alibi_boards_hold_the_engines_tables() {
    let mut harness = harness();
    harness.run();
    open_relative(&mut harness, "Offsets j − i");
    set_slider(&mut harness, "Tokens L", 11.0);
    let offsets = values(&boards(&mut harness)[0]);
    // j - i, as relative-clip with K = L - 1 gives it shifted by K.
    let k = 10.0;
    let clip = index_table(&TableSpec::RelativeClip(RelativeClipParams {
        seq: 11,
        max_relative: 10,
    }));
    assert_eq!(offsets, clip.mapv(|v| v - k));

    harness.get_by_label("Shaw: clipped").click();
    harness.run();
    set_slider(&mut harness, "K", 2.0);
    let shown = boards(&mut harness);
    let clip = index_table(&TableSpec::RelativeClip(RelativeClipParams {
        seq: 11,
        max_relative: 2,
    }));
    assert_eq!(values(&shown[0]), clip.mapv(|v| v - 2.0));
    assert_eq!(shown[1].rows, 5, "2K + 1 embeddings");

    harness.get_by_label("ALiBi bias").click();
    harness.run();
    set_slider(&mut harness, "Heads H", 12.0);
    set_slider(&mut harness, "Head h", 5.0);
    let shown = values(&boards(&mut harness)[0]);
    let Table::Real(bias) = cpu::compute(&TableSpec::Alibi {
        params: poslab::encoding::alibi::AlibiParams {
            heads: 12,
            seq: 11,
            mode: poslab::encoding::alibi::AlibiMode::Causal,
        },
        head: Some(5),
    })
    .unwrap() else {
        panic!("a real table")
    };
    let bias = bias.into_shape_with_order((11, 11)).unwrap();
    for ((i, j), &b) in bias.indexed_iter() {
        if b.is_finite() {
            assert_eq!(shown[[i, j]], b, "({i}, {j})");
        } else {
            assert!(shown[[i, j]].is_nan(), "({i}, {j}) masked");
        }
    }
}

#[test]
fn the_t5_board_holds_t5_buckets_and_its_ranges_cover_every_offset_once() {
    let mut harness = harness();
    harness.run();
    open_relative(&mut harness, "T5 buckets");
    for (tokens, buckets, distance, bidirectional) in [
        (48, 32, 128, true),
        (200, 16, 64, false),
        (97, 64, 300, true),
    ] {
        set_slider(&mut harness, "Tokens L", tokens as f64);
        set_slider(&mut harness, "Buckets", buckets as f64);
        set_slider(&mut harness, "Max distance", distance as f64);
        if harness.state_mut().relative_view().settings.bidirectional != bidirectional {
            harness.get_by_label("Bidirectional").click();
            harness.run();
        }
        let params = T5BucketParams {
            seq: tokens,
            num_buckets: buckets,
            max_distance: distance,
            bidirectional,
        };
        let shown = boards(&mut harness);
        assert_eq!(
            values(&shown[0]),
            index_table(&TableSpec::T5Buckets(params)),
            "{params:?}"
        );
        // The ranges: consecutive, each offset in the bucket the formula gives.
        let ranges = params.bucket_ranges();
        assert_eq!(shown[1].rows, ranges.len());
        for pair in ranges.windows(2) {
            assert_eq!(pair[0].to.unwrap() + 1, pair[1].from.unwrap());
        }
        for range in &ranges {
            let (from, to) = (
                range.from.unwrap_or(-(distance as i64) - 50),
                range.to.unwrap_or(distance as i64 + 50),
            );
            for offset in from..=to {
                assert_eq!(params.bucket(offset), range.bucket, "{offset} in {range:?}");
            }
        }
    }
}

#[test]
fn the_skew_trick_equals_the_gather_it_replaces() {
    // Numbers: random q and R, the trick against q_i · r_(j-i) evaluated directly.
    let mut rng = SplitMix64::new(7);
    for len in 1..=64 {
        let dim = 3;
        let q = Array2::from_shape_fn((len, dim), |_| rng.next_unit() - 0.5);
        let r = Array2::from_shape_fn((2 * len - 1, dim), |_| rng.next_unit() - 0.5);
        let logits = q.dot(&r.t());
        let absolute = skew::relative_to_absolute(&logits).unwrap();
        assert_eq!(absolute, skew::gather(&logits), "L = {len}");
        for i in 0..len {
            for j in 0..len {
                let row = j + len - 1 - i;
                let direct: f64 = (0..dim).map(|k| q[[i, k]] * r[[row, k]]).sum();
                assert!(
                    (absolute[[i, j]] - direct).abs() < 1e-12,
                    "L = {len} ({i}, {j})"
                );
            }
        }
        // The cell model: the last stage holds q_i · r_(j-i) in every cell.
        let cells = skew::stage_cells(len, SkewStage::Sliced).unwrap();
        assert_eq!(cells.len(), len * len);
        for cell in cells {
            assert_eq!(
                cell.content,
                SkewContent::Logit {
                    query: cell.row,
                    offset: cell.col as i64 - cell.row as i64
                },
                "L = {len}"
            );
        }
    }
    // A wrong shape is refused.
    assert!(skew::relative_to_absolute(&Array2::zeros((4, 6))).is_err());
}

#[test]
fn the_skew_animation_steps_to_the_attention_matrix() {
    let mut harness = harness();
    harness.run();
    open_relative(&mut harness, "Skew trick");
    set_slider(&mut harness, "Tokens L", 6.0);
    // The flat stages (72 and 77 cells) drawn in lines of two padded rows, 4L = 24 cells.
    let shapes = [(6, 11), (6, 12), (3, 24), (4, 24), (7, 11), (6, 6)];
    for (stage, shape) in shapes.iter().enumerate() {
        if stage > 0 {
            harness.get_by_label("Next").click();
            harness.run();
        }
        assert!(!harness.state_mut().relative_view().is_animating());
        let board = &boards(&mut harness)[0];
        assert_eq!((board.rows, board.cols), *shape, "stage {}", stage + 1);
        if stage == 2 || stage == 3 {
            // Flat index k at line k / 24, place k % 24: the array in order, line by line.
            for cell in &board.cells {
                assert_eq!((cell.row, cell.col), (cell.id / 24, cell.id % 24));
            }
            assert_eq!(board.cells.len(), [72, 77][stage - 2]);
        }
    }
    // Every cell of the result says q_i · r_(j-i).
    let board = &boards(&mut harness)[0];
    for cell in &board.cells {
        let offset = cell.col as i64 - cell.row as i64;
        let sign = if offset > 0 { "+" } else { "" };
        assert_eq!(cell.label, format!("q{}·r{sign}{offset}", cell.row));
    }
    assert!(
        harness.get_by_label("Next").accesskit_node().is_disabled(),
        "the last stage"
    );
    // The arrow keys step back; the step list jumps.
    harness.key_press(poslab::egui::Key::ArrowLeft);
    harness.run();
    assert_eq!(harness.state_mut().relative_view().settings.stage, 4);
    harness
        .get_by_label("1. Relative logits q_i · r_(j-i)")
        .click();
    harness.run();
    assert_eq!(boards(&mut harness)[0].cols, 11);
}

#[test]
fn the_2d_board_holds_each_patchs_offset_and_a_click_moves_the_query() {
    let mut harness = harness();
    harness.run();
    open_relative(&mut harness, "2D offsets");
    set_slider(&mut harness, "Grid rows", 4.0);
    set_slider(&mut harness, "Grid columns", 7.0);
    let settings = harness.state_mut().relative_view().settings;
    let grid = settings.grid;
    let (qx, qy) = grid.patch_xy(settings.query);
    let shown = boards(&mut harness);
    for cell in &shown[0].cells {
        let (dy, dx) = (cell.row as i64 - qy as i64, cell.col as i64 - qx as i64);
        assert_eq!(
            shown[0].cell(cell.row, cell.col).unwrap().value,
            Some(dy as f64)
        );
        assert_eq!(
            shown[1].cell(cell.row, cell.col).unwrap().value,
            Some(dx as f64)
        );
        assert_eq!(cell.outlined, dy == 0 && dx == 0);
    }
    // The logit is a row term plus a column term: its mixed differences vanish.
    let logits = values(&shown[2]);
    for y in 1..grid.grid_h {
        for x in 1..grid.grid_w {
            let mixed = logits[[y, x]] - logits[[y, 0]] - logits[[0, x]] + logits[[0, 0]];
            assert!(mixed.abs() < 1e-12, "({y}, {x}): {mixed}");
        }
    }
    // A click on patch (row 3, column 6) of the first board makes it the query.
    let pos = harness
        .state_mut()
        .relative_view()
        .cell_on_screen(0, 3, 6)
        .expect("drawn");
    click_at(&mut harness, pos);
    assert_eq!(
        harness.state_mut().relative_view().settings.query,
        3 * 7 + 6
    );
    let shown = boards(&mut harness);
    assert!(shown[0].cell(3, 6).unwrap().outlined);
    assert_eq!(shown[0].cell(0, 0).unwrap().label, "-3,-6");
}

#[test]
fn bad_relative_settings_say_why_and_keep_the_boards() {
    let mut harness = harness();
    harness.run();
    open_relative(&mut harness, "T5 buckets");
    set_slider(&mut harness, "Buckets", 32.0);
    let before = boards(&mut harness);
    // 32 bidirectional buckets have 8 exact ones: a max distance of 6 is not past them.
    set_slider(&mut harness, "Max distance", 6.0);
    let view = harness.state_mut().relative_view();
    let error = view.error().expect("an error").to_owned();
    assert!(error.contains("max-distance"), "{error}");
    assert_eq!(view.shown_boards(), &before[..]);
    assert!(harness.query_by_label_contains(&error).is_some());
}

#[test]
fn relative_view_snapshots() {
    let mut harness = harness();
    harness.run();
    open_relative(&mut harness, "T5 buckets");
    common::pane_snapshot(&mut harness, "views/relative_t5");
    harness.get_by_label("Skew trick").click();
    harness.run();
    for _ in 0..4 {
        harness.get_by_label("Next").click();
        harness.run();
    }
    common::pane_snapshot(&mut harness, "views/relative_skew");
}

#[test]
fn the_relative_figures_from_the_command_line_equal_the_apps_export() {
    use poslab::export::figure::FigureStyle;
    let folder = tempfile::tempdir().unwrap();
    let mut harness = harness();
    harness.run();
    harness.get_by_label("Relative positions").click();
    harness.run();
    let panels = [
        "Offsets j − i",
        "Shaw: clipped",
        "T5 buckets",
        "ALiBi bias",
        "Skew trick",
        "2D offsets",
    ];
    for (index, panel) in panels.into_iter().enumerate() {
        harness.get_by_label(panel).click();
        harness.run();
        match panel {
            "Shaw: clipped" => set_slider(&mut harness, "K", 1.0),
            "T5 buckets" => {
                harness.get_by_label("Bidirectional").click();
                harness.run();
            }
            "ALiBi bias" => set_slider(&mut harness, "Head h", 3.0),
            "Skew trick" => {
                harness.get_by_label("3. Flatten the rows").click();
                harness.run();
            }
            "2D offsets" => set_slider(&mut harness, "Grid columns", 6.0),
            _ => {}
        }
        let export = harness.state().view_export().expect("the view exports");
        assert!(export.data.is_none(), "boards have no table to save");
        let style = FigureStyle {
            width: 700,
            height: 500,
            colormap: poslab::colormap::Colormap::Magma,
            title: None,
            reduce: Default::default(),
        };
        let svg = common::assert_command_line_figure_equals_export(
            &export,
            &style,
            folder.path(),
            &format!("relative{index}"),
        );
        // What the board says is in the figure.
        let board = &boards(&mut harness)[0];
        assert!(
            svg.contains(&board.title.replace('&', "&amp;")),
            "{panel}: {}",
            board.title
        );
    }
}

#[test]
fn readme_names_every_preset_the_app_offers() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let folder = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/models");
    let mut stems: Vec<String> = std::fs::read_dir(folder)
        .unwrap()
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            let stem = path.file_stem()?.to_string_lossy().into_owned();
            (path.extension()? == "json").then_some(stem)
        })
        .collect();
    stems.sort();
    for stem in &stems {
        assert!(
            readme.contains(&format!("`{stem}`")),
            "README does not name {stem}"
        );
    }
    // One preset per config but T5's (no table to preset), as README says.
    assert_eq!(poslab::ui::params::presets().len(), stems.len() - 1);
    assert!(readme.contains("`t5-base` has no table to preset"));
}
