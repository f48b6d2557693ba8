//! Write transactions: each one takes the store's advisory lock
//! ([`super::WRITE_LOCK`]) first, and is timed until it ends
//! (`/metrics` `harness_store_transaction_seconds`, as on SQLite).
//!
//! The lock is exclusive ([`Lock::Store`]) for every write but two that
//! change only their own task's rows and that every node repeats under
//! load: an ask (`harness_record_ask`) and a sender's turn
//! (`outbox_settle`). Those hold it shared ([`Lock::Shared`]) and lock
//! each task they change (`harness_lock_tasks`, migration 0044), so they
//! run and commit side by side on several connections and nodes — claims
//! skip each other's rows (`FOR UPDATE SKIP LOCKED`), settles change rows
//! leased to their own sender — while any exclusive writer still waits for
//! all of them and they for it.

use std::{
    sync::{Arc, LazyLock},
    time::Instant,
};

use harness_core::store::{StoreError, StoreResult};
use sqlx::{
    PgConnection, PgPool, Postgres, Transaction,
    postgres::{PgArguments, PgRow},
};

use super::{PgStore, WRITE_LOCK};
use crate::{
    error::map,
    shared::{Bind, backend::BatchFuture},
    sqlite::latency::Latency,
};

/// `BEGIN` and the write lock in one simple-query round trip (the key
/// [`WRITE_LOCK`] is written into the text: a simple query has no
/// parameters). A separate `SELECT pg_advisory_xact_lock($1)` cost one more
/// round trip per write transaction, about a sixth of an ask's.
static BEGIN_LOCKED: LazyLock<String> =
    LazyLock::new(|| format!("BEGIN; SELECT pg_advisory_xact_lock({WRITE_LOCK})"));

/// The same with the lock shared ([`Lock::Shared`]).
static BEGIN_SHARED: LazyLock<String> =
    LazyLock::new(|| format!("BEGIN; SELECT pg_advisory_xact_lock_shared({WRITE_LOCK})"));

/// How a write transaction holds the store's lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lock {
    /// Alone: no other write transaction runs beside it (every write's
    /// read-then-write is atomic, as under SQLite's single writer).
    Store,
    /// Beside other shared holders: only for statements that change rows
    /// leased to their caller, or a task's rows after locking that task
    /// (`harness_lock_tasks`).
    Shared,
}

/// A transaction on `pool` that holds the write lock as `lock` says.
async fn begin_locked(
    pool: &PgPool,
    lock: Lock,
) -> Result<Transaction<'static, Postgres>, sqlx::Error> {
    pool.begin_with(match lock {
        Lock::Store => BEGIN_LOCKED.as_str(),
        Lock::Shared => BEGIN_SHARED.as_str(),
    })
    .await
}

impl PgStore {
    /// A transaction holding the write lock, timed until it ends.
    pub(super) async fn write_tx(&self) -> StoreResult<TimedTx> {
        let started = Instant::now();
        let tx = begin_locked(&self.pool, Lock::Store).await.map_err(map)?;
        Ok(TimedTx {
            tx: Some(tx),
            started,
            latency: self.latency.clone(),
        })
    }

    /// Runs `batch` inside a write transaction in a task of its own, so a
    /// caller that goes away (a dropped HTTP request) cannot stop it
    /// half-way: it commits when `batch` succeeds and rolls back when any
    /// statement fails.
    pub(super) async fn batch_tx<T, F>(&self, batch: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut PgConnection) -> BatchFuture<'c, T> + Send + 'static,
    {
        self.batch_tx_with(Lock::Store, batch).await
    }

    /// [`Self::batch_tx`] holding the lock as `lock` says.
    pub(super) async fn batch_tx_with<T, F>(&self, lock: Lock, batch: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut PgConnection) -> BatchFuture<'c, T> + Send + 'static,
    {
        let pool = self.pool.clone();
        let latency = self.latency.clone();
        let started = Instant::now();
        let job = tokio::spawn(async move {
            let result = async {
                let mut tx = begin_locked(&pool, lock).await?;
                let value = batch(&mut tx).await?;
                tx.commit().await?;
                Ok::<T, sqlx::Error>(value)
            }
            .await;
            latency.record(started.elapsed());
            result.map_err(map)
        });
        job.await
            .map_err(|join| StoreError::Backend(Box::new(join)))?
    }
}

