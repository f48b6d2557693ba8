//! The deliveries aggregate: the durable queue of writes owed to agents'
//! terminals (see [`crate::deliveries`] for the rules). Claiming is shaped
//! so that PostgreSQL can run it with `FOR UPDATE SKIP LOCKED`.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::StoreResult;

// The states and kinds are the shared vocabulary's (also in the browser).
pub use harness_types::{DeliveryKind, DeliveryState};

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    /// Also the injection id.
    pub id: String,
    pub task_id: String,
    pub kind: DeliveryKind,
    pub message_id: Option<String>,
    pub node_id: Option<String>,
    pub text: String,
    pub question: Option<String>,
    pub submit: bool,
    pub dedup_key: Option<String>,
    pub state: DeliveryState,
    pub attempts: u32,
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub lease_owner: Option<String>,
    pub lease_expires_at: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub done_at: Option<DateTime<Utc>>,
    /// When the terminal is gone, resume the agent first (work owed to a
    /// derived child or a parent: docs/decisions.md D4).
    #[serde(default)]
    pub resume: bool,
}

/// A new input delivery (replies are written by `answer_open_ask` itself).
#[derive(Debug, Clone)]
pub struct NewInput {
    pub id: String,
    pub task_id: String,
    pub node_id: Option<String>,
    pub text: String,
    pub submit: bool,
    pub dedup_key: String,
    /// Resume the agent when its terminal is gone (see `Delivery::resume`).
    pub resume: bool,
    pub now: DateTime<Utc>,
}

/// What one claim did: rows now leased to the caller, and rows found in
/// flight with an expired lease that became UNVERIFIED.
#[derive(Debug, Clone, Default)]
pub struct Claimed {
    pub rows: Vec<Delivery>,
    pub unverified: Vec<Delivery>,
}

/// The deliveries port. Every method is one transaction. Lease-holding
/// transitions are conditional on `lease_owner` (a lost lease returns
/// `None`: somebody else owns the row now).
#[async_trait]
pub trait DeliveryStore: Send + Sync + 'static {
    /// Insert an input delivery; with an existing `(task_id, dedup_key)` the
    /// existing row is returned and `false`.
    async fn enqueue_input(&self, input: NewInput) -> StoreResult<(Delivery, bool)>;

    /// In one transaction: rows WRITING with an expired lease → UNVERIFIED;
    /// then lease up to `limit` due rows (QUEUED / WAITING_BOUNDARY /
    /// RESUMING / FAILED, `next_attempt_at <= now`, lease free or expired,
    /// `node_id` `node`, or NULL when `unbound`) to `owner` until
    /// `lease_until`. PostgreSQL: the same with `FOR UPDATE SKIP LOCKED` in
    /// the sub-select.
    async fn claim_deliveries(
        &self,
        owner: &str,
        node: &str,
        unbound: bool,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
        limit: u32,
    ) -> StoreResult<Claimed>;

    /// Progress (WAITING_BOUNDARY, RESUMING, WRITING) with a renewed lease.
    /// WRITING is committed before the terminal write.
    async fn advance_delivery(
        &self,
        id: &str,
        owner: &str,
        state: DeliveryState,
        lease_until: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<Delivery>>;

    /// WRITING → DELIVERED (lease released).
    async fn complete_delivery(
        &self,
        id: &str,
        owner: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<Delivery>>;

    /// A clean failure (nothing written): attempts + 1, FAILED, due at `next`
    /// (`None`: gave up). A write error (`unverified`) makes it UNVERIFIED.
    async fn fail_delivery(
        &self,
        id: &str,
        owner: &str,
        error: &str,
        next: Option<DateTime<Utc>>,
        unverified: bool,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<Delivery>>;

    /// Give a lease back untouched (the worker is stopping).
    async fn release_delivery(&self, id: &str, owner: &str) -> StoreResult<()>;

    /// A row in one of `from` → QUEUED, due now, lease cleared (manual
    /// "deliver again", `allowRetry` on FAILED).
    async fn requeue_delivery(
        &self,
        id: &str,
        from: &[DeliveryState],
        now: DateTime<Utc>,
    ) -> StoreResult<Option<Delivery>>;

    /// UNVERIFIED → DELIVERED by a person who saw the text arrive.
    async fn mark_delivery_delivered(
        &self,
        id: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<Delivery>>;

    async fn get_delivery(&self, id: &str) -> StoreResult<Option<Delivery>>;
    /// The delivery of an answered ask.
    async fn delivery_for_message(&self, message_id: &str) -> StoreResult<Option<Delivery>>;
    /// The deliveries of these answered asks (one query; at most 500 ids).
    async fn deliveries_for_messages(&self, message_ids: &[String]) -> StoreResult<Vec<Delivery>>;
    /// The task's deliveries, newest first.
    async fn task_deliveries(&self, task_id: &str, limit: u32) -> StoreResult<Vec<Delivery>>;
}

/// A lease taken by the transaction that writes a row (the hand-off to this
/// process's worker): only when the row's node is `node` or none.
#[derive(Debug, Clone)]
pub struct DeliveryClaim {
    /// `<node id>:<boot id>`.
    pub owner: String,
    pub node: String,
    pub until: DateTime<Utc>,
}
