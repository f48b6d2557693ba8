//! Input owed to a derived child whose terminal is gone (docs/decisions.md D4): the
//! parent's decision is a durable delivery row with `resume`, so the
//! delivery worker resumes the child first and types it once it is ready.

use harness_core::{CoreResult, deliveries};

use super::{InputResult, Terminals};

impl Terminals {
    /// `None` when the task is not a derived child (the caller then reports
    /// the missing terminal as before).
    pub(super) async fn input_to_child(
        &self,
        task_id: &str,
        text: &str,
        submit: bool,
        key: Option<&str>,
    ) -> CoreResult<Option<InputResult>> {
        let h = self.harness();
        let view = h.tasks().get_task(task_id).await?;
        if view.task.parent_task_id.is_none() || view.execution.is_none() {
            return Ok(None);
        }
        let key = key
            .map(str::to_string)
            .unwrap_or_else(harness_core::ids::new_id);
        let events = h.subscribe();
        let (row, created) = h
            .deliveries()
            .enqueue_child_input(task_id, text, submit, &key)
            .await?;
        let row = if created {
            h.deliveries()
                .wait_delivery(&row.id, h.config().delivery_wait, events)
                .await?
                .unwrap_or(row)
        } else {
            row
        };
        Ok(Some(InputResult {
            task_id: task_id.to_string(),
            submitted: submit,
            deduped: !created,
            delivery: Some(deliveries::status_word(row.state)),
            delivery_id: Some(row.id),
        }))
    }
}
