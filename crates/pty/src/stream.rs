//! The output path of a session: the pump task (PTY chunks → query filter →
//! subscribers and the model's queue), the model thread, and the blocking
//! reader/writer loops. See the `session` module docs for the overview.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

use bytes::Bytes;
use harness_term::{QueryFilter, TerminalModel};
use tokio::sync::{Notify, mpsc, oneshot, watch};
use tokio::time::Instant;

use crate::output::{Subscriber, SubscriberLimits};
use crate::session::{ExitStatus, SessionOptions};

/// Output as it streams: filter, subscribers, and the model's queue.
pub(crate) struct StreamState {
    pub(crate) filter: QueryFilter,
    pub(crate) subscribers: Vec<Subscriber>,
    /// Filtered output not yet fed to the model.
    pub(crate) pending: VecDeque<Bytes>,
    pub(crate) pending_bytes: usize,
    /// The model thread took a batch and is feeding it.
    pub(crate) in_flight: bool,
    /// Bytes skipped by the model under a flood.
    pub(crate) skipped: u64,
    pub(crate) last_output: Instant,
    pub(crate) bytes_out: u64,
    pub(crate) exited_at: Option<Instant>,
    /// No more output: the model thread stops once the queue is empty.
    pub(crate) closed: bool,
}

pub(crate) struct Shared {
    pub(crate) model: Mutex<TerminalModel>,
    pub(crate) stream: Mutex<StreamState>,
    /// Signals the model thread (paired with `stream`).
    pub(crate) work: Condvar,
    /// Poked by the model thread after each batch.
    pub(crate) model_progress: Notify,
    pub(crate) exit_tx: watch::Sender<Option<ExitStatus>>,
    pub(crate) viewers: AtomicUsize,
    pub(crate) last_viewer_left: Mutex<Option<Instant>>,
    pub(crate) observers: Mutex<Vec<Arc<Notify>>>,
    pub(crate) turn_complete: AtomicBool,
    pub(crate) turn_notify: Notify,
    /// Reads done by the reader thread (to tell a quiet PTY from a starved
    /// pump while draining).
    pub(crate) reads: AtomicU64,
    /// The drain after exit timed out: a descendant still holds the PTY.
    pub(crate) lingering: AtomicBool,
    /// Bumped on every batch of output (a watcher's cheap "anything new?").
    pub(crate) output_generation: AtomicU64,
    pub(crate) snapshot_history: usize,
    pub(crate) limits: SubscriberLimits,
    pub(crate) model_lag_max: usize,
    /// Scrollback of the model (to rebuild it after a panic).
    pub(crate) scrollback: usize,
    /// The model thread panicked: the model was reset to a blank screen and
    /// is no longer fed; output still streams to subscribers.
    pub(crate) model_failed: AtomicBool,
    /// Test hook: the model thread panics on a batch containing these bytes.
    pub(crate) model_panic_marker: Option<Vec<u8>>,
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // No invariant spans a panic inside these short critical sections.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Largest batch the model thread feeds per lock hold.
const MODEL_BATCH: usize = 256 * 1024;

impl Shared {
    pub(crate) fn new(
        rows: u16,
        cols: u16,
        opts: &SessionOptions,
        exit_tx: watch::Sender<Option<ExitStatus>>,
    ) -> Self {
        Self {
            model: Mutex::new(TerminalModel::with_scrollback(rows, cols, opts.scrollback)),
            stream: Mutex::new(StreamState {
                filter: QueryFilter::new(),
                subscribers: Vec::new(),
                pending: VecDeque::new(),
                pending_bytes: 0,
                in_flight: false,
                skipped: 0,
                last_output: Instant::now(),
                bytes_out: 0,
                exited_at: None,
                closed: false,
            }),
            work: Condvar::new(),
            model_progress: Notify::new(),
            exit_tx,
            viewers: AtomicUsize::new(0),
            last_viewer_left: Mutex::new(None),
            observers: Mutex::new(Vec::new()),
            turn_complete: AtomicBool::new(false),
            turn_notify: Notify::new(),
            reads: AtomicU64::new(0),
            lingering: AtomicBool::new(false),
            output_generation: AtomicU64::new(0),
            snapshot_history: opts.snapshot_history,
            limits: opts.subscriber,
            model_lag_max: opts.model_lag_max.max(64 * 1024),
            scrollback: opts.scrollback,
            model_failed: AtomicBool::new(false),
            model_panic_marker: opts.model_panic_marker.clone().filter(|m| !m.is_empty()),
        }
    }

    pub(crate) fn notify_observers(&self) {
        for n in lock(&self.observers).iter() {
            n.notify_one();
        }
    }

