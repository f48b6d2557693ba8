//! Domain types. Serialized with the reference's camelCase names where they
//! cross the wire.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

// The states and kinds are the shared vocabulary's (`harness-types`, also
// in the browser), with the same JSON.
pub use harness_types::{
    ExecutionStatus, MessageKind, MessageState, MessageView, Provider, TaskStatus,
};

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Workspace {
    pub id: String,
    pub name: String,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Project {
    pub id: String,
    pub name: String,
    pub path: String,
    pub workspace: String,
    pub workspace_id: String,
    pub created_at: DateTime<Utc>,
}

/// How a task's agent is started.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentConfig {
    pub provider: Provider,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// A `command` agent interrupted by a reboot is started again (from the
    /// beginning: it has no session to resume) when its task is unattended
    /// (`crate::reboot`). Claude Code and Codex resume their session instead.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub restart_on_interrupt: bool,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Execution {
    pub id: String,
    pub task_id: String,
    pub status: ExecutionStatus,
    pub session_id: Option<String>,
    pub exit_code: Option<i64>,
    pub created_at: DateTime<Utc>,
    pub ended_at: Option<DateTime<Utc>>,
    /// The node whose process runs (ran) this execution's terminal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_id: Option<String>,
    /// That node's name (`--node-name`), when the registry has one; read
    /// with the task (`TaskView`), not stored with the execution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_name: Option<String>,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    pub id: String,
    pub title: String,
    pub description: Option<String>,
    pub project_id: Option<String>,
    pub parent_task_id: Option<String>,
    pub status: TaskStatus,
    pub unattended: bool,
    pub agent: AgentConfig,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A task as the API shows it: with its latest execution and open-ask flag.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskView {
    #[serde(flatten)]
    pub task: Task,
    pub execution: Option<Execution>,
    pub open_ask: bool,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    pub id: String,
    pub task_id: String,
    pub execution_id: Option<String>,
    pub kind: MessageKind,
    pub state: MessageState,
    pub content: String,
    pub reply_text: Option<String>,
    pub replied_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
}

/// A notification-center row: the message with the names it is shown with.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageRow {
    #[serde(flatten)]
    pub message: Message,
    pub task_title: String,
    pub project_id: Option<String>,
    pub project_name: Option<String>,
    pub workspace_name: Option<String>,
}

/// Keyset position: rows strictly older than (created_at, id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    pub created_at_ms: i64,
    pub id: String,
}

impl Cursor {
    pub fn encode(&self) -> String {
        format!("{}_{}", self.created_at_ms, self.id)
    }

    pub fn decode(text: &str) -> Option<Self> {
        let (ms, id) = text.split_once('_')?;
        let created_at_ms = ms.parse().ok()?;
        crate::ids::is_cuid(id).then(|| Self {
            created_at_ms,
            id: id.to_string(),
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MessageQuery {
    pub view: MessageView,
    pub search: Option<String>,
    pub task_id: Option<String>,
    pub cursor: Option<Cursor>,
    pub limit: u32,
    /// Only messages of derived children (tasks with a parent): `/harness`
    /// "from children".
    pub from_children: bool,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessagePage {
    pub rows: Vec<MessageRow>,
    pub next_cursor: Option<String>,
}
