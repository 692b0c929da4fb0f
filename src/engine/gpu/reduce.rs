//! Heatmap pixels that cover several cells, on the device: the cells are computed at full
//! resolution block by block and each block is reduced to its pixels (shaders/reduce.wgsl), so
//! the values never visit main memory. Sinusoidal means skip the cells: their kernel sums each
//! pixel's run of rows in closed form.

use super::{GpuEngine, Plan, Sink, check_positions, entry, readback_error};
use crate::encoding::torch_f32::Arithmetic;
use crate::engine::reduce::{Reduce, bin, has_closed_form};
use crate::engine::{EngineError, Strided, TableSpec, Window};

/// A reduced window's values, from the bytes read back.
fn reduced_values(bytes: &[u8], window: &Window) -> Vec<f32> {
    let mut values: Vec<f32> = bytemuck::cast_slice(bytes).to_vec();
    values.truncate(window.rows.len() * window.cols.len());
    values
}

/// A storage or uniform buffer binding of a compute pass.
fn buffer_binding(ty: wgpu::BufferBindingType) -> wgpu::BindingType {
    wgpu::BindingType::Buffer {
        ty,
        has_dynamic_offset: false,
        min_binding_size: None,
    }
}

/// Keep in sync with `ReduceParams` in shaders/reduce.wgsl.
#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct ReduceParams {
    px_rows: u32,
    px_cols: u32,
    bin_rows: u32,
    bin_cols: u32,
    cell_rows: u32,
    cell_cols: u32,
    out_row: u32,
    mode: u32,
    chunk: u32,
    chunks: u32,
}

/// Keep in sync with `Partial` in shaders/reduce.wgsl.
const PARTIAL_WORDS: u64 = 6;

/// Pixel rows one invocation of the sinusoidal mean kernel computes. Keep in sync with
/// `MEAN_ROWS` in shaders/sinusoidal.wgsl.
pub(super) const MEAN_ROWS_PER_INVOCATION: u32 = 16;

/// Similarity blocks one invocation of `similarity_block_means` sums. Keep in sync with
/// `BLOCK_RUN` in shaders/sinusoidal.wgsl.
pub(super) const BLOCKS_PER_INVOCATION: u32 = 16;

/// Cells one invocation reduces at least (two loops over them: far below llvmpipe's limit).
const MIN_CHUNK: u64 = 8192;

/// The reduction pipelines (chunks, then pixels), made on first use.
pub(super) struct ReducePipeline {
    layout: wgpu::BindGroupLayout,
    chunks: wgpu::ComputePipeline,
    pixels: wgpu::ComputePipeline,
}

/// Cells in the last bin of a binned axis (every other bin holds `step`).
fn last_bin_len(axis: &Strided) -> usize {
    bin(axis, axis.len().saturating_sub(1)).len()
}

/// Appends to the plan's constants, for each bin length in `counts`, every pair's ratio
/// `sin(n w/2) / (n sin(w/2))` (computed in f64), in f32.
fn push_bin_ratios(
    plan: &mut Plan,
    params: &crate::encoding::sinusoidal::SinusoidalParams,
    counts: &[usize],
) -> Result<(), EngineError> {
    let values = crate::encoding::sinusoidal::SinusoidalValues::new(params)?;
    for &count in counts {
        plan.constants.extend(
            values
                .mean_ratios(count)
                .iter()
                .map(|&ratio| (ratio as f32).to_bits()),
        );
    }
    Ok(())
}

impl GpuEngine {
    fn reduce_pipeline(&self) -> &ReducePipeline {
        self.reduce.get_or_init(|| {
            let (layout, mut pipelines) = self.pass_pipelines(
                super::shaders::REDUCE,
                &[
                    buffer_binding(wgpu::BufferBindingType::Uniform),
                    buffer_binding(wgpu::BufferBindingType::Storage { read_only: true }),
                    buffer_binding(wgpu::BufferBindingType::Storage { read_only: false }),
                    buffer_binding(wgpu::BufferBindingType::Storage { read_only: false }),
                ],
                &["reduce_chunks", "reduce_pixels"],
            );
            let pixels = pipelines.remove(1);
            let chunks = pipelines.remove(0);
            ReducePipeline {
                layout,
                chunks,
                pixels,
            }
        })
    }

