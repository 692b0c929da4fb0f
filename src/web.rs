//! The app as a web page (wasm32): the page's entry, and what the browser does in the
//! desktop's place. The page has one thread and no file system, so: jobs run between frames
//! and give the page back while they wait (see [`crate::jobs`]); exports are downloads
//! ([`crate::app::page::download`]); a chosen or dropped file is read into memory under its
//! name ([`crate::import::handed_over`]). The app also writes a small summary of what it shows
//! into `window.poslabState` ([`crate::app::page::PageState`]), which `web/test.sh` reads.

use wasm_bindgen::JsCast;

/// Starts the app on the page's canvas `#poslab`; what goes wrong is written into the page.
pub fn start() {
    // In a Web Worker the module runs jobs (see [`worker_receive`]), not the app.
    if web_sys::window().is_none() {
        return;
    }
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
        .map_err(|error| crate::app::page::js_text(&error))
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

/// Runs the job of a message the page posted to this Web Worker (`worker.js` hands each one
/// over): see [`crate::jobs::web_worker`].
pub fn worker_receive(message: wasm_bindgen::JsValue) {
    crate::jobs::web_worker::serve(message, crate::app::remote_jobs::REGISTRY);
}
