//! Tables and windows shared by the engine tests.
#![allow(dead_code)]

use ndarray::{Array2, ArrayD, Slice};
use poslab::encoding::PairLayout;

use poslab::encoding::alibi::{Alibi2dParams, AlibiForm, AlibiMode, AlibiParams};
use poslab::encoding::binary::BinaryParams;
use poslab::encoding::grid::{DistanceMetric, GridParams, SinCos2dParams};
use poslab::encoding::relative::{RelativeClipParams, T5BucketParams};
use poslab::encoding::resample::{ResampleMode, ResampleParams};
use poslab::encoding::rope::{CachePart, RopeParams};
use poslab::encoding::rope_scaling::{RopeFrequencies, RopeScaling, ScalingKind};
use poslab::encoding::rope2d::AxialParams;
use poslab::encoding::similarity2d::{PatchEncoding, PatchSimilarityParams};
use poslab::encoding::sinusoidal::{FirstOfPair, SinusoidalParams, Spacing};
use poslab::engine::{Strided, TableSpec, Window};

/// Llama 3.1's RoPE as the options of a RoPE kind: base 500000 under Llama 3 scaling, factor 8,
/// low and high frequency factors 1 and 4, original context 8192.
pub const LLAMA31_ROPE: [&str; 12] = [
    "--base",
    "500000",
    "--scaling",
    "llama3",
    "--factor",
    "8",
    "--low-freq-factor",
    "1",
    "--high-freq-factor",
    "4",
    "--original-max-position-embeddings",
    "8192",
];

/// A `[1 + 5 * 7, 6]` table of uneven values resampled to `to_h x to_w`.
pub fn resampled(to_h: usize, to_w: usize, mode: ResampleMode, antialias: bool) -> TableSpec {
    let input = ndarray::Array2::from_shape_fn((36, 6), |(r, c)| {
        (0.37 * r as f64 + 1.1 * c as f64).sin() + 0.01 * (r * c) as f64
    });
    TableSpec::SinCos2dResample {
        input,
        params: ResampleParams {
            from: (5, 7),
            to: (to_h, to_w),
            prefix_rows: 1,
            mode,
            antialias,
        },
    }
}

/// YaRN as Qwen2.5 configures it (factor 4 over 32768 positions), rotating `rotary` dims.
pub fn yarn(rotary: Option<usize>) -> RopeFrequencies {
    RopeFrequencies {
        rotary_dim: rotary,
        scaling: RopeScaling {
            kind: ScalingKind::Yarn,
            factor: Some(4.0),
            original_max_position_embeddings: Some(32_768),
            ..Default::default()
        },
        given: None,
    }
}

/// Llama 3.1's scaling, rotating `rotary` dims.
pub fn llama3(rotary: Option<usize>) -> RopeFrequencies {
    RopeFrequencies {
        rotary_dim: rotary,
        scaling: RopeScaling {
            kind: ScalingKind::Llama3,
            factor: Some(8.0),
            original_max_position_embeddings: Some(8192),
            low_freq_factor: Some(1.0),
            high_freq_factor: Some(4.0),
            ..Default::default()
        },
        given: None,
    }
}

