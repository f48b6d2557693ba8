//! One attempt at one delivery row — the state machine the delivery worker
//! runs (docs/decisions.md D3, D5, D6): type the row into the task's live
//! terminal at an input boundary, or — for a row whose terminal is gone and
//! that may start the agent ([`resume_rule`]) — start the agent again with
//! its provider's resume mode and type it once the restarted agent accepts
//! input (a reply prefixed with the question it answers).
//!
//! Every step is committed on the row before its side effect (RESUMING
//! before the start, WAITING_BOUNDARY before a long wait, WRITING before the
//! bytes go out), so a crash mid-write leaves an UNVERIFIED row, never a
//! second write. How the attempt ends is an [`Outcome`] for the worker's
//! next turn to commit (`Deliveries::settle_delivery`); `None` — the lease is
//! gone, the row is its new owner's.
//!
//! The terminal side is a port ([`DeliveryTerminals`], implemented by the
//! server's PTY terminals); the commits go through an [`AttemptLedger`]
//! ([`Deliveries::attempt_delivery`] uses the row's lease). Nothing here
//! touches a PTY or the database directly.

use async_trait::async_trait;

use crate::deliveries::Deliveries;
use crate::{
    CoreError, CoreResult, Harness,
    deliveries::{Delivery, DeliveryKind, DeliveryState, resume_rule},
    model::{Execution, TaskView},
    work::{Lease, Outcome},
};

/// How a reply typed into a restarted agent begins: the agent lost the
/// question with its terminal, so the reply carries it.
pub const QUESTION_PREFIX: &str = "[针对你之前的提问：";

/// Rounds at most: a start racing this attempt ends in its live terminal.
const ROUNDS: usize = 3;

/// What waiting for an input boundary found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Boundary {
    /// The agent is at its input prompt (or idle long enough).
    Reached,
    /// Not within the wait.
    TimedOut,
    /// The agent exited.
    Exited,
}

/// How long to wait for an input boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// Only whether the terminal is at a boundary now (after its quiet time).
    Now,
    /// Up to the configured maximum.
    Patient,
}

/// How a write into the terminal ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Write {
    /// Written now.
    Written,
    /// This id was written before (the terminal's injection ledger).
    AlreadyWritten,
    /// Another write of this id is in progress.
    InProgress,
    /// The write failed part-way or before: the text may or may not be there.
    Failed(String),
}

/// What the terminals show of a task, read under their start lock (so a
/// start in progress is not mistaken for a lost terminal).
pub enum Found<S> {
    /// Its live terminal.
    Live(S),
    /// No live terminal here: the task as stored.
    NotLive(Box<TaskView>),
}

/// The agent terminals of this node, as one delivery attempt needs them.
#[async_trait]
pub trait DeliveryTerminals: Send + Sync {
    /// A live terminal.
    type Session: Send + Sync;

    /// The task's live terminal on this node.
    fn live(&self, task_id: &str) -> Option<Self::Session>;
    /// The live terminal, else the task — under the start lock.
    async fn live_or_task(&self, task_id: &str) -> CoreResult<Found<Self::Session>>;
    /// Start the task's agent again from `latest` (its provider's resume
    /// mode). `Conflict`: another start won; the next round finds it.
    async fn start_again(&self, view: &TaskView, latest: &Execution) -> CoreResult<Execution>;
    /// Wait until the restarted agent reads keys (bounded).
    async fn wait_until_ready(&self, view: &TaskView, started: &Execution, session: &Self::Session);
    /// What is typed for `text` into the row's task (`crate::typed_text`).
    async fn typed_text(&self, row: &Delivery, text: &str) -> String;
    /// The task is no longer parked on a question (its keepalive runs again).
    fn unpark(&self, task_id: &str);
    /// Wait for an input boundary.
    async fn boundary(&self, session: &Self::Session, wait: Wait) -> Boundary;
    /// The agent has exited.
    fn has_exited(&self, session: &Self::Session) -> bool;
    /// Write `text` (submitted when the row says so) under the row's id.
    async fn write(&self, session: &Self::Session, row: &Delivery, text: &str) -> Write;
}

/// Where an attempt commits its steps.
#[async_trait]
pub trait AttemptLedger: Send + Sync {
    /// Commit `state` with a renewed lease. `Ok(false)`: the lease is gone.
    async fn advance(&self, state: DeliveryState) -> Result<bool, String>;
    /// This node is draining: it starts no agent.
    fn draining(&self) -> bool;
}

/// A step committed, or how the attempt ends without its side effect.
async fn commit(ledger: &impl AttemptLedger, state: DeliveryState) -> Result<(), Option<Outcome>> {
    match ledger.advance(state).await {
        Ok(true) => Ok(()),
        Ok(false) => Err(None),
        Err(err) => Err(Some(Outcome::Retry(err))),
    }
}

/// What a write's end means for the row: written (now or before) is done;
/// anything else may have reached the terminal — UNVERIFIED, never written
/// again by itself.
pub fn write_outcome(write: Write) -> Outcome {
    match write {
        Write::Written | Write::AlreadyWritten => Outcome::Done,
        Write::InProgress => Outcome::Unverified("another write of this id was in progress".into()),
        Write::Failed(err) => Outcome::Unverified(format!("terminal write failed: {err}")),
    }
}

