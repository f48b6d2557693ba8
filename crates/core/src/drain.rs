//! Draining a node for maintenance: the node takes no new work
//! and the others take it, while the agents it runs go on until they end.
//!
//! The flag is the node's row in `harness_nodes` (`draining`), so every node
//! sees it, and it outlives a restart: a drained node rebooted stays drained
//! until a person undrains it (nobody has to remember to drain it again
//! before its next start, and it never takes work in between). Set by any
//! node ([`Cluster::set_node_draining`]); the drained node follows at once
//! through the event bus (`HarnessEvent::NodeChanged`, `crate::cluster`) and,
//! should that hint be lost, at its next heartbeat ([`Cluster::follow_drain`]).
//!
//! What a draining node does not do (each place asks [`Cluster::draining`]):
//! lease node-agnostic queued work — outbox sends and gateway replies (the
//! worker skeleton leases nothing and gives back what it leased ahead),
//! deliveries bound to no node (one may need an agent started: those bound
//! to it that no agent of its own serves are unbound for the others), the
//! gateway requests' recovery and the Workbench starts of the inbox worker,
//! reminders; and it starts no agent: a start that would be done here goes
//! to another live, non-draining node with a URL ([`Cluster::drain_target`],
//! a signed node call) or is refused (409, saying why). What it still does:
//! heart-beat, run and stop its agents, type their deliveries and the input
//! forwarded to them, and answer every request like any node.

use crate::cluster::Cluster;
use std::sync::atomic::Ordering;

use serde::Serialize;

use crate::{CoreError, CoreResult, HarnessEvent, store::NodeRow, work::Kind};

/// One agent a node runs (its live execution).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct LiveRun {
    pub task_id: String,
    pub execution_id: String,
}

/// A node as the admin sees it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct NodeView {
    pub id: String,
    /// What the node is shown as: its `--node-name` (default its hostname),
    /// its id when it gave none.
    pub name: String,
    /// Its `--node-url`, when it gave one.
    pub url: Option<String>,
    /// Heart-beating (by the database's clock).
    pub alive: bool,
    /// Takes no new work.
    pub draining: bool,
    /// The node that answered this request.
    pub this_node: bool,
    pub started_at: chrono::DateTime<chrono::Utc>,
    pub heartbeat_at: chrono::DateTime<chrono::Utc>,
    /// The agents it runs (RUNNING or PAUSED executions): a drain is done
    /// when none is left.
    pub live_runs: Vec<LiveRun>,
}

/// The answer to a drain or an undrain.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct DrainAnswer {
    pub node: NodeView,
    /// What the operator should know: nobody else takes the work.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

fn node_id(id: &str) -> CoreResult<&str> {
    let id = id.trim();
    if !crate::validate::is_node_id(id) {
        return Err(CoreError::invalid(
            "nodeId",
            "a node id: 1 to 64 letters, digits, '-' or '_'",
        ));
    }
    Ok(id)
}

/// Why a start cannot be done on a draining node (a 409's text).
fn no_target(me: &str) -> CoreError {
    CoreError::Conflict(format!(
        "node {me} is draining and no other live node that is not draining has a URL to \
         start the agent on: undrain a node (`harness node undrain`) or start one with --node-url"
    ))
}

