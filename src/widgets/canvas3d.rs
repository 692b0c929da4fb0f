//! The 3D canvas of the RoPE corkscrew: an `egui_wgpu` paint callback whose `prepare` renders
//! the helices, their axes and the markers with its own pipelines into an offscreen picture
//! (multisampled, with its own depth buffer), and whose `paint` copies that picture into
//! egui's render pass. Dragging orbits the camera, the wheel zooms, a secondary drag pans, a
//! double-click frames the scene again.

use std::sync::Arc;

use bytemuck::{Pod, Zeroable};
use eframe::egui_wgpu::{self, CallbackResources, CallbackTrait, ScreenDescriptor};
use eframe::wgpu;
use eframe::wgpu::util::DeviceExt;

use crate::scene::camera::OrbitCamera;
use crate::scene::corkscrew::{CorkscrewScene, HelixVertex, MAX_HELICES, SceneLayout};

const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;
/// The offscreen picture holds sRGB-encoded colours, as egui's own textures do.
const PICTURE_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;
/// Smooth lines where the adapter can; one sample otherwise.
const WANTED_SAMPLES: u32 = 4;
/// Marks a vertex of an axis line (and, for markers, a key's ring) in `HelixVertex::helix`.
pub const AXIS_FLAG: u32 = 0x8000_0000;
pub const KEY_FLAG: u32 = 0x8000_0000;

/// Keep in sync with `SceneUniform` in `shaders/corkscrew.wgsl`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub struct SceneUniform {
    pub view_proj: [[f32; 4]; 4],
    pub x_offset: f32,
    pub x_scale: f32,
    pub radius_scale: f32,
    pub marker_radius_px: f32,
    pub viewport_px: [f32; 2],
    pub first_axis_y: f32,
    pub spacing: f32,
    pub axis_color: [f32; 4],
    pub colors: [[f32; 4]; MAX_HELICES],
}

/// One frame of the canvas: the scene (uploaded only when `scene_id` changes), the camera and
/// colours, and the markers at the chosen positions.
#[derive(Clone)]
pub struct CanvasFrame {
    pub scene: Arc<CorkscrewScene>,
    /// Changes whenever the scene does, so that vertices are uploaded once per scene.
    pub scene_id: u64,
    pub camera: OrbitCamera,
    /// One colour per helix, sRGB.
    pub colors: Vec<egui::Color32>,
    pub axis_color: egui::Color32,
    pub background: egui::Color32,
    /// Marker positions in the helices' vertex coordinates; `helix` may carry [`KEY_FLAG`].
    pub markers: Vec<HelixVertex>,
    pub marker_radius_px: f32,
    pub size_px: [u32; 2],
}

impl CanvasFrame {
    fn uniform(&self) -> SceneUniform {
        let layout = SceneLayout::of(&self.scene);
        let aspect = self.size_px[0] as f32 / self.size_px[1].max(1) as f32;
        let mut colors = [[0.0; 4]; MAX_HELICES];
        for (slot, color) in colors.iter_mut().zip(&self.colors) {
            *slot = rgba(*color);
        }
        SceneUniform {
            view_proj: self.camera.view_proj(aspect).to_cols_array_2d(),
            x_offset: layout.x_offset,
            x_scale: layout.x_scale,
            radius_scale: layout.radius_scale,
            marker_radius_px: self.marker_radius_px,
            viewport_px: [self.size_px[0] as f32, self.size_px[1] as f32],
            first_axis_y: layout.axis_y(0),
            spacing: layout.spacing,
            axis_color: rgba(self.axis_color),
            colors,
        }
    }
}

fn rgba(color: egui::Color32) -> [f32; 4] {
    let [r, g, b, a] = color.to_srgba_unmultiplied();
    [r, g, b, a].map(|c| c as f32 / 255.0)
}

/// The canvas's GPU objects, made once and kept in egui-wgpu's callback resources.
pub struct CanvasRenderer {
    sample_count: u32,
    helix_pipeline: wgpu::RenderPipeline,
    axis_pipeline: wgpu::RenderPipeline,
    marker_pipeline: wgpu::RenderPipeline,
    blit_pipeline: wgpu::RenderPipeline,
    blit_layout: wgpu::BindGroupLayout,
    sampler: wgpu::Sampler,
    uniform_buffer: wgpu::Buffer,
    scene_bind_group: wgpu::BindGroup,
    uploaded: Option<UploadedScene>,
    /// The markers' buffer (kept between frames, grown when too small) and how many it holds
    /// this frame.
    markers: Option<wgpu::Buffer>,
    marker_count: u32,
    targets: Option<Targets>,
}

