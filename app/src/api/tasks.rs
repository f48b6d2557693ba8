//! Task server functions: list, detail (with children), create.

use harness_types::{Action, Blocked, ExecutionStatus, Provider, RunState, TaskStatus};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

use super::AgentStateRow;
#[cfg(feature = "ssr")]
use super::ssr;

/// A task as the task pages show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskRow {
    pub id: String,
    pub title: String,
    pub description: Option<String>,
    pub status: TaskStatus,
    pub provider: Provider,
    pub parent_id: Option<String>,
    pub unattended: bool,
    pub open_ask: bool,
    /// Status of the latest execution, if any.
    pub execution: Option<ExecutionStatus>,
    /// Id of the latest execution, if any (a new one: a new terminal).
    #[serde(default)]
    pub execution_id: Option<String>,
    pub created_ms: i64,
    /// The displayed status (`harness_core::control::run_status`).
    pub run_state: RunState,
    /// Exit code of a failed run, when known.
    #[serde(default)]
    pub exit_code: Option<i64>,
    /// Every action, each with why it is not possible now (`None`:
    /// possible; `harness_core::control::check`).
    #[serde(default)]
    pub actions: Vec<(Action, Option<Blocked>)>,
    /// The command as written (the shell line of `sh -c`), if any.
    #[serde(default)]
    pub command: Option<String>,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub project_id: Option<String>,
    /// The node that runs (ran) the latest execution's agent, as shown: its
    /// name (`--node-name`; its id when it has none), and on the task page
    /// its URL.
    #[serde(default)]
    pub node: Option<String>,
    /// That node's id (the task page's tooltip on the name).
    #[serde(default)]
    pub node_id: Option<String>,
    /// What the task waits for is an approval (a held tool call),
    /// not an answer; set by `task_detail` only.
    #[serde(default)]
    pub waiting_approval: bool,
    /// The live agent runs in a holder this server cannot read: what that
    /// means and what to do (`harness_core::unreadable_holder`), said in
    /// the page's language.
    #[serde(default)]
    pub unreadable_holder: Option<String>,
    /// The latest execution's agent state as last recorded.
    #[serde(default)]
    pub agent_state: Option<AgentStateRow>,
    /// The task's agent needs a person
    /// (`harness_core::report::agents::needs_person`; also without a
    /// recorded state: a run that failed before one was recorded).
    #[serde(default)]
    pub needs_you: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskInfo {
    pub task: TaskRow,
    pub parent: Option<TaskRow>,
    pub children: Vec<TaskRow>,
    /// The name of the task's project, when it has one.
    #[serde(default)]
    pub project_name: Option<String>,
}

#[cfg(feature = "ssr")]
pub(crate) fn task_row(v: harness_core::model::TaskView) -> TaskRow {
    use harness_core::control::{check, command_line, run_status};
    let run = run_status(&v);
    let needs_you = harness_core::report::agents::needs_person(&v).is_some();
    let agent_state = super::agent_states::state_row(&v);
    let unreadable_holder = v
        .execution
        .as_ref()
        .and_then(|e| e.unreadable_holder.as_ref())
        .map(unreadable_holder_note);
    let actions = Action::ALL
        .into_iter()
        .map(|a| (a, check(&v, a).err()))
        .collect();
    TaskRow {
        run_state: run.state,
        exit_code: run.exit_code,
        actions,
        command: v.task.agent.command.as_deref().map(command_line),
        cwd: v.task.agent.cwd.clone(),
        project_id: v.task.project_id.clone(),
        id: v.task.id,
        title: v.task.title,
        description: v.task.description,
        status: v.task.status,
        provider: v.task.agent.provider,
        parent_id: v.task.parent_task_id,
        unattended: v.task.unattended,
        open_ask: v.open_ask,
        execution_id: v.execution.as_ref().map(|e| e.id.clone()),
        node: v
            .execution
            .as_ref()
            .and_then(|e| e.node_name.clone().or_else(|| e.node_id.clone())),
        node_id: v.execution.as_ref().and_then(|e| e.node_id.clone()),
        execution: v.execution.map(|e| e.status),
        created_ms: v.task.created_at.timestamp_millis(),
        waiting_approval: false,
        agent_state,
        needs_you,
        unreadable_holder,
    }
}

/// `harness_core::unreadable_holder`'s note in the page's language.
#[cfg(feature = "ssr")]
fn unreadable_holder_note(u: &harness_core::unreadable_holder::UnreadableHolder) -> String {
    let l = crate::i18n::Locale::detect();
    let timeout = u
        .orphan_timeout()
        .unwrap_or_else(|| l.t("tasks.unreadable_holder_timeout").to_string());
    l.t("tasks.unreadable_holder")
        .replace("{v}", &u.protocol.to_string())
        .replace("{reads}", &u.reads())
        .replace("{timeout}", &timeout)
}

#[server(prefix = "/sfn", endpoint = "tasks")]
pub async fn list_tasks() -> Result<Vec<TaskRow>, ServerFnError> {
    let h = ssr::harness()?;
    let tasks = h.tasks().list_tasks().await.map_err(ssr::to_sfn)?;
    Ok(tasks.into_iter().map(task_row).collect())
}