    /// One value per bin of `window` (one head) into `pixels`, in row order: the mean, minimum
    /// or maximum of the finite cells each pixel covers.
    pub(super) fn reduce_into(
        &self,
        spec: &TableSpec,
        window: &Window,
        reduce: Reduce,
        pixels: &wgpu::Buffer,
    ) -> Result<(), EngineError> {
        // The closed forms with kernels of their own (a dot-decay curve is reduced on the CPU).
        let kernel = matches!(spec, TableSpec::Sinusoidal(_) | TableSpec::Alibi { .. });
        if kernel && has_closed_form(spec, reduce) {
            let mut plan = Plan::new(spec, Arithmetic::Exact)?;
            plan.entry = match spec {
                TableSpec::Alibi { .. } => {
                    plan.params.flags |= reduce.code() << 1;
                    "alibi_bias_reduced"
                }
                TableSpec::Sinusoidal(sinusoidal) => {
                    if window.cols.step as u64 > super::LOOP_PASSES {
                        return Err(readback_error(format!(
                            "one pixel covers {} columns, more than the GPU engine averages \
                             (at most {}): use a wider figure or --backend cpu",
                            window.cols.step,
                            super::LOOP_PASSES
                        )));
                    }
                    // After the frequencies, per pair the ratio sin(n w/2) / (n sin(w/2)) of a
                    // full bin of n = step rows, then of the last bin (see
                    // sinusoidal_table_mean in shaders/sinusoidal.wgsl).
                    push_bin_ratios(
                        &mut plan,
                        sinusoidal,
                        &[window.rows.step, last_bin_len(&window.rows)],
                    )?;
                    plan.workgroup[1] *= MEAN_ROWS_PER_INVOCATION;
                    "sinusoidal_table_mean"
                }
                _ => unreachable!("only sinusoidal and ALiBi tables reach here"),
            };
            plan.params.extra = super::to_u32(window.rows.end);
            plan.params.grid_w = super::to_u32(window.cols.end);
            self.run(&plan, spec, window, Sink::Buffer(pixels))?;
            return Ok(());
        }
        if let (TableSpec::Similarity(params), Reduce::Mean) = (spec, reduce)
            && window.rows.step == window.cols.step
        {
            return self.similarity_means_into(spec, params, window, pixels);
        }
        let plan = Plan::new(spec, Arithmetic::Exact)?;
        let (px_rows, px_cols) = (window.rows.len(), window.cols.len());
        let columns = Strided {
            start: window.cols.start,
            end: window.cols.end,
            step: 1,
        };
        let cells_per_pixel_row = (window.rows.step * columns.len()) as u64;
        let max_words = self.max_binding_bytes / 4;
        if cells_per_pixel_row > max_words {
            return Err(readback_error(format!(
                "one row of pixels covers {cells_per_pixel_row} cells, more than one device buffer holds"
            )));
        }
        // A pixel's cells in chunks of at least MIN_CHUNK, at most LOOP_PASSES / 2 chunks.
        let pixel_cells = (window.rows.step * window.cols.step) as u64;
        let chunk = MIN_CHUNK.max(pixel_cells.div_ceil(super::LOOP_PASSES / 2));
        if chunk > super::LOOP_PASSES / 2 {
            return Err(readback_error(format!(
                "one pixel covers {pixel_cells} cells, more than the GPU engine reduces: use a \
                 larger figure or --backend cpu"
            )));
        }
        let chunks = pixel_cells.div_ceil(chunk);
        let partials_per_pixel_row = px_cols as u64 * chunks * PARTIAL_WORDS;
        let rows_per_block = ((max_words / cells_per_pixel_row)
            .min(max_words / partials_per_pixel_row) as usize)
            .min(px_rows)
            .min(super::WORKGROUPS_PER_DIMENSION as usize * 16)
            .max(1);
        let block_words = rows_per_block as u64 * cells_per_pixel_row;
        let cells = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("cells to reduce"),
            size: block_words * 4,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let partials = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("partial reductions"),
            size: rows_per_block as u64 * partials_per_pixel_row * 4,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        let params = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("reduce params"),
            size: std::mem::size_of::<ReduceParams>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let pipeline = self.reduce_pipeline();
        let bind_group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("reduce bindings"),
            layout: &pipeline.layout,
            entries: &[
                entry(0, &params),
                entry(1, &cells),
                entry(2, pixels),
                entry(3, &partials),
            ],
        });
        for y0 in (0..px_rows).step_by(rows_per_block) {
            let ny = rows_per_block.min(px_rows - y0);
            let first = bin(&window.rows, y0).start;
            let last = bin(&window.rows, y0 + ny - 1).end;
            let block = Window {
                heads: window.heads,
                rows: Strided {
                    start: first,
                    end: last,
                    step: 1,
                },
                cols: columns,
            };
            self.run(&plan, spec, &block, Sink::Buffer(&cells))?;
            let block_params = ReduceParams {
                px_rows: super::to_u32(ny),
                px_cols: super::to_u32(px_cols),
                bin_rows: super::to_u32(window.rows.step),
                bin_cols: super::to_u32(window.cols.step),
                cell_rows: super::to_u32(last - first),
                cell_cols: super::to_u32(columns.len()),
                out_row: super::to_u32(y0),
                mode: reduce.code(),
                chunk: super::to_u32(chunk as usize),
                chunks: super::to_u32(chunks as usize),
            };
            self.queue
                .write_buffer(&params, 0, bytemuck::bytes_of(&block_params));
            let mut encoder = self.device.create_command_encoder(&Default::default());
            let groups = |n: usize| super::to_u32(n).div_ceil(16);
            for (pass_pipeline, depth) in [(&pipeline.chunks, chunks), (&pipeline.pixels, 1)] {
                let mut pass = encoder.begin_compute_pass(&Default::default());
                pass.set_pipeline(pass_pipeline);
                pass.set_bind_group(0, &bind_group, &[]);
                pass.dispatch_workgroups(groups(px_cols), groups(ny), depth as u32);
            }
            self.queue.submit([encoder.finish()]);
        }
        Ok(())
    }

    /// A similarity window binned into square bins, each pixel the closed-form mean of its
    /// block: the distinct blocks first (a diagonal's full bins share one; the last row and
    /// column of pixels have their own), then each pixel reads its block's.
    fn similarity_means_into(
        &self,
        spec: &TableSpec,
        params: &crate::encoding::sinusoidal::SinusoidalParams,
        window: &Window,
        pixels: &wgpu::Buffer,
    ) -> Result<(), EngineError> {
        // Offsets and twice the centres' offsets in i32.
        if window.rows.end.max(window.cols.end) > 1 << 29 {
            return Err(readback_error(
                "the GPU engine reduces similarity matrices of at most 2^29 rows",
            ));
        }
        if params.dim as u64 / 2 > super::LOOP_PASSES {
            return Err(readback_error(format!(
                "the GPU engine sums at most {} pairs a block",
                super::LOOP_PASSES
            )));
        }
        let (rows, cols) = (window.rows.len(), window.cols.len());
        let (last_row, last_col) = (last_bin_len(&window.rows), last_bin_len(&window.cols));
        let mut plan = Plan::new(spec, Arithmetic::Exact)?;
        // After the frequencies, the ratios of a full bin, the last row bin and the last column
        // bin (see similarity_block_means in shaders/sinusoidal.wgsl).
        push_bin_ratios(&mut plan, params, &[window.rows.step, last_row, last_col])?;
        let kernel_params = super::gpu_data::KernelParams {
            row_start: super::to_u32(window.rows.start),
            row_step: super::to_u32(window.rows.step),
            rows: super::to_u32(rows),
            col_start: super::to_u32(window.cols.start),
            col_step: super::to_u32(window.cols.step),
            cols: super::to_u32(cols),
            extra: super::to_u32(last_row),
            grid_w: super::to_u32(last_col),
            ..plan.params
        };
        // The diagonals, the last row and last column but the corner, the corner; in runs.
        let blocks = super::to_u32(2 * (rows + cols) - 2);
        let runs: u32 = [rows + cols - 1, cols - 1, rows - 1, 1]
            .map(|n| super::to_u32(n).div_ceil(BLOCKS_PER_INVOCATION))
            .iter()
            .sum();
        let blocks_buffer = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("similarity blocks"),
            size: u64::from(blocks) * 4,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        let params_buffer =
            self.uniform_buffer("kernel params", bytemuck::bytes_of(&kernel_params));
        let constants = self.storage_buffer("constants", &plan.constants);
        let no_input = self.storage_buffer("no input", &[]);
        let means = self.pipeline(super::shaders::SINUSOIDAL, "similarity_block_means");
        let fill = self.pipeline(super::shaders::TOEPLITZ, "similarity_block_fill");
        let mut encoder = self.device.create_command_encoder(&Default::default());
        for (pipeline, input, output, groups) in [
            (&means, &no_input, &blocks_buffer, [runs.div_ceil(64), 1]),
            (
                &fill,
                &blocks_buffer,
                pixels,
                [
                    super::to_u32(cols).div_ceil(16),
                    super::to_u32(rows).div_ceil(16),
                ],
            ),
        ] {
            let bind_group = self.bind_group(&params_buffer, &constants, input, output);
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, &bind_group, &[]);
            pass.dispatch_workgroups(groups[0], groups[1], 1);
        }
        self.queue.submit([encoder.finish()]);
        Ok(())
    }
}

