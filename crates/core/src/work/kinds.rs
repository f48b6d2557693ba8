//! What an outcome does to a row of any kind: the one mapping from
//! [`Outcome`] to the kind's state ([`KindDef::after`]).

use chrono::{DateTime, Utc};

use super::{KindDef, Outcome, RetryPolicy};

/// Where an attempt's outcome leaves a row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct After {
    /// One of the kind's states ([`KindDef::done`], `failed`, `given_up`,
    /// `unverified`).
    pub state: &'static str,
    /// When it is due again (a clean failure under the cap only).
    pub next_attempt_at: Option<DateTime<Utc>>,
    /// The attempt's error, if it failed.
    pub error: Option<String>,
}

impl KindDef {
    /// The kind's attempt cap as a retry policy.
    pub const fn retry(&self) -> RetryPolicy {
        RetryPolicy::new(self.max_attempts)
    }

    /// The state `outcome` leaves a row in whose `attempts`-th attempt (this
    /// one counted) just ended, with `retry` as the cap: Done → done; Retry
    /// → failed, due after the backoff, or given up at the cap; GaveUp →
    /// given up; Unverified → unverified (never due again by itself).
    pub fn after(
        &self,
        outcome: &Outcome,
        attempts: u32,
        retry: RetryPolicy,
        now: DateTime<Utc>,
    ) -> After {
        match outcome {
            Outcome::Done => After {
                state: self.done,
                next_attempt_at: None,
                error: None,
            },
            Outcome::Retry(e) => match retry.next_attempt(attempts, now) {
                Some(next) => After {
                    state: self.failed,
                    next_attempt_at: Some(next),
                    error: Some(e.clone()),
                },
                None => After {
                    state: self.given_up,
                    next_attempt_at: None,
                    error: Some(e.clone()),
                },
            },
            Outcome::GaveUp(e) => After {
                state: self.given_up,
                next_attempt_at: None,
                error: Some(e.clone()),
            },
            Outcome::Unverified(e) => After {
                state: self.unverified,
                next_attempt_at: None,
                error: Some(e.clone()),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::work::{AGENT_ACTIONS, DELIVERIES, GATEWAY_REPLIES, Kind, OUTBOX};

    #[test]
    fn every_attempted_kind_is_defined_once_with_its_states() {
        for kind in Kind::ATTEMPTED {
            let def = kind.def();
            assert_eq!(def.kind, kind);
            assert!(!def.due.contains(&def.in_flight), "{kind:?}");
            assert!(!def.due.contains(&def.unverified), "{kind:?}");
            assert!(
                def.due.contains(&def.failed),
                "{kind:?}: FAILED is due again"
            );
            let cap = if kind == Kind::AgentActions { 5 } else { 20 };
            assert_eq!(def.max_attempts, cap, "{kind:?}");
        }
        let inbox = Kind::Inbox.def();
        assert_eq!(inbox.kind, Kind::Inbox);
        assert!(inbox.claim_starts && inbox.start_mark && inbox.settle_hook);
        assert_eq!(inbox.due, ["PENDING"]);
        assert_eq!(inbox.lease.as_secs(), 60);
        assert_eq!(DELIVERIES.lease.as_secs(), 60);
        assert_eq!(OUTBOX.lease.as_secs(), 120);
    }

    #[test]
    fn each_outcome_has_its_state_and_the_cap_gives_up() {
        let now = Utc::now();
        for def in [DELIVERIES, OUTBOX, GATEWAY_REPLIES, AGENT_ACTIONS] {
            let r = def.retry();
            assert_eq!(def.after(&Outcome::Done, 1, r, now).state, def.done);
            let failed = def.after(&Outcome::Retry("x".into()), 3, r, now);
            assert_eq!(failed.state, def.failed);
            assert_eq!(
                failed.next_attempt_at.map(|t| (t - now).num_seconds()),
                Some(8)
            );
            assert_eq!(failed.error.as_deref(), Some("x"));
            let capped = def.after(&Outcome::Retry("x".into()), def.max_attempts, r, now);
            assert_eq!((capped.state, capped.next_attempt_at), (def.given_up, None));
            let gave_up = def.after(&Outcome::GaveUp("y".into()), 1, r, now);
            assert_eq!(
                (gave_up.state, gave_up.next_attempt_at),
                (def.given_up, None)
            );
            let unverified = def.after(&Outcome::Unverified("z".into()), 1, r, now);
            assert_eq!(
                (unverified.state, unverified.next_attempt_at),
                (def.unverified, None)
            );
        }
        assert_eq!(DELIVERIES.given_up, "FAILED");
        assert_eq!(GATEWAY_REPLIES.given_up, "DEAD");
    }
}
