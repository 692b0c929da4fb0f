//! Work that runs off the UI thread, so that a frame never waits for a result.
//!
//! A [`Latest`] is one slot for one result a view shows (a heatmap's window, a fitted score, a
//! decomposition). A view asks it for the result of some settings (a key); the work runs on a
//! worker thread; each frame the view takes what has arrived and draws what is ready. Asking
//! for other settings cancels the work in flight (the work checks its [`Cancel`] between
//! blocks) and supersedes whatever was waiting to start, so that dragging a slider across a
//! hundred values computes a handful of results, not a hundred queued ones; the result of
//! superseded work is dropped, never shown.
//!
//! On the web there is one thread: work runs on it between frames instead (see [`detach`]), and
//! a job written as a future ([`Latest::request_async`]) gives the page back between its blocks
//! and while the GPU computes.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, TryRecvError, channel};
use std::time::Duration;
use web_time::Instant;

pub mod remote;
#[cfg(target_arch = "wasm32")]
pub mod web_worker;

/// Told to a job that its result is no longer wanted.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<CancelFlag>);

#[derive(Debug, Default)]
struct CancelFlag {
    cancelled: AtomicBool,
    /// Jobs waiting for something else (a Web Worker's answer) that must wake when cancelled.
    wakers: std::sync::Mutex<Vec<std::task::Waker>>,
}

/// A job stopped because its result was no longer wanted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cancelled;

impl Cancel {
    pub fn cancel(&self) {
        self.0.cancelled.store(true, Ordering::Relaxed);
        let wakers = std::mem::take(&mut *self.0.wakers.lock().unwrap_or_else(|p| p.into_inner()));
        for waker in wakers {
            waker.wake();
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.cancelled.load(Ordering::Relaxed)
    }

    /// Wakes `waker` when cancelled (at once if already): a job that awaits something other
    /// than its own work stops waiting.
    pub fn wake_on_cancel(&self, waker: &std::task::Waker) {
        if self.is_cancelled() {
            waker.wake_by_ref();
            return;
        }
        let mut wakers = self.0.wakers.lock().unwrap_or_else(|p| p.into_inner());
        if !wakers.iter().any(|w| w.will_wake(waker)) {
            wakers.push(waker.clone());
        }
    }

    /// `Err(Cancelled)` once the job should stop: `cancel.check()?` between blocks.
    pub fn check(&self) -> Result<(), Cancelled> {
        if self.is_cancelled() {
            Err(Cancelled)
        } else {
            Ok(())
        }
    }

    /// Sleeps for `duration` in short slices, returning early once cancelled (tests slow jobs
    /// down with it; the web cannot sleep, so it does not wait there).
    pub fn sleep(&self, duration: Duration) -> Result<(), Cancelled> {
        if cfg!(target_arch = "wasm32") {
            return self.check();
        }
        let until = Instant::now() + duration;
        loop {
            self.check()?;
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(());
            }
            std::thread::sleep(left.min(Duration::from_millis(5)));
        }
    }
}

enum Message<T> {
    Preview(T),
    Progress(f32),
    Done(T, Duration),
    Failed(String),
}

/// What a running job has: its cancellation flag, and the way to send a coarse result and its
/// progress back before its exact result.
pub struct Reporter<T> {
    sender: Sender<Message<T>>,
    cancel: Cancel,
    ctx: Option<egui::Context>,
}

impl<T> Clone for Reporter<T> {
    fn clone(&self) -> Self {
        Self {
            sender: self.sender.clone(),
            cancel: self.cancel.clone(),
            ctx: self.ctx.clone(),
        }
    }
}

impl<T> Reporter<T> {
    pub fn cancel(&self) -> &Cancel {
        &self.cancel
    }

    /// A coarse result, shown until the exact one arrives.
    pub fn preview(&self, value: T) {
        if !self.cancel.is_cancelled() {
            let _ = self.sender.send(Message::Preview(value));
            self.wake();
        }
    }

    /// How far the job has come, from 0 to 1.
    pub fn progress(&self, fraction: f32) {
        let _ = self
            .sender
            .send(Message::Progress(fraction.clamp(0.0, 1.0)));
        self.wake();
    }

    fn wake(&self) {
        if let Some(ctx) = &self.ctx {
            ctx.request_repaint();
        }
    }
}

/// What arrived from a slot's job since the last frame.
pub enum Update<T> {
    /// A coarse result of the settings last asked for.
    Preview(T),
    /// The exact result of the settings last asked for, and how long the job took.
    Done(T, Duration),
    /// The job stopped without a result (it panicked, or no thread could be started).
    Failed(String),
}