/// One small table of every kind, with non-default parameters.
pub fn every_kind() -> Vec<TableSpec> {
    let grid = GridParams {
        grid_h: 5,
        grid_w: 7,
    };
    let sinusoidal = SinusoidalParams {
        seq: 37,
        dim: 22,
        base: 500.0,
        start: 11,
        layout: PairLayout::Half,
        spacing: Spacing::T2t,
        // MLX's order and amplitude (sqrt(2/dim) at dim 22), so that every engine's pair
        // order and scale are compared with the CPU's.
        first: FirstOfPair::Cos,
        amplitude: (2.0f64 / 22.0).sqrt(),
    };
    vec![
        TableSpec::Sinusoidal(sinusoidal),
        TableSpec::DotDecay {
            params: sinusoidal,
            anchor: 9,
        },
        TableSpec::Similarity(sinusoidal),
        TableSpec::RopeInvFreq {
            dim: 18,
            base: 500_000.0,
            seq: 0,
            freqs: Default::default(),
        },
        TableSpec::RopeAngles {
            params: RopeParams {
                seq: 29,
                dim: 14,
                base: 10_000.0,
                start: 3,
            },
            freqs: Default::default(),
        },
        TableSpec::RopeApply {
            input: Array2::from_shape_fn((13, 10), |(r, c)| {
                (r as f64 - 6.0) * 0.3 + c as f64 * 0.1
            }),
            layout: PairLayout::Half,
            base: 100.0,
            start: 40,
            freqs: Default::default(),
        },
        // A partial-rotary model trained on 40 positions at 300 under NTK-aware scaling.
        TableSpec::RopeUnseen(Box::new(poslab::scene::context::UnseenParams {
            model: poslab::scene::context::RopeModel {
                name: String::new(),
                head_dim: 24,
                base: 100.0,
                rotary_dim: Some(16),
                trained: 40,
                scaling: Default::default(),
            },
            freqs: RopeFrequencies {
                rotary_dim: Some(16),
                scaling: RopeScaling {
                    kind: ScalingKind::Ntk,
                    factor: Some(2.0),
                    ..Default::default()
                },
                given: None,
            },
            seq: 300,
        })),
        // Real models' RoPE: partial rotary with a scaling, caches in both layouts.
        TableSpec::RopeApply {
            input: Array2::from_shape_fn((11, 12), |(r, c)| {
                (r as f64 - 5.0) * 0.2 - c as f64 * 0.05
            }),
            layout: PairLayout::Interleaved,
            base: 10_000.0,
            start: 4000,
            freqs: yarn(Some(8)),
        },
        TableSpec::RopeCache {
            params: RopeParams {
                seq: 21,
                dim: 16,
                base: 500_000.0,
                start: 9000,
            },
            freqs: llama3(None),
            layout: PairLayout::Half,
            part: CachePart::Cos,
        },
        TableSpec::RopeCache {
            params: RopeParams {
                seq: 17,
                dim: 20,
                base: 10_000.0,
                start: 70_000,
            },
            freqs: yarn(Some(12)),
            layout: PairLayout::Interleaved,
            part: CachePart::Sin,
        },
        // vLLM's cos_sin_cache under YaRN: every cosine, then every sine, times the factor.
        TableSpec::RopeCache {
            params: RopeParams {
                seq: 15,
                dim: 24,
                base: 10_000.0,
                start: 5000,
            },
            freqs: yarn(Some(16)),
            layout: PairLayout::Half,
            part: CachePart::CosSin,
        },
        // torchtune's Qwen2 cache: the cos cache, then the sin cache, each R wide in the half
        // layout, on a partial rotary width.
        TableSpec::RopeCache {
            params: RopeParams {
                seq: 13,
                dim: 24,
                base: 1_000_000.0,
                start: 70_000,
            },
            freqs: RopeFrequencies {
                rotary_dim: Some(16),
                ..Default::default()
            },
            layout: PairLayout::Half,
            part: CachePart::CosSinHalves,
        },
        TableSpec::RopeInvFreq {
            dim: 24,
            base: 10_000.0,
            seq: 9000,
            freqs: RopeFrequencies {
                rotary_dim: None,
                scaling: RopeScaling {
                    kind: ScalingKind::Dynamic,
                    factor: Some(4.0),
                    max_position_embeddings: Some(4096),
                    ..Default::default()
                },
                given: None,
            },
        },
        TableSpec::RopeAttentionFactor {
            dim: 24,
            base: 10_000.0,
            freqs: yarn(None),
        },
        TableSpec::AlibiSlopes { heads: 12 },
        TableSpec::AlibiKeys {
            heads: 6,
            seq: 19,
            form: AlibiForm::Bloom,
            head: None,
        },
        TableSpec::AlibiKeys {
            heads: 8,
            seq: 23,
            form: AlibiForm::Mpt,
            head: Some(5),
        },
        TableSpec::Alibi {
            params: AlibiParams {
                heads: 6,
                seq: 19,
                mode: AlibiMode::Causal,
            },
            head: None,
        },
        TableSpec::Alibi {
            params: AlibiParams {
                heads: 6,
                seq: 19,
                mode: AlibiMode::Symmetric,
            },
            head: Some(4),
        },
        // The last queries of a longer sequence, with heads of slope 0 after the sloped ones.
        TableSpec::AlibiWindow {
            params: AlibiParams {
                heads: 5,
                seq: 23,
                mode: AlibiMode::Causal,
            },
            queries: 7,
            zero_heads: 2,
            head: None,
        },
        TableSpec::AlibiWindow {
            params: AlibiParams {
                heads: 3,
                seq: 12,
                mode: AlibiMode::Symmetric,
            },
            queries: 12,
            zero_heads: 1,
            head: Some(3),
        },
        TableSpec::Alibi2d {
            params: Alibi2dParams { heads: 3, grid },
            head: None,
        },
        TableSpec::PatchDistance {
            grid,
            metric: DistanceMetric::Chebyshev,
        },
        TableSpec::SinCos2d(SinCos2dParams {
            grid,
            dim: 24,
            base: 10_000.0,
            ..Default::default()
        }),
        // timm's order, patches column by column, a CLS row first.
        TableSpec::SinCos2d(SinCos2dParams {
            grid,
            dim: 16,
            base: 10_000.0,
            order: poslab::encoding::grid::parse_order("sin-y,sin-x,cos-y,cos-x").unwrap(),
            raster: poslab::encoding::grid::Raster::Columns,
            prefix_rows: 1,
            ..Default::default()
        }),
        // A CLS row and 5 x 7 patches, up to 8 x 9 and down to 3 x 4, each way torch has.
        resampled(8, 9, ResampleMode::Bicubic, false),
        resampled(8, 9, ResampleMode::Bicubic, true),
        resampled(3, 4, ResampleMode::Bilinear, false),
        resampled(3, 4, ResampleMode::Bilinear, true),
        resampled(3, 4, ResampleMode::Bicubic, true),
        TableSpec::Rope2dAxial(AxialParams {
            grid,
            dim: 20,
            theta: 100.0,
            ..Default::default()
        }),
        TableSpec::Rope2dMixed {
            grid,
            freqs: Array2::from_shape_fn((2, 6), |(a, k)| {
                (k as f64 + 1.0) * if a == 0 { 0.7 } else { -0.45 }
            }),
        },
        TableSpec::T5Buckets(T5BucketParams {
            seq: 41,
            num_buckets: 12,
            max_distance: 20,
            bidirectional: true,
        }),
        TableSpec::T5Buckets(T5BucketParams {
            seq: 41,
            num_buckets: 9,
            max_distance: 30,
            bidirectional: false,
        }),
        TableSpec::RelativeClip(RelativeClipParams {
            seq: 23,
            max_relative: 5,
        }),
        TableSpec::Binary(BinaryParams {
            seq: 33,
            dim: 9,
            start: 1000,
        }),
        TableSpec::PatchSimilarity(PatchSimilarityParams {
            grid,
            encoding: PatchEncoding::AxialRope {
                dim: 16,
                theta: 100.0,
            },
        }),
        TableSpec::PatchSimilarity(PatchSimilarityParams {
            grid,
            encoding: PatchEncoding::SinCos {
                dim: 24,
                base: 10_000.0,
            },
        }),
        TableSpec::PatchSimilarity(PatchSimilarityParams {
            grid: GridParams {
                grid_h: 9,
                grid_w: 11,
            },
            encoding: PatchEncoding::MixedRope {
                freqs: poslab::encoding::similarity2d::random_mixed_freqs(32, 100.0, 3).unwrap(),
            },
        }),
    ]
}

