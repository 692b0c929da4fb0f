//! Checking shows where: every element outside the tolerance is found and the worst listed,
//! and each pattern is diagnosed (one cell, scattered cells, swapped columns, a row shift, an
//! error growing with position, masking), on tables made here from the formulas (Vaswani's
//! sin/cos written out, ALiBi's −m|i−j|), not by poslab's engine.

mod common;

use common::{run_poslab as run, write_npy_f32 as write_npy};
use ndarray::{Array2, ArrayD};
use poslab::check::{Diagnosis, Located, Tolerance, compare, locate};
use poslab::import::StoredFloat;

/// Vaswani's table with positions `start..start+seq` and every frequency times `scale`,
/// sin and cos interleaved, as float32 holds it.
fn vaswani(seq: usize, dim: usize, start: usize, scale: f64) -> Array2<f64> {
    Array2::from_shape_fn((seq, dim), |(p, c)| {
        let i = (c / 2) as f64;
        let w = scale / 10_000f64.powf(2.0 * i / dim as f64);
        let angle = (p + start) as f64 * w;
        let value = if c % 2 == 0 { angle.sin() } else { angle.cos() };
        f64::from(value as f32)
    })
}

/// Where `loaded` differs from `reference` under float32's default rule (8 ulp, of 1 near
/// zero), as `poslab check` locates a float32 file.
fn located(reference: &Array2<f64>, loaded: &Array2<f64>) -> Located {
    let reference = reference.clone().into_dyn();
    let loaded = loaded.clone().into_dyn();
    let rule = poslab::check::UlpRule::default_for(StoredFloat::F32, 1.0);
    let comparison = poslab::check::compare_stored(&reference, &loaded, rule);
    locate(&comparison, &reference, &loaded, Some(StoredFloat::F32), 10)
        .expect("something is outside")
}

#[test]
fn a_table_that_matches_has_nothing_to_locate() {
    let table = vaswani(64, 16, 0, 1.0).into_dyn();
    let comparison = compare(&table, &table, Tolerance::default());
    assert!(locate(&comparison, &table, &table, None, 10).is_none());
}

#[test]
fn three_bad_cells_are_all_found_and_listed_worst_first() {
    let reference = vaswani(512, 128, 0, 1.0);
    let mut loaded = reference.clone();
    loaded[[40, 5]] += 0.1;
    loaded[[300, 64]] -= 0.05;
    loaded[[470, 120]] += 0.02;
    let found = located(&reference, &loaded);
    assert_eq!(found.count, 3);
    assert_eq!((found.rows_with_any, found.columns_with_any), (3, 3));
    assert_eq!((found.first_row, found.last_row), (40, 470));
    let indices: Vec<Vec<usize>> = found.worst.iter().map(|c| c.index.clone()).collect();
    assert_eq!(indices, vec![vec![40, 5], vec![300, 64], vec![470, 120]]);
    let first = &found.worst[0];
    assert!((first.error - 0.1).abs() < 1e-6, "{first:?}");
    // Below 1 the rule counts float32 ulps at 1 (2^-23), as it allows them.
    let ulps = first.ulps.unwrap();
    assert!((ulps - first.error * 2f64.powi(23)).abs() < 1e-6, "{ulps}");
    assert!(first.over > 1e4, "{first:?}");
    assert_eq!(found.diagnosis, Some(Diagnosis::Scattered));
    assert_eq!(found.row_counts.iter().sum::<usize>(), 3);
    let report = found.report();
    for cell in ["[40, 5]", "[300, 64]", "[470, 120]", "scattered"] {
        assert!(report.contains(cell), "{report}");
    }
}

#[test]
fn one_bad_cell_is_named_as_such() {
    let reference = vaswani(64, 16, 0, 1.0);
    let mut loaded = reference.clone();
    loaded[[9, 3]] = 2.0;
    let found = located(&reference, &loaded);
    assert_eq!(found.diagnosis, Some(Diagnosis::SingleCell));
    assert_eq!(found.worst[0].index, vec![9, 3]);
}

