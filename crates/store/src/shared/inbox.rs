//! [`InboxStore`](harness_core::store::InboxStore) once for both backends
//! (migration 0009): the parent's durable inbox of WorkbenchEvents, its
//! batches and their TaskMessages. One generic function per method over
//! [`Backend`], and [`inbox_store!`] that implements the port with them.
//! The batch, its TaskMessage and its delivery row are written in one
//! write transaction with the check that the claim is still held; the
//! settling steps are one batch (`run_batch`). The one dialect difference
//! is the claim's row lock (PostgreSQL's `FOR UPDATE SKIP LOCKED`,
//! [`crate::shared::Dialect`]).

use chrono::{DateTime, Utc};
use harness_core::{
    deliveries::Delivery,
    inbox::{BatchState, NewEvent, TaskMessage, WorkbenchBatch, WorkbenchEvent},
    model::ExecutionStatus,
    store::{INBOX, NewBatch, NewTask, StoreError, StoreResult},
};

use super::{
    Bind, SqlRow,
    backend::{Backend, execute, fetch, fetch_one, fetch_optional, only, read_optional},
    corrupt,
    deliveries::delivery,
    inbox_rows::{EVENT_COLUMNS, batch, batch_state_list, event, task_message},
    inbox_sql::{
        ANY_CLAIMED_BATCH, CHILD_EXECUTIONS_MISSING_EVENTS, CHILD_TASK_IDS, CLAIM_HELD,
        CLAIM_WORKBENCH_EVENTS, DELIVERY_BY_ID, EVENT_BY_KEY, EVENT_BY_REVIEW_KEY,
        GET_WORKBENCH_BATCH, INSERT_EVENT, INSERT_PROJECT_WORKBENCH, INSERT_WORKBENCH_TASK,
        IS_WORKBENCH, LINK_BATCH, LIST_TASK_MESSAGES, LIST_WORKBENCH_BATCHES,
        LIST_WORKBENCH_EVENTS, PROJECT_WORKBENCH, RECORD_TURN_END, RESOLVE_DISPATCHED_BATCHES,
        SETTLE_WORKBENCH_BATCHES, TAKE_WORKBENCH_START, TRANSITION_WORKBENCH_BATCH, UPSERT_BATCH,
        UPSERT_BATCH_DELIVERY, UPSERT_BATCH_MESSAGE, WORKBENCH_BATCH_IN_FLIGHT,
        WORKBENCH_PARENTS_PENDING,
    },
    ms,
    work::{ClaimParams, Whose, claim, release_with},
};

pub(crate) async fn add_workbench_event<S: Backend>(
    store: &S,
    ev: NewEvent,
) -> StoreResult<(WorkbenchEvent, bool)> {
    let mut tx = store.write_tx().await?;
    let binds = vec![Bind::Text(ev.dedup_key.clone())];
    if let Some(row) = fetch_optional::<S>(&mut tx, EVENT_BY_KEY.as_str(), binds).await? {
        let out = event(&row)?;
        S::commit(tx).await?;
        return Ok((out, false));
    }
    let mut review_key = ev.execution_review_key.clone();
    if let Some(key) = &review_key {
        let binds = vec![Bind::Text(key.clone())];
        if let Some(row) = fetch_optional::<S>(&mut tx, EVENT_BY_REVIEW_KEY.as_str(), binds).await?
        {
            let owner = event(&row)?;
            let owner_is_fallback = owner.dedup_key.starts_with("child-exit:");
            if ev.fallback || owner_is_fallback {
                S::commit(tx).await?;
                return Ok((owner, false));
            }
            // A later, distinct stop turn of the same execution.
            review_key = None;
        }
    }
    let binds = vec![
        Bind::Text(ev.id),
        Bind::Text(ev.parent_task_id),
        Bind::Text(ev.source_task_id),
        Bind::OptText(ev.execution_id),
        Bind::Text(ev.kind.as_str().to_owned()),
        Bind::Text(ev.priority.as_str().to_owned()),
        Bind::Text(ev.dedup_key),
        Bind::OptText(review_key),
        Bind::Text(ev.payload.to_string()),
        Bind::Int(ms(ev.now)),
    ];
    let row = fetch_one::<S>(&mut tx, INSERT_EVENT.as_str(), binds).await?;
    let out = event(&row)?;
    S::commit(tx).await?;
    Ok((out, true))
}

