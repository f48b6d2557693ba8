//! The gateway-inbound aggregate: the per-chat delivery mapping
//! as replies look it up, the signed requests' nonces (remembered durably,
//! so a replay is refused after a restart too), and the inbound rows of
//! platform messages (the reference's GatewayInbound, docs/tower-messaging.md
//! docs/tower-messaging.md §2.5 / docs/tower-messaging.md §3.3). The rules are in [`crate::gateway`].

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{DeliveryMapping, GatewayReply, NewReply, ReplyState, ReplyTurn, StoreResult};

// The intents and states are the shared vocabulary's (also in the browser).
pub use harness_types::{InboundIntent, InboundState};

/// One inbound platform message (the dedup envelope and its result).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewayInbound {
    pub id: String,
    /// `gateway-inbound:<gateway>:<platform>:<chat>:<platformMessageId>`.
    pub dedup_key: String,
    /// The session it was admitted to (discussion / work).
    pub session_id: Option<String>,
    pub gateway: String,
    pub platform: String,
    pub chat_id: String,
    pub sender_id: Option<String>,
    pub platform_message_id: String,
    pub thread_id: Option<String>,
    pub root_message_id: Option<String>,
    pub reply_to_message_id: Option<String>,
    pub intent: InboundIntent,
    pub content: String,
    pub state: InboundState,
    /// The child task created for a work request.
    pub created_task_id: Option<String>,
    /// The route's or the continuation's result (JSON): the replay cache.
    pub response: Option<String>,
    pub attempts: u32,
    pub last_error: Option<String>,
    pub processed_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// A `continue_bound_task` claim's holder (`<node id>:<boot id>`) and
    /// its lease's end (the engine's lease: `crate::work::Lease`); never
    /// shown.
    #[serde(skip)]
    pub lease_owner: Option<String>,
    #[serde(skip)]
    pub lease_expires_at: Option<DateTime<Utc>>,
}

/// A new inbound row (RECEIVED).
#[derive(Debug, Clone)]
pub struct NewInbound {
    pub id: String,
    pub dedup_key: String,
    pub gateway: String,
    pub platform: String,
    pub chat_id: String,
    pub sender_id: Option<String>,
    pub platform_message_id: String,
    pub thread_id: Option<String>,
    pub root_message_id: Option<String>,
    pub reply_to_message_id: Option<String>,
    pub intent: InboundIntent,
    pub content: String,
    pub now: DateTime<Utc>,
}

/// A `continue_bound_task` claim of an inbound row, leased to the calling
/// process: the row becomes PROCESSING with `response` (attempts + 1, no
/// error, not processed) under `owner`'s lease until `lease_until` (the
/// database's clock on PostgreSQL), only while it is still the row the
/// caller judged (its state, response and `updated_at`).
#[derive(Debug, Clone)]
pub struct InboundClaim {
    pub id: String,
    pub seen_state: InboundState,
    pub seen_response: Option<String>,
    pub seen_updated_at: DateTime<Utc>,
    pub response: String,
    /// `<node id>:<boot id>` of the process holding the claim.
    pub owner: String,
    pub lease_until: DateTime<Utc>,
    pub now: DateTime<Utc>,
}

/// The end of processing an inbound row.
#[derive(Debug, Clone)]
pub struct InboundFinish {
    pub id: String,
    /// PROCESSED (sets `processed_at`) or FAILED.
    pub state: InboundState,
    pub response: String,
    pub last_error: Option<String>,
    pub now: DateTime<Utc>,
    /// A reply written in the same transaction (the acknowledgement of a
    /// queued continuation); none when one with its dedup key exists.
    pub reply: Option<NewReply>,
}

#[async_trait]
pub trait GatewayStore: Send + Sync + 'static {
    /// The mappings of one platform message id sent through `gateway`
    /// (and those recorded before the gateway was, gateway `''`), in every
    /// chat — the caller keeps the one of its chat (the chat rule is the
    /// core's, `gateway::ids::same_chat`). At most 50, newest first.
    async fn delivery_mappings(
        &self,
        gateway: &str,
        platform: &str,
        platform_message_id: &str,
    ) -> StoreResult<Vec<DeliveryMapping>>;

    /// Remember a signed request's nonce until `expires_at`, first
    /// forgetting every nonce that expired by `now`. `false`: the nonce was
    /// already remembered (a replay).
    async fn remember_nonce(
        &self,
        nonce: &str,
        expires_at: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> StoreResult<bool>;

    /// Insert the row unless one with its dedup key exists; answer the row
    /// of that key and whether this call created it.
    async fn create_inbound(&self, new: NewInbound) -> StoreResult<(GatewayInbound, bool)>;

    async fn get_inbound(&self, id: &str) -> StoreResult<Option<GatewayInbound>>;

    /// [`InboundClaim`]: the claimed row, or `None` when it changed.
    async fn claim_inbound(&self, claim: InboundClaim) -> StoreResult<Option<GatewayInbound>>;

    /// [`InboundFinish`] (whatever the row's state; a claim's lease ends):
    /// the row, `None` when it does not exist.
    async fn finish_inbound(&self, finish: InboundFinish) -> StoreResult<Option<GatewayInbound>>;

    /// Insert a reply unless one with its dedup key exists (its destination
    /// copied from the inbound row); answer the row of that key and whether
    /// this call created it. `None`: the inbound row does not exist.
    async fn enqueue_reply(&self, new: NewReply) -> StoreResult<Option<(GatewayReply, bool)>>;

    /// [`ReplyTurn`], in one transaction: the rows leased.
    async fn settle_and_claim_replies(&self, turn: ReplyTurn) -> StoreResult<Vec<GatewayReply>>;

    /// The replies of one inbound row, oldest first.
    async fn replies_for_inbound(&self, inbound_id: &str) -> StoreResult<Vec<GatewayReply>>;

    async fn get_reply(&self, id: &str) -> StoreResult<Option<GatewayReply>>;

    /// A person's decision on a reply (the core says which states allow
    /// it): a row in one of `from` → `to` (PENDING: due `now`; DELIVERED:
    /// delivered `now`), lease cleared. `None`: no such row in those states.
    async fn decide_reply(
        &self,
        id: &str,
        from: &[ReplyState],
        to: ReplyState,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<GatewayReply>>;
}
