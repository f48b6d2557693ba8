//! WAL checkpoints off the commit path.
//!
//! By default SQLite checkpoints inside the commit that pushes the WAL past
//! `wal_autocheckpoint` pages: that one unlucky commit copies the WAL into the
//! database file and fsyncs it, which is the tail of every write latency here
//! (an ask dirties ~10 pages, so it triggered a checkpoint every ~100 asks).
//! Instead a background task runs `PRAGMA wal_checkpoint(PASSIVE)` on its own
//! connection every [`INTERVAL`]; PASSIVE never waits for readers or writers,
//! so commits go on while it copies. The writer keeps a high
//! `wal_autocheckpoint` as a safety net: if this task is not running (or falls
//! far behind), SQLite's own checkpoint still bounds the WAL.
//!
//! The loop is bounded (one statement per tick), cancellable (it ends when the
//! store is closed or every handle to it is dropped) and restart-safe (it
//! keeps no state; a failed checkpoint or connection is retried next tick).

use std::sync::{
    Arc, Weak,
    atomic::{AtomicU64, Ordering},
};
use std::time::Duration;

use sqlx::{ConnectOptions, Connection, Row, SqliteConnection, sqlite::SqliteConnectOptions};
use tokio::sync::watch;

/// How often the WAL is checkpointed.
pub const INTERVAL: Duration = Duration::from_millis(200);
/// `wal_autocheckpoint` of the writer: the fallback when the task lags.
pub const WRITER_AUTOCHECKPOINT_PAGES: u32 = 16_000;

/// What the checkpointer has done so far (diagnostics and tests).
#[derive(Debug, Default)]
pub struct CheckpointStats {
    runs: AtomicU64,
    backlog: AtomicU64,
    errors: AtomicU64,
}

impl CheckpointStats {
    /// Checkpoints run.
    pub fn runs(&self) -> u64 {
        self.runs.load(Ordering::Relaxed)
    }
    /// WAL frames not yet in the database file after the last checkpoint
    /// (frames still needed by an open reader stay behind).
    pub fn backlog(&self) -> u64 {
        self.backlog.load(Ordering::Relaxed)
    }
    /// Checkpoints or connections that failed (retried on the next tick).
    pub fn errors(&self) -> u64 {
        self.errors.load(Ordering::Relaxed)
    }
}

pub(crate) struct Checkpointer {
    stop: watch::Sender<bool>,
    task: std::sync::Mutex<Option<tokio::task::JoinHandle<()>>>,
    pub(crate) stats: Arc<CheckpointStats>,
}

impl Checkpointer {
    /// Starts the loop. `alive` is held by every store handle: when the last
    /// one is dropped the loop ends on its next tick.
    pub(crate) fn spawn(options: SqliteConnectOptions, alive: Weak<()>) -> Self {
        let (stop, mut stopped) = watch::channel(false);
        let stats = Arc::new(CheckpointStats::default());
        let counters = stats.clone();
        let task = tokio::spawn(async move {
            let mut conn: Option<SqliteConnection> = None;
            loop {
                tokio::select! {
                    _ = stopped.changed() => break,
                    () = tokio::time::sleep(INTERVAL) => {}
                }
                if *stopped.borrow() || alive.upgrade().is_none() {
                    break;
                }
                if conn.is_none() {
                    match options.connect().await {
                        Ok(c) => conn = Some(c),
                        Err(err) => {
                            counters.errors.fetch_add(1, Ordering::Relaxed);
                            tracing::warn!(%err, "checkpoint connection failed; retrying");
                            continue;
                        }
                    }
                }
                let Some(c) = conn.as_mut() else { continue };
                match checkpoint(c).await {
                    Ok(backlog) => {
                        counters.backlog.store(backlog, Ordering::Relaxed);
                        counters.runs.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(err) => {
                        counters.errors.fetch_add(1, Ordering::Relaxed);
                        tracing::warn!(%err, "WAL checkpoint failed; reconnecting");
                        conn = None;
                    }
                }
            }
            if let Some(mut c) = conn {
                // A last pass so a clean shutdown leaves little WAL behind.
                if let Err(err) = checkpoint(&mut c).await {
                    tracing::debug!(%err, "final WAL checkpoint failed; SQLite finishes it on the next open");
                }
                if let Err(err) = c.close().await {
                    tracing::debug!(%err, "closing the checkpoint connection failed");
                }
            }
        });
        Self {
            stop,
            task: std::sync::Mutex::new(Some(task)),
            stats,
        }
    }

    /// Stops the loop and waits for it (after its final checkpoint).
    pub(crate) async fn stop(&self) {
        let _ = self.stop.send(true);
        let task = match self.task.lock() {
            Ok(mut guard) => guard.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        if let Some(task) = task {
            let _ = task.await;
        }
    }
}

/// One PASSIVE checkpoint; returns the frames left behind.
async fn checkpoint(conn: &mut SqliteConnection) -> Result<u64, sqlx::Error> {
    let row = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
        .fetch_one(&mut *conn)
        .await?;
    // (busy, frames in the WAL, frames checkpointed); -1 when not in WAL mode.
    let log: i64 = row.try_get(1)?;
    let checkpointed: i64 = row.try_get(2)?;
    Ok((log - checkpointed).max(0) as u64)
}