#[test]
fn swapped_columns_are_diagnosed_and_mapped() {
    let reference = vaswani(512, 128, 0, 1.0);
    let mut loaded = reference.clone();
    for row in 0..512 {
        loaded.swap([row, 6], [row, 10]);
    }
    let found = located(&reference, &loaded);
    assert_eq!(
        found.diagnosis,
        Some(Diagnosis::WholeColumns {
            columns: vec![6, 10],
            moved: vec![(6, 10), (10, 6)],
        })
    );
    assert!(
        found
            .report()
            .contains("file column 6 is reference column 10")
    );
}

#[test]
fn a_whole_layout_slip_maps_every_column() {
    // The split layout (all sines, then all cosines) read against the interleaved one.
    let (seq, dim) = (128, 32);
    let interleaved = vaswani(seq, dim, 0, 1.0);
    let split = Array2::from_shape_fn((seq, dim), |(p, c)| {
        let half = dim / 2;
        interleaved[[p, if c < half { 2 * c } else { 2 * (c - half) + 1 }]]
    });
    let found = located(&interleaved, &split);
    let Some(Diagnosis::WholeColumns { columns, moved }) = &found.diagnosis else {
        panic!("{:?}", found.diagnosis);
    };
    assert_eq!(moved.len(), columns.len());
    // Split column 1 is the second pair's sine: interleaved column 2.
    assert!(
        moved.contains(&(1, 2)) && moved.contains(&(16, 1)),
        "{moved:?}"
    );
}

#[test]
fn an_off_by_one_start_is_a_row_shift() {
    let reference = vaswani(300, 64, 0, 1.0);
    for (start, shift) in [(1usize, 1isize), (3, 3)] {
        let loaded = vaswani(300, 64, start, 1.0);
        let found = located(&reference, &loaded);
        assert_eq!(found.diagnosis, Some(Diagnosis::RowShift { shift }));
    }
    // Positions that start earlier: the file's row i is the reference's row i - 2.
    let reference = vaswani(300, 64, 2, 1.0);
    let loaded = vaswani(300, 64, 0, 1.0);
    let found = located(&reference, &loaded);
    assert_eq!(found.diagnosis, Some(Diagnosis::RowShift { shift: -2 }));
    assert!(found.report().contains("earlier"));
}

#[test]
fn frequencies_slightly_off_give_an_error_growing_with_position() {
    let reference = vaswani(4096, 64, 0, 1.0);
    let loaded = vaswani(4096, 64, 0, 1.0 + 1e-5);
    let found = located(&reference, &loaded);
    let Some(Diagnosis::GrowsWithPosition { early, late }) = found.diagnosis else {
        panic!("{:?}", found.diagnosis);
    };
    assert!(late > 4.0 * early, "{early} {late}");
    // The angle error of the lowest pair at the last position bounds the table's error.
    assert!(late <= 4095.0 * 1e-5 + 1e-6, "{late}");
}

#[test]
fn a_causal_mask_against_symmetric_biases_is_masking() {
    let (heads, seq) = (2, 16);
    let slope = |h: usize| 2f64.powf(-8.0 * (h + 1) as f64 / heads as f64);
    let bias = |causal: bool| {
        ArrayD::from_shape_fn(ndarray::IxDyn(&[heads, seq, seq]), |index| {
            let (h, i, j) = (index[0], index[1], index[2]);
            if causal && j > i {
                f64::NEG_INFINITY
            } else {
                -slope(h) * (i as f64 - j as f64).abs()
            }
        })
    };
    let (symmetric, causal) = (bias(false), bias(true));
    let comparison = compare(&symmetric, &causal, Tolerance::default());
    let found = locate(&comparison, &symmetric, &causal, None, 10).unwrap();
    let masked = heads * seq * (seq - 1) / 2;
    assert_eq!(found.count, masked);
    assert_eq!(
        found.diagnosis,
        Some(Diagnosis::Masking {
            file_masks: masked,
            reference_masks: 0
        })
    );
    // Rows and columns are the last two axes: query rows 0 to 14 hold masked keys.
    assert_eq!((found.first_row, found.last_row), (0, seq - 2));
}

