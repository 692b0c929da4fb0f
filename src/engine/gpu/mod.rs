//! The GPU engine: every table computed by wgpu compute shaders (WGSL in `shaders/`), in f32.
//!
//! Angles are reduced exactly with integer arithmetic on fixed-point turns and evaluated with
//! polynomials of our own, so tables agree with the CPU engine to about 2e-7 whatever the
//! adapter's `sin`/`cos` do. Per-column constants (frequencies, slopes, T5 bucket edges) are
//! prepared in f64 on the CPU; every table value is computed on the GPU. Tables larger than
//! one storage binding are computed in tiles.
//!
//! Here: the device, its pipelines and buffers. `plan` says which kernel computes a table and
//! with what constants, `tiles` runs it over a window, `reduce` turns a window whose pixels
//! cover several cells into one value per pixel, `shaders` holds the WGSL.

mod gpu_data;
mod plan;
mod reduce;
pub mod shaders;
mod tiles;

use plan::Plan;

use std::collections::HashMap;
use std::sync::Mutex;

use ndarray::{ArrayD, IxDyn};

use super::{EngineError, Table, TableSpec, Window};
use crate::encoding::torch_f32::Arithmetic;
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
    #[error("{0} is computed by the CPU engine only ({1}); leave out --backend gpu")]
    CpuOnly(&'static str, &'static str),
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
    /// The heatmap reduction pipeline, made on first use.
    reduce: std::sync::OnceLock<reduce::ReducePipeline>,
}

/// What takes each tile read back: where it lies in the window, and its values as the device
/// holds them (4 bytes each, f32 or i32, in window order within the tile).
type ReadBackConsumer<'a> = dyn FnMut(&tiles::TilePlace, &[u8]) -> Result<(), EngineError> + 'a;

/// Where a computation's values go.
enum Sink<'a> {
    /// Back to main memory, each tile handed over as it arrives, in window order.
    ReadBack(&'a mut ReadBackConsumer<'a>),
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

/// Caps one tile of a table that stays on the device (timed, or into a device buffer): the
/// largest binding the adapter allows up to 1 GiB, so that a large table is few dispatches
/// while its tile buffer stays a fraction of a card's memory. Tiles read back are smaller
/// (`tiles::READBACK_TILE_WORDS`).
const MAX_TILE_BYTES: u64 = 1 << 30;
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
            // Timestamps where the adapter has them, for `poslab bench`; storage buffers
            // mapped in place where its memory is the host's (see `tiles::stream_tiles`).
            required_features: adapter.features()
                & (wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::MAPPABLE_PRIMARY_BUFFERS),
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

    /// Whether the adapter is the browser's WebGPU (the web page).
    pub fn is_browser_webgpu(&self) -> bool {
        self.adapter.backend == wgpu::Backend::BrowserWebGpu
    }

    /// The browser's WebGPU adapter as the status bar names it: browsers often keep the
    /// adapter's name to themselves.
    pub fn browser_adapter_description(&self) -> String {
        let kind = if self.is_software() {
            " (a software adapter)"
        } else {
            ""
        };
        match self.adapter.name.trim() {
            "" => format!("WebGPU{kind}"),
            name => format!("WebGPU: {name}{kind}"),
        }
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
            plan: Plan::new(spec, arith)?,
        })
    }
}

/// A table's plan on one engine: windows of it computed one after another.
pub struct GpuBlocks<'a> {
    engine: &'a GpuEngine,
    spec: &'a TableSpec,
    plan: Plan,
}

impl GpuEngine {
    /// As [`Self::compute_window`], giving the thread back while the device computes (the
    /// web page's heatmaps): the window is computed into one device buffer, then read back.
    pub async fn compute_window_async(
        &self,
        spec: &TableSpec,
        window: &Window,
    ) -> Result<Table, EngineError> {
        window.check(spec.matrix_shape())?;
        let blocks = self.block_source(spec, Arithmetic::Exact)?;
        let bytes = window.len().max(1) as u64 * 4;
        if bytes > self.max_binding_bytes {
            return Err(readback_error(
                "a window this large is computed tile by tile, with a readback that waits",
            ));
        }
        let buffer = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("window"),
            size: bytes,
            // A window of several tiles is copied into it tile by tile.
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        self.run(&blocks.plan, spec, window, Sink::Buffer(&buffer))?;
        let raw = self.read_buffer_async(&buffer, bytes).await?;
        let mut words: Vec<u32> = bytemuck::cast_slice(&raw).to_vec();
        words.truncate(window.len());
        blocks.table(window, words)
    }
}