/// A result being computed: what, since when, and how far along.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    pub what: String,
    pub since: Instant,
    pub progress: Option<f32>,
}

/// A job's work: a function run to its end, or a future that may wait (for the GPU, for the
/// page) without holding the thread.
enum Work<T> {
    Now(Box<WorkNow<T>>),
    Later(Box<dyn FnOnce(Reporter<T>) -> JobFuture<T> + Send>),
    /// A [`remote::RemoteJob`] handed to a Web Worker: it may fail there (`Err` with why).
    #[cfg(target_arch = "wasm32")]
    Remote(Box<dyn FnOnce(Reporter<T>) -> web_worker::RemoteFuture<T> + Send>),
}

type WorkNow<T> = dyn FnOnce(&Reporter<T>) -> Result<T, Cancelled> + Send;

/// What a job written as a future returns; it need not be `Send`, since it is made where it
/// runs.
pub type JobFuture<T> = std::pin::Pin<Box<dyn Future<Output = Result<T, Cancelled>>>>;

impl<T> Work<T> {
    async fn run(self, reporter: &Reporter<T>) -> Result<Result<T, String>, Cancelled> {
        match self {
            Work::Now(work) => work(reporter).map(Ok),
            Work::Later(work) => work(reporter.clone()).await.map(Ok),
            #[cfg(target_arch = "wasm32")]
            Work::Remote(work) => work(reporter.clone()).await,
        }
    }
}

struct Running<T> {
    cancel: Cancel,
    receiver: Receiver<Message<T>>,
    pending: Pending,
}

struct Queued<T> {
    pending: Pending,
    work: Work<T>,
}

/// One result computed off the UI thread, for the settings last asked for (see the module's
/// documentation).
pub struct Latest<K, T> {
    wanted: Option<K>,
    running: Option<Running<T>>,
    /// A cancelled job still finishing its block: its messages are dropped.
    draining: Option<Running<T>>,
    queued: Option<Queued<T>>,
}

impl<K, T> Default for Latest<K, T> {
    fn default() -> Self {
        Self {
            wanted: None,
            running: None,
            draining: None,
            queued: None,
        }
    }
}

