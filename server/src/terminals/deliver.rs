//! One attempt at one delivery row (claimed by the worker in
//! `crate::workers::deliveries`): type it into the task's live terminal at an
//! input boundary, or — for a reply whose terminal is gone — start the agent
//! again with its provider's resume mode and type the reply prefixed with
//! the question (docs/decisions.md D3, docs/decisions.md D5, D6), once the restarted agent accepts
//! input (`super::ready`). Every step is committed on the row
//! first (WAITING_BOUNDARY, RESUMING, WRITING); WRITING is committed before
//! the bytes go out, so a crash mid-write leaves an UNVERIFIED row, never a
//! second write.

use std::{sync::Arc, time::Duration};

use harness_core::{
    CoreError,
    agent_state::HookEvent,
    deliveries::{self, Delivery, DeliveryKind, DeliveryState},
    work::{Lease, Outcome},
};
use harness_pty::{Boundary, InjectOptions, InjectOutcome, PasteMode, PtySession};

use super::{PREFIX_OPEN, Terminals};

/// How one attempt ended: an outcome for the core to commit, or `None` —
/// the lease is gone (somebody else owns the row now).
type Attempt = Option<Outcome>;

impl Terminals {
    /// Commit a step before its side effect. `Ok(false)`: the lease is gone.
    async fn advance(
        &self,
        row: &Delivery,
        lease: &Lease,
        state: DeliveryState,
    ) -> Result<bool, String> {
        self.harness()
            .advance_delivery(row, lease, state)
            .await
            .map_err(|err| format!("cannot record the delivery step: {err}"))
    }

    /// One attempt at `row` (the delivery worker's runner): its steps are
    /// committed through the core before their side effects; how it ended
    /// is the worker's to record (`Harness::settle_and_claim_deliveries`).
    pub(crate) async fn attempt_delivery(&self, row: &Delivery, lease: &Lease) -> Attempt {
        let h = self.harness();
        // At most a few rounds: a start racing ours ends in its live terminal.
        for _ in 0..3 {
            if let Some(session) = self.live(&row.task_id) {
                return self.write_live(row, lease, &session, &row.text).await;
            }
            // Under the start lock: a start in progress is not mistaken for a lost terminal.
            let view = {
                let _starting = self.inner.start_lock.lock().await;
                if self.live(&row.task_id).is_some() {
                    continue;
                }
                match h.get_task(&row.task_id).await {
                    Ok(v) => v,
                    Err(err) => return Some(Outcome::Retry(err.to_string())),
                }
            };
            // The rule (input never starts an agent, a live execution elsewhere
            // waits, a stopped task stays stopped) is the core's.
            let latest = match deliveries::resume_rule(row, view.execution.as_ref()) {
                Ok(latest) => latest.clone(),
                Err(outcome) => return Some(outcome),
            };
            // A draining node starts no agent (a resume): the row goes to another node
            // (unbound at its next heartbeat, `Harness::follow_drain`).
            if h.draining() {
                return Some(Outcome::Retry(
                    "this node is draining: another node starts the agent".into(),
                ));
            }
            match self.advance(row, lease, DeliveryState::Resuming).await {
                Ok(true) => {}
                Ok(false) => return None,
                Err(err) => return Some(Outcome::Retry(err)),
            }
            let mode = self.resume_mode(&view, &latest).await;
            let started = match self.start(&row.task_id, mode).await {
                Ok(execution) => execution,
                Err(CoreError::Conflict(_)) => continue,
                Err(err) => {
                    return Some(Outcome::Retry(format!("cannot restart the agent: {err}")));
                }
            };
            let Some(session) = self.live(&row.task_id) else {
                return Some(Outcome::Retry(
                    "the restarted agent exited immediately".into(),
                ));
            };
            // Typed only once the restarted agent reads keys (`ready`).
            self.wait_until_ready(
                &row.task_id,
                &started.id,
                view.task.agent.provider,
                &session,
            )
            .await;
            let text = if row.kind == DeliveryKind::Reply {
                let question = row.question.as_deref().unwrap_or_default();
                format!("{PREFIX_OPEN}{question}]\n{}", row.text)
            } else {
                row.text.clone()
            };
            return self.write_live(row, lease, &session, &text).await;
        }
        Some(Outcome::Retry("the agent's terminal kept changing".into()))
    }

    async fn write_live(
        &self,
        row: &Delivery,
        lease: &Lease,
        session: &Arc<PtySession>,
        text: &str,
    ) -> Attempt {
        let text = &self.typed_text(row, text).await;
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
                    Ok(false) => return None,
                    Err(err) => return Some(Outcome::Retry(err)),
                }
                boundary = session
                    .wait_for_input_boundary(cfg.idle_quiet, cfg.boundary_max)
                    .await;
            }
            if boundary == Boundary::Exited {
                return Some(Outcome::Retry(
                    "the agent exited before the reply could be typed".into(),
                ));
            }
        }
        if session.has_exited() {
            return Some(Outcome::Retry(
                "the agent exited before the text could be typed".into(),
            ));
        }
        match self.advance(row, lease, DeliveryState::Writing).await {
            Ok(true) => {}
            Ok(false) => return None,
            Err(err) => return Some(Outcome::Retry(err)),
        }
        let opts = InjectOptions {
            submit: row.submit,
            settle: cfg.settle,
            paste: PasteMode::Auto,
        };
        let typed = session.inject(&row.id, text, opts).await;
        if row.submit && matches!(typed, Ok(InjectOutcome::Written)) {
            // A submitted prompt starts a turn (as UserPromptSubmit would).
            self.note_hook(&row.task_id, None, HookEvent::UserPromptSubmit)
                .await;
        }
        Some(match typed {
            Ok(InjectOutcome::Written | InjectOutcome::AlreadyInjected) => Outcome::Done,
            Ok(InjectOutcome::InProgress) => {
                Outcome::Unverified("another write of this id was in progress".into())
            }
            Err(err) => Outcome::Unverified(format!("terminal write failed: {err}")),
        })
    }
}
