//! Work that runs off the UI thread, so that a frame never waits for a result.
//!
//! A [`Latest`] is one slot for one result a view shows (a heatmap's window, a fitted score, a
//! decomposition). A view asks it for the result of some settings (a key); the work runs on a
//! worker thread; each frame the view takes what has arrived and draws what is ready. Asking
//! for other settings cancels the work in flight (the work checks its [`Cancel`] between
//! blocks) and supersedes whatever was waiting to start, so that dragging a slider across a
//! hundred values computes a handful of results, not a hundred queued ones; the result of
//! superseded work is dropped, never shown.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, TryRecvError, channel};
use std::time::{Duration, Instant};

/// Told to a job that its result is no longer wanted.
#[derive(Debug, Clone, Default)]
pub struct Cancel(Arc<AtomicBool>);

/// A job stopped because its result was no longer wanted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cancelled;

impl Cancel {
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// `Err(Cancelled)` once the job should stop: `cancel.check()?` between blocks.
    pub fn check(&self) -> Result<(), Cancelled> {
        if self.is_cancelled() {
            Err(Cancelled)
        } else {
            Ok(())
        }
    }

    /// Sleeps for `duration` in short slices, returning early once cancelled.
    pub fn sleep(&self, duration: Duration) -> Result<(), Cancelled> {
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

type Work<T> = Box<dyn FnOnce(&Reporter<T>) -> Result<T, Cancelled> + Send>;

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
        if self.wants(&key) {
            return;
        }
        self.wanted = Some(key);
        let queued = Queued {
            pending: Pending {
                what: what.into(),
                since: Instant::now(),
                progress: None,
            },
            work: Box::new(work),
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
        let spawned = std::thread::Builder::new()
            .name("poslab-job".to_owned())
            .spawn(move || {
                let started = Instant::now();
                let outcome =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&reporter)));
                let message = match outcome {
                    Ok(Ok(value)) => Some(Message::Done(value, started.elapsed())),
                    Ok(Err(Cancelled)) => None,
                    Err(panic) => Some(Message::Failed(panic_text(&panic))),
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