impl<K: Clone + PartialEq, T: Send + 'static> Latest<K, T> {
    /// What was asked for last: the key of every result [`Self::poll`] returns, which is not
    /// always the frame's own (a frame whose settings went back to those on screen asks for
    /// nothing, while the job of the settings in between still runs and arrives).
    pub fn wanted(&self) -> Option<&K> {
        self.wanted.as_ref()
    }

    /// Whether `key` is what was asked for last (computed, or on its way).
    pub fn wants(&self, key: &K) -> bool {
        self.wanted.as_ref() == Some(key)
    }

    /// Asks for the result of `key`, computed by `work` on a worker thread, unless `key` is
    /// what was asked for last. `what` says what is being computed, for the status bar.
    pub fn request(
        &mut self,
        ctx: Option<&egui::Context>,
        key: K,
        what: impl Into<String>,
        work: impl FnOnce(&Reporter<T>) -> Result<T, Cancelled> + Send + 'static,
    ) {
        self.ask(ctx, key, what.into(), Work::Now(Box::new(work)));
    }

    /// As [`Self::request`], for work written as a future: on the desktop it runs to its end
    /// on a worker thread; on the web it gives the page back whenever it waits.
    pub fn request_async(
        &mut self,
        ctx: Option<&egui::Context>,
        key: K,
        what: impl Into<String>,
        work: impl FnOnce(Reporter<T>) -> JobFuture<T> + Send + 'static,
    ) {
        self.ask(ctx, key, what.into(), Work::Later(Box::new(work)));
    }

    /// As [`Self::request`], for a job that describes itself ([`remote::RemoteJob`]): on the
    /// web it runs in a Web Worker, so that the page only draws while it computes; elsewhere,
    /// and where the browser has no module workers, as any other job.
    pub fn request_remote<J: remote::RemoteJob<Output = T>>(
        &mut self,
        ctx: Option<&egui::Context>,
        key: K,
        what: impl Into<String>,
        job: J,
    ) {
        #[cfg(target_arch = "wasm32")]
        if web_worker::available() {
            let work = Work::Remote(Box::new(move |reporter| {
                Box::pin(async move { web_worker::run(job, &reporter).await })
            }));
            self.ask(ctx, key, what.into(), work);
            return;
        }
        self.request(ctx, key, what, move |reporter| {
            job.run(&remote::Progress::new(
                reporter.cancel(),
                &|fraction| reporter.progress(fraction),
                &|value| reporter.preview(value),
            ))
        });
    }

    fn ask(&mut self, ctx: Option<&egui::Context>, key: K, what: String, work: Work<T>) {
        if self.wants(&key) {
            return;
        }
        self.wanted = Some(key);
        let queued = Queued {
            pending: Pending {
                what,
                since: Instant::now(),
                progress: None,
            },
            work,
        };
        if let Some(running) = self.running.take() {
            running.cancel.cancel();
            if self.draining.is_none() {
                self.draining = Some(running);
            } else {
                // Two jobs at most: the new one waits for the cancelled one to stop.
                self.running = Some(running);
                self.queued = Some(queued);
                return;
            }
        }
        self.queued = None;
        self.start(ctx, queued);
    }

    /// Forgets what was asked for, so that the next request computes even the same key again
    /// (after a failure, or when what a key stands for has changed outside it).
    pub fn forget(&mut self) {
        self.wanted = None;
        if let Some(running) = &self.running {
            running.cancel.cancel();
        }
        self.queued = None;
    }

    /// Takes what has arrived: previews and the result of the settings last asked for, in
    /// order. Results of superseded work are dropped.
    pub fn poll(&mut self, ctx: Option<&egui::Context>) -> Vec<Update<T>> {
        if let Some(draining) = &mut self.draining
            && drain(draining, &mut Vec::new())
        {
            self.draining = None;
        }
        let mut updates = Vec::new();
        if let Some(running) = &mut self.running
            && drain(running, &mut updates)
        {
            self.running = None;
        }
        if let Some(queued) = self.queued.take() {
            if self.running.is_none() {
                self.start(ctx, queued);
            } else {
                self.queued = Some(queued);
            }
        }
        updates
    }

    /// The result on its way, if any.
    pub fn pending(&self) -> Option<&Pending> {
        match (&self.running, &self.queued) {
            // Waiting for a cancelled job to stop: what waits is what is on its way.
            (_, Some(queued)) => Some(&queued.pending),
            (Some(running), None) if !running.cancel.is_cancelled() => Some(&running.pending),
            _ => None,
        }
    }

    /// Whether a result is on its way.
    pub fn is_pending(&self) -> bool {
        self.queued.is_some()
            || self
                .running
                .as_ref()
                .is_some_and(|running| !running.cancel.is_cancelled())
    }

    /// Whether a job, wanted or not, still runs (tests wait for every thread to finish).
    pub fn is_busy(&self) -> bool {
        self.is_pending() || self.running.is_some() || self.draining.is_some()
    }

    fn start(&mut self, ctx: Option<&egui::Context>, queued: Queued<T>) {
        let (sender, receiver) = channel();
        let cancel = Cancel::default();
        let reporter = Reporter {
            sender,
            cancel: cancel.clone(),
            ctx: ctx.cloned(),
        };
        let work = queued.work;
        let spawned = detach(move || async move {
            let started = Instant::now();
            let outcome = catch_panic(work.run(&reporter)).await;
            let message = match outcome {
                Ok(Ok(Ok(value))) => Some(Message::Done(value, started.elapsed())),
                Ok(Err(Cancelled)) => None,
                Ok(Ok(Err(failure))) | Err(failure) => Some(Message::Failed(failure)),
            };
            if let Some(message) = message {
                let _ = reporter.sender.send(message);
            }
            reporter.wake();
        });
        let receiver = match spawned {
            Ok(_) => receiver,
            Err(error) => {
                let (sender, receiver) = channel();
                let _ = sender.send(Message::Failed(format!(
                    "no worker thread could be started: {error}"
                )));
                receiver
            }
        };
        self.running = Some(Running {
            cancel,
            receiver,
            // Since it was asked for, not since it started: the time a person has waited.
            pending: queued.pending,
        });
    }
}

impl<K, T> Drop for Latest<K, T> {
    fn drop(&mut self) {
        for job in [&self.running, &self.draining].into_iter().flatten() {
            job.cancel.cancel();
        }
    }
}

/// Takes a job's messages into `updates` (unless it was cancelled); returns whether it ended.
fn drain<T>(job: &mut Running<T>, updates: &mut Vec<Update<T>>) -> bool {
    let wanted = !job.cancel.is_cancelled();
    loop {
        match job.receiver.try_recv() {
            Ok(Message::Preview(value)) => {
                if wanted {
                    updates.push(Update::Preview(value));
                }
            }
            Ok(Message::Progress(fraction)) => job.pending.progress = Some(fraction),
            Ok(Message::Done(value, took)) => {
                if wanted {
                    updates.push(Update::Done(value, took));
                }
                return true;
            }
            Ok(Message::Failed(message)) => {
                if wanted {
                    updates.push(Update::Failed(message));
                }
                return true;
            }
            Err(TryRecvError::Empty) => return false,
            Err(TryRecvError::Disconnected) => return true,
        }
    }
}