pub(crate) async fn record_turn_end<S: Backend>(
    store: &S,
    execution_id: &str,
    summary: Option<&str>,
    now: DateTime<Utc>,
) -> StoreResult<bool> {
    let binds = vec![
        Bind::Int(ms(now)),
        Bind::OptText(summary.map(str::to_owned)),
        Bind::Text(execution_id.to_owned()),
    ];
    Ok(store.write(RECORD_TURN_END, binds).await? > 0)
}

pub(crate) async fn claim_workbench_events<S: Backend>(
    store: &S,
    parent_task_id: &str,
    owner: &str,
    claim_token: &str,
    limit: u32,
    now: DateTime<Utc>,
    lease_until: DateTime<Utc>,
) -> StoreResult<Vec<WorkbenchEvent>> {
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
    let sql = claim(&INBOX, S::DIALECT, params, "", "", EVENT_COLUMNS);
    let clock = store.lease_clock(now, lease_until).await?;
    let (now, lease_until) = (clock.now, clock.until);
    let mut tx = store.write_tx().await?;
    let binds = vec![Bind::Int(now), Bind::Text(parent_task_id.to_owned())];
    execute::<S>(&mut tx, CLAIM_WORKBENCH_EVENTS, binds).await?;
    let binds = vec![
        Bind::Text(claim_token.to_owned()),
        Bind::Text(owner.to_owned()),
        Bind::Int(now),
        Bind::Int(lease_until),
        Bind::Text(parent_task_id.to_owned()),
        Bind::Int(i64::from(limit)),
    ];
    let rows = fetch::<S>(&mut tx, sql, binds).await?;
    S::commit(tx).await?;
    let mut out = rows.iter().map(event).collect::<StoreResult<Vec<_>>>()?;
    harness_core::inbox::sort_events(&mut out);
    Ok(out)
}

pub(crate) async fn store_workbench_batch<S: Backend>(
    store: &S,
    b: NewBatch,
) -> StoreResult<Option<(WorkbenchBatch, Delivery)>> {
    let clock = store.lease_clock(b.now, b.lease_until).await?;
    let (now, lease_until) = (clock.now, clock.until);
    let mut tx = store.write_tx().await?;
    let binds = vec![Bind::Text(b.claim_token.clone())];
    let held: i64 = fetch_one::<S>(&mut tx, CLAIM_HELD, binds).await?.at(0)?;
    if usize::try_from(held).unwrap_or(0) != b.event_ids.len() {
        S::rollback(tx).await?;
        return Ok(None);
    }
    let ids = serde_json::to_string(&b.event_ids).unwrap_or_else(|_| "[]".into());
    let binds = vec![
        Bind::Text(b.id.clone()),
        Bind::Text(b.parent_task_id.clone()),
        Bind::OptText(b.execution_id.clone()),
        Bind::Text(ids),
        Bind::Text(b.prompt.clone()),
        Bind::Text(b.lease_token.clone()),
        Bind::Int(lease_until),
        Bind::Int(now),
    ];
    let brow = fetch_one::<S>(&mut tx, UPSERT_BATCH.as_str(), binds).await?;
    let binds = vec![
        Bind::Text(b.id.clone()),
        Bind::Int(now),
        Bind::Text(b.claim_token.clone()),
    ];
    execute::<S>(&mut tx, LINK_BATCH, binds).await?;
    let binds = vec![
        Bind::Text(b.id.clone()),
        Bind::Text(b.parent_task_id.clone()),
        Bind::OptText(b.execution_id.clone()),
        Bind::Text(b.prompt.clone()),
        Bind::Text(b.metadata.clone()),
        Bind::Int(now),
    ];
    execute::<S>(&mut tx, UPSERT_BATCH_MESSAGE, binds).await?;
    // The delivery: its id is the batch id; a FAILED earlier attempt of
    // the same batch is queued again (nothing of it was written).
    let binds = vec![
        Bind::Text(b.id.clone()),
        Bind::Text(b.parent_task_id.clone()),
        Bind::OptText(b.node_id.clone()),
        Bind::Text(b.prompt.clone()),
        Bind::Text(format!("workbench-batch:{}", b.id)),
        Bind::Int(now),
    ];
    let drow = fetch_optional::<S>(&mut tx, UPSERT_BATCH_DELIVERY.as_str(), binds).await?;
    let d = match drow {
        Some(row) => delivery(&row)?,
        None => {
            let binds = vec![Bind::Text(b.id.clone())];
            delivery(&fetch_one::<S>(&mut tx, DELIVERY_BY_ID.as_str(), binds).await?)?
        }
    };
    let out = batch(&brow)?;
    S::commit(tx).await?;
    Ok(Some((out, d)))
}

