//! The engine the app computes with: the GPU engine on eframe's own device, or the CPU engine
//! when there is no usable adapter. Views hand its [`EngineHandle`] to worker threads (see
//! [`crate::jobs`]), which compute windows block by block, checking between blocks whether the
//! result is still wanted.

use std::sync::Arc;
use std::time::Duration;
use web_time::Instant;

use eframe::egui_wgpu;

use crate::engine::gpu::GpuEngine;
use crate::engine::reduce::{self, Reduce, Sampling};
use crate::engine::{EngineError, Strided, Table, TableSpec, Window, cpu};
use crate::jobs::{Cancel, Cancelled};

/// The app's engine, and how much slower than it can be a test makes it.
pub struct AppEngine {
    engine: Engine,
    delay: Duration,
}

enum Engine {
    /// With eframe's render state when the engine shares its device (the 3D views draw on it).
    Gpu(Arc<GpuEngine>, Option<egui_wgpu::RenderState>),
    /// With the reason no GPU engine could be had.
    Cpu(String),
}

/// What a worker thread computes with: the GPU engine when there is one, else the CPU engine;
/// `delay` slows every block down, so that tests can watch a view while its result is pending.
#[derive(Clone, Default)]
pub struct EngineHandle {
    gpu: Option<Arc<GpuEngine>>,
    delay: Duration,
}

impl AppEngine {
    /// The GPU engine on eframe's device when eframe runs on wgpu, the CPU engine otherwise.
    pub fn from_render_state(render_state: Option<&egui_wgpu::RenderState>) -> Self {
        let engine = match render_state {
            Some(state)
                if !state
                    .adapter
                    .get_downlevel_capabilities()
                    .flags
                    .contains(eframe::wgpu::DownlevelFlags::COMPUTE_SHADERS) =>
            {
                let info = state.adapter.get_info();
                Engine::Cpu(
                    if info.backend == eframe::wgpu::Backend::Gl && cfg!(target_arch = "wasm32") {
                        "no WebGPU in this browser (WebGL2 has no compute shaders)".to_owned()
                    } else {
                        format!("{} has no compute shaders", info.name)
                    },
                )
            }
            Some(state) => Engine::Gpu(
                Arc::new(GpuEngine::from_device(
                    state.device.clone(),
                    state.queue.clone(),
                    state.adapter.get_info(),
                )),
                Some(state.clone()),
            ),
            None => Engine::Cpu("no wgpu device".to_owned()),
        };
        Self {
            engine,
            delay: Duration::ZERO,
        }
    }

    /// The CPU engine, with the reason it is used.
    pub fn cpu(reason: impl Into<String>) -> Self {
        Self {
            engine: Engine::Cpu(reason.into()),
            delay: Duration::ZERO,
        }
    }

    /// A GPU engine of its own (no window shares its device).
    pub fn gpu(gpu: GpuEngine) -> Self {
        Self {
            engine: Engine::Gpu(Arc::new(gpu), None),
            delay: Duration::ZERO,
        }
    }

    /// The same engine, every block of a window taking at least `delay` longer: tests watch a
    /// view while its result is pending.
    pub fn slowed(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// eframe's render state, when the GPU engine shares eframe's device.
    pub fn render_state(&self) -> Option<&egui_wgpu::RenderState> {
        match &self.engine {
            Engine::Gpu(_, render_state) => render_state.as_ref(),
            Engine::Cpu(_) => None,
        }
    }

    /// What the status bar says about the engine.
    pub fn description(&self) -> String {
        match &self.engine {
            Engine::Gpu(gpu, _) if gpu.is_browser_webgpu() => gpu.browser_adapter_description(),
            // A CPU adapter runs the same shaders, but calling it a GPU would mislead about
            // speed.
            Engine::Gpu(gpu, _) if gpu.is_software() => {
                format!("software renderer: {}", gpu.adapter_description())
            }
            Engine::Gpu(gpu, _) => format!("GPU: {}", gpu.adapter_description()),
            Engine::Cpu(reason) => format!("CPU engine (f64) – {reason}"),
        }
    }

    /// The engine for worker threads.
    pub fn handle(&self) -> EngineHandle {
        EngineHandle {
            gpu: match &self.engine {
                Engine::Gpu(gpu, _) => Some(gpu.clone()),
                Engine::Cpu(_) => None,
            },
            delay: self.delay,
        }
    }

    /// Computes a window on this thread, and how long it took: for small windows only (a
    /// column, a curve of a few thousand points); tables go through [`EngineHandle`] on a
    /// worker.
    pub fn compute_window(
        &self,
        spec: &TableSpec,
        window: &Window,
    ) -> Result<(Table, Duration), EngineError> {
        let started = Instant::now();
        let table = EngineHandle {
            delay: Duration::ZERO,
            ..self.handle()
        }
        .window(spec, window)?;
        Ok((table, started.elapsed()))
    }
}

/// Cells one block of a heatmap's window covers at most: small enough that a block takes tens
/// of milliseconds on a software adapter, so that cancelling is quick and the device's queue
/// never holds the frames back for long.
const BLOCK_CELLS: usize = 1 << 22;

/// The most cells the CPU reduces one by one for one heatmap (beyond, without a closed form,
/// one cell per pixel is sampled and the status bar says so).
const CPU_REDUCED_CELLS: usize = 1 << 25;

/// Cells beyond which a heatmap's exact window is worth a coarse preview first.
const PREVIEW_ABOVE_CELLS: usize = 1 << 18;

/// The values of a heatmap's window, one per pixel, and how its cells became pixels.
pub struct WindowValues {
    pub values: ndarray::Array2<f64>,
    pub sampling: Sampling,
}

impl EngineHandle {
    /// Computes `window` of `spec` (no cancelling: for small windows). On the web, where a
    /// readback cannot be waited for, the CPU engine computes it (see [`Self::heatmap_values`]
    /// for the GPU there).
    pub fn window(&self, spec: &TableSpec, window: &Window) -> Result<Table, EngineError> {
        match &self.gpu {
            Some(gpu) if !cfg!(target_arch = "wasm32") => match gpu.compute_window(spec, window) {
                // Positions beyond the GPU's 32 bits: the CPU engine serves.
                Err(EngineError::Gpu(_)) => cpu::compute_window(spec, window),
                other => other,
            },
            _ => cpu::compute_window(spec, window),
        }
    }

