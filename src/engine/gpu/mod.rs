//! The GPU engine: every table computed by wgpu compute shaders (WGSL in `shaders/`), in f32.
//!
//! Angles are reduced exactly with integer arithmetic on fixed-point turns and evaluated with
//! polynomials of our own, so tables agree with the CPU engine to about 2e-7 whatever the
//! adapter's `sin`/`cos` do. Per-column constants (frequencies, slopes, T5 bucket edges) are
//! prepared in f64 on the CPU; every table value is computed on the GPU. Tables larger than
//! one storage binding are computed in tiles.

mod gpu_data;
mod heatmap;
mod reduce;
pub mod shaders;

pub use heatmap::GpuHeatmap;

use std::collections::HashMap;
use std::sync::Mutex;

use ndarray::{ArrayD, IxDyn};

use super::{EngineError, Table, TableSpec, Window};
use crate::encoding::exact_angle::TurnsPerStep;
use crate::encoding::resample::AxisTaps;
use crate::encoding::rope::RopeLayout;
use crate::encoding::sinusoidal::{SinusoidalLayout, SinusoidalParams};
use crate::encoding::torch_f32::{Arithmetic, TorchMode};
use crate::encoding::{alibi, grid::DistanceMetric, rope};
use gpu_data::{KernelParams, split_f64, torch_f32_constants, turns_per_step};
use shaders::ShaderSource;

/// Why the GPU engine could not run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GpuError {
    #[error("no GPU adapter is available ({0}); the CPU engine can compute every table")]
    NoAdapter(String),
    #[error("the GPU adapter {adapter} refused to create a device: {reason}")]
    Device { adapter: String, reason: String },
    #[error(
        "the GPU engine handles positions below 2^32 and this table reaches {last}; \
         use --backend cpu"
    )]
    PositionsTooLarge { last: u64 },
    #[error("reading the table back from the GPU failed: {0}")]
    Readback(String),
}

/// A compute device with the pipelines of every kernel, created once and reused.
pub struct GpuEngine {
    device: wgpu::Device,
    queue: wgpu::Queue,
    adapter: wgpu::AdapterInfo,
    bind_group_layout: wgpu::BindGroupLayout,
    pipeline_layout: wgpu::PipelineLayout,
    pipelines: Mutex<HashMap<&'static str, wgpu::ComputePipeline>>,
    /// Largest buffer one binding may hold, in bytes (128 MiB on software adapters).
    max_binding_bytes: u64,
    /// Whether compute passes can be timed on the GPU itself.
    timestamps: bool,
    /// The heatmap colour-mapping pipelines, made on first use.
    colormap: std::sync::OnceLock<heatmap::ColormapPipelines>,
    /// The heatmap reduction pipeline, made on first use.
    reduce: std::sync::OnceLock<reduce::ReducePipeline>,
}

/// Where a computation's values go.
#[derive(Clone, Copy)]
pub(super) enum Sink<'a> {
    /// Back to main memory, returned as words.
    ReadBack,
    /// Nowhere: only the kernels' time matters.
    Discard,
    /// Into a buffer on the device, in window order.
    Buffer(&'a wgpu::Buffer),
}

/// How long the kernels of one table took.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KernelTime {
    pub duration: std::time::Duration,
    /// Measured by GPU timestamps; otherwise from submission until the GPU was done.
    pub timestamped: bool,
}

/// Caps one tile, so that the staging copy stays modest even on cards with huge bindings.
const MAX_TILE_BYTES: u64 = 256 << 20;
const WORKGROUPS_PER_DIMENSION: u64 = 65_535;

/// Loop passes one invocation may make in all. llvmpipe silently ends an invocation's loops
/// after 65535 passes (see "Long loops" in shaders/common/fixed_sum.wgsl); kernels stay at half
/// of that, and what could go beyond is refused here rather than cut short there.
const LOOP_PASSES: u64 = 32_768;

