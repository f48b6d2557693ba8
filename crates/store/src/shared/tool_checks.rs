//! The ungated-run watch's tables (`tool_checks`, `ungated_runs`, migration
//! 0033 on both backends) once for both: the SQL and the implementation of
//! [`harness_core::store::ToolCheckStore`] ([`tool_check_store`], expanded
//! per backend).

use harness_core::store::{StoreResult, UngatedEvidence, UngatedFlag};

use super::{SqlRow, enum_col, time};

/// `$1` task, `$2` key, `$3` execution, `$4` tool, `$5` now: kept once.
pub(crate) const RECORD: &str = "INSERT INTO tool_checks \
     (task_id, call_key, execution_id, tool, created_at) VALUES ($1, $2, $3, $4, $5) \
     ON CONFLICT (task_id, call_key) DO NOTHING";

/// The most keys one `IN` list asks about.
pub(crate) const KEYS_PER_QUERY: usize = 400;

/// `$1` task, `$2…` the keys ([`super::marks`]).
pub(crate) fn checked(keys: usize) -> String {
    format!(
        "SELECT call_key FROM tool_checks WHERE task_id = $1 AND call_key IN ({})",
        super::marks(2, keys)
    )
}

pub(crate) const FLAG_COLUMNS: &str = "execution_id, task_id, tool, call_key, evidence, detail, \
    message_id, outbound_id, created_at";

/// The flag, once per execution (`$1`…`$9` the columns in order); answers
/// the execution id only when this statement wrote it.
pub(crate) fn insert_flag() -> String {
    format!(
        "INSERT INTO ungated_runs ({FLAG_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
         ON CONFLICT (execution_id) DO NOTHING RETURNING execution_id"
    )
}

/// The alert's notice on `/harness`: a CLOSED notify of the task, of the
/// flagged execution (`$1` id, `$2` task, `$3` execution, `$4` text, `$5` now).
pub(crate) const INSERT_NOTICE: &str = "INSERT INTO harness_messages \
     (id, task_id, execution_id, kind, state, content, created_at) \
     VALUES ($1, $2, $3, 'notify', 'CLOSED', $4, $5)";

pub(crate) fn flag_by_execution() -> String {
    format!("SELECT {FLAG_COLUMNS} FROM ungated_runs WHERE execution_id = $1")
}

pub(crate) fn flags_of_task() -> String {
    format!(
        "SELECT {FLAG_COLUMNS} FROM ungated_runs WHERE task_id = $1 \
         ORDER BY created_at, execution_id"
    )
}

/// `$1` node, `$2` ended after (ms), `$3` limit: this node's (or no
/// node's) executions, live or recently ended, not flagged yet.
pub(crate) const WATCHED: &str = "SELECT id, task_id, status, session_id, exit_code, created_at, \
     ended_at, node_id FROM executions e \
     WHERE (e.node_id = $1 OR e.node_id IS NULL) \
       AND (e.status IN ('RUNNING', 'PAUSED') OR e.ended_at >= $2) \
       AND NOT EXISTS (SELECT 1 FROM ungated_runs u WHERE u.execution_id = e.id) \
     ORDER BY e.created_at, e.id LIMIT +$3";

pub(crate) fn flag<R: SqlRow>(row: &R) -> StoreResult<UngatedFlag> {
    Ok(UngatedFlag {
        execution_id: row.col("execution_id")?,
        task_id: row.col("task_id")?,
        tool: row.col("tool")?,
        call_key: row.col("call_key")?,
        evidence: enum_col(row, "evidence", UngatedEvidence::parse)?,
        detail: row.col("detail")?,
        message_id: row.col("message_id")?,
        outbound_id: row.col("outbound_id")?,
        created_at: time(row.col("created_at")?)?,
    })
}