    /// How `window` of `spec` will be drawn at `reduce`, on this engine.
    pub fn sampling(&self, spec: &TableSpec, window: &Window, reduce: Reduce) -> Sampling {
        let sampling = reduce::sampling(spec, window, reduce);
        let reduced_on_cpu = self.gpu.is_none() || reduce::has_closed_form(spec, reduce);
        if matches!(sampling, Sampling::Reduced(_))
            && reduced_on_cpu
            && !reduce::has_closed_form(spec, reduce)
            && reduce::covered_cells(window) > CPU_REDUCED_CELLS
        {
            Sampling::PointSampled
        } else {
            sampling
        }
    }

    /// Whether the window is large enough that a coarse preview should come first.
    pub fn worth_a_preview(&self, spec: &TableSpec, window: &Window, reduce: Reduce) -> bool {
        !self.delay.is_zero()
            || cells_to_compute(spec, window, self.sampling(spec, window, reduce))
                > PREVIEW_ABOVE_CELLS
    }

    /// The heatmap values of `window` (one head), block by block of pixel rows, checking
    /// `cancel` between blocks: reduced in closed form on the CPU where there is one (exact and
    /// fast), on the GPU where there is one, else on the CPU.
    ///
    /// A future, so that on the web, where the job shares the page's one thread, the page
    /// draws and answers between blocks and while the GPU computes; a desktop job runs it to
    /// its end on its own thread.
    pub async fn heatmap_values(
        &self,
        spec: &TableSpec,
        window: &Window,
        reduce: Reduce,
        cancel: &Cancel,
        progress: &dyn Fn(f32),
    ) -> Result<Result<WindowValues, EngineError>, Cancelled> {
        let sampling = self.sampling(spec, window, reduce);
        let (rows, cols) = (window.rows.len(), window.cols.len());
        let per_row = cells_to_compute(spec, &single_row(window), sampling).max(1);
        let rows_per_block = (BLOCK_CELLS / per_row).clamp(1, rows.max(1));
        let mut values = Vec::with_capacity(rows * cols);
        let mut first = 0;
        while first < rows {
            cancel.check()?;
            if !self.delay.is_zero() {
                cancel.sleep(self.delay)?;
            }
            let count = rows_per_block.min(rows - first);
            let block = Window {
                rows: Strided {
                    start: window.rows.start + first * window.rows.step,
                    end: (window.rows.start + (first + count) * window.rows.step)
                        .min(window.rows.end),
                    step: window.rows.step,
                },
                ..*window
            };
            match self.block_values(spec, &block, sampling).await {
                Ok(block_values) => values.extend(block_values),
                Err(error) => return Ok(Err(error)),
            }
            first += count;
            progress(first as f32 / rows as f32);
            crate::jobs::yield_to_page().await;
        }
        cancel.check()?;
        Ok(ndarray::Array2::from_shape_vec((rows, cols), values)
            .map_err(|e| EngineError::Gpu(crate::engine::gpu::GpuError::Readback(e.to_string())))
            .map(|values| WindowValues { values, sampling }))
    }

    async fn block_values(
        &self,
        spec: &TableSpec,
        block: &Window,
        sampling: Sampling,
    ) -> Result<Vec<f64>, EngineError> {
        match sampling {
            Sampling::Reduced(reduce) => {
                if let (Some(gpu), false) = (&self.gpu, reduce::cpu_reduces_faster(spec, reduce)) {
                    match gpu.reduce_window_async(spec, block, reduce).await {
                        Ok(values) => return Ok(values.into_iter().map(f64::from).collect()),
                        // Positions beyond 32 bits, bins wider than the kernels reduce: the
                        // CPU serves.
                        Err(EngineError::Gpu(_)) => {}
                        Err(error) => return Err(error),
                    }
                }
                Ok(reduce::compute_reduced_cpu(spec, block, reduce)?
                    .into_raw_vec_and_offset()
                    .0)
            }
            Sampling::Exact | Sampling::PointSampled => match self.window_async(spec, block).await?
            {
                Table::Real(values) => Ok(values.into_raw_vec_and_offset().0),
                Table::Index(values) => Ok(values.iter().map(|&v| f64::from(v)).collect()),
            },
        }
    }

