//! Timed automatic actions on the worker skeleton (`engine.rs`): due
//! `agent_actions` rows of this node (a key pressed in its terminal) or of
//! no node are leased when their time comes, each attempt is
//! `Terminals::perform_action`, and the core records the outcome with the
//! next turn (`Agents::settle_and_claim_actions`). The claim starts the
//! attempt, so a leased row counts as started: the rows an earlier boot of
//! this node left RUNNING, and rows whose lease ended, become UNVERIFIED
//! (at start-up and in the upkeep) — an action is never done twice. One
//! action per task at a time.

use std::{future::Future, time::Duration};

use harness_core::{
    CoreResult,
    agent_actions::{ActionOutcome, AgentAction},
    work::{AGENT_ACTIONS, Kind, Scope},
};
use tokio_util::sync::CancellationToken;

use super::engine::{self, Queue, Worker};
use crate::terminals::Terminals;

struct ActionQueue {
    terminals: Terminals,
    owner: String,
    node: String,
    lease: chrono::Duration,
}

impl Queue for ActionQueue {
    type Row = AgentAction;
    type Outcome = ActionOutcome;
    const NAME: &'static str = "agent_actions";

    fn id(row: &AgentAction) -> &str {
        &row.id
    }

    fn serial_key(row: &AgentAction) -> Option<&str> {
        Some(&row.task_id)
    }

    fn lease_until(row: &AgentAction) -> Option<chrono::DateTime<chrono::Utc>> {
        row.lease_expires_at
    }

    fn span(row: &AgentAction) -> tracing::Span {
        tracing::info_span!("agent_action", action_id = %row.id, task_id = %row.task_id,
            action = row.action.as_str(), reason = row.reason.as_str(), attempt = row.attempts)
    }

    /// A draining node leaves them to the others (its agents move too).
    fn takes_new_work(&self) -> bool {
        !self.terminals.harness().cluster().draining()
    }

    fn turn(
        &self,
        done: Vec<(AgentAction, ActionOutcome)>,
        released: Vec<String>,
        limit: u32,
    ) -> impl Future<Output = CoreResult<Vec<AgentAction>>> + Send + 'static {
        let h = self.terminals.harness().clone();
        let (owner, node, lease) = (self.owner.clone(), self.node.clone(), self.lease);
        async move {
            h.agents()
                .settle_and_claim_actions(&owner, &node, done, released, lease, limit)
                .await
        }
    }

    fn attempt(
        &self,
        row: AgentAction,
    ) -> impl Future<Output = Option<ActionOutcome>> + Send + 'static {
        let terminals = self.terminals.clone();
        async move { Some(terminals.perform_action(&row).await) }
    }

    fn maintain(&self) -> impl Future<Output = ()> + Send + 'static {
        let h = self.terminals.harness().clone();
        async move {
            match h
                .cluster()
                .recover_work(Kind::AgentActions, Scope::Expired)
                .await
            {
                Ok(done) if done.unverified == 0 => {}
                Ok(done) => tracing::warn!(
                    count = done.unverified,
                    "automatic actions with an ended lease: UNVERIFIED"
                ),
                Err(err) => tracing::error!(error = ?err, "cannot recover automatic actions"),
            }
        }
    }
}

/// Run until `cancel` (`owner` = `<node id>:<boot id>`): first take back
/// what an earlier boot of this node left under way (UNVERIFIED, never
/// done twice), then claim due rows.
pub async fn run(terminals: Terminals, owner: String, cancel: CancellationToken) {
    let h = terminals.harness().clone();
    match h
        .cluster()
        .recover_work(Kind::AgentActions, Scope::Boot(&owner))
        .await
    {
        Ok(done) if done.unverified == 0 => {}
        Ok(done) => tracing::warn!(
            count = done.unverified,
            "automatic actions caught under way by the last stop: UNVERIFIED"
        ),
        Err(err) => {
            tracing::error!(error = ?err, "cannot recover the last run's automatic actions")
        }
    }
    let lease = AGENT_ACTIONS.lease;
    let skeleton = engine::WorkerConfig {
        poll: Duration::from_secs(1),
        max_in_flight: 8,
        // Leased only for a free slot: a leased row is started.
        ahead_per_slot: 0,
        start_margin: lease / 4,
        maintain_every: Duration::from_secs(10),
        drain: Duration::from_secs(3),
        ..engine::WorkerConfig::default()
    };
    let queue = ActionQueue {
        node: h.config().node_id.clone(),
        lease: chrono::Duration::from_std(lease).unwrap_or_else(|_| chrono::Duration::seconds(120)),
        terminals,
        owner,
    };
    Worker::new(queue, skeleton)
        .run(h.waker(Kind::AgentActions), cancel)
        .await;
}
