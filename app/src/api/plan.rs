//! Projects and their task lists (`harness-tasks.json`): the `/projects` and
//! `/projects/:id/plan` pages. The view is built once, by
//! `harness_plan::view::plan_view` (also behind `GET /api/projects/{id}/plan`);
//! these are the browser-side copies of its types.

use harness_types::{PlanState, PlanStatus, RunState};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

#[cfg(feature = "ssr")]
use super::ssr;

/// Progress-log lines the page shows.
pub const PLAN_LOG_LINES: usize = 50;

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ProjectRow {
    pub id: String,
    pub name: String,
    pub path: String,
    pub workspace: String,
}

/// One task of the list, in tree order (see `harness_plan::view::PlanTask`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanTaskRow {
    pub id: String,
    pub title: String,
    pub status: PlanStatus,
    pub priority: Option<String>,
    pub attempts: u32,
    pub max_attempts: u32,
    pub depends_on: Vec<String>,
    pub depth: u32,
    pub parent: Option<String>,
    pub blocked: bool,
    pub blocked_by: Vec<String>,
    pub waiting_on: Vec<String>,
    pub permanently_failed: bool,
    pub retryable: bool,
    pub needs_human: bool,
    pub error_category: Option<String>,
    pub error_message: Option<String>,
    pub errors: usize,
    pub claimed_by: Option<String>,
    pub lease_expires_at: Option<String>,
    pub checkpoints: usize,
    pub validation: Option<String>,
    /// The lease end as Unix milliseconds (shown local + relative).
    #[serde(default)]
    pub lease_expires_ms: Option<i64>,
    /// The Harness tasks `harness run` created for this plan task, newest first.
    #[serde(default)]
    pub runs: Vec<PlanRun>,
}

/// A supervised Harness task that ran a plan task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanRun {
    pub task_id: String,
    pub title: String,
    pub run_state: RunState,
    pub exit_code: Option<i64>,
    pub created_ms: i64,
}

/// A project's task list (see `harness_plan::view::PlanView`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanData {
    pub project: ProjectRow,
    pub state: PlanState,
    /// The `[CONFIG] …` text when `state` is `error`.
    pub error: Option<String>,
    pub active: bool,
    pub concurrent: bool,
    pub session_count: u64,
    pub last_session: Option<String>,
    pub counts: Vec<(PlanStatus, usize)>,
    pub total: usize,
    pub blocked: usize,
    pub next: Option<(String, String)>,
    pub tasks: Vec<PlanTaskRow>,
    pub log_tail: Vec<String>,
    /// `last_session` as Unix milliseconds.
    #[serde(default)]
    pub last_session_ms: Option<i64>,
}

/// An RFC 3339 time of the task-list file as Unix milliseconds.
#[cfg(feature = "ssr")]
fn rfc3339_ms(text: Option<&str>) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(text?)
        .ok()
        .map(|t| t.timestamp_millis())
}

#[cfg(feature = "ssr")]
fn project_row(p: harness_core::model::Project) -> ProjectRow {
    ProjectRow {
        id: p.id,
        name: p.name,
        path: p.path,
        workspace: p.workspace,
    }
}

#[cfg(feature = "ssr")]
fn plan_data(project: ProjectRow, v: harness_plan::view::PlanView) -> PlanData {
    PlanData {
        project,
        state: v.state,
        error: v.error,
        last_session_ms: rfc3339_ms(v.last_session.as_deref()),
        active: v.active,
        concurrent: v.concurrent,
        session_count: v.session_count,
        last_session: v.last_session,
        counts: v
            .counts
            .into_iter()
            .map(|(status, n)| (PlanStatus::from(status), n))
            .collect(),
        total: v.total,
        blocked: v.blocked,
        next: v.next,
        tasks: v
            .tasks
            .into_iter()
            .map(|t| PlanTaskRow {
                id: t.id,
                title: t.title,
                status: PlanStatus::from(t.status),
                priority: t.priority,
                attempts: t.attempts,
                max_attempts: t.max_attempts,
                depends_on: t.depends_on,
                depth: t.depth,
                parent: t.parent,
                blocked: t.blocked,
                blocked_by: t.blocked_by,
                waiting_on: t.waiting_on,
                permanently_failed: t.permanently_failed,
                retryable: t.retryable,
                needs_human: t.needs_human,
                error_category: t.last_error.as_ref().and_then(|e| e.category.clone()),
                error_message: t.last_error.map(|e| e.message),
                errors: t.errors,
                claimed_by: t.claimed_by,
                lease_expires_ms: rfc3339_ms(t.lease_expires_at.as_deref()),
                runs: Vec::new(),
                lease_expires_at: t.lease_expires_at,
                checkpoints: t.checkpoints,
                validation: t.validation,
            })
            .collect(),
        log_tail: v.log_tail,
    }
}

#[server(prefix = "/sfn", endpoint = "projects")]
pub async fn list_projects() -> Result<Vec<ProjectRow>, ServerFnError> {
    let h = ssr::harness()?;
    let projects = h.tasks().list_projects().await.map_err(ssr::to_sfn)?;
    Ok(projects.into_iter().map(project_row).collect())
}

/// The project's task list and progress-log tail, read (without locking)
/// from `<project path>/harness-tasks.json` and `harness-progress.txt`.
#[server(prefix = "/sfn", endpoint = "project_plan")]
pub async fn project_plan(id: String) -> Result<PlanData, ServerFnError> {
    // The id is validated by the core lookup (400 malformed, 404 missing).
    let h = ssr::harness()?;
    let project = h.tasks().project(&id).await.map_err(ssr::to_sfn)?;
    let dir = std::path::PathBuf::from(&project.path);
    let view =
        tokio::task::spawn_blocking(move || harness_plan::view::plan_view(&dir, PLAN_LOG_LINES))
            .await
            .map_err(|e| {
                tracing::error!(error = %e, "reading the task list failed");
                ServerFnError::new("internal error")
            })?;
    let runs = h
        .tasks()
        .plan_runs(&project.id)
        .await
        .map_err(ssr::to_sfn)?;
    let mut data = plan_data(project_row(project), view);
    for t in &mut data.tasks {
        t.runs = runs
            .get(&t.id)
            .map(|views| views.iter().cloned().map(plan_run).collect())
            .unwrap_or_default();
    }
    Ok(data)
}

#[cfg(feature = "ssr")]
fn plan_run(v: harness_core::model::TaskView) -> PlanRun {
    let run = harness_core::control::run_status(&v);
    PlanRun {
        task_id: v.task.id,
        title: v.task.title,
        run_state: run.state,
        exit_code: run.exit_code,
        created_ms: v.task.created_at.timestamp_millis(),
    }
}
