//! Several nodes on one database: what a node does with the
//! other nodes' events, and how a node knows a call comes from another node.
//!
//! The bus (`events::EventBus`; on PostgreSQL LISTEN/NOTIFY) delivers other
//! nodes' events to every subscriber like local ones — the live UI and the
//! caches need nothing more. [`run`] adds the reactions that are nobody's
//! subscription:
//!
//! * [`HarnessEvent::WorkQueued`]: another node queued work of a kind; this
//!   node's worker of that kind looks now (the row may be its own, e.g. a
//!   reply typed into a terminal here). Polling stays every worker's fallback.
//! * a setting written elsewhere ([`HarnessEvent::SettingChanged`]) moves
//!   [`Harness::settings_generation`], so caches keyed by it reload.
//! * [`HarnessEvent::UnattendedChanged`]: the task's signal file here follows
//!   (the hook of an agent on this node reads it here).
//! * [`HarnessEvent::NodeChanged`] naming this node: it re-reads its flag
//!   and starts or stops draining now (`crate::drain`; its heartbeat
//!   re-reads the flag too).
//! * [`HarnessEvent::Resync`] or a lagged subscription (events were lost):
//!   all of the above at once — generation moved, every worker woken, the
//!   signal directory reconciled from the database.
//!
//! Bounded (one subscription, no queue of its own), cancellable, and
//! restart-safe (it holds nothing: a missed wake is the poll's, a missed
//! signal file the next reconciliation's).

use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

use crate::{
    CoreError, CoreResult, Harness, HarnessEvent,
    gateway::signing::{self, SignedRequest},
    work::Kind,
};

/// The cluster service (`Harness::cluster`): the calls between nodes and
/// where an execution runs (here), the node registry and heartbeats
/// (`crate::nodes`), the recovery of a dead node's work
/// (`crate::nodes::recovery`), draining a node (`crate::drain`) and the
/// recovery of owed work left in flight (`crate::work::recovery`).
#[derive(Clone, Copy)]
pub struct Cluster<'h> {
    pub(crate) h: &'h Harness,
}

/// What one event (or a lost stretch of events: `None`) asks of this node.
pub async fn react(harness: &Harness, event: Option<&HarnessEvent>) {
    match event {
        Some(HarnessEvent::WorkQueued { kind }) => harness.wake_here(*kind),
        Some(HarnessEvent::SettingChanged { .. }) => harness.bump_settings_generation(),
        Some(HarnessEvent::NodeChanged { node_id, .. }) => {
            // The registry is the truth: a hint of a drain followed by an
            // undrain may arrive after the undrain was applied here.
            if *node_id == harness.config().node_id {
                harness.cluster().follow_drain().await;
            }
        }
        Some(HarnessEvent::UnattendedChanged { task_id, on }) => {
            if let Some(dir) = &harness.config().signal_dir
                && let Err(err) = crate::unattended::write_signal(dir, task_id, *on)
            {
                tracing::error!(%err, task_id, "cannot mirror another node's unattended switch");
            }
        }
        Some(HarnessEvent::Resync) | None => {
            harness.bump_settings_generation();
            for kind in Kind::ALL {
                harness.wake_here(kind);
            }
            if let Err(err) = harness.tasks().reconcile_signals().await {
                tracing::error!(error = ?err, "cannot reconcile unattended signal files");
            }
        }
        Some(_) => {}
    }
}

/// Run until `cancel`: react to every event on the bus.
pub async fn run(harness: Harness, cancel: CancellationToken) {
    let mut events = harness.subscribe();
    loop {
        let received = tokio::select! {
            () = cancel.cancelled() => break,
            received = events.recv() => received,
        };
        match received {
            Ok(event) => react(&harness, Some(&event)).await,
            Err(RecvError::Lagged(missed)) => {
                tracing::debug!(missed, "cluster relay lagged; reloading");
                react(&harness, None).await;
            }
            Err(RecvError::Closed) => break,
        }
    }
    tracing::debug!("cluster relay stopped");
}

impl Cluster<'_> {
    /// A node-to-node call: signed like a gateway request
    /// (`gateway::signing`) but with the node key, which only nodes have;
    /// its nonce remembered durably (a replay → 409). Without a node key
    /// configured every such call is refused (503).
    pub async fn accept_node_call(&self, req: &SignedRequest<'_>) -> CoreResult<()> {
        let now = chrono::Utc::now();
        let verified = signing::verify(req, self.h.config().node_key.as_deref(), now)?;
        let fresh = self
            .h
            .store()
            .remember_nonce(&verified.nonce, verified.remember_until, now)
            .await?;
        if !fresh {
            return Err(CoreError::Conflict(signing::REPLAYED.into()));
        }
        Ok(())
    }
}

/// Where a task's live execution runs, as this node must treat it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// No live execution: this node may act.
    Free,
    /// The live execution is this node's (or names no node).
    Here(crate::model::Execution),
    /// A node that heart-beats runs it: its work is forwarded to `url`.
    Node {
        node_id: String,
        url: String,
        execution: crate::model::Execution,
    },
    /// Its node stopped heart-beating: the agent is gone with it; the
    /// execution is interrupted like a restart's (OPEN asks stay answerable).
    DeadNode {
        node_id: String,
        execution: crate::model::Execution,
    },
    /// A live node this one cannot call (no URL registered) or a node the
    /// registry does not know: nothing is done in its place.
    Unreachable {
        node_id: String,
        execution: crate::model::Execution,
    },
}

impl Cluster<'_> {
    /// Where the task's agent runs (its live execution's node and that
    /// node's registry row). The one place the rule lives; the terminals
    /// forward, interrupt or refuse by it.
    pub async fn placement(&self, task_id: &str) -> CoreResult<Placement> {
        let Some(execution) = self.h.store().live_execution(task_id).await? else {
            return Ok(Placement::Free);
        };
        // A row without a node (written before nodes were recorded) is
        // treated as this node's, as it always was.
        let Some(node_id) = execution.node_id.clone() else {
            return Ok(Placement::Here(execution));
        };
        if node_id == self.h.config().node_id {
            return Ok(Placement::Here(execution));
        }
        Ok(match self.registry_row(&node_id).await? {
            Some((false, _)) => Placement::DeadNode { node_id, execution },
            Some((true, Some(url))) if !url.trim().is_empty() => Placement::Node {
                node_id,
                url,
                execution,
            },
            _ => Placement::Unreachable { node_id, execution },
        })
    }

    /// A node's registry row: whether it heart-beats (the database's
    /// clock), its URL.
    async fn registry_row(&self, node_id: &str) -> CoreResult<Option<(bool, Option<String>)>> {
        Ok(self.node(node_id).await?.map(|n| (n.alive, n.url)))
    }

    /// A live execution of a node that stopped heart-beating: FAILED
    /// (`interrupted`), as that node's own restart would have marked it.
    pub async fn interrupt_dead_node_execution(
        &self,
        task_id: &str,
        execution: &crate::model::Execution,
    ) -> CoreResult<bool> {
        self.h
            .tasks()
            .finish_execution(
                task_id,
                &execution.id,
                crate::model::ExecutionStatus::Failed,
                None,
                "interrupted",
            )
            .await
    }
}