/// Whether a task with this id exists: `false` for a missing task and for an
/// id that cannot be one (the page is then a 404, said once), an error only
/// when the store cannot answer.
#[server(prefix = "/sfn", endpoint = "task_exists")]
pub async fn task_exists(id: String) -> Result<bool, ServerFnError> {
    use harness_core::CoreError;
    let h = ssr::harness()?;
    match h.tasks().get_task(&id).await {
        Ok(_) => Ok(true),
        Err(CoreError::NotFound(_) | CoreError::Invalid { .. }) => Ok(false),
        Err(e) => Err(ssr::to_sfn(e)),
    }
}

#[server(prefix = "/sfn", endpoint = "task")]
pub async fn task_detail(id: String) -> Result<TaskInfo, ServerFnError> {
    let h = ssr::harness()?;
    let mut task = task_row(h.tasks().get_task(&id).await.map_err(ssr::to_sfn)?);
    // Which node runs the agent, by its name, with the URL it registered
    // (a cluster).
    if let (Some(shown), Some(id)) = (task.node.take(), task.node_id.clone()) {
        let row = h.cluster().node(&id).await.ok().flatten();
        // Said in the text itself (no code in the page's bundle).
        let draining = row.as_ref().is_some_and(|n| n.draining);
        let node = row.as_ref().and_then(|n| n.name.clone()).unwrap_or(shown);
        let url = row.and_then(|n| n.url);
        let node = match url {
            Some(url) => format!("{node} ({url})"),
            None => node,
        };
        task.node = Some(if draining {
            format!(
                "{node} {}",
                crate::i18n::Locale::detect().t("tasks.node_draining")
            )
        } else {
            node
        });
    }
    if task.open_ask {
        // The open question is a held call's approval: the header says so.
        task.waiting_approval = h
            .approvals()
            .list_approvals(Some(&task.id), Some(50))
            .await
            .map_err(ssr::to_sfn)?
            .iter()
            .any(|a| a.state == harness_core::store::ApprovalState::Pending);
    }
    let parent = match &task.parent_id {
        Some(pid) => h.tasks().get_task(pid).await.ok().map(task_row),
        None => None,
    };
    // The core has no "children of" query yet: filter its task list.
    let children = h
        .tasks()
        .list_tasks()
        .await
        .map_err(ssr::to_sfn)?
        .into_iter()
        .filter(|t| t.task.parent_task_id.as_deref() == Some(task.id.as_str()))
        .map(task_row)
        .collect();
    let project_name = match &task.project_id {
        Some(pid) => h.tasks().project(pid).await.ok().map(|p| p.name),
        None => None,
    };
    Ok(TaskInfo {
        task,
        parent,
        children,
        project_name,
    })
}

/// What creating a task answers: the task, and why "start now" failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreatedTask {
    pub task: TaskRow,
    pub start_error: Option<String>,
}

/// Create a task. For provider `command`, `command` is one shell line run
/// with `sh -c`; for `claude`/`codex` it replaces the program (split on
/// whitespace). `start_now` ("on" from the checkbox) starts the agent with
/// `prompt` as its first prompt.
#[server(prefix = "/sfn", endpoint = "create_task")]
pub async fn create_task(
    title: String,
    description: Option<String>,
    provider: Option<String>,
    command: Option<String>,
    parent_task_id: Option<String>,
    #[server(default)] cwd: Option<String>,
    #[server(default)] project_id: Option<String>,
    #[server(default)] prompt: Option<String>,
    #[server(default)] start_now: Option<String>,
) -> Result<CreatedTask, ServerFnError> {
    use harness_core::{
        control::{Action, shell_argv},
        tasks::{AgentInput, CreateTask},
    };
    let h = ssr::harness()?;
    let line = command.as_deref().unwrap_or_default();
    // The form's provider is validated by the core (`AgentInput`); only a
    // `command` agent's line is split as a shell line.
    let command_agent =
        provider.as_deref().map(str::trim).and_then(Provider::parse) == Some(Provider::Command);
    let argv = if command_agent {
        shell_argv(line)
    } else {
        let words: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        (!words.is_empty()).then_some(words)
    };
    let blank = |v: Option<String>| v.filter(|s| !s.trim().is_empty());
    let view = h
        .tasks()
        .create_task(CreateTask {
            title: Some(title),
            description: blank(description),
            project_id: blank(project_id),
            parent_task_id: blank(parent_task_id),
            agent: Some(AgentInput {
                provider,
                command: argv,
                cwd: blank(cwd).map(|c| c.trim().to_string()),
                ..Default::default()
            }),
            gateway_inbound_id: None,
        })
        .await
        .map_err(ssr::to_sfn)?;
    let mut start_error = None;
    let mut view = view;
    if start_now.is_some_and(|v| !v.is_empty() && v != "false") {
        let control = super::control::ssr_control()?;
        match h
            .tasks()
            .control_task(
                control.as_ref(),
                &view.task.id,
                Action::Start,
                blank(prompt).as_deref(),
            )
            .await
        {
            Ok(v) => view = v,
            Err(e) => start_error = Some(e.client_message()),
        }
    }
    Ok(CreatedTask {
        task: task_row(view),
        start_error,
    })
}
