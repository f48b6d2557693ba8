//! The durable delivery queue (docs/decisions.md D3, docs/decisions.md D5, D6): every write
//! into an agent's terminal that Harness owes somebody — a reply to an ask,
//! terminal input with an idempotency key — is a `deliveries` row written in
//! the same transaction as its cause and done by the delivery worker
//! (`server/src/workers/deliveries.rs`). The row id is the injection id; the
//! row, not memory, is the exactly-once ledger.
//!
//! States: QUEUED → WAITING_BOUNDARY → RESUMING → WRITING → DELIVERED.
//! A clean failure (nothing was written) is FAILED, due again after a
//! backoff of 2, 4, 8 … 256 s, until [`MAX_ATTEMPTS`]. A row found WRITING
//! with an expired lease (the process died mid-write) is UNVERIFIED: the text
//! may or may not be in the terminal, so it is never written again
//! automatically — a person chooses "deliver again" or "mark as delivered".

use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::{
    CoreError, CoreResult, Harness,
    events::HarnessEvent,
    ids,
    model::{Execution, ExecutionStatus},
    validate,
    work::{DELIVERIES, Lease, ManualAction, ManualActions, Outcome, RetryPolicy},
};

/// The deliveries service (`Harness::deliveries`): everything Harness owes
/// an agent's terminal — the delivery rows, their claims, settles and
/// manual actions (here) and one attempt at a row
/// (`crate::delivery_attempt`) — and the parent's inbox that becomes such
/// deliveries: a child's events, their batches and leases, a parent's
/// readiness (`crate::inbox`, `crate::inbox_lease`, `crate::inbox_ready`).
#[derive(Clone, Copy)]
pub struct Deliveries<'h> {
    pub(crate) h: &'h Harness,
}

/// After this many failed attempts a FAILED row is no longer due by itself.
pub const MAX_ATTEMPTS: u32 = crate::work::DELIVERIES.max_attempts;
/// Deliveries' attempt cap on the shared retry rules (`crate::work`).
pub const RETRY: RetryPolicy = RetryPolicy::new(MAX_ATTEMPTS);
/// How long the answering transaction leases a reply's row to this
/// process's worker (the hand-off).
pub const HANDOFF_LEASE: Duration = crate::work::DELIVERIES.lease;

pub use crate::store::{
    Claimed, Delivery, DeliveryClaim, DeliveryKind, DeliveryState, DeliveryStore, NewInput,
};

/// When a row that failed for the `attempts`-th time is due again (`None`: gave up).
pub fn next_attempt(attempts: u32, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    RETRY.next_attempt(attempts, now)
}

/// What a delivery whose task has no live terminal here may do, from the
/// task's latest execution: `Ok(execution)` — restart the agent from it
/// (resume mode) and type it; `Err` — the attempt ends without writing anything.
pub fn resume_rule<'a>(
    row: &Delivery,
    latest: Option<&'a Execution>,
) -> Result<&'a Execution, Outcome> {
    if row.kind == DeliveryKind::Input && !row.resume {
        // Input is for the terminal it was sent to; it never starts an agent
        // (unless it is owed to a derived child or a parent: `resume`, docs/decisions.md D4).
        return Err(Outcome::GaveUp("No active session".into()));
    }
    let Some(latest) = latest else {
        return Err(Outcome::Retry("the task's agent never ran".into()));
    };
    match latest.status {
        // Live, but not in a terminal of this server: run by someone else.
        // Starting it here would make a second agent; try later.
        ExecutionStatus::Running | ExecutionStatus::Paused => Err(Outcome::Retry(
            "the agent is running without a terminal on this server".into(),
        )),
        // A person stopped the task after the answer: do not start it again.
        ExecutionStatus::Stopped => Err(Outcome::GaveUp(
            "the task was stopped; its agent is not restarted".into(),
        )),
        _ => Ok(latest),
    }
}

/// Short status of a delivery for callers: `delivered`, `queued`, `failed`, `unverified`.
pub fn status_word(state: DeliveryState) -> &'static str {
    match state {
        DeliveryState::Delivered => "delivered",
        DeliveryState::Failed => "failed",
        DeliveryState::Unverified => "unverified",
        _ => "queued",
    }
}

