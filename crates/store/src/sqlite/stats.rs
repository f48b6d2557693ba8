//! [`StatsStore`] on SQLite: counts by state and ask timings (read pool).

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use harness_core::store::{AskTiming, StatsStore, StoreCounts, StoreResult};
use sqlx::Row;

use super::{
    SqliteStore,
    rows::{ms, time},
};
use crate::error::map;

#[async_trait]
impl StatsStore for SqliteStore {
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
        Ok(StoreCounts {
            messages,
            deliveries,
            executions,
        })
    }

    async fn ask_timings(&self, since: DateTime<Utc>, limit: i64) -> StoreResult<Vec<AskTiming>> {
        let rows = sqlx::query(
            "SELECT m.created_at, m.replied_at, m.state, p.name \
             FROM harness_messages m \
             JOIN tasks t ON t.id = m.task_id \
             LEFT JOIN projects p ON p.id = t.project_id \
             WHERE m.kind = 'ask' AND (m.created_at >= ? OR m.state = 'OPEN') \
             ORDER BY m.created_at DESC LIMIT ?",
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
}
