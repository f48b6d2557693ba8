//! The inbox worker: follows workbench batch deliveries, returns expired
//! claims to PENDING through the engine's recovery pass (at start-up at once
//! for this node's earlier boots, then in its upkeep), and drains a parent's
//! inbox when its live terminal is at a provider-confirmed turn end (the
//! boundary latch: the Stop hook opens it, any submitted input closes it)
//! and no batch of it is on its way. Woken in-process
//! (`harness_core::work::Kind::Inbox`) by a new event and by the Stop hook's
//! turn end; a short poll is the fallback. The rules live in
//! `harness_core::inbox` and `harness_core::inbox_ready`.
//! A Workbench with gateway requests waiting and no live terminal is started
//! idle when the core says so (`WorkbenchStarter`: the readiness rule and
//! the durable, cluster-wide start throttle are `harness_core::inbox_ready`);
//! the upkeep, at start-up and every 30 s, is the gateway requests'
//! recovery (`harness_core::gateway::recovery`).

use std::{future::Future, time::Duration};

use harness_core::{
    CoreResult, Harness,
    inbox_ready::Terminal,
    model::ExecutionStatus,
    work::{Kind, Outcome, Scope},
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
        .deliveries()
        .record_child_exit(task_id, execution_id, status, code)
        .await
    {
        // A new event woke the worker (`Deliveries::add_event`).
        Ok(_) => {}
        Err(err) => {
            tracing::error!(error = ?err, task_id, execution_id, "cannot record the child's exit in its parent's inbox");
        }
    }
}

/// The inbox kind on the worker skeleton. Its "rows" are parents ready for
/// a batch (the core's readiness rule, `Deliveries::inbox_ready_parents`). The
/// events themselves are claimed by the attempt (`Deliveries::drain_inbox`:
/// the engine's claim, the batch stored with its delivery row in one
/// transaction); the batch is then typed by the delivery worker, and its
/// outcome reaches the events through the turn's upkeep
/// (`Deliveries::maintain_inbox`).
struct InboxQueue {
    terminals: Terminals,
    starter: WorkbenchStarter,
}

/// How often the upkeep recovers gateway requests (docs/tower-messaging.md §8.13).
const RECOVER_EVERY: Duration = Duration::from_secs(30);

/// Starts the Workbenches the core says are due
/// (`Deliveries::workbench_start_due`: wanted, and the durable throttle's
/// turn taken), beside the worker's loop; a start that fails notes its
/// reason on the waiting requests (`Gateway::workbench_start_failed`).
#[derive(Clone)]
struct WorkbenchStarter {
    terminals: Terminals,
}

impl WorkbenchStarter {
    /// Start `task_id` if the core says its start is due.
    async fn consider(&self, task_id: &str) -> CoreResult<()> {
        let h = self.terminals.harness();
        let running = self.terminals.live(task_id).is_some();
        if !h.deliveries().workbench_start_due(task_id, running).await? {
            return Ok(());
        }
        let (terminals, task_id) = (self.terminals.clone(), task_id.to_string());
        tokio::spawn(async move {
            match terminals.start_idle(&task_id).await {
                Ok(execution) => {
                    tracing::info!(task_id, execution_id = %execution.id,
                        "Workbench started for the gateway requests waiting for it");
                }
                // A start racing this one: its terminal serves the requests.
                Err(harness_core::CoreError::Conflict(why))
                    if terminals.live(&task_id).is_some() =>
                {
                    tracing::debug!(task_id, why, "the Workbench is already running");
                }
                Err(err) => {
                    let reason = err.client_message();
                    tracing::warn!(
                        task_id,
                        reason,
                        "cannot start the Workbench for the gateway requests waiting for it"
                    );
                    if let Err(err) = terminals
                        .harness()
                        .gateway()
                        .workbench_start_failed(&task_id, &reason)
                        .await
                    {
                        tracing::error!(error = ?err, task_id, "cannot note the Workbench's start failure");
                    }
                }
            }
        });
        Ok(())
    }