/// `impl ToolCheckStore for $store`: reads on `self.$read`, one-statement
/// writes on `self.$write`, the flag in `self.write_tx()`.
macro_rules! tool_check_store {
    ($store:ty, $read:ident, $write:ident) => {
        const _: () = {
            use chrono::{DateTime, Utc};
            use harness_core::{
                model::Execution,
                store::{
                    NewToolCheck, NewUngatedFlag, StoreResult, ToolCheckStore, UngatedFlag,
                    UngatedFlagged, ungated_push_key,
                },
            };
            use sqlx::AssertSqlSafe;
            use $crate::{
                error::map,
                shared::{ms, outbox::outbound, rows, tool_checks as sql},
            };

            #[async_trait::async_trait]
            impl ToolCheckStore for $store {
                async fn record_tool_check(&self, c: NewToolCheck) -> StoreResult<()> {
                    sqlx::query(sql::RECORD)
                        .bind(&c.task_id)
                        .bind(&c.call_key)
                        .bind(&c.execution_id)
                        .bind(&c.tool)
                        .bind(ms(c.now))
                        .execute(&self.$write)
                        .await
                        .map_err(map)?;
                    Ok(())
                }

                async fn checked_calls(
                    &self,
                    task_id: &str,
                    keys: &[String],
                ) -> StoreResult<Vec<String>> {
                    let mut out = Vec::new();
                    for chunk in keys.chunks(sql::KEYS_PER_QUERY) {
                        let text = sql::checked(chunk.len());
                        let mut q =
                            sqlx::query_scalar::<_, String>(AssertSqlSafe(text)).bind(task_id);
                        for k in chunk {
                            q = q.bind(k);
                        }
                        out.extend(q.fetch_all(&self.$read).await.map_err(map)?);
                    }
                    Ok(out)
                }

                async fn flag_ungated(&self, f: NewUngatedFlag) -> StoreResult<UngatedFlagged> {
                    let mut tx = self.write_tx().await?;
                    let now = ms(f.now);
                    let inserted: Option<String> =
                        sqlx::query_scalar(AssertSqlSafe(sql::insert_flag()))
                            .bind(&f.execution_id)
                            .bind(&f.task_id)
                            .bind(&f.tool)
                            .bind(&f.call_key)
                            .bind(f.evidence.as_str())
                            .bind(&f.detail)
                            .bind(&f.message_id)
                            .bind(f.push.as_ref().map(|p| p.id.clone()))
                            .bind(now)
                            .fetch_optional(&mut *tx)
                            .await
                            .map_err(map)?;
                    let mut push = None;
                    if inserted.is_some() {
                        sqlx::query(sql::INSERT_NOTICE)
                            .bind(&f.message_id)
                            .bind(&f.task_id)
                            .bind(&f.execution_id)
                            .bind(&f.message)
                            .bind(now)
                            .execute(&mut *tx)
                            .await
                            .map_err(map)?;
                        if let Some(o) = &f.push {
                            let row = $crate::shared::reminders::insert_outbound(
                                o,
                                ungated_push_key(&f.execution_id),
                                &f.message_id,
                            )
                            .fetch_one(&mut *tx)
                            .await
                            .map_err(map)?;
                            push = Some(outbound(&row)?);
                        }
                    }
                    let row = sqlx::query(AssertSqlSafe(sql::flag_by_execution()))
                        .bind(&f.execution_id)
                        .fetch_one(&mut *tx)
                        .await
                        .map_err(map)?;
                    let flag = sql::flag(&row)?;
                    tx.commit().await.map_err(map)?;
                    Ok(UngatedFlagged {
                        flag,
                        created: inserted.is_some(),
                        push,
                    })
                }

                async fn ungated_flags(&self, task_id: &str) -> StoreResult<Vec<UngatedFlag>> {
                    sqlx::query(AssertSqlSafe(sql::flags_of_task()))
                        .bind(task_id)
                        .fetch_all(&self.$read)
                        .await
                        .map_err(map)?
                        .iter()
                        .map(sql::flag)
                        .collect()
                }

                async fn watched_executions(
                    &self,
                    node_id: &str,
                    ended_after: DateTime<Utc>,
                    limit: u32,
                ) -> StoreResult<Vec<Execution>> {
                    sqlx::query(sql::WATCHED)
                        .bind(node_id)
                        .bind(ms(ended_after))
                        .bind(i64::from(limit))
                        .fetch_all(&self.$read)
                        .await
                        .map_err(map)?
                        .iter()
                        .map(rows::execution)
                        .collect()
                }
            }
        };
    };
}
pub(crate) use tool_check_store;
