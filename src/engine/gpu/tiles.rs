//! Running a kernel over a window: the window in tiles that fit one storage binding and the
//! device's dispatch limits, each dispatched (timed where the adapter has timestamps) and read
//! back or left in a device buffer; the similarity table's offsets pass.

use super::gpu_data::KernelParams;
use super::{
    GpuEngine, LOOP_PASSES, Plan, Sink, WORKGROUPS_PER_DIMENSION, entry, readback_error, shaders,
    to_u32,
};
use crate::engine::{EngineError, TableSpec, Window};

impl GpuEngine {
    /// Runs the plan's kernel over the window tile by tile; returns the words it wrote (for
    /// [`Sink::ReadBack`]) and the time its kernels took.
    pub(super) fn run(
        &self,
        plan: &Plan,
        spec: &TableSpec,
        window: &Window,
        sink: Sink<'_>,
    ) -> Result<(Vec<u32>, std::time::Duration), EngineError> {
        let read_back = matches!(sink, Sink::ReadBack);
        // Each computation has its own uniform buffer, so that computations on several threads
        // never see each other's parameters.
        let params_buffer = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("kernel params"),
            size: std::mem::size_of::<KernelParams>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let constants = self.storage_buffer("constants", &plan.constants);
        let max_words = self.max_binding_bytes / 4;
        // The similarity table reads its offsets table, computed first in a pass of its own.
        let (offsets, lowest_offset) = match spec {
            TableSpec::Similarity(_) => {
                let (buffer, lowest) =
                    self.similarity_offsets(plan, window, &params_buffer, &constants)?;
                (Some(buffer), lowest)
            }
            _ => (None, 0),
        };
        // A resampled table reads any input row: the whole input goes to the device once.
        let whole_input = match spec {
            TableSpec::SinCos2dResample { input, params } => {
                let (rows, cols) = params.taps();
                let passes = rows.per_output as u64 * (cols.per_output as u64 + 1);
                if passes > LOOP_PASSES {
                    return Err(readback_error(format!(
                        "resampling {}x{} to {}x{} reads {} x {} input patches per output \
                         patch, more than one GPU invocation sums (at most {LOOP_PASSES} \
                         steps): use --backend cpu",
                        params.from.0,
                        params.from.1,
                        params.to.0,
                        params.to.1,
                        rows.per_output,
                        cols.per_output
                    )));
                }
                if input.len() as u64 > max_words {
                    return Err(readback_error(format!(
                        "the --input table has {} values; one device buffer holds at most {max_words}: \
                         use --backend cpu",
                        input.len()
                    )));
                }
                let words: Vec<u32> = input.iter().map(|&v| (v as f32).to_bits()).collect();
                Some(self.storage_buffer("input table", &words))
            }
            _ => None,
        };
        let (heads, rows, cols) = (window.heads.len(), window.rows.len(), window.cols.len());
        let [group_x, group_y] = plan.workgroup;
        let cols_per_tile = cols.min((WORKGROUPS_PER_DIMENSION * u64::from(group_x)) as usize);
        let input_width = match spec {
            TableSpec::RopeApply { input, .. } => input.ncols(),
            _ => 0,
        };
        let row_words = cols_per_tile.max(input_width).max(1) as u64;
        let rows_per_tile = rows
            .min((max_words / row_words).max(1) as usize)
            .min((WORKGROUPS_PER_DIMENSION * u64::from(group_y)) as usize);
        let heads_per_tile = if rows_per_tile < rows {
            1
        } else {
            heads
                .min((max_words / (rows as u64 * cols_per_tile as u64)).max(1) as usize)
                .min(WORKGROUPS_PER_DIMENSION as usize)
        };
        let tile_words = heads_per_tile * rows_per_tile * cols_per_tile;
        if matches!(sink, Sink::Buffer(_)) && cols_per_tile < cols {
            return Err(readback_error(
                "a window this wide cannot be written to one device buffer",
            ));
        }
        // A window that is one tile goes straight into a device sink: a tile buffer of its own
        // (zeroed by wgpu before first use) and a copy would cost a software adapter as much
        // as the kernel.
        let direct = match sink {
            Sink::Buffer(destination) if tile_words == window.len() => Some(destination),
            _ => None,
        };
        let tile_buffer = |label, usage| {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: (tile_words * 4) as u64,
                usage,
                mapped_at_creation: false,
            })
        };
        let output = match direct {
            Some(destination) => destination.clone(),
            None => tile_buffer(
                "table tile",
                wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            ),
        };
        // Only a computation that waits for its tiles reads them through a staging buffer.
        let staging = match sink {
            Sink::Buffer(_) => None,
            _ => Some(tile_buffer(
                "table readback",
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            )),
        };
        let pipeline = self.pipeline(plan.shader, plan.entry);
        let first_head = plan.first_head;
        let mut words = vec![0u32; if read_back { window.len() } else { 0 }];
        let mut kernel_time = std::time::Duration::ZERO;
        for h0 in (0..heads).step_by(heads_per_tile) {
            let nh = heads_per_tile.min(heads - h0);
            for r0 in (0..rows).step_by(rows_per_tile) {
                let nr = rows_per_tile.min(rows - r0);
                for c0 in (0..cols).step_by(cols_per_tile) {
                    let nc = cols_per_tile.min(cols - c0);
                    let (row_range, col_range) = (window.rows.sub(r0, nr), window.cols.sub(c0, nc));
                    let params = KernelParams {
                        row_start: to_u32(row_range.start),
                        row_step: to_u32(row_range.step),
                        rows: to_u32(nr),
                        col_start: to_u32(col_range.start),
                        col_step: to_u32(col_range.step),
                        cols: to_u32(nc),
                        head_start: to_u32(first_head + window.heads.at(h0)),
                        head_step: to_u32(window.heads.step),
                        extra: match spec {
                            TableSpec::Similarity(_) => lowest_offset as i32 as u32,
                            _ => plan.params.extra,
                        },
                        grid_w: match spec {
                            TableSpec::Similarity(_) => offset_step(window),
                            _ => plan.params.grid_w,
                        },
                        ..plan.params
                    };
                    let input = match (spec, &offsets, &whole_input) {
                        (TableSpec::RopeApply { input, .. }, _, _) => {
                            let rows: Vec<u32> = (0..nr)
                                .flat_map(|y| input.row(row_range.at(y)).to_vec())
                                .map(|v| (v as f32).to_bits())
                                .collect();
                            self.storage_buffer("input rows", &rows)
                        }
                        (_, Some(offsets), _) => offsets.clone(),
                        (_, _, Some(whole)) => whole.clone(),
                        _ => self.storage_buffer("no input", &[]),
                    };
                    self.queue
                        .write_buffer(&params_buffer, 0, bytemuck::bytes_of(&params));
                    let bind_group = self.bind_group(&params_buffer, &constants, &input, &output);
                    let dispatch = [
                        (nc as u32).div_ceil(group_x),
                        (nr as u32).div_ceil(group_y),
                        nh as u32,
                    ];
                    let tile_bytes = (nh * nr * nc * 4) as u64;
                    let (tile, time) = self.dispatch(
                        &pipeline,
                        &bind_group,
                        dispatch,
                        &output,
                        staging.as_ref(),
                        tile_bytes,
                        read_back,
                        // Discard is for timing and ReadBack for the values: both wait.
                        !matches!(sink, Sink::Buffer(_)),
                    )?;
                    if let Sink::Buffer(destination) = sink
                        && direct.is_none()
                    {
                        // Full-width tiles are contiguous in window order.
                        let offset = ((h0 * rows + r0) * cols * 4) as u64;
                        let mut encoder = self.device.create_command_encoder(&Default::default());
                        encoder.copy_buffer_to_buffer(&output, 0, destination, offset, tile_bytes);
                        self.queue.submit([encoder.finish()]);
                    }
                    kernel_time += time;
                    if !read_back {
                        continue;
                    }
                    for h in 0..nh {
                        for r in 0..nr {
                            let from = (h * nr + r) * nc;
                            let to = ((h0 + h) * rows + r0 + r) * cols + c0;
                            words[to..to + nc].copy_from_slice(&tile[from..from + nc]);
                        }
                    }
                }
            }
        }
        Ok((words, kernel_time))
    }

    /// `S(k)` for every offset `k` between a column and a row of the window, on the GPU.
    fn similarity_offsets(
        &self,
        plan: &Plan,
        window: &Window,
        params_buffer: &wgpu::Buffer,
        constants: &wgpu::Buffer,
    ) -> Result<(wgpu::Buffer, i64), EngineError> {
        let lowest = window.cols.start as i64 - window.rows.last() as i64;
        let highest = window.cols.last() as i64 - window.rows.start as i64;
        // Every offset j - i of the window is lowest plus a multiple of the steps' gcd.
        let step = offset_step(window);
        let count = ((highest - lowest) / i64::from(step) + 1) as usize;
        let offsets = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("similarity offsets"),
            size: (count * 4) as u64,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        let pipeline = self.pipeline(shaders::SINUSOIDAL, "sinusoidal_offsets");
        let input = self.storage_buffer("no input", &[]);
        let chunk = (WORKGROUPS_PER_DIMENSION * 256) as usize;
        for start in (0..count).step_by(chunk) {
            let n = chunk.min(count - start);
            let params = KernelParams {
                cols: to_u32(n),
                extra: (lowest + start as i64 * i64::from(step)) as i32 as u32,
                grid_w: step,
                ..plan.params
            };
            self.queue
                .write_buffer(params_buffer, 0, bytemuck::bytes_of(&params));
            let bind_group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("similarity offsets"),
                layout: &self.bind_group_layout,
                entries: &[
                    entry(0, params_buffer),
                    entry(1, constants),
                    entry(2, &input),
                    wgpu::BindGroupEntry {
                        binding: 3,
                        resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                            buffer: &offsets,
                            offset: (start * 4) as u64,
                            size: std::num::NonZeroU64::new((n * 4) as u64),
                        }),
                    },
                ],
            });
            let mut encoder = self.device.create_command_encoder(&Default::default());
            {
                let mut pass = encoder.begin_compute_pass(&Default::default());
                pass.set_pipeline(&pipeline);
                pass.set_bind_group(0, &bind_group, &[]);
                pass.dispatch_workgroups((n as u32).div_ceil(256), 1, 1);
            }
            self.queue.submit([encoder.finish()]);
        }
        Ok((offsets, lowest))
    }

    /// Runs one dispatch, timing it, then copies its output back when `read_back`.
    #[allow(clippy::too_many_arguments)]
    fn dispatch(
        &self,
        pipeline: &wgpu::ComputePipeline,
        bind_group: &wgpu::BindGroup,
        workgroups: [u32; 3],
        output: &wgpu::Buffer,
        staging: Option<&wgpu::Buffer>,
        bytes: u64,
        read_back: bool,
        wait: bool,
    ) -> Result<(Vec<u32>, std::time::Duration), EngineError> {
        if !wait {
            // Into a device buffer that later work on the same queue reads: queue order is all
            // the ordering needed, so the caller goes on while the device works.
            let mut encoder = self.device.create_command_encoder(&Default::default());
            {
                let mut pass = encoder.begin_compute_pass(&Default::default());
                pass.set_pipeline(pipeline);
                pass.set_bind_group(0, bind_group, &[]);
                pass.dispatch_workgroups(workgroups[0], workgroups[1], workgroups[2]);
            }
            self.queue.submit([encoder.finish()]);
            return Ok((Vec::new(), std::time::Duration::ZERO));
        }
        let queries = self.timestamps.then(|| {
            let set = self.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("kernel time"),
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            });
            let resolved = self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("kernel time"),
                size: 16,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            let readable = self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("kernel time readback"),
                size: 16,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            (set, resolved, readable)
        });
        let mut encoder = self.device.create_command_encoder(&Default::default());
        {
            let timestamp_writes =
                queries
                    .as_ref()
                    .map(|(set, _, _)| wgpu::ComputePassTimestampWrites {
                        query_set: set,
                        beginning_of_pass_write_index: Some(0),
                        end_of_pass_write_index: Some(1),
                    });
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("table"),
                timestamp_writes,
            });
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, bind_group, &[]);
            pass.dispatch_workgroups(workgroups[0], workgroups[1], workgroups[2]);
        }
        if let Some((set, resolved, readable)) = &queries {
            encoder.resolve_query_set(set, 0..2, resolved, 0);
            encoder.copy_buffer_to_buffer(resolved, 0, readable, 0, 16);
        }
        let submitted = std::time::Instant::now();
        self.queue.submit([encoder.finish()]);
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(readback_error)?;
        let mut kernel_time = submitted.elapsed();
        if let Some((_, _, readable)) = &queries {
            let ticks: Vec<u64> = bytemuck::cast_slice(&self.read_mapped(readable, 16)?).to_vec();
            let nanoseconds = ticks[1].saturating_sub(ticks[0]) as f64
                * f64::from(self.queue.get_timestamp_period());
            kernel_time = std::time::Duration::from_nanos(nanoseconds as u64);
        }
        let (true, Some(staging)) = (read_back, staging) else {
            return Ok((Vec::new(), kernel_time));
        };
        let mut encoder = self.device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(output, 0, staging, 0, bytes);
        self.queue.submit([encoder.finish()]);
        let words = bytemuck::cast_slice::<u8, u32>(&self.read_mapped(staging, bytes)?).to_vec();
        Ok((words, kernel_time))
    }

    /// The first `bytes` of a `COPY_SRC` buffer, copied through a readable one (waits for the
    /// device: for worker threads and tests, never a frame).
    pub(super) fn read_buffer(
        &self,
        buffer: &wgpu::Buffer,
        bytes: u64,
    ) -> Result<Vec<u8>, EngineError> {
        let readable = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = self.device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(buffer, 0, &readable, 0, bytes);
        self.queue.submit([encoder.finish()]);
        self.read_mapped(&readable, bytes)
    }

    /// Maps the first `bytes` of a `MAP_READ` buffer, copies them out and unmaps it.
    pub(super) fn read_mapped(
        &self,
        buffer: &wgpu::Buffer,
        bytes: u64,
    ) -> Result<Vec<u8>, EngineError> {
        let slice = buffer.slice(..bytes);
        let (sender, receiver) = std::sync::mpsc::channel();
        slice.map_async(wgpu::MapMode::Read, move |result| {
            let _ = sender.send(result);
        });
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(readback_error)?;
        receiver
            .recv()
            .map_err(readback_error)?
            .map_err(readback_error)?;
        let bytes = slice.get_mapped_range().map_err(readback_error)?.to_vec();
        buffer.unmap();
        Ok(bytes)
    }
}

/// The step between the offsets `j - i` a window meets: the gcd of its row and column steps.
fn offset_step(window: &Window) -> u32 {
    let (mut a, mut b) = (window.rows.step.max(1), window.cols.step.max(1));
    while b != 0 {
        (a, b) = (b, a % b);
    }
    to_u32(a)
}
