//! The stores written once as generic functions
//! ([`crate::shared::backend`]) on PostgreSQL: reads on the pool; a batch
//! runs inside `batch_tx`'s transaction (which holds the store's write
//! lock and commits), each statement sent with all the step's parameters
//! (`batch::run`); an ask alone is one call of the schema's function,
//! which takes the write lock itself (shared, and its task's lock).

use std::{future::Future, time::Duration};

use chrono::{DateTime, Utc};
use harness_core::store::{StoreResult, TransactionLatency};
use sqlx::{AssertSqlSafe, PgConnection, postgres::PgRow};

use super::{PgStore, RECORD_ASK_CALL, batch, tx::TimedTx};
use crate::{
    error::map,
    shared::{
        Bind, Dialect, LeaseClock,
        backend::{AskSql, Backend, BatchFuture, Step},
        bind_all,
    },
};

impl Backend for PgStore {
    type Row = PgRow;
    type Conn = PgConnection;
    type Tx = TimedTx;
    const DIALECT: Dialect = super::DIALECT;
    const ASKS: AskSql = super::messages::ASKS;
    const BEGIN: Option<&'static str> = None;
    const COMMIT: Option<&'static str> = None;
    const ROLLBACK: Option<&'static str> = None;

    fn read(
        &self,
        sql: &str,
        binds: Vec<Bind>,
    ) -> impl Future<Output = StoreResult<Vec<PgRow>>> + Send {
        let query = bind_all(sqlx::query(AssertSqlSafe(sql.to_owned())), binds);
        async move { query.fetch_all(&self.pool).await.map_err(map) }
    }

    fn run_batch(
        &self,
        sql: &str,
        binds: Vec<Bind>,
    ) -> impl Future<Output = StoreResult<Vec<PgRow>>> + Send {
        PgStore::run_batch(self, sql, binds)
    }

    fn ask_batch(
        &self,
        sql: &str,
        binds: Vec<Bind>,
    ) -> impl Future<Output = StoreResult<Vec<PgRow>>> + Send {
        PgStore::run_shared_batch(self, sql, binds)
    }

    async fn ask_alone(&self, binds: Vec<Bind>) -> StoreResult<Vec<PgRow>> {
        let args = batch::args_of(binds).map_err(map)?;
        self.locked_call(RECORD_ASK_CALL, args).await
    }

    async fn run_step(conn: &mut PgConnection, step: Step) -> Result<Vec<PgRow>, sqlx::Error> {
        let args = batch::args_of(step.binds)?;
        batch::run(conn, &step.sql, &args).await
    }

    fn write_tx(&self) -> impl Future<Output = StoreResult<TimedTx>> + Send {
        PgStore::write_tx(self)
    }

    async fn commit(tx: TimedTx) -> StoreResult<()> {
        tx.commit().await.map_err(map)
    }

    async fn rollback(tx: TimedTx) -> StoreResult<()> {
        tx.rollback().await.map_err(map)
    }

    fn write(&self, sql: &str, binds: Vec<Bind>) -> impl Future<Output = StoreResult<u64>> + Send {
        let query = bind_all(sqlx::query(AssertSqlSafe(sql.to_owned())), binds);
        async move {
            let done = query.execute(&self.pool).await.map_err(map)?;
            Ok(done.rows_affected())
        }
    }

    async fn execute(conn: &mut PgConnection, step: Step) -> Result<u64, sqlx::Error> {
        let args = batch::args_of(step.binds)?;
        let done = sqlx::query_with(AssertSqlSafe(step.sql), args)
            .execute(conn)
            .await?;
        Ok(done.rows_affected())
    }

    fn write_rows(
        &self,
        sql: &str,
        binds: Vec<Bind>,
    ) -> impl Future<Output = StoreResult<Vec<PgRow>>> + Send {
        let query = bind_all(sqlx::query(AssertSqlSafe(sql.to_owned())), binds);
        async move { query.fetch_all(&self.pool).await.map_err(map) }
    }

    fn beat(&self, sql: &str, binds: Vec<Bind>) -> impl Future<Output = StoreResult<u64>> + Send {
        let query = bind_all(sqlx::query(AssertSqlSafe(sql.to_owned())), binds);
        async move {
            let done = query.execute(&self.beat).await.map_err(map)?;
            Ok(done.rows_affected())
        }
    }

    fn node_dead_after(&self) -> Duration {
        self.node_dead_after
    }

    fn transaction_latency(&self) -> TransactionLatency {
        self.latency.snapshot()
    }

    fn lease_clock(
        &self,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> impl Future<Output = StoreResult<LeaseClock>> + Send {
        PgStore::lease_clock(self, now, until)
    }

    fn batch<T, F>(&self, batch: F) -> impl Future<Output = StoreResult<T>> + Send
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut PgConnection) -> BatchFuture<'c, T> + Send + 'static,
    {
        self.batch_tx(batch)
    }
}