pub fn slice<T: Clone>(table: &ArrayD<T>, window: &Window) -> ArrayD<T> {
    let ndim = table.ndim();
    let ranges = [window.heads, window.rows, window.cols];
    let mut view = table.view();
    for (axis, range) in ranges[3 - ndim..].iter().enumerate() {
        view.slice_axis_inplace(
            ndarray::Axis(axis),
            Slice::new(
                range.start as isize,
                Some(range.end as isize),
                range.step as isize,
            ),
        );
    }
    view.to_owned()
}

/// Some windows of a table: the whole, a strided interior, single lines.
pub fn windows_of(shape: [usize; 3]) -> Vec<Window> {
    let [h, r, c] = shape;
    let part = |n: usize, step: usize| Strided {
        start: n / 3,
        end: n,
        step,
    };
    vec![
        Window::all(shape),
        Window {
            heads: part(h, 2).clamp_to(h),
            rows: part(r, 3),
            cols: part(c, 2),
        },
        Window {
            heads: Strided::all(h),
            rows: Strided {
                start: r - 1,
                end: r,
                step: 1,
            },
            cols: Strided::all(c),
        },
        Window {
            heads: Strided::all(h),
            rows: Strided::all(r),
            cols: Strided {
                start: c / 2,
                end: c / 2 + 1,
                step: 5,
            },
        },
    ]
}

