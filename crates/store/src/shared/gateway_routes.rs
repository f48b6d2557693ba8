//! The statements and the session decoder of
//! [`harness_core::store::GatewayRouteStore`] (migration sqlite 0016 /
//! postgres 0004), shared by both backends; the methods are
//! [`super::gateway_route_store`]'s.

use std::sync::LazyLock;

use harness_core::store::{GatewaySession, SessionStatus, StoreResult};

use super::{SqlRow, enum_col, time};

pub(crate) const SESSION_COLUMNS: &str = "s.id, s.binding_key, s.gateway, s.platform, \
     s.chat_id, s.thread_id, s.root_message_id, s.sender_id, s.status, s.project_id, \
     s.workbench_task_id, s.last_activity_at, s.created_at, s.updated_at";

const SESSION_ORDER: &str = "ORDER BY s.last_activity_at DESC, s.id DESC LIMIT 20";

/// `$1` gateway, `$2` platform, `$3` the reply's platform message id,
/// `$4` the chat (the session's, normalised by the core like the reply's).
pub(crate) static SESSIONS_OF_REPLY: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {SESSION_COLUMNS} FROM gateway_replies r \
         JOIN gateway_inbound i ON i.id = r.inbound_id \
         JOIN gateway_sessions s ON s.id = i.session_id \
         WHERE r.state = 'DELIVERED' AND r.platform_message_id = $3 AND r.gateway = $1 \
           AND r.platform = $2 AND s.chat_id = $4 AND s.status = 'ACTIVE' \
         ORDER BY r.delivered_at DESC, s.id DESC LIMIT 20"
    )
});

/// `$1` gateway, `$2` platform, `$3` chat, `$4`–`$6` anchors (NULL: none).
pub(crate) static SESSIONS_ANCHORED: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {SESSION_COLUMNS} FROM gateway_sessions s \
         WHERE s.gateway = $1 AND s.platform = $2 AND s.chat_id = $3 AND s.status = 'ACTIVE' \
           AND (s.thread_id IN ($4, $5, $6) OR s.root_message_id IN ($4, $5, $6)) {SESSION_ORDER}"
    )
});

/// `$1` gateway, `$2` platform, `$3` chat, `$4` sender, `$5` since.
pub(crate) static SESSIONS_CHAT_SENDER: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {SESSION_COLUMNS} FROM gateway_sessions s \
         WHERE s.gateway = $1 AND s.platform = $2 AND s.chat_id = $3 AND s.sender_id = $4 \
           AND s.thread_id IS NULL AND s.last_activity_at >= $5 AND s.status = 'ACTIVE' \
         {SESSION_ORDER}"
    )
});

/// `$1` gateway, `$2` platform, `$3` sender, `$4` since.
pub(crate) static SESSIONS_RECENT_SENDER: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {SESSION_COLUMNS} FROM gateway_sessions s \
         WHERE s.gateway = $1 AND s.platform = $2 AND s.sender_id = $3 \
           AND s.last_activity_at >= $4 AND s.status = 'ACTIVE' {SESSION_ORDER}"
    )
});

pub(crate) static LIST_SESSIONS: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {SESSION_COLUMNS} FROM gateway_sessions s \
         ORDER BY s.last_activity_at DESC, s.id DESC LIMIT +$1"
    )
});

pub(crate) static LIST_INBOUND: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {} FROM gateway_inbound ORDER BY created_at DESC, id DESC LIMIT +$1",
        super::gateway::INBOUND_COLUMNS
    )
});

pub(crate) static LIST_INBOUND_IN_STATE: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {} FROM gateway_inbound WHERE state = $2 \
         ORDER BY created_at DESC, id DESC LIMIT +$1",
        super::gateway::INBOUND_COLUMNS
    )
});