/// Runs `work` off the frame: on a worker thread of its own on the desktop (`Err` when none
/// could be started); on the web, which has one thread, on it after the current frame.
/// `make` makes the work where it runs, so that the work itself need not be `Send`.
pub fn detach<F>(make: impl FnOnce() -> F + Send + 'static) -> std::io::Result<()>
where
    F: Future<Output = ()> + 'static,
{
    #[cfg(not(target_arch = "wasm32"))]
    {
        std::thread::Builder::new()
            .name("poslab-job".to_owned())
            .spawn(move || pollster::block_on(make()))
            .map(|_| ())
    }
    #[cfg(target_arch = "wasm32")]
    {
        wasm_bindgen_futures::spawn_local(make());
        Ok(())
    }
}

/// Notes in the web page's state that the job `name` finished, and where (`"Web Worker"`,
/// `"page"`, `"WebGPU"`), so that the page's test sees which engine computed what; nothing
/// elsewhere.
pub fn note_finished(name: &str, place: &'static str) {
    #[cfg(target_arch = "wasm32")]
    web_worker::record(name, place);
    #[cfg(not(target_arch = "wasm32"))]
    let _ = (name, place);
}

/// Gives the page back for a moment on the web, so that it draws and answers between a job's
/// blocks; nothing on the desktop, where jobs have threads of their own.
pub async fn yield_to_page() {
    #[cfg(target_arch = "wasm32")]
    next_tick().await;
}

/// Resolves on the page's next turn of its event loop (a zero-delay timer): the page draws
/// and answers input before a job's next block.
#[cfg(target_arch = "wasm32")]
async fn next_tick() {
    let promise = js_sys::Promise::new(&mut |resolve, _reject| {
        let scheduled = web_sys::window().is_some_and(|window| {
            window
                .set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, 0)
                .is_ok()
        });
        if !scheduled {
            let _ = resolve.call0(&wasm_bindgen::JsValue::NULL);
        }
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}

/// The giving end of [`answer`].
pub struct Answer<T>(Arc<std::sync::Mutex<Slot<T>>>);

struct Slot<T> {
    value: Option<T>,
    waker: Option<std::task::Waker>,
    /// The giving end was dropped without giving (the device was lost).
    dropped: bool,
}

/// A value given once by a callback (a buffer's mapping), awaited by a job: `None` if the
/// callback was dropped without answering.
pub fn answer<T>() -> (Answer<T>, impl Future<Output = Option<T>> + use<T>) {
    let slot = Arc::new(std::sync::Mutex::new(Slot {
        value: None,
        waker: None,
        dropped: false,
    }));
    let awaited = slot.clone();
    let future = std::future::poll_fn(move |cx| {
        let mut slot = awaited.lock().unwrap_or_else(|p| p.into_inner());
        match slot.value.take() {
            Some(value) => std::task::Poll::Ready(Some(value)),
            None if slot.dropped => std::task::Poll::Ready(None),
            None => {
                slot.waker = Some(cx.waker().clone());
                std::task::Poll::Pending
            }
        }
    });
    (Answer(slot), future)
}

impl<T> Answer<T> {
    /// Gives the value and wakes whoever awaits it.
    pub fn give(self, value: T) {
        let waker = {
            let mut slot = self.0.lock().unwrap_or_else(|p| p.into_inner());
            slot.value = Some(value);
            slot.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

impl<T> Drop for Answer<T> {
    fn drop(&mut self) {
        let waker = {
            let mut slot = self.0.lock().unwrap_or_else(|p| p.into_inner());
            slot.dropped = true;
            slot.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

/// `work`'s output, or the text of its panic (on the web a panic ends the page, as eframe
/// reports).
async fn catch_panic<F: Future>(work: F) -> Result<F::Output, String> {
    #[cfg(not(target_arch = "wasm32"))]
    {
        // Desktop jobs run under `pollster::block_on` on their own thread: the future is
        // polled to its end inside this one call.
        let mut work = std::pin::pin!(work);
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pollster::block_on(work.as_mut())
        }))
        .map_err(|panic| panic_text(&panic))
    }
    #[cfg(target_arch = "wasm32")]
    {
        Ok(work.await)
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    let text = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_owned());
    format!("the computation failed: {text}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settle<K: Clone + PartialEq, T: Send + 'static>(slot: &mut Latest<K, T>) -> Vec<Update<T>> {
        let mut all = Vec::new();
        let until = Instant::now() + Duration::from_secs(20);
        while slot.is_busy() && Instant::now() < until {
            all.extend(slot.poll(None));
            std::thread::sleep(Duration::from_millis(1));
        }
        all.extend(slot.poll(None));
        all
    }

    fn done_values(updates: &[Update<u32>]) -> Vec<u32> {
        updates
            .iter()
            .filter_map(|u| match u {
                Update::Done(v, _) => Some(*v),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn superseded_results_are_never_delivered() {
        let mut slot: Latest<u32, u32> = Latest::default();
        for key in 0..100u32 {
            slot.request(None, key, "test", move |r| {
                r.cancel().sleep(Duration::from_millis(30))?;
                Ok(key)
            });
            std::thread::sleep(Duration::from_millis(1));
            let early = slot.poll(None);
            assert!(done_values(&early).iter().all(|&v| v == key));
        }
        let updates = settle(&mut slot);
        assert_eq!(done_values(&updates), vec![99]);
    }

    #[test]
    fn a_drag_over_many_values_runs_a_handful_of_jobs() {
        let started = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let mut slot: Latest<u32, u32> = Latest::default();
        for key in 0..100u32 {
            let started = started.clone();
            slot.request(None, key, "test", move |r| {
                started.fetch_add(1, Ordering::Relaxed);
                // Uninterruptible work: the slot must not start a thread per request.
                std::thread::sleep(Duration::from_millis(20));
                r.cancel().check()?;
                Ok(key)
            });
            slot.poll(None);
        }
        let updates = settle(&mut slot);
        assert_eq!(done_values(&updates), vec![99]);
        let runs = started.load(Ordering::Relaxed);
        assert!(runs <= 4, "{runs} jobs ran for one drag");
    }

    #[test]
    fn the_same_key_is_not_computed_twice_and_previews_come_first() {
        let mut slot: Latest<u32, u32> = Latest::default();
        slot.request(None, 7, "test", |r| {
            r.preview(1);
            Ok(2)
        });
        slot.request(None, 7, "test", |_| Ok(3));
        let updates = settle(&mut slot);
        let order: Vec<(bool, u32)> = updates
            .iter()
            .map(|u| match u {
                Update::Preview(v) => (true, *v),
                Update::Done(v, _) => (false, *v),
                Update::Failed(_) => (false, 0),
            })
            .collect();
        assert_eq!(order, vec![(true, 1), (false, 2)]);
        assert!(!slot.is_pending());
    }

    #[test]
    fn a_job_written_as_a_future_previews_then_delivers_and_can_be_superseded() {
        let mut slot: Latest<u32, u32> = Latest::default();
        slot.request_async(None, 1, "test", |reporter| {
            Box::pin(async move {
                reporter.preview(10);
                yield_to_page().await;
                reporter.cancel().sleep(Duration::from_millis(200))?;
                Ok(11)
            })
        });
        slot.request_async(None, 2, "test", |reporter| {
            Box::pin(async move {
                reporter.preview(20);
                yield_to_page().await;
                Ok(21)
            })
        });
        let updates = settle(&mut slot);
        let seen: Vec<(bool, u32)> = updates
            .iter()
            .map(|u| match u {
                Update::Preview(v) => (true, *v),
                Update::Done(v, _) => (false, *v),
                Update::Failed(_) => (false, 0),
            })
            .filter(|&(_, v)| v != 10)
            .collect();
        assert_eq!(seen, vec![(true, 20), (false, 21)]);
    }

    #[test]
    fn an_answer_arrives_once_given_and_a_dropped_one_reads_as_none() {
        let (given, awaited) = answer::<u32>();
        let waiting = std::thread::spawn(move || pollster::block_on(awaited));
        std::thread::sleep(Duration::from_millis(20));
        given.give(7);
        assert_eq!(waiting.join().expect("no panic"), Some(7));
        let (dropped, awaited) = answer::<u32>();
        drop(dropped);
        assert_eq!(pollster::block_on(awaited), None);
    }

    #[test]
    fn a_panicking_job_is_reported_not_propagated() {
        let mut slot: Latest<u32, u32> = Latest::default();
        slot.request(None, 1, "test", |_| panic!("boom"));
        let updates = settle(&mut slot);
        assert!(
            matches!(updates.as_slice(), [Update::Failed(m)] if m.contains("boom")),
            "{} updates",
            updates.len()
        );
    }
}