pub(crate) async fn release_workbench_claim<S: Backend>(
    store: &S,
    owner: &str,
    claim_token: &str,
    error: &str,
    now: DateTime<Utc>,
) -> StoreResult<u64> {
    // The engine's release of the owner's unstarted rows.
    let Some(sql) = release_with(
        &INBOX,
        Whose::Owner("$2"),
        None,
        "$1",
        " AND claim_token = $3",
        "last_error = $4, ",
        "id",
    ) else {
        return Ok(0);
    };
    let binds = vec![
        Bind::Int(ms(now)),
        Bind::Text(owner.to_owned()),
        Bind::Text(claim_token.to_owned()),
        Bind::Text(error.chars().take(2000).collect()),
    ];
    store.write(&sql, binds).await
}

pub(crate) async fn take_workbench_start<S: Backend>(
    store: &S,
    task_id: &str,
    owner: &str,
    now: DateTime<Utc>,
    until: DateTime<Utc>,
) -> StoreResult<bool> {
    let clock = store.lease_clock(now, until).await?;
    let binds = vec![
        Bind::Text(task_id.to_owned()),
        Bind::Text(owner.to_owned()),
        Bind::Int(clock.lease_now),
        Bind::Int(clock.until),
    ];
    Ok(store.write(TAKE_WORKBENCH_START, binds).await? > 0)
}

pub(crate) async fn settle_workbench_batches<S: Backend>(
    store: &S,
    now: DateTime<Utc>,
) -> StoreResult<Vec<WorkbenchBatch>> {
    let any: bool = only(store.read(ANY_CLAIMED_BATCH, Vec::new()).await?, "EXISTS")?.at(0)?;
    if !any {
        return Ok(Vec::new());
    }
    let ack = chrono::Duration::from_std(harness_core::inbox::ACK_LEASE)
        .unwrap_or_else(|_| chrono::Duration::seconds(60));
    let clock = store.lease_clock(now, now + ack).await?;
    let binds = vec![Bind::Int(clock.lease_now), Bind::Int(clock.until)];
    let rows = store.run_batch(&SETTLE_WORKBENCH_BATCHES, binds).await?;
    rows.iter().map(batch).collect()
}

/// The first column of every row `sql` reads.
async fn column<S: Backend>(store: &S, sql: &str, binds: Vec<Bind>) -> StoreResult<Vec<String>> {
    store
        .read(sql, binds)
        .await?
        .iter()
        .map(|r| r.at(0))
        .collect()
}

/// The count `sql` reads is not zero.
async fn any<S: Backend>(store: &S, sql: &str, binds: Vec<Bind>) -> StoreResult<bool> {
    let n: i64 = only(store.read(sql, binds).await?, "COUNT")?.at(0)?;
    Ok(n > 0)
}

pub(crate) async fn workbench_parents_pending<S: Backend>(
    store: &S,
    limit: u32,
) -> StoreResult<Vec<String>> {
    let binds = vec![Bind::Int(i64::from(limit))];
    column(store, WORKBENCH_PARENTS_PENDING, binds).await
}

