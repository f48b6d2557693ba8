//! The routing side of gateway inbound (docs/tower-messaging.md §2.4,
//! docs/tower-messaging.md §8.2, docs/tower-messaging.md §8.5): sessions (a chat thread, or a chat and sender, bound to a
//! project and its Workbench), the counts rate and admission limits read,
//! and the one transaction that records a routed message with everything
//! it owes. The rules are in `crate::gateway::route`.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{GatewayInbound, InboundState, NewEvent, NewInbound, NewReply, StoreResult};

// The status is the shared vocabulary's (also in the browser).
pub use harness_types::SessionStatus;

/// A chat thread (or a chat and sender) bound to a project's Workbench.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatewaySession {
    pub id: String,
    /// `gateway-session:<sha256 hex>` of gateway, platform, chat, anchor, project.
    pub binding_key: String,
    pub gateway: String,
    pub platform: String,
    pub chat_id: String,
    pub thread_id: Option<String>,
    pub root_message_id: Option<String>,
    /// The last sender seen (normalised).
    pub sender_id: Option<String>,
    pub status: SessionStatus,
    pub project_id: String,
    pub workbench_task_id: Option<String>,
    pub last_activity_at: DateTime<Utc>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// Which sessions a lookup wants (ACTIVE ones, newest activity first).
#[derive(Debug, Clone)]
pub enum SessionLookup {
    /// The session of this chat whose inbound message got the newest
    /// DELIVERED gateway reply with this platform message id (message ids
    /// are unique only within a chat: another chat's session never binds).
    ReplyTo {
        gateway: String,
        platform: String,
        chat_id: String,
        platform_message_id: String,
    },
    /// Sessions of this chat whose thread or root message is an anchor.
    Anchored {
        gateway: String,
        platform: String,
        chat_id: String,
        anchors: Vec<String>,
    },
    /// Threadless sessions of this chat and sender active since `since`
    /// (a thread's session binds only its thread).
    ChatSender {
        gateway: String,
        platform: String,
        chat_id: String,
        sender_id: String,
        since: DateTime<Utc>,
    },
    /// The sender's sessions in any chat of the platform, active since `since`.
    RecentSender {
        gateway: String,
        platform: String,
        sender_id: String,
        since: DateTime<Utc>,
    },
}

/// The rate-limit counts of a chat (rows created since `since`).
#[derive(Debug, Clone)]
pub struct RouteCountQuery {
    pub gateway: String,
    pub platform: String,
    pub chat_id: String,
    pub sender_id: Option<String>,
    pub since: DateTime<Utc>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RouteCounts {
    /// Rows of this sender in this chat since `since`.
    pub sender: u64,
    /// Rows of this chat since `since`.
    pub chat: u64,
    /// QUEUED rows of this chat.
    pub chat_queued: u64,
    /// QUEUED rows everywhere.
    pub global_queued: u64,
}

/// A session to bind (insert, or reactivate the row of its binding key).
#[derive(Debug, Clone)]
pub struct NewSession {
    pub id: String,
    pub binding_key: String,
    pub gateway: String,
    pub platform: String,
    pub chat_id: String,
    pub thread_id: Option<String>,
    pub root_message_id: Option<String>,
    pub sender_id: Option<String>,
    pub project_id: String,
    pub workbench_task_id: String,
}

/// The admission limits (docs/tower-messaging.md §8.2 step 12): at or above one, the request is
/// refused and nothing is written.
#[derive(Debug, Clone, Copy)]
pub struct AdmissionLimits {
    pub project_queue: u64,
    pub workbench_events: u64,
    pub global_queue: u64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionCounts {
    /// QUEUED inbound rows of the project.
    pub project_queue: u64,
    /// PENDING / PROCESSING events of the Workbench.
    pub workbench_events: u64,
    /// QUEUED inbound rows everywhere.
    pub global_queue: u64,
}

/// A discussion or work request admitted to the project's Workbench: the
/// session bound, the Workbench event and the acknowledgement written with
/// the QUEUED inbound row.
#[derive(Debug, Clone)]
pub struct Admission {
    pub session: NewSession,
    pub event: NewEvent,
    pub ack: NewReply,
    pub limits: AdmissionLimits,
}

/// A routed message, recorded in one transaction: the inbound row (unless
/// its dedup key exists) in its final `state` with `response`; the
/// sessions of `close` CLOSED; the `admission`'s rows.
#[derive(Debug, Clone)]
pub struct RouteWrite {
    pub inbound: NewInbound,
    pub state: InboundState,
    pub response: String,
    pub close: Vec<String>,
    pub admission: Option<Admission>,
}

#[derive(Debug, Clone)]
pub enum RouteRecord {
    /// Written; the row as stored.
    Recorded(GatewayInbound),
    /// A row with the dedup key exists: nothing was written.
    Duplicate(GatewayInbound),
    /// The admission limits refused it: nothing was written.
    Refused(AdmissionCounts),
}

/// A Workbench callback's writes, in one transaction (docs/tower-messaging.md
/// docs/tower-messaging.md §8.9–§8.11): optionally the created task linked to the inbound row and
/// adopted by the Workbench; the row's new state (and response); the
/// request's Workbench event CONSUMED; the reply (unless one with its dedup
/// key exists).
#[derive(Debug, Clone)]
pub struct RequestSettle {
    pub inbound_id: String,
    /// `(task, workbench)`: link the task, record it as the row's created
    /// task, make it the Workbench's child when it has no parent.
    pub link: Option<(String, String)>,
    pub state: InboundState,
    pub response: Option<String>,
    pub consume_event: Option<String>,
    pub reply: NewReply,
    pub now: DateTime<Utc>,
}

/// A recovery's step on an inbound row (docs/tower-messaging.md §8.13):
/// `state` (and `response`, `last_error`) written only while the row is
/// still in `seen_state` — a Workbench callback that settled it meanwhile
/// wins. `state == seen_state` notes only the error (the claim clock
/// `updated_at` is kept).
#[derive(Debug, Clone)]
pub struct InboundMark {
    pub id: String,
    pub seen_state: InboundState,
    pub state: InboundState,
    /// `None`: kept.
    pub response: Option<String>,
    pub last_error: Option<String>,
    pub now: DateTime<Utc>,
}

#[async_trait]
pub trait GatewayRouteStore: Send + Sync + 'static {
    /// The inbound row of a dedup key.
    async fn inbound_by_key(&self, dedup_key: &str) -> StoreResult<Option<GatewayInbound>>;

