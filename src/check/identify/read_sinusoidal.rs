//! Sinusoidal tables: layout, first function, spacing, base, start, transposed or not.

use super::*;

/// Sinusoidal tables in both layouts, sin or cos first, both spacings.
pub(super) fn sinusoidal(
    search: &mut Search,
    view: &Array2<f64>,
    orient: &dyn Fn(Array2<f64>) -> ArrayD<f64>,
    suffix: &str,
) {
    let (seq, dim) = view.dim();
    if dim < 2 || dim % 2 != 0 || seq < 2 {
        return;
    }
    let pairs = dim / 2;
    for layout in [SinusoidalLayout::Interleaved, SinusoidalLayout::Split] {
        let columns = |i: usize| match layout {
            SinusoidalLayout::Interleaved => (2 * i, 2 * i + 1),
            SinusoidalLayout::Split => (i, i + pairs),
        };
        for cos_first in [false, true] {
            // Swapping sin and cos columns turns a cos-first table into a sin-first one.
            let swap = |mut a: Array2<f64>| {
                if cos_first {
                    for i in 0..pairs {
                        let (s, c) = columns(i);
                        for row in 0..a.nrows() {
                            a.swap([row, s], [row, c]);
                        }
                    }
                }
                a
            };
            // The sin and cos columns of pair i, read in place (a copy of a large table
            // with its columns swapped would double what the search holds).
            let sin_cos = |i: usize| {
                let (s, c) = columns(i);
                if cos_first { (c, s) } else { (s, c) }
            };
            let rates: Vec<(usize, f64, f64)> = (0..pairs)
                .filter_map(|i| {
                    let (s, c) = sin_cos(i);
                    let sin: Vec<f64> = view.column(s).to_vec();
                    let cos: Vec<f64> = view.column(c).to_vec();
                    let (rate, _) = angle_rate(&sin, &cos)?;
                    Some((i, rate, rate * (seq - 1) as f64))
                })
                .collect();
            // Each pair's angle in the first row.
            let phases: Vec<f64> = (0..pairs)
                .map(|i| {
                    let (s, c) = sin_cos(i);
                    view[[0, s]].atan2(view[[0, c]])
                })
                .collect();
            let last = (pairs - 1) as f64;
            for spacing in [Spacing::Vaswani, Spacing::T2t] {
                // w_i = base^(-2i/d) (Vaswani) or base^(-i/(d/2-1)) (t2t).
                let exponent = |i: usize| match spacing {
                    Spacing::Vaswani => dim as f64 / (2.0 * i as f64),
                    Spacing::T2t => last / i as f64,
                };
                let (base, any_base) = match best_conditioned(&rates, exponent) {
                    Some((i, rate)) => (rate.powf(-exponent(i)), false),
                    // With one pair (d = 2) the frequency is base^0 = 1 in both spacings: the
                    // table is the same for every base, so the default stands for them all.
                    None if pairs == 1 => (10000.0, true),
                    None => continue,
                };
                // The start for a base: found from the phases with that base's frequencies
                // (once per base: the description and the table both ask).
                let starts = std::cell::RefCell::new(std::collections::HashMap::new());
                let start_for = |b: f64| {
                    *starts.borrow_mut().entry(b.to_bits()).or_insert_with(|| {
                        let params = SinusoidalParams {
                            seq: 1,
                            dim,
                            base: b,
                            start: 0,
                            layout,
                            spacing,
                        };
                        resolve_start(params.frequencies().as_slice()?, &phases)
                    })
                };
                let order = if cos_first { "cos first" } else { "sin first" };
                let layout_name = match layout {
                    SinusoidalLayout::Interleaved => "interleaved",
                    SinusoidalLayout::Split => "split",
                };
                let spacing_name = match spacing {
                    Spacing::Vaswani => "Vaswani",
                    Spacing::T2t => "tensor2tensor",
                };
                search.consider_bases(
                    base,
                    |b| {
                        let positions = match start_for(b) {
                            Some(start) => format!("{start}..{}", start + seq as u64 - 1),
                            None => "unknown".to_owned(),
                        };
                        let base = if any_base {
                            "any base (its one pair turns 1 radian per position)".to_owned()
                        } else {
                            format!("base {b}")
                        };
                        format!(
                            "sinusoidal, {layout_name} layout, {order}, {spacing_name} spacing, {base}, d = {dim}, positions {positions}{suffix}"
                        )
                    },
                    view,
                    orient,
                    |b, rows| {
                        let params = SinusoidalParams {
                            seq: rows,
                            dim,
                            base: b,
                            start: start_for(b)?,
                            layout,
                            spacing,
                        };
                        let table = super::noted(cpu::compute(&TableSpec::Sinusoidal(params)))?;
                        let table = table.into_real().into_dimensionality::<Ix2>().ok()?;
                        Some(swap(table))
                    },
                    Some(&|b, rows, reading| {
                        let params = SinusoidalParams {
                            seq: rows,
                            dim,
                            base: b,
                            start: start_for(b)?,
                            layout,
                            spacing,
                        };
                        let spec = TableSpec::Sinusoidal(params);
                        let table = match reading {
                            Float32Reading::Torch(mode) => {
                                let torch = crate::encoding::torch_f32::Arithmetic::TorchF32(mode);
                                super::noted(cpu::compute_arith(&spec, torch))?.into_real()
                            }
                            // Against the file's rows laid out as the spec's (a sin-first
                            // table: swapping twice is no swap).
                            Float32Reading::OwnFrequencies => {
                                let target = swap(view.slice(ndarray::s![..rows, ..]).to_owned());
                                crate::check::verdict::own_frequencies_table(
                                    &spec,
                                    &target.into_dyn(),
                                )?
                            }
                        };
                        let table = table.into_dimensionality::<Ix2>().ok()?;
                        Some(swap(table))
                    }),
                );
            }
        }
    }
}
