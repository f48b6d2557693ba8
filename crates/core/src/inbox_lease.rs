//! The inbox's lease receipts and the input owed to a derived child (issue
//! 14, docs/tower-workbench.md §2.8): `ack_workbench_batch` /
//! `heartbeat_workbench_batch` / `resolve_workbench_batch` by the parent's
//! agent, and the parent's decision queued for a child whose terminal may be
//! gone (resumed first, docs/decisions.md D4).

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::deliveries::Deliveries;
use crate::{
    CoreError, CoreResult,
    deliveries::Delivery,
    events::HarnessEvent,
    ids,
    inbox::{BatchState, PROCESSING_LEASE, chrono_of},
    validate,
};

impl Deliveries<'_> {
    /// `ack_workbench_batch` / `heartbeat_workbench_batch` /
    /// `resolve_workbench_batch` by the parent's agent (bound to its task).
    pub async fn batch_transition(
        &self,
        parent_task_id: &str,
        batch_id: &str,
        lease_token: &str,
        action: BatchAction,
    ) -> CoreResult<BatchTransition> {
        let batch_id = validate::cuid("batchId", batch_id.trim())?;
        let lease_token = lease_token.trim();
        if lease_token.is_empty() || lease_token.chars().count() > validate::MAX_BATCH_ARG_CHARS {
            return Err(CoreError::invalid(
                "leaseToken",
                format!(
                    "leaseToken must be 1..{} characters",
                    validate::MAX_BATCH_ARG_CHARS
                ),
            ));
        }
        let batch = self
            .h
            .store()
            .get_workbench_batch(&batch_id)
            .await?
            .ok_or_else(|| CoreError::NotFound(format!("Unknown Workbench batch: {batch_id}")))?;
        if batch.parent_task_id != parent_task_id {
            return Err(CoreError::Forbidden(format!(
                "Workbench batch {batch_id} belongs to a different parent task"
            )));
        }
        let count = batch.event_ids.len();
        if batch.state == BatchState::Resolved && action != BatchAction::Heartbeat {
            return Ok(BatchTransition {
                batch_id,
                state: BatchState::Resolved.as_str().to_string(),
                no_op: true,
                event_count: count,
                lease_expires_at: None,
            });
        }
        let now = Utc::now();
        if batch.lease_token.as_deref() != Some(lease_token.trim()) {
            return Err(CoreError::Conflict(format!(
                "Workbench batch {batch_id} lease token is stale"
            )));
        }
        if batch.lease_expires_at.is_none_or(|t| t <= now) {
            return Err(CoreError::Conflict(format!(
                "Workbench batch {batch_id} lease has expired"
            )));
        }
        let processing = now + chrono_of(PROCESSING_LEASE);
        let (from, to, until): (&[BatchState], BatchState, Option<DateTime<Utc>>) = match action {
            BatchAction::Ack => (
                &[BatchState::Dispatched, BatchState::Acked],
                BatchState::Acked,
                Some(processing),
            ),
            BatchAction::Heartbeat => (&[BatchState::Acked], BatchState::Acked, Some(processing)),
            BatchAction::Resolve => (&[BatchState::Acked], BatchState::Resolved, None),
        };
        let no_op = action == BatchAction::Ack && batch.state == BatchState::Acked;
        match self
            .h
            .store()
            .transition_workbench_batch(&batch_id, from, to, lease_token.trim(), until, now)
            .await?
        {
            Some(b) => {
                self.h.publish(HarnessEvent::TaskChanged {
                    task_id: b.parent_task_id.clone(),
                });
                Ok(BatchTransition {
                    state: b.state.as_str().to_string(),
                    batch_id: b.id,
                    no_op,
                    event_count: count,
                    lease_expires_at: Some(b.lease_expires_at),
                })
            }
            None => Err(CoreError::Conflict(format!(
                "Workbench batch {batch_id} is {}, not {}",
                batch.state.as_str(),
                from.iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(" or ")
            ))),
        }
    }
}

impl Deliveries<'_> {
    /// Input owed to a derived child (its parent's decision): a delivery row
    /// that resumes the child when its terminal is gone. Returns the row and
    /// whether this call created it (`false`: a duplicate of the key).
    pub async fn enqueue_child_input(
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
            .enqueue_input(crate::store::NewInput {
                id: ids::new_id(),
                task_id,
                node_id,
                text: text.to_string(),
                submit,
                dedup_key: key.to_string(),
                resume: true,
                now: Utc::now(),
            })
            .await?;
        if created {
            self.delivery_changed(&row);
            self.wake_deliveries();
        }
        Ok((row, created))
    }
}

/// An agent's transition of a batch it was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchAction {
    Ack,
    Heartbeat,
    Resolve,
}

/// A batch after an agent's transition (`batch_transition`): the MCP
/// tools' and the internal route's answer.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchTransition {
    pub batch_id: String,
    /// `DISPATCHED`, `ACKED` or `RESOLVED`.
    pub state: String,
    /// The transition had already happened (a repeated ack, a resolved
    /// batch): nothing changed.
    pub no_op: bool,
    /// Events in the batch.
    pub event_count: usize,
    /// The processing lease's end after the transition (`null` once
    /// resolved); left out when an already resolved batch is acted on.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Option<Option<String>>"))]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, nullable))]
    pub lease_expires_at: Option<Option<DateTime<Utc>>>,
}
