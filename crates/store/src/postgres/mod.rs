//! PostgreSQL backend: one pool; every writing unit of work is one
//! transaction ([`PgStore::write_tx`], [`PgStore::batch_tx`]).
//!
//! SQLite's single writer makes every read-then-write of the SQLite
//! backend atomic. Here each write transaction first takes the store's
//! transaction-scoped advisory lock (`pg_advisory_xact_lock`, see
//! [`WRITE_LOCK`]), so the same statements keep the same guarantee on any
//! number of connections and processes; claims also lock their rows
//! (`FOR UPDATE SKIP LOCKED`) and inserts that may collide say so
//! (`ON CONFLICT`). Asks and senders' turns, which change only their own
//! tasks' rows, hold the lock shared and lock those tasks instead
//! (`tx.rs` [`tx::Lock`]), so they run side by side. Reads take no lock
//! (they see the last committed state, as SQLite's readers do).
//!
//! The schema is `migrations/postgres/`, applied at open under sqlx's
//! migrator lock (`pg_advisory_lock` on a key derived from the database
//! name, taken before the migrations table is even created), on a
//! connection of its own that is closed afterwards.

mod agent_actions;
mod agent_states;
mod approvals;
mod backend;
mod batch;
pub mod bus;
mod choices;
mod deliveries;
mod gateway;
mod inbox;
mod messages;
mod nodes;
mod outbox;
mod outbox_settle;
mod probe;
mod receipts;
mod reminders;
mod reports;
mod sessions;
mod settings;
mod stats;
mod tasks;
mod tool_checks;
mod tx;

use std::{str::FromStr, sync::Arc, time::Duration};

use sqlx::{
    Connection, PgPool,
    postgres::{PgConnectOptions, PgConnection, PgPoolOptions},
};

pub use probe::{PgProbe, probe};

use crate::{StoreOpenError, sqlite::latency::Latency};

/// [`crate::shared::messages::RECORD_ASK`] as one call of the function of
/// migration 0013 (one round trip instead of three); the same parameters
/// `$1` … `$5` and the same rows.
pub(crate) const RECORD_ASK_CALL: &str =
    "SELECT what, id, execution_id FROM harness_record_ask($1, $2, $3, $4, $5)";

/// PostgreSQL's clock (not the transaction's start: `clock_timestamp()`),
/// in ms since the epoch.
pub(crate) const DB_NOW_MS: &str = "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)";

/// The key of the advisory lock every write transaction holds (the ASCII
/// of "harness" read as a number: one key for the whole store).
pub(crate) const WRITE_LOCK: i64 = 0x0068_6172_6e65_7373;

/// A pooled connection idle this long is pinged before it is handed out
/// (see [`PgStore::open`]); a busier one is used as it is.
pub(crate) const PING_IDLE_AFTER: Duration = Duration::from_secs(1);

/// PostgreSQL's side of the statements written once (`crate::shared`).
pub(crate) const DIALECT: crate::shared::Dialect = crate::shared::Dialect {
    skip_locked: " FOR UPDATE SKIP LOCKED",
    index_hints: false,
    now_ms: DB_NOW_MS,
};

#[derive(Debug, Clone)]
pub struct PgOptions {
    /// `postgres://user@host:5432/database`
    pub url: String,
    pub max_connections: u32,
}

impl PgOptions {
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            max_connections: 16,
        }
    }
}

#[derive(Clone)]
pub struct PgStore {
    pool: PgPool,
    /// The heartbeat's own connection (`NodeStore::node_heartbeat`): a
    /// burst of requests that keeps every pooled connection busy must not
    /// hold the heartbeat back past the dead-after, or the cluster would
    /// declare a busy node dead and fence it.
    beat: PgPool,
    latency: Arc<Latency>,
    /// A node whose heartbeat is older than this is dead (`NodeStore`).
    node_dead_after: Duration,
}

impl PgStore {
    /// Connect and migrate (the database must exist; its tables are
    /// created by the migrations).
    #[tracing::instrument(skip_all, fields(url = %crate::redact_url(&options.url)))]
    pub async fn open(options: PgOptions) -> Result<Self, StoreOpenError> {
        let connect =
            PgConnectOptions::from_str(&options.url).map_err(|source| StoreOpenError::Url {
                url: crate::redact_url(&options.url),
                source,
            })?;
        // Migrate on a connection of its own: sqlx's migrator holds a
        // session-scoped advisory lock while it runs, and a connection that
        // failed half-way must not go back into the pool still holding it.
        let mut conn = PgConnection::connect_with(&connect)
            .await
            .map_err(StoreOpenError::Connect)?;
        // `run_direct` is `run` on a plain connection (`run`'s `Acquire`
        // bound makes this future not `Send`).
        let migrated = sqlx::migrate!("../../migrations/postgres")
            .run_direct(None, &mut conn, false)
            .await;
        let closed = conn.close().await;
        migrated?;
        closed.map_err(StoreOpenError::Connect)?;
        let pool = PgPoolOptions::new()
            .max_connections(options.max_connections.max(2))
            .acquire_timeout(Duration::from_secs(30))
            // sqlx's default pings every connection it hands out: one more
            // round trip per statement or transaction (about a tenth of an
            // ask's CPU on both sides). Only a connection idle for a while
            // is pinged (a server restart or a proxy's timeout cuts idle
            // ones); a broken one is closed and another is taken.
            .test_before_acquire(false)
            .before_acquire(|conn, meta| {
                Box::pin(async move {
                    if meta.idle_for >= PING_IDLE_AFTER {
                        conn.ping().await?;
                    }
                    Ok(true)
                })
            })
            .connect_with(connect.clone())
            .await
            .map_err(StoreOpenError::Connect)?;
        let beat = PgPoolOptions::new()
            .max_connections(1)
            .acquire_timeout(Duration::from_secs(30))
            .connect_with(connect)
            .await
            .map_err(StoreOpenError::Connect)?;
        Ok(Self {
            pool,
            beat,
            latency: Arc::default(),
            node_dead_after: harness_core::nodes::DEFAULT_DEAD_AFTER,
        })
    }

