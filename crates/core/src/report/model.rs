//! The report as every surface shows it (`GET /api/report`, `harness report
//! --json`, MCP `get_report`, `/report`): per task what happened in the
//! window, then what waits, ranked and numbered. Built by
//! [`super::build`] from stored facts only.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

pub use harness_types::AskedState;

use crate::{model::ExecutionStatus, store::ItemKind};

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The kept report's id: a reply names it (`POST /api/report/{id}/reply`).
    pub id: String,
    /// `all`, or `task:<id>` (an agent's task and its children).
    pub scope: String,
    pub since: DateTime<Utc>,
    pub until: DateTime<Utc>,
    /// One per task that did anything in the window, by project then title.
    pub tasks: Vec<TaskSection>,
    /// What waits for the person now, most blocking first, numbered 1….
    pub waiting: Vec<WaitingItem>,
    /// The one "waits for you" count (`GET /api/waiting`).
    pub waiting_count: u64,
    /// The report as one text (chat, the CLI).
    pub text: String,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskSection {
    pub task_id: String,
    pub title: String,
    pub project_id: Option<String>,
    pub project_name: Option<String>,
    /// The task's page.
    pub link: String,
    pub runs: Vec<Run>,
    /// Its agent's progress lines (`notify_human`).
    pub progress: Vec<Progress>,
    /// Questions and approvals asked or decided in the window.
    pub asked: Vec<Asked>,
    /// What a restart did with its agent.
    pub resumed: Vec<String>,
    /// The notes behind `resumed`, as stored: its words are written again
    /// in the report's language.
    #[serde(skip)]
    pub resumed_notes: Vec<String>,
    /// What its agent committed, read from its working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commits: Option<Commits>,
}

/// One execution in the window.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Run {
    pub execution_id: String,
    /// RUNNING, PAUSED, COMPLETED, FAILED, STOPPED.
    pub status: ExecutionStatus,
    pub started_at: DateTime<Utc>,
    pub ended_at: Option<DateTime<Utc>>,
    pub exit_code: Option<i64>,
    /// Why it ended (`exited`, `stopped`, `interrupted`, `spawn_failed`).
    pub end_reason: Option<String>,
    /// How long it ran within the window, in minutes.
    pub minutes: i64,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Progress {
    pub at: DateTime<Utc>,
    pub text: String,
}

/// A question or approval of the window and how it was decided.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Asked {
    /// The ask (for an approval, its carrying ask).
    pub id: String,
    pub kind: ItemKind,
    pub text: String,
    pub asked_at: DateTime<Utc>,
    /// A question's state (OPEN, ANSWERED, …) or an approval's (PENDING,
    /// APPROVED, …).
    pub state: AskedState,
    pub answer: Option<String>,
    /// `web`, `chat`, `default`, or who decided an approval.
    pub by: Option<String>,
    /// Minutes from the question to its answer.
    pub after_minutes: Option<i64>,
    pub reminders: u32,
    /// An answered question's receipt: who answered where, how fast,
    /// typed once or UNVERIFIED, whether the agent went on, and where it
    /// stalled (`crate::receipt::line`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receipt: Option<crate::receipt::line::ReceiptLine>,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Commits {
    pub branch: String,
    pub count: u32,
    /// `git diff --shortstat` of those commits.
    pub shortstat: String,
}

/// One thing that waits, with its number in this report.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WaitingItem {
    pub number: u32,
    pub kind: ItemKind,
    /// The ask, the approval or the execution.
    pub ref_id: String,
    pub task_id: String,
    pub task_title: String,
    pub link: String,
    /// The question, the held call, or what happened to the agent.
    pub text: String,
    /// A question's options, in order (answer by number or label).
    pub options: Vec<String>,
    pub waiting_since: DateTime<Utc>,
    pub default_at: Option<DateTime<Utc>>,
    /// What an answer unblocks: why it is where it is, as data.
    #[serde(default)]
    pub blocks: super::rank::Blocks,
    /// The same in English words ([`super::rank::Blocks::words`]).
    pub why: String,
}

/// The page of a task.
pub fn task_link(task_id: &str) -> String {
    format!("/tasks/{task_id}")
}
