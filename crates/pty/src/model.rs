//! The session's terminal model, parsed lazily: output goes to the viewers
//! first and is parsed later, off the fan-out path and, under a flood, not
//! at all.
//!
//! The pump queues the (query-filtered) output for the model. The model
//! thread parses the queue only when
//! * the output has paused for [`PARSE_QUIET`] (an agent writes in bursts:
//!   the screen is parsed between them; `SessionOptions` can change both
//!   delays), or
//! * someone waits for the model ([`Shared::wait_model`]), or the session
//!   is closing, or
//! * the oldest queued output is [`PARSE_MAX_DELAY`] old while the queue is
//!   below the flood mark (slow but unbroken output is parsed as it goes).
//!
//! Whoever reads the model ([`Shared::current_model`]: the screen's text, a
//! snapshot, the paste mode, a resize) first parses what is queued, so what
//! it reads reflects every byte read before the call. Usually nothing is
//! queued by then: the model thread parsed it at the last pause.
//!
//! Under a flood the pause does not come. The queue is bounded
//! (`SessionOptions::model_lag_max`): beyond it the oldest queued text is
//! skipped, its mode-setting sequences kept, so the model holds the modes of
//! everything and the text of the newest part, and is exact again once it
//! parsed that part. A flood thus costs the model a scan for mode sequences,
//! not a parse.

use std::sync::atomic::Ordering;
use std::sync::{MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use harness_term::TerminalModel;

use crate::stream::{Shared, StreamState, lock};

/// The output paused this long: the model thread parses what is queued
/// (the default of `SessionOptions::model_parse_quiet`). Not shorter: on a
/// busy machine a flood stutters with gaps of a few milliseconds, and
/// parsing in each gap cost a third of the server's CPU in the terminal
/// benchmark. Nobody waits on it: a reader parses what is queued itself.
pub(crate) const PARSE_QUIET: Duration = Duration::from_millis(20);
/// Output queued this long is parsed even without a pause, unless the
/// queue is at the flood mark (half of `model_lag_max`); the default of
/// `SessionOptions::model_parse_max_delay`.
pub(crate) const PARSE_MAX_DELAY: Duration = Duration::from_millis(100);
/// Largest batch parsed per hold of the model lock.
const MODEL_BATCH: usize = 256 * 1024;

/// Decrements the waiter count when a wait ends (or is cancelled).
struct Waiting<'a>(&'a Shared);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        lock(&self.0.stream).waiting -= 1;
    }
}

impl Shared {
    /// True when the model has taken in everything queued (or failed and
    /// will take in nothing more).
    pub(crate) fn model_caught_up(&self) -> bool {
        if self.model_failed.load(Ordering::Acquire) {
            return true;
        }
        let st = lock(&self.stream);
        st.pending.is_empty() && !st.in_flight
    }

    /// Has the model thread parse now and waits until the model caught up,
    /// at most `max`; `false` on timeout. Every wait on the model thread is
    /// bounded: a thread that stopped (panicked, starved) must not hang the
    /// session.
    pub(crate) async fn wait_model(&self, max: Duration) -> bool {
        lock(&self.stream).waiting += 1;
        let _waiting = Waiting(self);
        self.work.notify_all();
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

    /// The model, after parsing the output queued when this was called:
    /// it reflects every byte read before the call (except text skipped
    /// under a flood). Output arriving meanwhile stays queued.
    pub(crate) fn current_model(&self) -> MutexGuard<'_, TerminalModel> {
        let mut model = lock(&self.model);
        let mut budget = lock(&self.stream).pending_bytes;
        while budget > 0 {
            match self.feed_batch(&mut model) {
                Some(0) | None => break,
                Some(n) => budget = budget.saturating_sub(n),
            }
        }
        model
    }

