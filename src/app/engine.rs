//! The engine the app computes with: the GPU engine on eframe's own device, or the CPU engine
//! when there is no usable adapter.

use std::time::{Duration, Instant};

use eframe::egui_wgpu;

use crate::engine::gpu::GpuEngine;
use crate::engine::{EngineError, Table, TableSpec, Window, cpu};

pub enum AppEngine {
    /// With eframe's render state when the engine shares its device, so that heatmaps go from
    /// the compute kernels to egui textures without leaving the GPU.
    Gpu(Box<GpuEngine>, Option<egui_wgpu::RenderState>),
    /// With the reason no GPU engine could be had.
    Cpu(String),
}

impl AppEngine {
    /// The GPU engine on eframe's device when eframe runs on wgpu, the CPU engine otherwise.
    pub fn from_render_state(render_state: Option<&egui_wgpu::RenderState>) -> Self {
        match render_state {
            Some(state)
                if !state
                    .adapter
                    .get_downlevel_capabilities()
                    .flags
                    .contains(eframe::wgpu::DownlevelFlags::COMPUTE_SHADERS) =>
            {
                Self::Cpu(format!(
                    "{} has no compute shaders",
                    state.adapter.get_info().name
                ))
            }
            Some(state) => Self::Gpu(
                Box::new(GpuEngine::from_device(
                    state.device.clone(),
                    state.queue.clone(),
                    state.adapter.get_info(),
                )),
                Some(state.clone()),
            ),
            None => Self::Cpu("no wgpu device".to_owned()),
        }
    }

    /// What the status bar says about the engine.
    pub fn description(&self) -> String {
        match self {
            // A CPU adapter runs the same shaders, but calling it a GPU would mislead about
            // speed.
            Self::Gpu(gpu, _) if gpu.is_software() => {
                format!("software renderer: {}", gpu.adapter_description())
            }
            Self::Gpu(gpu, _) => format!("GPU: {}", gpu.adapter_description()),
            Self::Cpu(reason) => format!("CPU engine (f64) – {reason}"),
        }
    }

    /// Computes a window, and how long it took.
    pub fn compute_window(
        &self,
        spec: &TableSpec,
        window: &Window,
    ) -> Result<(Table, Duration), EngineError> {
        let started = Instant::now();
        let table = match self {
            Self::Gpu(gpu, _) => match gpu.compute_window(spec, window) {
                // Positions beyond the GPU's 32 bits: the CPU engine serves.
                Err(EngineError::Gpu(_)) => cpu::compute_window(spec, window)?,
                other => other?,
            },
            Self::Cpu(_) => cpu::compute_window(spec, window)?,
        };
        Ok((table, started.elapsed()))
    }
}
