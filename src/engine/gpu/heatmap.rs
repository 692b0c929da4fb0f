//! Heatmap textures computed on the device: a table window goes from the table kernel to an
//! rgba8 texture without visiting main memory, ready for egui to draw.

use super::{GpuEngine, Plan, Sink, check_positions, readback_error};
use crate::encoding::torch_f32::Arithmetic;
use crate::engine::reduce::{Reduce, Sampling, sampling};
use crate::engine::{EngineError, TableSpec, Window};

/// A reduced window's values, from the bytes read back.
fn reduced_values(bytes: &[u8], window: &Window) -> Vec<f32> {
    let mut values: Vec<f32> = bytemuck::cast_slice(bytes).to_vec();
    values.truncate(window.rows.len() * window.cols.len());
    values
}

/// f32 bits as u32 codes whose unsigned order is numeric order (as colormap.wgsl codes them).
fn order_code(value: f32) -> u32 {
    let bits = value.to_bits();
    if bits & 0x8000_0000 != 0 {
        !bits
    } else {
        bits | 0x8000_0000
    }
}

/// Keep in sync with `ColormapParams` in shaders/colormap.wgsl.
#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct ColormapParams {
    rows: u32,
    cols: u32,
    symmetric: u32,
    /// The colour of masked cells, packed rgba8.
    masked: u32,
    /// Pixels from one row to the next in the pixel buffer.
    row_pixels: u32,
    _pad: [u32; 3],
}

/// Pixels from one row to the next in a heatmap's pixel buffer: a buffer-to-texture copy's rows
/// are 256-byte aligned.
fn row_pixels(cols: u32) -> u32 {
    cols.div_ceil(64) * 64
}

/// Pixel rows one invocation of the colour map computes. Keep in sync with shaders/colormap.wgsl.
pub(super) const COLORMAP_ROWS_PER_INVOCATION: u32 = 8;

/// Values each thread of the range pass reduces. Keep in sync with shaders/colormap.wgsl.
pub(super) const VALUES_PER_THREAD: u32 = 64;

/// A storage or uniform buffer binding of a compute pass.
pub(super) fn buffer_binding(ty: wgpu::BufferBindingType) -> wgpu::BindingType {
    wgpu::BindingType::Buffer {
        ty,
        has_dynamic_offset: false,
        min_binding_size: None,
    }
}

/// The colour-mapping pipelines, made on first use.
pub(super) struct ColormapPipelines {
    layout: wgpu::BindGroupLayout,
    value_range: wgpu::ComputePipeline,
    colormap: wgpu::ComputePipeline,
}

/// A window of a table as a texture on the device, with the values behind it.
pub struct GpuHeatmap {
    pub texture: wgpu::Texture,
    pub view: wgpu::TextureView,
    /// The window's values, f32, in row order.
    pub values: wgpu::Buffer,
    /// The texture's pixels before their copy into it, packed rgba8, rows [`row_pixels`] apart.
    pixels: wgpu::Buffer,
    /// `[cols, rows]`.
    pub size: [u32; 2],
    /// The value range the colours span.
    pub range: (f64, f64),
    /// How the window's cells became its pixels.
    pub sampling: Sampling,
    /// The range on its way back from the device; `range` is the previous one meanwhile.
    pending_range: Option<PendingRange>,
}

/// A value range the device has been asked to send back.
struct PendingRange {
    readable: wgpu::Buffer,
    answer: std::sync::mpsc::Receiver<Result<(), wgpu::BufferAsyncError>>,
    symmetric: bool,
    fixed: bool,
}

