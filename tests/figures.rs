//! Figures: the SVG parses back (usvg) with its size and elements, the PNG decodes at the
//! requested scale, heatmaps hold the CPU engine's table through the colour map, row 0 on top,
//! and a failed write leaves nothing behind.

use poslab::colormap::Colormap;
use poslab::encoding::alibi::{AlibiMode, AlibiParams};
use poslab::encoding::grid::GridParams;
use poslab::encoding::rope_scaling::ScalingKind;
use poslab::encoding::sinusoidal::SinusoidalParams;
use poslab::engine::patch_maps::{PatchMapSettings, PatchMethod};
use poslab::engine::{Table, TableSpec, cpu};
use poslab::export::figure::Content;
use poslab::export::figure::context::{ContextChart, ContextFigure, ContextModelSource};
use poslab::export::figure::{
    AlibiFigure, CorkscrewFigure, DotDecayFigure, FigureFormat, FigureSpec, FigureStyle,
    PatchesFigure, build_figure,
};
use poslab::scene::corkscrew::ProbeVector;
use resvg::usvg;

fn every_figure() -> Vec<(FigureSpec, Vec<&'static str>)> {
    let sinusoidal = SinusoidalParams {
        seq: 40,
        dim: 16,
        ..Default::default()
    };
    vec![
        (
            FigureSpec::Sinusoidal(sinusoidal),
            vec![
                "figure-title",
                "panel-0",
                "heatmap-0",
                "colorbar",
                "axis-x-0",
            ],
        ),
        (
            FigureSpec::DotDecay(DotDecayFigure {
                params: sinusoidal,
                anchor: 3,
                normalised: true,
            }),
            vec!["figure-title", "panel-0", "series-0-0", "axis-y-0"],
        ),
        (
            FigureSpec::Alibi(AlibiFigure {
                params: AlibiParams {
                    heads: 4,
                    seq: 12,
                    mode: AlibiMode::Causal,
                },
                head: None,
            }),
            vec!["heatmap-0", "heatmap-3", "colorbar"],
        ),
        (
            FigureSpec::Patches(PatchesFigure {
                grid: GridParams {
                    grid_h: 5,
                    grid_w: 7,
                },
                query: 9,
                methods: [PatchMethod::Manhattan, PatchMethod::SinCos],
                heads: 8,
                head: 2,
                settings: PatchMapSettings {
                    dim: 32,
                    base: 10_000.0,
                    seed: 0,
                    loaded_freqs: None,
                },
            }),
            vec![
                "heatmap-0",
                "heatmap-1",
                "heatmap-2",
                "colorbar-0",
                "colorbar-1",
                "colorbar-2",
            ],
        ),
        (
            FigureSpec::Corkscrew(CorkscrewFigure {
                dim: 16,
                base: 10_000.0,
                layout: poslab::encoding::PairLayout::Half,
                pairs: vec![0, 3, 7],
                first_position: 0,
                position_count: 50,
                query: ProbeVector::Random(2),
                key: ProbeVector::Ones,
                query_position: 9,
                key_position: 2,
                seq: 64,
                camera: None,
            }),
            vec!["figure-title", "line-0-1", "line-0-5"],
        ),
        (
            FigureSpec::Context(Box::new(context_figure(ContextChart::Survey))),
            vec!["heatmap-2", "series-0-0", "series-1-3", "colorbar"],
        ),
        (
            // One colour scale for the three schemes by default, one bar.
            FigureSpec::Axes(poslab::export::figure::axes::AxesFigure::default()),
            vec!["figure-title", "heatmap-0", "heatmap-5", "colorbar"],
        ),
        (
            FigureSpec::Axes(poslab::export::figure::axes::AxesFigure {
                same_scale: false,
                ..Default::default()
            }),
            vec![
                "figure-title",
                "heatmap-0",
                "heatmap-5",
                "colorbar-0",
                "colorbar-5",
            ],
        ),
    ]
}

/// Llama 2 run at 12,000 positions: extrapolation, PI and YaRN, the map under extrapolation.
fn context_figure(chart: ContextChart) -> ContextFigure {
    let (stem, model) = poslab::scene::context::shipped_models()
        .iter()
        .find(|(stem, _)| stem == "llama-2-7b")
        .unwrap()
        .clone();
    ContextFigure {
        source: ContextModelSource::Shipped(stem),
        model,
        target: 12_000,
        shown: vec![ScalingKind::None, ScalingKind::Linear, ScalingKind::Yarn],
        overrides: Vec::new(),
        map: ScalingKind::None,
        chart,
        alibi: Default::default(),
    }
}

