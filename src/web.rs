//! The app as a web page (wasm32): the page's entry, and what the browser does in the
//! desktop's place. The page has one thread and no file system, so: jobs run between frames
//! and give the page back while they wait (see [`crate::jobs`]); exports are downloads
//! ([`download`]); a chosen or dropped file is read into memory under its name
//! ([`crate::import::handed_over`]). The app also writes a small summary of what it shows into
//! `window.poslabState` ([`PageState`]), which `web/test.sh` reads.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use wasm_bindgen::{JsCast, JsValue};

/// Starts the app on the page's canvas `#poslab`; what goes wrong is written into the page.
pub fn start() {
    // The page's console gets wgpu's and eframe's warnings and errors.
    let _ = eframe::WebLogger::init(log::LevelFilter::Warn);
    wasm_bindgen_futures::spawn_local(async {
        let outcome = run().await;
        if let Err(message) = outcome {
            log::error!("poslab could not start: {message}");
            set_page_message(&format!("poslab could not start: {message}"));
        } else {
            set_page_message("");
        }
    });
}

async fn run() -> Result<(), String> {
    let document = web_sys::window()
        .and_then(|w| w.document())
        .ok_or("the page has no document")?;
    let canvas = document
        .get_element_by_id("poslab")
        .ok_or("the page has no canvas with id \"poslab\"")?
        .dyn_into::<web_sys::HtmlCanvasElement>()
        .map_err(|_| "the element \"poslab\" is not a canvas")?;
    let mut options = eframe::WebOptions::default();
    options.wgpu_options.wgpu_setup = crate::app::wgpu_setup();
    // A link may name a view and settings, as `poslab app` does: `?view=alibi&heads=16`.
    let query = web_sys::window()
        .and_then(|w| w.location().search().ok())
        .unwrap_or_default();
    eframe::WebRunner::new()
        .start(
            canvas,
            options,
            Box::new(move |cc| {
                let app = crate::app::PoslabApp::new(cc);
                Ok(Box::new(match crate::cli::app::launch_from_query(&query) {
                    Ok(launch) => app.launched(&launch),
                    Err(message) => app.with_message(message),
                }))
            }),
        )
        .await
        .map_err(|error| js_text(&error))
}

/// Writes `text` into the page's `#message` element (the "Loading…" line), or hides it.
fn set_page_message(text: &str) {
    let element = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id("message"));
    if let Some(element) = element {
        element.set_text_content(Some(text));
        if let Ok(element) = element.dyn_into::<web_sys::HtmlElement>() {
            let display = if text.is_empty() { "none" } else { "block" };
            let _ = element.style().set_property("display", display);
        }
    }
}

fn js_text(value: &JsValue) -> String {
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
    /// The Check view's outcome for the file it has open: its title, and whether it matched.
    pub check: Option<(String, bool)>,
    pub views: Vec<ViewButton>,
    /// Milliseconds from the page's start to the first frame with a finished picture.
    pub first_picture_ms: Option<f64>,
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