    /// Whether this is the browser's WebGPU device: there, a window computed on the GPU is
    /// read back without waiting ([`Self::window_async`]), and [`Self::window`] takes the CPU
    /// engine.
    pub fn is_browser_gpu(&self) -> bool {
        self.gpu.as_ref().is_some_and(|gpu| gpu.is_browser_webgpu())
    }

    /// As [`Self::window`], giving the thread back while the GPU computes.
    pub async fn window_async(
        &self,
        spec: &TableSpec,
        window: &Window,
    ) -> Result<Table, EngineError> {
        match &self.gpu {
            Some(gpu) => match gpu.compute_window_async(spec, window).await {
                // Positions beyond the GPU's 32 bits, a window beyond one binding: the CPU
                // engine serves.
                Err(EngineError::Gpu(_)) => cpu::compute_window(spec, window),
                other => other,
            },
            None => cpu::compute_window(spec, window),
        }
    }
}

/// The first pixel row of `window`.
fn single_row(window: &Window) -> Window {
    Window {
        rows: Strided {
            end: (window.rows.start + window.rows.step).min(window.rows.end),
            ..window.rows
        },
        ..*window
    }
}

/// How many cells computing `window` visits.
fn cells_to_compute(spec: &TableSpec, window: &Window, sampling: Sampling) -> usize {
    match sampling {
        Sampling::Reduced(reduce) if !reduce::has_closed_form(spec, reduce) => {
            reduce::covered_cells(window)
        }
        _ => window.rows.len() * window.cols.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::alibi::{AlibiMode, AlibiParams};
    use crate::encoding::sinusoidal::SinusoidalParams;

    /// The CPU engine's handle (no GPU): the engine the app falls back to.
    fn cpu() -> EngineHandle {
        EngineHandle::default()
    }

    fn window(rows: Strided, cols: Strided) -> Window {
        Window {
            heads: Strided::all(1),
            rows,
            cols,
        }
    }

    #[test]
    fn block_by_block_is_the_window_computed_whole() {
        let spec = TableSpec::Sinusoidal(SinusoidalParams {
            seq: 70_000,
            dim: 64,
            ..Default::default()
        });
        // One cell per pixel, more cells than one block holds: the blocks of rows stitched
        // back must be the window itself.
        let exact = window(
            Strided {
                start: 5,
                end: 69_999,
                step: 1,
            },
            Strided::all(64),
        );
        assert!(
            exact.rows.len() * exact.cols.len() > BLOCK_CELLS,
            "two blocks at least"
        );
        let got = pollster::block_on(cpu().heatmap_values(
            &spec,
            &exact,
            Reduce::Mean,
            &Cancel::default(),
            &|_| {},
        ))
        .expect("not cancelled")
        .expect("computed");
        assert_eq!(got.sampling, Sampling::Exact);
        let whole = crate::engine::cpu::compute_window(&spec, &exact)
            .expect("computed")
            .into_real();
        assert_eq!(got.values.shape(), &[69_994, 64]);
        assert!(got.values.iter().zip(whole.iter()).all(|(a, b)| a == b));
    }

    #[test]
    fn reduced_blocks_are_the_reduction_of_the_whole_window() {
        // ALiBi's min has a closed form; every bin's rows must stay within one block.
        let spec = TableSpec::Alibi {
            params: AlibiParams {
                heads: 4,
                seq: 4096,
                mode: AlibiMode::Symmetric,
            },
            head: Some(2),
        };
        let binned = window(
            Strided {
                start: 0,
                end: 4096,
                step: 7,
            },
            Strided {
                start: 0,
                end: 4096,
                step: 9,
            },
        );
        let got = pollster::block_on(cpu().heatmap_values(
            &spec,
            &binned,
            Reduce::Min,
            &Cancel::default(),
            &|_| {},
        ))
        .expect("not cancelled")
        .expect("computed");
        let whole = reduce::compute_reduced_cpu(&spec, &binned, Reduce::Min).expect("computed");
        assert_eq!(got.values, whole);
    }

    #[test]
    fn a_cancelled_computation_stops_before_its_next_block() {
        let spec = TableSpec::Sinusoidal(SinusoidalParams {
            seq: 4096,
            dim: 64,
            ..Default::default()
        });
        let cancel = Cancel::default();
        cancel.cancel();
        let outcome = pollster::block_on(cpu().heatmap_values(
            &spec,
            &window(Strided::all(4096), Strided::all(64)),
            Reduce::Mean,
            &cancel,
            &|_| panic!("no block may run once cancelled"),
        ));
        assert!(outcome.is_err());
    }
}