#[test]
fn the_context_figure_draws_the_engines_wavelengths_and_map() {
    let figure = context_figure(ContextChart::Decay);
    let built = build_figure(
        &FigureSpec::Context(Box::new(figure.clone())),
        &FigureStyle::default(),
    )
    .unwrap();
    let Content::Plot(series) = &built.panels[0].content else {
        panic!("the wavelengths are curves")
    };
    for (k, kind) in figure.shown.iter().enumerate() {
        let spec = TableSpec::RopeInvFreq {
            dim: 128,
            base: 10_000.0,
            seq: 12_000,
            freqs: figure.frequencies(*kind).unwrap(),
        };
        let theta = cpu::compute(&spec).unwrap().into_real();
        for (i, (point, t)) in series[k].points.iter().zip(theta.iter()).enumerate() {
            let expected = (std::f64::consts::TAU / t).log10();
            assert!((point[1] - expected).abs() < 1e-12, "{kind:?} pair {i}");
        }
    }
    // The map: the unseen table, a cell per pixel row or the mean of those it covers.
    let Content::Heatmap {
        values, rows, cols, ..
    } = &built.panels[2].content
    else {
        panic!("the map is a heatmap, last, beside its colour bar")
    };
    assert_eq!(*cols, 64);
    let table = cpu::compute(&figure.unseen_spec().unwrap())
        .unwrap()
        .into_real();
    let step = 12_000usize.div_ceil(*rows);
    for r in (0..*rows).step_by(97) {
        for c in 0..64 {
            let covered: Vec<f64> = (r * step..((r + 1) * step).min(12_000))
                .map(|p| table[[p, c]])
                .collect();
            let mean = covered.iter().sum::<f64>() / covered.len() as f64;
            assert!((values[r * cols + c] - mean).abs() < 1e-12, "({r}, {c})");
        }
    }
}

#[test]
fn a_method_has_one_colour_in_every_chart() {
    use poslab::encoding::context::{METHODS, method_label};
    use poslab::scene::context::method_color;
    // Every method shown, in an order other than the list's: colours follow the method, not
    // its place among the lines.
    let mut shown: Vec<ScalingKind> = METHODS.to_vec();
    shown.reverse();
    let colours_by_label = |chart: ContextChart, panel: usize| -> Vec<(String, [u8; 3])> {
        let mut figure = context_figure(chart);
        figure.shown = shown.clone();
        let built = build_figure(
            &FigureSpec::Context(Box::new(figure)),
            &FigureStyle::default(),
        )
        .unwrap();
        let Content::Plot(series) = &built.panels[panel].content else {
            panic!("curves")
        };
        series.iter().map(|s| (s.name.clone(), s.color)).collect()
    };
    for (chart, panel) in [
        (ContextChart::Decay, 0),
        (ContextChart::Decay, 1),
        (ContextChart::Score, 1),
    ] {
        let colours = colours_by_label(chart, panel);
        // The methods Llama 2 has a setting for (LongRoPE needs factors of its own).
        let drawn: Vec<ScalingKind> = METHODS
            .into_iter()
            .filter(|&kind| context_figure(chart).frequencies(kind).is_ok())
            .collect();
        assert!(drawn.len() >= 6, "{drawn:?}");
        for kind in drawn {
            let label = method_label(kind);
            let (_, colour) = colours
                .iter()
                .find(|(name, _)| name.starts_with(label))
                .unwrap_or_else(|| panic!("{label} in {chart:?} panel {panel}"));
            assert_eq!(
                *colour,
                method_color(kind),
                "{label} in {chart:?} panel {panel}"
            );
        }
    }
    // Seven methods, seven colours.
    let mut all: Vec<[u8; 3]> = METHODS.iter().map(|&k| method_color(k)).collect();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), METHODS.len());
}

fn parse(svg: &str) -> usvg::Tree {
    usvg::Tree::from_str(svg, &poslab::export::figure::svg_options()).expect("the SVG parses")
}

