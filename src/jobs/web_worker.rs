//! Web Workers for [`super::remote`] jobs (wasm32 only): the page's side, which hands a job to
//! a worker and awaits its answer, and the worker's side, which runs it.
//!
//! A worker is `worker.js` beside the page: a module worker that instantiates the page's own
//! compiled wasm module (posted to it first, so it is not fetched or compiled again) and hands
//! each job message to [`serve`]. No memory is shared, so the page needs no cross-origin
//! isolation headers: a plain static host serves it. A job's bulk arrays are copied into
//! transferable buffers a slice per turn of the page's loop, so that even a 128 MB table never
//! holds a frame for long. A superseded job's worker is terminated at once (a worker running
//! a job cannot read a message); a finished one is kept for the next job.
//!
//! Where workers cannot start (no module workers, `worker.js` missing), jobs run on the page
//! as before, and the page's state says so.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::task::{Poll, Waker};

use js_sys::{Array, Float64Array, Object, Reflect, Uint8Array};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};

use super::remote::{Bulk, Parcel, Progress, RemoteEntry, RemoteJob, decode, encode, find};
use super::{Cancel, Cancelled, Reporter, yield_to_page};

/// What a job handed to a worker resolves to: its output, why it failed, or that it was
/// cancelled.
pub type RemoteFuture<T> =
    std::pin::Pin<Box<dyn Future<Output = Result<Result<T, String>, Cancelled>>>>;

/// Floats copied between the page's memory and a message per turn of the page's loop (16 MB,
/// a few milliseconds).
const SLICE: usize = 1 << 21;

/// Idle workers kept for the next jobs.
const KEPT: usize = 2;

/// The workers of the page, and what they have done (for the page's state).
#[derive(Default)]
struct Pool {
    idle: Vec<web_sys::Worker>,
    /// Why workers cannot be used on this page, once found.
    unavailable: Option<String>,
    started: usize,
    running: usize,
    /// The last jobs finished: their name, and where they ran.
    finished: VecDeque<(String, &'static str)>,
}

thread_local! {
    static POOL: RefCell<Pool> = RefCell::new(Pool::default());
}

/// What the page's state says about its workers.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct WorkerState {
    /// Workers started since the page loaded.
    pub started: usize,
    /// Jobs running in workers now.
    pub running: usize,
    /// Why jobs run on the page instead, if they do.
    pub unavailable: Option<String>,
    /// The last jobs finished, oldest first: `(name, where)`, where is `"Web Worker"`,
    /// `"page"` (workers could not start) or `"WebGPU"` (see [`super::note_finished`]).
    pub finished: Vec<(String, &'static str)>,
}

pub fn state() -> WorkerState {
    POOL.with_borrow(|pool| WorkerState {
        started: pool.started,
        running: pool.running,
        unavailable: pool.unavailable.clone(),
        finished: pool.finished.iter().cloned().collect(),
    })
}

/// Whether jobs go to workers: on a page (a worker's own jobs run where they are) whose
/// workers have not failed to start.
pub fn available() -> bool {
    web_sys::window().is_some() && POOL.with_borrow(|pool| pool.unavailable.is_none())
}

pub(super) fn record(name: &str, place: &'static str) {
    POOL.with_borrow_mut(|pool| {
        pool.finished.push_back((name.to_owned(), place));
        while pool.finished.len() > 16 {
            pool.finished.pop_front();
        }
    });
}

fn hire() -> Result<web_sys::Worker, String> {
    if let Some(worker) = POOL.with_borrow_mut(|pool| pool.idle.pop()) {
        return Ok(worker);
    }
    let options = web_sys::WorkerOptions::new();
    options.set_type(web_sys::WorkerType::Module);
    let worker = web_sys::Worker::new_with_options("worker.js", &options).map_err(js_text)?;
    // The page's own compiled module: the worker instantiates it without fetching it again.
    worker
        .post_message(&wasm_bindgen::module())
        .map_err(js_text)?;
    POOL.with_borrow_mut(|pool| pool.started += 1);
    Ok(worker)
}

/// A worker on a job: terminated when dropped (the job was cancelled or failed) unless it was
/// given back.
struct Hired {
    worker: Option<web_sys::Worker>,
    inbox: Rc<RefCell<Inbox>>,
    _on_message: Closure<dyn FnMut(web_sys::MessageEvent)>,
    _on_error: Closure<dyn FnMut(web_sys::Event)>,
}

#[derive(Default)]
struct Inbox {
    events: VecDeque<Event>,
    waker: Option<Waker>,
}

enum Event {
    Message(JsValue),
    /// The worker's script failed (it could not load, or the module trapped).
    Error(String),
}

impl Hired {
    fn new(worker: web_sys::Worker) -> Self {
        let inbox = Rc::new(RefCell::new(Inbox::default()));
        let deliver = |inbox: &Rc<RefCell<Inbox>>, event| {
            let mut inbox = inbox.borrow_mut();
            inbox.events.push_back(event);
            if let Some(waker) = inbox.waker.take() {
                waker.wake();
            }
        };
        let to_inbox = inbox.clone();
        let on_message = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(
            move |event: web_sys::MessageEvent| deliver(&to_inbox, Event::Message(event.data())),
        );
        let to_inbox = inbox.clone();
        // A script that fails in the worker sends an ErrorEvent; one that could not be loaded
        // at all (a host without worker.js), a plain Event.
        let on_error = Closure::<dyn FnMut(web_sys::Event)>::new(move |event: web_sys::Event| {
            event.prevent_default();
            let message = event
                .dyn_ref::<web_sys::ErrorEvent>()
                .map(|error| error.message())
                .filter(|message| !message.is_empty())
                .unwrap_or_else(|| "worker.js could not be loaded".to_owned());
            deliver(&to_inbox, Event::Error(message))
        });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        POOL.with_borrow_mut(|pool| pool.running += 1);
        Self {
            worker: Some(worker),
            inbox,
            _on_message: on_message,
            _on_error: on_error,
        }
    }

