//! What the app asks of the browser page it runs in (wasm32): downloads for exports, files
//! dropped on the page, and the summary of what it shows (`window.poslabState`) that
//! `web/test.sh` reads. The page's entry is `crate::web`.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use wasm_bindgen::{JsCast, JsValue};

pub(crate) fn js_text(value: &JsValue) -> String {
    value
        .as_string()
        .or_else(|| {
            value
                .dyn_ref::<js_sys::Error>()
                .map(|e| String::from(e.message()))
        })
        .unwrap_or_else(|| format!("{value:?}"))
}

/// Hands `bytes` to the browser as a download named `file_name`.
pub fn download(file_name: &str, bytes: &[u8], media_type: &str) -> Result<(), String> {
    let window = web_sys::window().ok_or("no browser window")?;
    let document = window.document().ok_or("no document")?;
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(media_type);
    let blob = web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &options)
        .map_err(|e| js_text(&e))?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(|e| js_text(&e))?;
    let anchor = document
        .create_element("a")
        .map_err(|e| js_text(&e))?
        .dyn_into::<web_sys::HtmlAnchorElement>()
        .map_err(|_| "no link element")?;
    anchor.set_href(&url);
    anchor.set_download(file_name);
    anchor.click();
    // The download has started from the link; the object URL is released a minute later,
    // not at once, since some browsers read it after the click returns.
    let release = wasm_bindgen::closure::Closure::once_into_js(move || {
        let _ = web_sys::Url::revoke_object_url(&url);
    });
    let _ = window
        .set_timeout_with_callback_and_timeout_and_arguments_0(release.unchecked_ref(), 60_000);
    Ok(())
}

/// Files dropped on the page whose bytes are being read: the app sees each as dropped once
/// its bytes have arrived (see [`hold_dropped_files`]).
#[derive(Default)]
pub struct DroppedFiles {
    read: Rc<RefCell<Vec<egui::DroppedFileHandle>>>,
}

/// A dropped file the page has read, handed over under its name.
#[derive(Debug)]
struct ReadFile {
    path: std::path::PathBuf,
    bytes: Arc<[u8]>,
}

impl egui::DroppedFile for ReadFile {
    fn path(&self) -> &std::path::Path {
        &self.path
    }

    fn bytes_async(&self) -> std::pin::Pin<Box<dyn Future<Output = Result<Vec<u8>, String>> + '_>> {
        let bytes = self.bytes.to_vec();
        Box::pin(async move { Ok(bytes) })
    }
}

impl DroppedFiles {
    /// Takes this frame's dropped files out of `input` and reads them; puts back those read
    /// since the last frame, handed over so that a view opens them by their names.
    pub fn exchange(&self, ctx: &egui::Context, input: &mut egui::RawInput) {
        for file in std::mem::take(&mut input.dropped_files) {
            let (read, ctx) = (self.read.clone(), ctx.clone());
            wasm_bindgen_futures::spawn_local(async move {
                match file.bytes_async().await {
                    Ok(bytes) => {
                        let name = file.path().to_string_lossy().into_owned();
                        let bytes: Arc<[u8]> = bytes.into();
                        let path = crate::import::handed_over::add(&name, bytes.clone());
                        read.borrow_mut()
                            .push(Arc::new(ReadFile { path, bytes }) as egui::DroppedFileHandle);
                    }
                    Err(error) => log::error!("a dropped file could not be read: {error}"),
                }
                ctx.request_repaint();
            });
        }
        input.dropped_files.extend(self.read.borrow_mut().drain(..));
    }
}

/// What the page shows, as `window.poslabState` holds it for the page's test: the engine, the view,
/// whether its picture is ready, and where the view buttons are (CSS pixels).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PageState {
    pub engine: String,
    /// "WebGPU" when the GPU engine computes, else "CPU".
    pub backend: &'static str,
    pub view: String,
    /// Whether the view is still computing what it shows.
    pub computing: bool,
    /// Whether the sinusoidal table's heatmap has been drawn from its exact values.
    pub sinusoidal_drawn: bool,
    /// The status bar's error, if any.
    pub error: Option<String>,
    /// Whether the app is in presentation mode.
    pub present: bool,
    /// The Check view's outcome for the file it has open: its title, and whether it matched.
    pub check: Option<(String, bool)>,
    /// Where each view's button is, in the page's CSS pixels.
    pub views: Vec<ViewButton>,
    /// The sinusoidal column curve shown: the least and largest of its points.
    pub column_curve: Option<(f64, f64)>,
    /// egui's zoom (presentation mode's, or Ctrl+plus).
    pub zoom: f32,
    /// Milliseconds from the page's start to the first frame with a finished picture.
    pub first_picture_ms: Option<f64>,
    /// The Web Workers that run the CPU engine's long jobs, and the jobs they ran.
    pub workers: crate::jobs::web_worker::WorkerState,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ViewButton {
    pub label: String,
    pub x: f32,
    pub y: f32,
}

/// Milliseconds since the page started loading.
pub fn page_time_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

/// Writes `state` into `window.poslabState` (as JSON text, parsed there).
pub fn publish(state: &PageState) {
    let (Some(window), Ok(text)) = (web_sys::window(), serde_json::to_string(state)) else {
        return;
    };
    if let Ok(value) = js_sys::JSON::parse(&text) {
        let _ = js_sys::Reflect::set(&window, &JsValue::from_str("poslabState"), &value);
    }
}