#[test]
fn show_keeps_the_worst_and_counts_the_rest() {
    // Zeros: the tolerance allows the same everywhere, so the most over it is the largest.
    let reference = Array2::<f64>::zeros((64, 16));
    let mut loaded = reference.clone();
    for (k, row) in (0..64).step_by(4).enumerate() {
        loaded[[row, 1]] += 0.01 * (k + 1) as f64;
    }
    let reference = reference.into_dyn();
    let loaded = loaded.into_dyn();
    let comparison = compare(&reference, &loaded, Tolerance::default());
    let found = locate(&comparison, &reference, &loaded, None, 3).unwrap();
    assert_eq!(found.count, 16);
    let rows: Vec<usize> = found.worst.iter().map(|c| c.index[0]).collect();
    assert_eq!(rows, vec![60, 56, 52]);
    assert!(found.report().contains("and 13 more"));
    assert!(found.worst.iter().all(|c| c.ulps.is_none()));
    assert!(found.worst.windows(2).all(|w| w[0].over >= w[1].over));
}

/// The file: Vaswani's 512 x 128 table with rows 40, 300 and 470 changed in columns
/// 5, 64 and 120.
fn three_bad_cells() -> Array2<f64> {
    let mut table = vaswani(512, 128, 0, 1.0);
    table[[40, 5]] += 0.1;
    table[[300, 64]] -= 0.05;
    table[[470, 120]] += 0.02;
    table
}

#[test]
fn poslab_check_names_the_three_cells_and_exits_1() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("three.npy");
    let table = three_bad_cells();
    write_npy(&path, &table);
    let file = path.display().to_string();
    let words = [
        "check",
        &file,
        "--as",
        "sinusoidal",
        "--seq",
        "512",
        "--dim",
        "128",
    ];
    let (status, text) = run(&words);
    assert_eq!(status, 1, "{text}");
    for expected in [
        "3 elements in 3 of 512 rows and 3 of 128 columns, rows 40 to 470",
        "[40, 5]",
        "[300, 64]",
        "[470, 120]",
        "diagnosis: 3 scattered elements",
    ] {
        assert!(text.contains(expected), "{expected:?} in:\n{text}");
    }
    let (status, text) = run(&[&words[..], &["--show", "1"]].concat());
    assert_eq!(status, 1);
    assert!(
        text.contains("[40, 5]") && !text.contains("[300, 64]"),
        "{text}"
    );
    assert!(text.contains("and 2 more"), "{text}");
    let (status, text) = run(&[&words[..], &["--show", "-1"]].concat());
    assert_eq!(status, 2);
    assert!(text.contains("--show -1 is not allowed"), "{text}");
    // A matching file lists nothing.
    write_npy(&path, &vaswani(512, 128, 0, 1.0));
    let (status, text) = run(&words);
    assert_eq!(status, 0, "{text}");
    assert!(!text.contains("outside the tolerance"), "{text}");
}

#[test]
fn the_check_figure_maps_every_element_outside() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("three.npy");
    let table = three_bad_cells();
    write_npy(&path, &table);
    let svg = folder.path().join("check.svg");
    let (status, text) = run(&[
        "figure",
        "check",
        "--file",
        &path.display().to_string(),
        "--as",
        "sinusoidal --seq 512 --dim 128",
        "-o",
        &svg.display().to_string(),
    ]);
    assert_eq!(status, 0, "{text}");
    let svg = std::fs::read_to_string(svg).unwrap();
    assert!(svg.contains("3 elements outside the tolerance"), "no map");
    // Each of the three is outlined on the map (4 cells a block: 128 x 128 of 512 x 128).
    assert_eq!(svg.matches("stroke=\"#ffffff\"").count(), 3);
}