impl GpuEngine {
    /// Creates a device of its own, with no window: for the command line, tests and benchmarks.
    /// `WGPU_BACKEND`, `WGPU_ADAPTER_NAME` and `WGPU_POWER_PREF` choose the adapter.
    pub fn new_headless() -> Result<Self, GpuError> {
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let adapter = pollster::block_on(wgpu::util::initialize_adapter_from_env_or_default(
            &instance, None,
        ))
        .map_err(|e| GpuError::NoAdapter(e.to_string()))?;
        let info = adapter.get_info();
        // The adapter's own limits: the defaults are WebGL2's on GL, which have no compute.
        let descriptor = wgpu::DeviceDescriptor {
            label: Some("poslab compute"),
            // Timestamps where the adapter has them, for `poslab bench`.
            required_features: adapter.features() & wgpu::Features::TIMESTAMP_QUERY,
            required_limits: adapter.limits(),
            experimental_features: wgpu::ExperimentalFeatures::default(),
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        };
        let (device, queue) =
            pollster::block_on(adapter.request_device(&descriptor)).map_err(|e| {
                GpuError::Device {
                    adapter: info.name.clone(),
                    reason: e.to_string(),
                }
            })?;
        Ok(Self::from_device(device, queue, info))
    }

    /// Uses a device created elsewhere (eframe's), so that the GUI and the engine share it.
    pub fn from_device(
        device: wgpu::Device,
        queue: wgpu::Queue,
        adapter: wgpu::AdapterInfo,
    ) -> Self {
        let storage = |binding, read_only| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let bind_group_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("kernel bindings"),
            entries: &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::COMPUTE,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: false,
                        min_binding_size: None,
                    },
                    count: None,
                },
                storage(1, true),
                storage(2, true),
                storage(3, false),
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("kernel pipeline layout"),
            bind_group_layouts: &[Some(&bind_group_layout)],
            immediate_size: 0,
        });
        let limits = device.limits();
        let timestamps = device.features().contains(wgpu::Features::TIMESTAMP_QUERY);
        let max_binding_bytes = limits
            .max_storage_buffer_binding_size
            .min(limits.max_buffer_size)
            .min(MAX_TILE_BYTES);
        Self {
            device,
            queue,
            adapter,
            bind_group_layout,
            pipeline_layout,
            pipelines: Mutex::new(HashMap::new()),
            max_binding_bytes,
            timestamps,
            colormap: std::sync::OnceLock::new(),
            reduce: std::sync::OnceLock::new(),
        }
    }

    /// Caps tiles at `bytes` (at least one row of 4-byte values): smaller tiles exercise the
    /// tiling that large tables need, at sizes tests can afford.
    pub fn with_max_tile_bytes(mut self, bytes: u64) -> Self {
        self.max_binding_bytes = self.max_binding_bytes.min(bytes.max(4));
        self
    }

    /// The adapter, as "name (backend, device type)".
    pub fn adapter_description(&self) -> String {
        format!(
            "{} ({:?}, {:?})",
            self.adapter.name, self.adapter.backend, self.adapter.device_type
        )
    }

    /// Whether the adapter is a software renderer on the CPU (llvmpipe, lavapipe, WARP).
    pub fn is_software(&self) -> bool {
        self.adapter.device_type == wgpu::DeviceType::Cpu
    }

    /// Computes the whole table.
    pub fn compute(&self, spec: &TableSpec) -> Result<Table, EngineError> {
        self.compute_arith(spec, Arithmetic::Exact)
    }

    /// Computes the whole table in `arith` (exact, or PyTorch's float32 angles).
    pub fn compute_arith(&self, spec: &TableSpec, arith: Arithmetic) -> Result<Table, EngineError> {
        spec.validate()?;
        spec.check_fits(super::available_memory_bytes())?;
        self.compute_window_arith(spec, &Window::all(spec.matrix_shape()), arith)
    }

    /// Computes only `window` of the table.
    pub fn compute_window(&self, spec: &TableSpec, window: &Window) -> Result<Table, EngineError> {
        self.compute_window_arith(spec, window, Arithmetic::Exact)
    }

    /// Computes only `window` of the table in `arith`.
    pub fn compute_window_arith(
        &self,
        spec: &TableSpec,
        window: &Window,
        arith: Arithmetic,
    ) -> Result<Table, EngineError> {
        window.check(spec.matrix_shape())?;
        self.block_source(spec, arith)?.block(window)
    }

    /// What blocks of `spec` are computed from: its plan, made once for the whole table.
    pub fn block_source<'a>(
        &'a self,
        spec: &'a TableSpec,
        arith: Arithmetic,
    ) -> Result<GpuBlocks<'a>, EngineError> {
        spec.validate()?;
        super::check_arithmetic(spec, arith)?;
        check_positions(spec)?;
        Ok(GpuBlocks {
            engine: self,
            spec,
            plan: Plan::new(spec, arith),
        })
    }
}

