//! When the inbox worker acts on a parent (docs/ARCHITECTURE.md "Owed work:
//! one engine"): the parent-readiness rule — a batch is drained only into a
//! live terminal at a provider-confirmed turn end with no batch of the
//! parent's on its way — and the Workbench start throttle — a Workbench
//! waited for by gateway requests is started at most once per
//! [`START_RETRY`], whichever node tries, across restarts (a lease row,
//! `InboxStore::take_workbench_start`, judged by the database's clock).
//! The server's worker (`server/src/workers/inbox.rs`) only reports what its
//! terminals show and starts what it is told to.

use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::CoreResult;
use crate::deliveries::Deliveries;

/// A Workbench whose start was tried is tried again after this (by any node).
pub const START_RETRY: Duration = Duration::from_secs(30);

/// What the worker's node sees of a parent's terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Terminal {
    /// No live terminal on this node.
    NotRunning,
    /// Live, mid-turn (its boundary latch is closed).
    Busy,
    /// Live, at a provider-confirmed turn end (the Stop hook opened the latch).
    AtTurnEnd,
}

/// What the worker does with a parent that has PENDING events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readiness {
    /// Drain its inbox into one batch now.
    Ready,
    /// Leave it: mid-turn, or a batch of it is on its way.
    Wait,
    /// No terminal here: its events wait PENDING; a Workbench may be
    /// started for the gateway requests among them.
    NotRunning,
}

/// The parent-readiness rule.
pub fn readiness(terminal: Terminal, batch_in_flight: bool) -> Readiness {
    match terminal {
        Terminal::NotRunning => Readiness::NotRunning,
        Terminal::AtTurnEnd if !batch_in_flight => Readiness::Ready,
        Terminal::AtTurnEnd | Terminal::Busy => Readiness::Wait,
    }
}

/// The throttle's lease for a start tried at `now`: until `now + START_RETRY`.
pub fn start_lease_until(now: DateTime<Utc>) -> DateTime<Utc> {
    now + crate::inbox::chrono_of(START_RETRY)
}

/// The parents of one worker turn.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadyParents {
    /// Drain these now (at most the turn's limit).
    pub ready: Vec<String>,
    /// Without a terminal here: a Workbench start may be due
    /// ([`Deliveries::workbench_start_due`]).
    pub not_running: Vec<String>,
}

impl Deliveries<'_> {
    /// The parents with PENDING events, sorted by the readiness rule;
    /// `terminal` says what this node sees of each.
    pub async fn inbox_ready_parents(
        &self,
        limit: usize,
        terminal: impl Fn(&str) -> Terminal,
    ) -> CoreResult<ReadyParents> {
        let mut out = ReadyParents::default();
        for parent in self.inbox_parents_pending().await? {
            if out.ready.len() >= limit {
                break;
            }
            let seen = terminal(&parent);
            let in_flight =
                seen == Terminal::AtTurnEnd && self.inbox_batch_in_flight(&parent).await?;
            match readiness(seen, in_flight) {
                Readiness::Ready => out.ready.push(parent),
                Readiness::NotRunning => out.not_running.push(parent),
                Readiness::Wait => {}
            }
        }
        Ok(out)
    }

    /// Whether this caller should start the Workbench `task_id` now (its
    /// terminal not `running` here): its start is wanted
    /// ([`Self::workbench_start_wanted`]), this node is not draining, and
    /// no start of it was tried within [`START_RETRY`] by any node — this
    /// call takes that turn (durable: a restart or another node waits it
    /// out too).
    pub async fn workbench_start_due(&self, task_id: &str, running: bool) -> CoreResult<bool> {
        // A draining node starts no agent: a live node's worker does it.
        if running
            || self.h.cluster().draining()
            || !self.h.gateway().workbench_start_wanted(task_id).await?
        {
            return Ok(false);
        }
        let owner = self
            .h
            .config()
            .delivery_owner
            .clone()
            .unwrap_or_else(|| self.h.config().node_id.clone());
        let now = Utc::now();
        Ok(self
            .h
            .store()
            .take_workbench_start(task_id, &owner, now, start_lease_until(now))
            .await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_live_terminal_at_its_turn_end_without_a_batch_on_its_way_is_ready() {
        assert_eq!(readiness(Terminal::AtTurnEnd, false), Readiness::Ready);
        assert_eq!(readiness(Terminal::AtTurnEnd, true), Readiness::Wait);
        assert_eq!(readiness(Terminal::Busy, false), Readiness::Wait);
        assert_eq!(readiness(Terminal::Busy, true), Readiness::Wait);
        assert_eq!(
            readiness(Terminal::NotRunning, false),
            Readiness::NotRunning
        );
        assert_eq!(readiness(Terminal::NotRunning, true), Readiness::NotRunning);
    }

    #[test]
    fn a_start_holds_the_throttle_for_thirty_seconds() {
        let now = Utc::now();
        assert_eq!(START_RETRY.as_secs(), 30);
        assert_eq!((start_lease_until(now) - now).num_seconds(), 30);
    }
}