pub(crate) async fn workbench_batch_in_flight<S: Backend>(
    store: &S,
    parent_task_id: &str,
) -> StoreResult<bool> {
    let binds = vec![Bind::Text(parent_task_id.to_owned())];
    any(store, WORKBENCH_BATCH_IN_FLIGHT, binds).await
}

pub(crate) async fn transition_workbench_batch<S: Backend>(
    store: &S,
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
         RETURNING {}",
        batch_state_list(from),
        super::inbox_rows::BATCH_COLUMNS,
    );
    let clock = store.lease_clock(now, lease_until.unwrap_or(now)).await?;
    let (db_now, lease_until) = (clock.lease_now, lease_until.map(|_| clock.until));
    let mut tx = store.write_tx().await?;
    let binds = vec![
        Bind::Int(db_now),
        Bind::Text(to.as_str().to_owned()),
        Bind::OptInt(lease_until),
        Bind::Text(batch_id.to_owned()),
        Bind::Text(lease_token.to_owned()),
    ];
    let row = fetch_optional::<S>(&mut tx, sql, binds).await?;
    let out = row.as_ref().map(batch).transpose()?;
    if out.is_some() && to == BatchState::Resolved {
        let binds = vec![Bind::Int(db_now), Bind::Text(batch_id.to_owned())];
        execute::<S>(&mut tx, TRANSITION_WORKBENCH_BATCH, binds).await?;
    }
    S::commit(tx).await?;
    Ok(out)
}

pub(crate) async fn resolve_dispatched_batches<S: Backend>(
    store: &S,
    parent_task_id: &str,
    now: DateTime<Utc>,
) -> StoreResult<Vec<WorkbenchBatch>> {
    let binds = vec![Bind::Int(ms(now)), Bind::Text(parent_task_id.to_owned())];
    let rows = store.run_batch(&RESOLVE_DISPATCHED_BATCHES, binds).await?;
    rows.iter().map(batch).collect()
}

/// A child's execution that ended without its event: its task, its id,
/// how it ended and its exit code.
pub(crate) type MissingEvent = (String, String, ExecutionStatus, Option<i64>);

pub(crate) async fn child_executions_missing_events<S: Backend>(
    store: &S,
    since: DateTime<Utc>,
    limit: u32,
) -> StoreResult<Vec<MissingEvent>> {
    let binds = vec![Bind::Int(ms(since)), Bind::Int(i64::from(limit))];
    let rows = store.read(CHILD_EXECUTIONS_MISSING_EVENTS, binds).await?;
    rows.iter()
        .map(|r| {
            let status: String = r.col("status")?;
            Ok((
                r.col("task_id")?,
                r.col("id")?,
                ExecutionStatus::parse(&status)
                    .ok_or_else(|| corrupt("executions.status", &status))?,
                r.col("exit_code")?,
            ))
        })
        .collect()
}

pub(crate) async fn project_workbench<S: Backend>(
    store: &S,
    project_id: &str,
) -> StoreResult<Option<String>> {
    let binds = vec![Bind::Text(project_id.to_owned())];
    read_optional(store, PROJECT_WORKBENCH, binds)
        .await?
        .map(|r| r.at(0))
        .transpose()
}

pub(crate) async fn is_workbench<S: Backend>(store: &S, task_id: &str) -> StoreResult<bool> {
    any(store, IS_WORKBENCH, vec![Bind::Text(task_id.to_owned())]).await
}

