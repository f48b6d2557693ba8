//! Row → inbox domain conversions (`workbench_events`, `workbench_batches`,
//! `task_messages`) and their column lists. A value the domain cannot
//! represent is `StoreError::Corrupt`, never a panic.

use harness_core::{
    inbox::{
        BatchState, EventKind, EventState, MessageRole, Priority, TaskMessage, WorkbenchBatch,
        WorkbenchEvent,
    },
    store::StoreResult,
};

use super::{SqlRow, corrupt, opt_time, time};

pub(crate) const EVENT_COLUMNS: &str = "id, parent_task_id, source_task_id, execution_id, kind, priority, \
     dedup_key, execution_review_key, batch_id, payload, state, attempts, last_error, \
     created_at, updated_at, consumed_at, lease_owner";
pub(crate) const BATCH_COLUMNS: &str = "id, parent_task_id, execution_id, event_ids, prompt, state, \
     lease_token, lease_expires_at, dispatch_attempts, last_error, created_at, updated_at, \
     dispatched_at, acked_at, resolved_at";

pub(crate) fn batch_state_list(states: &[BatchState]) -> String {
    super::quoted_list(states.iter().map(|s| s.as_str()))
}

pub(crate) fn event<R: SqlRow>(row: &R) -> StoreResult<WorkbenchEvent> {
    let kind: String = row.col("kind")?;
    let priority: String = row.col("priority")?;
    let state: String = row.col("state")?;
    let payload: String = row.col("payload")?;
    let attempts: i64 = row.col("attempts")?;
    Ok(WorkbenchEvent {
        id: row.col("id")?,
        parent_task_id: row.col("parent_task_id")?,
        source_task_id: row.col("source_task_id")?,
        execution_id: row.col("execution_id")?,
        kind: EventKind::parse(&kind).ok_or_else(|| corrupt("workbench_events.kind", &kind))?,
        priority: Priority::parse(&priority)
            .ok_or_else(|| corrupt("workbench_events.priority", &priority))?,
        dedup_key: row.col("dedup_key")?,
        execution_review_key: row.col("execution_review_key")?,
        batch_id: row.col("batch_id")?,
        payload: serde_json::from_str(&payload).unwrap_or(serde_json::Value::Null),
        state: EventState::parse(&state)
            .ok_or_else(|| corrupt("workbench_events.state", &state))?,
        attempts: u32::try_from(attempts).unwrap_or(0),
        last_error: row.col("last_error")?,
        created_at: time(row.col("created_at")?)?,
        updated_at: time(row.col("updated_at")?)?,
        consumed_at: opt_time(row.col("consumed_at")?)?,
        lease_owner: row.col("lease_owner")?,
    })
}

pub(crate) fn batch<R: SqlRow>(row: &R) -> StoreResult<WorkbenchBatch> {
    let state: String = row.col("state")?;
    let ids: String = row.col("event_ids")?;
    let attempts: i64 = row.col("dispatch_attempts")?;
    Ok(WorkbenchBatch {
        id: row.col("id")?,
        parent_task_id: row.col("parent_task_id")?,
        execution_id: row.col("execution_id")?,
        event_ids: serde_json::from_str(&ids)
            .map_err(|_| corrupt("workbench_batches.event_ids", &ids))?,
        prompt: row.col("prompt")?,
        state: BatchState::parse(&state)
            .ok_or_else(|| corrupt("workbench_batches.state", &state))?,
        lease_token: row.col("lease_token")?,
        lease_expires_at: opt_time(row.col("lease_expires_at")?)?,
        dispatch_attempts: u32::try_from(attempts).unwrap_or(0),
        last_error: row.col("last_error")?,
        created_at: time(row.col("created_at")?)?,
        updated_at: time(row.col("updated_at")?)?,
        dispatched_at: opt_time(row.col("dispatched_at")?)?,
        acked_at: opt_time(row.col("acked_at")?)?,
        resolved_at: opt_time(row.col("resolved_at")?)?,
    })
}

pub(crate) fn task_message<R: SqlRow>(row: &R) -> StoreResult<TaskMessage> {
    let role: String = row.col("role")?;
    let metadata: Option<String> = row.col("metadata")?;
    Ok(TaskMessage {
        id: row.col("id")?,
        task_id: row.col("task_id")?,
        execution_id: row.col("execution_id")?,
        role: MessageRole::parse(&role).ok_or_else(|| corrupt("task_messages.role", &role))?,
        content: row.col("content")?,
        metadata: metadata.and_then(|m| serde_json::from_str(&m).ok()),
        created_at: time(row.col("created_at")?)?,
    })
}