trait ClampTo {
    fn clamp_to(self, n: usize) -> Self;
}

impl ClampTo for Strided {
    fn clamp_to(self, n: usize) -> Self {
        if self.is_empty() {
            Strided::all(n)
        } else {
            self
        }
    }
}

/// Writes `.safetensors` holding f32 tensors `(name, values, shape)`.
pub fn safetensors_file(path: &std::path::Path, tensors: &[(&str, &[f32], Vec<usize>)]) {
    let views: Vec<(String, safetensors::tensor::TensorView<'_>)> = tensors
        .iter()
        .map(|(name, values, shape)| {
            let bytes: &[u8] = bytemuck::cast_slice(values);
            (
                name.to_string(),
                safetensors::tensor::TensorView::new(safetensors::Dtype::F32, shape.clone(), bytes)
                    .unwrap(),
            )
        })
        .collect();
    safetensors::tensor::serialize_to_file(views, None, path).unwrap();
}

/// The GPU engine on the machine's adapter, shared by a test binary; a GPU test fails, never
/// skips, where there is none.
pub fn gpu() -> &'static poslab::engine::gpu::GpuEngine {
    static ENGINE: std::sync::OnceLock<poslab::engine::gpu::GpuEngine> = std::sync::OnceLock::new();
    ENGINE.get_or_init(|| {
        poslab::engine::gpu::GpuEngine::new_headless().unwrap_or_else(|e| {
            panic!("GPU tests need an adapter (on Debian: mesa-vulkan-drivers): {e}")
        })
    })
}

/// A real table's values in C order.
pub fn real(table: poslab::engine::Table) -> Vec<f64> {
    match table {
        poslab::engine::Table::Real(values) => values.iter().copied().collect(),
        poslab::engine::Table::Index(_) => panic!("expected a real table"),
    }
}

/// Writes `export`'s figure in `style` as the app's export window does and as the `poslab
/// figure` command it prints does, into `folder` under `name`; asserts that the two files are
/// the same, byte for byte, and returns the SVG.
pub fn assert_command_line_figure_equals_export(
    export: &poslab::views::ViewExport,
    style: &poslab::export::figure::FigureStyle,
    folder: &std::path::Path,
    name: &str,
) -> String {
    use poslab::app::export::{ExportFormat, write_export};
    let from_app = folder.join(format!("app_{name}.svg"));
    write_export(
        export,
        ExportFormat::Svg,
        style,
        1.0,
        poslab::export::RealDtype::F32,
        &from_app,
    )
    .unwrap();
    let from_cli = folder.join(format!("cli_{name}.svg"));
    let words = poslab::export::figure::command_words(
        &export.figure,
        style,
        &from_cli.display().to_string(),
    );
    assert_eq!(poslab::cli::run(&words), 0, "{words:?}");
    let (a, b) = (
        std::fs::read(&from_app).unwrap(),
        std::fs::read(&from_cli).unwrap(),
    );
    assert!(a == b, "{name}: the figures differ; {words:?}");
    String::from_utf8(a).unwrap()
}

