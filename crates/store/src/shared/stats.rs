//! [`StatsStore`](harness_core::store::StatsStore) once for both backends:
//! counts by state and ask timings (on the readers), in SQL both dialects
//! read; one generic function per method over [`Backend`], and
//! [`stats_store!`] that implements the port with them.

use chrono::{DateTime, Utc};
use harness_core::store::{AnswerHistogram, AskTiming, StoreCounts, StoreResult};

use super::{Bind, SqlRow, Value, backend::Backend, ms, time};

/// Run by `counts`.
pub(crate) const MESSAGE_COUNTS: &str =
    "SELECT kind, state, COUNT(*) FROM harness_messages GROUP BY kind, state ORDER BY kind, state";

/// Run by `counts`.
pub(crate) const EXECUTION_COUNTS: &str =
    "SELECT status, COUNT(*) FROM executions GROUP BY status ORDER BY status";

/// Run by `ask_timings`: `reminders` counts those that reached the chat.
pub(crate) const ASK_TIMINGS: &str = "SELECT m.created_at, m.replied_at, m.state, p.name, \
               (SELECT COUNT(*) FROM ask_reminders r JOIN harness_outbound o ON o.id = r.outbound_id \
                  WHERE r.message_id = m.id AND o.state IN ('DELIVERED', 'SENT_UNVERIFIED')) AS reminders, \
               CAST(CASE WHEN EXISTS (SELECT 1 FROM ask_escalations e WHERE e.message_id = m.id) THEN 1 ELSE 0 END AS BIGINT) AS escalated \
             FROM harness_messages m \
             JOIN tasks t ON t.id = m.task_id \
             LEFT JOIN projects p ON p.id = t.project_id \
             WHERE m.kind = 'ask' AND (m.created_at >= $1 OR m.state = 'OPEN') \
             ORDER BY m.created_at DESC LIMIT +$2";

/// Deliveries by state: rows and attempts (a SUM is NUMERIC on PostgreSQL,
/// hence the cast).
pub(crate) const DELIVERY_COUNTS: &str = "SELECT state, COUNT(*), \
     CAST(COALESCE(SUM(attempts), 0) AS BIGINT) FROM deliveries GROUP BY state ORDER BY state";

/// Outbound rows by state: rows and attempts.
pub(crate) const OUTBOUND_COUNTS: &str = "SELECT state, COUNT(*), \
     CAST(COALESCE(SUM(attempts), 0) AS BIGINT) FROM harness_outbound GROUP BY state ORDER BY state";

/// One row per non-empty bucket: `(bucket index, asks, waits summed in ms)`;
/// the bounds (ms) are the first parameters, then `since`. Written in the
/// SQL both dialects read (no `MAX(a, b)` / `GREATEST`, explicit casts).
pub(crate) fn answer_histogram_sql(bounds: usize) -> String {
    let mut case = String::from("CASE");
    for i in 0..bounds {
        case.push_str(&format!(" WHEN d <= ${} THEN {i}", i + 1));
    }
    case.push_str(&format!(" ELSE {bounds} END"));
    let since = bounds + 1;
    format!(
        "SELECT CAST({case} AS BIGINT) AS bucket, COUNT(*), \
           CAST(COALESCE(SUM(d), 0.0) AS DOUBLE PRECISION) FROM \
         (SELECT CAST(CASE WHEN m.replied_at > m.created_at \
             THEN m.replied_at - m.created_at ELSE 0 END AS DOUBLE PRECISION) AS d \
           FROM harness_messages m \
           WHERE m.kind = 'ask' AND m.replied_at IS NOT NULL AND m.created_at >= ${since}) AS w \
         GROUP BY bucket"
    )
}

/// The first three columns of each row `sql` reads.
async fn triples<S: Backend, A: Value, B: Value, C: Value>(
    store: &S,
    sql: &str,
) -> StoreResult<Vec<(A, B, C)>> {
    let rows = store.read(sql, Vec::new()).await?;
    rows.iter()
        .map(|r| Ok((r.at(0)?, r.at(1)?, r.at(2)?)))
        .collect()
}

pub(crate) async fn counts<S: Backend>(store: &S) -> StoreResult<StoreCounts> {
    let messages = triples(store, MESSAGE_COUNTS).await?;
    let deliveries = triples(store, DELIVERY_COUNTS).await?;
    let executions = store
        .read(EXECUTION_COUNTS, Vec::new())
        .await?
        .iter()
        .map(|r| Ok((r.at(0)?, r.at(1)?)))
        .collect::<StoreResult<_>>()?;
    let outbound = triples(store, OUTBOUND_COUNTS).await?;
    Ok(StoreCounts {
        messages,
        deliveries,
        executions,
        outbound,
    })
}

pub(crate) async fn ask_timings<S: Backend>(
    store: &S,
    since: DateTime<Utc>,
    limit: i64,
) -> StoreResult<Vec<AskTiming>> {
    let binds = vec![Bind::Int(ms(since)), Bind::Int(limit.max(0))];
    let rows = store.read(ASK_TIMINGS, binds).await?;
    rows.iter()
        .map(|r| {
            let replied: Option<i64> = r.at(1)?;
            Ok(AskTiming {
                created_at: time(r.at::<i64>(0)?)?,
                replied_at: replied.map(time).transpose()?,
                state: r.at(2)?,
                project: r.at(3)?,
                reminders: u32::try_from(r.at::<i64>(4)?).unwrap_or(u32::MAX),
                escalated: r.at::<i64>(5)? != 0,
            })
        })
        .collect()
}

pub(crate) async fn answer_histogram<S: Backend>(
    store: &S,
    since: DateTime<Utc>,
    bounds: &[f64],
) -> StoreResult<AnswerHistogram> {
    let sql = answer_histogram_sql(bounds.len());
    let mut binds: Vec<Bind> = bounds.iter().map(|b| Bind::Float(b * 1000.0)).collect();
    binds.push(Bind::Int(ms(since)));
    let rows = store.read(&sql, binds).await?;
    let mut out = AnswerHistogram {
        counts: vec![0; bounds.len() + 1],
        sum_seconds: 0.0,
    };
    for r in &rows {
        let bucket = usize::try_from(r.at::<i64>(0)?).unwrap_or(bounds.len());
        let n = u64::try_from(r.at::<i64>(1)?).unwrap_or(0);
        if let Some(slot) = out.counts.get_mut(bucket) {
            *slot += n;
        }
        out.sum_seconds += r.at::<f64>(2)? / 1000.0;
    }
    Ok(out)
}

/// `impl StatsStore for $store` with the functions of this module, each
/// method in its own span.
macro_rules! stats_store {
    ($store:ty) => {
        const _: () = {
            use chrono::{DateTime, Utc};
            use harness_core::store::{
                AnswerHistogram, AskTiming, StatsStore, StoreCounts, StoreResult,
                TransactionLatency,
            };
            use $crate::shared::{backend::Backend, stats as s};

            #[async_trait::async_trait]
            impl StatsStore for $store {
                fn transaction_latency(&self) -> TransactionLatency {
                    Backend::transaction_latency(self)
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn counts(&self) -> StoreResult<StoreCounts> {
                    s::counts(self).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn ask_timings(
                    &self,
                    since: DateTime<Utc>,
                    limit: i64,
                ) -> StoreResult<Vec<AskTiming>> {
                    s::ask_timings(self, since, limit).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn answer_histogram(
                    &self,
                    since: DateTime<Utc>,
                    bounds: &[f64],
                ) -> StoreResult<AnswerHistogram> {
                    s::answer_histogram(self, since, bounds).await
                }
            }
        };
    };
}
pub(crate) use stats_store;