/// A table's plan on one engine: windows of it computed one after another.
pub struct GpuBlocks<'a> {
    engine: &'a GpuEngine,
    spec: &'a TableSpec,
    plan: Plan,
}

impl GpuBlocks<'_> {
    /// The window `window` (checked by the caller) of the table.
    pub fn block(&self, window: &Window) -> Result<Table, EngineError> {
        let (spec, plan) = (self.spec, &self.plan);
        let ndim = spec.shape().map_or(0, |s| s.len());
        let (words, _) = self.engine.run(plan, spec, window, Sink::ReadBack)?;
        let shape = IxDyn(&window.output_shape(ndim));
        let table = if plan.index {
            let values: Vec<i32> = words.into_iter().map(|w| w as i32).collect();
            Table::Index(ArrayD::from_shape_vec(shape, values).map_err(readback_error)?)
        } else {
            let values: Vec<f64> = words
                .into_iter()
                .map(|w| f64::from(f32::from_bits(w)))
                .collect();
            Table::Real(ArrayD::from_shape_vec(shape, values).map_err(readback_error)?)
        };
        Ok(table)
    }
}

impl GpuEngine {
    /// Computes the whole table on the GPU without reading it back, and says how long the
    /// kernels took: what `poslab bench` reports as compute time.
    pub fn time_kernels(
        &self,
        spec: &TableSpec,
        arith: Arithmetic,
    ) -> Result<KernelTime, EngineError> {
        spec.validate()?;
        super::check_arithmetic(spec, arith)?;
        window_fits(spec)?;
        check_positions(spec)?;
        let plan = Plan::new(spec, arith);
        let (_, duration) = self.run(
            &plan,
            spec,
            &Window::all(spec.matrix_shape()),
            Sink::Discard,
        )?;
        Ok(KernelTime {
            duration,
            timestamped: self.timestamps,
        })
    }

    fn pipeline(&self, shader: ShaderSource, entry: &'static str) -> wgpu::ComputePipeline {
        let mut pipelines = self.pipelines.lock().unwrap_or_else(|e| e.into_inner());
        pipelines
            .entry(entry)
            .or_insert_with(|| {
                let module = self
                    .device
                    .create_shader_module(wgpu::ShaderModuleDescriptor {
                        label: Some(shader.label),
                        source: wgpu::ShaderSource::Wgsl(shader.source.into()),
                    });
                self.device
                    .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                        label: Some(entry),
                        layout: Some(&self.pipeline_layout),
                        module: &module,
                        entry_point: Some(entry),
                        compilation_options: Default::default(),
                        cache: None,
                    })
            })
            .clone()
    }

    fn uniform_buffer(&self, label: &str, bytes: &[u8]) -> wgpu::Buffer {
        let buffer = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: bytes.len() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        self.queue.write_buffer(&buffer, 0, bytes);
        buffer
    }

    fn storage_buffer(&self, label: &str, contents: &[u32]) -> wgpu::Buffer {
        // A binding may not be empty; a placeholder word stands in for no data.
        let contents: &[u32] = if contents.is_empty() { &[0] } else { contents };
        let buffer = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: (contents.len() * 4) as u64,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        self.queue
            .write_buffer(&buffer, 0, bytemuck::cast_slice(contents));
        buffer
    }

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

    fn bind_group(
        &self,
        params: &wgpu::Buffer,
        constants: &wgpu::Buffer,
        input: &wgpu::Buffer,
        output: &wgpu::Buffer,
    ) -> wgpu::BindGroup {
        self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("kernel bindings"),
            layout: &self.bind_group_layout,
            entries: &[
                entry(0, params),
                entry(1, constants),
                entry(2, input),
                entry(3, output),
            ],
        })
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

