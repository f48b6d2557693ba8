//! Gateway replies (the reference's GatewayDelivery,
//! docs/tower-messaging.md §2.6 / docs/tower-messaging.md §3.4): the fourth kind of owed work. A reply
//! row is written in the transaction of its cause (the acknowledgement with
//! the inbound row's PROCESSED state, see [`super::InboundFinish::reply`]),
//! leased by the reply worker, sent once through the gateway CLI and
//! settled with the attempt's outcome. The rules are in
//! `crate::gateway::replies`.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

// The kinds and states are the shared vocabulary's (also in the browser).
pub use harness_types::{ReplyKind, ReplyState};

/// One reply to an inbound platform message.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewayReply {
    pub id: String,
    pub inbound_id: String,
    pub kind: ReplyKind,
    pub content: String,
    /// Unique: one reply per cause (`<kind>:<inbound id>` for the kinds
    /// written once per message).
    pub dedup_key: String,
    /// Copied from the inbound row: where the reply goes.
    pub gateway: String,
    pub platform: String,
    pub chat_id: String,
    /// The inbound message's platform id (the native reply's target).
    pub reply_to_message_id: String,
    pub thread_id: Option<String>,
    pub state: ReplyState,
    pub attempts: u32,
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub lease_owner: Option<String>,
    pub lease_expires_at: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
    /// The sent reply's platform id (receipt).
    pub platform_message_id: Option<String>,
    pub delivered_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A new reply (PENDING, due now); its destination is the inbound row's.
#[derive(Debug, Clone)]
pub struct NewReply {
    pub id: String,
    pub inbound_id: String,
    pub kind: ReplyKind,
    pub content: String,
    pub dedup_key: String,
    pub now: DateTime<Utc>,
}

/// How one attempt ended, as the store records it (decided by the core from
/// a `work::Outcome`).
#[derive(Debug, Clone)]
pub struct ReplySettle {
    pub id: String,
    /// DELIVERED, SENT_UNVERIFIED, FAILED or DEAD.
    pub state: ReplyState,
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
    pub platform_message_id: Option<String>,
}

/// One turn of the reply worker: record `settles` (rows still SENDING under
/// `owner`), give back `released` (leased, never started: due now, the
/// claim's attempt undone), turn SENDING rows whose lease ended before
/// `now` into SENT_UNVERIFIED, then lease up to `limit` due rows until
/// `lease_until`.
#[derive(Debug, Clone)]
pub struct ReplyTurn {
    pub owner: String,
    pub settles: Vec<ReplySettle>,
    pub released: Vec<String>,
    pub lease_until: DateTime<Utc>,
    pub now: DateTime<Utc>,
    pub limit: u32,
}
