//! The stores written once as generic functions
//! ([`crate::shared::backend`]) on SQLite: reads on the read-only pool;
//! a batch opens its `BEGIN IMMEDIATE` transaction itself, on the single
//! writer, sent with its first statements (and `COMMIT` with its last), so
//! a batch costs one round trip per step.

use std::{future::Future, time::Duration};

use chrono::{DateTime, Utc};
use harness_core::store::{StoreResult, TransactionLatency};
use sqlx::{AssertSqlSafe, SqliteConnection, sqlite::SqliteRow};

use super::{SqliteStore, latency::TimedTx};
use crate::{
    error::map,
    shared::{
        Bind, Dialect, LeaseClock,
        backend::{AskSql, Backend, BatchFuture, Step},
        bind_all,
        messages::RECORD_ASK,
    },
};

impl Backend for SqliteStore {
    type Row = SqliteRow;
    type Conn = SqliteConnection;
    type Tx = TimedTx;
    const DIALECT: Dialect = super::DIALECT;
    const ASKS: AskSql = super::messages::ASKS;
    const BEGIN: Option<&'static str> = Some("BEGIN IMMEDIATE");
    const COMMIT: Option<&'static str> = Some("COMMIT");
    const ROLLBACK: Option<&'static str> = Some("ROLLBACK");

    fn read(
        &self,
        sql: &str,
        binds: Vec<Bind>,
    ) -> impl Future<Output = StoreResult<Vec<SqliteRow>>> + Send {
        let query = bind_all(sqlx::query(AssertSqlSafe(sql.to_owned())), binds);
        async move { query.fetch_all(&self.reader).await.map_err(map) }
    }

    fn run_batch(
        &self,
        sql: &str,
        binds: Vec<Bind>,
    ) -> impl Future<Output = StoreResult<Vec<SqliteRow>>> + Send {
        SqliteStore::run_batch(self, sql, binds)
    }

    fn ask_batch(
        &self,
        sql: &str,
        binds: Vec<Bind>,
    ) -> impl Future<Output = StoreResult<Vec<SqliteRow>>> + Send {
        SqliteStore::run_batch(self, sql, binds)
    }

    fn ask_alone(
        &self,
        binds: Vec<Bind>,
    ) -> impl Future<Output = StoreResult<Vec<SqliteRow>>> + Send {
        SqliteStore::run_batch(self, RECORD_ASK, binds)
    }

    fn run_step(
        conn: &mut SqliteConnection,
        step: Step,
    ) -> impl Future<Output = Result<Vec<SqliteRow>, sqlx::Error>> + Send {
        let query = bind_all(sqlx::query(AssertSqlSafe(step.sql)), step.binds);
        async move { query.fetch_all(conn).await }
    }

    fn write_tx(&self) -> impl Future<Output = StoreResult<TimedTx>> + Send {
        SqliteStore::write_tx(self)
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
            let done = query.execute(&self.writer).await.map_err(map)?;
            Ok(done.rows_affected())
        }
    }

    fn execute(
        conn: &mut SqliteConnection,
        step: Step,
    ) -> impl Future<Output = Result<u64, sqlx::Error>> + Send {
        let query = bind_all(sqlx::query(AssertSqlSafe(step.sql)), step.binds);
        async move { Ok(query.execute(conn).await?.rows_affected()) }
    }

    fn write_rows(
        &self,
        sql: &str,
        binds: Vec<Bind>,
    ) -> impl Future<Output = StoreResult<Vec<SqliteRow>>> + Send {
        let query = bind_all(sqlx::query(AssertSqlSafe(sql.to_owned())), binds);
        async move { query.fetch_all(&self.writer).await.map_err(map) }
    }

    fn beat(&self, sql: &str, binds: Vec<Bind>) -> impl Future<Output = StoreResult<u64>> + Send {
        let query = bind_all(sqlx::query(AssertSqlSafe(sql.to_owned())), binds);
        async move {
            let done = query.execute(&self.writer).await.map_err(map)?;
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
        SqliteStore::lease_clock(self, now, until)
    }

    fn batch<T, F>(&self, batch: F) -> impl Future<Output = StoreResult<T>> + Send
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut SqliteConnection) -> BatchFuture<'c, T> + Send + 'static,
    {
        self.batch_tx(batch)
    }
}
