//! Task server functions: list, detail (with children), create.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

#[cfg(feature = "ssr")]
use super::ssr;

/// A task as the task pages show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskRow {
    pub id: String,
    pub title: String,
    pub description: Option<String>,
    /// `TODO`, `IN_PROGRESS`, `IN_REVIEW`, `DONE`, `CANCELLED`.
    pub status: String,
    pub provider: String,
    pub parent_id: Option<String>,
    pub unattended: bool,
    pub open_ask: bool,
    /// Status of the latest execution, if any.
    pub execution: Option<String>,
    pub created_ms: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskInfo {
    pub task: TaskRow,
    pub parent: Option<TaskRow>,
    pub children: Vec<TaskRow>,
}

#[cfg(feature = "ssr")]
fn task_row(v: harness_core::model::TaskView) -> TaskRow {
    TaskRow {
        id: v.task.id,
        title: v.task.title,
        description: v.task.description,
        status: v.task.status.as_str().to_string(),
        provider: v.task.agent.provider.as_str().to_string(),
        parent_id: v.task.parent_task_id,
        unattended: v.task.unattended,
        open_ask: v.open_ask,
        execution: v.execution.map(|e| e.status.as_str().to_string()),
        created_ms: v.task.created_at.timestamp_millis(),
    }
}

#[server(prefix = "/sfn", endpoint = "tasks")]
pub async fn list_tasks() -> Result<Vec<TaskRow>, ServerFnError> {
    let h = ssr::harness()?;
    let tasks = h.list_tasks().await.map_err(ssr::to_sfn)?;
    Ok(tasks.into_iter().map(task_row).collect())
}

#[server(prefix = "/sfn", endpoint = "task")]
pub async fn task_detail(id: String) -> Result<TaskInfo, ServerFnError> {
    let h = ssr::harness()?;
    let task = task_row(h.get_task(&id).await.map_err(ssr::to_sfn)?);
    let parent = match &task.parent_id {
        Some(pid) => h.get_task(pid).await.ok().map(task_row),
        None => None,
    };
    // The core has no "children of" query yet: filter its task list.
    let children = h
        .list_tasks()
        .await
        .map_err(ssr::to_sfn)?
        .into_iter()
        .filter(|t| t.task.parent_task_id.as_deref() == Some(task.id.as_str()))
        .map(task_row)
        .collect();
    Ok(TaskInfo {
        task,
        parent,
        children,
    })
}

/// Create a task; `command` is split on whitespace into argv.
#[server(prefix = "/sfn", endpoint = "create_task")]
pub async fn create_task(
    title: String,
    description: Option<String>,
    provider: Option<String>,
    command: Option<String>,
    parent_task_id: Option<String>,
) -> Result<TaskRow, ServerFnError> {
    use harness_core::tasks::{AgentInput, CreateTask};
    let h = ssr::harness()?;
    let argv: Vec<String> = command
        .as_deref()
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let view = h
        .create_task(CreateTask {
            title: Some(title),
            description,
            project_id: None,
            parent_task_id,
            agent: Some(AgentInput {
                provider,
                command: (!argv.is_empty()).then_some(argv),
                ..Default::default()
            }),
        })
        .await
        .map_err(ssr::to_sfn)?;
    Ok(task_row(view))
}
