//! The stores written once as generic functions
//! ([`crate::shared::backend`]) on SQLite: reads on the read-only pool;
//! a batch opens its `BEGIN IMMEDIATE` transaction itself, on the single
//! writer, sent with its first statements (and `COMMIT` with its last), so
//! a batch costs one round trip per step.

use std::future::Future;

use harness_core::store::StoreResult;
use sqlx::{AssertSqlSafe, SqliteConnection, sqlite::SqliteRow};

use super::SqliteStore;
use crate::{
    error::map,
    shared::{
        Bind, Dialect,
        backend::{AskSql, Backend, BatchFuture, Step},
        bind_all,
        messages::RECORD_ASK,
    },
};

impl Backend for SqliteStore {
    type Row = SqliteRow;
    type Conn = SqliteConnection;
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

    fn batch<T, F>(&self, batch: F) -> impl Future<Output = StoreResult<T>> + Send
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut SqliteConnection) -> BatchFuture<'c, T> + Send + 'static,
    {
        self.batch_tx(batch)
    }
}
