//! The inbox worker (issue 14): follows workbench batch deliveries, returns
//! expired claims to PENDING (at start-up at once for this node's earlier
//! boots, then periodically), and drains a parent's inbox when its live
//! terminal is at a provider-confirmed turn end (the boundary latch: the
//! Stop hook opens it, any submitted input closes it) and no batch of it is
//! on its way. Woken in-process (`harness_core::work::Kind::Inbox`) by a new
//! event and by the Stop hook's turn end; a short poll is the fallback. The rules live in `harness_core::inbox`.

use std::time::Duration;

use harness_core::{Harness, model::ExecutionStatus, work::Kind};
use tokio_util::sync::CancellationToken;

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

/// Run until `cancel`.
pub async fn run(terminals: Terminals, poll: Duration, cancel: CancellationToken) {
    let harness = terminals.harness().clone();
    let wake = harness.waker(Kind::Inbox);
    if let Err(err) = harness.maintain_inbox(true).await {
        tracing::error!(error = ?err, "cannot recover workbench claims at start-up");
    }
    loop {
        if let Err(err) = tick(&terminals).await {
            tracing::error!(error = ?err, "inbox worker tick failed");
        }
        tokio::select! {
            () = cancel.cancelled() => break,
            () = wake.notified() => {}
            () = tokio::time::sleep(poll) => {}
        }
    }
    tracing::info!("inbox worker stopped");
}

async fn tick(terminals: &Terminals) -> harness_core::CoreResult<()> {
    let h = terminals.harness();
    h.maintain_inbox(false).await?;
    for parent in h.inbox_parents_pending().await? {
        let Some(session) = terminals.live(&parent) else {
            continue; // events wait, PENDING, until the parent runs
        };
        if !session.turn_complete() || h.inbox_batch_in_flight(&parent).await? {
            continue;
        }
        let execution = h.live_execution(&parent).await?;
        match h
            .drain_inbox(&parent, execution.as_ref().map(|e| e.id.as_str()))
            .await
        {
            Ok(_) => {}
            Err(err) => {
                tracing::warn!(error = ?err, parent_task_id = %parent, "cannot drain the inbox");
            }
        }
    }
    Ok(())
}
