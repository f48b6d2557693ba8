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
    /// `(state, rows, attempts summed)` of the outbox (`harness_outbound`).
    pub outbound: Vec<(String, i64, i64)>,
}

/// Time from a question to its answer, counted into histogram buckets by
/// the store (no rows leave the database).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AnswerHistogram {
    /// Answered asks per bucket: `counts[i]` is the number with a wait in
    /// `(bounds[i-1], bounds[i]]` seconds; the last entry (one more than
    /// `bounds`) counts the waits above the last bound.
    pub counts: Vec<u64>,
    /// Sum of the waits, in seconds.
    pub sum_seconds: f64,
}

impl AnswerHistogram {
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }
}

/// Upper bounds (seconds) of the store's write-transaction latency buckets.
pub const TRANSACTION_BOUNDS: [f64; 12] = [
    0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];

/// How long the store's write transactions took since the process started,
/// from asking for the writer to the commit (waiting for the single writer
/// included): counts per bucket of [`TRANSACTION_BOUNDS`] (plus one above
/// the last bound) and their sum.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TransactionLatency {
    pub counts: Vec<u64>,
    pub sum_seconds: f64,
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
    /// Reminders sent for it.
    pub reminders: u32,
    /// Whether it was escalated.
    pub escalated: bool,
}

/// The stats aggregate.
#[async_trait]
pub trait StatsStore: Send + Sync + 'static {
    async fn counts(&self) -> StoreResult<StoreCounts>;
    /// Asks created at or after `since`, plus every ask still OPEN, newest
    /// first, at most `limit`.
    async fn ask_timings(&self, since: DateTime<Utc>, limit: i64) -> StoreResult<Vec<AskTiming>>;
    /// Asks created at or after `since` and answered, counted by their wait
    /// (seconds from the question to the answer) into the buckets with the
    /// upper `bounds` (ascending) plus one above the last bound.
    async fn answer_histogram(
        &self,
        since: DateTime<Utc>,
        bounds: &[f64],
    ) -> StoreResult<AnswerHistogram>;
    /// Write-transaction latency so far (a backend that does not measure it
    /// answers an empty histogram).
    fn transaction_latency(&self) -> TransactionLatency {
        TransactionLatency::default()
    }
}
