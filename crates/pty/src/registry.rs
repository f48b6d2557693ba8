//! Sessions by task id, and the keepalive (docs/decisions.md D3).
//!
//! Keepalive rules, evaluated by ONE background task for all sessions:
//! * a session with viewers has no timer;
//! * a parked session (its agent waits for a human) has no timer at all;
//! * a running session expires `running` (2 h) after its last viewer left
//!   or after it was unparked, whichever is later; a running session that
//!   never had a viewer and was never parked has no timer;
//! * an exited session expires `exited` (5 min) after the later of its exit
//!   and its last viewer leaving.
//!
//! Expiry kills the process group and removes the session. The task sleeps
//! until the earliest deadline and is woken by viewer changes, exits, parks,
//! inserts and removals; it stops on `shutdown` or when the registry is
//! dropped.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::{Notify, broadcast};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::PtySession;

/// Keepalive durations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeepaliveConfig {
    /// Life of a running session after its last viewer left (2 h).
    pub running: Duration,
    /// Life of an exited session after exit / last viewer (5 min).
    pub exited: Duration,
}

impl Default for KeepaliveConfig {
    fn default() -> Self {
        Self {
            running: Duration::from_secs(2 * 60 * 60),
            exited: Duration::from_secs(5 * 60),
        }
    }
}

struct Entry {
    session: Arc<PtySession>,
    parked: bool,
    unparked_at: Option<Instant>,
}

impl Entry {
    /// When this entry expires, if it has a timer.
    fn deadline(&self, cfg: &KeepaliveConfig) -> Option<Instant> {
        if self.parked || self.session.viewers() > 0 {
            return None;
        }
        let left = self.session.last_viewer_left();
        match self.session.exited_at() {
            Some(exited) => {
                let start = [left, self.unparked_at]
                    .into_iter()
                    .flatten()
                    .fold(exited, Instant::max);
                Some(start + cfg.exited)
            }
            None => [left, self.unparked_at]
                .into_iter()
                .flatten()
                .max()
                .map(|start| start + cfg.running),
        }
    }
}

struct Inner {
    entries: Mutex<HashMap<String, Entry>>,
    wake: Arc<Notify>,
    config: KeepaliveConfig,
    expired: broadcast::Sender<String>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The live PTY sessions of the server, by task id, with their keepalive.
pub struct PtyRegistry {
    inner: Arc<Inner>,
    cancel: CancellationToken,
}

impl std::fmt::Debug for PtyRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PtyRegistry")
            .field("sessions", &self.len())
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

impl PtyRegistry {
    /// A registry with its keepalive task. Must be called in a tokio runtime.
    pub fn new(config: KeepaliveConfig) -> Self {
        let (expired, _) = broadcast::channel(64);
        let inner = Arc::new(Inner {
            entries: Mutex::new(HashMap::new()),
            wake: Arc::new(Notify::new()),
            config,
            expired,
        });
        let cancel = CancellationToken::new();
        tokio::spawn(keepalive(inner.clone(), cancel.clone()));
        Self { inner, cancel }
    }

    /// The keepalive durations.
    pub fn config(&self) -> KeepaliveConfig {
        self.inner.config
    }

    /// Registers `session` for `task_id`. An existing session of the task is
    /// killed and returned (one live session per task).
    pub fn insert(&self, task_id: &str, session: Arc<PtySession>) -> Option<Arc<PtySession>> {
        session.add_observer(self.inner.wake.clone());
        let old = lock(&self.inner.entries).insert(
            task_id.to_owned(),
            Entry {
                session,
                parked: false,
                unparked_at: None,
            },
        );
        self.inner.wake.notify_one();
        old.map(|e| {
            if let Err(err) = e.session.kill() {
                tracing::warn!(task_id, error = %err, "killing replaced session failed");
            }
            e.session
        })
    }

    /// The session of `task_id`.
    pub fn get(&self, task_id: &str) -> Option<Arc<PtySession>> {
        lock(&self.inner.entries)
            .get(task_id)
            .map(|e| e.session.clone())
    }

    /// Removes the session of `task_id` without killing it.
    pub fn remove(&self, task_id: &str) -> Option<Arc<PtySession>> {
        let removed = lock(&self.inner.entries).remove(task_id).map(|e| e.session);
        self.inner.wake.notify_one();
        removed
    }

