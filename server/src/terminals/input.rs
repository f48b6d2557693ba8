//! Typing into a live terminal: a person's or agent's input, a keyed
//! delivery's text (at most once), and the text a delivery types.

use harness_core::{
    CoreError, CoreResult,
    model::Provider,
    store::Delivery,
    typed_text::{self, Typist},
};
use std::sync::Arc;

use harness_pty::{InjectOptions, PasteMode, PtySession};

use super::{InputResult, Terminals, forward};

impl Terminals {
    /// Type into the live terminal; with an idempotency key at most once.
    /// A person's text is typed as written (keys included); an agent's must
    /// be text its child's CLI reads as text (`typed_text::check_agent_input`).
    pub async fn input(
        &self,
        task_id: &str,
        text: &str,
        submit: bool,
        key: Option<&str>,
        typist: Typist,
    ) -> CoreResult<InputResult> {
        let task_id = harness_core::validate::task_id(Some(task_id))?;
        harness_core::validate::terminal_input(text, key)?;
        if typist == Typist::Person {
            // A person at the keyboard acts first: Harness's own planned
            // actions for the agent are off.
            self.harness()
                .agents()
                .cancel_agent_actions(&task_id, "a person typed into the terminal")
                .await?;
        }
        let checked;
        let text = match typist {
            Typist::Person => text,
            Typist::Agent => {
                let provider = self
                    .harness()
                    .tasks()
                    .get_task(&task_id)
                    .await?
                    .task
                    .agent
                    .provider;
                checked = typed_text::check_agent_input(provider, text)?;
                checked.as_str()
            }
        };
        // Owed to a derived child (its parent's decision): a durable delivery
        // that resumes the child first when its terminal is gone (docs/decisions.md D4).
        if self.live(&task_id).is_none()
            && let Some(out) = self.input_to_child(&task_id, text, submit, key).await?
        {
            return Ok(out);
        }
        let h = &self.inner.harness;
        // Keyed input for an agent whose terminal is on another node is that
        // node's work (its delivery row names the node; its worker types it).
        let elsewhere = key.is_some()
            && self.live(&task_id).is_none()
            && h.tasks().runs_on_another_node(&task_id).await?;
        // Unkeyed input for an agent on another live node: typed by it.
        if key.is_none()
            && self.session(&task_id).is_none()
            && let forward::Elsewhere::Forward(url) = self.elsewhere(&task_id).await?
        {
            return self.forward_input(&url, &task_id, text, submit).await;
        }
        let session = match self.session(&task_id) {
            _ if elsewhere => None,
            Some(session) if session.has_exited() => {
                return Err(CoreError::Conflict("Session has exited".into()));
            }
            Some(session) => Some(session),
            None => return Err(CoreError::NotFound("No active session".into())),
        };
        if let Some(key) = key {
            // Owed to the caller: a durable delivery row, done by the worker
            // exactly once; a repeated key never writes again.
            let events = h.subscribe();
            let (row, created) = h
                .deliveries()
                .enqueue_input(&task_id, text, submit, key)
                .await?;
            let row = if created {
                h.deliveries()
                    .wait_delivery(&row.id, h.config().delivery_wait, events)
                    .await?
                    .unwrap_or(row)
            } else {
                row
            };
            return Ok(InputResult {
                task_id,
                submitted: submit,
                deduped: !created,
                delivery: Some(harness_core::deliveries::status_word(row.state)),
                delivery_id: Some(row.id),
            });
        }
        let Some(session) = session else {
            return Err(CoreError::NotFound("No active session".into()));
        };
        self.type_into(&session, &task_id, text, submit).await
    }

    /// Unkeyed input from another node (its agent's terminal is here).
    pub async fn type_here(
        &self,
        task_id: &str,
        text: &str,
        submit: bool,
    ) -> CoreResult<InputResult> {
        let task_id = harness_core::validate::task_id(Some(task_id))?;
        harness_core::validate::terminal_input(text, None)?;
        match self.session(&task_id) {
            Some(session) if !session.has_exited() => {
                self.type_into(&session, &task_id, text, submit).await
            }
            Some(_) => Err(CoreError::Conflict("Session has exited".into())),
            None => Err(CoreError::NotFound("No active session".into())),
        }
    }

    /// The text of a delivery as it is typed: Harness's text is neutralised
    /// for the agent's CLI (`typed_text`); keyed terminal input was checked
    /// when it was queued. The provider unknown (the task unreadable), the
    /// strictest rule applies.
    pub(crate) async fn typed_text(&self, row: &Delivery, text: &str) -> String {
        if !typed_text::delivery_is_text(row) {
            return text.to_string();
        }
        let provider = match self.harness().tasks().get_task(&row.task_id).await {
            Ok(view) => view.task.agent.provider,
            Err(err) => {
                tracing::warn!(%err, task_id = %row.task_id, "provider unknown: typed as text for any terminal program");
                Provider::Command
            }
        };
        typed_text::neutralise(provider, text)
    }

    async fn type_into(
        &self,
        session: &Arc<PtySession>,
        task_id: &str,
        text: &str,
        submit: bool,
    ) -> CoreResult<InputResult> {
        let task_id = task_id.to_string();
        let opts = InjectOptions {
            submit,
            settle: self.inner.config.settle,
            paste: PasteMode::Auto,
        };
        session
            .send_input(text, opts)
            .await
            .map_err(|e| CoreError::Conflict(format!("terminal write failed: {e}")))?;
        if submit {
            self.note_hook(
                &task_id,
                None,
                harness_core::agent_state::HookEvent::UserPromptSubmit,
            )
            .await;
        }
        Ok(InputResult {
            task_id,
            submitted: submit,
            deduped: false,
            delivery_id: None,
            delivery: None,
        })
    }
}