/// A press and release of the primary button at `pos` in the app, as a mouse click arrives.
pub fn click_at(
    harness: &mut egui_kittest::Harness<'_, poslab::app::PoslabApp>,
    pos: poslab::egui::Pos2,
) {
    for pressed in [true, false] {
        harness.event(poslab::egui::Event::PointerMoved(pos));
        harness.event(poslab::egui::Event::PointerButton {
            pos,
            button: poslab::egui::PointerButton::Primary,
            pressed,
            modifiers: Default::default(),
        });
        harness.step();
    }
    harness.run();
}

/// The app in a 1100 x 720 window on the GPU engine, machine details hidden (snapshots differ
/// from machine to machine otherwise).
pub fn app_harness() -> egui_kittest::Harness<'static, poslab::app::PoslabApp> {
    egui_kittest::Harness::builder()
        // A heatmap's colour range arrives from the device some frames after its texture.
        .with_max_steps(4000)
        .with_size([1100.0, 720.0])
        .wgpu_setup(poslab::app::wgpu_setup())
        .build_eframe(|cc| poslab::app::PoslabApp::new(cc).hide_machine_details())
}

/// [`app_harness`], the app changed by `change` before its first frame (opened on a file, say).
pub fn app_harness_with(
    change: impl FnOnce(poslab::app::PoslabApp) -> poslab::app::PoslabApp,
) -> egui_kittest::Harness<'static, poslab::app::PoslabApp> {
    egui_kittest::Harness::builder()
        .with_max_steps(4000)
        .with_size([1100.0, 720.0])
        .wgpu_setup(poslab::app::wgpu_setup())
        .build_eframe(|cc| change(poslab::app::PoslabApp::new(cc).hide_machine_details()))
}

/// The number box beside the slider labelled `label`: the spin button on the slider's row (a
/// text box while it is being typed into).
pub fn number_box<'a>(
    harness: &'a egui_kittest::Harness<'_, poslab::app::PoslabApp>,
    label: &str,
) -> egui_kittest::Node<'a> {
    use egui_kittest::kittest::Queryable;
    let slider = harness
        .get_by_role_and_label(poslab::egui::accesskit::Role::Slider, label)
        .rect();
    harness
        .get_all_by_role(poslab::egui::accesskit::Role::SpinButton)
        .filter(|node| {
            let rect = node.rect();
            (rect.center().y - slider.center().y).abs() < 4.0 && rect.left() >= slider.right() - 1.0
        })
        .min_by(|a, b| a.rect().left().total_cmp(&b.rect().left()))
        .unwrap_or_else(|| panic!("no number box beside {label}"))
}

/// Clicks the number box of `label`, types `text` one key at a time (running a frame after
/// each, as a person types), and calls `each` after every keystroke, before Enter.
pub fn type_number(
    harness: &mut egui_kittest::Harness<'_, poslab::app::PoslabApp>,
    label: &str,
    text: &str,
    mut each: impl FnMut(&egui_kittest::Harness<'_, poslab::app::PoslabApp>),
) {
    number_box(harness, label).click();
    harness.run();
    for ch in text.chars() {
        number_box(harness, label).type_text(&ch.to_string());
        harness.run();
        each(harness);
    }
    harness.key_press(poslab::egui::Key::Enter);
    harness.run();
}

/// Runs the poslab binary with `args`: its exit status and what it printed (stdout, then
/// stderr).
pub fn run_poslab(args: &[&str]) -> (i32, String) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_poslab"))
        .args(args)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.code().unwrap_or(-1), text)
}

