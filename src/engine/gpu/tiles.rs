//! Running a kernel over a window: the window in tiles that fit one storage binding and the
//! device's dispatch limits, all dispatched in one submission (timed where the adapter has
//! timestamps) or into a device buffer, or streamed back to main memory through a ring of
//! mapped buffers while later tiles compute; the similarity table's offsets pass.

use super::gpu_data::KernelParams;
use super::{
    GpuEngine, LOOP_PASSES, Plan, ReadBackConsumer, Sink, WORKGROUPS_PER_DIMENSION, entry,
    readback_error, shaders, to_u32,
};
use crate::engine::{EngineError, TableSpec, Window};

/// Where one tile lies in its window: first head, row and column, and how many of each.
#[derive(Debug, Clone, Copy)]
pub(super) struct TilePlace {
    pub heads: (usize, usize),
    pub rows: (usize, usize),
    pub cols: (usize, usize),
}

impl TilePlace {
    fn words(&self) -> usize {
        self.heads.1 * self.rows.1 * self.cols.1
    }
}

/// Tiles read back at once: one computing, one being copied back, one being consumed.
const READBACK_SLOTS: usize = 3;

/// Words in one tile that is read back: small enough that the last tile, whose readback
/// nothing overlaps, is a small part of a large table; large enough that a tile's fixed costs
/// (a submission, a map) are small beside its kernel (32 MiB).
const READBACK_TILE_WORDS: u64 = 8 << 20;

/// How a window is cut into tiles.
struct Tiling {
    shader: super::shaders::ShaderSource,
    entry: &'static str,
    /// The cells one workgroup computes along columns and rows.
    group: [u32; 2],
    cols_per_tile: usize,
    tile_words: usize,
    tiles: Vec<TilePlace>,
}

/// The tiles of `window` for `plan`: as wide as a dispatch and one binding of `max_words`
/// allow (narrower when `read_back`, so that tiles stream), four columns an invocation where
/// the plan has a wide kernel and the window's columns line up.
fn tiling(
    plan: &Plan,
    spec: &TableSpec,
    window: &Window,
    max_words: u64,
    read_back: bool,
) -> Tiling {
    let (heads, rows, cols) = (window.heads.len(), window.rows.len(), window.cols.len());
    let [group_x, group_y] = plan.workgroup;
    let tile_cap = if read_back {
        max_words.min(READBACK_TILE_WORDS)
    } else {
        max_words
    };
    let cols_per_tile = |group_x: u32| {
        cols.min((WORKGROUPS_PER_DIMENSION * u64::from(group_x)) as usize)
            .min(tile_cap as usize)
    };
    // Four columns an invocation where the window allows (see `Plan::wide`), in tiles
    // whose rows stay a multiple of 4 long.
    let wide = plan
        .wide
        .filter(|_| {
            window.cols.step == 1 && window.cols.start.is_multiple_of(4) && cols.is_multiple_of(4)
        })
        .map(|wide| (wide, cols_per_tile(4 * group_x) / 4 * 4))
        .filter(|&(_, per_tile)| per_tile >= 4);
    let (shader, entry, group_x, cols_per_tile) = match wide {
        Some(((shader, entry), per_tile)) => (shader, entry, 4 * group_x, per_tile),
        None => (plan.shader, plan.entry, group_x, cols_per_tile(group_x)),
    };
    let input_width = match spec {
        TableSpec::RopeApply { input, .. } => input.ncols(),
        _ => 0,
    };
    let row_words = cols_per_tile.max(input_width).max(1) as u64;
    let rows_per_tile = if read_back && cols_per_tile < cols {
        // Rows split into parts: one part a tile, so that tiles follow each other in
        // C order.
        1
    } else {
        rows.min((tile_cap / row_words).max(1) as usize)
            .min((WORKGROUPS_PER_DIMENSION * u64::from(group_y)) as usize)
    };
    let heads_per_tile = if rows_per_tile < rows {
        1
    } else {
        heads
            .min((tile_cap / (rows as u64 * cols_per_tile as u64)).max(1) as usize)
            .min(WORKGROUPS_PER_DIMENSION as usize)
    };
    let tile_words = heads_per_tile * rows_per_tile * cols_per_tile;
    let mut tiles = Vec::new();
    for h0 in (0..heads).step_by(heads_per_tile) {
        for r0 in (0..rows).step_by(rows_per_tile) {
            for c0 in (0..cols).step_by(cols_per_tile) {
                tiles.push(TilePlace {
                    heads: (h0, heads_per_tile.min(heads - h0)),
                    rows: (r0, rows_per_tile.min(rows - r0)),
                    cols: (c0, cols_per_tile.min(cols - c0)),
                });
            }
        }
    }
    Tiling {
        shader,
        entry,
        group: [group_x, group_y],
        cols_per_tile,
        tile_words,
        tiles,
    }
}

