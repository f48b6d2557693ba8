//! What both backends share: row decoders (one function per row type,
//! generic over [`SqlRow`]), column lists and the SQL text on which the
//! two dialects agree.
//!
//! Placeholders are written `$1`, `$2`, … everywhere: PostgreSQL numbers its
//! parameters that way, and sqlx-sqlite binds a `$NNN` parameter to the
//! NNN-th argument exactly like `?NNN`, so one string serves both. A limit
//! is written `LIMIT +$N` (see `sqlite/mod.rs`: SQLite must not plan a
//! bound limit; PostgreSQL reads `+$N` as the same bigint). Where the
//! dialects differ (`ON CONFLICT` targets, `FOR UPDATE SKIP LOCKED`,
//! advisory locks, `LEAST`/`MIN`, `EXISTS` typing) the text stays in the
//! backend's own module.

pub(crate) mod agent_action_store;
pub(crate) mod agent_actions;
pub(crate) mod agent_state_store;
pub(crate) mod agent_states;
pub(crate) mod approval_store;
pub(crate) mod approvals_sql;
pub(crate) mod backend;
pub(crate) mod choices;
pub(crate) mod choices_store;
pub(crate) mod deliveries;
pub(crate) mod delivery_store;
pub(crate) mod escalations;
pub(crate) mod gateway;
pub(crate) mod gateway_replies;
pub(crate) mod gateway_route_store;
pub(crate) mod gateway_routes;
pub(crate) mod gateway_store;
pub(crate) mod inbox;
pub(crate) mod inbox_rows;
pub(crate) mod inbox_sql;
pub(crate) mod message_store;
pub(crate) mod messages;
pub(crate) mod node_store;
pub(crate) mod nodes;
pub(crate) mod outbox;
pub(crate) mod outbox_settle;
pub(crate) mod outbox_store;
pub(crate) mod receipts;
pub(crate) mod reminder_store;
pub(crate) mod reminders;
pub(crate) mod report_store;
pub(crate) mod reports;
pub(crate) mod rows;
pub(crate) mod sessions;
pub(crate) mod settings;
pub(crate) mod stats;
pub(crate) mod task_store;
pub(crate) mod tasks;
pub(crate) mod tool_check_store;
pub(crate) mod tool_checks;
pub(crate) mod work;

use chrono::{DateTime, Utc};
use harness_core::store::{StoreError, StoreResult};
use sqlx::{Postgres, Sqlite, postgres::PgRow, sqlite::SqliteRow};

use crate::error::map;

/// A Rust type that both backends decode from a column (text, integers,
/// booleans and their `Option`s).
pub(crate) trait Value:
    for<'r> sqlx::Decode<'r, Sqlite>
    + sqlx::Type<Sqlite>
    + for<'r> sqlx::Decode<'r, Postgres>
    + sqlx::Type<Postgres>
{
}

impl<T> Value for T where
    T: for<'r> sqlx::Decode<'r, Sqlite>
        + sqlx::Type<Sqlite>
        + for<'r> sqlx::Decode<'r, Postgres>
        + sqlx::Type<Postgres>
{
}

/// A result row of either backend: the one thing a shared decoder needs.
pub(crate) trait SqlRow: sqlx::Row {
    /// The value of `column`; a driver error (missing column, wrong type)
    /// becomes the core's storage error.
    fn col<T: Value>(&self, column: &str) -> StoreResult<T>;
    /// The value of the `index`-th column (0-based).
    fn at<T: Value>(&self, index: usize) -> StoreResult<T>;
}

impl SqlRow for SqliteRow {
    fn col<T: Value>(&self, column: &str) -> StoreResult<T> {
        sqlx::Row::try_get(self, column).map_err(map)
    }
    fn at<T: Value>(&self, index: usize) -> StoreResult<T> {
        sqlx::Row::try_get(self, index).map_err(map)
    }
}

impl SqlRow for PgRow {
    fn col<T: Value>(&self, column: &str) -> StoreResult<T> {
        sqlx::Row::try_get(self, column).map_err(map)
    }
    fn at<T: Value>(&self, index: usize) -> StoreResult<T> {
        sqlx::Row::try_get(self, index).map_err(map)
    }
}