fn entry(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
    wgpu::BindGroupEntry {
        binding,
        resource: buffer.as_entire_binding(),
    }
}

fn readback_error(error: impl std::fmt::Display) -> EngineError {
    EngineError::Gpu(GpuError::Readback(error.to_string()))
}

/// Window indices on the GPU are u32; tables that large are refused earlier by memory.
fn to_u32(value: usize) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

/// Refuses a table too large for memory before any GPU work.
fn window_fits(spec: &TableSpec) -> Result<(), EngineError> {
    spec.check_fits(super::available_memory_bytes())?;
    Ok(())
}

/// Flag bit 1 of the cache kernels: the sine cache rather than the cosine one.
fn cache_part_flag(part: rope::CachePart) -> u32 {
    match part {
        rope::CachePart::Cos => 0,
        rope::CachePart::Sin => 2,
    }
}

/// Refuses positions the shaders' 32-bit arithmetic cannot hold.
pub(super) fn check_positions(spec: &TableSpec) -> Result<(), GpuError> {
    let (start, seq) = match spec {
        TableSpec::Sinusoidal(p) | TableSpec::Similarity(p) => (p.start, p.seq),
        TableSpec::DotDecay { params, .. } => (params.start, params.seq),
        TableSpec::RopeAngles { params, .. } | TableSpec::RopeCache { params, .. } => {
            (params.start, params.seq)
        }
        TableSpec::RopeApply { input, start, .. } => (*start, input.nrows()),
        TableSpec::Binary(p) => (p.start, p.seq),
        _ => return Ok(()),
    };
    let last = start + seq as u64 - 1;
    if last > u64::from(u32::MAX) {
        return Err(GpuError::PositionsTooLarge { last });
    }
    Ok(())
}

/// Which kernel computes a table, with its constants and fixed parameters.
pub(super) struct Plan {
    shader: ShaderSource,
    entry: &'static str,
    /// The cells one workgroup computes along columns and rows: its size, times the cells each
    /// invocation computes where a kernel loops (the sinusoidal mean's rows).
    workgroup: [u32; 2],
    constants: Vec<u32>,
    params: KernelParams,
    /// The head a one-head table comes from.
    first_head: usize,
    /// Whether the words are i32 (index tables) rather than f32 bits.
    index: bool,
}

const TILE_2D: [u32; 2] = [16, 16];
const TILE_1D: [u32; 2] = [256, 1];

impl Plan {
    /// The plan for a validated spec.
    pub(super) fn new(spec: &TableSpec, arith: Arithmetic) -> Self {
        let exact = Self::exact(spec);
        match arith {
            Arithmetic::Exact => exact,
            Arithmetic::TorchF32(mode) => exact.in_torch_f32(spec, mode),
        }
    }