impl Deliveries<'_> {
    /// Commit a step of an attempt (WAITING_BOUNDARY, RESUMING, WRITING)
    /// with a renewed lease — before its side effect. `Ok(false)`: the lease
    /// is gone (another owner has the row).
    pub async fn advance_delivery(
        &self,
        row: &Delivery,
        lease: &Lease,
        state: DeliveryState,
    ) -> CoreResult<bool> {
        let now = Utc::now();
        match self
            .h
            .store()
            .advance_delivery(&row.id, &lease.owner, state, lease.until(now), now)
            .await?
        {
            Some(d) => {
                self.delivery_changed(&d);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Commit how an attempt at `row` ended (the worker's only write).
    /// `None`: the lease was lost before the commit (the row is its new
    /// owner's).
    pub async fn settle_delivery(
        &self,
        row: &Delivery,
        lease: &Lease,
        outcome: &Outcome,
    ) -> CoreResult<Option<Delivery>> {
        let now = Utc::now();
        let store = self.h.store();
        let owner = lease.owner.as_str();
        let done = match outcome {
            Outcome::Done => store.complete_delivery(&row.id, owner, now).await?,
            failed => {
                let after = DELIVERIES.after(failed, row.attempts.saturating_add(1), RETRY, now);
                let error = after.error.unwrap_or_default();
                let unverified = after.state == DELIVERIES.unverified;
                if unverified {
                    tracing::error!(delivery_id = %row.id, task_id = %row.task_id, error = %error,
                        "delivery unverified: not written again automatically");
                } else {
                    tracing::warn!(delivery_id = %row.id, task_id = %row.task_id, error = %error,
                        attempts = row.attempts.saturating_add(1),
                        retry = after.next_attempt_at.is_some(), "delivery failed");
                }
                store
                    .fail_delivery(
                        &row.id,
                        owner,
                        &error,
                        after.next_attempt_at,
                        unverified,
                        now,
                    )
                    .await?
            }
        };
        match &done {
            Some(d) => {
                if d.state == DeliveryState::Delivered {
                    tracing::info!(delivery_id = %d.id, task_id = %d.task_id, "delivered");
                    // The question's receipt: the screen a few seconds later.
                    self.h.asks().answer_typed(d);
                }
                self.delivery_changed(d);
            }
            None => tracing::warn!(delivery_id = %row.id, "delivery lease lost before commit"),
        }
        Ok(done)
    }

    /// Lease up to `limit` due rows of this node to `lease.owner`. Rows found
    /// WRITING with an expired lease (the process died mid-write) become
    /// UNVERIFIED here — never written again automatically — and are published.
    pub async fn claim_deliveries(&self, lease: &Lease, limit: u32) -> CoreResult<Vec<Delivery>> {
        let now = Utc::now();
        let claimed = self
            .h
            .store()
            .claim_deliveries(
                &lease.owner,
                &self.h.config().node_id,
                // A draining node does only its own agents' rows: one
                // bound to no node may need an agent started (`crate::drain`).
                !self.h.cluster().draining(),
                now,
                lease.until(now),
                limit,
            )
            .await?;
        for row in &claimed.unverified {
            tracing::error!(delivery_id = %row.id, task_id = %row.task_id,
                "delivery found in flight with an expired lease: UNVERIFIED");
            self.delivery_changed(row);
        }
        Ok(claimed.rows)
    }

    /// The delivery worker's turn (`server/src/workers/engine.rs`): record
    /// the attempts that ended, give back leased rows never started, then
    /// lease up to `limit` due rows — in that order. A row whose lease was
    /// lost is its new owner's (logged, not an error), so a turn retried
    /// after an error records nothing twice.
    pub async fn settle_and_claim_deliveries(
        &self,
        lease: &Lease,
        done: Vec<(Delivery, Outcome)>,
        released: Vec<String>,
        limit: u32,
    ) -> CoreResult<Vec<Delivery>> {
        for (row, outcome) in &done {
            self.settle_delivery(row, lease, outcome).await?;
        }
        for id in &released {
            self.release_delivery(id, &lease.owner).await?;
        }
        if limit == 0 {
            return Ok(Vec::new());
        }
        self.claim_deliveries(lease, limit).await
    }

    /// Give a lease back untouched (the worker is stopping before the attempt).
    pub async fn release_delivery(&self, id: &str, owner: &str) -> CoreResult<()> {
        Ok(self.h.store().release_delivery(id, owner).await?)
    }

    /// Wake the delivery worker (a row was queued).
    pub fn wake_deliveries(&self) {
        self.h.wake(crate::work::Kind::Deliveries);
    }

    /// The lease a new reply row is written with, when this process runs a
    /// delivery worker (`HarnessConfig::delivery_owner`).
    /// None on a draining node: a reply to a stopped agent is another
    /// node's to resume (its own agents' rows are claimed by its worker).
    pub(crate) fn handoff_claim(&self, now: DateTime<Utc>) -> Option<DeliveryClaim> {
        if self.h.cluster().draining() {
            return None;
        }
        let owner = self.h.config().delivery_owner.clone()?;
        let until = now.checked_add_signed(chrono::Duration::from_std(HANDOFF_LEASE).ok()?)?;
        Some(DeliveryClaim {
            owner,
            node: self.h.config().node_id.clone(),
            until,
        })
    }

    /// A queued row: handed straight to this process's worker when the
    /// writing transaction leased it to it, else the worker is woken to claim.
    pub(crate) fn queued(&self, row: &Delivery) {
        self.delivery_changed(row);
        let ours = row.lease_owner.is_some()
            && row.lease_owner.as_deref() == self.h.config().delivery_owner.as_deref();
        if ours {
            self.h.hand_off(row.clone());
        }
        self.wake_deliveries();
    }

    /// Publish a change of a delivery (after its commit).
    pub fn delivery_changed(&self, d: &Delivery) {
        self.h.publish(HarnessEvent::DeliveryChanged {
            id: d.id.clone(),
            task_id: d.task_id.clone(),
            message_id: d.message_id.clone(),
        });
    }

    /// Wait up to `wait` for the delivery to settle; returns its latest row.
    /// The caller must have subscribed (`events`) before the row could change.
    pub async fn wait_delivery(
        &self,
        id: &str,
        wait: Duration,
        events: tokio::sync::broadcast::Receiver<HarnessEvent>,
    ) -> CoreResult<Option<Delivery>> {
        // Without an agent runtime nobody in this process delivers: no wait.
        let wait = if self.h.runtime().is_some() {
            wait
        } else {
            Duration::ZERO
        };
        let wakes = |e: &HarnessEvent| matches!(e, HarnessEvent::DeliveryChanged { id: changed, .. } if changed == id);
        let read = || async {
            let row = self.h.store().get_delivery(id).await?;
            Ok(match row {
                Some(d) if !d.state.settled() => None,
                other => Some(other),
            })
        };
        match crate::work::until_settled(wait, None, events, wakes, read).await? {
            Some(row) => Ok(row),
            None => Ok(self.h.store().get_delivery(id).await?),
        }
    }

    /// Queue terminal input with an idempotency key. Returns the row and
    /// whether this call created it (`false`: a duplicate of the key).
    pub async fn enqueue_input(
        &self,
        task_id: &str,
        text: &str,
        submit: bool,
        key: &str,
    ) -> CoreResult<(Delivery, bool)> {
        let task_id = validate::task_id(Some(task_id))?;
        let node_id = self.h.tasks().execution_node(&task_id).await?;
        let (row, created) = self
            .h
            .store()
            .enqueue_input(NewInput {
                id: ids::new_id(),
                task_id,
                node_id,
                text: text.to_string(),
                submit,
                dedup_key: key.to_string(),
                resume: false,
                now: Utc::now(),
            })
            .await?;
        if created {
            self.delivery_changed(&row);
            self.wake_deliveries();
        }
        Ok((row, created))
    }

    pub async fn delivery(&self, id: &str) -> CoreResult<Delivery> {
        let id = validate::cuid("deliveryId", id.trim())?;
        self.h
            .store()
            .get_delivery(&id)
            .await?
            .ok_or_else(|| CoreError::NotFound("Delivery not found".into()))
    }

    /// The deliveries of these answered asks (for the notification rows).
    pub async fn deliveries_for_messages(
        &self,
        message_ids: &[String],
    ) -> CoreResult<Vec<Delivery>> {
        let mut out = Vec::new();
        for chunk in message_ids.chunks(500) {
            out.extend(self.h.store().deliveries_for_messages(chunk).await?);
        }
        Ok(out)
    }

    pub async fn task_deliveries(&self, task_id: &str) -> CoreResult<Vec<Delivery>> {
        let task_id = validate::task_id(Some(task_id))?;
        Ok(self.h.store().task_deliveries(&task_id, 50).await?)
    }

    /// "Deliver again": a row in a state that allows it (FAILED, UNVERIFIED:
    /// `harness_types::manual`) is queued once more (admin).
    pub async fn retry_delivery(&self, id: &str) -> CoreResult<Delivery> {
        let id = validate::cuid("deliveryId", id.trim())?;
        let from = DeliveryState::accepted_by(ManualAction::Retry);
        match self
            .h
            .store()
            .requeue_delivery(&id, from, Utc::now())
            .await?
        {
            Some(row) => {
                tracing::info!(delivery_id = %row.id, "delivery queued again by a person");
                self.delivery_changed(&row);
                self.wake_deliveries();
                Ok(row)
            }
            None => Err(self.not_in(&id, ManualAction::Retry).await),
        }
    }

    /// "Mark as delivered": an UNVERIFIED row is closed as DELIVERED (admin).
    pub async fn mark_delivered(&self, id: &str) -> CoreResult<Delivery> {
        let id = validate::cuid("deliveryId", id.trim())?;
        match self
            .h
            .store()
            .mark_delivery_delivered(&id, Utc::now())
            .await?
        {
            Some(row) => {
                self.delivery_changed(&row);
                Ok(row)
            }
            None => Err(self.not_in(&id, ManualAction::MarkDelivered).await),
        }
    }

    /// The refusal of `action` on a row in a state it does not accept.
    async fn not_in(&self, id: &str, action: ManualAction) -> CoreError {
        let found = self.h.store().get_delivery(id).await;
        crate::work::refused("Delivery", found.map(|r| r.map(|r| r.state)), action)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(kind: DeliveryKind, resume: bool) -> Delivery {
        let now = Utc::now();
        Delivery {
            id: ids::new_id(),
            task_id: ids::new_id(),
            kind,
            message_id: None,
            node_id: None,
            text: "x".into(),
            question: None,
            submit: true,
            dedup_key: None,
            state: DeliveryState::Queued,
            attempts: 0,
            next_attempt_at: None,
            lease_owner: None,
            lease_expires_at: None,
            last_error: None,
            created_at: now,
            updated_at: now,
            done_at: None,
            resume,
        }
    }

    fn execution(status: ExecutionStatus) -> Execution {
        Execution {
            id: ids::new_id(),
            task_id: ids::new_id(),
            status,
            session_id: None,
            exit_code: None,
            created_at: Utc::now(),
            ended_at: None,
            node_id: None,
            node_name: None,
            unreadable_holder: None,
        }
    }

    #[test]
    fn what_a_delivery_without_a_terminal_may_do() {
        let reply = row(DeliveryKind::Reply, false);
        assert!(matches!(resume_rule(&reply, None), Err(Outcome::Retry(_))));
        for live in [ExecutionStatus::Running, ExecutionStatus::Paused] {
            let err = resume_rule(&reply, Some(&execution(live))).unwrap_err();
            assert_eq!(
                err,
                Outcome::Retry("the agent is running without a terminal on this server".into())
            );
        }
        assert!(matches!(
            resume_rule(&reply, Some(&execution(ExecutionStatus::Stopped))),
            Err(Outcome::GaveUp(_))
        ));
        for ended in [ExecutionStatus::Completed, ExecutionStatus::Failed] {
            let ended = execution(ended);
            assert_eq!(resume_rule(&reply, Some(&ended)), Ok(&ended));
        }
        let input = row(DeliveryKind::Input, false);
        assert_eq!(
            resume_rule(&input, Some(&execution(ExecutionStatus::Completed))),
            Err(Outcome::GaveUp("No active session".into()))
        );
        let owed = row(DeliveryKind::Input, true);
        let done = execution(ExecutionStatus::Completed);
        assert_eq!(resume_rule(&owed, Some(&done)), Ok(&done));
    }

    #[test]
    fn gives_up_after_max_attempts() {
        let now = Utc::now();
        assert!(next_attempt(MAX_ATTEMPTS - 1, now).is_some());
        assert!(next_attempt(MAX_ATTEMPTS, now).is_none());
        let next = next_attempt(3, now).map(|t| (t - now).num_seconds());
        assert_eq!(next, Some(8));
    }

    #[test]
    fn states_round_trip() {
        for s in [
            DeliveryState::Queued,
            DeliveryState::WaitingBoundary,
            DeliveryState::Resuming,
            DeliveryState::Writing,
            DeliveryState::Delivered,
            DeliveryState::Failed,
            DeliveryState::Unverified,
        ] {
            assert_eq!(DeliveryState::parse(s.as_str()), Some(s));
        }
    }
}