impl Cluster<'_> {
    /// This node is draining: it takes no new work (see the module).
    pub fn draining(&self) -> bool {
        self.h.draining_flag().load(Ordering::Acquire)
    }

    /// This node's flag follows the registry's: logged and every worker
    /// woken when it changes (an undrained node claims at once; a drained
    /// one gives back what it leased ahead).
    pub(crate) fn note_draining(&self, on: bool) {
        if self.h.draining_flag().swap(on, Ordering::AcqRel) == on {
            return;
        }
        if on {
            tracing::warn!(node_id = %self.h.config().node_id,
                "this node is draining: it takes no new work (`harness node undrain` ends it)");
        } else {
            tracing::info!(node_id = %self.h.config().node_id, "this node takes work again");
        }
        for kind in Kind::ALL {
            self.h.wake_here(kind);
        }
    }

    /// Re-read this node's flag from the registry (at start-up and after
    /// each heartbeat: the fallback of a lost `NodeChanged`); while
    /// draining, its deliveries that no agent of its own serves go to the
    /// other nodes. Failures are logged: the next heartbeat tries again.
    /// A drain or undrain of this node applied here while the row was read
    /// wins over what was read (the drain epoch: without it, a heartbeat
    /// that read "draining" just before an undrain put the flag back until
    /// the next heartbeat, and a start in between was refused).
    pub async fn follow_drain(&self) {
        let me = &self.h.config().node_id;
        let epoch = *self.h.drain_epoch();
        match self.h.store().get_node(me).await {
            Ok(Some(row)) => {
                // A drain or undrain of this node made here while the row
                // was read is newer than what was read: it stands.
                let now = self.h.drain_epoch();
                if *now == epoch {
                    self.note_draining(row.draining);
                }
            }
            Ok(None) => {}
            Err(err) => tracing::warn!(%err, "cannot read this node's drain flag"),
        }
        if !self.draining() {
            return;
        }
        match self
            .h
            .store()
            .unbind_node_deliveries(me, chrono::Utc::now())
            .await
        {
            Ok(0) => {}
            Ok(n) => {
                tracing::info!(
                    deliveries = n,
                    "draining: deliveries left to the other nodes"
                );
                self.h.wake(Kind::Deliveries);
            }
            Err(err) => tracing::warn!(%err, "cannot leave deliveries to the other nodes"),
        }
    }

    async fn view(&self, row: NodeRow) -> CoreResult<NodeView> {
        let live_runs = self
            .h
            .store()
            .node_live_runs(&row.id)
            .await?
            .into_iter()
            .map(|(task_id, execution_id)| LiveRun {
                task_id,
                execution_id,
            })
            .collect();
        Ok(NodeView {
            this_node: row.id == self.h.config().node_id,
            name: row.name.unwrap_or_else(|| row.id.clone()),
            id: row.id,
            url: row.url,
            alive: row.alive,
            draining: row.draining,
            started_at: row.started_at,
            heartbeat_at: row.heartbeat_at,
            live_runs,
        })
    }

    /// Every node of the cluster, with the agents each runs.
    pub async fn node_views(&self) -> CoreResult<Vec<NodeView>> {
        let mut views = Vec::new();
        for row in self.nodes().await? {
            views.push(self.view(row).await?);
        }
        Ok(views)
    }

    /// One node (404 when the registry does not know it).
    pub async fn node_view(&self, id: &str) -> CoreResult<NodeView> {
        let id = node_id(id)?;
        let row = self
            .node(id)
            .await?
            .ok_or_else(|| CoreError::NotFound(format!("no node {id} in the registry")))?;
        self.view(row).await
    }

    /// Drain (or undrain) node `id`: written in the registry, that node told
    /// at once. The answer's note says when no other node takes the work.
    pub async fn set_node_draining(&self, id: &str, draining: bool) -> CoreResult<DrainAnswer> {
        let id = node_id(id)?;
        let me = id == self.h.config().node_id;
        // This node stops taking work before its answer says it did.
        if me {
            let mut epoch = self.h.drain_epoch();
            *epoch += 1;
            if draining {
                self.note_draining(true);
            }
        }
        let written = self.h.store().set_node_draining(id, draining).await;
        if me && !matches!(written, Ok(true)) {
            self.follow_drain().await;
        }
        if !written? {
            return Err(CoreError::NotFound(format!("no node {id} in the registry")));
        }
        tracing::info!(node_id = id, draining, "node drain flag set");
        if me {
            let mut epoch = self.h.drain_epoch();
            *epoch += 1;
            self.note_draining(draining);
        }
        self.h.publish(HarnessEvent::NodeChanged {
            node_id: id.to_string(),
            draining,
        });
        // The others look now: what the drained node gives back is theirs,
        // an undrained one claims again.
        for kind in Kind::ALL {
            self.h.wake(kind);
        }
        let node = self.node_view(id).await?;
        let note = if draining {
            self.takers_note(id).await?
        } else {
            None
        };
        Ok(DrainAnswer { node, note })
    }

    /// When no other live node takes a drained node's work: why.
    async fn takers_note(&self, drained: &str) -> CoreResult<Option<String>> {
        let takers: Vec<NodeRow> = self
            .nodes()
            .await?
            .into_iter()
            .filter(|n| n.id != drained && n.alive && !n.draining)
            .collect();
        Ok(if takers.is_empty() {
            Some(
                "no other live node takes new work: queued messages wait and new agents are \
                 refused (409) until a node is undrained"
                    .into(),
            )
        } else if takers.iter().all(|n| n.url.is_none()) {
            Some(
                "the other live nodes take queued work, but none has a --node-url: new agents \
                 are refused (409) until one has"
                    .into(),
            )
        } else {
            None
        })
    }

    /// Where a start this draining node would have done goes: another
    /// live, non-draining node with a URL (the least recently started
    /// first, so the choice is stable), else a 409 saying why.
    pub async fn drain_target(&self) -> CoreResult<NodeRow> {
        let me = &self.h.config().node_id;
        self.nodes()
            .await?
            .into_iter()
            .filter(|n| &n.id != me && n.alive && !n.draining)
            .filter(|n| n.url.as_deref().is_some_and(|u| !u.trim().is_empty()))
            .min_by(|a, b| (a.started_at, &a.id).cmp(&(b.started_at, &b.id)))
            .ok_or_else(|| no_target(me))
    }

    /// A start asked of this node by another (never forwarded again):
    /// refused while draining.
    pub fn refuse_start_while_draining(&self) -> CoreResult<()> {
        if self.draining() {
            return Err(CoreError::Conflict(format!(
                "node {} is draining: it starts no agent",
                self.h.config().node_id
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn node_ids_are_checked() {
        assert_eq!(super::node_id(" n1 ").unwrap(), "n1");
        for bad in ["", "  ", "a\nb", "a/b"] {
            let err = super::node_id(bad).unwrap_err();
            assert_eq!(err.field(), Some("nodeId"), "{bad:?}");
        }
        assert!(super::node_id(&"x".repeat(65)).is_err());
    }
}
