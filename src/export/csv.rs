//! `.csv` output: one line per index of the first axis, comma separated, no header, numbers
//! in the shortest form that reads back to the same value.

use std::fmt::Display;
use std::io::Write;

use ndarray::{ArrayD, Axis};

use super::{ExportError, RealDtype};
use crate::engine::Table;

pub(super) fn write(
    writer: &mut impl Write,
    table: &Table,
    dtype: RealDtype,
) -> Result<(), ExportError> {
    if table.shape().len() > 2 {
        return Err(ExportError::CsvNeeds2d(table.shape().to_vec()));
    }
    match (table, dtype) {
        (Table::Real(values), RealDtype::F64) => write_rows(writer, values, |v| real_text(*v)),
        (Table::Real(values), RealDtype::F32) => {
            write_rows(writer, values, |v| real_text(*v as f32))
        }
        (Table::Index(values), _) => write_rows(writer, values, |v| *v),
    }
}

fn write_rows<T, S: Display>(
    writer: &mut impl Write,
    values: &ArrayD<T>,
    text: impl Fn(&T) -> S,
) -> Result<(), ExportError> {
    if values.ndim() <= 1 {
        for value in values {
            writeln!(writer, "{}", text(value))?;
        }
        return Ok(());
    }
    for row in values.axis_iter(Axis(0)) {
        let mut first = true;
        for value in row {
            if !first {
                writer.write_all(b",")?;
            }
            first = false;
            write!(writer, "{}", text(value))?;
        }
        writer.write_all(b"\n")?;
    }
    Ok(())
}

/// A float written as the shortest decimal that parses back to it, in plain notation for
/// ordinary magnitudes and scientific notation for tiny or huge ones.
fn real_text<F: Float>(value: F) -> String {
    if value.is_zero() || !value.is_finite() || (1e-4..1e16).contains(&value.magnitude()) {
        format!("{value}")
    } else {
        format!("{value:e}")
    }
}

/// What [`real_text`] needs of f32 and f64.
trait Float: Display + std::fmt::LowerExp + Copy {
    fn is_zero(self) -> bool;
    fn is_finite(self) -> bool;
    fn magnitude(self) -> f64;
}

impl Float for f32 {
    fn is_zero(self) -> bool {
        self == 0.0
    }
    fn is_finite(self) -> bool {
        f32::is_finite(self)
    }
    fn magnitude(self) -> f64 {
        f64::from(self.abs())
    }
}

impl Float for f64 {
    fn is_zero(self) -> bool {
        self == 0.0
    }
    fn is_finite(self) -> bool {
        f64::is_finite(self)
    }
    fn magnitude(self) -> f64 {
        self.abs()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_read_back_exactly() {
        for v in [
            0.1f64,
            -1.0 / 3.0,
            1e-300,
            6.02e23,
            123456.789,
            f64::MIN_POSITIVE,
        ] {
            assert_eq!(real_text(v).parse::<f64>().unwrap(), v);
        }
        for v in [0.1f32, -1.0 / 3.0, 1e-30, 3.4e38, 0.123_456_79] {
            assert_eq!(real_text(v).parse::<f32>().unwrap(), v);
        }
    }

    #[test]
    fn infinities_are_written_as_numpy_reads_them() {
        assert_eq!(real_text(f64::NEG_INFINITY), "-inf");
        assert_eq!(real_text(0.0f32), "0");
    }
}
