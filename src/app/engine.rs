//! The engine the app computes with: the GPU engine on eframe's own device, or the CPU engine
//! when there is no usable adapter.

use std::time::{Duration, Instant};

use eframe::egui_wgpu;

use crate::engine::gpu::GpuEngine;
use crate::engine::{EngineError, Table, TableSpec, Window, cpu};

pub enum AppEngine {
    Gpu(Box<GpuEngine>),
    /// With the reason no GPU engine could be had.
    Cpu(String),
}

impl AppEngine {
    /// The GPU engine on eframe's device when eframe runs on wgpu, the CPU engine otherwise.
    pub fn from_render_state(render_state: Option<&egui_wgpu::RenderState>) -> Self {
        match render_state {
            Some(state) => Self::Gpu(Box::new(GpuEngine::from_device(
                state.device.clone(),
                state.queue.clone(),
                state.adapter.get_info(),
            ))),
            None => Self::Cpu("no wgpu device".to_owned()),
        }
    }

    /// What the status bar says about the engine.
    pub fn description(&self) -> String {
        match self {
            Self::Gpu(gpu) => format!("GPU: {}", gpu.adapter_description()),
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
            Self::Gpu(gpu) => match gpu.compute_window(spec, window) {
                // Positions beyond the GPU's 32 bits: the CPU engine serves.
                Err(EngineError::Gpu(_)) => cpu::compute_window(spec, window)?,
                other => other?,
            },
            Self::Cpu(_) => cpu::compute_window(spec, window)?,
        };
        Ok((table, started.elapsed()))
    }
}