    /// Handles every chunk read so far as one batch (fewer locks, fewer and
    /// larger messages to subscribers).
    pub(crate) fn on_output(&self, chunks: &[Bytes]) {
        self.output_generation.fetch_add(1, Ordering::Release);
        let mut st = lock(&self.stream);
        st.last_output = Instant::now();
        let mut filtered = Vec::with_capacity(chunks.iter().map(Bytes::len).sum());
        for chunk in chunks {
            st.bytes_out += chunk.len() as u64;
            st.filter.filter_into(chunk, &mut filtered);
        }
        if filtered.is_empty() {
            return;
        }
        let bytes = Bytes::from(filtered);
        st.subscribers.retain(|s| s.offer(&bytes));
        if self.model_failed.load(Ordering::Acquire) {
            // Nobody parses any more: stream only.
            return;
        }
        st.pending_bytes += bytes.len();
        st.pending.push_back(bytes);
        if st.pending_bytes > self.model_lag_max {
            skip_flood(&mut st, self.model_lag_max / 2);
        }
        self.work.notify_one();
    }

    /// True when the model has processed everything queued (or failed and
    /// will process nothing more).
    pub(crate) fn model_caught_up(&self) -> bool {
        if self.model_failed.load(Ordering::Acquire) {
            return true;
        }
        let st = lock(&self.stream);
        st.pending.is_empty() && !st.in_flight
    }

    /// Waits until the model caught up, at most `max`; `false` on timeout.
    /// Every wait on the model thread is bounded: a thread that stopped
    /// (panicked, starved) must not hang the session.
    pub(crate) async fn wait_model(&self, max: std::time::Duration) -> bool {
        let wait = async {
            loop {
                let progress = self.model_progress.notified();
                tokio::pin!(progress);
                progress.as_mut().enable();
                if self.model_caught_up() {
                    return;
                }
                progress.await;
            }
        };
        tokio::time::timeout(max, wait).await.is_ok()
    }

    /// The model thread panicked: reset the model to a blank screen of the
    /// same size (its state may be inconsistent), stop feeding it, release
    /// every waiter. Output keeps streaming to subscribers.
    fn model_panicked(&self, model: &mut TerminalModel, panic: &(dyn std::any::Any + Send)) {
        let reason = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        tracing::error!(
            %reason,
            "terminal model panicked: the screen model is reset and no longer updated; \
             output keeps streaming"
        );
        let (rows, cols) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| model.size()))
            .unwrap_or((24, 80));
        *model = TerminalModel::with_scrollback(rows, cols, self.scrollback);
        self.model_failed.store(true, Ordering::Release);
        let mut st = lock(&self.stream);
        st.skipped += st.pending_bytes as u64;
        st.pending.clear();
        st.pending_bytes = 0;
        st.in_flight = false;
        drop(st);
        self.model_progress.notify_waiters();
    }

    pub(crate) fn close(&self) {
        lock(&self.stream).closed = true;
        self.work.notify_all();
    }

    pub(crate) fn finish(&self, status: ExitStatus) {
        {
            let mut st = lock(&self.stream);
            st.exited_at = Some(Instant::now());
            // Dropping the senders ends every subscription after its queued
            // output; the exit status is set first so they can report it.
            self.exit_tx.send_replace(Some(status));
            st.subscribers.clear();
            st.closed = true;
        }
        self.work.notify_all();
        self.turn_notify.notify_waiters();
        self.notify_observers();
    }
}

/// Drops the oldest queued output down to `keep` bytes (the newest chunk is
/// always kept, so the queue is bounded by `keep` plus one pump batch),
/// keeping the dropped chunks' mode-setting sequences for the model.
fn skip_flood(st: &mut StreamState, keep: usize) {
    let mut modes = Vec::new();
    // Never the newest chunk: the end of the output is what the screen shows.
    while st.pending_bytes > keep && st.pending.len() > 1 {
        let Some(old) = st.pending.pop_front() else {
            break;
        };
        st.pending_bytes -= old.len();
        st.skipped += old.len() as u64;
        harness_term::mode_sequences(&old, &mut modes);
    }
    if !modes.is_empty() {
        st.pending_bytes += modes.len();
        st.pending.push_front(Bytes::from(modes));
    }
    tracing::debug!(
        skipped = st.skipped,
        "terminal model skipping a flood of output"
    );
}

