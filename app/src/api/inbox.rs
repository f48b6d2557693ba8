//! The parent's inbox as the task page shows it: events from
//! derived children (pending / claimed / delivered / consumed) and the
//! batches they were typed in, and "derive a sub-task".

use harness_types::{BatchState, EventKind, EventState, Priority, TaskStatus};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

#[cfg(feature = "ssr")]
use super::ssr;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InboxEventRow {
    pub id: String,
    pub source_task_id: String,
    pub source_title: String,
    pub kind: EventKind,
    pub priority: Priority,
    pub state: EventState,
    pub batch_id: Option<String>,
    /// The child's reply, question or failure (first 300 characters).
    pub detail: String,
    pub error: Option<String>,
    pub created_ms: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InboxBatchRow {
    pub id: String,
    pub state: BatchState,
    pub events: usize,
    pub error: Option<String>,
    pub created_ms: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InboxData {
    pub events: Vec<InboxEventRow>,
    pub batches: Vec<InboxBatchRow>,
}

#[server(prefix = "/sfn", endpoint = "task_inbox")]
pub async fn task_inbox(task_id: String) -> Result<InboxData, ServerFnError> {
    let h = ssr::harness()?;
    let inbox = h.deliveries().inbox(&task_id).await.map_err(ssr::to_sfn)?;
    let text =
        |v: &serde_json::Value, k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
    let events = inbox
        .events
        .into_iter()
        .map(|e| {
            let detail = text(&e.payload, "question")
                .or_else(|| text(&e.payload, "childReply"))
                .or_else(|| e.payload.get("exitCode").map(|c| format!("exit code {c}")))
                .unwrap_or_default();
            InboxEventRow {
                source_title: text(&e.payload, "childTitle")
                    .unwrap_or_else(|| e.source_task_id.clone()),
                id: e.id,
                source_task_id: e.source_task_id,
                kind: e.kind,
                priority: e.priority,
                state: e.state,
                batch_id: e.batch_id,
                detail: detail.chars().take(300).collect(),
                error: e.last_error,
                created_ms: e.created_at.timestamp_millis(),
            }
        })
        .collect();
    let batches = inbox
        .batches
        .into_iter()
        .map(|b| InboxBatchRow {
            events: b.event_ids.len(),
            id: b.id,
            state: b.state,
            error: b.last_error,
            created_ms: b.created_at.timestamp_millis(),
        })
        .collect();
    Ok(InboxData { events, batches })
}

/// A project's resident Workbench task, as the project list shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkbenchInfo {
    pub task_id: String,
    pub title: String,
    pub status: TaskStatus,
}

#[server(prefix = "/sfn", endpoint = "project_workbench")]
pub async fn project_workbench(project_id: String) -> Result<Option<WorkbenchInfo>, ServerFnError> {
    let h = ssr::harness()?;
    Ok(h.tasks()
        .project_workbench(&project_id)
        .await
        .map_err(ssr::to_sfn)?
        .map(|v| WorkbenchInfo {
            task_id: v.task.id,
            title: v.task.title,
            status: v.task.status,
        }))
}

/// Create the project's Workbench on demand (the existing one if it has one).
#[server(prefix = "/sfn", endpoint = "ensure_workbench")]
pub async fn ensure_workbench(project_id: String) -> Result<WorkbenchInfo, ServerFnError> {
    let h = ssr::harness()?;
    let (v, _) = h
        .tasks()
        .ensure_workbench(&project_id, None)
        .await
        .map_err(ssr::to_sfn)?;
    Ok(WorkbenchInfo {
        task_id: v.task.id,
        title: v.task.title,
        status: v.task.status,
    })
}
