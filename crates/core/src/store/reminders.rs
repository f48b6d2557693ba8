//! Reminders of OPEN asks that reached a person's chat (issue 32). A
//! reminder is an outbound row like any other (the outbox sends it, with its
//! guarantees: at most once, SENT_UNVERIFIED on a crash mid-send) plus its
//! `ask_reminders` row — (ask, n) unique — written in ONE transaction, and
//! only while the ask is still OPEN. The schedule and the text are the
//! core's (`crate::reminders`).

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{NewOutbound, Outbound, StoreResult, Urgency};

/// An OPEN ask whose outbound row reached the chat.
#[derive(Debug, Clone)]
pub struct ReminderCandidate {
    pub message_id: String,
    pub task_id: String,
    pub asked_at: DateTime<Utc>,
    pub urgency: Urgency,
    /// The highest reminder number written for it (0: none yet).
    pub sent: u32,
    /// The outbound row that carried the ask (DELIVERED or
    /// SENT_UNVERIFIED): the reminder goes to the same place. A reminder's
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
}

/// The reminders aggregate.
#[async_trait]
pub trait ReminderStore: Send + Sync + 'static {
    /// OPEN asks whose first outbound row was sent, oldest first, each with
    /// the number of its last reminder.
    async fn reminder_candidates(&self, limit: u32) -> StoreResult<Vec<ReminderCandidate>>;
    /// The reminder row and its outbound row, one transaction — only if the
    /// ask is still OPEN and no reminder numbered `seq` or later exists.
    /// `None`: nothing was written.
    async fn record_reminder(&self, reminder: NewReminder) -> StoreResult<Option<Outbound>>;
    /// Reminders not sent yet (PENDING / FAILED) whose ask is no longer
    /// OPEN: DEAD, with the reason, so a stale reminder never goes out.
    async fn drop_stale_reminders(&self, now: DateTime<Utc>) -> StoreResult<Vec<Outbound>>;
    /// The reminders of these asks, by ask and number.
    async fn reminders_for(&self, message_ids: &[String]) -> StoreResult<Vec<Reminder>>;
}