/// `$1` gateway, `$2` platform, `$3` chat, `$4` sender (NULL: none), `$5` since.
pub(crate) const ROUTE_COUNTS: &str = "SELECT \
     (SELECT count(*) FROM gateway_inbound WHERE gateway = $1 AND platform = $2 AND chat_id = $3 \
        AND sender_id = $4 AND created_at >= $5) AS sender, \
     (SELECT count(*) FROM gateway_inbound WHERE gateway = $1 AND platform = $2 AND chat_id = $3 \
        AND created_at >= $5) AS chat, \
     (SELECT count(*) FROM gateway_inbound WHERE gateway = $1 AND platform = $2 AND chat_id = $3 \
        AND state = 'QUEUED') AS chat_queued, \
     (SELECT count(*) FROM gateway_inbound WHERE state = 'QUEUED') AS global_queued";

/// `$1` project, `$2` the Workbench task.
pub(crate) const ADMISSION_COUNTS: &str = "SELECT \
     (SELECT count(*) FROM gateway_inbound i JOIN gateway_sessions s ON s.id = i.session_id \
        WHERE i.state = 'QUEUED' AND s.project_id = $1) AS project_queue, \
     (SELECT count(*) FROM workbench_events WHERE parent_task_id = $2 \
        AND state IN ('PENDING', 'PROCESSING')) AS workbench_events, \
     (SELECT count(*) FROM gateway_inbound WHERE state = 'QUEUED') AS global_queue";

/// `$1`–`$12` the row, `$13` state, `$14` response, `$15` now.
pub(crate) const INSERT_ROUTED: &str = "INSERT INTO gateway_inbound (id, dedup_key, gateway, \
     platform, chat_id, sender_id, platform_message_id, thread_id, root_message_id, \
     reply_to_message_id, intent, content, state, response, attempts, processed_at, created_at, \
     updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, 1, \
       CASE WHEN $13 = 'PROCESSED' THEN $15 ELSE NULL END, $15, $15) \
     ON CONFLICT (dedup_key) DO NOTHING";

/// `$1` id … `$10` workbench, `$11` now: a new session, or the binding
/// key's row reactivated (its last sender kept when none is known).
pub(crate) const BIND_SESSION: &str = "INSERT INTO gateway_sessions (id, binding_key, gateway, \
     platform, chat_id, thread_id, root_message_id, sender_id, status, project_id, \
     workbench_task_id, last_activity_at, created_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'ACTIVE', $9, $10, $11, $11, $11) \
     ON CONFLICT (binding_key) DO UPDATE SET status = 'ACTIVE', \
       sender_id = COALESCE(excluded.sender_id, gateway_sessions.sender_id), \
       workbench_task_id = excluded.workbench_task_id, \
       last_activity_at = excluded.last_activity_at, updated_at = excluded.updated_at \
     RETURNING id";

pub(crate) const SET_SESSION: &str = "UPDATE gateway_inbound SET session_id = $2 WHERE id = $1";

pub(crate) const CLOSE_SESSION: &str = "UPDATE gateway_sessions SET status = 'CLOSED', \
     updated_at = $2 WHERE id = $1 AND status = 'ACTIVE'";

/// `$1` id, `$2` parent, `$3` source, `$4` kind, `$5` priority, `$6` dedup
/// key, `$7` payload, `$8` now.
pub(crate) const INSERT_EVENT: &str = "INSERT INTO workbench_events (id, parent_task_id, \
     source_task_id, execution_id, kind, priority, dedup_key, execution_review_key, payload, \
     state, attempts, created_at, updated_at, next_attempt_at) \
     VALUES ($1, $2, $3, NULL, $4, $5, $6, NULL, $7, 'PENDING', 0, $8, $8, $8) \
     ON CONFLICT (dedup_key) DO NOTHING";

pub(crate) static SESSION_BY_ID: LazyLock<String> =
    LazyLock::new(|| format!("SELECT {SESSION_COLUMNS} FROM gateway_sessions s WHERE s.id = $1"));

