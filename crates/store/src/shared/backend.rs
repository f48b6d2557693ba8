//! What a backend gives the stores written once as generic functions
//! ([`super::message_store`], [`super::choices_store`], …): reads on its
//! readers, one-statement writes, statements in one write transaction (a
//! batch, or a transaction handle), its lease clock, and the little SQL it
//! spells its own way ([`Dialect`], [`AskSql`]). Each backend implements [`Backend`]
//! (`sqlite/backend.rs`, `postgres/backend.rs`); everything else of those
//! stores — their SQL, the order of the statements, the decoding — is
//! written once.

use std::{future::Future, ops::DerefMut, pin::Pin, sync::OnceLock, time::Duration};

use chrono::{DateTime, Utc};
use harness_core::store::{StoreError, StoreResult, TransactionLatency};

use super::{Bind, Dialect, LeaseClock, SqlRow};
use crate::error::map;

/// The future of one batch on a backend's connection, inside a write
/// transaction (both stores' `batch_tx`).
pub(crate) type BatchFuture<'c, T> =
    Pin<Box<dyn Future<Output = Result<T, sqlx::Error>> + Send + 'c>>;

/// Statements (`;`-separated, or one) and the values bound to their `$n`:
/// every statement of a step gets the same values.
pub(crate) struct Step {
    pub(crate) sql: String,
    pub(crate) binds: Vec<Bind>,
}

impl Step {
    pub(crate) fn new(sql: impl Into<String>, binds: Vec<Bind>) -> Self {
        Self {
            sql: sql.into(),
            binds,
        }
    }
}

/// What the dialects spell differently in asks and answers.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AskSql {
    /// The statements that record an ask (`$1` task, `$2` ask id, `$3`
    /// question, `$4` now, `$5` idempotency key or NULL), answering the rows
    /// of [`super::messages::RECORD_ASK`]: those statements on SQLite, one
    /// call of the schema's function on PostgreSQL.
    pub(crate) record_ask: &'static str,
    /// The notification center's case-insensitive match: SQLite's `LIKE`
    /// ignores ASCII case, PostgreSQL's needs `ILIKE`.
    pub(crate) like: &'static str,
    /// The default option's 0-based index as a JSON array (`[i]`), from an
    /// `ask_choices` row's `options` and `default_label`: the option
    /// recorded for an answer by default.
    pub(crate) default_option: &'static str,
}

