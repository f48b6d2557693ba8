//! Read-only aggregates for metrics and analytics (`/metrics`, `/analytics`).

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::StoreResult;

/// Row counts by state: the bounded label sets of the metrics.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreCounts {
    /// `(kind, state, rows)` of harness messages (asks and notifies).
    pub messages: Vec<(String, String, i64)>,
    /// `(state, rows, attempts summed)` of the delivery queue.
    pub deliveries: Vec<(String, i64, i64)>,
    /// `(status, rows)` of executions.
    pub executions: Vec<(String, i64)>,
}

/// One ask's life, for response-time analytics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AskTiming {
    pub created_at: DateTime<Utc>,
    /// When it was answered (state ANSWERED).
    pub replied_at: Option<DateTime<Utc>>,
    /// OPEN, ANSWERED, CANCELLED, EXPIRED, …
    pub state: String,
    /// The task's project name (`None`: a task outside any project).
    pub project: Option<String>,
}

/// The stats aggregate.
#[async_trait]
pub trait StatsStore: Send + Sync + 'static {
    async fn counts(&self) -> StoreResult<StoreCounts>;
    /// Asks created at or after `since`, plus every ask still OPEN, newest
    /// first, at most `limit`.
    async fn ask_timings(&self, since: DateTime<Utc>, limit: i64) -> StoreResult<Vec<AskTiming>>;
}
