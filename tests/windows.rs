//! Windows on the CPU engine: any strided window of any table equals the same slice of the
//! whole table, so views can compute only what is on screen.

mod common;

use common::{every_kind, slice, windows_of};
use poslab::encoding::sinusoidal::SinusoidalParams;
use poslab::engine::{Strided, Table, TableSpec, Window, cpu};

#[test]
fn every_window_is_the_same_slice_of_the_whole_table() {
    for spec in every_kind() {
        let whole = cpu::compute(&spec).unwrap();
        for window in windows_of(spec.matrix_shape()) {
            let part = cpu::compute_window(&spec, &window).unwrap();
            match (&whole, &part) {
                (Table::Real(w), Table::Real(p)) => {
                    let expected = slice(w, &window);
                    assert_eq!(
                        p.shape(),
                        expected.shape(),
                        "{} {window:?}",
                        spec.kind_name()
                    );
                    for (a, b) in p.iter().zip(expected.iter()) {
                        let same = a == b || (a - b).abs() < 1e-12 * b.abs().max(1.0);
                        assert!(same, "{} {window:?}: {a} vs {b}", spec.kind_name());
                    }
                }
                (Table::Index(w), Table::Index(p)) => assert_eq!(p, &slice(w, &window)),
                _ => panic!("{}: value kinds differ", spec.kind_name()),
            }
        }
    }
}

#[test]
fn windows_outside_the_table_are_refused() {
    let spec = TableSpec::Sinusoidal(SinusoidalParams {
        seq: 10,
        dim: 8,
        ..Default::default()
    });
    let mut window = Window::all(spec.matrix_shape());
    window.rows.end = 11;
    assert!(cpu::compute_window(&spec, &window).is_err());
    window.rows = Strided {
        start: 0,
        end: 10,
        step: 0,
    };
    assert!(cpu::compute_window(&spec, &window).is_err());
}
