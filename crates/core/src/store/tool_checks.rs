//! The ungated-run watch's aggregate (see [`crate::ungated`]): every
//! pre-tool check the server saw, keyed per task by the call it was for,
//! and at most one flag per execution whose CLI ran a tool without one —
//! written with its alert (a notice on `/harness` and, when a chat is
//! configured, its push) in one transaction.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{NewOutbound, Outbound, StoreResult};
use crate::model::Execution;

/// One pre-tool check as the server received it.
#[derive(Debug, Clone)]
pub struct NewToolCheck {
    pub task_id: String,
    pub execution_id: Option<String>,
    /// What identifies the call (`crate::ungated::call_key`).
    pub call_key: String,
    pub tool: String,
    pub now: DateTime<Utc>,
}

/// Where an unchecked call was seen.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UngatedEvidence {
    /// The CLI's own transcript or session file.
    Transcript,
    /// The CLI's PostToolUse hook reported a call the pre-tool hook never did.
    PostTool,
    /// Characters typed into a running session (Codex `write_stdin`, which
    /// no hook sees) that the policy would have held.
    Typed,
}

impl UngatedEvidence {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Transcript => "transcript",
            Self::PostTool => "post-tool",
            Self::Typed => "typed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "transcript" => Self::Transcript,
            "post-tool" => Self::PostTool,
            "typed" => Self::Typed,
            _ => return None,
        })
    }
}

/// An execution seen running a tool with no pre-tool check.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UngatedFlag {
    pub execution_id: String,
    pub task_id: String,
    /// The first unchecked call's tool, as its CLI named it.
    pub tool: String,
    pub call_key: String,
    pub evidence: UngatedEvidence,
    /// What was seen, in words (the call, how many unchecked calls).
    pub detail: String,
    /// The notice on `/harness` (a CLOSED notify of the task).
    pub message_id: Option<String>,
    /// The push to the person's chat, when a channel is configured.
    pub outbound_id: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// A flag to write, with its alert.
#[derive(Debug, Clone)]
pub struct NewUngatedFlag {
    pub execution_id: String,
    pub task_id: String,
    pub tool: String,
    pub call_key: String,
    pub evidence: UngatedEvidence,
    pub detail: String,
    /// The notice's id and text.
    pub message_id: String,
    pub message: String,
    /// The push (its dedup key is `ungated:<execution>`), if a chat is set.
    pub push: Option<NewOutbound>,
    pub now: DateTime<Utc>,
}

/// What [`ToolCheckStore::flag_ungated`] found or wrote.
#[derive(Debug, Clone)]
pub struct UngatedFlagged {
    pub flag: UngatedFlag,
    /// False: the execution was flagged before; nothing was written.
    pub created: bool,
    pub push: Option<Outbound>,
}

/// The dedup key of an execution's ungated alert push.
pub fn ungated_push_key(execution_id: &str) -> String {
    format!("ungated:{execution_id}")
}

#[async_trait]
pub trait ToolCheckStore: Send + Sync {
    /// Remember a check (a repeated key is kept once).
    async fn record_tool_check(&self, check: NewToolCheck) -> StoreResult<()>;

    /// Which of `keys` the task's checks hold.
    async fn checked_calls(&self, task_id: &str, keys: &[String]) -> StoreResult<Vec<String>>;

    /// Flag the execution once: the flag, its notice and its push in one
    /// transaction; a second flag of the same execution writes nothing and
    /// answers the first (`created: false`).
    async fn flag_ungated(&self, flag: NewUngatedFlag) -> StoreResult<UngatedFlagged>;

    /// The task's flags, oldest first.
    async fn ungated_flags(&self, task_id: &str) -> StoreResult<Vec<UngatedFlag>>;

    /// The executions of `node_id` (or of no node) that are live or ended
    /// at or after `ended_after`, oldest first, at most `limit`: what the
    /// watch reads the files of.
    async fn watched_executions(
        &self,
        node_id: &str,
        ended_after: DateTime<Utc>,
        limit: u32,
    ) -> StoreResult<Vec<Execution>>;
}
