//! The kinds of owed work, each defined once ([`KindDef`]: its states, its
//! attempt cap, its lease, what its crash recovery does), and the one port
//! every backend implements for them ([`WorkStore`]): the recovery of rows
//! whose lease lapsed. The claim, release and expiry statements of every
//! kind are built from the same definitions by one generic implementation
//! per backend (`harness-store`, `shared/work.rs`); a kind's own port
//! (`DeliveryStore`, `OutboxStore`, the reply turn of `GatewayStore`, the
//! inbox's claim of `InboxStore`) only adds what its rows carry besides (a
//! payload, a settle's side effects).
//! The rules that apply an outcome are in `crate::work`.

use std::time::Duration;

use chrono::{DateTime, Utc};

use super::StoreResult;

/// The kinds of owed work, each with its own worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Kind {
    /// Replies and keyed input typed into terminals.
    Deliveries,
    /// Messages sent through the gateway CLIs.
    Outbox,
    /// Workbench events batched into a parent's terminal.
    Inbox,
    /// Replies to inbound gateway messages, sent through the gateway CLIs.
    GatewayReplies,
    /// Timed automatic actions on unattended agents (`crate::agent_actions`).
    AgentActions,
}

impl Kind {
    pub const ALL: [Kind; 5] = [
        Kind::Deliveries,
        Kind::Outbox,
        Kind::Inbox,
        Kind::GatewayReplies,
        Kind::AgentActions,
    ];

    /// The kinds a runner attempts (one attempt, one [`crate::work::Outcome`]
    /// mapped by [`KindDef::after`]). The inbox's claim ends in a batch or a
    /// release instead: its outcome is its batch's delivery's.
    pub const ATTEMPTED: [Kind; 4] = [
        Kind::Deliveries,
        Kind::Outbox,
        Kind::GatewayReplies,
        Kind::AgentActions,
    ];

    /// The kind's definition: its rows are claimed, released and recovered
    /// by the engine's generic statements.
    pub fn def(self) -> &'static KindDef {
        match self {
            Kind::Deliveries => &DELIVERIES,
            Kind::Outbox => &OUTBOX,
            Kind::GatewayReplies => &GATEWAY_REPLIES,
            Kind::Inbox => &INBOX,
            Kind::AgentActions => &AGENT_ACTIONS,
        }
    }
}

/// One kind of work a runner attempts, as the engine sees it. The states
/// are the `state` column's values of the kind's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindDef {
    pub kind: Kind,
    /// States a row is claimed from once its `next_attempt_at` is due.
    pub due: &'static [&'static str],
    /// The state of a row whose side effect may be under way.
    pub in_flight: &'static str,
    /// The claim itself commits [`Self::in_flight`] and counts the attempt
    /// (outbox, gateway replies). Otherwise the claim only leases the row
    /// in its due state and a later committed step moves it in flight
    /// (deliveries: WRITING, just before the text is typed).
    pub claim_starts: bool,
    /// An in-flight row carries the evidence that its attempt started (the
    /// outbox's started mark, committed just before the CLI is spawned);
    /// without one every in-flight row counts as started.
    pub start_mark: bool,
    /// The side effect happened.
    pub done: &'static str,
    /// A clean failure, due again at `next_attempt_at` (none: the cap).
    pub failed: &'static str,
    /// Never due again by itself: given up, or the cap reached.
    pub given_up: &'static str,
    /// The side effect may have happened: a person decides.
    pub unverified: &'static str,
    /// `last_error` of an in-flight row whose lease lapsed.
    pub lost: &'static str,
    /// A started row whose lease lapsed is settled through the kind's own
    /// settle (it has side effects in the same transaction: a sent ask is
    /// opened), not by the store's recovery statement.
    pub settle_hook: bool,
    /// The attempt cap (the outbox's is configurable:
    /// `HarnessConfig::outbox_max_attempts`).
    pub max_attempts: u32,
    /// How long a claim holds a row.
    pub lease: Duration,
}

/// Deliveries into terminals: QUEUED → (WAITING_BOUNDARY → RESUMING) →
/// WRITING → DELIVERED; FAILED (due again or capped); UNVERIFIED.
pub const DELIVERIES: KindDef = KindDef {
    kind: Kind::Deliveries,
    due: &["QUEUED", "WAITING_BOUNDARY", "RESUMING", "FAILED"],
    in_flight: "WRITING",
    claim_starts: false,
    start_mark: false,
    done: "DELIVERED",
    failed: "FAILED",
    given_up: "FAILED",
    unverified: "UNVERIFIED",
    lost: "the process died while writing; the text may or may not have arrived",
    settle_hook: false,
    max_attempts: 20,
    lease: Duration::from_secs(60),
};