pub(crate) async fn create_project_workbench<S: Backend>(
    store: &S,
    t: NewTask,
) -> StoreResult<(String, bool)> {
    let project = t
        .project_id
        .clone()
        .ok_or(StoreError::MissingReference("project"))?;
    let agent = serde_json::to_string(&t.agent).map_err(|e| StoreError::Backend(Box::new(e)))?;
    let mut tx = store.write_tx().await?;
    let binds = vec![Bind::Text(project.clone())];
    if let Some(row) = fetch_optional::<S>(&mut tx, PROJECT_WORKBENCH, binds).await? {
        let id: String = row.at(0)?;
        S::commit(tx).await?;
        return Ok((id, false));
    }
    let binds = vec![
        Bind::Text(t.id.clone()),
        Bind::Text(project.clone()),
        Bind::Text(t.title),
        Bind::OptText(t.description),
        Bind::Text(agent),
        Bind::Int(ms(t.now)),
    ];
    execute::<S>(&mut tx, INSERT_WORKBENCH_TASK, binds).await?;
    let binds = vec![
        Bind::Text(project),
        Bind::Text(t.id.clone()),
        Bind::Int(ms(t.now)),
    ];
    execute::<S>(&mut tx, INSERT_PROJECT_WORKBENCH, binds).await?;
    S::commit(tx).await?;
    Ok((t.id, true))
}

pub(crate) async fn get_workbench_batch<S: Backend>(
    store: &S,
    id: &str,
) -> StoreResult<Option<WorkbenchBatch>> {
    read_optional(store, &GET_WORKBENCH_BATCH, vec![Bind::Text(id.to_owned())])
        .await?
        .as_ref()
        .map(batch)
        .transpose()
}

pub(crate) async fn list_workbench_events<S: Backend>(
    store: &S,
    parent_task_id: &str,
    limit: u32,
) -> StoreResult<Vec<WorkbenchEvent>> {
    let binds = vec![
        Bind::Text(parent_task_id.to_owned()),
        Bind::Int(i64::from(limit)),
    ];
    let rows = store.read(&LIST_WORKBENCH_EVENTS, binds).await?;
    rows.iter().map(event).collect()
}

pub(crate) async fn list_workbench_batches<S: Backend>(
    store: &S,
    parent_task_id: &str,
    limit: u32,
) -> StoreResult<Vec<WorkbenchBatch>> {
    let binds = vec![
        Bind::Text(parent_task_id.to_owned()),
        Bind::Int(i64::from(limit)),
    ];
    let rows = store.read(&LIST_WORKBENCH_BATCHES, binds).await?;
    rows.iter().map(batch).collect()
}

pub(crate) async fn list_task_messages<S: Backend>(
    store: &S,
    task_id: &str,
    limit: u32,
) -> StoreResult<Vec<TaskMessage>> {
    let binds = vec![Bind::Text(task_id.to_owned()), Bind::Int(i64::from(limit))];
    let rows = store.read(LIST_TASK_MESSAGES, binds).await?;
    rows.iter().map(task_message).collect()
}

pub(crate) async fn child_task_ids<S: Backend>(
    store: &S,
    parent_task_id: &str,
) -> StoreResult<Vec<String>> {
    column(
        store,
        CHILD_TASK_IDS,
        vec![Bind::Text(parent_task_id.to_owned())],
    )
    .await
}