    /// [`RouteCounts`] of a chat.
    async fn route_counts(&self, query: RouteCountQuery) -> StoreResult<RouteCounts>;

    /// The ACTIVE sessions a lookup finds, newest activity first (≤ 20).
    async fn find_sessions(&self, lookup: SessionLookup) -> StoreResult<Vec<GatewaySession>>;

    /// [`RouteWrite`], one transaction.
    async fn record_route(&self, write: RouteWrite) -> StoreResult<RouteRecord>;

    async fn get_session(&self, id: &str) -> StoreResult<Option<GatewaySession>>;

    /// The tasks created for the inbound messages whose DELIVERED gateway
    /// reply has this platform message id, in every chat (the caller keeps
    /// its chat's): `(chat, created task, Workbench)`, newest first (≤ 20).
    async fn tasks_of_reply(
        &self,
        gateway: &str,
        platform: &str,
        platform_message_id: &str,
    ) -> StoreResult<Vec<(String, String, Option<String>)>>;

    /// The task linked to an inbound row (created for its work request).
    async fn linked_task(&self, inbound_id: &str) -> StoreResult<Option<String>>;

    /// In one transaction: the task already linked to the inbound row
    /// (`false`: nothing written), else `task` inserted and linked to the
    /// row (`true`; the confirmation records it as the row's created task).
    /// A retried create after a crash therefore never makes a second task.
    async fn create_linked_task(
        &self,
        task: super::NewTask,
        inbound_id: &str,
    ) -> StoreResult<(String, bool)>;

    /// [`RequestSettle`]: the reply row and whether this call wrote it;
    /// `None` when the inbound row does not exist.
    async fn settle_request(
        &self,
        settle: RequestSettle,
    ) -> StoreResult<Option<(super::GatewayReply, bool)>>;

    /// [`InboundMark`]: whether the row was still in its seen state.
    async fn mark_inbound(&self, mark: InboundMark) -> StoreResult<bool>;

    /// Sessions, newest activity first.
    async fn list_sessions(&self, limit: u32) -> StoreResult<Vec<GatewaySession>>;

    /// Inbound rows, newest first (`state`: only those).
    async fn list_inbound(
        &self,
        state: Option<InboundState>,
        limit: u32,
    ) -> StoreResult<Vec<GatewayInbound>>;
}