impl PgStore {
    /// One statement that takes the write lock itself (a function of the
    /// schema that starts with `pg_advisory_xact_lock` of [`WRITE_LOCK`],
    /// or its shared form and the lock of the task it changes),
    /// run in its own transaction: one round trip, all or nothing (a caller
    /// that goes away cannot stop a single statement half-way). Timed like
    /// a write transaction.
    pub(crate) async fn locked_call(
        &self,
        sql: &'static str,
        args: PgArguments,
    ) -> StoreResult<Vec<PgRow>> {
        let started = Instant::now();
        let rows = sqlx::query_with(sql, args)
            .fetch_all(&self.pool)
            .await
            .map_err(map);
        self.latency.record(started.elapsed());
        rows
    }

    /// The `;`-separated statements of `sql`, sharing `binds` (`$1` …), in
    /// one [`Self::batch_tx`]; their rows in order (`batch::run`). SQLite
    /// has the same method (`sqlite/writer.rs`), so the code around a batch
    /// is written once (`crate::shared`).
    pub(crate) async fn run_batch(&self, sql: &str, binds: Vec<Bind>) -> StoreResult<Vec<PgRow>> {
        self.run_batch_with(Lock::Store, sql, binds).await
    }

    /// [`Self::run_batch`] holding the store's lock shared: for statements
    /// that lock the tasks they change first (an ask, a sender's turn).
    pub(crate) async fn run_shared_batch(
        &self,
        sql: &str,
        binds: Vec<Bind>,
    ) -> StoreResult<Vec<PgRow>> {
        self.run_batch_with(Lock::Shared, sql, binds).await
    }

    async fn run_batch_with(
        &self,
        lock: Lock,
        sql: &str,
        binds: Vec<Bind>,
    ) -> StoreResult<Vec<PgRow>> {
        let sql = sql.to_owned();
        self.batch_tx_with(lock, move |conn| {
            Box::pin(async move {
                let args = super::batch::args_of(binds)?;
                super::batch::run(conn, &sql, &args).await
            })
        })
        .await
    }
}

/// A write transaction that records its latency when it commits or is
/// dropped (an implicit rollback). Derefs to the connection.
pub(crate) struct TimedTx {
    tx: Option<Transaction<'static, Postgres>>,
    started: Instant,
    latency: Arc<Latency>,
}

impl TimedTx {
    pub(crate) async fn commit(mut self) -> Result<(), sqlx::Error> {
        let result = match self.tx.take() {
            Some(tx) => tx.commit().await,
            None => Ok(()),
        };
        self.latency.record(self.started.elapsed());
        result
    }
}

impl TimedTx {
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
            self.latency.record(self.started.elapsed());
        }
    }
}

impl std::ops::Deref for TimedTx {
    type Target = PgConnection;
    fn deref(&self) -> &PgConnection {
        self.tx
            .as_deref()
            .unwrap_or_else(|| unreachable!("transaction used after commit"))
    }
}

impl std::ops::DerefMut for TimedTx {
    fn deref_mut(&mut self) -> &mut PgConnection {
        self.tx
            .as_deref_mut()
            .unwrap_or_else(|| unreachable!("transaction used after commit"))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_begin_statement_takes_the_store_lock() {
        assert_eq!(
            super::BEGIN_LOCKED.as_str(),
            "BEGIN; SELECT pg_advisory_xact_lock(29380541684216691)"
        );
        assert_eq!(
            super::BEGIN_SHARED.as_str(),
            "BEGIN; SELECT pg_advisory_xact_lock_shared(29380541684216691)"
        );
    }

    /// The migration's functions name the same key as the code.
    #[test]
    fn the_task_lock_functions_share_the_store_lock_key() {
        let sql = include_str!("../../../../migrations/postgres/0044_task_write_locks.sql");
        assert!(sql.contains(&format!(
            "pg_advisory_xact_lock_shared({})",
            super::WRITE_LOCK
        )));
    }
}