/// A backend, for the stores written once as generic functions.
pub(crate) trait Backend: Sync + 'static {
    type Row: SqlRow + Send + 'static;
    /// The connection a batch runs on.
    type Conn: Send;
    /// The dialect's side of the statements written once.
    const DIALECT: Dialect;
    /// The dialect's side of asks and answers.
    const ASKS: AskSql;
    /// A write transaction, timed until it ends (SQLite: `BEGIN IMMEDIATE`
    /// on the writer; PostgreSQL: holding the store's write lock,
    /// `postgres/tx.rs`); dropped without [`Backend::commit`], it rolls back.
    type Tx: DerefMut<Target = Self::Conn> + Send;
    /// Opens the transaction inside a batch ([`write_steps`]) where the
    /// backend's batch does not run in one already (SQLite: `BEGIN
    /// IMMEDIATE`, sent with the first statements).
    const BEGIN: Option<&'static str>;
    /// Ends a batch that `BEGIN` opened (sent with the last statements).
    const COMMIT: Option<&'static str>;
    /// Ends a batch that `BEGIN` opened and that writes nothing.
    const ROLLBACK: Option<&'static str>;

    /// `sql` with `binds`, on the readers (no transaction).
    fn read(
        &self,
        sql: &str,
        binds: Vec<Bind>,
    ) -> impl Future<Output = StoreResult<Vec<Self::Row>>> + Send;

    /// The `;`-separated statements of `sql`, sharing `binds`, in one write
    /// transaction; their rows in order (both stores' `run_batch`).
    fn run_batch(
        &self,
        sql: &str,
        binds: Vec<Bind>,
    ) -> impl Future<Output = StoreResult<Vec<Self::Row>>> + Send;

    /// An ask alone ([`AskSql::record_ask`] with its five binds) in its own
    /// write transaction, in the fewest round trips the backend has.
    fn ask_alone(
        &self,
        binds: Vec<Bind>,
    ) -> impl Future<Output = StoreResult<Vec<Self::Row>>> + Send;

    /// An ask ([`AskSql::record_ask`]) followed by statements that write
    /// only the ask's own rows (its evidence), sharing `binds`, in one
    /// write transaction under the narrowest lock the backend has (on
    /// PostgreSQL the ask locks its task, so the store's lock is shared).
    fn ask_batch(
        &self,
        sql: &str,
        binds: Vec<Bind>,
    ) -> impl Future<Output = StoreResult<Vec<Self::Row>>> + Send;

    /// One step on `conn`, inside the caller's batch; its rows in order.
    fn run_step(
        conn: &mut Self::Conn,
        step: Step,
    ) -> impl Future<Output = Result<Vec<Self::Row>, sqlx::Error>> + Send;

    /// A new write transaction ([`Backend::Tx`]).
    fn write_tx(&self) -> impl Future<Output = StoreResult<Self::Tx>> + Send;

    /// Commits `tx`.
    fn commit(tx: Self::Tx) -> impl Future<Output = StoreResult<()>> + Send;

    /// Rolls `tx` back.
    fn rollback(tx: Self::Tx) -> impl Future<Output = StoreResult<()>> + Send;

    /// One statement on its own (no transaction around it) where writes go
    /// (SQLite: the writer; PostgreSQL: the pool, without the write lock):
    /// the number of rows it changed.
    fn write(&self, sql: &str, binds: Vec<Bind>) -> impl Future<Output = StoreResult<u64>> + Send;

    /// [`Backend::write`] answering the statement's rows.
    fn write_rows(
        &self,
        sql: &str,
        binds: Vec<Bind>,
    ) -> impl Future<Output = StoreResult<Vec<Self::Row>>> + Send;

    /// One statement on `conn` (inside the caller's transaction): the
    /// number of rows it changed.
    fn execute(
        conn: &mut Self::Conn,
        step: Step,
    ) -> impl Future<Output = Result<u64, sqlx::Error>> + Send;

    /// One statement on its own on the heartbeat's connection (SQLite: the
    /// writer; PostgreSQL: a pool of its own, so a burst of requests that
    /// keeps every pooled connection busy cannot hold a heartbeat back):
    /// the number of rows it changed.
    fn beat(&self, sql: &str, binds: Vec<Bind>) -> impl Future<Output = StoreResult<u64>> + Send;

    /// A node whose heartbeat is older than this is dead.
    fn node_dead_after(&self) -> Duration;

    /// The write transactions' latency so far.
    fn transaction_latency(&self) -> TransactionLatency;

    /// The times of a lease step the caller timed at `now` with a lease
    /// until `until` ([`LeaseClock`]).
    fn lease_clock(
        &self,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> impl Future<Output = StoreResult<LeaseClock>> + Send;

    /// `batch` in a write transaction, in a task of its own (a caller that
    /// goes away cannot stop it half-way): all or nothing (both stores'
    /// `batch_tx`).
    fn batch<T, F>(&self, batch: F) -> impl Future<Output = StoreResult<T>> + Send
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut Self::Conn) -> BatchFuture<'c, T> + Send + 'static;
}

/// A store error met inside a batch, as the driver error that rolls the
/// batch back.
fn in_batch(err: StoreError) -> sqlx::Error {
    sqlx::Error::Decode(Box::new(err))
}

/// `first`, then the steps `then` makes from its rows, in one write
/// transaction sent as one batch on one connection (a round trip per step).
/// `then` answering `None`: nothing is written, and `None`. Otherwise the
/// rows of `first` and those of the other steps.
pub(crate) async fn write_steps<S, F>(
    store: &S,
    first: Step,
    then: F,
) -> StoreResult<Option<(Vec<S::Row>, Vec<S::Row>)>>
where
    S: Backend,
    F: FnOnce(&[S::Row]) -> StoreResult<Option<Vec<Step>>> + Send + 'static,
{
    store
        .batch(move |conn| {
            Box::pin(async move {
                let mut first = first;
                if let Some(begin) = S::BEGIN {
                    first.sql = format!("{begin}; {}", first.sql);
                }
                let head = S::run_step(&mut *conn, first).await?;
                let Some(mut steps) = then(head.as_slice()).map_err(in_batch)? else {
                    if let Some(rollback) = S::ROLLBACK {
                        S::run_step(&mut *conn, Step::new(rollback, Vec::new())).await?;
                    }
                    return Ok(None);
                };
                if let Some(commit) = S::COMMIT {
                    match steps.last_mut() {
                        Some(last) => last.sql = format!("{}; {commit}", last.sql),
                        None => steps.push(Step::new(commit, Vec::new())),
                    }
                }
                let mut rest = Vec::new();
                for step in steps {
                    rest.extend(S::run_step(&mut *conn, step).await?);
                }
                Ok(Some((head, rest)))
            })
        })
        .await
}

