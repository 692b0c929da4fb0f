//! The Axes view (RoPE over time, height and width) and what it draws from: the position ids
//! each scheme gives a text + image + text sequence are those transformers' Qwen2-VL
//! `get_rope_index` and diffusers' Flux pipeline made (`tests/data/libraries`), the similarity
//! is the mean over the pairs of `cos_i cos_j + sin_i sin_j` from `rope-axes`' own cos and sin
//! tables, and the view draws, answers a click and says what the chosen token is.

mod common;

use ndarray::Array2;
use poslab::encoding::rope_axes::AxesValues;
use poslab::engine::{TableSpec, cpu};
use poslab::scene::axes::{Scheme, TokenLayout, similarity_to};

fn library_ids(file: &str) -> Array2<f64> {
    let path = format!("{}/tests/data/libraries/{file}", env!("CARGO_MANIFEST_DIR"));
    let table =
        poslab::import::tables::read_table(std::path::Path::new(&path), None, u64::MAX).unwrap();
    let rows = table.shape()[0];
    let cols = table.shape()[1];
    table.into_shape_with_order((rows, cols)).unwrap()
}

#[test]
fn the_schemes_number_tokens_as_the_libraries_do() {
    // get_rope_index: 3 text tokens, an image of 2 x 3 merged patches, 2 text tokens; [3, seq].
    let qwen = TokenLayout {
        text_before: 3,
        frames: 1,
        rows: 2,
        cols: 3,
        text_after: 2,
    };
    let expected = library_ids("qwen2vl_position_ids.npy").reversed_axes();
    assert_eq!(Scheme::Mrope.position_ids(&qwen), expected);
    // Flux: 4 text tokens at 0, then the 3 x 5 latent grid's [0, h, w].
    let flux = TokenLayout {
        text_before: 4,
        frames: 1,
        rows: 3,
        cols: 5,
        text_after: 0,
    };
    assert_eq!(
        Scheme::PerAxis.position_ids(&flux),
        library_ids("flux_ids.npy")
    );
    // Plain RoPE: the sequence index on every axis.
    let flat = Scheme::Flattened.position_ids(&qwen);
    assert!(
        flat.rows()
            .into_iter()
            .enumerate()
            .all(|(t, row)| row.iter().all(|&p| p == t as f64))
    );
}

#[test]
fn similarity_is_the_mean_dot_product_of_the_cos_sin_rows() {
    let layout = TokenLayout {
        text_before: 2,
        frames: 2,
        rows: 3,
        cols: 4,
        text_after: 2,
    };
    for scheme in Scheme::ALL {
        let params = scheme.params(&layout, 32, 500.0);
        let chosen = layout.patch_index(1, 2, 1);
        let similarity = similarity_to(&params, chosen);
        let table = |values: AxesValues| {
            let spec = TableSpec::RopeAxes(Box::new(poslab::encoding::rope_axes::RopeAxesParams {
                values,
                ..params.clone()
            }));
            cpu::compute(&spec)
                .unwrap()
                .into_real()
                .into_dimensionality::<ndarray::Ix2>()
                .unwrap()
        };
        let (cos, sin) = (table(AxesValues::Cos), table(AxesValues::Sin));
        // Interleaved: each pair's value twice; the mean over the pairs is over the columns.
        for token in 0..layout.tokens() {
            let dot: f64 = (0..cos.ncols())
                .map(|c| cos[[chosen, c]] * cos[[token, c]] + sin[[chosen, c]] * sin[[token, c]])
                .sum::<f64>()
                / cos.ncols() as f64;
            assert!(
                (similarity[token] - dot).abs() < 1e-12,
                "{scheme:?} token {token}"
            );
        }
        assert!((similarity[chosen] - 1.0).abs() < 1e-15);
    }
}

#[test]
fn the_axes_view_draws_the_three_schemes_and_a_click_chooses_a_token() {
    let launch = poslab::cli::app::AppLaunch {
        view: Some(poslab::views::ViewKind::Axes),
        ..Default::default()
    };
    let mut harness = common::app_harness_with(|app| app.launched(&launch));
    harness.run();
    let view = harness.state().axes_view();
    let maps = view.shown().expect("the maps").to_vec();
    let layout = view.layout;
    assert_eq!(maps.len(), 3);
    let chosen = view.chosen;
    for scheme in &maps {
        assert_eq!(scheme.similarity.len(), layout.tokens());
        assert!((scheme.similarity[chosen] - 1.0).abs() < 1e-12);
    }
    // M-RoPE's sections (1/4, 3/8, 3/8 of the pairs), Flux's widths (1/8, 7/16, 7/16).
    assert_eq!(maps[1].runs, vec![(0, 0, 7), (1, 8, 19), (2, 20, 31)]);
    assert_eq!(maps[2].runs, vec![(0, 0, 3), (1, 4, 17), (2, 18, 31)]);
    common::pane_snapshot(&mut harness, "views/axes");
    // A click on the first text token of the first column chooses it.
    use egui_kittest::kittest::Queryable;
    // Finding the label is the assertion: it panics when no label says it.
    harness.get_by_label_contains("patch at frame 0, row 3, column 4");
    let strip = harness
        .get_all_by_label("text before")
        .next()
        .expect("the first column's text strip")
        .rect();
    let first_text = poslab::egui::pos2(strip.left() + 4.0, strip.bottom() + 8.0);
    common::click_at(&mut harness, first_text);
    harness.run();
    assert_eq!(harness.state().axes_view().chosen, 0);
    harness.get_by_label_contains("Token 0: text token 0 before the image");
}