    /// The next event, or `Err` once the job is cancelled.
    async fn next(&self, cancel: &Cancel) -> Result<Event, Cancelled> {
        std::future::poll_fn(|cx| {
            if cancel.is_cancelled() {
                return Poll::Ready(Err(Cancelled));
            }
            let mut inbox = self.inbox.borrow_mut();
            match inbox.events.pop_front() {
                Some(event) => Poll::Ready(Ok(event)),
                None => {
                    inbox.waker = Some(cx.waker().clone());
                    cancel.wake_on_cancel(cx.waker());
                    Poll::Pending
                }
            }
        })
        .await
    }

    fn post(&self, message: &JsValue, transfer: &Array) -> Result<(), String> {
        match &self.worker {
            Some(worker) => worker
                .post_message_with_transfer(message, transfer)
                .map_err(js_text),
            None => Err("no worker".to_owned()),
        }
    }

    /// Keeps the worker for the next job.
    fn give_back(mut self) {
        if let Some(worker) = self.worker.take() {
            worker.set_onmessage(None);
            worker.set_onerror(None);
            POOL.with_borrow_mut(|pool| {
                if pool.idle.len() < KEPT {
                    pool.idle.push(worker);
                } else {
                    worker.terminate();
                }
            });
        }
    }
}

impl Drop for Hired {
    fn drop(&mut self) {
        POOL.with_borrow_mut(|pool| pool.running = pool.running.saturating_sub(1));
        if let Some(worker) = self.worker.take() {
            worker.set_onmessage(None);
            worker.set_onerror(None);
            worker.terminate();
        }
    }
}

/// Runs `job` in a worker, reporting its progress; on the page when no worker can start.
pub async fn run<J: RemoteJob>(
    job: J,
    reporter: &Reporter<J::Output>,
) -> Result<Result<J::Output, String>, Cancelled> {
    let cancel = reporter.cancel();
    let parcel = match encode(&job) {
        Ok(parcel) => parcel,
        Err(error) => return Ok(Err(error)),
    };
    let (message, transfer) = to_message(J::NAME, &parcel, cancel).await?;
    drop(parcel);
    let hired = match hire() {
        Ok(worker) => Hired::new(worker),
        Err(reason) => return run_here(job, reporter, reason),
    };
    if let Err(reason) = hired.post(&message, &transfer) {
        return run_here(job, reporter, reason);
    }
    let mut started = false;
    loop {
        match hired.next(cancel).await? {
            Event::Message(message) => match text_field(&message, "kind").as_deref() {
                Some("started") => started = true,
                Some("progress") => {
                    let fraction = Reflect::get(&message, &"fraction".into())
                        .ok()
                        .and_then(|f| f.as_f64())
                        .unwrap_or(0.0);
                    reporter.progress(fraction as f32);
                }
                Some("preview") => {
                    if let Ok(Ok(preview)) = from_message(&message, cancel)
                        .await
                        .map(|parcel| parcel.and_then(decode))
                    {
                        reporter.preview(preview);
                    }
                }
                Some("done") => {
                    let parcel = from_message(&message, cancel).await;
                    hired.give_back();
                    record(J::NAME, "Web Worker");
                    return Ok(parcel?.and_then(decode));
                }
                _ => {
                    let why = text_field(&message, "message")
                        .unwrap_or_else(|| "the worker's answer was not understood".to_owned());
                    return Ok(Err(why));
                }
            },
            // Before the job started, the worker could not load: none ever will.
            Event::Error(reason) if !started => {
                drop(hired);
                return run_here(
                    job,
                    reporter,
                    format!("the Web Worker could not start: {reason}"),
                );
            }
            Event::Error(reason) => return Ok(Err(format!("the Web Worker stopped: {reason}"))),
        }
    }
}

/// Runs `job` on the page, after workers were found not to start (`reason`): from now on
/// every job does.
fn run_here<J: RemoteJob>(
    job: J,
    reporter: &Reporter<J::Output>,
    reason: String,
) -> Result<Result<J::Output, String>, Cancelled> {
    log::warn!("jobs run on the page: {reason}");
    POOL.with_borrow_mut(|pool| pool.unavailable = Some(reason));
    let output = job.run(&Progress::new(
        reporter.cancel(),
        &|fraction| reporter.progress(fraction),
        &|value| reporter.preview(value),
    ))?;
    record(J::NAME, "page");
    Ok(Ok(output))
}

/// The message of a job: `{ name, header, arrays }`, and the buffers it transfers. The arrays
/// are copied a slice per turn of the page's loop.
async fn to_message(
    name: &str,
    parcel: &Parcel,
    cancel: &Cancel,
) -> Result<(JsValue, Array), Cancelled> {
    let transfer = Array::new();
    let arrays = Array::new();
    for bulk in &parcel.arrays {
        let values = bulk.as_slice();
        let target = Float64Array::new_with_length(values.len() as u32);
        for (index, slice) in values.chunks(SLICE).enumerate() {
            let at = (index * SLICE) as u32;
            target
                .subarray(at, at + slice.len() as u32)
                .copy_from(slice);
            if values.len() > SLICE {
                yield_to_page().await;
                cancel.check()?;
            }
        }
        transfer.push(&target.buffer());
        arrays.push(&target);
    }
    let header = Uint8Array::from(parcel.header.as_slice());
    transfer.push(&header.buffer());
    let message = Object::new();
    let _ = Reflect::set(&message, &"name".into(), &name.into());
    let _ = Reflect::set(&message, &"header".into(), &header);
    let _ = Reflect::set(&message, &"arrays".into(), &arrays);
    Ok((message.into(), transfer))
}

/// The parcel a `done` message holds, its arrays copied a slice per turn of the page's loop.
async fn from_message(
    message: &JsValue,
    cancel: &Cancel,
) -> Result<Result<Parcel, String>, Cancelled> {
    let Some((header, arrays)) = parcel_fields(message) else {
        return Ok(Err("the worker's answer holds no result".to_owned()));
    };
    let mut bulk = Vec::with_capacity(arrays.length() as usize);
    for source in arrays.iter() {
        let Ok(source) = source.dyn_into::<Float64Array>() else {
            return Ok(Err(
                "the worker's answer holds an array that is not of floats".to_owned(),
            ));
        };
        let length = source.length() as usize;
        let mut values = Vec::with_capacity(length);
        let mut at = 0;
        while at < length {
            let end = (at + SLICE).min(length);
            values.extend_from_slice(&source.subarray(at as u32, end as u32).to_vec());
            at = end;
            if length > SLICE {
                yield_to_page().await;
                cancel.check()?;
            }
        }
        bulk.push(Bulk::Owned(values));
    }
    Ok(Ok(Parcel {
        header: header.to_vec(),
        arrays: bulk,
    }))
}

fn parcel_fields(message: &JsValue) -> Option<(Uint8Array, Array)> {
    let header = Reflect::get(message, &"header".into())
        .ok()?
        .dyn_into()
        .ok()?;
    let arrays = Reflect::get(message, &"arrays".into())
        .ok()?
        .dyn_into()
        .ok()?;
    Some((header, arrays))
}

fn text_field(message: &JsValue, field: &str) -> Option<String> {
    Reflect::get(message, &field.into()).ok()?.as_string()
}

fn js_text(value: JsValue) -> String {
    value
        .dyn_ref::<js_sys::Error>()
        .map(|error| String::from(error.message()))
        .or_else(|| value.as_string())
        .unwrap_or_else(|| format!("{value:?}"))
}

/// The worker's side: runs the job `message` names from `registry`, and posts its progress
/// and then its output (or why it failed) back to the page.
pub fn serve(message: JsValue, registry: &[RemoteEntry]) {
    static HOOK: std::sync::Once = std::sync::Once::new();
    // A panic ends the worker's instance: the page hears why first.
    HOOK.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            answer_failure(&format!("the computation failed: {info}"));
        }))
    });
    answer(&kind_message("started"), &Array::new());
    let name = text_field(&message, "name").unwrap_or_default();
    let Some(entry) = find(registry, &name) else {
        answer_failure(&format!("this page knows no job named {name:?}"));
        return;
    };
    let Some((header, arrays)) = parcel_fields(&message) else {
        answer_failure("the job's message holds no parcel");
        return;
    };
    let arrays = arrays
        .iter()
        .map(|array| Bulk::Owned(Float64Array::new(&array).to_vec()))
        .collect();
    let parcel = Parcel {
        header: header.to_vec(),
        arrays,
    };
    let last = std::cell::Cell::new(-1.0f32);
    let report = |fraction: f32| {
        // A message per percent at most.
        if fraction - last.get() >= 0.01 || fraction >= 1.0 {
            last.set(fraction);
            let message = kind_message("progress");
            let _ = Reflect::set(&message, &"fraction".into(), &JsValue::from(fraction));
            answer(&message, &Array::new());
        }
    };
    let preview = |parcel: Parcel| answer_parcel("preview", &parcel);
    let cancel = Cancel::default();
    match entry.run(parcel, &Progress::new(&cancel, &report, &preview)) {
        Ok(Ok(output)) => answer_parcel("done", &output),
        Ok(Err(why)) => answer_failure(&why),
        Err(Cancelled) => answer_failure("the job was cancelled"),
    }
}