/// `$1` gateway, `$2` platform, `$3` the reply's platform message id,
/// `$4` the chat (the session's, normalised by the core like the reply's).
pub(crate) const TASKS_OF_REPLY: &str = "SELECT r.chat_id, i.created_task_id, \
     s.workbench_task_id FROM gateway_replies r \
     JOIN gateway_inbound i ON i.id = r.inbound_id \
     LEFT JOIN gateway_sessions s ON s.id = i.session_id \
     WHERE r.state = 'DELIVERED' AND r.platform_message_id = $3 AND r.gateway = $1 \
       AND r.platform = $2 AND i.created_task_id IS NOT NULL \
     ORDER BY r.delivered_at DESC, r.id DESC LIMIT 20";

pub(crate) const LINKED_TASK: &str = "SELECT task_id FROM gateway_task_links WHERE inbound_id = $1";

pub(crate) const INSERT_LINK: &str = "INSERT INTO gateway_task_links (inbound_id, task_id, \
     created_at) VALUES ($1, $2, $3) ON CONFLICT (inbound_id) DO NOTHING";

/// `$1` inbound, `$2` task, `$3` now: a PROCESSED row stays PROCESSED.
pub(crate) const SET_CREATED_TASK: &str = "UPDATE gateway_inbound SET created_task_id = $2, \
     state = CASE WHEN state = 'PROCESSED' THEN state ELSE 'PROCESSING' END, last_error = NULL, \
     updated_at = $3 WHERE id = $1";

pub(crate) const ADOPT_CHILD: &str =
    "UPDATE tasks SET parent_task_id = $2 WHERE id = $1 AND parent_task_id IS NULL";

/// `$1` inbound, `$2` state, `$3` response (NULL: kept), `$4` now.
pub(crate) const SETTLE_REQUEST: &str = "UPDATE gateway_inbound SET state = $2, \
     response = COALESCE($3, response), \
     processed_at = CASE WHEN $2 = 'PROCESSED' THEN $4 ELSE processed_at END, updated_at = $4 \
     WHERE id = $1";

pub(crate) const CONSUME_EVENT: &str = "UPDATE workbench_events SET state = 'CONSUMED', \
     consumed_at = $2, updated_at = $2 WHERE dedup_key = $1 AND state <> 'CONSUMED'";

/// `$1` inbound, `$2` new state, `$3` response (NULL: kept), `$4` error,
/// `$5` now, `$6` the state it must still be in; a note (same state) keeps
/// the claim clock.
pub(crate) const MARK_INBOUND: &str = "UPDATE gateway_inbound SET state = $2, \
     response = COALESCE($3, response), last_error = $4, \
     processed_at = CASE WHEN $2 = 'PROCESSED' THEN $5 ELSE processed_at END, \
     updated_at = CASE WHEN $2 = $6 THEN updated_at ELSE $5 END, \
     lease_owner = CASE WHEN $2 = 'PROCESSING' THEN lease_owner ELSE NULL END, \
     lease_expires_at = CASE WHEN $2 = 'PROCESSING' THEN lease_expires_at ELSE NULL END \
     WHERE id = $1 AND state = $6";

pub(crate) fn session<R: SqlRow>(row: &R) -> StoreResult<GatewaySession> {
    Ok(GatewaySession {
        id: row.col("id")?,
        binding_key: row.col("binding_key")?,
        gateway: row.col("gateway")?,
        platform: row.col("platform")?,
        chat_id: row.col("chat_id")?,
        thread_id: row.col("thread_id")?,
        root_message_id: row.col("root_message_id")?,
        sender_id: row.col("sender_id")?,
        status: enum_col(row, "status", SessionStatus::parse)?,
        project_id: row.col("project_id")?,
        workbench_task_id: row.col("workbench_task_id")?,
        last_activity_at: time(row.col("last_activity_at")?)?,
        created_at: time(row.col("created_at")?)?,
        updated_at: time(row.col("updated_at")?)?,
    })
}