    /// Judge nodes dead after `dead_after` without a heartbeat.
    pub fn with_node_dead_after(mut self, dead_after: Duration) -> Self {
        self.node_dead_after = dead_after;
        self
    }

    /// The pool, for diagnostics and benchmarks in this workspace.
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Close the pool, waiting for in-flight statements.
    pub async fn close(&self) {
        self.beat.close().await;
        self.pool.close().await;
    }
}

impl PgStore {
    /// The database's clock now (ms): leases are taken and judged by it, so
    /// a node whose own clock is skewed can neither steal a live lease nor
    /// hold one past its time.
    /// (The caller's `now` is not used: see [`Self::lease_clock`].)
    pub(crate) async fn lease_now(
        &self,
        _now: chrono::DateTime<chrono::Utc>,
    ) -> harness_core::store::StoreResult<i64> {
        sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT {DB_NOW_MS}")))
            .fetch_one(&self.pool)
            .await
            .map_err(crate::error::map)
    }

    /// A lease step the caller timed at `now` with a lease until `until`:
    /// leases are judged by the database's now and end that now + the same
    /// ttl. Due times and stamps use the later of the two clocks: a node
    /// whose clock is behind still sees due rows as due, and one whose clock
    /// is ahead may do a row early (a backoff is not a safety rule; a lease is).
    pub(crate) async fn lease_clock(
        &self,
        now: chrono::DateTime<chrono::Utc>,
        until: chrono::DateTime<chrono::Utc>,
    ) -> harness_core::store::StoreResult<crate::shared::LeaseClock> {
        let db = self.lease_now(now).await?;
        let ttl = until
            .timestamp_millis()
            .saturating_sub(now.timestamp_millis());
        Ok(crate::shared::LeaseClock {
            now: now.timestamp_millis().max(db),
            lease_now: db,
            until: db.saturating_add(ttl),
        })
    }
}

/// Whether `url` names a PostgreSQL database.
pub fn is_postgres(url: &str) -> bool {
    let lower = url.trim_start().to_ascii_lowercase();
    lower.starts_with("postgres:") || lower.starts_with("postgresql:")
}

/// The command that backs up the PostgreSQL database at `url` to `file`
/// (credentials left out of the URL).
pub fn pg_dump_command(url: &str, file: &std::path::Path) -> String {
    format!(
        "pg_dump --format=custom --no-owner --file '{}' '{}'",
        file.display(),
        crate::redact_url(url)
    )
}

/// The command that restores `file` (a [`pg_dump_command`] archive) into
/// the PostgreSQL database at `url` (credentials left out of the URL).
pub fn pg_restore_command(url: &str, file: &std::path::Path) -> String {
    format!(
        "pg_restore --clean --if-exists --no-owner --dbname '{}' '{}'",
        crate::redact_url(url),
        file.display()
    )
}

/// `harness backup` / `restore` copy a SQLite file; on PostgreSQL they
/// answer the command to use instead.
pub(crate) fn use_pg_dump(url: &str, file: &std::path::Path, restore: bool) -> StoreOpenError {
    StoreOpenError::Backup(if restore {
        format!(
            "harness restore copies a SQLite file; this database is PostgreSQL. Restore a \
             pg_dump archive with: {}",
            pg_restore_command(url, file)
        )
    } else {
        format!(
            "harness backup copies a SQLite file; this database is PostgreSQL. Back it up \
             with: {}",
            pg_dump_command(url, file)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backup_on_postgres_names_pg_dump_without_credentials() {
        let err = use_pg_dump(
            "postgres://u:pw@db/h",
            std::path::Path::new("/b.dump"),
            false,
        );
        let text = err.to_string();
        assert!(text.contains("pg_dump --format=custom"), "{text}");
        assert!(
            text.contains("postgres://***@db/h") && !text.contains("pw"),
            "{text}"
        );
        let err = use_pg_dump("postgresql://db/h", std::path::Path::new("/b.dump"), true);
        assert!(err.to_string().contains("pg_restore"));
        assert!(is_postgres("PostgreSQL://x/y") && !is_postgres("sqlite://x"));
    }
}
