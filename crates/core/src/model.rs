//! Domain types. Serialized with the reference's camelCase names where they
//! cross the wire.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

// The states and kinds are the shared vocabulary's (`harness-types`, also
// in the browser), with the same JSON.
pub use harness_types::{
    AgentStateName, ExecutionStatus, MessageKind, MessageState, MessageView, Provider, TaskStatus,
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
    /// This task's own automatic recovery settings, over its project's and
    /// the global ones (`crate::agent_actions::policy`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<RecoveryOverride>,
}

/// Settings of the automatic recovery that override the ones below them
/// (global ← project ← task): each field set replaces that one value
/// (`crate::agent_actions::policy` has the meaning and the defaults).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct RecoveryOverride {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage_limit_resume: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage_limit_wait_secs: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage_limit_margin_secs: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub self_wait_check_secs: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_error_continue: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_error_max_per_hour: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub api_error_backoff_secs: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crash_restart: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crash_max_per_hour: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crash_restart_delay_secs: Option<u64>,
    /// Empty: no nudge.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stalled_nudge: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer_dialogs: Option<bool>,
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
    /// A live execution whose agent runs in a holder this server cannot
    /// read, and what that means (`crate::unreadable_holder`); read with
    /// the task from the runtime, not stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreadable_holder: Option<crate::unreadable_holder::UnreadableHolder>,
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
    /// The state of the latest execution's agent as last recorded
    /// (`crate::agent_state`); absent before the first one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_state: Option<AgentStateRecord>,
}

/// An execution's agent state as recorded (`crate::agent_state::record_of`):
/// its name, the reason in words, the screen lines that show it, since
/// when, and the state's details. Written only when the state changes.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentStateRecord {
    pub execution_id: String,
    pub task_id: String,
    /// The state's name (`working`, `waiting_for_person`, `idle`,
    /// `usage_limited`, `erroring`, `logged_out`, `stalled`, `exited`,
    /// `crashed`).
    pub state: AgentStateName,
    /// The state in words ("usage limit reached; resets 9:57am (UTC)").
    pub reason: String,
    /// The screen lines that show it (at most 8): the CLI's own status
    /// lines; for an exit or a stall, the last lines of the screen.
    #[serde(default)]
    pub lines: Vec<String>,
    /// When the agent entered this state.
    pub since: DateTime<Utc>,
    /// `erroring`: `overloaded`, `rate_limited`, `server_<status>`,
    /// `network` or `other: <the CLI's words>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt_of: Option<u32>,
    /// `erroring`: the CLI stopped retrying.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub gave_up: bool,
    /// `usage_limited`: the reset time as the CLI printed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_text: Option<String>,
    /// `usage_limited`: the instant that time names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_at: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// `crashed`: the signal's number (0: the process was lost without a
    /// status).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub silent_secs: Option<u64>,
    /// `waiting_for_person` on a dialog of the CLI: its title and options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialog_title: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dialog_options: Vec<String>,
    /// When this record was last written (a detail may change within a
    /// state: the attempt count).
    pub updated_at: DateTime<Utc>,
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
