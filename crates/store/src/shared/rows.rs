//! Row → domain conversions for tasks, executions, projects and asks. A
//! value the domain cannot represent is reported as
//! `StoreError::Corrupt`, never a panic.

use harness_core::{
    model::{
        AgentConfig, Execution, ExecutionStatus, Message, MessageKind, MessageRow, MessageState,
        Project, Task, TaskStatus, TaskView,
    },
    store::{StoreError, StoreResult},
};

use super::{SqlRow, enum_col};
pub(crate) use super::{ms, time};

pub(crate) const MESSAGE_COLUMNS: &str = "m.id, m.task_id, m.execution_id, m.kind, m.state, m.content, m.reply_text, m.replied_at, m.created_at";

pub(crate) fn message<R: SqlRow>(row: &R) -> StoreResult<Message> {
    Ok(Message {
        id: row.col("id")?,
        task_id: row.col("task_id")?,
        execution_id: row.col("execution_id")?,
        kind: enum_col(row, "kind", MessageKind::parse)?,
        state: enum_col(row, "state", MessageState::parse)?,
        content: row.col("content")?,
        reply_text: row.col("reply_text")?,
        replied_at: row
            .col::<Option<i64>>("replied_at")?
            .map(time)
            .transpose()?,
        created_at: time(row.col("created_at")?)?,
    })
}

pub(crate) const MESSAGE_ROW_SELECT: &str = "SELECT m.id, m.task_id, m.execution_id, m.kind, m.state, m.content, m.reply_text, \
     m.replied_at, m.created_at, t.title AS task_title, t.project_id AS project_id, \
     p.name AS project_name, w.name AS workspace_name \
     FROM harness_messages m JOIN tasks t ON t.id = m.task_id \
     LEFT JOIN projects p ON p.id = t.project_id LEFT JOIN workspaces w ON w.id = p.workspace_id";

pub(crate) fn message_row<R: SqlRow>(row: &R) -> StoreResult<MessageRow> {
    Ok(MessageRow {
        message: message(row)?,
        task_title: row.col("task_title")?,
        project_id: row.col("project_id")?,
        project_name: row.col("project_name")?,
        workspace_name: row.col("workspace_name")?,
    })
}

pub(crate) const PROJECT_SELECT: &str = "SELECT p.id, p.name, p.path, p.workspace_id, w.name AS workspace, p.created_at \
     FROM projects p JOIN workspaces w ON w.id = p.workspace_id";

pub(crate) fn project<R: SqlRow>(row: &R) -> StoreResult<Project> {
    Ok(Project {
        id: row.col("id")?,
        name: row.col("name")?,
        path: row.col("path")?,
        workspace: row.col("workspace")?,
        workspace_id: row.col("workspace_id")?,
        created_at: time(row.col("created_at")?)?,
    })
}

/// Tasks with their latest execution and open-ask flag, in one query.
pub(crate) const TASK_VIEW_SELECT: &str = "SELECT t.id, t.title, t.description, t.project_id, t.parent_task_id, t.status, \
     t.unattended, t.agent_config, t.created_at, t.updated_at, \
     e.id AS e_id, e.status AS e_status, e.session_id AS e_session_id, e.exit_code AS e_exit_code, e.node_id AS e_node_id, \
     (SELECT n.name FROM harness_nodes n WHERE n.id = e.node_id) AS e_node_name, \
     e.created_at AS e_created_at, e.ended_at AS e_ended_at, \
     EXISTS (SELECT 1 FROM harness_messages a WHERE a.task_id = t.id AND a.kind = 'ask' AND a.state = 'OPEN') AS open_ask, \
     s.execution_id AS s_execution_id, s.state AS s_state, s.reason AS s_reason, s.lines AS s_lines, \
     s.since AS s_since, s.error_kind AS s_error_kind, s.attempt AS s_attempt, s.attempt_of AS s_attempt_of, \
     s.gave_up AS s_gave_up, s.reset_text AS s_reset_text, s.reset_at AS s_reset_at, s.exit_code AS s_exit_code, \
     s.signal AS s_signal, s.silent_secs AS s_silent_secs, s.dialog_title AS s_dialog_title, \
     s.dialog_options AS s_dialog_options, s.updated_at AS s_updated_at \
     FROM tasks t LEFT JOIN executions e ON e.id = \
       (SELECT x.id FROM executions x WHERE x.task_id = t.id ORDER BY x.created_at DESC, x.id DESC LIMIT 1) \
     LEFT JOIN agent_states s ON s.execution_id = e.id";

pub(crate) fn task_view<R: SqlRow>(row: &R) -> StoreResult<TaskView> {
    let agent_json: String = row.col("agent_config")?;
    let agent: AgentConfig =
        serde_json::from_str(&agent_json).map_err(|_| StoreError::Corrupt {
            column: "tasks.agent_config",
            value: agent_json.clone(),
        })?;
    let task = Task {
        id: row.col("id")?,
        title: row.col("title")?,
        description: row.col("description")?,
        project_id: row.col("project_id")?,
        parent_task_id: row.col("parent_task_id")?,
        status: enum_col(row, "status", TaskStatus::parse)?,
        unattended: row.col::<i64>("unattended")? != 0,
        agent,
        created_at: time(row.col("created_at")?)?,
        updated_at: time(row.col("updated_at")?)?,
    };
    let execution = match row.col::<Option<String>>("e_id")? {
        Some(id) => Some(Execution {
            id,
            task_id: task.id.clone(),
            status: enum_col(row, "e_status", ExecutionStatus::parse)?,
            session_id: row.col("e_session_id")?,
            exit_code: row.col("e_exit_code")?,
            created_at: time(row.col("e_created_at")?)?,
            ended_at: row
                .col::<Option<i64>>("e_ended_at")?
                .map(time)
                .transpose()?,
            node_id: row.col("e_node_id")?,
            node_name: row.col("e_node_name")?,
            unreadable_holder: None,
        }),
        None => None,
    };
    // The latest execution's recorded state (the join's `s_` columns).
    let agent_state = match row.col::<Option<String>>("s_execution_id")? {
        Some(_) => Some(super::agent_states::record_with(
            row,
            "s_",
            Some(task.id.clone()),
        )?),
        None => None,
    };
    Ok(TaskView {
        task,
        execution,
        open_ask: row.col::<bool>("open_ask")?,
        agent_state,
    })
}

pub(crate) fn execution<R: SqlRow>(row: &R) -> StoreResult<Execution> {
    Ok(Execution {
        id: row.col("id")?,
        task_id: row.col("task_id")?,
        status: enum_col(row, "status", ExecutionStatus::parse)?,
        session_id: row.col("session_id")?,
        exit_code: row.col("exit_code")?,
        created_at: time(row.col("created_at")?)?,
        ended_at: row.col::<Option<i64>>("ended_at")?.map(time).transpose()?,
        node_id: row.col("node_id")?,
        // An execution alone: its node's name is read with a task view.
        node_name: None,
        unreadable_holder: None,
    })
}