impl GpuBlocks<'_> {
    /// The window `window` (checked by the caller) of the table.
    pub fn block(&self, window: &Window) -> Result<Table, EngineError> {
        let (spec, plan) = (self.spec, &self.plan);
        let (rows, cols) = (window.rows.len(), window.cols.len());
        let mut words = vec![0u32; window.len()];
        let mut scatter = |place: &tiles::TilePlace, bytes: &[u8]| {
            let tile: &[u32] = bytemuck::cast_slice(bytes);
            let (nh, nr, nc) = (place.heads.1, place.rows.1, place.cols.1);
            for h in 0..nh {
                for r in 0..nr {
                    let from = (h * nr + r) * nc;
                    let to = ((place.heads.0 + h) * rows + place.rows.0 + r) * cols + place.cols.0;
                    words[to..to + nc].copy_from_slice(&tile[from..from + nc]);
                }
            }
            Ok(())
        };
        self.engine
            .run(plan, spec, window, Sink::ReadBack(&mut scatter))?;
        self.table(window, words)
    }

    /// The table of `window` from its words in C order, as the device wrote them.
    fn table(&self, window: &Window, words: Vec<u32>) -> Result<Table, EngineError> {
        let ndim = self.spec.ndim();
        let shape = IxDyn(&window.output_shape(ndim));
        let table = if self.plan.index {
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

impl GpuBlocks<'_> {
    /// The whole table's values in C order as the device holds them (4 bytes each: f32, or
    /// i32 for an index table), a tile at a time, each read back while the next computes:
    /// what `poslab table --backend gpu` writes to its file as they come.
    pub fn stream(
        &self,
        consume: &mut dyn FnMut(&[u8]) -> Result<(), EngineError>,
    ) -> Result<(), EngineError> {
        let window = Window::all(self.spec.matrix_shape());
        // Tiles of a whole window follow each other in C order (see `GpuEngine::run`).
        let mut hand = |_: &tiles::TilePlace, bytes: &[u8]| consume(bytes);
        self.engine
            .run(&self.plan, self.spec, &window, Sink::ReadBack(&mut hand))?;
        Ok(())
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
        self.time_plan(spec, arith, |plan| plan)
    }

    /// The time of `spec`'s plan, changed by `change`, over the whole table in one
    /// submission, its values discarded.
    fn time_plan(
        &self,
        spec: &TableSpec,
        arith: Arithmetic,
        change: impl FnOnce(Plan) -> Plan,
    ) -> Result<KernelTime, EngineError> {
        spec.validate()?;
        super::check_arithmetic(spec, arith)?;
        window_fits(spec)?;
        check_positions(spec)?;
        let plan = change(Plan::new(spec, arith)?);
        let duration = self.run(
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

    /// How long a kernel that only stores takes over the same tiles as `spec`'s kernel (the
    /// same buffer, tile sizes and dispatch shape, in one submission): the most that
    /// kernel's writes could reach on this adapter, what `poslab bench` reports beside it.
    pub fn time_fill(
        &self,
        spec: &TableSpec,
        arith: Arithmetic,
    ) -> Result<KernelTime, EngineError> {
        self.time_plan(spec, arith, |mut plan| {
            let (entry, workgroup) = match plan.workgroup {
                [256, 1] => ("fill_256", [256, 1]),
                [64, 1] => ("fill_64", [64, 1]),
                _ => ("fill_16x16", [16, 16]),
            };
            plan.shader = shaders::FILL;
            plan.entry = entry;
            plan.workgroup = workgroup;
            // Four words a store where the table's rows allow: the faster of the two fills.
            plan.wide = Some((shaders::FILL_WIDE, "fill_wide"));
            plan.params.extra = 0x3f80_0000;
            plan
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