impl GpuEngine {
    /// Runs the plan's kernel over the window tile by tile, and says how long its kernels
    /// took (for [`Sink::Discard`]; zero for the others, which do not wait to time them).
    ///
    /// Discarded and device-buffer tiles go in one submission with no wait between them.
    /// Read-back tiles stream: each is computed into a slot of a small ring, copied to a
    /// mappable buffer and mapped while the next computes, and handed to the consumer in
    /// window order.
    pub(super) fn run(
        &self,
        plan: &Plan,
        spec: &TableSpec,
        window: &Window,
        mut sink: Sink<'_>,
    ) -> Result<std::time::Duration, EngineError> {
        let constants = self.storage_buffer("constants", &plan.constants);
        let max_words = self.max_binding_bytes / 4;
        // The similarity table reads its offsets table, computed first in a pass of its own.
        let (offsets, lowest_offset) = match spec {
            TableSpec::Similarity(_) => {
                let (buffer, lowest) = self.similarity_offsets(plan, window, &constants)?;
                (Some(buffer), lowest)
            }
            _ => (None, 0),
        };
        let whole_input = self.whole_input(spec, max_words)?;
        let (rows, cols) = (window.rows.len(), window.cols.len());
        let Tiling {
            shader,
            entry,
            group: [group_x, group_y],
            cols_per_tile,
            tile_words,
            tiles,
        } = tiling(
            plan,
            spec,
            window,
            max_words,
            matches!(sink, Sink::ReadBack(_)),
        );
        if matches!(sink, Sink::Buffer(_)) && cols_per_tile < cols {
            return Err(readback_error(
                "a window this wide cannot be written to one device buffer",
            ));
        }
        let pipeline = self.pipeline(shader, entry);
        // Each tile's bindings: its own parameters (tiles share a submission, so one buffer
        // rewritten between them would give every tile the last tile's), its input rows.
        let bind_tile = |place: &TilePlace, output: &wgpu::Buffer| {
            let (row_range, col_range) = (
                window.rows.sub(place.rows.0, place.rows.1),
                window.cols.sub(place.cols.0, place.cols.1),
            );
            let params = KernelParams {
                row_start: to_u32(row_range.start),
                row_step: to_u32(row_range.step),
                rows: to_u32(place.rows.1),
                col_start: to_u32(col_range.start),
                col_step: to_u32(col_range.step),
                cols: to_u32(place.cols.1),
                head_start: to_u32(plan.first_head + window.heads.at(place.heads.0)),
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
            let params = self.uniform_buffer("kernel params", bytemuck::bytes_of(&params));
            let input = match (spec, &offsets, &whole_input) {
                (TableSpec::RopeApply { input, .. }, _, _) => {
                    let rows: Vec<u32> = (0..place.rows.1)
                        .flat_map(|y| input.row(row_range.at(y)).to_vec())
                        .map(|v| (v as f32).to_bits())
                        .collect();
                    self.storage_buffer("input rows", &rows)
                }
                (_, Some(offsets), _) => offsets.clone(),
                (_, _, Some(whole)) => whole.clone(),
                _ => self.storage_buffer("no input", &[]),
            };
            self.bind_group(&params, &constants, &input, output)
        };
        let workgroups = |place: &TilePlace| {
            [
                (place.cols.1 as u32).div_ceil(group_x),
                (place.rows.1 as u32).div_ceil(group_y),
                place.heads.1 as u32,
            ]
        };
        let tile_buffer = |label, words: usize, usage| {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: (words * 4) as u64,
                usage,
                mapped_at_creation: false,
            })
        };
        match &mut sink {
            Sink::Discard => {
                self.timed_tiles(&tiles, tile_words, &pipeline, &bind_tile, &workgroups)
            }
            Sink::Buffer(destination) => {
                // A window that is one tile goes straight into the sink: a tile buffer of its
                // own and a copy would cost a software adapter as much as the kernel.
                let direct = tile_words == window.len();
                let output = if direct {
                    (*destination).clone()
                } else {
                    tile_buffer(
                        "table tile",
                        tile_words,
                        wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                    )
                };
                let mut encoder = self.device.create_command_encoder(&Default::default());
                for place in &tiles {
                    let bind_group = bind_tile(place, &output);
                    {
                        let mut pass = encoder.begin_compute_pass(&Default::default());
                        pass.set_pipeline(&pipeline);
                        pass.set_bind_group(0, &bind_group, &[]);
                        let [x, y, z] = workgroups(place);
                        pass.dispatch_workgroups(x, y, z);
                    }
                    if !direct {
                        // Full-width tiles are contiguous in window order.
                        let offset = ((place.heads.0 * rows + place.rows.0) * cols * 4) as u64;
                        let bytes = (place.words() * 4) as u64;
                        encoder.copy_buffer_to_buffer(&output, 0, destination, offset, bytes);
                    }
                }
                // Queue order is all the ordering later work on the same queue needs: the
                // caller goes on while the device works.
                self.queue.submit([encoder.finish()]);
                Ok(std::time::Duration::ZERO)
            }
            Sink::ReadBack(consume) => {
                self.stream_tiles(
                    &tiles,
                    tile_words,
                    &pipeline,
                    &bind_tile,
                    &workgroups,
                    consume,
                )?;
                Ok(std::time::Duration::ZERO)
            }
        }
    }

    /// The tiles computed into one discarded buffer in one pass, for `poslab bench`: the
    /// time the device took (by its timestamps where it has them).
    fn timed_tiles(
        &self,
        tiles: &[TilePlace],
        tile_words: usize,
        pipeline: &wgpu::ComputePipeline,
        bind_tile: &dyn Fn(&TilePlace, &wgpu::Buffer) -> wgpu::BindGroup,
        workgroups: &dyn Fn(&TilePlace) -> [u32; 3],
    ) -> Result<std::time::Duration, EngineError> {
        let output = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("table tile"),
            size: (tile_words * 4) as u64,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        let bind_groups: Vec<_> = tiles.iter().map(|t| bind_tile(t, &output)).collect();
        let queries = self.timestamps.then(|| TimestampQueries::new(&self.device));
        let mut encoder = self.device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("table"),
                timestamp_writes: queries.as_ref().map(TimestampQueries::writes),
            });
            pass.set_pipeline(pipeline);
            for (place, bind_group) in tiles.iter().zip(&bind_groups) {
                let [x, y, z] = workgroups(place);
                pass.set_bind_group(0, bind_group, &[]);
                pass.dispatch_workgroups(x, y, z);
            }
        }
        if let Some(queries) = &queries {
            queries.resolve(&mut encoder);
        }
        let submitted = web_time::Instant::now();
        let index = self.queue.submit([encoder.finish()]);
        self.wait_for(index)?;
        let wall = submitted.elapsed();
        match &queries {
            Some(queries) => queries.read(self),
            None => Ok(wall),
        }
    }

    /// The read-back tiles, streamed through a ring of slots (see [`Self::run`]). Where the
    /// adapter's memory is the host's (a software adapter, an integrated GPU) and it lets
    /// storage buffers be mapped, each slot's tile is mapped where the kernel wrote it: no
    /// copy at all.
    fn stream_tiles(
        &self,
        tiles: &[TilePlace],
        tile_words: usize,
        pipeline: &wgpu::ComputePipeline,
        bind_tile: &dyn Fn(&TilePlace, &wgpu::Buffer) -> wgpu::BindGroup,
        workgroups: &dyn Fn(&TilePlace) -> [u32; 3],
        consume: &mut ReadBackConsumer<'_>,
    ) -> Result<(), EngineError> {
        use wgpu::BufferUsages as Usage;
        let mapped_in_place = self.map_storage_in_place();
        let slots: Vec<(wgpu::Buffer, Option<wgpu::Buffer>)> = (0..READBACK_SLOTS.min(tiles.len()))
            .map(|_| {
                let buffer = |label, usage| {
                    self.device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some(label),
                        size: (tile_words * 4) as u64,
                        usage,
                        mapped_at_creation: false,
                    })
                };
                if mapped_in_place {
                    (buffer("table tile", Usage::STORAGE | Usage::MAP_READ), None)
                } else {
                    (
                        buffer("table tile", Usage::STORAGE | Usage::COPY_SRC),
                        Some(buffer("table readback", Usage::MAP_READ | Usage::COPY_DST)),
                    )
                }
            })
            .collect();
        type Pending = (
            usize,
            wgpu::SubmissionIndex,
            std::sync::mpsc::Receiver<Result<(), wgpu::BufferAsyncError>>,
        );
        let mut pending: std::collections::VecDeque<Pending> = Default::default();
        // Waits for the oldest tile in flight, hands it over and frees its slot.
        let mut finish_oldest =
            |pending: &mut std::collections::VecDeque<Pending>| -> Result<(), EngineError> {
                let Some((k, index, mapped)) = pending.pop_front() else {
                    return Ok(());
                };
                self.wait_for(index)?;
                mapped
                    .recv()
                    .map_err(readback_error)?
                    .map_err(readback_error)?;
                let (output, staging) = &slots[k % slots.len()];
                let readable = staging.as_ref().unwrap_or(output);
                let bytes = (tiles[k].words() * 4) as u64;
                let handed = {
                    let view = readable
                        .slice(..bytes)
                        .get_mapped_range()
                        .map_err(readback_error)?;
                    consume(&tiles[k], &view)
                };
                readable.unmap();
                handed
            };
        for (k, place) in tiles.iter().enumerate() {
            if pending.len() == slots.len() {
                finish_oldest(&mut pending)?;
            }
            let (output, staging) = &slots[k % slots.len()];
            let bind_group = bind_tile(place, output);
            let mut encoder = self.device.create_command_encoder(&Default::default());
            {
                let mut pass = encoder.begin_compute_pass(&Default::default());
                pass.set_pipeline(pipeline);
                pass.set_bind_group(0, &bind_group, &[]);
                let [x, y, z] = workgroups(place);
                pass.dispatch_workgroups(x, y, z);
            }
            let bytes = (place.words() * 4) as u64;
            if let Some(staging) = staging {
                encoder.copy_buffer_to_buffer(output, 0, staging, 0, bytes);
            }
            let index = self.queue.submit([encoder.finish()]);
            let (sender, receiver) = std::sync::mpsc::channel();
            staging.as_ref().unwrap_or(output).slice(..bytes).map_async(
                wgpu::MapMode::Read,
                move |result| {
                    let _ = sender.send(result);
                },
            );
            pending.push_back((k, index, receiver));
        }
        while !pending.is_empty() {
            finish_oldest(&mut pending)?;
        }
        Ok(())
    }

    /// Whether storage buffers are mapped where the kernel wrote them (see
    /// [`Self::stream_tiles`]).
    fn map_storage_in_place(&self) -> bool {
        self.device
            .features()
            .contains(wgpu::Features::MAPPABLE_PRIMARY_BUFFERS)
            && matches!(
                self.adapter.device_type,
                wgpu::DeviceType::Cpu | wgpu::DeviceType::IntegratedGpu
            )
    }

    /// Waits until the device has done submission `index` (worker threads and tests only,
    /// never a frame).
    fn wait_for(&self, index: wgpu::SubmissionIndex) -> Result<(), EngineError> {
        refuse_waiting_on_the_web()?;
        self.device
            .poll(wgpu::PollType::Wait {
                submission_index: Some(index),
                timeout: None,
            })
            .map(|_| ())
            .map_err(readback_error)
    }

    /// A resampled table reads any input row: the whole input goes to the device once.
    fn whole_input(
        &self,
        spec: &TableSpec,
        max_words: u64,
    ) -> Result<Option<wgpu::Buffer>, EngineError> {
        let TableSpec::SinCos2dResample { input, params } = spec else {
            return Ok(None);
        };
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
        Ok(Some(self.storage_buffer("input table", &words)))
    }

    /// `S(k)` for every offset `k` between a column and a row of the window, on the GPU.
    fn similarity_offsets(
        &self,
        plan: &Plan,
        window: &Window,
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
            let params_buffer = &self.uniform_buffer("offsets params", bytemuck::bytes_of(&params));
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

    /// The first `bytes` of a `COPY_SRC` buffer, copied through a readable one (waits for the
    /// device: for worker threads and tests, never a frame).
    pub(super) fn read_buffer(
        &self,
        buffer: &wgpu::Buffer,
        bytes: u64,
    ) -> Result<Vec<u8>, EngineError> {
        let readable = self.copy_to_readable(buffer, bytes);
        self.read_mapped(&readable, bytes)
    }

    /// Submits a copy of the first `bytes` of `buffer` into a new `MAP_READ` buffer.
    fn copy_to_readable(&self, buffer: &wgpu::Buffer, bytes: u64) -> wgpu::Buffer {
        let readable = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = self.device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(buffer, 0, &readable, 0, bytes);
        self.queue.submit([encoder.finish()]);
        readable
    }

    /// Maps the first `bytes` of a `MAP_READ` buffer, copies them out and unmaps it.
    pub(super) fn read_mapped(
        &self,
        buffer: &wgpu::Buffer,
        bytes: u64,
    ) -> Result<Vec<u8>, EngineError> {
        refuse_waiting_on_the_web()?;
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

impl GpuEngine {
    /// As [`Self::read_buffer`], without holding the thread: on the web the mapping arrives
    /// from the page's event loop, after this future has given the page back.
    pub(super) async fn read_buffer_async(
        &self,
        buffer: &wgpu::Buffer,
        bytes: u64,
    ) -> Result<Vec<u8>, EngineError> {
        #[cfg(not(target_arch = "wasm32"))]
        {
            self.read_buffer(buffer, bytes)
        }
        #[cfg(target_arch = "wasm32")]
        {
            let readable = self.copy_to_readable(buffer, bytes);
            let slice = readable.slice(..bytes);
            let (answer, mapped) = crate::jobs::answer();
            slice.map_async(wgpu::MapMode::Read, move |result| answer.give(result));
            mapped
                .await
                .ok_or_else(|| readback_error("the device was lost"))?
                .map_err(readback_error)?;
            let bytes = slice.get_mapped_range().map_err(readback_error)?.to_vec();
            readable.unmap();
            Ok(bytes)
        }
    }
}

/// On the web a wait for the device returns before the device has answered (its answers come
/// from the page's event loop): the blocking readbacks refuse there, and their callers take
/// the CPU engine or the `_async` readback.
fn refuse_waiting_on_the_web() -> Result<(), EngineError> {
    if cfg!(target_arch = "wasm32") {
        Err(readback_error(
            "the browser's GPU answers between frames, so this readback cannot wait for it",
        ))
    } else {
        Ok(())
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

/// Two timestamps around a compute pass, resolved into a buffer that is read back.
struct TimestampQueries {
    set: wgpu::QuerySet,
    resolved: wgpu::Buffer,
    readable: wgpu::Buffer,
}

impl TimestampQueries {
    fn new(device: &wgpu::Device) -> Self {
        let buffer = |label, usage| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: 16,
                usage,
                mapped_at_creation: false,
            })
        };
        Self {
            set: device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("kernel time"),
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            }),
            resolved: buffer(
                "kernel time",
                wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            ),
            readable: buffer(
                "kernel time readback",
                wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            ),
        }
    }

    fn writes(&self) -> wgpu::ComputePassTimestampWrites<'_> {
        wgpu::ComputePassTimestampWrites {
            query_set: &self.set,
            beginning_of_pass_write_index: Some(0),
            end_of_pass_write_index: Some(1),
        }
    }

    fn resolve(&self, encoder: &mut wgpu::CommandEncoder) {
        encoder.resolve_query_set(&self.set, 0..2, &self.resolved, 0);
        encoder.copy_buffer_to_buffer(&self.resolved, 0, &self.readable, 0, 16);
    }

    /// The time between the two, once the submission that resolved them is done.
    fn read(&self, engine: &GpuEngine) -> Result<std::time::Duration, EngineError> {
        let ticks: Vec<u64> =
            bytemuck::cast_slice(&engine.read_mapped(&self.readable, 16)?).to_vec();
        let nanoseconds = ticks[1].saturating_sub(ticks[0]) as f64
            * f64::from(engine.queue.get_timestamp_period());
        Ok(std::time::Duration::from_nanos(nanoseconds as u64))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{GpuEngine, shaders};
    use crate::encoding::PairLayout;
    use crate::encoding::sinusoidal::{FirstOfPair, SinusoidalParams};
    use crate::encoding::torch_f32::Arithmetic;
    use crate::engine::{Strided, TableSpec, Window, cpu};

    /// The wide sinusoidal kernel computes the table by itself: the one-column entry is
    /// replaced by the fill (which writes 1.0 everywhere), so a table equal to the CPU
    /// engine's can only come from the wide kernel, in both layouts and pair orders, in tiles
    /// that split rows. A window that does not start at a multiple of 4 gets the fill: the
    /// wide kernel is not used where its stores would not line up with the window.
    #[test]
    fn the_wide_kernel_alone_computes_the_sinusoidal_table() {
        let engine = GpuEngine::new_headless()
            .expect("a GPU adapter (lavapipe in CI)")
            .with_max_tile_bytes(4096);
        for layout in [PairLayout::Interleaved, PairLayout::Half] {
            for first in [FirstOfPair::Sin, FirstOfPair::Cos] {
                for (seq, dim) in [(9, 8), (5, 1500)] {
                    let spec = TableSpec::Sinusoidal(SinusoidalParams {
                        seq,
                        dim,
                        start: 1000,
                        layout,
                        first,
                        amplitude: 0.5,
                        ..Default::default()
                    });
                    let mut blocks = engine.block_source(&spec, Arithmetic::Exact).unwrap();
                    blocks.plan.shader = shaders::FILL;
                    blocks.plan.entry = "fill_16x16";
                    blocks.plan.params.extra = 1.0f32.to_bits();
                    let what = format!("{layout:?} {first:?} {seq} x {dim}");
                    let window = Window::all(spec.matrix_shape());
                    let gpu = blocks.block(&window).unwrap().into_real();
                    let exact = cpu::compute(&spec).unwrap().into_real();
                    for (g, c) in gpu.iter().zip(exact.iter()) {
                        assert!((g - c).abs() <= 2e-6, "{what}: {g} vs {c}");
                    }
                    let offset = Window {
                        cols: Strided {
                            start: 2,
                            end: dim,
                            step: 1,
                        },
                        ..window
                    };
                    let narrow = blocks.block(&offset).unwrap().into_real();
                    assert!(narrow.iter().all(|&v| v == 1.0), "{what}: offset window");
                }
            }
        }
    }
}