/// The PNG of the image with `id` (usvg may wrap an image in a group that keeps the id).
fn image_png(tree: &usvg::Tree, id: &str) -> Vec<u8> {
    fn find(node: &usvg::Node) -> Option<Vec<u8>> {
        match node {
            usvg::Node::Image(image) => match image.kind() {
                usvg::ImageKind::PNG(png) => Some(png.to_vec()),
                _ => None,
            },
            usvg::Node::Group(group) => group.children().iter().find_map(find),
            _ => None,
        }
    }
    let node = tree.node_by_id(id).unwrap_or_else(|| panic!("no #{id}"));
    find(node).unwrap_or_else(|| panic!("#{id} holds no PNG"))
}

#[test]
fn every_figure_parses_back_with_its_size_and_elements() {
    let style = FigureStyle {
        width: 640,
        height: 480,
        ..Default::default()
    };
    for (spec, ids) in every_figure() {
        let figure = build_figure(&spec, &style).unwrap();
        let tree = parse(&figure.to_svg());
        assert_eq!((tree.size().width(), tree.size().height()), (640.0, 480.0));
        for id in ids {
            assert!(tree.node_by_id(id).is_some(), "{spec:?} has no #{id}");
        }
        for scale in [1.0, 2.5] {
            let png = figure.to_png(scale).unwrap();
            let pixmap = resvg::tiny_skia::Pixmap::decode_png(&png).expect("the PNG decodes");
            assert_eq!(
                (pixmap.width(), pixmap.height()),
                ((640.0 * scale) as u32, (480.0 * scale) as u32)
            );
            // The title is drawn: dark pixels in the band at the top, white at the corner.
            let w = pixmap.width() as usize;
            let band = (10.0 * scale) as usize..(34.0 * scale) as usize;
            let dark = band
                .flat_map(|y| (0..w).map(move |x| (x, y)))
                .filter(|&(x, y)| pixmap.pixels()[y * w + x].red() < 100)
                .count();
            assert!(dark > 50, "{spec:?}: no title text in the PNG");
            let corner = pixmap.pixels()[0];
            assert_eq!(
                (corner.red(), corner.green(), corner.blue()),
                (255, 255, 255)
            );
        }
    }
}

/// A heatmap of more cells than its plot has room for at 3 units a cell is scaled smoothly: a
/// nearest-neighbour scale by a ratio such as 133/128 makes some cells one pixel and others
/// two, stripes the table does not have. Large cells stay crisp.
#[test]
fn small_cells_are_scaled_smoothly_and_large_ones_crisply() {
    let rendering = |params: SinusoidalParams| {
        let figure =
            build_figure(&FigureSpec::Sinusoidal(params), &FigureStyle::default()).unwrap();
        let svg = figure.to_svg();
        let start = svg.find("id=\"heatmap-0\"").expect("a heatmap");
        let element = &svg[svg[..start].rfind('<').unwrap()..];
        let element = &element[..element.find('>').unwrap()];
        element.contains("pixelated")
    };
    let many = SinusoidalParams {
        seq: 4096,
        dim: 128,
        ..Default::default()
    };
    assert!(
        !rendering(many),
        "2,048 rows in a few hundred units: smooth"
    );
    let few = SinusoidalParams {
        seq: 30,
        dim: 12,
        ..Default::default()
    };
    assert!(rendering(few), "30 x 12 cells: crisp");
}

/// The heatmap image is the CPU table through the colour map, one pixel a cell, row 0 first.
#[test]
fn a_heatmap_holds_the_table_through_the_colour_map() {
    let params = SinusoidalParams {
        seq: 30,
        dim: 12,
        base: 100.0,
        ..Default::default()
    };
    let style = FigureStyle {
        colormap: Colormap::Magma,
        ..Default::default()
    };
    let figure = build_figure(&FigureSpec::Sinusoidal(params), &style).unwrap();
    let tree = parse(&figure.to_svg());
    let pixmap = resvg::tiny_skia::Pixmap::decode_png(&image_png(&tree, "heatmap-0")).unwrap();
    assert_eq!((pixmap.width(), pixmap.height()), (12, 30));
    let Table::Real(values) = cpu::compute(&TableSpec::Sinusoidal(params)).unwrap() else {
        panic!("a real table")
    };
    let (min, max) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    for ((row, col), &v) in values.indexed_iter().map(|(i, v)| ((i[0], i[1]), v)) {
        let expected = Colormap::Magma.color((v - min) / (max - min));
        let got = pixmap.pixels()[row * 12 + col];
        assert_eq!(
            [got.red(), got.green(), got.blue()],
            [expected.r(), expected.g(), expected.b()],
            "cell ({row}, {col})"
        );
    }
}

