//! Without a Vulkan driver (hidden here with VK_ICD_FILENAMES), the app still opens and the
//! GPU engine still computes: wgpu falls back to its GL backend (Mesa's llvmpipe through EGL),
//! and what it computes agrees with the CPU engine.

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;

use poslab::app::{PoslabApp, wgpu_setup};
use poslab::encoding::sinusoidal::SinusoidalParams;
use poslab::engine::gpu::GpuEngine;
use poslab::engine::{TableSpec, Window, cpu};

const NO_DRIVER: &str = "/nonexistent/no-vulkan-driver.json";

#[test]
fn without_a_vulkan_driver_the_gl_backend_draws_and_computes() {
    // SAFETY: this binary's only test sets it before any wgpu instance exists; nothing else
    // of this process reads the environment meanwhile.
    unsafe { std::env::set_var("VK_ICD_FILENAMES", NO_DRIVER) };

    let engine = GpuEngine::new_headless().expect("a GL adapter when Vulkan has none");
    let name = engine.adapter_description();
    assert!(name.contains("Gl"), "{name}");
    let spec = TableSpec::Sinusoidal(SinusoidalParams {
        seq: 300,
        dim: 64,
        ..Default::default()
    });
    let window = Window::all(spec.matrix_shape());
    let gpu = engine.compute_window(&spec, &window).unwrap().into_real();
    let cpu = cpu::compute_window(&spec, &window).unwrap().into_real();
    let worst = gpu
        .iter()
        .zip(cpu.iter())
        .map(|(g, c)| (g - c).abs())
        .fold(0.0, f64::max);
    assert!(worst <= 2e-6, "{worst:e}");

    // The window: the status bar names the GL adapter, and the heatmap is drawn.
    let mut harness = Harness::builder()
        .with_max_steps(2000)
        .with_size([1100.0, 720.0])
        .wgpu_setup(wgpu_setup())
        .build_eframe(|cc| PoslabApp::new(cc));
    harness.run();
    assert!(harness.query_by_label_contains("(Gl").is_some());
    assert!(harness.state().shown_sinusoidal().is_some());

    // The command line's GPU engine, in a process of its own.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pe.npy");
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_poslab"))
        .env("VK_ICD_FILENAMES", NO_DRIVER)
        .args([
            "table",
            "sinusoidal",
            "--seq",
            "8",
            "--dim",
            "8",
            "--backend",
            "gpu",
            "-v",
            "-o",
        ])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success() && stderr.contains("(Gl"), "{stderr}");
}