struct UploadedScene {
    scene_id: u64,
    vertices: wgpu::Buffer,
    axes: wgpu::Buffer,
    /// Two vertices per helix axis (the key's helices share their pair's axis).
    axis_vertices: u32,
    /// The query's helices, then the key's.
    ranges: Vec<std::ops::Range<u32>>,
}

/// The offscreen picture and its depth buffer, remade when the canvas changes size.
struct Targets {
    size_px: [u32; 2],
    multisampled: Option<wgpu::TextureView>,
    depth: wgpu::TextureView,
    picture: wgpu::Texture,
    picture_view: wgpu::TextureView,
    blit_bind_group: wgpu::BindGroup,
}

/// The copy of the offscreen picture into egui's pass: its bind group layout (the picture
/// and its sampler) and its pipeline, writing `target_format`.
fn blit_pipeline(
    device: &wgpu::Device,
    target_format: wgpu::TextureFormat,
) -> (wgpu::BindGroupLayout, wgpu::RenderPipeline) {
    let blit_shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("blit.wgsl"),
        source: wgpu::ShaderSource::Wgsl(crate::engine::gpu::shaders::BLIT.source.into()),
    });
    let blit_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("corkscrew picture"),
        entries: &[
            wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::FRAGMENT,
                ty: wgpu::BindingType::Texture {
                    sample_type: wgpu::TextureSampleType::Float { filterable: true },
                    view_dimension: wgpu::TextureViewDimension::D2,
                    multisampled: false,
                },
                count: None,
            },
            wgpu::BindGroupLayoutEntry {
                binding: 1,
                visibility: wgpu::ShaderStages::FRAGMENT,
                ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
                count: None,
            },
        ],
    });
    let blit_pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some("corkscrew picture"),
        bind_group_layouts: &[Some(&blit_layout)],
        immediate_size: 0,
    });
    // egui's pass has one sample and no depth buffer (eframe's and kittest's defaults,
    // which the app keeps).
    let blit_pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some("corkscrew picture into egui"),
        layout: Some(&blit_pipeline_layout),
        vertex: wgpu::VertexState {
            module: &blit_shader,
            entry_point: Some("vs_blit"),
            compilation_options: Default::default(),
            buffers: &[],
        },
        primitive: Default::default(),
        depth_stencil: None,
        multisample: Default::default(),
        fragment: Some(wgpu::FragmentState {
            module: &blit_shader,
            entry_point: Some(if target_format.is_srgb() {
                "fs_blit_to_srgb"
            } else {
                "fs_blit"
            }),
            compilation_options: Default::default(),
            targets: &[Some(target_format.into())],
        }),
        multiview_mask: None,
        cache: None,
    });
    (blit_layout, blit_pipeline)
}

