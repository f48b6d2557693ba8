//! The node registry: one row per node of a cluster, written by
//! its heartbeat worker (`crate::nodes` holds the rules). Every time here is
//! the DATABASE's clock, so liveness never depends on a node's own clock.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::StoreResult;

/// One node as the database sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeRow {
    /// The node id (`<data-dir>/node-id`).
    pub id: String,
    /// The boot id of its latest process (leases are owned by `<id>:<boot>`).
    pub boot: String,
    /// Its own reachable base URL (`--node-url`), when it gave one.
    pub url: Option<String>,
    /// Its name (`--node-name`, default the hostname) as its latest
    /// heartbeat gave it; `None` for a node that gave none.
    pub name: Option<String>,
    /// When its latest process first heart-beat (the database's clock).
    pub started_at: DateTime<Utc>,
    /// Its latest heartbeat (the database's clock).
    pub heartbeat_at: DateTime<Utc>,
    /// Whether its heartbeat is newer than the database's now − dead-after.
    pub alive: bool,
    /// Whether it is being drained: it takes no new work (`crate::drain`).
    pub draining: bool,
}

/// Storage of the node registry (one atomic statement per method).
#[async_trait]
pub trait NodeStore: Send + Sync + 'static {
    /// Upsert this node's row; `heartbeat_at` = the database's now; `url`
    /// and `name` are this heartbeat's. A new `boot` (the node restarted)
    /// starts the row again (`started_at` = now) but keeps `draining`: a
    /// drained node stays drained until undrained. False: nothing written,
    /// because the survivors fenced this boot ([`Self::fence_node`]) — the
    /// node was declared dead.
    async fn node_heartbeat(
        &self,
        id: &str,
        boot: &str,
        url: Option<&str>,
        name: Option<&str>,
    ) -> StoreResult<bool>;
    /// Fence `boot` of node `id` before its work is recovered: only while
    /// it is still the node's boot and still dead by the database's clock;
    /// from then on that boot's heartbeat writes nothing. The fence and a
    /// heartbeat of the row serialize: whichever commits first decides.
    /// True when the boot is fenced (by this call or an earlier one).
    async fn fence_node(&self, id: &str, boot: &str) -> StoreResult<bool>;
    /// Every node, by id.
    async fn list_nodes(&self) -> StoreResult<Vec<NodeRow>>;
    async fn get_node(&self, id: &str) -> StoreResult<Option<NodeRow>>;
    /// Mark a node draining (or not); false when there is no such node.
    /// What a draining node stops doing is `crate::drain`'s.
    async fn set_node_draining(&self, id: &str, draining: bool) -> StoreResult<bool>;
    /// The node's live (RUNNING / PAUSED) executions: `(task id, execution
    /// id)`, oldest first.
    async fn node_live_runs(&self, id: &str) -> StoreResult<Vec<(String, String)>>;
    /// The node's unleased deliveries of tasks without a live execution on
    /// it are no longer bound to it (any node may do them: a draining node
    /// leaves the agents it would have to start again to the others).
    /// Answers how many were unbound.
    async fn unbind_node_deliveries(&self, id: &str, now: DateTime<Utc>) -> StoreResult<u64>;
    /// Dead nodes whose current boot's leftovers no survivor recovered yet.
    async fn nodes_to_recover(&self) -> StoreResult<Vec<NodeRow>>;
    /// Record that `boot` of node `id` was recovered. False when the node
    /// heart-beat again meanwhile (alive, or a new boot) or another survivor
    /// recorded it first.
    async fn mark_node_recovered(&self, id: &str, boot: &str) -> StoreResult<bool>;
    /// A dead node's work that only it could do, in one transaction: its
    /// live (RUNNING / PAUSED) executions → FAILED, reason `interrupted`
    /// (only while `boot`, fenced, is still the node's boot)
    /// (their OPEN asks stay answerable), and its unleased deliveries are no
    /// longer bound to it (a task without a live execution may be resumed
    /// by any node). Answers the tasks whose execution was interrupted and
    /// how many deliveries were unbound.
    async fn release_dead_node(
        &self,
        id: &str,
        boot: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<(Vec<String>, u64)>;
    /// The database's clock now.
    async fn db_now(&self) -> StoreResult<DateTime<Utc>>;
}
