//! Reminders of OPEN asks that reached a person's chat. A
//! reminder is an outbound row like any other (the outbox sends it, with its
//! guarantees: at most once, SENT_UNVERIFIED on a crash mid-send) plus its
//! `ask_reminders` row — (ask, n) unique — written in ONE transaction, and
//! only while the ask is still OPEN. The schedule and the text are the
//! core's (`crate::reminders`).

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{NewOutbound, Outbound, StoreResult, Urgency};

/// An OPEN ask whose outbound row reached the chat — or the ask of a
/// PENDING approval whose push (`approval:<id>`) reached it.
#[derive(Debug, Clone)]
pub struct ReminderCandidate {
    pub message_id: String,
    /// The approval the ask carries (its push is [`Self::first`]); `None`
    /// for a plain ask.
    pub approval_id: Option<String>,
    pub task_id: String,
    pub asked_at: DateTime<Utc>,
    pub urgency: Urgency,
    /// The highest reminder number written for it (0: none yet).
    pub sent: u32,
    /// Whether it was escalated already (`ask_escalations`).
    pub escalated: bool,
    /// The outbound row that carried the ask, or the approval's push
    /// (DELIVERED or SENT_UNVERIFIED): the reminder goes to the same place. A reminder's
    /// own row has no message (its mapping names the task).
    pub first: Outbound,
}

/// A reminder to write: its number and its outbound row (`outbound.dedup`
/// is ignored: the row's key is `reminder:<message id>:<seq>`).
#[derive(Debug, Clone)]
pub struct NewReminder {
    pub message_id: String,
    pub seq: u32,
    pub waited_ms: i64,
    pub outbound: NewOutbound,
}

/// One reminder that was written.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reminder {
    pub message_id: String,
    pub seq: u32,
    pub outbound_id: String,
    pub waited_ms: i64,
    pub created_at: DateTime<Utc>,
    /// Whether its outbound row reached the chat (DELIVERED or
    /// SENT_UNVERIFIED): a reminder dropped or still owed was not sent.
    #[serde(default)]
    pub sent: bool,
}

/// Why an ask was escalated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EscalationReason {
    /// After its last reminder (`escalateAfter`).
    Schedule,
    /// Its chat's delivery window had passed (reachability): at once.
    Unreachable,
}

impl EscalationReason {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Schedule => "schedule",
            Self::Unreachable => "unreachable",
        }
    }
}

/// An escalation to write: one outbound row per target (`outbound.dedup` is
/// ignored: the row's key is `escalation:<message id>:<seq>`, seq from 1 in
/// this order), and the "answered" notice every chat reached gets.
#[derive(Debug, Clone)]
pub struct NewEscalation {
    pub message_id: String,
    pub reason: EscalationReason,
    pub notice: String,
    /// (target label, its row).
    pub rows: Vec<(String, NewOutbound)>,
}

/// One escalation row that was written.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Escalation {
    pub message_id: String,
    pub seq: u32,
    pub target: String,
    pub outbound_id: String,
    pub reason: String,
    pub created_at: DateTime<Utc>,
}

/// What the rows say about one chat (reachability).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChatActivity {
    /// The newest gateway inbound message from the chat, or answer to an
    /// ask that reached it.
    pub last_wrote: Option<DateTime<Utc>>,
    /// The newest failed (FAILED / DEAD) outbound row to the target since
    /// its last delivery: (error, attempts, when, dead).
    pub last_failure: Option<SendFailure>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendFailure {
    pub error: String,
    pub attempts: u32,
    pub at: DateTime<Utc>,
    pub dead: bool,
}

/// The reminders aggregate.
#[async_trait]
pub trait ReminderStore: Send + Sync + 'static {
    /// OPEN asks whose first outbound row was sent, and the asks of PENDING
    /// approvals whose push was sent, oldest first (by asked at, then ask
    /// id), each with the number of its last reminder — at most `limit` of
    /// them, those after `after` (keyset paging: a pass reads every page,
    /// so the oldest asks never hide the newer ones).
    async fn reminder_candidates(
        &self,
        after: Option<&ReminderCandidate>,
        limit: u32,
    ) -> StoreResult<Vec<ReminderCandidate>>;
    /// The reminder row and its outbound row, one transaction — only if the
    /// ask is still OPEN and no reminder numbered `seq` or later exists.
    /// `None`: nothing was written.
    async fn record_reminder(&self, reminder: NewReminder) -> StoreResult<Option<Outbound>>;
    /// Reminders not sent yet (PENDING / FAILED) whose ask is no longer
    /// OPEN: DEAD, with the reason, so a stale reminder never goes out.
    async fn drop_stale_reminders(&self, now: DateTime<Utc>) -> StoreResult<Vec<Outbound>>;
    /// The reminders of these asks, by ask and number.
    async fn reminders_for(&self, message_ids: &[String]) -> StoreResult<Vec<Reminder>>;
    /// The escalation rows and their outbound rows, one transaction — only
    /// if the ask is still OPEN and was never escalated. Empty: nothing was
    /// written.
    async fn record_escalation(&self, escalation: NewEscalation) -> StoreResult<Vec<Outbound>>;
    /// The escalations of these asks, by ask and number.
    async fn escalations_for(&self, message_ids: &[String]) -> StoreResult<Vec<Escalation>>;
    /// Whether this outbound row asks a question that no longer waits: a
    /// reminder or an escalation whose ask left OPEN, or an approval's push
    /// (`approval:<id>`) whose approval is no longer PENDING. Asked right
    /// before the send: a row leased ahead when the question closed is
    /// then never sent. Any other row: false.
    async fn question_closed(&self, outbound_id: &str) -> StoreResult<bool>;
    /// When the person of `chat` on `gateway`/`platform` last wrote, and the
    /// newest failure of a send to (`gateway`, `downstream`, `dest`) since
    /// its last delivery.
    async fn chat_activity(
        &self,
        gateway: &str,
        platform: &str,
        chat: &str,
        dest: Option<&str>,
    ) -> StoreResult<ChatActivity>;
}
