//! The screen after an answer (docs/evidence.md), for the question's receipt
//! ([`crate::receipt`]): captured [`HarnessConfig::answer_capture_after`]
//! after the answer was typed into the agent's terminal, the lines below
//! the answer's echo, redacted and bounded like the ask's own screen
//! ([`crate::evidence`]), stored once (`answer_screens`). Never logged:
//! only its length is.
//!
//! [`HarnessConfig::answer_capture_after`]: crate::service::HarnessConfig::answer_capture_after

use chrono::Utc;

use crate::asks::Asks;
use crate::{
    CoreResult,
    deliveries::{Delivery, DeliveryState},
    evidence::{self, RawScreen},
    redact,
    store::AnswerScreen,
};

/// The first lines the agent wrote after the answer: the redacted screen
/// below the last line that shows the answer's first line (the agent
/// echoes what was typed), else the whole screen; its first
/// [`evidence::DEFAULT_LINES`] lines without the blank ones at the bottom,
/// at most [`evidence::MAX_BYTES`]. `None` when nothing is left.
pub fn after_answer(screen: &RawScreen, extra_secrets: &[String], answer: &str) -> Option<String> {
    let secrets = evidence::secrets_of(screen, extra_secrets);
    let redacted = redact::redact(&screen.text, &secrets);
    let rows: Vec<&str> = redacted.lines().map(str::trim_end).collect();
    let needle = answer
        .lines()
        .map(str::trim)
        .find(|l| l.chars().count() >= 2)
        .map(|l| redact::redact(l, &secrets));
    let start = needle
        .and_then(|n| rows.iter().rposition(|r| r.contains(n.as_str())))
        .map_or(0, |i| i + 1);
    let below = &rows[start.min(rows.len())..];
    let used = below
        .iter()
        .rposition(|r| !r.is_empty())
        .map_or(0, |last| last + 1);
    let mut kept = String::new();
    for row in below[..used].iter().take(evidence::DEFAULT_LINES) {
        if kept.len() + row.len() + 1 > evidence::MAX_BYTES {
            break;
        }
        if !kept.is_empty() {
            kept.push('\n');
        }
        kept.push_str(row);
    }
    let kept = kept.trim_start_matches('\n').to_string();
    (!kept.trim().is_empty()).then_some(kept)
}

impl Asks<'_> {
    /// An answer was typed into its agent's terminal (`d` is DELIVERED):
    /// its screen is captured [`HarnessConfig::answer_capture_after`]
    /// later, in the background, when this process has the terminal.
    ///
    /// [`HarnessConfig::answer_capture_after`]: crate::service::HarnessConfig::answer_capture_after
    pub(crate) fn answer_typed(&self, d: &Delivery) {
        let Some(message_id) = d.message_id.clone() else {
            return;
        };
        if self.h.runtime().is_none() || d.state != DeliveryState::Delivered {
            return;
        }
        let (harness, delivery_id, task_id, text) = (
            self.h.clone(),
            d.id.clone(),
            d.task_id.clone(),
            d.text.clone(),
        );
        let delay = self.h.config().answer_capture_after;
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            if let Err(err) = harness
                .asks()
                .capture_answer_screen(&message_id, &delivery_id, &task_id, &text)
                .await
            {
                tracing::warn!(%err, %message_id, "the screen after the answer was not stored");
            }
        });
    }

    async fn capture_answer_screen(
        &self,
        message_id: &str,
        delivery_id: &str,
        task_id: &str,
        answer: &str,
    ) -> CoreResult<()> {
        let Some(raw) = self.h.runtime().and_then(|r| r.screen(task_id)) else {
            tracing::debug!(%message_id, "no terminal for the screen after the answer");
            return Ok(());
        };
        let task_env = match self.h.store().get_task(task_id).await? {
            Some(view) => redact::secret_env_values(&view.task.agent.env),
            None => return Ok(()),
        };
        let Some(screen) = after_answer(&raw, &task_env, answer) else {
            return Ok(());
        };
        let bytes = screen.len();
        let stored = self
            .h
            .store()
            .record_answer_screen(AnswerScreen {
                message_id: message_id.to_string(),
                delivery_id: delivery_id.to_string(),
                screen,
                captured_at: Utc::now(),
            })
            .await?;
        // Its length only: the screen never goes to a log.
        tracing::debug!(%message_id, bytes, stored, "screen after the answer");
        if stored {
            self.h.publish(crate::events::HarnessEvent::MessageChanged {
                id: message_id.to_string(),
                task_id: task_id.to_string(),
            });
        }
        Ok(())
    }
}