    /// Removes and kills the session of `task_id`.
    pub fn destroy(&self, task_id: &str) -> Option<Arc<PtySession>> {
        let session = self.remove(task_id)?;
        if let Err(err) = session.kill() {
            tracing::warn!(task_id, error = %err, "kill failed");
        }
        Some(session)
    }

    /// Parks the session: no keepalive timer while its agent waits for a
    /// human. Returns false if there is no such session or it has exited.
    pub fn park(&self, task_id: &str) -> bool {
        let mut entries = lock(&self.inner.entries);
        let Some(e) = entries.get_mut(task_id).filter(|e| !e.session.has_exited()) else {
            return false;
        };
        e.parked = true;
        drop(entries);
        self.inner.wake.notify_one();
        true
    }

    /// Unparks the session; with no viewer, its keepalive timer starts now.
    pub fn unpark(&self, task_id: &str) -> bool {
        let mut entries = lock(&self.inner.entries);
        let Some(e) = entries.get_mut(task_id) else {
            return false;
        };
        e.parked = false;
        e.unparked_at = Some(Instant::now());
        drop(entries);
        self.inner.wake.notify_one();
        true
    }

    /// True if the session of `task_id` is parked.
    pub fn is_parked(&self, task_id: &str) -> bool {
        lock(&self.inner.entries)
            .get(task_id)
            .is_some_and(|e| e.parked)
    }

    /// When the session of `task_id` will expire, if a timer runs.
    pub fn expires_at(&self, task_id: &str) -> Option<Instant> {
        lock(&self.inner.entries)
            .get(task_id)
            .and_then(|e| e.deadline(&self.inner.config))
    }

    /// Task ids with a session.
    pub fn task_ids(&self) -> Vec<String> {
        lock(&self.inner.entries).keys().cloned().collect()
    }

    /// Number of sessions.
    pub fn len(&self) -> usize {
        lock(&self.inner.entries).len()
    }

    /// True when there is no session.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Task ids whose session expired (and was killed), as they expire.
    pub fn expired_events(&self) -> broadcast::Receiver<String> {
        self.inner.expired.subscribe()
    }

    /// Stops the keepalive task and lets go of every session (server
    /// shutdown): a held agent keeps running with its holder (detached), a
    /// PTY this process owns is killed.
    pub fn shutdown(&self) {
        self.shutdown_with(true);
    }

    /// Like [`shutdown`](Self::shutdown); `leave_held: false` kills held
    /// agents too (a node the cluster declared dead: its work is taken
    /// over elsewhere, nothing may run twice).
    pub fn shutdown_with(&self, leave_held: bool) {
        self.cancel.cancel();
        let entries: Vec<(String, Entry)> = lock(&self.inner.entries).drain().collect();
        for (task_id, e) in entries {
            if leave_held && e.session.is_held() {
                e.session.detach();
            } else if let Err(err) = e.session.kill() {
                tracing::warn!(task_id, error = %err, "kill at shutdown failed");
            }
        }
    }
}

impl Drop for PtyRegistry {
    fn drop(&mut self) {
        self.cancel.cancel();
    }
}

async fn keepalive(inner: Arc<Inner>, cancel: CancellationToken) {
    loop {
        let now = Instant::now();
        let mut next: Option<Instant> = None;
        let mut expired = Vec::new();
        {
            let mut entries = lock(&inner.entries);
            entries.retain(|task_id, e| match e.deadline(&inner.config) {
                Some(d) if d <= now => {
                    expired.push((task_id.clone(), e.session.clone()));
                    false
                }
                Some(d) => {
                    next = Some(next.map_or(d, |n| n.min(d)));
                    true
                }
                None => true,
            });
        }
        for (task_id, session) in expired {
            tracing::info!(
                task_id,
                pid = session.pid(),
                "keepalive expired: destroying pty session"
            );
            if let Err(err) = session.kill() {
                tracing::warn!(task_id, error = %err, "kill on expiry failed");
            }
            let _ = inner.expired.send(task_id);
        }
        let sleep = async {
            match next {
                Some(d) => tokio::time::sleep_until(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = cancel.cancelled() => break,
            () = inner.wake.notified() => {}
            () = sleep => {}
        }
    }
}
