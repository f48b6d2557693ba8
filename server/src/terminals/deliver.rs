//! The PTY side of one delivery attempt: this node's agent terminals as the
//! core's [`DeliveryTerminals`] port. The attempt itself — which steps,
//! committed when, and how each ending maps to an outcome — is the core's
//! (`harness_core::delivery_attempt`); this module only translates between
//! it and the PTY layer (input boundary, injection ledger, restarts).

use std::{sync::Arc, time::Duration};

use async_trait::async_trait;
use harness_core::{
    CoreResult,
    agent_state::HookEvent,
    deliveries::Delivery,
    delivery_attempt::{Boundary, DeliveryTerminals, Found, Wait, Write},
    model::{Execution, TaskView},
    work::{Lease, Outcome},
};
use harness_pty::{InjectOptions, InjectOutcome, PasteMode, PtySession};

use super::Terminals;

#[async_trait]
impl DeliveryTerminals for Terminals {
    type Session = Arc<PtySession>;

    fn live(&self, task_id: &str) -> Option<Arc<PtySession>> {
        Terminals::live(self, task_id)
    }

    async fn live_or_task(&self, task_id: &str) -> CoreResult<Found<Arc<PtySession>>> {
        let _starting = self.inner.start_lock.lock().await;
        if let Some(session) = Terminals::live(self, task_id) {
            return Ok(Found::Live(session));
        }
        Ok(Found::NotLive(Box::new(
            self.harness().tasks().get_task(task_id).await?,
        )))
    }

    async fn start_again(&self, view: &TaskView, latest: &Execution) -> CoreResult<Execution> {
        let mode = self.resume_mode(view, latest).await;
        self.start(&view.task.id, mode).await
    }

    async fn wait_until_ready(
        &self,
        view: &TaskView,
        started: &Execution,
        session: &Arc<PtySession>,
    ) {
        Terminals::wait_until_ready(
            self,
            &view.task.id,
            &started.id,
            view.task.agent.provider,
            session,
        )
        .await;
    }

    async fn typed_text(&self, row: &Delivery, text: &str) -> String {
        Terminals::typed_text(self, row, text).await
    }

    fn unpark(&self, task_id: &str) {
        self.inner.registry.unpark(task_id);
    }

    async fn boundary(&self, session: &Arc<PtySession>, wait: Wait) -> Boundary {
        let cfg = &self.inner.config;
        let max = match wait {
            Wait::Now => Duration::ZERO,
            Wait::Patient => cfg.boundary_max,
        };
        match session.wait_for_input_boundary(cfg.idle_quiet, max).await {
            harness_pty::Boundary::TurnComplete | harness_pty::Boundary::Idle => Boundary::Reached,
            harness_pty::Boundary::TimedOut => Boundary::TimedOut,
            harness_pty::Boundary::Exited => Boundary::Exited,
        }
    }

    fn has_exited(&self, session: &Arc<PtySession>) -> bool {
        session.has_exited()
    }

    async fn write(&self, session: &Arc<PtySession>, row: &Delivery, text: &str) -> Write {
        let opts = InjectOptions {
            submit: row.submit,
            settle: self.inner.config.settle,
            paste: PasteMode::Auto,
        };
        // The CLI whose submit key is confirmed, and whether its box shows
        // before the typing (`submit.rs`).
        let confirm = match row.submit {
            true => self
                .submit_cli(row)
                .await
                .map(|cli| (cli, super::submit::box_before(session, cli))),
            false => None,
        };
        let typed = session.inject(&row.id, text, opts).await;
        if row.submit && matches!(typed, Ok(InjectOutcome::Written)) {
            // A submitted prompt starts a turn (as UserPromptSubmit would).
            self.note_hook(&row.task_id, None, HookEvent::UserPromptSubmit)
                .await;
            if let Some((cli, boxed)) = confirm {
                let pressed = super::submit::confirm(session, cli, text, boxed).await;
                if pressed > 0 {
                    tracing::info!(task_id = %row.task_id, delivery_id = %row.id, pressed, "the submit key was pressed again");
                }
            }
        }
        match typed {
            Ok(InjectOutcome::Written) => Write::Written,
            Ok(InjectOutcome::AlreadyInjected) => Write::AlreadyWritten,
            Ok(InjectOutcome::InProgress) => Write::InProgress,
            Err(err) => Write::Failed(err.to_string()),
        }
    }
}

impl Terminals {
    /// The CLI of `row`'s task whose submit key a delivery confirms
    /// (Claude Code or Codex), if any.
    async fn submit_cli(&self, row: &Delivery) -> Option<harness_core::agent_state::Cli> {
        match self.harness().tasks().get_task(&row.task_id).await {
            Ok(view) => harness_core::agent_state::Cli::of(view.task.agent.provider),
            Err(err) => {
                tracing::debug!(error = ?err, task_id = %row.task_id, "no task to confirm the submit key for");
                None
            }
        }
    }

    /// One attempt at `row` (the delivery worker's runner), run by the core.
    pub(crate) async fn attempt_delivery(&self, row: &Delivery, lease: &Lease) -> Option<Outcome> {
        self.harness()
            .deliveries()
            .attempt_delivery(self, row, lease)
            .await
    }
}