impl CanvasRenderer {
    /// Makes the pipelines; `target_format` is egui's, which the copy writes to.
    pub fn new(
        device: &wgpu::Device,
        adapter: &wgpu::Adapter,
        target_format: wgpu::TextureFormat,
    ) -> Self {
        let supports = |format| {
            adapter
                .get_texture_format_features(format)
                .flags
                .sample_count_supported(WANTED_SAMPLES)
        };
        let sample_count = if supports(PICTURE_FORMAT) && supports(DEPTH_FORMAT) {
            WANTED_SAMPLES
        } else {
            1
        };
        let scene_shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("corkscrew.wgsl"),
            source: wgpu::ShaderSource::Wgsl(crate::engine::gpu::shaders::CORKSCREW.source.into()),
        });
        let uniform_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("corkscrew scene"),
            entries: &[wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::VERTEX,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Uniform,
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            }],
        });
        let uniform_buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("corkscrew scene"),
            size: std::mem::size_of::<SceneUniform>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let scene_bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("corkscrew scene"),
            layout: &uniform_layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: uniform_buffer.as_entire_binding(),
            }],
        });
        let scene_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("corkscrew"),
            bind_group_layouts: &[Some(&uniform_layout)],
            immediate_size: 0,
        });
        let vertex_layout = wgpu::VertexBufferLayout {
            array_stride: std::mem::size_of::<HelixVertex>() as u64,
            step_mode: wgpu::VertexStepMode::Vertex,
            attributes: &wgpu::vertex_attr_array![0 => Float32x3, 1 => Uint32],
        };
        let marker_layout = wgpu::VertexBufferLayout {
            step_mode: wgpu::VertexStepMode::Instance,
            ..vertex_layout.clone()
        };
        let scene_pipeline = |label, topology, vertex_entry, fragment_entry, layout| {
            device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
                label: Some(label),
                layout: Some(&scene_layout),
                vertex: wgpu::VertexState {
                    module: &scene_shader,
                    entry_point: Some(vertex_entry),
                    compilation_options: Default::default(),
                    buffers: &[Some(layout)],
                },
                primitive: wgpu::PrimitiveState {
                    topology,
                    ..Default::default()
                },
                depth_stencil: Some(wgpu::DepthStencilState {
                    format: DEPTH_FORMAT,
                    depth_write_enabled: Some(true),
                    depth_compare: Some(wgpu::CompareFunction::Less),
                    stencil: Default::default(),
                    bias: Default::default(),
                }),
                multisample: wgpu::MultisampleState {
                    count: sample_count,
                    ..Default::default()
                },
                fragment: Some(wgpu::FragmentState {
                    module: &scene_shader,
                    entry_point: Some(fragment_entry),
                    compilation_options: Default::default(),
                    targets: &[Some(PICTURE_FORMAT.into())],
                }),
                multiview_mask: None,
                cache: None,
            })
        };
        let helix_pipeline = scene_pipeline(
            "corkscrew helices",
            wgpu::PrimitiveTopology::LineStrip,
            "vs_line",
            "fs_line",
            vertex_layout.clone(),
        );
        let axis_pipeline = scene_pipeline(
            "corkscrew axes",
            wgpu::PrimitiveTopology::LineList,
            "vs_line",
            "fs_line",
            vertex_layout,
        );
        let marker_pipeline = scene_pipeline(
            "corkscrew markers",
            wgpu::PrimitiveTopology::TriangleList,
            "vs_marker",
            "fs_marker",
            marker_layout,
        );

        let (blit_layout, blit_pipeline) = blit_pipeline(device, target_format);
        let sampler = device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("corkscrew picture"),
            ..Default::default()
        });
        Self {
            sample_count,
            helix_pipeline,
            axis_pipeline,
            marker_pipeline,
            blit_pipeline,
            blit_layout,
            sampler,
            uniform_buffer,
            scene_bind_group,
            uploaded: None,
            markers: None,
            marker_count: 0,
            targets: None,
        }
    }

    /// Puts a renderer into eframe's callback resources unless one is there already.
    pub fn install(render_state: &egui_wgpu::RenderState) {
        let mut renderer = render_state.renderer.write();
        if renderer.callback_resources.get::<Self>().is_none() {
            let canvas = Self::new(
                &render_state.device,
                &render_state.adapter,
                render_state.target_format,
            );
            renderer.callback_resources.insert(canvas);
        }
    }

    fn upload_scene(&mut self, device: &wgpu::Device, frame: &CanvasFrame) {
        if self
            .uploaded
            .as_ref()
            .is_some_and(|u| u.scene_id == frame.scene_id)
        {
            return;
        }
        let scene = &frame.scene;
        let steps = scene.position_count.saturating_sub(1) as f32;
        let axes: Vec<HelixVertex> = (0..scene.helices.len() as u32)
            .flat_map(|index| {
                let helix = index | AXIS_FLAG;
                [
                    HelixVertex {
                        position: [0.0, 0.0, 0.0],
                        helix,
                    },
                    HelixVertex {
                        position: [steps, 0.0, 0.0],
                        helix,
                    },
                ]
            })
            .collect();
        let buffer = |label, contents: &[HelixVertex]| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: bytemuck::cast_slice(contents),
                usage: wgpu::BufferUsages::VERTEX,
            })
        };
        self.uploaded = Some(UploadedScene {
            scene_id: frame.scene_id,
            vertices: buffer("corkscrew helices", &scene.vertices),
            axes: buffer("corkscrew axes", &axes),
            axis_vertices: axes.len() as u32,
            ranges: scene
                .helices
                .iter()
                .chain(&scene.key_helices)
                .map(|h| h.vertices.start as u32..h.vertices.end as u32)
                .collect(),
        });
    }

    fn targets(&mut self, device: &wgpu::Device, size_px: [u32; 2]) -> &Targets {
        if self.targets.as_ref().is_none_or(|t| t.size_px != size_px) {
            let texture = |label, format, sample_count, usage| {
                device.create_texture(&wgpu::TextureDescriptor {
                    label: Some(label),
                    size: wgpu::Extent3d {
                        width: size_px[0],
                        height: size_px[1],
                        depth_or_array_layers: 1,
                    },
                    mip_level_count: 1,
                    sample_count,
                    dimension: wgpu::TextureDimension::D2,
                    format,
                    usage,
                    view_formats: &[],
                })
            };
            let attachment = wgpu::TextureUsages::RENDER_ATTACHMENT;
            let picture = texture(
                "corkscrew picture",
                PICTURE_FORMAT,
                1,
                attachment | wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_SRC,
            );
            let picture_view = picture.create_view(&Default::default());
            let multisampled = (self.sample_count > 1).then(|| {
                texture(
                    "corkscrew picture (multisampled)",
                    PICTURE_FORMAT,
                    self.sample_count,
                    attachment,
                )
                .create_view(&Default::default())
            });
            let depth = texture(
                "corkscrew depth",
                DEPTH_FORMAT,
                self.sample_count,
                attachment,
            )
            .create_view(&Default::default());
            let blit_bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("corkscrew picture"),
                layout: &self.blit_layout,
                entries: &[
                    wgpu::BindGroupEntry {
                        binding: 0,
                        resource: wgpu::BindingResource::TextureView(&picture_view),
                    },
                    wgpu::BindGroupEntry {
                        binding: 1,
                        resource: wgpu::BindingResource::Sampler(&self.sampler),
                    },
                ],
            });
            self.targets = Some(Targets {
                size_px,
                multisampled,
                depth,
                picture,
                picture_view,
                blit_bind_group,
            });
        }
        self.targets.as_ref().expect("made just above")
    }

    /// Renders a frame into the offscreen picture.
    pub fn render(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        frame: &CanvasFrame,
    ) {
        self.upload_scene(device, frame);
        queue.write_buffer(
            &self.uniform_buffer,
            0,
            bytemuck::bytes_of(&frame.uniform()),
        );
        // Markers move every frame while playing: one buffer, rewritten.
        let bytes: &[u8] = bytemuck::cast_slice(&frame.markers);
        if self
            .markers
            .as_ref()
            .is_none_or(|buffer| buffer.size() < bytes.len() as u64)
        {
            self.markers = Some(device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("corkscrew markers"),
                size: (bytes.len() as u64).max(std::mem::size_of::<HelixVertex>() as u64),
                usage: wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }));
        }
        if let Some(buffer) = &self.markers
            && !bytes.is_empty()
        {
            queue.write_buffer(buffer, 0, bytes);
        }
        self.marker_count = frame.markers.len() as u32;
        let size_px = frame.size_px.map(|n| n.max(1));
        self.targets(device, size_px);
        let (Some(targets), Some(uploaded)) = (&self.targets, &self.uploaded) else {
            return;
        };
        let [r, g, b, a] = rgba(frame.background).map(f64::from);
        let (view, resolve_target) = match &targets.multisampled {
            Some(multisampled) => (multisampled, Some(&targets.picture_view)),
            None => (&targets.picture_view, None),
        };
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("corkscrew"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view,
                resolve_target,
                depth_slice: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(wgpu::Color { r, g, b, a }),
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: &targets.depth,
                depth_ops: Some(wgpu::Operations {
                    load: wgpu::LoadOp::Clear(1.0),
                    store: wgpu::StoreOp::Discard,
                }),
                stencil_ops: None,
            }),
            ..Default::default()
        });
        pass.set_bind_group(0, &self.scene_bind_group, &[]);
        pass.set_pipeline(&self.axis_pipeline);
        pass.set_vertex_buffer(0, uploaded.axes.slice(..));
        pass.draw(0..uploaded.axis_vertices, 0..1);
        pass.set_pipeline(&self.helix_pipeline);
        pass.set_vertex_buffer(0, uploaded.vertices.slice(..));
        for range in &uploaded.ranges {
            pass.draw(range.clone(), 0..1);
        }
        if let Some(buffer) = self.markers.as_ref().filter(|_| self.marker_count > 0) {
            pass.set_pipeline(&self.marker_pipeline);
            pass.set_vertex_buffer(0, buffer.slice(..));
            pass.draw(0..6, 0..self.marker_count);
        }
    }

    /// The offscreen picture of the last frame rendered.
    pub fn picture(&self) -> Option<&wgpu::Texture> {
        self.targets.as_ref().map(|t| &t.picture)
    }
}

