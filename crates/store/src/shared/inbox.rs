//! [`InboxStore`](harness_core::store::InboxStore) once for both backends
//! (migration 0009): the parent's durable inbox of WorkbenchEvents, its
//! batches and their TaskMessages. The batch, its TaskMessage and its
//! delivery row are written in one write transaction with the check that
//! the claim is still held; the settling steps are one batch
//! (`run_batch`). The one dialect difference is the claim's row lock
//! (PostgreSQL's `FOR UPDATE SKIP LOCKED`, [`crate::shared::Dialect`]).

/// `impl InboxStore for $store`, reading from `self.$read`, writing on
/// `self.$write` (one-statement writes) or in `self.write_tx()`; `$dialect`
/// ([`crate::shared::Dialect`]) fills in what differs.
macro_rules! inbox_store {
    ($store:ty, $read:ident, $write:ident, $dialect:expr) => {
        const _: () = {
            use chrono::{DateTime, Utc};
            use harness_core::{
                deliveries::Delivery,
                inbox::{BatchState, NewEvent, TaskMessage, WorkbenchBatch, WorkbenchEvent},
                store::{InboxStore, NewBatch, StoreError, StoreResult},
            };
            use sqlx::{AssertSqlSafe, Row};
            use $crate::shared::inbox_rows::{ BATCH_COLUMNS, EVENT_COLUMNS, batch, batch_state_list, event, task_message, };
            use $crate::shared::rows::ms;
            use $crate::shared::inbox_sql::{
                CHILD_TASK_IDS, CLAIM_HELD, CLAIM_WORKBENCH_EVENTS, DELIVERY_BY_ID,
                EVENT_BY_KEY, EVENT_BY_REVIEW_KEY, GET_WORKBENCH_BATCH, INSERT_EVENT, INSERT_PROJECT_WORKBENCH,
                INSERT_WORKBENCH_TASK, IS_WORKBENCH, LINK_BATCH, PROJECT_WORKBENCH, RECORD_TURN_END,
                TAKE_WORKBENCH_START, ANY_CLAIMED_BATCH,
                TRANSITION_WORKBENCH_BATCH, UPSERT_BATCH, UPSERT_BATCH_DELIVERY, UPSERT_BATCH_MESSAGE,
                WORKBENCH_BATCH_IN_FLIGHT,
            };
            use $crate::shared::inbox_sql::{
                CHILD_EXECUTIONS_MISSING_EVENTS, LIST_TASK_MESSAGES, LIST_WORKBENCH_BATCHES,
                LIST_WORKBENCH_EVENTS, WORKBENCH_PARENTS_PENDING,
            };
            use $crate::{
                error::map,
                shared::{
                    Bind,corrupt, deliveries::delivery},
            };

            #[async_trait::async_trait]
            impl InboxStore for $store {
                async fn add_workbench_event(&self, ev: NewEvent) -> StoreResult<(WorkbenchEvent, bool)> {
                    let mut tx = self.write_tx().await?;
                    let by_key = EVENT_BY_KEY.to_string();
                    if let Some(row) = sqlx::query(AssertSqlSafe(by_key))
                        .bind(&ev.dedup_key)
                        .fetch_optional(&mut *tx)
                        .await
                        .map_err(map)?
                    {
                        let out = event(&row)?;
                        tx.commit().await.map_err(map)?;
                        return Ok((out, false));
                    }
                    let mut review_key = ev.execution_review_key.clone();
                    if let Some(key) = &review_key {
                        let sql = EVENT_BY_REVIEW_KEY.to_string();
                        if let Some(row) = sqlx::query(AssertSqlSafe(sql))
                            .bind(key)
                            .fetch_optional(&mut *tx)
                            .await
                            .map_err(map)?
                        {
                            let owner = event(&row)?;
                            let owner_is_fallback = owner.dedup_key.starts_with("child-exit:");
                            if ev.fallback || owner_is_fallback {
                                tx.commit().await.map_err(map)?;
                                return Ok((owner, false));
                            }
                            // A later, distinct stop turn of the same execution.
                            review_key = None;
                        }
                    }
                    let sql = INSERT_EVENT.to_string();
                    let row = sqlx::query(AssertSqlSafe(sql))
                        .bind(&ev.id)
                        .bind(&ev.parent_task_id)
                        .bind(&ev.source_task_id)
                        .bind(&ev.execution_id)
                        .bind(ev.kind.as_str())
                        .bind(ev.priority.as_str())
                        .bind(&ev.dedup_key)
                        .bind(review_key)
                        .bind(ev.payload.to_string())
                        .bind(ms(ev.now))
                        .fetch_one(&mut *tx)
                        .await
                        .map_err(map)?;
                    let out = event(&row)?;
                    tx.commit().await.map_err(map)?;
                    Ok((out, true))
                }

                async fn record_turn_end(
                    &self,
                    execution_id: &str,
                    summary: Option<&str>,
                    now: DateTime<Utc>,
                ) -> StoreResult<bool> {
                    let done = sqlx::query(RECORD_TURN_END)
                        .bind(ms(now))
                        .bind(summary)
                        .bind(execution_id)
                        .execute(&self.$write)
                        .await
                        .map_err(map)?;
                    Ok(done.rows_affected() > 0)
                }

                async fn claim_workbench_events(
                    &self,
                    parent_task_id: &str,
                    owner: &str,
                    claim_token: &str,
                    limit: u32,
                    now: DateTime<Utc>,
                    lease_until: DateTime<Utc>,
                ) -> StoreResult<Vec<WorkbenchEvent>> {
                    use $crate::shared::work::{ClaimParams, claim};
                    // The engine's claim of the parent's due events.
                    let params = ClaimParams {
                        owner: "$2",
                        until: "$4",
                        now: "$3",
                        lease_now: "$3",
                        limit: "$6",
                        node: None,
                        within: " AND c.parent_task_id = $5",
                        set: "claim_token = $1, claimed_at = $3, ",
                    };
                    let sql = claim(&harness_core::store::INBOX, $dialect, params, "", "", EVENT_COLUMNS);
                    let clock = self.lease_clock(now, lease_until).await?;
                    let (now, lease_until) = (clock.now, clock.until);
                    let mut tx = self.write_tx().await?;
                    sqlx::query(CLAIM_WORKBENCH_EVENTS)
                        .bind(now)
                        .bind(parent_task_id)
                        .execute(&mut *tx)
                        .await
                        .map_err(map)?;
                    let rows = sqlx::query(AssertSqlSafe(sql))
                        .bind(claim_token)
                        .bind(owner)
                        .bind(now)
                        .bind(lease_until)
                        .bind(parent_task_id)
                        .bind(i64::from(limit))
                        .fetch_all(&mut *tx)
                        .await
                        .map_err(map)?;
                    tx.commit().await.map_err(map)?;
                    let mut out = rows.iter().map(event).collect::<StoreResult<Vec<_>>>()?;
                    harness_core::inbox::sort_events(&mut out);
                    Ok(out)
                }

                async fn store_workbench_batch(
                    &self,
                    b: NewBatch,
                ) -> StoreResult<Option<(WorkbenchBatch, Delivery)>> {
                    let clock = self.lease_clock(b.now, b.lease_until).await?;
                    let (now, lease_until) = (clock.now, clock.until);
                    let mut tx = self.write_tx().await?;
                    let held: i64 = sqlx::query_scalar(CLAIM_HELD)
                        .bind(&b.claim_token)
                        .fetch_one(&mut *tx)
                        .await
                        .map_err(map)?;
                    if usize::try_from(held).unwrap_or(0) != b.event_ids.len() {
                        tx.rollback().await.map_err(map)?;
                        return Ok(None);
                    }
                    let ids = serde_json::to_string(&b.event_ids).unwrap_or_else(|_| "[]".into());
                    let sql = UPSERT_BATCH.to_string();
                    let brow = sqlx::query(AssertSqlSafe(sql))
                        .bind(&b.id)
                        .bind(&b.parent_task_id)
                        .bind(&b.execution_id)
                        .bind(&ids)
                        .bind(&b.prompt)
                        .bind(&b.lease_token)
                        .bind(lease_until)
                        .bind(now)
                        .fetch_one(&mut *tx)
                        .await
                        .map_err(map)?;
                    sqlx::query(LINK_BATCH)
                        .bind(&b.id)
                        .bind(now)
                        .bind(&b.claim_token)
                        .execute(&mut *tx)
                        .await
                        .map_err(map)?;
                    sqlx::query(UPSERT_BATCH_MESSAGE)
                        .bind(&b.id)
                        .bind(&b.parent_task_id)
                        .bind(&b.execution_id)
                        .bind(&b.prompt)
                        .bind(&b.metadata)
                        .bind(now)
                        .execute(&mut *tx)
                        .await
                        .map_err(map)?;
                    // The delivery: its id is the batch id; a FAILED earlier attempt of
                    // the same batch is queued again (nothing of it was written).
                    let sql = UPSERT_BATCH_DELIVERY.to_string();
                    let drow = sqlx::query(AssertSqlSafe(sql))
                        .bind(&b.id)
                        .bind(&b.parent_task_id)
                        .bind(&b.node_id)
                        .bind(&b.prompt)
                        .bind(format!("workbench-batch:{}", b.id))
                        .bind(now)
                        .fetch_optional(&mut *tx)
                        .await
                        .map_err(map)?;
                    let d = match drow {
                        Some(row) => delivery(&row)?,
                        None => {
                            let sql = DELIVERY_BY_ID.to_string();
                            let row = sqlx::query(AssertSqlSafe(sql))
                                .bind(&b.id)
                                .fetch_one(&mut *tx)
                                .await
                                .map_err(map)?;
                            delivery(&row)?
                        }
                    };
                    let out = batch(&brow)?;
                    tx.commit().await.map_err(map)?;
                    Ok(Some((out, d)))
                }

                async fn release_workbench_claim(
                    &self,
                    owner: &str,
                    claim_token: &str,
                    error: &str,
                    now: DateTime<Utc>,
                ) -> StoreResult<u64> {
                    use $crate::shared::work::{Whose, release_with};
                    // The engine's release of the owner's unstarted rows.
                    let Some(sql) = release_with(
                        &harness_core::store::INBOX,
                        Whose::Owner("$2"),
                        None,
                        "$1",
                        " AND claim_token = $3",
                        "last_error = $4, ",
                        "id",
                    ) else {
                        return Ok(0);
                    };
                    let done = sqlx::query(AssertSqlSafe(sql))
                        .bind(ms(now))
                        .bind(owner)
                        .bind(claim_token)
                        .bind(error.chars().take(2000).collect::<String>())
                        .execute(&self.$write)
                        .await
                        .map_err(map)?;
                    Ok(done.rows_affected())
                }

                async fn take_workbench_start(
                    &self,
                    task_id: &str,
                    owner: &str,
                    now: DateTime<Utc>,
                    until: DateTime<Utc>,
                ) -> StoreResult<bool> {
                    let clock = self.lease_clock(now, until).await?;
                    let taken = sqlx::query(TAKE_WORKBENCH_START)
                        .bind(task_id)
                        .bind(owner)
                        .bind(clock.lease_now)
                        .bind(clock.until)
                        .execute(&self.$write)
                        .await
                        .map_err(map)?;
                    Ok(taken.rows_affected() > 0)
                }

                async fn settle_workbench_batches(
                    &self,
                    now: DateTime<Utc>,
                ) -> StoreResult<Vec<WorkbenchBatch>> {
                    let any: bool = sqlx::query_scalar(ANY_CLAIMED_BATCH)
                        .fetch_one(&self.$read)
                        .await
                        .map_err(map)?;
                    if !any {
                        return Ok(Vec::new());
                    }
                    let ack = chrono::Duration::from_std(harness_core::inbox::ACK_LEASE)
                        .unwrap_or_else(|_| chrono::Duration::seconds(60));
                    let clock = self.lease_clock(now, now + ack).await?;
                    let (now, ack_until) = (clock.lease_now, clock.until);
                    let sql = format!(
                        "\
                         UPDATE workbench_events SET state = 'DELIVERED', lease_expires_at = NULL, updated_at = $1 \
                         WHERE state = 'PROCESSING' AND batch_id IN (SELECT b.id FROM workbench_batches b \
                           JOIN deliveries d ON d.id = b.id WHERE b.state = 'CLAIMED' AND d.state = 'DELIVERED'); \
                         UPDATE workbench_batches SET state = 'DISPATCHED', dispatched_at = $1, \
                           dispatch_attempts = dispatch_attempts + 1, lease_expires_at = $2, updated_at = $1 \
                         WHERE state = 'CLAIMED' AND id IN (SELECT id FROM deliveries WHERE state = 'DELIVERED') \
                         RETURNING {BATCH_COLUMNS}; \
                         UPDATE deliveries SET next_attempt_at = NULL, updated_at = $1 \
                         WHERE state = 'FAILED' AND next_attempt_at IS NOT NULL \
                           AND (lease_expires_at IS NULL OR lease_expires_at < $1) \
                           AND id IN (SELECT id FROM workbench_batches WHERE state = 'CLAIMED'); \
                         UPDATE workbench_events SET state = 'PENDING', batch_id = NULL, claim_token = NULL, \
                           lease_owner = NULL, claimed_at = NULL, lease_expires_at = NULL, updated_at = $1, \
                           next_attempt_at = $1, \
                           last_error = (SELECT d.last_error FROM deliveries d WHERE d.id = workbench_events.batch_id) \
                         WHERE state = 'PROCESSING' AND batch_id IN (SELECT b.id FROM workbench_batches b \
                           JOIN deliveries d ON d.id = b.id WHERE b.state = 'CLAIMED' AND d.state = 'FAILED' \
                           AND d.next_attempt_at IS NULL); \
                         UPDATE workbench_batches SET state = 'FAILED', lease_expires_at = NULL, updated_at = $1, \
                           last_error = (SELECT d.last_error FROM deliveries d WHERE d.id = workbench_batches.id) \
                         WHERE state = 'CLAIMED' AND id IN (SELECT id FROM deliveries WHERE state = 'FAILED' \
                           AND next_attempt_at IS NULL) \
                         RETURNING {BATCH_COLUMNS}"
                    );
                    let rows = self
                        .run_batch(&sql, vec![Bind::Int(now), Bind::Int(ack_until)])
                        .await?;
                    rows.iter().map(batch).collect()
                }

                async fn workbench_parents_pending(&self, limit: u32) -> StoreResult<Vec<String>> {
                    sqlx::query_scalar(WORKBENCH_PARENTS_PENDING)
                        .bind(i64::from(limit))
                        .fetch_all(&self.$read)
                        .await
                        .map_err(map)
                }

                async fn workbench_batch_in_flight(&self, parent_task_id: &str) -> StoreResult<bool> {
                    let n: i64 = sqlx::query_scalar(WORKBENCH_BATCH_IN_FLIGHT)
                        .bind(parent_task_id)
                        .fetch_one(&self.$read)
                        .await
                        .map_err(map)?;
                    Ok(n > 0)
                }

                async fn transition_workbench_batch(
                    &self,
                    batch_id: &str,
                    from: &[BatchState],
                    to: BatchState,
                    lease_token: &str,
                    lease_until: Option<DateTime<Utc>>,
                    now: DateTime<Utc>,
                ) -> StoreResult<Option<WorkbenchBatch>> {
                    let stamp = match to {
                        BatchState::Acked => ", acked_at = COALESCE(acked_at, $1)",
                        BatchState::Resolved => ", resolved_at = $1",
                        _ => "",
                    };
                    let sql = format!(
                        "UPDATE workbench_batches SET state = $2, lease_expires_at = $3, updated_at = $1{stamp} \
                         WHERE id = $4 AND lease_token = $5 AND state IN {} AND lease_expires_at > $1 \
                         RETURNING {BATCH_COLUMNS}",
                        batch_state_list(from)
                    );
                    let clock = self.lease_clock(now, lease_until.unwrap_or(now)).await?;
                    let (db_now, lease_until) = (clock.lease_now, lease_until.map(|_| clock.until));
                    let mut tx = self.write_tx().await?;
                    let row = sqlx::query(AssertSqlSafe(sql))
                        .bind(db_now)
                        .bind(to.as_str())
                        .bind(lease_until)
                        .bind(batch_id)
                        .bind(lease_token)
                        .fetch_optional(&mut *tx)
                        .await
                        .map_err(map)?;
                    let out = row.as_ref().map(batch).transpose()?;
                    if out.is_some() && to == BatchState::Resolved {
                        sqlx::query(TRANSITION_WORKBENCH_BATCH)
                            .bind(db_now)
                            .bind(batch_id)
                            .execute(&mut *tx)
                            .await
                            .map_err(map)?;
                    }
                    tx.commit().await.map_err(map)?;
                    Ok(out)
                }

                async fn resolve_dispatched_batches(
                    &self,
                    parent_task_id: &str,
                    now: DateTime<Utc>,
                ) -> StoreResult<Vec<WorkbenchBatch>> {
                    let sql = format!(
                        "\
                         UPDATE workbench_events SET state = 'CONSUMED', consumed_at = $1, updated_at = $1 \
                         WHERE state IN ('PROCESSING', 'DELIVERED') AND batch_id IN (SELECT id FROM \
                           workbench_batches WHERE parent_task_id = $2 AND state IN ('DISPATCHED', 'ACKED')); \
                         UPDATE workbench_batches SET state = 'RESOLVED', resolved_at = $1, \
                           lease_expires_at = NULL, updated_at = $1 \
                         WHERE parent_task_id = $2 AND state IN ('DISPATCHED', 'ACKED') \
                         RETURNING {BATCH_COLUMNS}"
                    );
                    let (now, parent) = (ms(now), parent_task_id.to_owned());
                    let rows = self
                        .run_batch(&sql, vec![Bind::Int(now), Bind::Text(parent)])
                        .await?;
                    rows.iter().map(batch).collect()
                }

                async fn child_executions_missing_events(
                    &self,
                    since: DateTime<Utc>,
                    limit: u32,
                ) -> StoreResult<
                    Vec<(
                        String,
                        String,
                        harness_core::model::ExecutionStatus,
                        Option<i64>,
                    )>,
                > {
                    let rows = sqlx::query(CHILD_EXECUTIONS_MISSING_EVENTS)
                        .bind(ms(since))
                        .bind(i64::from(limit))
                        .fetch_all(&self.$read)
                        .await
                        .map_err(map)?;
                    rows.iter()
                        .map(|r| {
                            let status: String = r.try_get("status").map_err(map)?;
                            Ok((
                                r.try_get("task_id").map_err(map)?,
                                r.try_get("id").map_err(map)?,
                                harness_core::model::ExecutionStatus::parse(&status)
                                    .ok_or_else(|| corrupt("executions.status", &status))?,
                                r.try_get("exit_code").map_err(map)?,
                            ))
                        })
                        .collect()
                }

                async fn project_workbench(&self, project_id: &str) -> StoreResult<Option<String>> {
                    sqlx::query_scalar(PROJECT_WORKBENCH)
                        .bind(project_id)
                        .fetch_optional(&self.$read)
                        .await
                        .map_err(map)
                }

                async fn is_workbench(&self, task_id: &str) -> StoreResult<bool> {
                    let n: i64 = sqlx::query_scalar(IS_WORKBENCH)
                        .bind(task_id)
                        .fetch_one(&self.$read)
                        .await
                        .map_err(map)?;
                    Ok(n > 0)
                }

                async fn create_project_workbench(
                    &self,
                    t: harness_core::store::NewTask,
                ) -> StoreResult<(String, bool)> {
                    let project = t
                        .project_id
                        .clone()
                        .ok_or(StoreError::MissingReference("project"))?;
                    let agent =
                        serde_json::to_string(&t.agent).map_err(|e| StoreError::Backend(Box::new(e)))?;
                    let mut tx = self.write_tx().await?;
                    let existing: Option<String> = sqlx::query_scalar(PROJECT_WORKBENCH)
                        .bind(&project)
                        .fetch_optional(&mut *tx)
                        .await
                        .map_err(map)?;
                    if let Some(id) = existing {
                        tx.commit().await.map_err(map)?;
                        return Ok((id, false));
                    }
                    sqlx::query(INSERT_WORKBENCH_TASK)
                        .bind(&t.id)
                        .bind(&project)
                        .bind(&t.title)
                        .bind(&t.description)
                        .bind(&agent)
                        .bind(ms(t.now))
                        .execute(&mut *tx)
                        .await
                        .map_err(map)?;
                    sqlx::query(INSERT_PROJECT_WORKBENCH)
                        .bind(&project)
                        .bind(&t.id)
                        .bind(ms(t.now))
                        .execute(&mut *tx)
                        .await
                        .map_err(map)?;
                    tx.commit().await.map_err(map)?;
                    Ok((t.id, true))
                }

                async fn get_workbench_batch(&self, id: &str) -> StoreResult<Option<WorkbenchBatch>> {
                    let sql = GET_WORKBENCH_BATCH.to_string();
                    sqlx::query(AssertSqlSafe(sql))
                        .bind(id)
                        .fetch_optional(&self.$read)
                        .await
                        .map_err(map)?
                        .as_ref()
                        .map(batch)
                        .transpose()
                }

                async fn list_workbench_events(
                    &self,
                    parent_task_id: &str,
                    limit: u32,
                ) -> StoreResult<Vec<WorkbenchEvent>> {
                    let sql = LIST_WORKBENCH_EVENTS.to_string();
                    sqlx::query(AssertSqlSafe(sql))
                        .bind(parent_task_id)
                        .bind(i64::from(limit))
                        .fetch_all(&self.$read)
                        .await
                        .map_err(map)?
                        .iter()
                        .map(event)
                        .collect()
                }

                async fn list_workbench_batches(
                    &self,
                    parent_task_id: &str,
                    limit: u32,
                ) -> StoreResult<Vec<WorkbenchBatch>> {
                    let sql = LIST_WORKBENCH_BATCHES.to_string();
                    sqlx::query(AssertSqlSafe(sql))
                        .bind(parent_task_id)
                        .bind(i64::from(limit))
                        .fetch_all(&self.$read)
                        .await
                        .map_err(map)?
                        .iter()
                        .map(batch)
                        .collect()
                }

                async fn list_task_messages(&self, task_id: &str, limit: u32) -> StoreResult<Vec<TaskMessage>> {
                    sqlx::query(LIST_TASK_MESSAGES)
                        .bind(task_id)
                        .bind(i64::from(limit))
                        .fetch_all(&self.$read)
                        .await
                        .map_err(map)?
                        .iter()
                        .map(task_message)
                        .collect()
                }

                async fn child_task_ids(&self, parent_task_id: &str) -> StoreResult<Vec<String>> {
                    sqlx::query_scalar(CHILD_TASK_IDS)
                        .bind(parent_task_id)
                        .fetch_all(&self.$read)
                        .await
                        .map_err(map)
                }
            }
        };
    };
}
pub(crate) use inbox_store;
