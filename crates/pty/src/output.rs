//! Output fan-out: every viewer gets its own bounded queue. The session
//! never waits for a viewer; a viewer whose queue is full (too many chunks or
//! too many bytes) is cut off and told it lagged, so it can resubscribe and
//! start again from a fresh snapshot. Memory per viewer is bounded.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use bytes::Bytes;
use tokio::sync::{mpsc, watch};

use crate::session::ExitStatus;

/// Limits of one subscriber's queue.
#[derive(Clone, Copy, Debug)]
pub struct SubscriberLimits {
    /// Most chunks queued for the subscriber.
    pub max_chunks: usize,
    /// Most bytes queued for the subscriber.
    pub max_bytes: usize,
}

impl Default for SubscriberLimits {
    fn default() -> Self {
        Self {
            max_chunks: 1024,
            max_bytes: 4 * 1024 * 1024,
        }
    }
}

/// The session's end of one subscriber.
pub(crate) struct Subscriber {
    tx: mpsc::Sender<Bytes>,
    queued: Arc<AtomicUsize>,
    lagged: Arc<AtomicBool>,
    max_bytes: usize,
}

impl Subscriber {
    /// Queues a chunk. Returns false when the subscriber is gone or fell
    /// behind (then it must be removed).
    pub(crate) fn offer(&self, chunk: &Bytes) -> bool {
        let queued = self.queued.load(Ordering::Acquire);
        if queued.saturating_add(chunk.len()) > self.max_bytes {
            self.lagged.store(true, Ordering::Release);
            return false;
        }
        match self.tx.try_send(chunk.clone()) {
            Ok(()) => {
                self.queued.fetch_add(chunk.len(), Ordering::AcqRel);
                true
            }
            Err(mpsc::error::TrySendError::Full(_)) => {
                self.lagged.store(true, Ordering::Release);
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    }
}

/// What a [`Subscription`] yields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OutputEvent {
    /// Terminal output (terminal queries already stripped).
    Data(Bytes),
    /// The subscriber fell behind and was cut off. Subscribe again to get a
    /// fresh snapshot.
    Lagged,
    /// The process exited; all its output has been delivered before this.
    Exited(ExitStatus),
    /// The session was torn down without an exit status (runtime shutdown).
    Closed,
}

/// Keeps a session's viewer count up while alive.
pub(crate) struct ViewerGuard {
    pub(crate) on_drop: Option<Box<dyn FnOnce() + Send + Sync>>,
}

impl Drop for ViewerGuard {
    fn drop(&mut self) {
        if let Some(f) = self.on_drop.take() {
            f();
        }
    }
}

/// One viewer's view of a session: a snapshot of the screen at the moment of
/// subscribing, then every later output chunk, in order, without gaps.
/// Dropping it disconnects the viewer (which may arm the keepalive timer).
pub struct Subscription {
    snapshot: Vec<u8>,
    rx: mpsc::Receiver<Bytes>,
    queued: Arc<AtomicUsize>,
    lagged: Arc<AtomicBool>,
    exit: watch::Receiver<Option<ExitStatus>>,
    _viewer: ViewerGuard,
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("snapshot_len", &self.snapshot.len())
            .field("queued_bytes", &self.queued_bytes())
            .finish_non_exhaustive()
    }
}

pub(crate) fn pair(
    snapshot: Vec<u8>,
    limits: SubscriberLimits,
    exit: watch::Receiver<Option<ExitStatus>>,
    viewer: ViewerGuard,
) -> (Subscriber, Subscription) {
    let (tx, rx) = mpsc::channel(limits.max_chunks.max(1));
    let queued = Arc::new(AtomicUsize::new(0));
    let lagged = Arc::new(AtomicBool::new(false));
    (
        Subscriber {
            tx,
            queued: queued.clone(),
            lagged: lagged.clone(),
            max_bytes: limits.max_bytes,
        },
        Subscription {
            snapshot,
            rx,
            queued,
            lagged,
            exit,
            _viewer: viewer,
        },
    )
}

impl Subscription {
    /// Bytes that redraw the screen as it was when this subscription began
    /// (see `harness_term::TerminalModel::snapshot`). Send it first.
    pub fn snapshot(&self) -> &[u8] {
        &self.snapshot
    }

    /// Takes the snapshot out (leaving it empty).
    pub fn take_snapshot(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.snapshot)
    }

    /// Bytes queued and not yet received.
    pub fn queued_bytes(&self) -> usize {
        self.queued.load(Ordering::Acquire)
    }

    /// The next event. After `Lagged`, `Exited` or `Closed` it keeps
    /// returning the same terminal event.
    pub async fn recv(&mut self) -> OutputEvent {
        if let Some(chunk) = self.rx.recv().await {
            self.queued.fetch_sub(chunk.len(), Ordering::AcqRel);
            return OutputEvent::Data(chunk);
        }
        if self.lagged.load(Ordering::Acquire) {
            return OutputEvent::Lagged;
        }
        match self.exit.wait_for(Option::is_some).await {
            Ok(status) => match status.as_ref() {
                Some(s) => OutputEvent::Exited(s.clone()),
                None => OutputEvent::Closed,
            },
            Err(_) => OutputEvent::Closed,
        }
    }

    /// The next chunk if one is queued now; `None` when nothing is (or the
    /// stream ended: [`recv`](Self::recv) then says how). For a consumer
    /// that joins what is already queued into one write.
    pub fn try_recv_data(&mut self) -> Option<Bytes> {
        let chunk = self.rx.try_recv().ok()?;
        self.queued.fetch_sub(chunk.len(), Ordering::AcqRel);
        Some(chunk)
    }

    /// Like [`recv`](Self::recv) but returns `None` instead of waiting when
    /// nothing is queued yet.
    pub fn try_recv(&mut self) -> Option<OutputEvent> {
        match self.rx.try_recv() {
            Ok(chunk) => {
                self.queued.fetch_sub(chunk.len(), Ordering::AcqRel);
                Some(OutputEvent::Data(chunk))
            }
            Err(mpsc::error::TryRecvError::Empty) => None,
            Err(mpsc::error::TryRecvError::Disconnected) => {
                if self.lagged.load(Ordering::Acquire) {
                    return Some(OutputEvent::Lagged);
                }
                let status = self.exit.borrow().clone();
                Some(status.map_or(OutputEvent::Closed, OutputEvent::Exited))
            }
        }
    }
}