    /// The plan in exact arithmetic.
    fn exact(spec: &TableSpec) -> Self {
        let plan = |shader, entry, workgroup, constants, params| Plan {
            shader,
            entry,
            workgroup,
            constants,
            params,
            first_head: 0,
            index: false,
        };
        let turns_of =
            |freqs: &[f64]| -> Vec<u32> { freqs.iter().flat_map(|&w| turns_per_step(w)).collect() };
        let split_of =
            |values: &[f64]| -> Vec<u32> { values.iter().flat_map(|&v| split_f64(v)).collect() };
        let sinusoidal_params = |p: &SinusoidalParams| KernelParams {
            flags: u32::from(p.layout == SinusoidalLayout::Split),
            position_start: p.start as u32,
            dim: p.dim as u32,
            ..Default::default()
        };
        let words_of = |turns: Vec<TurnsPerStep>| -> Vec<u32> {
            turns.iter().flat_map(|t| t.words()).collect()
        };
        let sinusoidal_turns = |p: &SinusoidalParams| words_of(p.turns());
        // The RoPE kinds' frequencies to about 104 bits, so that the shaders' 64-bit turns are
        // rounded once from the exact frequency rather than from its f64.
        let rope_turns = || words_of(spec.rope_turns().unwrap_or_default());
        // Inverse frequencies, rotary width and attention factor of a RoPE kind.
        let (theta, rotary, attention) = spec.rope_frequencies().unwrap_or_default();
        // Rotary width, pair layout and attention factor of the rotation kernels.
        let rotation_params = |layout: RopeLayout, start: u64, extra_flags: u32| KernelParams {
            flags: u32::from(layout == RopeLayout::Half) | extra_flags,
            position_start: start as u32,
            dim: rotary as u32,
            scalar0: attention as f32,
            ..Default::default()
        };
        match spec {
            TableSpec::Sinusoidal(p) => plan(
                shaders::SINUSOIDAL,
                "sinusoidal_table",
                TILE_2D,
                sinusoidal_turns(p),
                sinusoidal_params(p),
            ),
            TableSpec::DotDecay { params, anchor } => plan(
                shaders::SINUSOIDAL,
                "sinusoidal_dot_decay",
                TILE_1D,
                sinusoidal_turns(params),
                KernelParams {
                    extra: *anchor as u32,
                    ..sinusoidal_params(params)
                },
            ),
            TableSpec::Similarity(p) => plan(
                shaders::TOEPLITZ,
                "toeplitz_fill",
                TILE_2D,
                sinusoidal_turns(p),
                sinusoidal_params(p),
            ),
            TableSpec::RopeInvFreq { .. } => plan(
                shaders::ROPE,
                "constants_table",
                TILE_1D,
                split_of(&theta),
                KernelParams::default(),
            ),
            TableSpec::RopeAttentionFactor { .. } => plan(
                shaders::ROPE,
                "constants_table",
                TILE_1D,
                split_of(&[attention]),
                KernelParams::default(),
            ),
            TableSpec::RopeAngles { params, .. } => plan(
                shaders::ROPE,
                "rope_angles",
                TILE_2D,
                split_of(&theta),
                KernelParams {
                    position_start: params.start as u32,
                    ..Default::default()
                },
            ),
            TableSpec::RopeCache {
                params,
                layout,
                part,
                ..
            } => plan(
                shaders::ROPE,
                "rope_cache",
                TILE_2D,
                rope_turns(),
                rotation_params(*layout, params.start, cache_part_flag(*part)),
            ),
            TableSpec::RopeApply {
                input,
                layout,
                start,
                ..
            } => plan(
                shaders::ROPE,
                "rope_apply",
                TILE_2D,
                rope_turns(),
                KernelParams {
                    // The input's row width, for the rows passed through.
                    grid_w: input.ncols() as u32,
                    ..rotation_params(*layout, *start, 0)
                },
            ),
            TableSpec::AlibiSlopes { heads } => plan(
                shaders::ROPE,
                "constants_table",
                TILE_1D,
                split_of(&alibi::slopes_unchecked(*heads)),
                KernelParams::default(),
            ),
            TableSpec::Alibi { params, head } => Plan {
                first_head: head.unwrap_or(0),
                ..plan(
                    shaders::ALIBI,
                    "alibi_bias",
                    TILE_2D,
                    split_of(&alibi::slopes_unchecked(params.heads)),
                    KernelParams {
                        flags: u32::from(params.mode == alibi::AlibiMode::Causal),
                        ..Default::default()
                    },
                )
            },
            TableSpec::AlibiKeys {
                heads,
                seq,
                form,
                head,
            } => Plan {
                first_head: head.unwrap_or(0),
                ..plan(
                    shaders::ALIBI,
                    "alibi_keys",
                    TILE_2D,
                    split_of(&alibi::slopes_unchecked(*heads)),
                    KernelParams {
                        // The key whose bias is 0: the first (BLOOM) or the last (MPT).
                        extra: match form {
                            alibi::AlibiForm::Bloom => 0,
                            _ => to_u32(seq - 1),
                        },
                        ..Default::default()
                    },
                )
            },
            TableSpec::Alibi2d { params, head } => Plan {
                first_head: head.unwrap_or(0),
                ..plan(
                    shaders::ALIBI,
                    "alibi_bias_2d",
                    TILE_2D,
                    split_of(&alibi::slopes_unchecked(params.heads)),
                    KernelParams {
                        grid_w: params.grid.grid_w as u32,
                        ..Default::default()
                    },
                )
            },
            TableSpec::PatchDistance { grid, metric } => plan(
                shaders::GRID,
                "patch_distance_table",
                TILE_2D,
                Vec::new(),
                KernelParams {
                    flags: match metric {
                        DistanceMetric::Euclidean => 0,
                        DistanceMetric::Manhattan => 1,
                        DistanceMetric::Chebyshev => 2,
                    },
                    grid_w: grid.grid_w as u32,
                    ..Default::default()
                },
            ),
            TableSpec::SinCos2d(p) => plan(
                shaders::GRID,
                "sincos_2d",
                TILE_2D,
                turns_of(&p.omega()),
                KernelParams {
                    // Bits 0-7: the four blocks' codes; bit 8: column raster.
                    flags: p
                        .order
                        .iter()
                        .enumerate()
                        .fold(0, |flags, (i, block)| flags | (block.code() << (2 * i)))
                        | (u32::from(p.raster == crate::encoding::grid::Raster::Columns) << 8),
                    dim: p.dim as u32,
                    grid_w: p.grid.grid_w as u32,
                    extra: to_u32(p.prefix_rows),
                    // Exact in f32: grid sides are at most 65536.
                    scalar1: p.grid.grid_h as f32,
                    ..Default::default()
                },
            ),
            TableSpec::SinCos2dResample { input, params } => {
                let (rows, cols) = params.taps();
                let pack = |axis: &AxisTaps| -> Vec<u32> {
                    axis.taps
                        .iter()
                        .flat_map(|&(i, w)| [to_u32(i), w.to_bits()])
                        .collect()
                };
                let (row_taps, col_taps) = (pack(&rows), pack(&cols));
                let header = [
                    to_u32(rows.per_output),
                    to_u32(cols.per_output),
                    to_u32(params.from.1),
                    to_u32(4 + row_taps.len()),
                ];
                plan(
                    shaders::GRID,
                    "resample_2d",
                    TILE_2D,
                    [header.as_slice(), &row_taps, &col_taps].concat(),
                    KernelParams {
                        dim: to_u32(input.ncols()),
                        grid_w: to_u32(params.to.1),
                        extra: to_u32(params.prefix_rows),
                        ..Default::default()
                    },
                )
            }
            TableSpec::Rope2dAxial(p) => plan(
                shaders::ROPE_2D,
                "rope_2d_axial",
                TILE_2D,
                split_of(&p.frequencies()),
                KernelParams {
                    dim: p.dim as u32,
                    grid_w: p.grid.grid_w as u32,
                    ..Default::default()
                },
            ),
            TableSpec::Rope2dMixed { grid, freqs } => plan(
                shaders::ROPE_2D,
                "rope_2d_mixed",
                TILE_2D,
                split_of(&freqs.iter().copied().collect::<Vec<_>>()),
                KernelParams {
                    dim: freqs.ncols() as u32,
                    grid_w: grid.grid_w as u32,
                    ..Default::default()
                },
            ),
            TableSpec::T5Buckets(p) => {
                let (thresholds, max_exact, per_direction) = t5_thresholds(p);
                Plan {
                    index: true,
                    ..plan(
                        shaders::RELATIVE,
                        "t5_buckets",
                        TILE_2D,
                        thresholds.clone(),
                        KernelParams {
                            flags: u32::from(p.bidirectional),
                            dim: per_direction,
                            grid_w: thresholds.len() as u32,
                            extra: max_exact,
                            ..Default::default()
                        },
                    )
                }
            }
            TableSpec::RelativeClip(p) => Plan {
                index: true,
                ..plan(
                    shaders::RELATIVE,
                    "relative_clip",
                    TILE_2D,
                    Vec::new(),
                    KernelParams {
                        extra: p.max_relative as u32,
                        ..Default::default()
                    },
                )
            },
            TableSpec::PatchSimilarity(p) => {
                let pairs = p.frequency_pairs();
                plan(
                    shaders::GRID,
                    "patch_similarity",
                    TILE_2D,
                    pairs
                        .iter()
                        .flat_map(|&(fx, fy)| {
                            let [a, b] = turns_per_step(fx);
                            let [c, d] = turns_per_step(fy);
                            [a, b, c, d]
                        })
                        .collect(),
                    KernelParams {
                        dim: pairs.len() as u32,
                        grid_w: p.grid.grid_w as u32,
                        ..Default::default()
                    },
                )
            }
            TableSpec::Binary(p) => plan(
                shaders::BINARY,
                "binary_table",
                TILE_2D,
                Vec::new(),
                KernelParams {
                    position_start: p.start as u32,
                    ..Default::default()
                },
            ),
        }
    }
}