impl GpuEngine {
    fn colormap_pipelines(&self) -> &ColormapPipelines {
        self.colormap.get_or_init(|| {
            let (layout, pipelines) = self.pass_pipelines(
                super::shaders::COLORMAP,
                &[
                    buffer_binding(wgpu::BufferBindingType::Uniform),
                    buffer_binding(wgpu::BufferBindingType::Storage { read_only: true }),
                    buffer_binding(wgpu::BufferBindingType::Storage { read_only: false }),
                    buffer_binding(wgpu::BufferBindingType::Storage { read_only: true }),
                    buffer_binding(wgpu::BufferBindingType::Storage { read_only: false }),
                ],
                &["value_range", "colormap"],
            );
            let [value_range, colormap] = <[wgpu::ComputePipeline; 2]>::try_from(pipelines)
                .unwrap_or_else(|_| unreachable!("two entry points asked for"));
            ColormapPipelines {
                layout,
                value_range,
                colormap,
            }
        })
    }

    /// A pass with bindings of its own (not the table kernels' layout): its bind group layout,
    /// every binding visible to compute in the order given, and one pipeline per entry point.
    pub(super) fn pass_pipelines(
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

    /// Computes one head's `window` of `spec` and colour-maps it into a texture, all on the
    /// device. `colors` is the colour map's 256 colours then the masked cells' colour, packed
    /// rgba8 ([`crate::colormap::Colormap::lut`]). Where the window's steps are above 1, each pixel is the `reduce` of the cells
    /// it covers (see [`crate::engine::reduce`]). `colors` is the colour map as 256 packed rgba8
    /// values; `symmetric` centres the range on 0; `fixed_range` maps that range instead of the
    /// values' own (to compare several heatmaps on one scale). A previous heatmap of the same
    /// size is reused.
    /// The range the colours span arrives later: see [`Self::poll_heatmap_range`].
    #[allow(clippy::too_many_arguments)]
    pub fn render_heatmap_async(
        &self,
        spec: &TableSpec,
        window: &Window,
        reduce: Reduce,
        colors: &[u32; 257],
        symmetric: bool,
        fixed_range: Option<(f32, f32)>,
        previous: Option<GpuHeatmap>,
    ) -> Result<GpuHeatmap, EngineError> {
        spec.validate()?;
        window.check(spec.matrix_shape())?;
        check_positions(spec)?;
        let (rows, cols) = (window.rows.len() as u32, window.cols.len() as u32);
        let limits = self.device.limits();
        let limit = limits.max_texture_dimension_2d;
        if window.heads.len() != 1 || rows > limit || cols > limit {
            return Err(readback_error(format!(
                "a heatmap texture holds one head of at most {limit} x {limit} values"
            )));
        }
        let pixel_bytes = u64::from(rows) * u64::from(row_pixels(cols)) * 4;
        if pixel_bytes > limits.max_storage_buffer_binding_size {
            return Err(readback_error(format!(
                "a {cols} x {rows} heatmap needs {pixel_bytes} bytes of pixels, more than one \
                 device buffer binds ({})",
                limits.max_storage_buffer_binding_size
            )));
        }
        let heatmap = match previous {
            Some(previous) if previous.size == [cols, rows] => previous,
            _ => self.new_heatmap(cols, rows),
        };
        let sampling = sampling(spec, window, reduce);
        match sampling {
            Sampling::Reduced(reduce) => self.reduce_into(spec, window, reduce, &heatmap.values)?,
            Sampling::Exact | Sampling::PointSampled => {
                let plan = Plan::new(spec, Arithmetic::Exact)?;
                self.run(&plan, spec, window, Sink::Buffer(&heatmap.values))?;
            }
        }

        let pipelines = self.colormap_pipelines();
        let params = ColormapParams {
            rows,
            cols,
            symmetric: u32::from(symmetric),
            masked: colors[256],
            row_pixels: row_pixels(cols),
            _pad: [0; 3],
        };
        let params = self.uniform_buffer("colormap params", bytemuck::bytes_of(&params));
        let range_codes = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("range codes"),
            size: 8,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_DST
                | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let initial_codes = match fixed_range {
            Some((low, high)) => [order_code(low), order_code(high)],
            None => [u32::MAX, 0],
        };
        self.queue
            .write_buffer(&range_codes, 0, bytemuck::cast_slice(&initial_codes));
        let colors = self.storage_buffer("colour map", &colors[..256]);
        let bind_group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("colormap bindings"),
            layout: &pipelines.layout,
            entries: &[
                super::entry(0, &params),
                super::entry(1, &heatmap.values),
                super::entry(2, &range_codes),
                super::entry(3, &colors),
                super::entry(4, &heatmap.pixels),
            ],
        });
        let readable = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("value range readback"),
            size: 8,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = self.device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_bind_group(0, &bind_group, &[]);
            if fixed_range.is_none() {
                pass.set_pipeline(&pipelines.value_range);
                let groups = (rows * cols).div_ceil(256 * VALUES_PER_THREAD);
                pass.dispatch_workgroups(groups.min(65_535), groups.div_ceil(65_535), 1);
            }
            pass.set_pipeline(&pipelines.colormap);
            pass.dispatch_workgroups(
                cols.div_ceil(16),
                rows.div_ceil(16 * COLORMAP_ROWS_PER_INVOCATION),
                1,
            );
        }
        encoder.copy_buffer_to_texture(
            wgpu::TexelCopyBufferInfo {
                buffer: &heatmap.pixels,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(row_pixels(cols) * 4),
                    rows_per_image: Some(rows),
                },
            },
            heatmap.texture.as_image_copy(),
            heatmap.texture.size(),
        );
        encoder.copy_buffer_to_buffer(&range_codes, 0, &readable, 0, 8);
        self.queue.submit([encoder.finish()]);
        // Only the two range values come back, for the colour bar's labels, when the device
        // gets there: the caller does not wait for them.
        let (sender, receiver) = std::sync::mpsc::channel();
        readable
            .slice(..8)
            .map_async(wgpu::MapMode::Read, move |result| {
                let _ = sender.send(result);
            });
        Ok(GpuHeatmap {
            sampling,
            pending_range: Some(PendingRange {
                readable,
                answer: receiver,
                symmetric,
                fixed: fixed_range.is_some(),
            }),
            ..heatmap
        })
    }

    /// Computes and colour-maps like [`Self::render_heatmap_async`], and waits for the range.
    #[allow(clippy::too_many_arguments)]
    pub fn render_heatmap(
        &self,
        spec: &TableSpec,
        window: &Window,
        reduce: Reduce,
        colors: &[u32; 257],
        symmetric: bool,
        fixed_range: Option<(f32, f32)>,
        previous: Option<GpuHeatmap>,
    ) -> Result<GpuHeatmap, EngineError> {
        let mut heatmap = self.render_heatmap_async(
            spec,
            window,
            reduce,
            colors,
            symmetric,
            fixed_range,
            previous,
        )?;
        self.poll_heatmap_range(&mut heatmap, true)?;
        Ok(heatmap)
    }

    /// Picks up a heatmap's value range once the device has it (waiting for it with `wait`);
    /// returns whether the range is there.
    pub fn poll_heatmap_range(
        &self,
        heatmap: &mut GpuHeatmap,
        wait: bool,
    ) -> Result<bool, EngineError> {
        let Some(pending) = &heatmap.pending_range else {
            return Ok(true);
        };
        let poll = if wait {
            wgpu::PollType::wait_indefinitely()
        } else {
            wgpu::PollType::Poll
        };
        self.device.poll(poll).map_err(super::readback_error)?;
        let answer = if wait {
            // The work is done, but another thread's poll may be the one running the mapping
            // callback, and it may not have sent the answer yet: wait for it (a few seconds at
            // most, polling again meanwhile).
            let mut tries = 0;
            loop {
                match pending
                    .answer
                    .recv_timeout(std::time::Duration::from_millis(20))
                {
                    Ok(answer) => break answer,
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) if tries < 250 => {
                        tries += 1;
                        self.device
                            .poll(wgpu::PollType::Poll)
                            .map_err(super::readback_error)?;
                    }
                    Err(error) => return Err(super::readback_error(error)),
                }
            }
        } else {
            match pending.answer.try_recv() {
                Ok(answer) => answer,
                Err(std::sync::mpsc::TryRecvError::Empty) => return Ok(false),
                Err(error) => return Err(super::readback_error(error)),
            }
        };
        answer.map_err(super::readback_error)?;
        let slice = pending.readable.slice(..8);
        let codes: Vec<u32> = {
            let mapped = slice.get_mapped_range().map_err(super::readback_error)?;
            mapped
                .chunks_exact(4)
                .map(|word| u32::from_le_bytes([word[0], word[1], word[2], word[3]]))
                .collect()
        };
        pending.readable.unmap();
        let (symmetric, fixed) = (pending.symmetric, pending.fixed);
        heatmap.pending_range = None;
        let decode = |code: u32| {
            f64::from(if code & 0x8000_0000 != 0 {
                f32::from_bits(code & 0x7fff_ffff)
            } else {
                f32::from_bits(!code)
            })
        };
        let (mut low, mut high) = (decode(codes[0]), decode(codes[1]));
        if codes[0] == u32::MAX && codes[1] == 0 {
            (low, high) = (0.0, 0.0);
        }
        if symmetric {
            high = low.abs().max(high.abs());
            low = -high;
        } else if high <= low && !fixed {
            // One value everywhere: the shader draws the middle colour, which is the middle of
            // this range (as Colormap::range makes it on the CPU).
            (low, high) = (low - 0.5, low + 0.5);
        }
        heatmap.range = (low, high);
        Ok(true)
    }

    fn new_heatmap(&self, cols: u32, rows: u32) -> GpuHeatmap {
        let texture = self.device.create_texture(&wgpu::TextureDescriptor {
            label: Some("heatmap"),
            size: wgpu::Extent3d {
                width: cols,
                height: rows,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::Rgba8Unorm,
            usage: wgpu::TextureUsages::COPY_DST
                | wgpu::TextureUsages::TEXTURE_BINDING
                | wgpu::TextureUsages::COPY_SRC,
            view_formats: &[],
        });
        let view = texture.create_view(&Default::default());
        let values = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("heatmap values"),
            size: u64::from(rows) * u64::from(cols) * 4,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_DST
                | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let pixels = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("heatmap pixels"),
            size: u64::from(rows) * u64::from(row_pixels(cols)) * 4,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        GpuHeatmap {
            texture,
            view,
            values,
            pixels,
            size: [cols, rows],
            range: (0.0, 0.0),
            sampling: Sampling::Exact,
            pending_range: None,
        }
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
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        self.reduce_into(spec, window, reduce, &values)?;
        Ok((values, bytes))
    }

    /// The heatmap's values, copied back (for tests and exports).
    pub fn read_heatmap_values(&self, heatmap: &GpuHeatmap) -> Result<Vec<f32>, EngineError> {
        let bytes = heatmap.values.size();
        Ok(bytemuck::cast_slice(&self.read_buffer(&heatmap.values, bytes)?).to_vec())
    }

    /// The heatmap's pixels, rgba8 in row order, copied back (for tests).
    pub fn read_heatmap_pixels(&self, heatmap: &GpuHeatmap) -> Result<Vec<[u8; 4]>, EngineError> {
        let [cols, rows] = heatmap.size;
        // Rows of a texture copy are padded to 256 bytes.
        let padded = (cols * 4).div_ceil(256) * 256;
        let bytes = u64::from(padded * rows);
        let readable = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("heatmap pixels readback"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = self.device.create_command_encoder(&Default::default());
        encoder.copy_texture_to_buffer(
            heatmap.texture.as_image_copy(),
            wgpu::TexelCopyBufferInfo {
                buffer: &readable,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(padded),
                    rows_per_image: Some(rows),
                },
            },
            heatmap.texture.size(),
        );
        self.queue.submit([encoder.finish()]);
        let raw = self.read_mapped(&readable, bytes)?;
        Ok(raw
            .chunks(padded as usize)
            .flat_map(|row| {
                row[..cols as usize * 4]
                    .chunks(4)
                    .map(|p| [p[0], p[1], p[2], p[3]])
            })
            .collect())
    }
}