/// A value bound to a statement whose arguments are built at run time
/// (conditional updates, [`crate::sqlite`]'s and [`crate::postgres`]'s
/// `run_batch`, a [`backend::Step`]).
pub(crate) enum Bind {
    Text(String),
    OptText(Option<String>),
    Int(i64),
    OptInt(Option<i64>),
    Float(f64),
}

/// `query` with `binds` bound in order.
pub(crate) fn bind_all<'q, DB: sqlx::Database>(
    query: sqlx::query::Query<'q, DB, <DB as sqlx::Database>::Arguments>,
    binds: Vec<Bind>,
) -> sqlx::query::Query<'q, DB, <DB as sqlx::Database>::Arguments>
where
    String: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<String>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    i64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    Option<i64>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    f64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    binds.into_iter().fold(query, |query, b| match b {
        Bind::Text(v) => query.bind(v),
        Bind::OptText(v) => query.bind(v),
        Bind::Int(v) => query.bind(v),
        Bind::OptInt(v) => query.bind(v),
        Bind::Float(v) => query.bind(v),
    })
}

/// What differs between the dialects inside statements that are otherwise
/// shared (`crate::sqlite::DIALECT`, `crate::postgres::DIALECT`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Dialect {
    /// Follows the `LIMIT` of a claim's sub-select: `FOR UPDATE SKIP LOCKED`
    /// on PostgreSQL (claimers on several connections), nothing on SQLite
    /// (one writer).
    pub(crate) skip_locked: &'static str,
    /// Whether `INDEXED BY` planner hints apply (SQLite only).
    pub(crate) index_hints: bool,
    /// The database's clock now, in ms since the epoch (an SQL expression):
    /// node liveness and, on PostgreSQL, leases are judged by it.
    pub(crate) now_ms: &'static str,
}

impl Dialect {
    /// `INDEXED BY <index>` where the dialect has it, else nothing.
    pub(crate) fn indexed_by(&self, index: &str) -> String {
        if self.index_hints {
            format!("INDEXED BY {index}")
        } else {
            String::new()
        }
    }
}

/// The times of one lease step (ms): `now` for due times and stamps (the
/// caller's, or the database's when that is later); `lease_now` judges
/// leases and `until` ends the new ones — the database's clock on
/// PostgreSQL (several nodes), the caller's on SQLite (one process: the
/// same clock). See `PgStore::lease_clock`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LeaseClock {
    pub(crate) now: i64,
    pub(crate) lease_now: i64,
    pub(crate) until: i64,
}

/// `$first, $first+1, …` (`n` placeholders), for an `IN (…)` list.
pub(crate) fn marks(first: usize, n: usize) -> String {
    let marks: Vec<String> = (first..first + n).map(|i| format!("${i}")).collect();
    marks.join(", ")
}

/// Milliseconds since the epoch (both backends store times as BIGINT ms).
pub(crate) fn time(ms: i64) -> StoreResult<DateTime<Utc>> {
    DateTime::from_timestamp_millis(ms).ok_or(StoreError::Corrupt {
        column: "timestamp",
        value: ms.to_string(),
    })
}

pub(crate) fn opt_time(v: Option<i64>) -> StoreResult<Option<DateTime<Utc>>> {
    v.map(time).transpose()
}

pub(crate) fn ms(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

pub(crate) fn corrupt(column: &'static str, value: &str) -> StoreError {
    StoreError::Corrupt {
        column,
        value: value.to_string(),
    }
}

/// A TEXT column holding one of an enum's names.
pub(crate) fn enum_col<R: SqlRow, T>(
    row: &R,
    column: &'static str,
    parse: fn(&str) -> Option<T>,
) -> StoreResult<T> {
    let text: String = row.col(column)?;
    parse(&text).ok_or(StoreError::Corrupt {
        column,
        value: text,
    })
}

/// `('A', 'B')` for an `IN` list of enum names (never user text).
pub(crate) fn quoted_list<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let quoted: Vec<String> = names.into_iter().map(|s| format!("'{s}'")).collect();
    format!("({})", quoted.join(", "))
}