/// Posts `parcel` to the page as a message of `kind` (`done`, `preview`), its buffers
/// transferred.
fn answer_parcel(kind: &str, parcel: &Parcel) {
    let transfer = Array::new();
    let arrays: Array = parcel
        .arrays
        .iter()
        .map(|bulk| {
            let array = Float64Array::from(bulk.as_slice());
            transfer.push(&array.buffer());
            JsValue::from(array)
        })
        .collect();
    let header = Uint8Array::from(parcel.header.as_slice());
    transfer.push(&header.buffer());
    let message = kind_message(kind);
    let _ = Reflect::set(&message, &"header".into(), &header);
    let _ = Reflect::set(&message, &"arrays".into(), &arrays);
    answer(&message, &transfer);
}

fn kind_message(kind: &str) -> Object {
    let message = Object::new();
    let _ = Reflect::set(&message, &"kind".into(), &kind.into());
    message
}

fn answer_failure(why: &str) {
    let message = kind_message("failed");
    let _ = Reflect::set(&message, &"message".into(), &why.into());
    answer(&message, &Array::new());
}

fn answer(message: &JsValue, transfer: &Array) {
    let scope = js_sys::global().unchecked_into::<web_sys::DedicatedWorkerGlobalScope>();
    let _ = scope.post_message_with_transfer(message, transfer);
}