/// Writes `table` as a little-endian float32 `.npy`.
pub fn write_npy_f32(path: &std::path::Path, table: &ndarray::Array2<f64>) {
    let mut bytes = poslab::export::npy_header(
        &[table.nrows(), table.ncols()],
        false,
        poslab::export::RealDtype::F32,
    );
    for v in table.iter() {
        bytes.extend_from_slice(&(*v as f32).to_le_bytes());
    }
    std::fs::write(path, bytes).unwrap();
}

/// Writes `table` as a little-endian float64 `.npy`.
pub fn write_npy_f64(path: &std::path::Path, table: &ndarray::Array2<f64>) {
    let mut bytes = poslab::export::npy_header(
        &[table.nrows(), table.ncols()],
        false,
        poslab::export::RealDtype::F64,
    );
    for v in table.iter() {
        bytes.extend_from_slice(&v.to_le_bytes());
    }
    std::fs::write(path, bytes).unwrap();
}

/// Storage in memory, as eframe's file storage behaves.
#[derive(Default)]
pub struct MemoryStorage(std::collections::HashMap<String, String>);

impl eframe::Storage for MemoryStorage {
    fn get_string(&self, key: &str) -> Option<String> {
        self.0.get(key).cloned()
    }
    fn set_string(&mut self, key: &str, value: String) {
        self.0.insert(key.to_owned(), value);
    }
    fn remove_string(&mut self, key: &str) {
        self.0.remove(key);
    }
    fn flush(&mut self) {}
}

/// Sets a resource limit (`RLIMIT_AS`, `RLIMIT_FSIZE`, `RLIMIT_CORE`: what `prlimit` sets) on
/// the process `command` starts.
pub fn limit_resource(
    command: &mut std::process::Command,
    resource: libc::__rlimit_resource_t,
    value: u64,
) {
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit is async-signal-safe.
    unsafe {
        command.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: value as libc::rlim_t,
                rlim_max: value as libc::rlim_t,
            };
            libc::setrlimit(resource, &limit);
            Ok(())
        });
    }
}

/// Gives `command`'s process the default disposition of every signal and blocks none, whatever
/// this test process inherited: run as a background job of a script (`cargo test &`, `nohup`)
/// it ignores SIGINT, SIGQUIT (and SIGHUP), and a child would rightly keep ignoring them, so a
/// test that sends a signal would see the child finish instead.
#[cfg(unix)]
pub fn default_signals(command: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: signal, sigemptyset and sigprocmask are async-signal-safe.
    unsafe {
        command.pre_exec(|| {
            for signal in 1..=64 {
                if signal != libc::SIGKILL && signal != libc::SIGSTOP {
                    libc::signal(signal, libc::SIG_DFL);
                }
            }
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut none);
            libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
            Ok(())
        });
    }
}

/// Compares the view pane alone (the central panel below the presentation bar, without the
/// side panel's view picker and controls or the status bar) with the snapshot `name`: adding a
/// view, or a control to the side panel, changes no view's snapshot.
pub fn pane_snapshot(harness: &mut egui_kittest::Harness<'_, poslab::app::PoslabApp>, name: &str) {
    let pane = harness.state().view_pane();
    region_snapshot(harness, pane, name);
}

/// Compares the part `region` (in points) of the app's frame with the snapshot `name`.
pub fn region_snapshot(
    harness: &mut egui_kittest::Harness<'_, poslab::app::PoslabApp>,
    region: poslab::egui::Rect,
    name: &str,
) {
    let scale = harness.ctx.pixels_per_point();
    let frame = harness.render().expect("the frame renders");
    let px = |v: f32| (v * scale).round().max(0.0) as u32;
    let (x, y) = (
        px(region.min.x).min(frame.width()),
        px(region.min.y).min(frame.height()),
    );
    let width = px(region.max.x).min(frame.width()) - x;
    let height = px(region.max.y).min(frame.height()) - y;
    let part = image::imageops::crop_imm(&frame, x, y, width, height).to_image();
    egui_kittest::image_snapshot(&part, name);
}

/// Every `.rs` file under `folder`, recursively (the tests that read the sources).
pub fn rust_files(folder: &std::path::Path, found: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(folder).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}