/// `impl InboxStore for $store` with the functions of this module, each
/// method in its own span.
macro_rules! inbox_store {
    ($store:ty) => {
        const _: () = {
            use chrono::{DateTime, Utc};
            use harness_core::{
                deliveries::Delivery,
                inbox::{BatchState, NewEvent, TaskMessage, WorkbenchBatch, WorkbenchEvent},
                store::{InboxStore, NewBatch, NewTask, StoreResult},
            };
            use $crate::shared::inbox::{self as i, MissingEvent};

            #[async_trait::async_trait]
            impl InboxStore for $store {
                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn add_workbench_event(
                    &self,
                    ev: NewEvent,
                ) -> StoreResult<(WorkbenchEvent, bool)> {
                    i::add_workbench_event(self, ev).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn record_turn_end(
                    &self,
                    execution_id: &str,
                    summary: Option<&str>,
                    now: DateTime<Utc>,
                ) -> StoreResult<bool> {
                    i::record_turn_end(self, execution_id, summary, now).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn claim_workbench_events(
                    &self,
                    parent_task_id: &str,
                    owner: &str,
                    claim_token: &str,
                    limit: u32,
                    now: DateTime<Utc>,
                    lease_until: DateTime<Utc>,
                ) -> StoreResult<Vec<WorkbenchEvent>> {
                    i::claim_workbench_events(
                        self,
                        parent_task_id,
                        owner,
                        claim_token,
                        limit,
                        now,
                        lease_until,
                    )
                    .await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn store_workbench_batch(
                    &self,
                    b: NewBatch,
                ) -> StoreResult<Option<(WorkbenchBatch, Delivery)>> {
                    i::store_workbench_batch(self, b).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn release_workbench_claim(
                    &self,
                    owner: &str,
                    claim_token: &str,
                    error: &str,
                    now: DateTime<Utc>,
                ) -> StoreResult<u64> {
                    i::release_workbench_claim(self, owner, claim_token, error, now).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn take_workbench_start(
                    &self,
                    task_id: &str,
                    owner: &str,
                    now: DateTime<Utc>,
                    until: DateTime<Utc>,
                ) -> StoreResult<bool> {
                    i::take_workbench_start(self, task_id, owner, now, until).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn settle_workbench_batches(
                    &self,
                    now: DateTime<Utc>,
                ) -> StoreResult<Vec<WorkbenchBatch>> {
                    i::settle_workbench_batches(self, now).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn workbench_parents_pending(&self, limit: u32) -> StoreResult<Vec<String>> {
                    i::workbench_parents_pending(self, limit).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn workbench_batch_in_flight(
                    &self,
                    parent_task_id: &str,
                ) -> StoreResult<bool> {
                    i::workbench_batch_in_flight(self, parent_task_id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn transition_workbench_batch(
                    &self,
                    batch_id: &str,
                    from: &[BatchState],
                    to: BatchState,
                    lease_token: &str,
                    lease_until: Option<DateTime<Utc>>,
                    now: DateTime<Utc>,
                ) -> StoreResult<Option<WorkbenchBatch>> {
                    i::transition_workbench_batch(
                        self,
                        batch_id,
                        from,
                        to,
                        lease_token,
                        lease_until,
                        now,
                    )
                    .await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn resolve_dispatched_batches(
                    &self,
                    parent_task_id: &str,
                    now: DateTime<Utc>,
                ) -> StoreResult<Vec<WorkbenchBatch>> {
                    i::resolve_dispatched_batches(self, parent_task_id, now).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn child_executions_missing_events(
                    &self,
                    since: DateTime<Utc>,
                    limit: u32,
                ) -> StoreResult<Vec<MissingEvent>> {
                    i::child_executions_missing_events(self, since, limit).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn project_workbench(&self, project_id: &str) -> StoreResult<Option<String>> {
                    i::project_workbench(self, project_id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn is_workbench(&self, task_id: &str) -> StoreResult<bool> {
                    i::is_workbench(self, task_id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn create_project_workbench(
                    &self,
                    t: NewTask,
                ) -> StoreResult<(String, bool)> {
                    i::create_project_workbench(self, t).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn get_workbench_batch(
                    &self,
                    id: &str,
                ) -> StoreResult<Option<WorkbenchBatch>> {
                    i::get_workbench_batch(self, id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn list_workbench_events(
                    &self,
                    parent_task_id: &str,
                    limit: u32,
                ) -> StoreResult<Vec<WorkbenchEvent>> {
                    i::list_workbench_events(self, parent_task_id, limit).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn list_workbench_batches(
                    &self,
                    parent_task_id: &str,
                    limit: u32,
                ) -> StoreResult<Vec<WorkbenchBatch>> {
                    i::list_workbench_batches(self, parent_task_id, limit).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn list_task_messages(
                    &self,
                    task_id: &str,
                    limit: u32,
                ) -> StoreResult<Vec<TaskMessage>> {
                    i::list_task_messages(self, task_id, limit).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn child_task_ids(&self, parent_task_id: &str) -> StoreResult<Vec<String>> {
                    i::child_task_ids(self, parent_task_id).await
                }
            }
        };
    };
}
pub(crate) use inbox_store;