impl Plan {
    /// The same plan in PyTorch's float32 arithmetic, for the kinds that have one: the same
    /// parameters with the torch kernels and their constants (see shaders/common/torch_f32.wgsl).
    fn in_torch_f32(self, spec: &TableSpec, mode: TorchMode) -> Self {
        if matches!(
            spec,
            TableSpec::AlibiSlopes { .. } | TableSpec::AlibiKeys { .. }
        ) {
            // The same kernels, with the f32 slopes exactly as the high part: the product in
            // the per-key kernel is then torch's f32 product.
            let constants = crate::engine::torch_slopes(spec, mode)
                .iter()
                .flat_map(|&m| [(m as f32).to_bits(), 0])
                .collect();
            return Plan { constants, ..self };
        }
        let frequencies = crate::engine::torch_frequencies(spec, mode);
        let (entry, constants) = match spec {
            TableSpec::Sinusoidal(_) => {
                ("sinusoidal_table_torch", torch_f32_constants(&frequencies))
            }
            // The f32 frequencies themselves: the high part alone.
            TableSpec::RopeInvFreq { .. } => (
                "constants_table",
                frequencies
                    .iter()
                    .flat_map(|&t| [(t as f32).to_bits(), 0])
                    .collect(),
            ),
            TableSpec::RopeAngles { .. } => {
                ("rope_angles_torch", torch_f32_constants(&frequencies))
            }
            TableSpec::RopeCache { .. } => ("rope_cache_torch", torch_f32_constants(&frequencies)),
            TableSpec::RopeApply { .. } => ("rope_apply_torch", torch_f32_constants(&frequencies)),
            _ => return self,
        };
        Plan {
            entry,
            constants,
            ..self
        }
    }
}

/// The bucket edges of T5: for each bucket `max_exact + b` within a direction, the smallest
/// distance that reaches it, found by bisection on the CPU engine's float32 evaluation.
fn t5_thresholds(p: &crate::encoding::relative::T5BucketParams) -> (Vec<u32>, u32, u32) {
    let per_direction = if p.bidirectional {
        p.num_buckets / 2
    } else {
        p.num_buckets
    };
    let max_exact = per_direction / 2;
    // A decoder's distances are key-behind-query offsets: bucket(-d).
    let bucket_within = |distance: u64| -> usize { p.bucket(-(distance as i64)) as usize };
    let thresholds = (0..per_direction - max_exact)
        .map(|b| {
            let target = max_exact + b;
            let (mut low, mut high) = (max_exact as u64, u64::from(u32::MAX));
            if bucket_within(high) < target {
                return u32::MAX;
            }
            // bucket_within is non-decreasing in the distance: find the first that reaches target.
            while low < high {
                let middle = low + (high - low) / 2;
                if bucket_within(middle) >= target {
                    high = middle;
                } else {
                    low = middle + 1;
                }
            }
            low as u32
        })
        .collect();
    (thresholds, max_exact as u32, per_direction as u32)
}
