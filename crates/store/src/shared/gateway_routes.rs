//! [`harness_core::store::GatewayRouteStore`] once for both backends
//! (migration sqlite 0016 / postgres 0004): sessions, the routing counts
//! and the one transaction that records a routed message with its
//! session, Workbench event and acknowledgement ([`gateway_route_store`]).

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

/// `impl GatewayRouteStore` for a backend, written once (`$reader`: the
/// pool reads use).
macro_rules! gateway_route_store {
    ($store:ty, $reader:ident) => {
        #[async_trait::async_trait]
        impl harness_core::store::GatewayRouteStore for $store {
            async fn inbound_by_key(
                &self,
                dedup_key: &str,
            ) -> harness_core::store::StoreResult<Option<harness_core::store::GatewayInbound>> {
                let row = sqlx::query($crate::shared::gateway::INBOUND_BY_KEY.as_str())
                    .bind(dedup_key)
                    .fetch_optional(&self.$reader)
                    .await
                    .map_err($crate::error::map)?;
                row.map(|r| $crate::shared::gateway::inbound(&r))
                    .transpose()
            }

            async fn route_counts(
                &self,
                q: harness_core::store::RouteCountQuery,
            ) -> harness_core::store::StoreResult<harness_core::store::RouteCounts> {
                use $crate::shared::SqlRow;
                let row = sqlx::query($crate::shared::gateway_routes::ROUTE_COUNTS)
                    .bind(&q.gateway)
                    .bind(&q.platform)
                    .bind(&q.chat_id)
                    .bind(&q.sender_id)
                    .bind($crate::shared::ms(q.since))
                    .fetch_one(&self.$reader)
                    .await
                    .map_err($crate::error::map)?;
                let n = |c: &str| row.col::<i64>(c).map(|v| u64::try_from(v).unwrap_or(0));
                Ok(harness_core::store::RouteCounts {
                    sender: n("sender")?,
                    chat: n("chat")?,
                    chat_queued: n("chat_queued")?,
                    global_queued: n("global_queued")?,
                })
            }

            async fn find_sessions(
                &self,
                lookup: harness_core::store::SessionLookup,
            ) -> harness_core::store::StoreResult<Vec<harness_core::store::GatewaySession>> {
                use harness_core::store::SessionLookup as L;
                use $crate::shared::{gateway_routes as sql, ms};
                let rows = match lookup {
                    L::ReplyTo {
                        gateway,
                        platform,
                        chat_id,
                        platform_message_id,
                    } => {
                        sqlx::query(sql::SESSIONS_OF_REPLY.as_str())
                            .bind(gateway)
                            .bind(platform)
                            .bind(platform_message_id)
                            .bind(chat_id)
                            .fetch_all(&self.$reader)
                            .await
                    }
                    L::Anchored {
                        gateway,
                        platform,
                        chat_id,
                        anchors,
                    } => {
                        sqlx::query(sql::SESSIONS_ANCHORED.as_str())
                            .bind(gateway)
                            .bind(platform)
                            .bind(chat_id)
                            .bind(anchors.first().cloned())
                            .bind(anchors.get(1).cloned())
                            .bind(anchors.get(2).cloned())
                            .fetch_all(&self.$reader)
                            .await
                    }
                    L::ChatSender {
                        gateway,
                        platform,
                        chat_id,
                        sender_id,
                        since,
                    } => {
                        sqlx::query(sql::SESSIONS_CHAT_SENDER.as_str())
                            .bind(gateway)
                            .bind(platform)
                            .bind(chat_id)
                            .bind(sender_id)
                            .bind(ms(since))
                            .fetch_all(&self.$reader)
                            .await
                    }
                    L::RecentSender {
                        gateway,
                        platform,
                        sender_id,
                        since,
                    } => {
                        sqlx::query(sql::SESSIONS_RECENT_SENDER.as_str())
                            .bind(gateway)
                            .bind(platform)
                            .bind(sender_id)
                            .bind(ms(since))
                            .fetch_all(&self.$reader)
                            .await
                    }
                }
                .map_err($crate::error::map)?;
                rows.iter().map(|r| sql::session(r)).collect()
            }

            async fn record_route(
                &self,
                w: harness_core::store::RouteWrite,
            ) -> harness_core::store::StoreResult<harness_core::store::RouteRecord> {
                use harness_core::store::{AdmissionCounts, RouteRecord};
                use $crate::shared::{SqlRow, gateway as g, gateway_routes as sql, ms};
                let now = ms(w.inbound.now);
                let mut tx = self.write_tx().await?;
                if let Some(a) = &w.admission {
                    let row = sqlx::query(sql::ADMISSION_COUNTS)
                        .bind(&a.session.project_id)
                        .bind(&a.session.workbench_task_id)
                        .fetch_one(&mut *tx)
                        .await
                        .map_err($crate::error::map)?;
                    let n = |c: &str| row.col::<i64>(c).map(|v| u64::try_from(v).unwrap_or(0));
                    let counts = AdmissionCounts {
                        project_queue: n("project_queue")?,
                        workbench_events: n("workbench_events")?,
                        global_queue: n("global_queue")?,
                    };
                    if counts.global_queue >= a.limits.global_queue
                        || counts.project_queue >= a.limits.project_queue
                        || counts.workbench_events >= a.limits.workbench_events
                    {
                        tx.rollback().await.map_err($crate::error::map)?;
                        return Ok(RouteRecord::Refused(counts));
                    }
                }
                let i = &w.inbound;
                let inserted = sqlx::query(sql::INSERT_ROUTED)
                    .bind(&i.id)
                    .bind(&i.dedup_key)
                    .bind(&i.gateway)
                    .bind(&i.platform)
                    .bind(&i.chat_id)
                    .bind(&i.sender_id)
                    .bind(&i.platform_message_id)
                    .bind(&i.thread_id)
                    .bind(&i.root_message_id)
                    .bind(&i.reply_to_message_id)
                    .bind(i.intent.as_str())
                    .bind(&i.content)
                    .bind(w.state.as_str())
                    .bind(&w.response)
                    .bind(now)
                    .execute(&mut *tx)
                    .await
                    .map_err($crate::error::map)?
                    .rows_affected()
                    == 1;
                if !inserted {
                    let row = sqlx::query(g::INBOUND_BY_KEY.as_str())
                        .bind(&i.dedup_key)
                        .fetch_one(&mut *tx)
                        .await
                        .map_err($crate::error::map)?;
                    let row = g::inbound(&row)?;
                    tx.rollback().await.map_err($crate::error::map)?;
                    return Ok(RouteRecord::Duplicate(row));
                }
                for id in &w.close {
                    sqlx::query(sql::CLOSE_SESSION)
                        .bind(id)
                        .bind(now)
                        .execute(&mut *tx)
                        .await
                        .map_err($crate::error::map)?;
                }
                if let Some(a) = &w.admission {
                    let s = &a.session;
                    let session_id: String = sqlx::query_scalar(sql::BIND_SESSION)
                        .bind(&s.id)
                        .bind(&s.binding_key)
                        .bind(&s.gateway)
                        .bind(&s.platform)
                        .bind(&s.chat_id)
                        .bind(&s.thread_id)
                        .bind(&s.root_message_id)
                        .bind(&s.sender_id)
                        .bind(&s.project_id)
                        .bind(&s.workbench_task_id)
                        .bind(now)
                        .fetch_one(&mut *tx)
                        .await
                        .map_err($crate::error::map)?;
                    sqlx::query(sql::SET_SESSION)
                        .bind(&i.id)
                        .bind(&session_id)
                        .execute(&mut *tx)
                        .await
                        .map_err($crate::error::map)?;
                    let e = &a.event;
                    sqlx::query(sql::INSERT_EVENT)
                        .bind(&e.id)
                        .bind(&e.parent_task_id)
                        .bind(&e.source_task_id)
                        .bind(e.kind.as_str())
                        .bind(e.priority.as_str())
                        .bind(&e.dedup_key)
                        .bind(e.payload.to_string())
                        .bind(ms(e.now))
                        .execute(&mut *tx)
                        .await
                        .map_err($crate::error::map)?;
                    let r = &a.ack;
                    sqlx::query($crate::shared::gateway_replies::INSERT)
                        .bind(&r.id)
                        .bind(&r.inbound_id)
                        .bind(r.kind.as_str())
                        .bind(&r.content)
                        .bind(&r.dedup_key)
                        .bind(ms(r.now))
                        .execute(&mut *tx)
                        .await
                        .map_err($crate::error::map)?;
                }
                let row = sqlx::query(g::INBOUND_BY_ID.as_str())
                    .bind(&i.id)
                    .fetch_one(&mut *tx)
                    .await
                    .map_err($crate::error::map)?;
                let row = g::inbound(&row)?;
                tx.commit().await.map_err($crate::error::map)?;
                Ok(RouteRecord::Recorded(row))
            }

            async fn get_session(
                &self,
                id: &str,
            ) -> harness_core::store::StoreResult<Option<harness_core::store::GatewaySession>> {
                let row = sqlx::query($crate::shared::gateway_routes::SESSION_BY_ID.as_str())
                    .bind(id)
                    .fetch_optional(&self.$reader)
                    .await
                    .map_err($crate::error::map)?;
                row.map(|r| $crate::shared::gateway_routes::session(&r))
                    .transpose()
            }

            async fn tasks_of_reply(
                &self,
                gateway: &str,
                platform: &str,
                platform_message_id: &str,
            ) -> harness_core::store::StoreResult<Vec<(String, String, Option<String>)>> {
                use $crate::shared::SqlRow;
                let rows = sqlx::query($crate::shared::gateway_routes::TASKS_OF_REPLY)
                    .bind(gateway)
                    .bind(platform)
                    .bind(platform_message_id)
                    .fetch_all(&self.$reader)
                    .await
                    .map_err($crate::error::map)?;
                rows.iter()
                    .map(|r| Ok((r.at(0)?, r.at(1)?, r.at(2)?)))
                    .collect()
            }

            async fn linked_task(
                &self,
                inbound_id: &str,
            ) -> harness_core::store::StoreResult<Option<String>> {
                sqlx::query_scalar($crate::shared::gateway_routes::LINKED_TASK)
                    .bind(inbound_id)
                    .fetch_optional(&self.$reader)
                    .await
                    .map_err($crate::error::map)
            }

            async fn create_linked_task(
                &self,
                t: harness_core::store::NewTask,
                inbound_id: &str,
            ) -> harness_core::store::StoreResult<(String, bool)> {
                use $crate::shared::{gateway_routes as sql, ms};
                let agent = serde_json::to_string(&t.agent)
                    .map_err(|e| harness_core::store::StoreError::Backend(Box::new(e)))?;
                let mut tx = self.write_tx().await?;
                let linked: Option<String> = sqlx::query_scalar(sql::LINKED_TASK)
                    .bind(inbound_id)
                    .fetch_optional(&mut *tx)
                    .await
                    .map_err($crate::error::map)?;
                if let Some(task) = linked {
                    tx.rollback().await.map_err($crate::error::map)?;
                    return Ok((task, false));
                }
                sqlx::query($crate::shared::tasks::INSERT_TASK)
                    .bind(&t.id)
                    .bind(&t.project_id)
                    .bind(&t.title)
                    .bind(&t.description)
                    .bind(&t.parent_task_id)
                    .bind(&agent)
                    .bind(ms(t.now))
                    .bind(ms(t.now))
                    .execute(&mut *tx)
                    .await
                    .map_err($crate::error::map)?;
                sqlx::query(sql::INSERT_LINK)
                    .bind(inbound_id)
                    .bind(&t.id)
                    .bind(ms(t.now))
                    .execute(&mut *tx)
                    .await
                    .map_err($crate::error::map)?;
                tx.commit().await.map_err($crate::error::map)?;
                Ok((t.id, true))
            }

            async fn settle_request(
                &self,
                s: harness_core::store::RequestSettle,
            ) -> harness_core::store::StoreResult<Option<(harness_core::store::GatewayReply, bool)>>
            {
                use $crate::shared::{gateway_replies as replies, gateway_routes as sql, ms};
                let now = ms(s.now);
                let mut tx = self.write_tx().await?;
                if let Some((task, workbench)) = &s.link {
                    sqlx::query(sql::INSERT_LINK)
                        .bind(&s.inbound_id)
                        .bind(task)
                        .bind(now)
                        .execute(&mut *tx)
                        .await
                        .map_err($crate::error::map)?;
                    sqlx::query(sql::SET_CREATED_TASK)
                        .bind(&s.inbound_id)
                        .bind(task)
                        .bind(now)
                        .execute(&mut *tx)
                        .await
                        .map_err($crate::error::map)?;
                    sqlx::query(sql::ADOPT_CHILD)
                        .bind(task)
                        .bind(workbench)
                        .execute(&mut *tx)
                        .await
                        .map_err($crate::error::map)?;
                }
                let found = sqlx::query(sql::SETTLE_REQUEST)
                    .bind(&s.inbound_id)
                    .bind(s.state.as_str())
                    .bind(&s.response)
                    .bind(now)
                    .execute(&mut *tx)
                    .await
                    .map_err($crate::error::map)?
                    .rows_affected()
                    == 1;
                if !found {
                    tx.rollback().await.map_err($crate::error::map)?;
                    return Ok(None);
                }
                if let Some(key) = &s.consume_event {
                    sqlx::query(sql::CONSUME_EVENT)
                        .bind(key)
                        .bind(now)
                        .execute(&mut *tx)
                        .await
                        .map_err($crate::error::map)?;
                }
                let r = &s.reply;
                let created = sqlx::query(replies::INSERT)
                    .bind(&r.id)
                    .bind(&r.inbound_id)
                    .bind(r.kind.as_str())
                    .bind(&r.content)
                    .bind(&r.dedup_key)
                    .bind(ms(r.now))
                    .execute(&mut *tx)
                    .await
                    .map_err($crate::error::map)?
                    .rows_affected()
                    == 1;
                let row = sqlx::query(replies::BY_KEY.as_str())
                    .bind(&r.dedup_key)
                    .fetch_one(&mut *tx)
                    .await
                    .map_err($crate::error::map)?;
                let reply = replies::reply(&row)?;
                tx.commit().await.map_err($crate::error::map)?;
                Ok(Some((reply, created)))
            }

            async fn mark_inbound(
                &self,
                mark: harness_core::store::InboundMark,
            ) -> harness_core::store::StoreResult<bool> {
                let mut tx = self.write_tx().await?;
                let done = sqlx::query($crate::shared::gateway_routes::MARK_INBOUND)
                    .bind(&mark.id)
                    .bind(mark.state.as_str())
                    .bind(&mark.response)
                    .bind(&mark.last_error)
                    .bind($crate::shared::ms(mark.now))
                    .bind(mark.seen_state.as_str())
                    .execute(&mut *tx)
                    .await
                    .map_err($crate::error::map)?
                    .rows_affected();
                tx.commit().await.map_err($crate::error::map)?;
                Ok(done == 1)
            }

            async fn list_sessions(
                &self,
                limit: u32,
            ) -> harness_core::store::StoreResult<Vec<harness_core::store::GatewaySession>> {
                let rows = sqlx::query($crate::shared::gateway_routes::LIST_SESSIONS.as_str())
                    .bind(i64::from(limit))
                    .fetch_all(&self.$reader)
                    .await
                    .map_err($crate::error::map)?;
                rows.iter()
                    .map(|r| $crate::shared::gateway_routes::session(r))
                    .collect()
            }

            async fn list_inbound(
                &self,
                state: Option<harness_core::store::InboundState>,
                limit: u32,
            ) -> harness_core::store::StoreResult<Vec<harness_core::store::GatewayInbound>> {
                use $crate::shared::gateway_routes as sql;
                let rows = match state {
                    None => {
                        sqlx::query(sql::LIST_INBOUND.as_str())
                            .bind(i64::from(limit))
                            .fetch_all(&self.$reader)
                            .await
                    }
                    Some(s) => {
                        sqlx::query(sql::LIST_INBOUND_IN_STATE.as_str())
                            .bind(i64::from(limit))
                            .bind(s.as_str())
                            .fetch_all(&self.$reader)
                            .await
                    }
                }
                .map_err($crate::error::map)?;
                rows.iter()
                    .map(|r| $crate::shared::gateway::inbound(r))
                    .collect()
            }
        }
    };
}
pub(crate) use gateway_route_store;

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
