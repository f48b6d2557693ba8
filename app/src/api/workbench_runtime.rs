//! The resident Workbench's runtime state on the project pages
//! (docs/tower-workbench.md §2.9): derived now by
//! `harness_core::Tasks::workbench_runtime` from the live terminal, the
//! latest execution and the inbox.

use harness_types::{BlockedReason, RuntimeState};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

#[cfg(feature = "ssr")]
use super::ssr;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuntimeInfo {
    pub task_id: String,
    /// The Workbench task's title.
    pub title: String,
    pub state: RuntimeState,
    pub blocked_reason: Option<BlockedReason>,
    pub pending_events: usize,
    pub oldest_pending_ms: Option<i64>,
    pub active_batch_id: Option<String>,
}

/// The project's Workbench runtime; `None` when it has no Workbench yet.
#[server(prefix = "/sfn", endpoint = "workbench_runtime")]
pub async fn workbench_runtime(project_id: String) -> Result<Option<RuntimeInfo>, ServerFnError> {
    let h = ssr::harness()?;
    let control = super::control::ssr_control()?;
    let Some(view) = h
        .tasks()
        .project_workbench(&project_id)
        .await
        .map_err(ssr::to_sfn)?
    else {
        return Ok(None);
    };
    let r = h
        .tasks()
        .workbench_runtime(control.as_ref(), &view.task.id)
        .await
        .map_err(ssr::to_sfn)?;
    Ok(Some(RuntimeInfo {
        task_id: r.task_id,
        title: view.task.title,
        state: r.state,
        blocked_reason: r.blocked_reason,
        pending_events: r.pending_events,
        oldest_pending_ms: r.oldest_pending_at.map(|t| t.timestamp_millis()),
        active_batch_id: r.active_batch_id,
    }))
}
