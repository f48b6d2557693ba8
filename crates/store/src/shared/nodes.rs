//! The node registry (`harness_nodes`, PostgreSQL 0020 / SQLite 0031; its
//! `name`, 0035 on both): its statements and row decoder, once for both
//! backends (the methods are [`super::node_store`]'s). Every time is the
//! database's clock
//! ([`Dialect::now_ms`](crate::shared::Dialect)); a node is alive while its
//! heartbeat is newer than the database's now − the store's dead-after.

use harness_core::store::{NodeRow, StoreResult};

use super::{SqlRow, time};

pub(crate) const NODE_COLUMNS: &str = "id, boot, url, name, started_at, heartbeat_at, draining";

/// `$1` id, `$2` boot, `$3` url, `$4` name (each heartbeat's own). A new boot starts the row again, except
/// `draining`: a drained node restarted (its machine rebooted) stays
/// drained until a person undrains it. A boot the survivors fenced
/// ([`fence`]) writes nothing (0 rows). The clock is read once: a new row's
/// `started_at` is its `heartbeat_at` (PostgreSQL's `clock_timestamp()`
/// read twice differed by a millisecond now and then).
pub(crate) fn heartbeat(now: &str) -> String {
    format!(
        "INSERT INTO harness_nodes (id, boot, url, name, started_at, heartbeat_at, draining) \
         SELECT $1, $2, $3, $4, t.now, t.now, 0 FROM (SELECT {now} AS now) AS t WHERE 1 = 1 \
         ON CONFLICT (id) DO UPDATE SET \
           started_at = CASE WHEN harness_nodes.boot = excluded.boot \
             THEN harness_nodes.started_at ELSE excluded.started_at END, \
           boot = excluded.boot, url = excluded.url, name = excluded.name, \
           heartbeat_at = excluded.heartbeat_at \
         WHERE harness_nodes.fenced_boot IS NULL OR harness_nodes.fenced_boot <> excluded.boot"
    )
}

/// `$1` dead-after (ms), `$2` id, `$3` boot: the boot is fenced while it is
/// still the node's boot and still dead (a heartbeat that won the row first
/// leaves it alive; one that comes after is refused).
pub(crate) fn fence(now: &str) -> String {
    format!(
        "UPDATE harness_nodes SET fenced_boot = boot \
         WHERE id = $2 AND boot = $3 AND heartbeat_at <= {now} - $1"
    )
}

/// The nodes matching `filter` (`$1` is the dead-after in ms; further
/// parameters from `$2`), each with `alive` by the database's clock.
pub(crate) fn select(now: &str, filter: &str) -> String {
    format!(
        "SELECT {NODE_COLUMNS}, CASE WHEN heartbeat_at > {now} - $1 THEN CAST(1 AS BIGINT) ELSE CAST(0 AS BIGINT) END AS alive \
         FROM harness_nodes WHERE {filter} ORDER BY id"
    )
}

/// `$1` dead-after (ms), `$2` id, `$3` boot.
pub(crate) fn mark_recovered(now: &str) -> String {
    format!(
        "UPDATE harness_nodes SET recovered_boot = boot \
         WHERE id = $2 AND boot = $3 AND heartbeat_at <= {now} - $1 \
           AND (recovered_boot IS NULL OR recovered_boot <> boot)"
    )
}

/// `$1` now, `$2` node id, `$3` its fenced boot: its live executions end,
/// interrupted — only while that boot is still the node's (a node that
/// restarted meanwhile interrupts its own earlier runs at start-up, and its
/// new runs are not the dead boot's).
pub(crate) const INTERRUPT: &str = "UPDATE executions SET status = 'FAILED', \
     end_reason = 'interrupted', ended_at = $1 \
     WHERE status IN ('RUNNING', 'PAUSED') AND node_id = $2 \
       AND EXISTS (SELECT 1 FROM harness_nodes n WHERE n.id = $2 AND n.boot = $3 \
         AND n.fenced_boot = $3) \
     RETURNING task_id";

/// `$1` now, `$2` node id: its unleased deliveries of tasks with no live
/// execution on it are free for any node.
pub(crate) fn unbind() -> String {
    format!(
        "UPDATE deliveries SET node_id = NULL, updated_at = $1 \
         WHERE node_id = $2 AND lease_owner IS NULL AND state IN {} \
           AND NOT EXISTS (SELECT 1 FROM executions x WHERE x.task_id = deliveries.task_id \
             AND x.node_id = $2 AND x.status IN ('RUNNING', 'PAUSED'))",
        super::deliveries::CLAIMABLE
    )
}

/// `$1` node id: its live executions (the agents it runs), oldest first.
pub(crate) const LIVE_RUNS: &str = "SELECT task_id, id FROM executions \
     WHERE node_id = $1 AND status IN ('RUNNING', 'PAUSED') ORDER BY created_at, id";

/// `$1` draining (0/1), `$2` id.
pub(crate) const SET_DRAINING: &str = "UPDATE harness_nodes SET draining = $1 WHERE id = $2";

pub(crate) fn node<R: SqlRow>(row: &R) -> StoreResult<NodeRow> {
    Ok(NodeRow {
        id: row.col("id")?,
        boot: row.col("boot")?,
        url: row.col("url")?,
        name: row.col("name")?,
        started_at: time(row.col("started_at")?)?,
        heartbeat_at: time(row.col("heartbeat_at")?)?,
        alive: row.col::<i64>("alive")? != 0,
        draining: row.col::<i64>("draining")? != 0,
    })
}
