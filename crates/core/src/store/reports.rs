//! The morning report's aggregate (see [`crate::report`]): read-only facts
//! of a window (executions, messages, approvals, as Harness stored them) and
//! the reports built from them (migration 0041), each with its numbered
//! waiting items — so that a later reply maps its numbers to exactly the
//! items they stood for — and, for a report sent to chat, its parts' outbox
//! rows written in the same transaction.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{NewOutbound, Outbound, StoreResult};
use crate::model::{Execution, Message};

/// An execution that ran in a window, with what the API's execution leaves
/// out: why it ended and what a restart did with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecutionFact {
    pub execution: Execution,
    /// `exited`, `stopped`, `interrupted`, `spawn_failed` (when it ended).
    pub end_reason: Option<String>,
    /// The note a restart left (`crate::reboot`): resumed, restarted, or
    /// why not.
    pub reboot_note: Option<String>,
}

/// A message of a window: a progress line (`notify_human`) or a question,
/// with how it was answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageFact {
    pub message: Message,
    /// Reminders sent to chat while it waited.
    pub reminders: u32,
    /// Answered by a person writing in the chat (through a gateway).
    pub via_chat: bool,
    /// Answered by its default when its deadline passed.
    pub by_default: bool,
    /// Its default's label and deadline, when it has one.
    pub default_label: Option<String>,
    pub deadline_at: Option<DateTime<Utc>>,
}

/// What a numbered item of a report stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ItemKind {
    /// An open question: `ref_id` is its ask.
    Question,
    /// A pending approval: `ref_id` is the approval.
    Approval,
    /// An agent that needs a person: `ref_id` is its execution.
    Agent,
}

impl ItemKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Question => "question",
            Self::Approval => "approval",
            Self::Agent => "agent",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "question" => Self::Question,
            "approval" => Self::Approval,
            "agent" => Self::Agent,
            _ => return None,
        })
    }
}

/// One numbered item as stored with its report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemRef {
    pub number: u32,
    pub kind: ItemKind,
    pub ref_id: String,
    pub task_id: String,
}

/// Where a report was shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ReportChannel {
    /// Sent to a chat: the next report starts where this one ended.
    Chat,
    Web,
    Api,
    Cli,
    Mcp,
}

impl ReportChannel {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Chat => "chat",
            Self::Web => "web",
            Self::Api => "api",
            Self::Cli => "cli",
            Self::Mcp => "mcp",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "chat" => Self::Chat,
            "web" => Self::Web,
            "api" => Self::Api,
            "cli" => Self::Cli,
            "mcp" => Self::Mcp,
            _ => return None,
        })
    }
}

/// A report to keep.
#[derive(Debug, Clone)]
pub struct NewReport {
    pub id: String,
    pub channel: ReportChannel,
    /// `all`, or `task:<id>`.
    pub scope: String,
    pub since: DateTime<Utc>,
    pub until: DateTime<Utc>,
    pub content: String,
    pub items: Vec<ItemRef>,
    /// Its chat message, one row per part (each with its own dedup key).
    pub parts: Vec<NewOutbound>,
    pub now: DateTime<Utc>,
}

/// A kept report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredReport {
    pub id: String,
    pub channel: ReportChannel,
    pub scope: String,
    pub since: DateTime<Utc>,
    pub until: DateTime<Utc>,
    pub content: String,
    pub created_at: DateTime<Utc>,
    /// By number.
    pub items: Vec<ItemRef>,
}

/// The dedup key of part `part` (0-based) of report `report_id`'s chat
/// message; [`report_of_key`] reads it back.
pub fn report_part_key(report_id: &str, part: usize) -> String {
    format!("report:{report_id}:{part}")
}

/// The report a chat message's outbound key names, if it is a report's.
pub fn report_of_key(key: &str) -> Option<&str> {
    let rest = key.strip_prefix("report:")?;
    let (id, part) = rest.rsplit_once(':')?;
    (!id.is_empty() && part.parse::<usize>().is_ok()).then_some(id)
}

#[async_trait]
pub trait ReportStore: Send + Sync {
    /// Executions that were live at some moment of `[since, until)`:
    /// started before `until` and not ended before `since`; oldest first,
    /// at most `limit`.
    async fn report_executions(
        &self,
        since: DateTime<Utc>,
        until: DateTime<Utc>,
        limit: u32,
    ) -> StoreResult<Vec<ExecutionFact>>;

    /// Messages created or answered in `[since, until)`, and every OPEN ask
    /// whenever it was asked; oldest first, at most `limit`.
    async fn report_messages(
        &self,
        since: DateTime<Utc>,
        until: DateTime<Utc>,
        limit: u32,
    ) -> StoreResult<Vec<MessageFact>>;

    /// The ids of the approvals created or decided in `[since, until)`, and
    /// of every PENDING one; oldest first, at most `limit`.
    async fn report_approval_ids(
        &self,
        since: DateTime<Utc>,
        until: DateTime<Utc>,
        limit: u32,
    ) -> StoreResult<Vec<String>>;

    /// Keep the report, its items and its chat parts in one transaction;
    /// returns the parts' outbox rows.
    async fn record_report(&self, report: NewReport) -> StoreResult<Vec<Outbound>>;

    async fn get_report(&self, id: &str) -> StoreResult<Option<StoredReport>>;

    /// The end of the newest report of `scope` shown on `channel`.
    async fn last_report_until(
        &self,
        channel: ReportChannel,
        scope: &str,
    ) -> StoreResult<Option<DateTime<Utc>>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_key_names_its_report() {
        assert_eq!(report_of_key(&report_part_key("crep", 2)), Some("crep"));
        assert_eq!(report_of_key("report::1"), None);
        assert_eq!(report_of_key("report:crep:x"), None);
        assert_eq!(report_of_key("approval:c1"), None);
    }
}