/// The paint callback that draws a [`CanvasFrame`].
pub struct CanvasCallback(pub CanvasFrame);

impl CallbackTrait for CanvasCallback {
    fn prepare(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        _screen_descriptor: &ScreenDescriptor,
        egui_encoder: &mut wgpu::CommandEncoder,
        callback_resources: &mut CallbackResources,
    ) -> Vec<wgpu::CommandBuffer> {
        match callback_resources.get_mut::<CanvasRenderer>() {
            Some(renderer) => renderer.render(device, queue, egui_encoder, &self.0),
            None => log_missing_renderer(),
        }
        Vec::new()
    }

    fn paint(
        &self,
        _info: egui::PaintCallbackInfo,
        render_pass: &mut wgpu::RenderPass<'static>,
        callback_resources: &CallbackResources,
    ) {
        let Some(renderer) = callback_resources.get::<CanvasRenderer>() else {
            return log_missing_renderer();
        };
        if let Some(targets) = &renderer.targets {
            render_pass.set_pipeline(&renderer.blit_pipeline);
            render_pass.set_bind_group(0, &targets.blit_bind_group, &[]);
            render_pass.draw(0..3, 0..1);
        }
    }
}

fn log_missing_renderer() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| eprintln!("poslab: the 3D canvas has no renderer installed; nothing drawn"));
}

