//! What a dead node left: a node whose heartbeat is older
//! than the dead-after, by the database's clock. Every survivor runs
//! [`run_recovery`]; each step is a conditional write the database decides
//! (still RUNNING, still leased by the dead node, not started …), so
//! several survivors at once recover each row once. The steps are the same
//! rules a node applies to its own earlier boot at start-up:
//!
//! * its RUNNING / PAUSED executions → FAILED, reason `interrupted` (their
//!   OPEN asks stay answerable; a reply resumes the agent on any node, as
//!   for any task without a live execution);
//! * its deliveries: caught mid-write → UNVERIFIED (never typed twice), the
//!   others released and no longer bound to it;
//! * its outbound sends: the current attempt marked started →
//!   SENT_UNVERIFIED, leased but never started → due again (sent by a
//!   survivor);
//! * its gateway replies in flight → SENT_UNVERIFIED; its workbench claims
//!   → PENDING.
//!
//! First the dead boot is fenced (its heartbeat refused from then on: a node
//! that only stalled stops when it wakes, see `run_heartbeat`); then the
//! steps; then the node's boot is recorded as recovered; its row stays
//! (dead). A node that comes back with a new boot continues normally.

use crate::cluster::Cluster;
use std::time::Duration;

use chrono::Utc;
use tokio_util::sync::CancellationToken;

use crate::{
    CoreResult, Harness,
    events::HarnessEvent,
    store::NodeRow,
    work::{Kind, Scope},
};

/// What one dead node's recovery did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeRecovery {
    pub node_id: String,
    pub boot: String,
    /// Tasks whose execution was interrupted.
    pub interrupted: Vec<String>,
    /// Deliveries caught mid-write (UNVERIFIED) and released.
    pub deliveries: usize,
    /// Deliveries no longer bound to the node.
    pub unbound: u64,
    /// Outbound rows SENT_UNVERIFIED (started) and released (never started).
    pub outbound_unverified: usize,
    pub outbound_released: usize,
    /// Gateway replies in flight → SENT_UNVERIFIED.
    pub replies: u64,
    /// Workbench claims back to PENDING.
    pub workbench_claims: u64,
    /// Whether this survivor recorded the recovery (another may have).
    pub recorded: bool,
}

impl Cluster<'_> {
    /// One pass: recover every dead node whose current boot was not
    /// recovered yet (never this node itself).
    pub async fn recover_dead_nodes(&self) -> CoreResult<Vec<NodeRecovery>> {
        let me = self.h.config().node_id.clone();
        let mut out = Vec::new();
        for node in self.h.store().nodes_to_recover().await? {
            if node.id == me {
                continue;
            }
            out.push(self.recover_dead_node(&node).await?);
        }
        Ok(out)
    }

    async fn recover_dead_node(&self, node: &NodeRow) -> CoreResult<NodeRecovery> {
        let mut done = NodeRecovery {
            node_id: node.id.clone(),
            boot: node.boot.clone(),
            ..NodeRecovery::default()
        };
        // Fence the boot first, while it is still the node's and still dead:
        // from then on its heartbeat is refused, so a node that only stalled
        // learns it was declared dead and stops (never runs beside the work
        // taken over here). A node that heart-beat or restarted first is
        // left alone (a restart recovers its own earlier boot at start-up).
        if !self.h.store().fence_node(&node.id, &node.boot).await? {
            return Ok(done);
        }
        let now = Utc::now();
        // Before the node's deliveries are unbound: its rows caught
        // mid-write become UNVERIFIED, its leased ones due again (the one
        // recovery pass, `crate::work::recovery`).
        let scope = Scope::DeadNode(&node.id);
        let deliveries = self.recover_work(Kind::Deliveries, scope).await?;
        done.deliveries = deliveries.unverified + deliveries.released;
        let (interrupted, unbound) = self
            .h
            .store()
            .release_dead_node(&node.id, &node.boot, now)
            .await?;
        for task_id in &interrupted {
            self.h.publish(HarnessEvent::TaskChanged {
                task_id: task_id.clone(),
            });
        }
        done.interrupted = interrupted;
        done.unbound = unbound;
        if unbound > 0 || done.deliveries > 0 {
            self.h.deliveries().wake_deliveries();
        }
        let outbound = self.recover_work(Kind::Outbox, scope).await?;
        (done.outbound_unverified, done.outbound_released) =
            (outbound.unverified, outbound.released);
        let replies = self.recover_work(Kind::GatewayReplies, scope).await?;
        done.replies = u64::try_from(replies.unverified + replies.released).unwrap_or(u64::MAX);
        let claims = self.recover_work(Kind::Inbox, scope).await?;
        done.workbench_claims = u64::try_from(claims.released).unwrap_or(u64::MAX);
        done.recorded = self
            .h
            .store()
            .mark_node_recovered(&node.id, &node.boot)
            .await?;
        tracing::warn!(
            node_id = %node.id,
            boot = %node.boot,
            interrupted = done.interrupted.len(),
            deliveries = done.deliveries,
            unbound = done.unbound,
            outbound_unverified = done.outbound_unverified,
            outbound_released = done.outbound_released,
            replies = done.replies,
            workbench_claims = done.workbench_claims,
            recorded = done.recorded,
            "recovered the work of a dead node"
        );
        Ok(done)
    }
}

/// The recovery worker (one per node): a pass every `every` (a fraction of
/// the dead-after), each bounded by a timeout. Cancellable; restart-safe
/// (the rows say what is left; a pass that failed half-way is repeated,
/// each step idempotent).
pub async fn run_recovery(harness: Harness, every: Duration, cancel: CancellationToken) {
    // The first pass only after one interval: a node that just started has
    // not seen the others heart-beat yet.
    let timeout = every.max(Duration::from_secs(30));
    loop {
        tokio::select! {
            () = cancel.cancelled() => break,
            () = tokio::time::sleep(every) => {}
        }
        match tokio::time::timeout(timeout, harness.cluster().recover_dead_nodes()).await {
            Ok(Ok(_)) => {}
            Ok(Err(err)) => tracing::warn!(error = ?err, "dead-node recovery failed; retrying"),
            Err(_) => tracing::warn!("dead-node recovery timed out; retrying"),
        }
    }
    tracing::debug!("dead-node recovery stopped");
}
