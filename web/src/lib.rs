//! poslab as a web page: the entry point the page's JavaScript calls once the module has
//! loaded. Everything else lives in the `poslab` library (`poslab::web`); `web/build.sh`
//! builds this crate for wasm32 and `web/index.html` loads it. On other targets it is empty.

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen(start)]
pub fn start() {
    poslab::web::start();
}

/// A job message in a Web Worker (`worker.js`): runs it and posts its answer.
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn worker_receive(message: wasm_bindgen::JsValue) {
    poslab::web::worker_receive(message);
}