/// What the user did to the camera this frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CameraChange {
    None,
    Moved,
    Reset,
}

/// Allocates the canvas, turns drags and the wheel into camera moves, and adds the paint
/// callback for `frame` (its `camera` and `size_px` are filled in here). Returns the response
/// and what happened to the camera.
pub fn canvas_ui(
    ui: &mut egui::Ui,
    size: egui::Vec2,
    camera: &mut OrbitCamera,
    mut frame: CanvasFrame,
) -> (egui::Response, CameraChange) {
    let (rect, response) = ui.allocate_exact_size(size, egui::Sense::click_and_drag());
    let height_px = rect.height().max(1.0);
    let mut change = CameraChange::None;
    if response.double_clicked() {
        change = CameraChange::Reset;
    } else if response.dragged_by(egui::PointerButton::Primary) {
        let delta = response.drag_delta();
        camera.orbit([delta.x, delta.y], height_px);
        change = CameraChange::Moved;
    } else if response.dragged_by(egui::PointerButton::Secondary)
        || response.dragged_by(egui::PointerButton::Middle)
    {
        let delta = response.drag_delta();
        camera.pan([delta.x, delta.y], height_px);
        change = CameraChange::Moved;
    }
    if response.hovered() {
        let scroll = ui.input(|i| i.smooth_scroll_delta.y);
        if scroll != 0.0 {
            camera.zoom((-scroll / 200.0).exp());
            change = CameraChange::Moved;
        }
    }
    let pixels_per_point = ui.ctx().pixels_per_point();
    frame.camera = *camera;
    frame.size_px = [
        (rect.width() * pixels_per_point).round().max(1.0) as u32,
        (rect.height() * pixels_per_point).round().max(1.0) as u32,
    ];
    frame.marker_radius_px *= pixels_per_point;
    ui.painter().add(egui_wgpu::Callback::new_paint_callback(
        rect,
        CanvasCallback(frame),
    ));
    (response, change)
}

/// Reads the offscreen picture of the last frame back: rows of sRGB-encoded RGBA, top first.
pub fn read_picture(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    picture: &wgpu::Texture,
) -> Result<(u32, u32, Vec<u8>), String> {
    let (width, height) = (picture.width(), picture.height());
    let row_bytes = width * 4;
    let padded_row_bytes =
        row_bytes.div_ceil(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT) * wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("corkscrew picture read-back"),
        size: u64::from(padded_row_bytes) * u64::from(height),
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    encoder.copy_texture_to_buffer(
        picture.as_image_copy(),
        wgpu::TexelCopyBufferInfo {
            buffer: &buffer,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(padded_row_bytes),
                rows_per_image: Some(height),
            },
        },
        picture.size(),
    );
    queue.submit([encoder.finish()]);
    let (sender, receiver) = std::sync::mpsc::channel();
    buffer
        .slice(..)
        .map_async(wgpu::MapMode::Read, move |result| {
            let _ = sender.send(result);
        });
    device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| format!("reading the 3D picture back: {e}"))?;
    receiver
        .recv()
        .map_err(|e| format!("reading the 3D picture back: {e}"))?
        .map_err(|e| format!("reading the 3D picture back: {e}"))?;
    let mapped = buffer
        .slice(..)
        .get_mapped_range()
        .map_err(|e| format!("reading the 3D picture back: {e}"))?;
    let mut pixels = Vec::with_capacity((row_bytes * height) as usize);
    for row in mapped.chunks(padded_row_bytes as usize) {
        pixels.extend_from_slice(&row[..row_bytes as usize]);
    }
    drop(mapped);
    buffer.unmap();
    Ok((width, height, pixels))
}