#[test]
fn a_causal_mask_has_the_masked_colour_in_the_heatmap() {
    let spec = FigureSpec::Alibi(AlibiFigure {
        params: AlibiParams {
            heads: 2,
            seq: 6,
            mode: AlibiMode::Causal,
        },
        head: Some(1),
    });
    let figure = build_figure(&spec, &FigureStyle::default()).unwrap();
    let svg = figure.to_svg();
    // Both spellings of the image link, for SVG 2 and SVG 1.1 renderers.
    assert!(svg.contains("xmlns:xlink=\"http://www.w3.org/1999/xlink\""));
    assert!(
        svg.contains(" href=\"data:image/png;base64,")
            && svg.contains("xlink:href=\"data:image/png;base64,")
    );
    let tree = parse(&svg);
    let pixmap = resvg::tiny_skia::Pixmap::decode_png(&image_png(&tree, "heatmap-0")).unwrap();
    for row in 0..6 {
        for col in 0..6 {
            let p = pixmap.pixels()[row * 6 + col];
            let masked = Colormap::Viridis.masked();
            let is_masked = [p.red(), p.green(), p.blue(), p.alpha()] == masked.to_array();
            assert_eq!(is_masked, col > row, "cell ({row}, {col})");
        }
    }
}

#[test]
fn a_failed_write_leaves_nothing_and_says_why() {
    let folder = tempfile::tempdir().unwrap();
    let figure = build_figure(
        &FigureSpec::Sinusoidal(SinusoidalParams {
            seq: 8,
            dim: 4,
            ..Default::default()
        }),
        &FigureStyle::default(),
    )
    .unwrap();
    let missing = folder.path().join("no such folder").join("f.svg");
    let error = figure.write(&missing, FigureFormat::Svg).unwrap_err();
    assert!(error.to_string().contains("No such file"), "{error}");
    // Writing over a folder fails and keeps the folder as it was.
    let target = folder.path().join("taken.png");
    std::fs::create_dir(&target).unwrap();
    assert!(
        figure
            .write(&target, FigureFormat::Png { scale: 1.0 })
            .is_err()
    );
    assert!(target.is_dir());
    let left: Vec<_> = std::fs::read_dir(folder.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, vec![std::ffi::OsString::from("taken.png")]);
}

#[test]
fn the_patch_figure_has_the_matrix_and_no_empty_bands() {
    let grid = GridParams {
        grid_h: 14,
        grid_w: 14,
    };
    let spec = FigureSpec::Patches(PatchesFigure {
        grid,
        query: 105,
        methods: [PatchMethod::Euclidean, PatchMethod::Alibi2d],
        heads: 8,
        head: 0,
        settings: PatchMapSettings {
            dim: 64,
            base: 10_000.0,
            seed: 0,
            loaded_freqs: None,
        },
    });
    let figure = build_figure(&spec, &FigureStyle::default()).unwrap();
    assert_eq!(figure.panels.len(), 3);
    // The third panel is the full [P, P] matrix of the first method, cell for cell.
    let poslab::export::figure::Content::Heatmap {
        values, rows, cols, ..
    } = &figure.panels[2].content
    else {
        panic!("a heatmap")
    };
    assert_eq!((*rows, *cols), (196, 196));
    let Table::Real(expected) = cpu::compute(&TableSpec::PatchDistance {
        grid,
        metric: poslab::encoding::grid::DistanceMetric::Euclidean,
    })
    .unwrap() else {
        panic!("a real table")
    };
    for (a, b) in values.iter().zip(expected.iter()) {
        assert!((a - b).abs() < 1e-12);
    }
    // Three square panels across 1000 pixels need far less than 700: the figure is cut to
    // what they fill (one row of cells of about 228 pixels under the title).
    assert!(
        figure.height < 300.0 && figure.height > 250.0,
        "height {}",
        figure.height
    );
}

