//! The outbox aggregate: task → human messages owed to a gateway (see
//! [`crate::outbox`] for the rules). Claiming is one statement shaped so
//! that PostgreSQL can run it with `FOR UPDATE SKIP LOCKED`.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use serde::{Deserialize, Serialize};

use super::{Choices, StoreResult};
use crate::model::MessageState;

// The states are the shared vocabulary's (also in the browser).
pub use harness_types::OutboundState;

/// One outbound row (the reference's HarnessOutbound).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Outbound {
    pub id: String,
    pub dedup_key: String,
    pub task_id: Option<String>,
    pub execution_id: Option<String>,
    pub message_id: Option<String>,
    pub gateway: String,
    pub downstream: Option<String>,
    pub dest: Option<String>,
    pub requested_to: Option<String>,
    pub profile: Option<String>,
    pub scope: String,
    pub expect_reply: bool,
    pub message: String,
    pub presentation: Option<String>,
    pub state: OutboundState,
    pub attempts: u32,
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub lease_owner: Option<String>,
    pub lease_expires_at: Option<DateTime<Utc>>,
    pub platform: Option<String>,
    pub platform_chat_id: Option<String>,
    pub platform_message_id: Option<String>,
    pub last_error: Option<String>,
    pub delivered_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// The attempt whose CLI a sender really spawned (committed just before
    /// the spawn). A SENDING row whose sender died may have been sent only
    /// when this equals `attempts`; otherwise it is released, due again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_attempt: Option<u32>,
}

/// Platform message id → task (the reference's HarnessDelivery), one per
/// (gateway, platform, chat, platform message id): a message id is unique
/// only within its chat. Looked up through
/// [`super::GatewayStore::delivery_mappings`].
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeliveryMapping {
    /// The outbound row's id (`<platform>:<id>` for rows mapped before
    /// the mapping was per chat).
    pub id: String,
    /// Lower-case; empty for rows mapped before it was recorded.
    pub gateway: String,
    pub harness_message_id: Option<String>,
    pub task_id: Option<String>,
    pub outbound_id: Option<String>,
    pub platform: String,
    pub chat_id: String,
    pub platform_message_id: String,
    pub scope: String,
    pub expect_reply: bool,
    pub created_at: DateTime<Utc>,
}

/// How a new row is deduplicated.
#[derive(Debug, Clone)]
pub enum Dedup {
    /// The caller's key, strictly idempotent: `harness:<taskId>:<key>`.
    Explicit(String),
    /// The content key (`harness:<taskId>:<hash>`), valid for the current
    /// ask lifecycle only; later cycles get `:cycle:<n>`.
    Implicit(String),
}

#[derive(Debug, Clone)]
pub struct NewOutbound {
    pub id: String,
    /// The message row written with it (`None` only without a task).
    pub message_id: Option<String>,
    pub task_id: Option<String>,
    pub dedup: Dedup,
    pub gateway: String,
    pub downstream: Option<String>,
    pub dest: Option<String>,
    pub requested_to: Option<String>,
    pub profile: Option<String>,
    pub scope: String,
    pub expect_reply: bool,
    pub message: String,
    pub presentation: Option<String>,
    pub now: DateTime<Utc>,
    /// The structured part of a pushed question: stored with its
    /// message, in the same transaction.
    pub choices: Option<Choices>,
}

/// What an enqueue found or wrote.
#[derive(Debug, Clone)]
pub struct Enqueued {
    pub row: Outbound,
    /// An existing row was returned (no new message, no new send).
    pub deduped: bool,
    /// The state of the row's message as it stands.
    pub message_state: Option<MessageState>,
}

/// The end of a send attempt.
#[derive(Debug, Clone)]
pub enum Settle {
    /// DELIVERED or SENT_UNVERIFIED: the activation transaction.
    Sent {
        state: OutboundState,
        platform: Option<String>,
        chat_id: Option<String>,
        platform_message_id: Option<String>,
        note: Option<String>,
    },
    /// A clean failure: FAILED due at `next`, or DEAD when `next` is `None`.
    Failed {
        error: String,
        next: Option<DateTime<Utc>>,
    },
}

/// What a settle did, atomically.
#[derive(Debug, Clone)]
pub struct Settled {
    pub row: Outbound,
    /// The message's new state (OPEN / CLOSED) when it was activated.
    pub message_state: Option<MessageState>,
    /// Other OPEN asks of the task superseded by this ask.
    pub cancelled: Vec<String>,
    /// Executions parked RUNNING → PAUSED.
    pub paused: Vec<String>,
}

/// A sender's turn: the attempts that ended, and how many rows to lease next.
#[derive(Debug, Clone)]
pub struct SettleBatch {
    /// The lease holder (`<node id>:<boot id>`).
    pub owner: String,
    /// Only rows whose lease ended before this (lease recovery).
    pub expired_before: Option<DateTime<Utc>>,
    /// Row id and how its attempt ended, in order.
    pub settles: Vec<(String, Settle)>,
    pub now: DateTime<Utc>,
    /// The lease of the newly claimed rows.
    pub lease_until: DateTime<Utc>,
    /// Rows to lease (0: none).
    pub limit: u32,
    /// Rows leased to `owner` that were never started: back to the state
    /// they were claimed from, due now, the claim's attempt not counted.
    pub released: Vec<String>,
}

