//! One attempt at one delivery row (claimed by the worker in
//! `crate::workers::deliveries`): type it into the task's live terminal at an
//! input boundary, or — for a reply whose terminal is gone — start the agent
//! again with its provider's resume mode and type the reply prefixed with
//! the question (decisions D3, D5, D6). Every step is committed on the row
//! first (WAITING_BOUNDARY, RESUMING, WRITING); WRITING is committed before
//! the bytes go out, so a crash mid-write leaves an UNVERIFIED row, never a
//! second write.

use std::{sync::Arc, time::Duration};

use chrono::Utc;
use harness_core::{
    CoreError,
    deliveries::{self, Delivery, DeliveryKind, DeliveryState},
    model::ExecutionStatus,
};
use harness_pty::{Boundary, InjectOptions, InjectOutcome, PasteMode, PtySession};

use super::{PREFIX_OPEN, Terminals};

/// The lease a worker holds on the rows it claimed.
#[derive(Debug, Clone)]
pub struct Lease {
    /// `<node id>:<boot id>`.
    pub owner: String,
    pub ttl: Duration,
}

/// How one attempt ended.
#[derive(Debug)]
enum Attempt {
    /// The text is in the terminal.
    Delivered,
    /// Nothing was written; try again later.
    Failed(String),
    /// Nothing was written, and trying again would be wrong (the task was stopped).
    GaveUp(String),
    /// A write was started and did not report success: never repeat blindly.
    Unverified(String),
    /// The lease is gone (somebody else owns the row now).
    Lost,
}

impl Terminals {
    /// Do one attempt at `row` and commit its result.
    pub(crate) async fn process_delivery(&self, row: Delivery, lease: &Lease) {
        let h = self.harness();
        let outcome = self.attempt(&row, lease).await;
        let now = Utc::now();
        let store = h.store();
        let result = match &outcome {
            Attempt::Delivered => store.complete_delivery(&row.id, &lease.owner, now).await,
            Attempt::Failed(err) => {
                let next = deliveries::next_attempt(row.attempts.saturating_add(1), now);
                tracing::warn!(delivery_id = %row.id, task_id = %row.task_id, error = %err,
                    attempts = row.attempts + 1, retry = next.is_some(), "delivery failed");
                store
                    .fail_delivery(&row.id, &lease.owner, err, next, false, now)
                    .await
            }
            Attempt::GaveUp(err) => {
                tracing::warn!(delivery_id = %row.id, task_id = %row.task_id, error = %err, "delivery given up");
                store
                    .fail_delivery(&row.id, &lease.owner, err, None, false, now)
                    .await
            }
            Attempt::Unverified(err) => {
                tracing::error!(delivery_id = %row.id, task_id = %row.task_id, error = %err,
                    "delivery unverified: not written again automatically");
                store
                    .fail_delivery(&row.id, &lease.owner, err, None, true, now)
                    .await
            }
            Attempt::Lost => {
                tracing::warn!(delivery_id = %row.id, "delivery lease lost; left to its owner");
                return;
            }
        };
        match result {
            Ok(Some(done)) => {
                if done.state == DeliveryState::Delivered {
                    tracing::info!(delivery_id = %done.id, task_id = %done.task_id, "delivered");
                }
                h.delivery_changed(&done);
            }
            Ok(None) => tracing::warn!(delivery_id = %row.id, "delivery lease lost before commit"),
            Err(err) => {
                tracing::error!(delivery_id = %row.id, error = ?err, "cannot record a delivery result");
            }
        }
    }

    /// Commit a step with a renewed lease. `Ok(false)`: the lease is gone.
    async fn advance(
        &self,
        row: &Delivery,
        lease: &Lease,
        state: DeliveryState,
    ) -> Result<bool, String> {
        let now = Utc::now();
        let until = now
            + chrono::Duration::from_std(lease.ttl)
                .unwrap_or_else(|_| chrono::Duration::seconds(60));
        match self
            .harness()
            .store()
            .advance_delivery(&row.id, &lease.owner, state, until, now)
            .await
        {
            Ok(Some(d)) => {
                self.harness().delivery_changed(&d);
                Ok(true)
            }
            Ok(None) => Ok(false),
            Err(err) => Err(format!("cannot record the delivery step: {err}")),
        }
    }