#[test]
fn the_corkscrew_figure_draws_a_different_keys_helices() {
    let figure = |key| {
        build_figure(
            &FigureSpec::Corkscrew(CorkscrewFigure {
                dim: 16,
                base: 10_000.0,
                layout: poslab::encoding::PairLayout::Interleaved,
                pairs: vec![0, 3, 7],
                first_position: 0,
                position_count: 50,
                query: ProbeVector::UnitPairs,
                key,
                query_position: 9,
                key_position: 2,
                seq: 64,
                camera: None,
            }),
            &FigureStyle::default(),
        )
        .unwrap()
    };
    let lines = |key| match &figure(key).panels[0].content {
        poslab::export::figure::Content::Projected { lines, .. } => lines.len(),
        _ => panic!("a projected panel"),
    };
    // Per pair: its axis and the query's helix, and the key's helix when the key differs.
    assert_eq!(lines(ProbeVector::UnitPairs), 2 * 3);
    assert_eq!(lines(ProbeVector::Random(5)), 3 * 3);
    // The first and last drawn positions are named, as in the app.
    let svg = figure(ProbeVector::UnitPairs).to_svg();
    assert!(
        svg.contains("\np = 0\n") && svg.contains("\np = 49\n"),
        "{svg}"
    );
}

/// A plot's legend is drawn after its data, on a white card, so that no line or dot runs
/// through the names (the tour's step 7 had dots across them).
#[test]
fn legends_are_drawn_over_the_data_on_a_card() {
    let mut legends = 0;
    for (spec, _) in every_figure() {
        let svg = build_figure(&spec, &FigureStyle::default())
            .unwrap()
            .to_svg();
        let Some(legend) = svg.find("id=\"legend\"") else {
            continue;
        };
        let content = svg[..legend]
            .rfind("id=\"content-")
            .unwrap_or_else(|| panic!("{spec:?}: the legend comes before the data"));
        assert!(content < legend);
        let card = &svg[legend..];
        let card = &card[..card.find("</g>").unwrap_or(card.len())];
        assert!(
            card.contains("<rect") && card.contains("fill=\"#ffffff\""),
            "{spec:?}: {card}"
        );
        legends += 1;
    }
    assert!(legends >= 2, "only {legends} figures with a legend");
}

/// `colours_cells` says, for every figure and every tour step, whether the figure as drawn
/// has cells to colour: the command line refuses --colormap and --reduce where it has none
/// (they would change nothing), and the app's command omits them there.
#[test]
fn colour_options_apply_exactly_where_cells_are_coloured() {
    let mut specs: Vec<FigureSpec> = every_figure().into_iter().map(|(spec, _)| spec).collect();
    for step in poslab::scene::tour::TourStep::ALL {
        specs.push(FigureSpec::Tour(poslab::export::figure::tour::TourFigure {
            step,
            settings: Default::default(),
        }));
    }
    for spec in specs {
        let figure = build_figure(&spec, &FigureStyle::default()).unwrap();
        let coloured = figure.colorbar.is_some()
            || figure
                .panels
                .iter()
                .any(|p| p.colorbar.is_some() || matches!(p.content, Content::Heatmap { .. }));
        assert_eq!(spec.colours_cells(), coloured, "{spec:?}");
    }
    let folder = tempfile::tempdir().unwrap();
    let out = folder.path().join("c.svg");
    for view in ["corkscrew", "dot-decay", "precision"] {
        for option in [["--colormap", "magma"], ["--reduce", "max"]] {
            let code = poslab::cli::run([
                "poslab",
                "figure",
                view,
                option[0],
                option[1],
                "-o",
                out.to_str().unwrap(),
            ]);
            assert_eq!(code, 2, "{view} {option:?}");
            assert!(!out.exists());
        }
    }
}

#[test]
fn the_sinusoidal_figure_takes_the_order_and_amplitude_and_gives_them_back() {
    use poslab::encoding::sinusoidal::FirstOfPair;
    let params = SinusoidalParams {
        seq: 8,
        dim: 8,
        first: FirstOfPair::Cos,
        amplitude: 0.25,
        ..Default::default()
    };
    let spec = FigureSpec::Sinusoidal(params);
    let built = build_figure(&spec, &FigureStyle::default()).unwrap();
    assert!(
        built.title.contains("cos first, times 0.25"),
        "{}",
        built.title
    );
    // Row 0 (position 0): cos 0 = 1 first in each interleaved pair, times the amplitude.
    let Content::Heatmap { values, .. } = &built.panels[0].content else {
        panic!("a heatmap")
    };
    assert_eq!(&values[..4], &[0.25, 0.0, 0.25, 0.0]);
    let words = poslab::export::figure::command_words(&spec, &FigureStyle::default(), "pe.svg");
    let line = words.join(" ");
    assert!(line.contains("--first cos --amplitude 0.25"), "{line}");
}