/// A conditional answer: `first` (an OPEN → ANSWERED that returns the ask's
/// row when it won), then the steps `then` makes from that row, in one
/// write transaction ([`write_steps`]). `None` when `first` found no OPEN
/// ask: nothing is written.
pub(crate) async fn answer_steps<S, F>(
    store: &S,
    first: Step,
    then: F,
) -> StoreResult<Option<(S::Row, Vec<S::Row>)>>
where
    S: Backend,
    F: FnOnce(&S::Row) -> StoreResult<Vec<Step>> + Send + 'static,
{
    let done = write_steps(store, first, move |answered: &[S::Row]| {
        answered.first().map(then).transpose()
    })
    .await?;
    Ok(done.and_then(|(head, rest)| head.into_iter().next().map(|row| (row, rest))))
}

/// The only row of a statement that always answers one (`COUNT`, `MIN`,
/// `INSERT … RETURNING`).
pub(crate) fn only<R>(rows: Vec<R>, what: &'static str) -> StoreResult<R> {
    rows.into_iter()
        .next()
        .ok_or_else(|| StoreError::Backend(format!("{what} returned no row").into()))
}

/// `sql` with `binds` on `conn` (inside the caller's transaction): its rows.
pub(crate) async fn fetch<S: Backend>(
    conn: &mut S::Conn,
    sql: impl Into<String>,
    binds: Vec<Bind>,
) -> StoreResult<Vec<S::Row>> {
    S::run_step(conn, Step::new(sql, binds)).await.map_err(map)
}

/// The first row of `sql` on `conn`, if any.
pub(crate) async fn fetch_optional<S: Backend>(
    conn: &mut S::Conn,
    sql: impl Into<String>,
    binds: Vec<Bind>,
) -> StoreResult<Option<S::Row>> {
    Ok(fetch::<S>(conn, sql, binds).await?.into_iter().next())
}

/// The first row of `sql` on `conn`; none is the driver's "no row" error.
pub(crate) async fn fetch_one<S: Backend>(
    conn: &mut S::Conn,
    sql: impl Into<String>,
    binds: Vec<Bind>,
) -> StoreResult<S::Row> {
    fetch_optional::<S>(conn, sql, binds)
        .await?
        .ok_or_else(|| map(sqlx::Error::RowNotFound))
}

/// `sql` with `binds` on `conn`: the number of rows it changed.
pub(crate) async fn execute<S: Backend>(
    conn: &mut S::Conn,
    sql: impl Into<String>,
    binds: Vec<Bind>,
) -> StoreResult<u64> {
    S::execute(conn, Step::new(sql, binds)).await.map_err(map)
}

/// The first row `sql` reads, if any (on the readers).
pub(crate) async fn read_optional<S: Backend>(
    store: &S,
    sql: &str,
    binds: Vec<Bind>,
) -> StoreResult<Option<S::Row>> {
    Ok(store.read(sql, binds).await?.into_iter().next())
}

/// A statement built once per dialect: a `static` inside a generic
/// function is one for every backend, so the text the dialect fills in is
/// kept here, one cell per dialect (they differ in `index_hints`).
pub(crate) struct PerDialect([OnceLock<String>; 2]);

impl PerDialect {
    pub(crate) const fn new() -> Self {
        Self([OnceLock::new(), OnceLock::new()])
    }

    /// The statement of `dialect`, built by `build` the first time.
    pub(crate) fn get(
        &'static self,
        dialect: Dialect,
        build: fn(Dialect) -> String,
    ) -> &'static str {
        self.0[usize::from(dialect.index_hints)].get_or_init(|| build(dialect))
    }
}
