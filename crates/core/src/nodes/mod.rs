//! The nodes of a cluster: several `harness serve` processes on
//! one database. Each node heart-beats its row in `harness_nodes` (the
//! database's clock decides who is alive, never a node's own); a node whose
//! heartbeat is older than the dead-after is dead, and a survivor recovers
//! what it left ([`recovery`]).

mod recovery;

use crate::cluster::Cluster;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::{CoreResult, Harness, error::CoreError, store::NodeRow};

pub use recovery::{NodeRecovery, run_recovery};

/// How often a node writes its heartbeat.
pub const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(5);
/// A node whose heartbeat is older than this (by the database's clock) is dead.
pub const DEFAULT_DEAD_AFTER: Duration = Duration::from_secs(30);
/// The longest one heartbeat write may take before it is retried.
const HEARTBEAT_TIMEOUT: Duration = Duration::from_secs(10);

/// What one node says about itself in each heartbeat.
#[derive(Debug, Clone)]
pub struct NodeIdentity {
    /// The node id (`HarnessConfig::node_id`).
    pub id: String,
    /// This process's boot id (the part after `:` of its lease owner).
    pub boot: String,
    /// Its own reachable base URL (`--node-url`).
    pub url: Option<String>,
    /// Its name (`--node-name`, validated by `validate::node_name`).
    pub name: Option<String>,
}

impl NodeIdentity {
    /// From a lease owner `<node id>:<boot id>` (`HarnessConfig::delivery_owner`).
    pub fn from_owner(owner: &str, url: Option<String>) -> Option<Self> {
        let (id, boot) = owner.split_once(':')?;
        Some(Self {
            id: id.to_string(),
            boot: boot.to_string(),
            url,
            name: None,
        })
    }
}

impl Cluster<'_> {
    /// Write this node's heartbeat (the database's now). False: this boot
    /// was declared dead and fenced by the survivors (its heartbeat stalled
    /// past the dead-after); its work was taken over and it must stop.
    pub async fn node_heartbeat(&self, me: &NodeIdentity) -> CoreResult<bool> {
        Ok(self
            .h
            .store()
            .node_heartbeat(&me.id, &me.boot, me.url.as_deref(), me.name.as_deref())
            .await?)
    }

    /// Every node of the cluster, with whether the database deems it alive.
    pub async fn nodes(&self) -> CoreResult<Vec<NodeRow>> {
        Ok(self.h.store().list_nodes().await?)
    }

    pub async fn node(&self, id: &str) -> CoreResult<Option<NodeRow>> {
        Ok(self.h.store().get_node(id).await?)
    }

    /// The database's clock: what leases and claims are judged by, the
    /// same on every node of a cluster (on SQLite, this machine's).
    pub async fn db_now(&self) -> CoreResult<chrono::DateTime<chrono::Utc>> {
        Ok(self.h.store().db_now().await?)
    }
}

/// The heartbeat worker: one write every `interval` (the caller awaits the
/// first before serving, see [`first_heartbeat`]). Bounded (one write at a
/// time, each with a timeout), cancellable, restart-safe (the row is an
/// upsert).
///
/// A heartbeat the database refuses means the survivors declared this boot
/// dead (it stalled past the dead-after: a paused VM, a frozen process, a
/// lost network) and took its work over — its runs are interrupted in the
/// database and its leases recovered. The node must not go on as if
/// nothing happened (its agents would run beside their replacements): the
/// worker cancels `fenced` and stops; the server then shuts down (its
/// agents killed) and exits with an error, and a new boot starts clean.
pub async fn run_heartbeat(
    harness: Harness,
    me: NodeIdentity,
    interval: Duration,
    cancel: CancellationToken,
    fenced: CancellationToken,
) {
    loop {
        tokio::select! {
            () = cancel.cancelled() => break,
            () = tokio::time::sleep(interval) => {}
        }
        match tokio::time::timeout(HEARTBEAT_TIMEOUT, harness.cluster().node_heartbeat(&me)).await {
            // The drain flag's fallback when its event was missed.
            Ok(Ok(true)) => harness.cluster().follow_drain().await,
            Ok(Ok(false)) => {
                tracing::error!(
                    node_id = %me.id,
                    boot = %me.boot,
                    "this node was declared dead by the cluster (its heartbeat stalled past the dead-after) and its work was taken over; stopping so that nothing runs twice"
                );
                fenced.cancel();
                break;
            }
            Ok(Err(err)) => tracing::warn!(%err, "node heartbeat failed; retrying"),
            Err(_) => tracing::warn!("node heartbeat timed out; retrying"),
        }
    }
    tracing::debug!("node heartbeat stopped");
}

/// The first heartbeat, written before the node serves (a new boot is
/// never fenced).
pub async fn first_heartbeat(harness: &Harness, me: &NodeIdentity) -> CoreResult<()> {
    match tokio::time::timeout(HEARTBEAT_TIMEOUT, harness.cluster().node_heartbeat(me)).await {
        Ok(Ok(true)) => Ok(()),
        Ok(Ok(false)) => Err(CoreError::Conflict(format!(
            "boot {} of node {} was already declared dead",
            me.boot, me.id
        ))),
        Ok(Err(err)) => Err(err),
        Err(_) => Err(CoreError::Unavailable(
            "the first node heartbeat timed out".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn identity_from_the_lease_owner() {
        let me = super::NodeIdentity::from_owner("n1:b2", None).unwrap();
        assert_eq!((me.id.as_str(), me.boot.as_str()), ("n1", "b2"));
        assert!(super::NodeIdentity::from_owner("nocolon", None).is_none());
    }
}