/// What one [`SettleBatch`] did, atomically.
#[derive(Debug, Clone, Default)]
pub struct SettledBatch {
    /// The rows finished, in the batch's order.
    pub settled: Vec<Settled>,
    /// The rows leased, oldest first.
    pub claimed: Vec<Outbound>,
    /// The rows released (still leased to `owner` and SENDING).
    pub released: Vec<Outbound>,
}

#[async_trait]
pub trait OutboxStore: Send + Sync + 'static {
    /// In one transaction: apply the dedup rule; if no row is reused, insert
    /// the message (PENDING_DELIVERY, kind ask when `expect_reply`) and the
    /// outbound row (PENDING, due now). `MissingReference("task")` when the
    /// task does not exist.
    async fn enqueue_outbound(&self, new: NewOutbound) -> StoreResult<Enqueued>;

    /// In one transaction: finish each row of `settles` that is SENDING
    /// under `owner`'s lease (and, with `expired_before`, only if that
    /// lease ended before it), then lease up to `limit` due rows to `owner`.
    ///
    /// Finishing a row: `Failed` makes it FAILED (due at `next`) or DEAD;
    /// `Sent` makes it DELIVERED / SENT_UNVERIFIED and activates it — the
    /// ask opens (the task's other OPEN asks cancelled, its RUNNING
    /// executions parked) or the notify closes, and the platform message id
    /// → task mapping is recorded. A row not SENDING under that lease any
    /// more is left alone (absent from `settled`). At most one `Sent` ask
    /// per task in one call (the caller splits; [`crate::Harness`] does).
    ///
    /// Leasing: up to `limit` due rows (PENDING / FAILED, `next_attempt_at
    /// <= now`) become SENDING, attempts + 1, `lease_until` — one statement
    /// (PostgreSQL: `FOR UPDATE SKIP LOCKED` in the sub-select).
    ///
    /// Releasing (before the lease, so a released row may be leased again
    /// at once): each row of `released` still SENDING under `owner`'s lease
    /// goes back to the state it was claimed from (PENDING / FAILED), due
    /// `now`, attempts − 1, no lease — it was leased ahead of a free slot
    /// and never started.
    ///
    /// One round trip for a sender's whole turn: what ended and what is next.
    async fn settle_and_claim_outbound(&self, batch: SettleBatch) -> StoreResult<SettledBatch>;

    /// Lease up to `limit` due rows ([`Self::settle_and_claim_outbound`]
    /// with nothing to settle).
    async fn claim_outbound(
        &self,
        owner: &str,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
        limit: u32,
    ) -> StoreResult<Vec<Outbound>> {
        let done = self
            .settle_and_claim_outbound(SettleBatch {
                owner: owner.to_string(),
                expired_before: None,
                settles: Vec::new(),
                now,
                lease_until,
                limit,
                released: Vec::new(),
            })
            .await?;
        Ok(done.claimed)
    }

    /// Finish one row ([`Self::settle_and_claim_outbound`] leasing
    /// nothing). `None`: the row is not SENDING under that lease any more.
    async fn settle_outbound(
        &self,
        id: &str,
        owner: &str,
        expired_before: Option<DateTime<Utc>>,
        settle: Settle,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<Settled>> {
        let done = self
            .settle_and_claim_outbound(SettleBatch {
                owner: owner.to_string(),
                expired_before,
                settles: vec![(id.to_string(), settle)],
                now,
                lease_until: now,
                limit: 0,
                released: Vec::new(),
            })
            .await?;
        Ok(done.settled.into_iter().next())
    }

    /// Record that `owner` is about to spawn the CLI of each row's attempt
    /// (`(id, attempt)`; the evidence recovery reads), in one commit. The
    /// ids marked: a row left out is not SENDING under that lease at that
    /// attempt any more — its send must not start.
    async fn mark_outbound_started(
        &self,
        owner: &str,
        marks: &[(String, u32)],
    ) -> StoreResult<Vec<String>>;

    /// FAILED / DEAD → PENDING, due now (a person's "retry now").
    async fn retry_outbound(&self, id: &str, now: DateTime<Utc>) -> StoreResult<Option<Outbound>>;

    /// SENT_UNVERIFIED → DELIVERED (a person saw it arrive).
    async fn mark_outbound_delivered(
        &self,
        id: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<Outbound>>;

    async fn get_outbound(&self, id: &str) -> StoreResult<Option<Outbound>>;
    /// The rows of these messages (one query; at most 500 ids).
    async fn outbound_for_messages(&self, message_ids: &[String]) -> StoreResult<Vec<Outbound>>;
    /// Newest first; `task_id` filters; `before` = keyset (created_at ms, id).
    async fn list_outbound(&self, task_id: Option<&str>, limit: u32) -> StoreResult<Vec<Outbound>>;
}