#[test]
fn the_axes_figure_puts_each_tokens_similarity_in_its_cell() {
    use poslab::export::figure::axes::AxesFigure;
    use poslab::export::figure::{Content, FigureSpec, FigureStyle, build_figure};
    let layout = TokenLayout {
        text_before: 2,
        frames: 2,
        rows: 3,
        cols: 4,
        text_after: 1,
    };
    let chosen = layout.patch_index(1, 2, 1);
    let figure = AxesFigure {
        layout,
        dim: 32,
        theta: 500.0,
        chosen,
        same_scale: true,
    };
    let built = build_figure(&FigureSpec::Axes(figure), &FigureStyle::default()).unwrap();
    // Row by row of the page: the text strips, then frame 0, then frame 1; a column a scheme.
    assert_eq!(built.panels.len(), 9);
    for (k, scheme) in Scheme::ALL.into_iter().enumerate() {
        let similarity = similarity_to(&scheme.params(&layout, 32, 500.0), chosen);
        let Content::Heatmap { values, cols, .. } = &built.panels[k].content else {
            panic!("a text strip is a heatmap")
        };
        assert_eq!(*cols, 3);
        assert_eq!(values, &vec![similarity[0], similarity[1], similarity[26]]);
        for frame in 0..2 {
            let Content::Heatmap {
                values, outlined, ..
            } = &built.panels[3 * (frame + 1) + k].content
            else {
                panic!("a frame is a heatmap")
            };
            for r in 0..3 {
                for c in 0..4 {
                    assert_eq!(
                        values[r * 4 + c],
                        similarity[layout.patch_index(frame, r, c)],
                        "{scheme:?} frame {frame} ({r}, {c})"
                    );
                }
            }
            // The chosen patch is outlined in its own frame only.
            let expected = if frame == 1 { vec![(2, 1)] } else { Vec::new() };
            assert_eq!(outlined, &expected);
        }
    }
    // One colour scale for all: from the least similar patch of any scheme to 1.
    let bar = built.colorbar.expect("a shared colour bar");
    assert_eq!(bar.max, 1.0);
    assert!(bar.min < 1.0);
}

/// Each sentence of the Axes view's "Try" list, held against the maps it draws at the default
/// settings (64 dimensions, base 10,000, the middle patch chosen).
#[test]
fn the_axes_explanation_says_what_the_default_maps_show() {
    use poslab::scene::axes::{Scheme, Token, TokenLayout, all_schemes};
    let neighbours = |layout: &TokenLayout, scheme: Scheme| {
        let chosen = layout.middle_patch();
        let Token::Patch { frame, row, col } = layout.token(chosen) else {
            panic!("the middle patch is a patch")
        };
        let maps = all_schemes(layout, 64, 10_000.0, chosen);
        let maps = maps.iter().find(|m| m.scheme == scheme).unwrap();
        let at = |f: usize, r: usize, c: usize| maps.similarity[layout.patch_index(f, r, c)];
        let beside = at(frame, row, col + 1);
        let below = at(frame, row + 1, col);
        let next_frame = (layout.frames > 1).then(|| at(1 - frame, row, col));
        (
            beside,
            below,
            next_frame,
            maps.lowest_patch(layout),
            maps.similarity[0],
        )
    };
    let layout = TokenLayout::default();
    // 1D RoPE: beside bright, a row away darker.
    let (beside, below, _, _, _) = neighbours(&layout, Scheme::Flattened);
    assert!(beside > 0.95 && below < beside - 0.2, "{beside} {below}");
    // M-RoPE: every patch within 1% of the chosen one, the text far darker; a step down still
    // costs more than a step across.
    let (beside, below, _, lowest, text) = neighbours(&layout, Scheme::Mrope);
    assert!(lowest > 0.99, "{lowest}");
    assert!(text < lowest - 0.2, "{text}");
    assert!(below < beside, "{below} {beside}");
    // Flux: above and below exactly as close as beside.
    let (beside, below, _, _, _) = neighbours(&layout, Scheme::PerAxis);
    assert!((beside - below).abs() < 1e-12, "{beside} {below}");
    // A second frame: one time step under M-RoPE (bright), a whole frame under 1D RoPE.
    let two = TokenLayout {
        frames: 2,
        ..layout
    };
    let mrope = neighbours(&two, Scheme::Mrope).2.unwrap();
    let flat = neighbours(&two, Scheme::Flattened).2.unwrap();
    assert!(mrope > 0.95 && flat < 0.5, "{mrope} {flat}");
    // The view opens with one colour scale for the three.
    assert!(poslab::views::axes::AxesView::default().same_scale);
}