/// A cell's ulps are one number however the comparison came: under float32's default rule (as
/// `poslab check` compares a file) and under a plain tolerance (as the Check view compares a
/// file with the closest table identify reads) the same cell is the same count of float32 ulps
/// at 1, 2^-23, where the values cross zero; a table of positive frequencies counts them at each
/// value's own magnitude.
#[test]
fn a_cells_ulps_do_not_depend_on_how_the_comparison_was_made() {
    let reference = vaswani(512, 128, 0, 1.0);
    let mut loaded = reference.clone();
    loaded[[508, 3]] = -loaded[[508, 3]];
    let by_rule = located(&reference, &loaded);
    let (reference_d, loaded_d) = (reference.into_dyn(), loaded.into_dyn());
    let plain = compare(&reference_d, &loaded_d, Tolerance::default());
    let by_tolerance = locate(&plain, &reference_d, &loaded_d, Some(StoredFloat::F32), 10).unwrap();
    let (a, b) = (&by_rule.worst[0], &by_tolerance.worst[0]);
    assert_eq!(a.index, b.index);
    assert_eq!(a.ulps, b.ulps);
    let error = (loaded_d[[508, 3]] - reference_d[[508, 3]]).abs();
    assert!((b.ulps.unwrap() - error * 2f64.powi(23)).abs() < 1e-3);
    // Frequencies: every value its own ulp (0.001 is in [2^-10, 2^-9): ulp 2^-33).
    let freqs = ndarray::Array1::from(vec![1.0, 0.1, 0.01, 0.001]).into_dyn();
    let mut off = freqs.clone();
    off[3] = 0.0011;
    let plain = compare(&freqs, &off, Tolerance::default());
    let found = locate(&plain, &freqs, &off, Some(StoredFloat::F32), 10).unwrap();
    let cell = &found.worst[0];
    assert_eq!(cell.index, vec![3]);
    assert!((cell.ulps.unwrap() - 1e-4 * 2f64.powi(33)).abs() < 1.0);
}

/// A table right but for two swapped columns is closest to its own kind, not to a reading off
/// everywhere by less: identify names Vaswani's table (base 10000, no fitted digits), makes its
/// whole table (the Check view's maps) and says where the file differs, as `check` does.
#[test]
fn identify_of_swapped_columns_names_the_table_and_diagnoses_the_swap() {
    let reference = vaswani(64, 16, 0, 1.0);
    let mut loaded = reference.clone();
    for p in 0..64 {
        loaded.swap([p, 3], [p, 5]);
    }
    let identification =
        poslab::check::identify::identify(&loaded.into_dyn(), Tolerance::default(), None);
    assert!(!identification.found());
    let best = identification.best().unwrap();
    assert!(
        best.description
            .starts_with("sinusoidal, interleaved layout, sin first, Vaswani spacing, base 10000,"),
        "{}",
        best.description
    );
    assert!(!best.partial);
    assert_eq!(best.reference.shape(), &[64, 16]);
    let differs = identification.closest_differs.as_ref().unwrap();
    assert!(
        matches!(&differs.diagnosis, Some(Diagnosis::WholeColumns { columns, .. }) if columns == &vec![3, 5]),
        "{:?}",
        differs.diagnosis
    );
    let report = identification.report();
    assert!(
        report.contains("diagnosis: whole columns (3, 5)"),
        "{report}"
    );
}

/// One bad element outweighs a base's last digits: the closest reading of a RoPE cos cache
/// with one wrong value is base 10000, not the 10000.0000075 a fit through that value gives,
/// and the report says a single element is wrong.
#[test]
fn identify_of_one_bad_element_names_the_round_base() {
    let (seq, dim) = (40, 8);
    let mut cache = Array2::from_shape_fn((seq, dim), |(p, c)| {
        let i = (c / 2) as f64;
        let angle = p as f64 / 10_000f64.powf(2.0 * i / dim as f64);
        f64::from(angle.cos() as f32)
    });
    cache[[17, 2]] = 0.5;
    let identification =
        poslab::check::identify::identify(&cache.into_dyn(), Tolerance::default(), None);
    let best = identification.best().unwrap();
    assert!(
        best.description.contains("base 10000,") || best.description.ends_with("base 10000"),
        "{}",
        best.description
    );
    let report = identification.report();
    assert!(report.contains("a single element is wrong"), "{report}");
    assert!(!report.contains("10000.00"), "{report}");
}
