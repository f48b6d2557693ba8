//! The inbox worker (issue 14): follows workbench batch deliveries, returns
//! expired claims to PENDING (at start-up at once for this node's earlier
//! boots, then periodically), and drains a parent's inbox when its live
//! terminal is at a provider-confirmed turn end (the boundary latch: the
//! Stop hook opens it, any submitted input closes it) and no batch of it is
//! on its way. Woken in-process (`harness_core::work::Kind::Inbox`) by a new
//! event and by the Stop hook's turn end; a short poll is the fallback. The rules live in `harness_core::inbox`.

use std::{future::Future, time::Duration};

use harness_core::{
    CoreResult, Harness,
    model::ExecutionStatus,
    work::{Kind, Outcome},
};
use tokio_util::sync::CancellationToken;

use super::engine::{self, Queue, Worker};
use crate::terminals::Terminals;

/// The execution-exit producer: a derived child's exit is an event in its
/// parent's inbox (FAILED always; COMPLETED only without a stop-hook review).
pub async fn on_exit(
    harness: &Harness,
    task_id: &str,
    execution_id: &str,
    status: ExecutionStatus,
    code: Option<i64>,
) {
    match harness
        .record_child_exit(task_id, execution_id, status, code)
        .await
    {
        // A new event woke the worker (`Harness::add_event`).
        Ok(_) => {}
        Err(err) => {
            tracing::error!(error = ?err, task_id, execution_id, "cannot record the child's exit in its parent's inbox");
        }
    }
}

/// The inbox kind on the worker skeleton. Its "rows" are parents ready for
/// a batch: pending events, a live terminal at a provider-confirmed turn end
/// and no batch of theirs on its way. The events themselves are leased by
/// the attempt (`Harness::drain_inbox` claims them and stores the batch
/// with its delivery row in one transaction); the batch is then typed by the
/// delivery worker, and its outcome reaches the events through the turn's
/// upkeep (`Harness::maintain_inbox`).
struct InboxQueue {
    terminals: Terminals,
}

impl Queue for InboxQueue {
    type Row = String;
    type Outcome = Outcome;
    const KIND: Kind = Kind::Inbox;

    fn id(parent: &String) -> &str {
        parent
    }

    fn serial_key(parent: &String) -> Option<&str> {
        Some(parent)
    }

    fn lease_until(_parent: &String) -> Option<chrono::DateTime<chrono::Utc>> {
        None
    }

    fn span(parent: &String) -> tracing::Span {
        tracing::info_span!("inbox", parent_task_id = %parent)
    }

    /// Follow batch deliveries and expired claims, then list the parents
    /// ready now (nothing of the inbox is recorded per attempt).
    fn turn(
        &self,
        _done: Vec<(String, Outcome)>,
        _released: Vec<String>,
        limit: u32,
    ) -> impl Future<Output = CoreResult<Vec<String>>> + Send + 'static {
        let terminals = self.terminals.clone();
        async move {
            let h = terminals.harness();
            h.maintain_inbox(false).await?;
            if limit == 0 {
                return Ok(Vec::new());
            }
            let mut ready = Vec::new();
            for parent in h.inbox_parents_pending().await? {
                if ready.len() >= limit as usize {
                    break;
                }
                let Some(session) = terminals.live(&parent) else {
                    continue; // events wait, PENDING, until the parent runs
                };
                if session.turn_complete() && !h.inbox_batch_in_flight(&parent).await? {
                    ready.push(parent);
                }
            }
            Ok(ready)
        }
    }

    /// The batch injector: drain the parent's inbox into one batch.
    fn attempt(&self, parent: String) -> impl Future<Output = Option<Outcome>> + Send + 'static {
        let h = self.terminals.harness().clone();
        async move {
            let execution = match h.live_execution(&parent).await {
                Ok(execution) => execution,
                Err(err) => return Some(Outcome::Retry(err.to_string())),
            };
            match h
                .drain_inbox(&parent, execution.as_ref().map(|e| e.id.as_str()))
                .await
            {
                Ok(_) => Some(Outcome::Done),
                Err(err) => {
                    tracing::warn!(error = ?err, parent_task_id = %parent, "cannot drain the inbox");
                    Some(Outcome::Retry(err.to_string()))
                }
            }
        }
    }
}

/// Run until `cancel`: at start-up this node's earlier boots' claims go back
/// to PENDING at once, then the skeleton runs (`poll` is its fallback).
pub async fn run(terminals: Terminals, poll: Duration, cancel: CancellationToken) {
    let harness = terminals.harness().clone();
    if let Err(err) = harness.maintain_inbox(true).await {
        tracing::error!(error = ?err, "cannot recover workbench claims at start-up");
    }
    let config = engine::WorkerConfig {
        poll,
        max_in_flight: 4,
        ..engine::WorkerConfig::default()
    };
    Worker::new(InboxQueue { terminals }, config)
        .run(harness.waker(Kind::Inbox), cancel)
        .await;
}
