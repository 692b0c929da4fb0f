//! Whole tables computed block by block, in the order a C-order file holds them, so that
//! `poslab table` can write a table of any size while holding one block: what is set up once
//! per table (frequencies, offsets, plans) is set up once, and each block is a window of whole
//! rows (or, for rows wider than a block, part of one row).

use super::cpu;
use super::gpu::GpuEngine;
use super::{EngineError, Strided, Table, TableSpec, Window};
use crate::encoding::torch_f32::Arithmetic;

/// Values in one block of the CPU engine at most (4 MiB of f64): small enough that the allocator
/// hands a freed block's memory to the next, where a larger block is mapped afresh and every
/// one of its pages faulted in again.
pub const BLOCK_VALUES: usize = 1 << 19;

/// Values in one block of the GPU engine at most (16 MiB of f32): each block is a round trip to
/// the device, which costs more than the pages.
pub const GPU_BLOCK_VALUES: usize = 1 << 22;

/// The windows of a `[heads, rows, cols]` table, in C order, of at most `block_values` values
/// each (at least one value).
pub fn block_windows(
    matrix_shape: [usize; 3],
    block_values: usize,
) -> impl Iterator<Item = Window> + Send {
    let [heads, rows, cols] = matrix_shape;
    let block_values = block_values.max(1);
    let range = |start: usize, end: usize| Strided {
        start,
        end,
        step: 1,
    };
    (0..heads).flat_map(move |h| {
        let per_row: Box<dyn Iterator<Item = Window> + Send> = if cols > block_values {
            Box::new((0..rows).flat_map(move |r| {
                (0..cols).step_by(block_values).map(move |c0| Window {
                    heads: range(h, h + 1),
                    rows: range(r, r + 1),
                    cols: range(c0, (c0 + block_values).min(cols)),
                })
            }))
        } else {
            let block_rows = (block_values / cols.max(1)).max(1);
            Box::new((0..rows).step_by(block_rows).map(move |r0| Window {
                heads: range(h, h + 1),
                rows: range(r0, (r0 + block_rows).min(rows)),
                cols: range(0, cols),
            }))
        };
        per_row
    })
}

/// What a table's blocks are computed from on the CPU engine, set up once for the whole table
/// (a similarity table's offsets span all of it): blocks in order for a file, or any window
/// (the command line times a few to estimate the whole).
pub struct CpuBlockSource<'a> {
    source: cpu::CpuSource<'a>,
    matrix_shape: [usize; 3],
    ndim: usize,
}

impl<'a> CpuBlockSource<'a> {
    pub fn new(spec: &'a TableSpec, arith: Arithmetic) -> Result<Self, EngineError> {
        Ok(Self {
            source: cpu::block_source(spec, arith)?,
            matrix_shape: spec.matrix_shape(),
            ndim: spec.ndim(),
        })
    }

    /// The block of `window` (whole rows, or part of one row).
    pub fn block(&self, window: &Window) -> Table {
        self.source.block(window, self.ndim)
    }

    /// Every block of at most `block_values` values, in C order.
    pub fn blocks(self, block_values: usize) -> impl Iterator<Item = (Window, Table)> + Send + 'a {
        block_windows(self.matrix_shape, block_values).map(move |window| {
            let block = self.block(&window);
            (window, block)
        })
    }
}

/// The blocks of a validated `spec` on the CPU engine, in C order.
pub fn cpu_blocks(
    spec: &TableSpec,
    arith: Arithmetic,
    block_values: usize,
) -> Result<impl Iterator<Item = (Window, Table)> + Send + '_, EngineError> {
    Ok(CpuBlockSource::new(spec, arith)?.blocks(block_values))
}

/// The blocks of a validated `spec` on the GPU engine, in C order.
pub fn gpu_blocks<'a>(
    gpu: &'a GpuEngine,
    spec: &'a TableSpec,
    arith: Arithmetic,
    block_values: usize,
) -> Result<impl Iterator<Item = (Window, Result<Table, EngineError>)> + 'a, EngineError> {
    let source = gpu.block_source(spec, arith)?;
    Ok(
        block_windows(spec.matrix_shape(), block_values).map(move |window| {
            let block = source.block(&window);
            (window, block)
        }),
    )
}
