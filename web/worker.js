// poslab's Web Worker: a second instance of the page's own wasm module, which runs the jobs the
// page hands it (src/jobs/web_worker.rs) so that the page's thread only draws. The page posts
// its compiled module first, then one message per job; messages that arrive while the module
// instantiates wait here.
import init, { worker_receive } from "./poslab_web.js";

let ready = false;
const waiting = [];

function receive(message) {
  try {
    worker_receive(message);
  } catch (error) {
    // A panic has already told the page why (its hook posts first); this says it otherwise.
    self.postMessage({ kind: "failed", message: "the worker stopped: " + error });
    self.close();
  }
}

self.onmessage = async (event) => {
  if (event.data instanceof WebAssembly.Module) {
    await init({ module_or_path: event.data });
    ready = true;
    waiting.splice(0).forEach(receive);
  } else if (ready) {
    receive(event.data);
  } else {
    waiting.push(event.data);
  }
};