    /// Parses one batch of the queue into `model` (whose lock the caller
    /// holds). `Some(bytes taken)`, 0 when nothing was queued; `None` when
    /// the model failed.
    fn feed_batch(&self, model: &mut TerminalModel) -> Option<usize> {
        if self.model_failed.load(Ordering::Acquire) {
            return None;
        }
        // Taken while the caller holds the model lock, so a subscriber
        // (model lock, then stream lock) sees each byte either in the model
        // or in the queue, never in neither.
        let batch = {
            let mut st = lock(&self.stream);
            let mut batch = Vec::new();
            let mut size = 0;
            while size < MODEL_BATCH {
                let Some(b) = st.pending.pop_front() else {
                    break;
                };
                size += b.len();
                batch.push(b);
            }
            if batch.is_empty() {
                return Some(0);
            }
            st.pending_bytes -= size;
            st.in_flight = true;
            batch
        };
        let fed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            if let Some(marker) = &self.model_panic_marker
                && batch
                    .iter()
                    .any(|b| b.windows(marker.len()).any(|w| w == marker.as_slice()))
            {
                panic!("test hook: terminal model panic");
            }
            for b in &batch {
                model.feed(b);
            }
        }));
        if let Err(panic) = fed {
            self.model_panicked(model, panic.as_ref());
            return None;
        }
        {
            let mut st = lock(&self.stream);
            st.in_flight = false;
            if st.pending.is_empty() {
                st.pending_since = None;
            }
        }
        self.model_progress.notify_waiters();
        Some(batch.iter().map(Bytes::len).sum())
    }

    /// The model panicked: reset it to a blank screen of the same size (its
    /// state may be inconsistent), stop feeding it, release every waiter.
    /// Output keeps streaming to subscribers.
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
        st.pending_since = None;
        st.in_flight = false;
        drop(st);
        self.model_progress.notify_waiters();
    }

    /// Queues filtered output for the model (the stream lock held): skips
    /// the oldest text beyond the bound, and wakes the model thread if it
    /// waits for output. Never parses.
    pub(crate) fn queue_for_model(&self, st: &mut StreamState, bytes: Bytes) {
        st.pending_bytes += bytes.len();
        st.pending.push_back(bytes);
        if st.pending_since.is_none() {
            st.pending_since = Some(Instant::now());
        }
        if st.pending_bytes > self.model_lag_max {
            skip_flood(st, self.model_lag_max / 2);
        }
        if st.model_idle {
            st.model_idle = false;
            self.work.notify_one();
        }
    }
}

/// Drops the oldest queued output down to `keep` bytes (the newest chunk is
/// always kept, so the queue is bounded by `keep` plus one pump batch),
/// keeping the dropped chunks' mode-setting sequences for the model. The
/// queued chunks hold whole sequences (the query filter holds an incomplete
/// one back), so each is scanned on its own.
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
    // What is left is the newest output: its delay counts from now.
    st.pending_since = Some(Instant::now());
    tracing::trace!(
        skipped = st.skipped,
        "terminal model skipping a flood of output"
    );
}

/// `Ok` when the model thread should parse now, else how long to wait
/// before asking again.
fn parse_due(shared: &Shared, st: &StreamState) -> Result<(), Duration> {
    if st.closed || st.waiting > 0 {
        return Ok(());
    }
    let now = Instant::now();
    let quiet_at = st.last_output.into_std() + shared.parse_quiet;
    if now >= quiet_at {
        return Ok(());
    }
    let mut wait = quiet_at - now;
    if st.pending_bytes < shared.model_lag_max / 2
        && let Some(since) = st.pending_since
    {
        let due_at = since + shared.parse_max_delay;
        if now >= due_at {
            return Ok(());
        }
        wait = wait.min(due_at - now);
    }
    Err(wait)
}

/// The model thread: parses the queue when it is due (see the module docs),
/// one batch per hold of the model lock. Ends when the session closed and
/// the queue is empty, or when the model panicked.
pub(crate) fn model_loop(shared: &Shared) {
    loop {
        {
            let mut st = lock(&shared.stream);
            loop {
                if st.pending.is_empty() {
                    if st.closed {
                        return;
                    }
                    st.model_idle = true;
                    st = shared.work.wait(st).unwrap_or_else(PoisonError::into_inner);
                    continue;
                }
                st.model_idle = false;
                match parse_due(shared, &st) {
                    Ok(()) => break,
                    Err(wait) => {
                        st = shared
                            .work
                            .wait_timeout(st, wait)
                            .unwrap_or_else(PoisonError::into_inner)
                            .0;
                    }
                }
            }
        }
        let mut model = lock(&shared.model);
        if shared.feed_batch(&mut model).is_none() {
            return;
        }
    }
}