/// The text a restarted agent gets: a reply carries its question.
pub fn resumed_text(row: &Delivery) -> String {
    if row.kind == DeliveryKind::Reply {
        let question = row.question.as_deref().unwrap_or_default();
        format!("{QUESTION_PREFIX}{question}]\n{}", row.text)
    } else {
        row.text.clone()
    }
}

/// One attempt at `row` (see the module docs).
pub async fn attempt<T: DeliveryTerminals>(
    terminals: &T,
    ledger: &impl AttemptLedger,
    row: &Delivery,
) -> Option<Outcome> {
    for _ in 0..ROUNDS {
        if let Some(session) = terminals.live(&row.task_id) {
            return write_live(terminals, ledger, row, &session, &row.text).await;
        }
        let view = match terminals.live_or_task(&row.task_id).await {
            Ok(Found::Live(session)) => {
                return write_live(terminals, ledger, row, &session, &row.text).await;
            }
            Ok(Found::NotLive(view)) => *view,
            Err(err) => return Some(Outcome::Retry(err.to_string())),
        };
        // Input never starts an agent, a live execution elsewhere waits, a
        // stopped task stays stopped.
        let latest = match resume_rule(row, view.execution.as_ref()) {
            Ok(latest) => latest.clone(),
            Err(outcome) => return Some(outcome),
        };
        // A draining node starts no agent (a resume): the row goes to another
        // node (unbound at its next heartbeat, `Cluster::follow_drain`).
        if ledger.draining() {
            return Some(Outcome::Retry(
                "this node is draining: another node starts the agent".into(),
            ));
        }
        if let Err(end) = commit(ledger, DeliveryState::Resuming).await {
            return end;
        }
        let started = match terminals.start_again(&view, &latest).await {
            Ok(execution) => execution,
            Err(CoreError::Conflict(_)) => continue,
            Err(err) => return Some(Outcome::Retry(format!("cannot restart the agent: {err}"))),
        };
        let Some(session) = terminals.live(&row.task_id) else {
            return Some(Outcome::Retry(
                "the restarted agent exited immediately".into(),
            ));
        };
        // Typed only once the restarted agent reads keys.
        terminals.wait_until_ready(&view, &started, &session).await;
        return write_live(terminals, ledger, row, &session, &resumed_text(row)).await;
    }
    Some(Outcome::Retry("the agent's terminal kept changing".into()))
}

/// Type `text` into a live terminal: a reply, and input owed to an agent,
/// wait for an input boundary first (WAITING_BOUNDARY committed before a
/// long wait); WRITING is committed before the bytes go out.
async fn write_live<T: DeliveryTerminals>(
    terminals: &T,
    ledger: &impl AttemptLedger,
    row: &Delivery,
    session: &T::Session,
    text: &str,
) -> Option<Outcome> {
    let text = terminals.typed_text(row, text).await;
    terminals.unpark(&row.task_id);
    if row.kind == DeliveryKind::Reply || row.resume {
        let mut boundary = terminals.boundary(session, Wait::Now).await;
        if boundary == Boundary::TimedOut {
            if let Err(end) = commit(ledger, DeliveryState::WaitingBoundary).await {
                return end;
            }
            boundary = terminals.boundary(session, Wait::Patient).await;
        }
        if boundary == Boundary::Exited {
            return Some(Outcome::Retry(
                "the agent exited before the reply could be typed".into(),
            ));
        }
    }
    if terminals.has_exited(session) {
        return Some(Outcome::Retry(
            "the agent exited before the text could be typed".into(),
        ));
    }
    if let Err(end) = commit(ledger, DeliveryState::Writing).await {
        return end;
    }
    Some(write_outcome(terminals.write(session, row, &text).await))
}

/// A row's steps committed under its lease.
struct Leased<'a> {
    harness: &'a Harness,
    row: &'a Delivery,
    lease: &'a Lease,
}

#[async_trait]
impl AttemptLedger for Leased<'_> {
    async fn advance(&self, state: DeliveryState) -> Result<bool, String> {
        self.harness
            .deliveries()
            .advance_delivery(self.row, self.lease, state)
            .await
            .map_err(|err| format!("cannot record the delivery step: {err}"))
    }

    fn draining(&self) -> bool {
        self.harness.cluster().draining()
    }
}

impl Deliveries<'_> {
    /// One attempt at `row` leased by `lease` (the delivery worker's
    /// runner): its steps committed under the lease before their side
    /// effects; how it ended is the worker's to record
    /// (`Deliveries::settle_and_claim_deliveries`).
    pub async fn attempt_delivery<T: DeliveryTerminals>(
        &self,
        terminals: &T,
        row: &Delivery,
        lease: &Lease,
    ) -> Option<Outcome> {
        let ledger = Leased {
            harness: self.h,
            row,
            lease,
        };
        attempt(terminals, &ledger, row).await
    }
}

#[cfg(test)]
#[path = "delivery_attempt_tests.rs"]
mod tests;
