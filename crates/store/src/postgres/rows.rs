//! Row → domain conversions. A value the domain cannot represent is reported
//! as `StoreError::Corrupt`, never a panic.

use chrono::{DateTime, Utc};
use harness_core::{
    model::{
        AgentConfig, Execution, ExecutionStatus, Message, MessageKind, MessageRow, MessageState,
        Project, Task, TaskStatus, TaskView,
    },
    store::{StoreError, StoreResult},
};
use sqlx::{Row, postgres::PgRow};

use crate::error::map;

pub(crate) fn time(ms: i64) -> StoreResult<DateTime<Utc>> {
    DateTime::from_timestamp_millis(ms).ok_or(StoreError::Corrupt {
        column: "timestamp",
        value: ms.to_string(),
    })
}

pub(crate) fn ms(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

fn get<'r, T: sqlx::Decode<'r, sqlx::Postgres> + sqlx::Type<sqlx::Postgres>>(
    row: &'r PgRow,
    column: &str,
) -> StoreResult<T> {
    row.try_get(column).map_err(map)
}

fn enum_col<T>(row: &PgRow, column: &'static str, parse: fn(&str) -> Option<T>) -> StoreResult<T> {
    let text: String = get(row, column)?;
    parse(&text).ok_or(StoreError::Corrupt {
        column,
        value: text,
    })
}

pub(crate) const MESSAGE_COLUMNS: &str = "m.id, m.task_id, m.execution_id, m.kind, m.state, m.content, m.reply_text, m.replied_at, m.created_at";

pub(crate) fn message(row: &PgRow) -> StoreResult<Message> {
    Ok(Message {
        id: get(row, "id")?,
        task_id: get(row, "task_id")?,
        execution_id: get(row, "execution_id")?,
        kind: enum_col(row, "kind", MessageKind::parse)?,
        state: enum_col(row, "state", MessageState::parse)?,
        content: get(row, "content")?,
        reply_text: get(row, "reply_text")?,
        replied_at: get::<Option<i64>>(row, "replied_at")?
            .map(time)
            .transpose()?,
        created_at: time(get(row, "created_at")?)?,
    })
}

pub(crate) const MESSAGE_ROW_SELECT: &str = "SELECT m.id, m.task_id, m.execution_id, m.kind, m.state, m.content, m.reply_text, \
     m.replied_at, m.created_at, t.title AS task_title, t.project_id AS project_id, \
     p.name AS project_name, w.name AS workspace_name \
     FROM harness_messages m JOIN tasks t ON t.id = m.task_id \
     LEFT JOIN projects p ON p.id = t.project_id LEFT JOIN workspaces w ON w.id = p.workspace_id";

pub(crate) fn message_row(row: &PgRow) -> StoreResult<MessageRow> {
    Ok(MessageRow {
        message: message(row)?,
        task_title: get(row, "task_title")?,
        project_id: get(row, "project_id")?,
        project_name: get(row, "project_name")?,
        workspace_name: get(row, "workspace_name")?,
    })
}

pub(crate) const PROJECT_SELECT: &str = "SELECT p.id, p.name, p.path, p.workspace_id, w.name AS workspace, p.created_at \
     FROM projects p JOIN workspaces w ON w.id = p.workspace_id";

pub(crate) fn project(row: &PgRow) -> StoreResult<Project> {
    Ok(Project {
        id: get(row, "id")?,
        name: get(row, "name")?,
        path: get(row, "path")?,
        workspace: get(row, "workspace")?,
        workspace_id: get(row, "workspace_id")?,
        created_at: time(get(row, "created_at")?)?,
    })
}

/// Tasks with their latest execution and open-ask flag, in one query.
pub(crate) const TASK_VIEW_SELECT: &str = "SELECT t.id, t.title, t.description, t.project_id, t.parent_task_id, t.status, \
     t.unattended, t.agent_config, t.created_at, t.updated_at, \
     e.id AS e_id, e.status AS e_status, e.session_id AS e_session_id, e.exit_code AS e_exit_code, e.node_id AS e_node_id, \
     e.created_at AS e_created_at, e.ended_at AS e_ended_at, \
     EXISTS (SELECT 1 FROM harness_messages a WHERE a.task_id = t.id AND a.kind = 'ask' AND a.state = 'OPEN') AS open_ask \
     FROM tasks t LEFT JOIN executions e ON e.id = \
       (SELECT x.id FROM executions x WHERE x.task_id = t.id ORDER BY x.created_at DESC, x.id DESC LIMIT 1)";

pub(crate) fn task_view(row: &PgRow) -> StoreResult<TaskView> {
    let agent_json: String = get(row, "agent_config")?;
    let agent: AgentConfig =
        serde_json::from_str(&agent_json).map_err(|_| StoreError::Corrupt {
            column: "tasks.agent_config",
            value: agent_json.clone(),
        })?;
    let task = Task {
        id: get(row, "id")?,
        title: get(row, "title")?,
        description: get(row, "description")?,
        project_id: get(row, "project_id")?,
        parent_task_id: get(row, "parent_task_id")?,
        status: enum_col(row, "status", TaskStatus::parse)?,
        unattended: get::<i64>(row, "unattended")? != 0,
        agent,
        created_at: time(get(row, "created_at")?)?,
        updated_at: time(get(row, "updated_at")?)?,
    };
    let execution = match get::<Option<String>>(row, "e_id")? {
        Some(id) => Some(Execution {
            id,
            task_id: task.id.clone(),
            status: enum_col(row, "e_status", ExecutionStatus::parse)?,
            session_id: get(row, "e_session_id")?,
            exit_code: get(row, "e_exit_code")?,
            created_at: time(get(row, "e_created_at")?)?,
            ended_at: get::<Option<i64>>(row, "e_ended_at")?
                .map(time)
                .transpose()?,
            node_id: get(row, "e_node_id")?,
        }),
        None => None,
    };
    Ok(TaskView {
        task,
        execution,
        open_ask: get::<bool>(row, "open_ask")?,
    })
}

pub(crate) fn execution(row: &PgRow) -> StoreResult<Execution> {
    Ok(Execution {
        id: get(row, "id")?,
        task_id: get(row, "task_id")?,
        status: enum_col(row, "status", ExecutionStatus::parse)?,
        session_id: get(row, "session_id")?,
        exit_code: get(row, "exit_code")?,
        created_at: time(get(row, "created_at")?)?,
        ended_at: get::<Option<i64>>(row, "ended_at")?.map(time).transpose()?,
        node_id: get(row, "node_id")?,
    })
}
