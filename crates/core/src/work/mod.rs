//! The rules every kind of owed work shares: how an attempt ends, when a
//! failed row is due again, what a lease is, which state each outcome leaves
//! a row in ([`KindDef::after`]), the one wait until a row settles
//! ([`wait`]) and the one recovery of lapsed leases ([`recovery`]). Each kind
//! is defined once ([`KindDef`], in `crate::store::work`: its states, cap and
//! lease). Deliveries into terminals (`deliveries.rs`), outbound gateway
//! messages (`outbox/`) and gateway replies (`gateway/replies.rs`) apply
//! them; the parent's inbox (`inbox.rs`) is claimed, released and recovered
//! by the same statements, its outcome being its batch's delivery's; their runners (the PTY typer, the gateway CLI sender) only perform
//! one attempt and answer an [`Outcome`] — they never write the store.
//!
//! * **Done**: the side effect happened.
//! * **Retry**: nothing happened; due again after 2, 4, 8 … 256 s, until the
//!   kind's attempt cap ([`RetryPolicy`]), then given up (FAILED / DEAD).
//! * **GaveUp**: nothing happened and trying again would be wrong.
//! * **Unverified**: the side effect may have happened (a crash between the
//!   committed in-flight step and the committed outcome, a write that did not
//!   report success): never repeated automatically — a person decides.

mod kinds;
mod recovery;
mod wait;

use std::{sync::Arc, time::Duration};

use chrono::{DateTime, Utc};
use tokio::sync::Notify;

pub use crate::store::{
    AGENT_ACTIONS, DELIVERIES, GATEWAY_REPLIES, INBOX, Kind, KindDef, Lapsed, OUTBOX, Recovered,
    RecoveredAs,
};
// What a person may do with a row the worker stopped on, per kind and
// state (the shared vocabulary's: the browser shows the same buttons).
pub use harness_types::manual::{ManualAction, ManualActions};

/// Why a person's `action` on a row of `what` ("Delivery", "Outbound
/// message", …) changed nothing: the row, read again (`found`: its state),
/// is in a state the action does not accept (409), or is gone (404).
pub(crate) fn refused<S: ManualActions>(
    what: &str,
    found: crate::store::StoreResult<Option<S>>,
    action: ManualAction,
) -> crate::CoreError {
    match found {
        Ok(Some(state)) => crate::CoreError::Conflict(format!(
            "{what} is {} (expected {})",
            state.text(),
            S::expected(action)
        )),
        Ok(None) => crate::CoreError::NotFound(format!("{what} not found")),
        Err(err) => err.into(),
    }
}
pub use kinds::After;
pub use recovery::{Recovery, Scope};
pub use wait::until_settled;

/// Backoff cap.
pub const MAX_BACKOFF: Duration = Duration::from_secs(256);

/// How one attempt at a work row ended (decided by its runner).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Done,
    Retry(String),
    GaveUp(String),
    Unverified(String),
}

/// Backoff before attempt `attempts + 1`: 2, 4, 8 … 256 s.
pub fn backoff(attempts: u32) -> Duration {
    let exp = attempts.clamp(1, 8);
    Duration::from_secs(1u64 << exp).min(MAX_BACKOFF)
}

/// The attempt cap of one kind of work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    pub max_attempts: u32,
}

impl RetryPolicy {
    pub const fn new(max_attempts: u32) -> Self {
        Self { max_attempts }
    }

    /// When a row whose `attempts`-th attempt failed cleanly is due again;
    /// `None`: the cap is reached, it is given up.
    pub fn next_attempt(&self, attempts: u32, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        if attempts >= self.max_attempts {
            return None;
        }
        let wait = chrono::Duration::from_std(backoff(attempts)).ok()?;
        now.checked_add_signed(wait)
    }
}

/// A worker's lease on the rows it claimed.
#[derive(Debug, Clone)]
pub struct Lease {
    /// `<node id>:<boot id>`.
    pub owner: String,
    pub ttl: Duration,
}

impl Lease {
    /// The lease's end for a step committed at `now`.
    pub fn until(&self, now: DateTime<Utc>) -> DateTime<Utc> {
        let ttl =
            chrono::Duration::from_std(self.ttl).unwrap_or_else(|_| chrono::Duration::seconds(60));
        now.checked_add_signed(ttl).unwrap_or(now)
    }
}

/// One in-process wake-up per kind, owned by the core (no process-global
/// state: two servers in one process wake only their own workers). A wake
/// before the worker waits is kept (a `Notify` permit); polling is every
/// worker's fallback.
#[derive(Debug, Default)]
pub struct Wakers {
    deliveries: Arc<Notify>,
    outbox: Arc<Notify>,
    inbox: Arc<Notify>,
    gateway_replies: Arc<Notify>,
    agent_actions: Arc<Notify>,
}

impl Wakers {
    pub fn get(&self, kind: Kind) -> &Arc<Notify> {
        match kind {
            Kind::Deliveries => &self.deliveries,
            Kind::Outbox => &self.outbox,
            Kind::Inbox => &self.inbox,
            Kind::GatewayReplies => &self.gateway_replies,
            Kind::AgentActions => &self.agent_actions,
        }
    }
}

impl crate::Harness {
    /// Something of `kind` may be due: wake its worker, here and on the
    /// other nodes sharing the bus (a row may be another node's work; they
    /// also poll).
    pub fn wake(&self, kind: Kind) {
        self.wake_here(kind);
        self.wake_others(kind);
    }

    /// Wake this process's worker of `kind` only.
    pub fn wake_here(&self, kind: Kind) {
        self.wakers().get(kind).notify_one();
    }

    /// The wake-up `kind`'s worker waits on.
    pub fn waker(&self, kind: Kind) -> Arc<Notify> {
        self.wakers().get(kind).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_two_to_256_seconds() {
        let secs: Vec<u64> = (1..=10).map(|a| backoff(a).as_secs()).collect();
        assert_eq!(secs, [2, 4, 8, 16, 32, 64, 128, 256, 256, 256]);
        assert_eq!(backoff(0).as_secs(), 2);
    }

    #[test]
    fn the_cap_gives_up() {
        let now = Utc::now();
        let p = RetryPolicy::new(5);
        assert!(p.next_attempt(4, now).is_some());
        assert!(p.next_attempt(5, now).is_none());
        assert!(p.next_attempt(u32::MAX, now).is_none());
        assert_eq!(
            p.next_attempt(3, now).map(|t| (t - now).num_seconds()),
            Some(8)
        );
    }

    #[tokio::test]
    async fn a_wake_before_the_wait_is_kept_and_kinds_are_separate() {
        let w = Wakers::default();
        w.get(Kind::Inbox).notify_one();
        tokio::time::timeout(Duration::from_secs(1), w.get(Kind::Inbox).notified())
            .await
            .expect("the earlier wake is kept");
        let other =
            tokio::time::timeout(Duration::from_millis(20), w.get(Kind::Outbox).notified()).await;
        assert!(other.is_err(), "waking one kind does not wake another");
    }

    #[test]
    fn a_lease_ends_ttl_after_the_step() {
        let now = Utc::now();
        let lease = Lease {
            owner: "n:b".into(),
            ttl: Duration::from_secs(60),
        };
        assert_eq!((lease.until(now) - now).num_seconds(), 60);
    }
}
