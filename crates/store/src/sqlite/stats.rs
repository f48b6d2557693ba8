//! [`StatsStore`] on SQLite: counts by state and ask timings (read pool).

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use harness_core::store::{
    AnswerHistogram, AskTiming, StatsStore, StoreCounts, StoreResult, TransactionLatency,
};
use sqlx::{AssertSqlSafe, Row};

use super::{
    SqliteStore,
    rows::{ms, time},
};
use crate::error::map;

#[async_trait]
impl StatsStore for SqliteStore {
    fn transaction_latency(&self) -> TransactionLatency {
        self.latency.snapshot()
    }

    async fn counts(&self) -> StoreResult<StoreCounts> {
        let messages = sqlx::query(
            "SELECT kind, state, COUNT(*) FROM harness_messages GROUP BY kind, state ORDER BY kind, state",
        )
        .fetch_all(&self.reader)
        .await
        .map_err(map)?
        .iter()
        .map(|r| (r.get::<String, _>(0), r.get::<String, _>(1), r.get::<i64, _>(2)))
        .collect();
        let deliveries = sqlx::query(
            "SELECT state, COUNT(*), COALESCE(SUM(attempts), 0) FROM deliveries GROUP BY state ORDER BY state",
        )
        .fetch_all(&self.reader)
        .await
        .map_err(map)?
        .iter()
        .map(|r| (r.get::<String, _>(0), r.get::<i64, _>(1), r.get::<i64, _>(2)))
        .collect();
        let executions =
            sqlx::query("SELECT status, COUNT(*) FROM executions GROUP BY status ORDER BY status")
                .fetch_all(&self.reader)
                .await
                .map_err(map)?
                .iter()
                .map(|r| (r.get::<String, _>(0), r.get::<i64, _>(1)))
                .collect();
        let outbound = sqlx::query(
            "SELECT state, COUNT(*), COALESCE(SUM(attempts), 0) FROM harness_outbound GROUP BY state ORDER BY state",
        )
        .fetch_all(&self.reader)
        .await
        .map_err(map)?
        .iter()
        .map(|r| (r.get::<String, _>(0), r.get::<i64, _>(1), r.get::<i64, _>(2)))
        .collect();
        Ok(StoreCounts {
            messages,
            deliveries,
            executions,
            outbound,
        })
    }

    async fn ask_timings(&self, since: DateTime<Utc>, limit: i64) -> StoreResult<Vec<AskTiming>> {
        let rows = sqlx::query(
            "SELECT m.created_at, m.replied_at, m.state, p.name \
             FROM harness_messages m \
             JOIN tasks t ON t.id = m.task_id \
             LEFT JOIN projects p ON p.id = t.project_id \
             WHERE m.kind = 'ask' AND (m.created_at >= $1 OR m.state = 'OPEN') \
             ORDER BY m.created_at DESC LIMIT +$2",
        )
        .bind(ms(since))
        .bind(limit.max(0))
        .fetch_all(&self.reader)
        .await
        .map_err(map)?;
        rows.iter()
            .map(|r| {
                let replied: Option<i64> = r.get(1);
                Ok(AskTiming {
                    created_at: time(r.get::<i64, _>(0))?,
                    replied_at: replied.map(time).transpose()?,
                    state: r.get(2),
                    project: r.get(3),
                })
            })
            .collect()
    }

    async fn answer_histogram(
        &self,
        since: DateTime<Utc>,
        bounds: &[f64],
    ) -> StoreResult<AnswerHistogram> {
        let sql = answer_histogram_sql(bounds.len());
        let mut query = sqlx::query(AssertSqlSafe(sql));
        for bound in bounds {
            query = query.bind(bound * 1000.0);
        }
        let rows = query
            .bind(ms(since))
            .fetch_all(&self.reader)
            .await
            .map_err(map)?;
        let mut out = AnswerHistogram {
            counts: vec![0; bounds.len() + 1],
            sum_seconds: 0.0,
        };
        for r in &rows {
            let bucket = usize::try_from(r.get::<i64, _>(0)).unwrap_or(bounds.len());
            let n = u64::try_from(r.get::<i64, _>(1)).unwrap_or(0);
            if let Some(slot) = out.counts.get_mut(bucket) {
                *slot += n;
            }
            out.sum_seconds += r.get::<f64, _>(2) / 1000.0;
        }
        Ok(out)
    }
}

/// One row per non-empty bucket: `(bucket index, asks, waits summed in ms)`;
/// the bounds (ms) are the first parameters, then `since`.
fn answer_histogram_sql(bounds: usize) -> String {
    let mut case = String::from("CASE");
    for i in 0..bounds {
        case.push_str(&format!(" WHEN d <= ${} THEN {i}", i + 1));
    }
    case.push_str(&format!(" ELSE {bounds} END"));
    let since = bounds + 1;
    format!(
        "SELECT {case} AS bucket, COUNT(*), COALESCE(SUM(d), 0.0) FROM \
         (SELECT MAX(m.replied_at - m.created_at, 0) * 1.0 AS d FROM harness_messages m \
          WHERE m.kind = 'ask' AND m.replied_at IS NOT NULL AND m.created_at >= ${since}) \
         GROUP BY bucket"
    )
}