    async fn attempt(&self, row: &Delivery, lease: &Lease) -> Attempt {
        let h = self.harness();
        // At most a few rounds: a start racing ours ends in its live terminal.
        for _ in 0..3 {
            if let Some(session) = self.live(&row.task_id) {
                return self.write_live(row, lease, &session, &row.text).await;
            }
            if row.kind == DeliveryKind::Input && !row.resume {
                // Input is for the terminal it was sent to; it never starts an agent
                // (unless it is owed to a derived child or a parent: `resume`, D4).
                return Attempt::GaveUp("No active session".into());
            }
            // Under the start lock: a start in progress is not mistaken for a lost terminal.
            let view = {
                let _starting = self.inner.start_lock.lock().await;
                if self.live(&row.task_id).is_some() {
                    continue;
                }
                match h.get_task(&row.task_id).await {
                    Ok(v) => v,
                    Err(err) => return Attempt::Failed(err.to_string()),
                }
            };
            let Some(latest) = view.execution.clone() else {
                return Attempt::Failed("the task's agent never ran".into());
            };
            if matches!(
                latest.status,
                ExecutionStatus::Running | ExecutionStatus::Paused
            ) {
                // Live, but not in a terminal of ours: run by someone else.
                // Starting it here would make a second agent; try later.
                return Attempt::Failed(
                    "the agent is running without a terminal on this server".into(),
                );
            }
            if latest.status == ExecutionStatus::Stopped {
                // A person stopped the task after the answer: do not start it again.
                return Attempt::GaveUp("the task was stopped; its agent is not restarted".into());
            }
            match self.advance(row, lease, DeliveryState::Resuming).await {
                Ok(true) => {}
                Ok(false) => return Attempt::Lost,
                Err(err) => return Attempt::Failed(err),
            }
            let mode = self.resume_mode(&view, &latest).await;
            match self.start(&row.task_id, mode).await {
                Ok(_) => {}
                Err(CoreError::Conflict(_)) => continue,
                Err(err) => return Attempt::Failed(format!("cannot restart the agent: {err}")),
            }
            let Some(session) = self.live(&row.task_id) else {
                return Attempt::Failed("the restarted agent exited immediately".into());
            };
            // The restarted agent draws its screen first (see `resume`).
            super::resume::wait_until_drawn(&session).await;
            let text = if row.kind == DeliveryKind::Reply {
                let question = row.question.as_deref().unwrap_or_default();
                format!("{PREFIX_OPEN}{question}]\n{}", row.text)
            } else {
                row.text.clone()
            };
            return self.write_live(row, lease, &session, &text).await;
        }
        Attempt::Failed("the agent's terminal kept changing".into())
    }

    async fn write_live(
        &self,
        row: &Delivery,
        lease: &Lease,
        session: &Arc<PtySession>,
        text: &str,
    ) -> Attempt {
        let cfg = &self.inner.config;
        self.inner.registry.unpark(&row.task_id);
        if row.kind == DeliveryKind::Reply || row.resume {
            let mut boundary = session
                .wait_for_input_boundary(cfg.idle_quiet, Duration::ZERO)
                .await;
            if boundary == Boundary::TimedOut {
                match self
                    .advance(row, lease, DeliveryState::WaitingBoundary)
                    .await
                {
                    Ok(true) => {}
                    Ok(false) => return Attempt::Lost,
                    Err(err) => return Attempt::Failed(err),
                }
                boundary = session
                    .wait_for_input_boundary(cfg.idle_quiet, cfg.boundary_max)
                    .await;
            }
            if boundary == Boundary::Exited {
                return Attempt::Failed("the agent exited before the reply could be typed".into());
            }
        }
        if session.has_exited() {
            return Attempt::Failed("the agent exited before the text could be typed".into());
        }
        match self.advance(row, lease, DeliveryState::Writing).await {
            Ok(true) => {}
            Ok(false) => return Attempt::Lost,
            Err(err) => return Attempt::Failed(err),
        }
        let opts = InjectOptions {
            submit: row.submit,
            settle: cfg.settle,
            paste: PasteMode::Auto,
        };
        match session.inject(&row.id, text, opts).await {
            Ok(InjectOutcome::Written | InjectOutcome::AlreadyInjected) => Attempt::Delivered,
            Ok(InjectOutcome::InProgress) => {
                Attempt::Unverified("another write of this id was in progress".into())
            }
            Err(err) => Attempt::Unverified(format!("terminal write failed: {err}")),
        }
    }
}
