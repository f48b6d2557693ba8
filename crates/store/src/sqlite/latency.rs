//! Write-transaction latency (`/metrics` `harness_store_transaction_seconds`):
//! every `BEGIN IMMEDIATE` transaction and every whole-transaction batch is
//! timed from asking for the single writer to its commit or rollback, and
//! counted into fixed buckets with atomics (no lock on the write path).

use std::{
    sync::atomic::{AtomicU64, Ordering},
    time::{Duration, Instant},
};

use harness_core::store::{TRANSACTION_BOUNDS, TransactionLatency};
use sqlx::{Sqlite, SqliteConnection, Transaction};

/// Bucket counts (one more than the bounds) and the sum in nanoseconds.
#[derive(Debug, Default)]
pub(crate) struct Latency {
    counts: [AtomicU64; TRANSACTION_BOUNDS.len() + 1],
    sum_nanos: AtomicU64,
}

impl Latency {
    pub(crate) fn record(&self, took: Duration) {
        let secs = took.as_secs_f64();
        let bucket = TRANSACTION_BOUNDS
            .iter()
            .position(|b| secs <= *b)
            .unwrap_or(TRANSACTION_BOUNDS.len());
        self.counts[bucket].fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        self.sum_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> TransactionLatency {
        TransactionLatency {
            counts: self
                .counts
                .iter()
                .map(|c| c.load(Ordering::Relaxed))
                .collect(),
            sum_seconds: Duration::from_nanos(self.sum_nanos.load(Ordering::Relaxed)).as_secs_f64(),
        }
    }
}

/// A write transaction that records its latency when it commits, rolls
/// back, or is dropped (an implicit rollback). Derefs to the connection, so
/// `&mut *tx` is an executor as with a plain transaction.
pub(crate) struct TimedTx {
    tx: Option<Transaction<'static, Sqlite>>,
    started: Instant,
    latency: std::sync::Arc<Latency>,
}

impl TimedTx {
    pub(crate) fn new(
        tx: Transaction<'static, Sqlite>,
        started: Instant,
        latency: std::sync::Arc<Latency>,
    ) -> Self {
        Self {
            tx: Some(tx),
            started,
            latency,
        }
    }

    fn inner(&mut self) -> &mut Transaction<'static, Sqlite> {
        // Only `commit`/`rollback` take it, and they consume `self`.
        self.tx
            .as_mut()
            .unwrap_or_else(|| unreachable!("transaction used after commit"))
    }

    pub(crate) async fn commit(mut self) -> Result<(), sqlx::Error> {
        let result = match self.tx.take() {
            Some(tx) => tx.commit().await,
            None => Ok(()),
        };
        self.latency.record(self.started.elapsed());
        result
    }

    pub(crate) async fn rollback(mut self) -> Result<(), sqlx::Error> {
        let result = match self.tx.take() {
            Some(tx) => tx.rollback().await,
            None => Ok(()),
        };
        self.latency.record(self.started.elapsed());
        result
    }
}

impl Drop for TimedTx {
    fn drop(&mut self) {
        if self.tx.is_some() {
            // Dropped without commit: sqlx rolls it back.
            self.latency.record(self.started.elapsed());
        }
    }
}

impl std::ops::Deref for TimedTx {
    type Target = SqliteConnection;
    fn deref(&self) -> &SqliteConnection {
        self.tx
            .as_deref()
            .unwrap_or_else(|| unreachable!("transaction used after commit"))
    }
}

impl std::ops::DerefMut for TimedTx {
    fn deref_mut(&mut self) -> &mut SqliteConnection {
        self.inner()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_and_sum() {
        let l = Latency::default();
        l.record(Duration::from_micros(300));
        l.record(Duration::from_millis(3));
        l.record(Duration::from_secs(10));
        let s = l.snapshot();
        assert_eq!(s.counts.len(), TRANSACTION_BOUNDS.len() + 1);
        assert_eq!(s.counts[0], 1);
        assert_eq!(s.counts[3], 1); // (2.5 ms, 5 ms]
        assert_eq!(s.counts[TRANSACTION_BOUNDS.len()], 1);
        assert!((s.sum_seconds - 10.0033).abs() < 1e-6);
    }
}
