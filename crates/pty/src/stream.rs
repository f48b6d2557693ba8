//! The output path of a session: the pump task (PTY chunks → query filter →
//! subscribers and the model's queue) and the blocking reader/writer loops.
//! The model's side of the queue is in `model`. See the `session` module
//! docs for the overview.

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
    /// When the oldest queued output arrived (or a flood skip left the
    /// newest), `None` while nothing is queued.
    pub(crate) pending_since: Option<std::time::Instant>,
    /// A batch was taken from the queue and is being fed.
    pub(crate) in_flight: bool,
    /// Tasks waiting for the model to catch up: parse now.
    pub(crate) waiting: usize,
    /// The model thread waits for output (the pump wakes it then only).
    pub(crate) model_idle: bool,
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
    /// Poked after each batch fed to the model.
    pub(crate) model_progress: Notify,
    /// Bumped by every output that reaches viewers and by every resize.
    pub(crate) output_generation: AtomicU64,
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
    pub(crate) snapshot_history: usize,
    pub(crate) limits: SubscriberLimits,
    pub(crate) model_lag_max: usize,
    /// See `SessionOptions::model_parse_quiet` and `model_parse_max_delay`.
    pub(crate) parse_quiet: std::time::Duration,
    pub(crate) parse_max_delay: std::time::Duration,
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
                pending_since: None,
                in_flight: false,
                waiting: 0,
                model_idle: false,
                skipped: 0,
                last_output: Instant::now(),
                bytes_out: 0,
                exited_at: None,
                closed: false,
            }),
            work: Condvar::new(),
            model_progress: Notify::new(),
            output_generation: AtomicU64::new(0),
            exit_tx,
            viewers: AtomicUsize::new(0),
            last_viewer_left: Mutex::new(None),
            observers: Mutex::new(Vec::new()),
            turn_complete: AtomicBool::new(false),
            turn_notify: Notify::new(),
            reads: AtomicU64::new(0),
            lingering: AtomicBool::new(false),
            snapshot_history: opts.snapshot_history,
            limits: opts.subscriber,
            model_lag_max: opts.model_lag_max.max(64 * 1024),
            parse_quiet: opts.model_parse_quiet,
            parse_max_delay: opts.model_parse_max_delay,
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
        self.output_generation.fetch_add(1, Ordering::Release);
        st.subscribers.retain(|s| s.offer(&bytes));
        if self.model_failed.load(Ordering::Acquire) {
            // Nobody parses any more: stream only.
            return;
        }
        self.queue_for_model(&mut st, bytes);
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