pub(crate) fn model_loop(shared: &Shared) {
    loop {
        {
            let mut st = lock(&shared.stream);
            while st.pending.is_empty() {
                if st.closed {
                    return;
                }
                st = shared.work.wait(st).unwrap_or_else(PoisonError::into_inner);
            }
        }
        // Take the batch while holding the model lock, so a subscriber
        // (model lock, then stream lock) sees each byte either in the model
        // or in the queue, never in neither.
        let mut model = lock(&shared.model);
        let (batch, behind) = {
            let mut st = lock(&shared.stream);
            let mut batch = Vec::new();
            let mut size = 0;
            while size < MODEL_BATCH {
                let Some(b) = st.pending.pop_front() else {
                    break;
                };
                size += b.len();
                batch.push(b);
            }
            st.pending_bytes -= size;
            st.in_flight = true;
            // Still far behind after this batch: the output is flooding and
            // this batch will scroll away long before anyone looks.
            let behind = st.pending_bytes >= shared.model_lag_max / 2;
            if behind {
                st.skipped += size as u64;
            }
            (batch, behind)
        };
        let fed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            if let Some(marker) = &shared.model_panic_marker
                && batch
                    .iter()
                    .any(|b| b.windows(marker.len()).any(|w| w == marker.as_slice()))
            {
                panic!("test hook: terminal model panic");
            }
            if behind {
                // Keep only what changes modes; parse the tail when it comes.
                let mut modes = Vec::new();
                for b in &batch {
                    harness_term::mode_sequences(b, &mut modes);
                }
                model.feed(&modes);
            } else {
                for b in &batch {
                    model.feed(b);
                }
            }
        }));
        if let Err(panic) = fed {
            shared.model_panicked(&mut model, panic.as_ref());
            return;
        }
        drop(model);
        lock(&shared.stream).in_flight = false;
        shared.model_progress.notify_waiters();
        if behind {
            // Let the flood accumulate instead of spinning on it.
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

pub(crate) struct WriteReq {
    pub(crate) data: Vec<u8>,
    pub(crate) done: oneshot::Sender<std::io::Result<()>>,
}

pub(crate) fn read_loop(
    mut reader: Box<dyn Read + Send>,
    tx: &mpsc::Sender<Bytes>,
    buf_size: usize,
    reads: &AtomicU64,
) {
    let mut buf = vec![0u8; buf_size];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                reads.fetch_add(1, Ordering::Release);
                if tx.blocking_send(Bytes::copy_from_slice(&buf[..n])).is_err() {
                    break;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                tracing::debug!(error = %e, "pty read ended");
                break;
            }
        }
    }
}

pub(crate) fn write_loop(mut writer: Box<dyn Write + Send>, mut rx: mpsc::Receiver<WriteReq>) {
    while let Some(req) = rx.blocking_recv() {
        let result = writer.write_all(&req.data).and_then(|()| writer.flush());
        let _ = req.done.send(result);
    }
}

pub(crate) async fn pump(
    shared: Arc<Shared>,
    mut chunks: mpsc::Receiver<Bytes>,
    mut status_rx: oneshot::Receiver<ExitStatus>,
    opts: SessionOptions,
    pid: u32,
) {
    let mut close = CloseOnDrop {
        shared: shared.clone(),
        armed: true,
    };
    let lost = || ExitStatus {
        code: 1,
        signal: Some("exit status lost".into()),
    };
    // Phase 1: output until EOF or the child's exit, whichever comes first.
    let mut batch = Vec::with_capacity(64);
    let status = loop {
        tokio::select! {
            biased;
            n = chunks.recv_many(&mut batch, 64) => {
                if n == 0 {
                    // EOF first: the exit status follows.
                    break (&mut status_rx).await.unwrap_or_else(|_| lost());
                }
                shared.on_output(&batch);
                batch.clear();
            }
            status = &mut status_rx => {
                // Exit first: drain what is still in the PTY before reporting.
                let status = status.unwrap_or_else(|_| lost());
                let deadline = Instant::now() + opts.drain_max;
                let mut seen_reads = shared.reads.load(Ordering::Acquire);
                loop {
                    let wait = opts.drain_quiet.min(deadline.saturating_duration_since(Instant::now()));
                    match tokio::time::timeout(wait, chunks.recv_many(&mut batch, 64)).await {
                        Ok(0) => break,
                        Ok(_) => {
                            shared.on_output(&batch);
                            batch.clear();
                        }
                        Err(_) => {
                            // Quiet for a while. If the reader did read in
                            // the meantime (a starved task, not a quiet
                            // PTY), keep draining.
                            let now_reads = shared.reads.load(Ordering::Acquire);
                            if now_reads != seen_reads && Instant::now() < deadline {
                                seen_reads = now_reads;
                                continue;
                            }
                            tracing::debug!(pid, "pty still open after exit: a descendant holds it");
                            shared.lingering.store(true, Ordering::Release);
                            break;
                        }
                    }
                }
                break status;
            }
        }
    };
    // The screen must be complete when the exit is reported (bounded: a
    // stuck model must not keep the exit from being reported).
    if !shared.wait_model(opts.model_sync_exit).await {
        tracing::warn!(
            pid,
            "terminal model did not catch up before the exit; reporting it anyway"
        );
    }
    tracing::debug!(pid, code = status.code, signal = ?status.signal, "pty session exited");
    shared.finish(status);
    close.armed = false;
}

/// Stops the model thread if the pump task is dropped (runtime shutdown).
struct CloseOnDrop {
    shared: Arc<Shared>,
    armed: bool,
}

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        if self.armed {
            self.shared.close();
        }
    }
}
