//! Row → inbox domain conversions (`workbench_events`, `workbench_batches`,
//! `task_messages`). A value the domain cannot represent is
//! `StoreError::Corrupt`, never a panic.

use chrono::{DateTime, Utc};
use harness_core::{
    inbox::{
        BatchState, EventKind, EventState, MessageRole, Priority, TaskMessage, WorkbenchBatch,
        WorkbenchEvent,
    },
    store::{StoreError, StoreResult},
};
use sqlx::{Row, postgres::PgRow};

use super::rows::time;
use crate::error::map;

fn opt_time(v: Option<i64>) -> StoreResult<Option<DateTime<Utc>>> {
    v.map(time).transpose()
}

pub(super) fn corrupt(column: &'static str, value: &str) -> StoreError {
    StoreError::Corrupt {
        column,
        value: value.to_string(),
    }
}

pub(super) fn event(row: &PgRow) -> StoreResult<WorkbenchEvent> {
    let kind: String = row.try_get("kind").map_err(map)?;
    let priority: String = row.try_get("priority").map_err(map)?;
    let state: String = row.try_get("state").map_err(map)?;
    let payload: String = row.try_get("payload").map_err(map)?;
    let attempts: i64 = row.try_get("attempts").map_err(map)?;
    Ok(WorkbenchEvent {
        id: row.try_get("id").map_err(map)?,
        parent_task_id: row.try_get("parent_task_id").map_err(map)?,
        source_task_id: row.try_get("source_task_id").map_err(map)?,
        execution_id: row.try_get("execution_id").map_err(map)?,
        kind: EventKind::parse(&kind).ok_or_else(|| corrupt("workbench_events.kind", &kind))?,
        priority: Priority::parse(&priority)
            .ok_or_else(|| corrupt("workbench_events.priority", &priority))?,
        dedup_key: row.try_get("dedup_key").map_err(map)?,
        execution_review_key: row.try_get("execution_review_key").map_err(map)?,
        batch_id: row.try_get("batch_id").map_err(map)?,
        payload: serde_json::from_str(&payload).unwrap_or(serde_json::Value::Null),
        state: EventState::parse(&state)
            .ok_or_else(|| corrupt("workbench_events.state", &state))?,
        attempts: u32::try_from(attempts).unwrap_or(0),
        last_error: row.try_get("last_error").map_err(map)?,
        created_at: time(row.try_get("created_at").map_err(map)?)?,
        updated_at: time(row.try_get("updated_at").map_err(map)?)?,
        consumed_at: opt_time(row.try_get("consumed_at").map_err(map)?)?,
    })
}

pub(super) fn batch(row: &PgRow) -> StoreResult<WorkbenchBatch> {
    let state: String = row.try_get("state").map_err(map)?;
    let ids: String = row.try_get("event_ids").map_err(map)?;
    let attempts: i64 = row.try_get("dispatch_attempts").map_err(map)?;
    Ok(WorkbenchBatch {
        id: row.try_get("id").map_err(map)?,
        parent_task_id: row.try_get("parent_task_id").map_err(map)?,
        execution_id: row.try_get("execution_id").map_err(map)?,
        event_ids: serde_json::from_str(&ids)
            .map_err(|_| corrupt("workbench_batches.event_ids", &ids))?,
        prompt: row.try_get("prompt").map_err(map)?,
        state: BatchState::parse(&state)
            .ok_or_else(|| corrupt("workbench_batches.state", &state))?,
        lease_token: row.try_get("lease_token").map_err(map)?,
        lease_expires_at: opt_time(row.try_get("lease_expires_at").map_err(map)?)?,
        dispatch_attempts: u32::try_from(attempts).unwrap_or(0),
        last_error: row.try_get("last_error").map_err(map)?,
        created_at: time(row.try_get("created_at").map_err(map)?)?,
        updated_at: time(row.try_get("updated_at").map_err(map)?)?,
        dispatched_at: opt_time(row.try_get("dispatched_at").map_err(map)?)?,
        acked_at: opt_time(row.try_get("acked_at").map_err(map)?)?,
        resolved_at: opt_time(row.try_get("resolved_at").map_err(map)?)?,
    })
}

pub(super) fn task_message(row: &PgRow) -> StoreResult<TaskMessage> {
    let role: String = row.try_get("role").map_err(map)?;
    let metadata: Option<String> = row.try_get("metadata").map_err(map)?;
    Ok(TaskMessage {
        id: row.try_get("id").map_err(map)?,
        task_id: row.try_get("task_id").map_err(map)?,
        execution_id: row.try_get("execution_id").map_err(map)?,
        role: MessageRole::parse(&role).ok_or_else(|| corrupt("task_messages.role", &role))?,
        content: row.try_get("content").map_err(map)?,
        metadata: metadata.and_then(|m| serde_json::from_str(&m).ok()),
        created_at: time(row.try_get("created_at").map_err(map)?)?,
    })
}