/// Outbound gateway messages: PENDING → SENDING → DELIVERED; FAILED; DEAD;
/// SENT_UNVERIFIED. Settling a sent row opens the ask it carried.
pub const OUTBOX: KindDef = KindDef {
    kind: Kind::Outbox,
    due: &["PENDING", "FAILED"],
    in_flight: "SENDING",
    claim_starts: true,
    start_mark: true,
    done: "DELIVERED",
    failed: "FAILED",
    given_up: "DEAD",
    unverified: "SENT_UNVERIFIED",
    lost: "the sender stopped while sending (crash or lease expiry); the message may or may not have been sent",
    settle_hook: true,
    max_attempts: 20,
    lease: Duration::from_secs(120),
};

/// Replies to inbound gateway messages: PENDING → SENDING → DELIVERED;
/// FAILED; DEAD; SENT_UNVERIFIED.
pub const GATEWAY_REPLIES: KindDef = KindDef {
    kind: Kind::GatewayReplies,
    due: &["PENDING", "FAILED"],
    in_flight: "SENDING",
    claim_starts: true,
    start_mark: false,
    done: "DELIVERED",
    failed: "FAILED",
    given_up: "DEAD",
    unverified: "SENT_UNVERIFIED",
    lost: "the send was interrupted (the reply may have been sent)",
    settle_hook: false,
    max_attempts: 20,
    lease: Duration::from_secs(120),
};

/// The parent's inbox: PENDING Workbench events claimed (PROCESSING, the
/// attempt counted) into one batch at the parent's turn end. Storing the
/// batch is the claim's start mark (`batch_id`) and ends its lease: from
/// then the batch's delivery carries the events (its outcome settles them,
/// `InboxStore::settle_workbench_batches`), so a started claim is never
/// released or claimed twice, and a lapsed one never started is PENDING
/// again. No cap: an event waits until its parent takes it.
pub const INBOX: KindDef = KindDef {
    kind: Kind::Inbox,
    due: &["PENDING"],
    in_flight: "PROCESSING",
    claim_starts: true,
    start_mark: true,
    done: "DELIVERED",
    failed: "PENDING",
    given_up: "CONSUMED",
    // The batch's delivery has the unverified state; its events wait.
    unverified: "PROCESSING",
    lost: "claim lease expired; returned to pending",
    // A batched claim is settled by its batch, never by the recovery.
    settle_hook: true,
    max_attempts: u32::MAX,
    lease: Duration::from_secs(60),
};

/// Timed actions on unattended agents: PENDING (due at its time) →
/// RUNNING (the claim starts it) → DONE; FAILED (due again after the
/// backoff, GAVE_UP at the cap); GAVE_UP (no longer applies); UNVERIFIED (a
/// crash mid-attempt: never done twice). CANCELLED (a person acted first)
/// is written outside the engine. A few attempts only: an action late by
/// the whole backoff ladder no longer answers the state it was planned for.
pub const AGENT_ACTIONS: KindDef = KindDef {
    kind: Kind::AgentActions,
    due: &["PENDING", "FAILED"],
    in_flight: "RUNNING",
    claim_starts: true,
    start_mark: false,
    done: "DONE",
    failed: "FAILED",
    given_up: "GAVE_UP",
    unverified: "UNVERIFIED",
    lost: "the server stopped during the action; it may or may not have been done",
    settle_hook: false,
    max_attempts: 5,
    // Covers a restart of the agent (bounded to 60 s) and its checks.
    lease: Duration::from_secs(120),
};

/// Whose lapsed leases a recovery takes back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lapsed<'a> {
    /// Leases that ended before the database's clock (any owner).
    Expired,
    /// Leases of `node`'s boots other than `current_owner` (`<node>:<boot>`;
    /// empty: every boot — a node declared dead), at once.
    Node {
        node: &'a str,
        current_owner: &'a str,
    },
}

/// A row a recovery changed, or left to its kind's settle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovered {
    pub id: String,
    pub lease_owner: Option<String>,
    pub what: RecoveredAs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecoveredAs {
    /// Its attempt had started: now the kind's unverified state.
    Unverified,
    /// Leased, never started: due again, the claim's attempt undone.
    Released,
    /// Its attempt had started and its kind settles it (`settle_hook`): the
    /// caller settles it as unverified (the row is unchanged).
    ToSettle,
}

/// The engine's generic port: one implementation per backend serves every
/// kind of [`KindDef`].
#[async_trait::async_trait]
pub trait WorkStore: Send + Sync {
    /// Take back `kind`'s rows whose lease lapsed (`lapsed`): a started
    /// attempt becomes the kind's unverified state — never done twice —
    /// (or is answered `ToSettle` for a kind with a settle hook), a row
    /// leased and never started is due again with the claim's attempt
    /// undone. Each step is conditional in the database (the same owner,
    /// still in flight), so several nodes may run it at once: one wins each
    /// row. Leases are judged by the database's clock.
    async fn recover_work(
        &self,
        kind: &KindDef,
        lapsed: Lapsed<'_>,
        now: DateTime<Utc>,
    ) -> StoreResult<Vec<Recovered>>;
}