impl GpuEngine {
    /// A pass with bindings of its own (not the table kernels' layout): its bind group layout,
    /// every binding visible to compute in the order given, and one pipeline per entry point.
    fn pass_pipelines(
        &self,
        shader: super::shaders::ShaderSource,
        bindings: &[wgpu::BindingType],
        entries: &[&'static str],
    ) -> (wgpu::BindGroupLayout, Vec<wgpu::ComputePipeline>) {
        let layout_entries: Vec<wgpu::BindGroupLayoutEntry> = bindings
            .iter()
            .enumerate()
            .map(|(binding, &ty)| wgpu::BindGroupLayoutEntry {
                binding: binding as u32,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty,
                count: None,
            })
            .collect();
        let layout = self
            .device
            .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some(shader.label),
                entries: &layout_entries,
            });
        let pipeline_layout = self
            .device
            .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(shader.label),
                bind_group_layouts: &[Some(&layout)],
                immediate_size: 0,
            });
        let module = self
            .device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(shader.label),
                source: wgpu::ShaderSource::Wgsl(shader.source.into()),
            });
        let pipelines = entries
            .iter()
            .map(|&entry| {
                self.device
                    .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                        label: Some(entry),
                        layout: Some(&pipeline_layout),
                        module: &module,
                        entry_point: Some(entry),
                        compilation_options: Default::default(),
                        cache: None,
                    })
            })
            .collect();
        (layout, pipelines)
    }

    /// One value per bin of `window` (one head): the `reduce` of the cells each bin covers,
    /// computed on the device and read back.
    pub fn reduce_window(
        &self,
        spec: &TableSpec,
        window: &Window,
        reduce: Reduce,
    ) -> Result<Vec<f32>, EngineError> {
        let (values, bytes) = self.reduce_on_device(spec, window, reduce)?;
        Ok(reduced_values(&self.read_buffer(&values, bytes)?, window))
    }

    /// As [`Self::reduce_window`], giving the thread back while the device computes (the web
    /// page's heatmaps).
    pub async fn reduce_window_async(
        &self,
        spec: &TableSpec,
        window: &Window,
        reduce: Reduce,
    ) -> Result<Vec<f32>, EngineError> {
        let (values, bytes) = self.reduce_on_device(spec, window, reduce)?;
        Ok(reduced_values(
            &self.read_buffer_async(&values, bytes).await?,
            window,
        ))
    }

    /// Submits the reduction of `window` into a device buffer of its own, and says its bytes.
    fn reduce_on_device(
        &self,
        spec: &TableSpec,
        window: &Window,
        reduce: Reduce,
    ) -> Result<(wgpu::Buffer, u64), EngineError> {
        spec.validate()?;
        window.check(spec.matrix_shape())?;
        check_positions(spec)?;
        if window.heads.len() != 1 {
            return Err(readback_error("a reduced window holds one head"));
        }
        let bytes = (window.rows.len() * window.cols.len()).max(1) as u64 * 4;
        let values = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("reduced window"),
            size: bytes,
            // A closed form's pixels of several tiles are copied into it tile by tile.
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        self.reduce_into(spec, window, reduce, &values)?;
        Ok((values, bytes))
    }
}
