//! Shared write helpers: a `BEGIN IMMEDIATE` transaction on the single writer
//! connection, and whole-transaction batches sent as one command.

use harness_core::store::{StoreError, StoreResult};

use super::{SqliteStore, latency::TimedTx};
use sqlx::AssertSqlSafe;

use crate::{
    error::map,
    shared::{Bind, backend::BatchFuture, bind_all},
};

impl SqliteStore {
    /// A `BEGIN IMMEDIATE` transaction on the writer, timed until it ends.
    pub(super) async fn write_tx(&self) -> StoreResult<TimedTx> {
        let started = std::time::Instant::now();
        let tx = self
            .writer
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(map)?;
        Ok(TimedTx::new(tx, started, self.latency.clone()))
    }

    /// Runs a batch that holds a whole transaction (`BEGIN IMMEDIATE; …;
    /// COMMIT`) as one command on the writer connection: one round trip to
    /// SQLite's thread instead of one per statement, which is most of the
    /// cost of a write here. The batch runs in its own task so a caller that
    /// goes away (a dropped HTTP request) cannot stop it half-way; if any
    /// statement fails the transaction is rolled back before the connection
    /// is reused, and a connection that cannot roll back is discarded.
    pub(super) async fn batch_tx<T, F>(&self, batch: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut sqlx::SqliteConnection) -> BatchFuture<'c, T> + Send + 'static,
    {
        let writer = self.writer.clone();
        let latency = self.latency.clone();
        let started = std::time::Instant::now();
        let job = tokio::spawn(async move {
            let mut conn = writer.acquire().await.map_err(map)?;
            let result = batch(&mut conn).await;
            latency.record(started.elapsed());
            match result {
                Ok(value) => Ok(value),
                Err(err) => {
                    if let Err(rollback) = sqlx::query("ROLLBACK").execute(&mut *conn).await
                        && !rollback.to_string().contains("no transaction is active")
                    {
                        tracing::warn!(%rollback, "rollback after a failed batch failed; dropping the connection");
                        drop(conn.detach());
                    }
                    Err(map(err))
                }
            }
        });
        job.await
            .map_err(|join| StoreError::Backend(Box::new(join)))?
    }

    /// The `;`-separated statements of `sql`, sharing `binds` (`$1` …), as
    /// one [`Self::batch_tx`] (`BEGIN IMMEDIATE; sql; COMMIT`); their rows
    /// in order. PostgreSQL has the same method (`postgres/tx.rs`), so the
    /// code around a batch is written once (`crate::shared`).
    pub(crate) async fn run_batch(
        &self,
        sql: &str,
        binds: Vec<Bind>,
    ) -> StoreResult<Vec<sqlx::sqlite::SqliteRow>> {
        let text = format!("BEGIN IMMEDIATE; {sql}; COMMIT");
        self.batch_tx(move |conn| {
            Box::pin(async move {
                bind_all(sqlx::query(AssertSqlSafe(text)), binds)
                    .fetch_all(conn)
                    .await
            })
        })
        .await
    }
}