    /// The upkeep: claims whose lease ended are PENDING again (the engine's
    /// recovery pass); then (docs/tower-workbench.md §8.13) stuck gateway
    /// requests are brought forward and the Workbenches still wanted started.
    async fn recover(&self) {
        let h = self.terminals.harness();
        if let Err(err) = h.cluster().recover_work(Kind::Inbox, Scope::Expired).await {
            tracing::error!(error = ?err, "cannot recover expired workbench claims");
        }
        // Any node recovers them: a draining node leaves it to the others.
        if h.cluster().draining() {
            return;
        }
        // Claims' ages by the database's clock (`Cluster::db_now`).
        let now = match h.cluster().db_now().await {
            Ok(now) => now,
            Err(err) => {
                tracing::warn!(error = ?err, "cannot read the database's clock; upkeep skipped");
                return;
            }
        };
        match h.gateway().recover_gateway_inbound(now).await {
            Ok(recovery) => {
                for wb in &recovery.workbenches {
                    if let Err(err) = self.consider(wb).await {
                        tracing::warn!(error = ?err, task_id = %wb, "cannot start the Workbench");
                    }
                }
            }
            Err(err) => tracing::error!(error = ?err, "cannot recover gateway requests"),
        }
    }
}

impl Queue for InboxQueue {
    type Row = String;
    type Outcome = Outcome;
    const NAME: &'static str = "inbox";

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

    /// Follow batch deliveries, then list the parents ready now (nothing of
    /// the inbox is recorded per attempt).
    fn turn(
        &self,
        _done: Vec<(String, Outcome)>,
        _released: Vec<String>,
        limit: u32,
    ) -> impl Future<Output = CoreResult<Vec<String>>> + Send + 'static {
        let (terminals, starter) = (self.terminals.clone(), self.starter.clone());
        async move {
            let h = terminals.harness();
            h.deliveries().maintain_inbox(false).await?;
            if limit == 0 {
                return Ok(Vec::new());
            }
            let parents = h
                .deliveries()
                .inbox_ready_parents(limit as usize, |parent| match terminals.live(parent) {
                    None => Terminal::NotRunning,
                    Some(session) if session.turn_complete() => Terminal::AtTurnEnd,
                    Some(_) => Terminal::Busy,
                })
                .await?;
            // Events wait, PENDING, until the parent runs; a Workbench is
            // started for its gateway requests.
            for parent in &parents.not_running {
                if let Err(err) = starter.consider(parent).await {
                    tracing::warn!(error = ?err, parent_task_id = %parent, "cannot decide on the Workbench's start");
                }
            }
            Ok(parents.ready)
        }
    }

    /// The batch injector: drain the parent's inbox into one batch.
    fn attempt(&self, parent: String) -> impl Future<Output = Option<Outcome>> + Send + 'static {
        let h = self.terminals.harness().clone();
        async move {
            let execution = match h.tasks().live_execution(&parent).await {
                Ok(execution) => execution,
                Err(err) => return Some(Outcome::Retry(err.to_string())),
            };
            match h
                .deliveries()
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

    /// At start-up (the skeleton's first upkeep runs at once: the requests
    /// a stop left waiting) and every [`RECOVER_EVERY`]: expired claims and
    /// the gateway requests' recovery.
    fn maintain(&self) -> impl Future<Output = ()> + Send + 'static {
        let starter = self.starter.clone();
        async move { starter.recover().await }
    }
}

/// Run until `cancel`: at start-up this node's earlier boots' claims go back
/// to PENDING at once, then the skeleton runs (`poll` is its fallback).
pub async fn run(terminals: Terminals, poll: Duration, cancel: CancellationToken) {
    let harness = terminals.harness().clone();
    if let Err(err) = harness.deliveries().maintain_inbox(true).await {
        tracing::error!(error = ?err, "cannot recover workbench claims at start-up");
    }
    let starter = WorkbenchStarter {
        terminals: terminals.clone(),
    };
    let config = engine::WorkerConfig {
        poll,
        max_in_flight: 4,
        maintain_every: RECOVER_EVERY,
        ..engine::WorkerConfig::default()
    };
    Worker::new(InboxQueue { terminals, starter }, config)
        .run(harness.waker(Kind::Inbox), cancel)
        .await;
}
