//! SQLite backend: one writer connection (SQLite has a single writer; queuing
//! in the pool is cheaper than SQLITE_BUSY), a small read-only pool for reads.
//!
//! Statements are prepared once and cached by sqlx. A limit bound as a
//! bare parameter defeats that: SQLite (3.47+) reads its value while
//! planning, so binding it again expires the statement and the next step
//! parses it again (a third of the outbox sender's CPU). Limits are written
//! `LIMIT +$N`: the unary plus makes the limit an expression evaluated at
//! run time (`tests/sql_text.rs` keeps it that way).

mod agent_actions;
mod agent_states;
mod approvals;
mod backend;
pub mod backup;
mod checkpoint;
mod choices;
mod deliveries;
mod gateway;
mod inbox;
pub(crate) mod latency;
mod messages;
mod nodes;
mod outbox;
mod outbox_settle;
mod receipts;
mod reminders;
mod reports;
mod sessions;
mod settings;
mod stats;
mod tasks;
mod tool_checks;
mod writer;

use std::{str::FromStr, sync::Arc, time::Duration};

pub use checkpoint::CheckpointStats;
use checkpoint::Checkpointer;

use sqlx::{
    SqlitePool,
    sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous},
};

use crate::StoreOpenError;

/// SQLite's side of the statements written once (`crate::shared`).
pub(crate) const DIALECT: crate::shared::Dialect = crate::shared::Dialect {
    skip_locked: "",
    index_hints: true,
    now_ms: "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)",
};

#[derive(Debug, Clone)]
pub struct SqliteOptions {
    /// `sqlite://path/to/harness.db`
    pub url: String,
    pub readers: u32,
    pub busy_timeout: Duration,
}

impl SqliteOptions {
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            readers: 4,
            busy_timeout: Duration::from_secs(5),
        }
    }
}

#[derive(Clone)]
pub struct SqliteStore {
    writer: SqlitePool,
    reader: SqlitePool,
    checkpointer: Arc<Checkpointer>,
    /// Write-transaction latency (`latency.rs`), shared by every handle.
    latency: Arc<latency::Latency>,
    /// A node whose heartbeat is older than this is dead (`NodeStore`).
    node_dead_after: Duration,
    /// Held by every handle; the checkpointer ends once all are dropped.
    _alive: Arc<()>,
}

impl SqliteStore {
    /// Open (creating if missing) and migrate the database.
    #[tracing::instrument(skip_all, fields(url = %options.url))]
    pub async fn open(options: SqliteOptions) -> Result<Self, StoreOpenError> {
        if !options.url.starts_with("sqlite:") {
            return Err(StoreOpenError::Unsupported(crate::redact_url(&options.url)));
        }
        let base = SqliteConnectOptions::from_str(&options.url)
            .map_err(|source| StoreOpenError::Url {
                url: options.url.clone(),
                source,
            })?
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(options.busy_timeout);
        // Checkpoints run in the background (see `checkpoint`); the writer's
        // own automatic checkpoint is only the safety net.
        let writer_options = base.clone().create_if_missing(true).pragma(
            "wal_autocheckpoint",
            checkpoint::WRITER_AUTOCHECKPOINT_PAGES.to_string(),
        );
        let writer = SqlitePoolOptions::new()
            .max_connections(1)
            .min_connections(1)
            .acquire_timeout(Duration::from_secs(30))
            .test_before_acquire(false)
            .connect_with(writer_options)
            .await
            .map_err(StoreOpenError::Connect)?;
        sqlx::migrate!("../../migrations/sqlite")
            .run(&writer)
            .await?;
        let reader = SqlitePoolOptions::new()
            .max_connections(options.readers.max(1))
            .acquire_timeout(Duration::from_secs(30))
            .test_before_acquire(false)
            .connect_with(base.clone().read_only(true))
            .await
            .map_err(StoreOpenError::Connect)?;
        let alive = Arc::new(());
        let checkpointer = Arc::new(Checkpointer::spawn(base, Arc::downgrade(&alive)));
        Ok(Self {
            writer,
            reader,
            checkpointer,
            latency: Arc::default(),
            node_dead_after: harness_core::nodes::DEFAULT_DEAD_AFTER,
            _alive: alive,
        })
    }

    /// Judge nodes dead after `dead_after` without a heartbeat.
    pub fn with_node_dead_after(mut self, dead_after: Duration) -> Self {
        self.node_dead_after = dead_after;
        self
    }

    /// A lease step timed at `now` with a lease until `until`, unchanged:
    /// one process writes an SQLite database, so its clock is the
    /// database's — the caller's (PostgreSQL reads the database's,
    /// `PgStore::lease_clock`).
    pub(crate) async fn lease_clock(
        &self,
        now: chrono::DateTime<chrono::Utc>,
        until: chrono::DateTime<chrono::Utc>,
    ) -> harness_core::store::StoreResult<crate::shared::LeaseClock> {
        Ok(crate::shared::LeaseClock {
            now: now.timestamp_millis(),
            lease_now: now.timestamp_millis(),
            until: until.timestamp_millis(),
        })
    }

    /// What the background WAL checkpointer has done.
    pub fn checkpoint_stats(&self) -> &CheckpointStats {
        &self.checkpointer.stats
    }

    /// The writer pool, for diagnostics and benchmarks in this workspace.
    pub fn writer_pool(&self) -> &SqlitePool {
        &self.writer
    }

    /// Close both pools, waiting for in-flight statements (graceful shutdown).
    pub async fn close(&self) {
        self.checkpointer.stop().await;
        self.writer.close().await;
        self.reader.close().await;
    }
}
