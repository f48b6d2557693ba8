//! [`GatewayRouteStore`](harness_core::store::GatewayRouteStore) once for
//! both backends: sessions, the routing counts and the one transaction
//! that records a routed message with its session, Workbench event and
//! acknowledgement. One generic function per method over [`Backend`], and
//! [`gateway_route_store!`] that implements the port with them; the
//! statements are [`super::gateway_routes`]'.

use harness_core::store::{
    AdmissionCounts, GatewayInbound, GatewayReply, GatewaySession, InboundMark, InboundState,
    NewTask, RequestSettle, RouteCountQuery, RouteCounts, RouteRecord, RouteWrite, SessionLookup,
    StoreError, StoreResult,
};

use super::{
    Bind, SqlRow,
    backend::{Backend, execute, fetch_one, fetch_optional, read_optional},
    gateway::{INBOUND_BY_ID, INBOUND_BY_KEY, inbound},
    gateway_replies as replies,
    gateway_routes::{self as sql, session},
    gateway_store::reply_binds,
    ms,
    tasks::INSERT_TASK,
};

/// A count column, never negative.
fn count<R: SqlRow>(row: &R, column: &str) -> StoreResult<u64> {
    row.col::<i64>(column)
        .map(|v| u64::try_from(v).unwrap_or(0))
}

pub(crate) async fn inbound_by_key<S: Backend>(
    store: &S,
    dedup_key: &str,
) -> StoreResult<Option<GatewayInbound>> {
    read_optional(
        store,
        &INBOUND_BY_KEY,
        vec![Bind::Text(dedup_key.to_owned())],
    )
    .await?
    .as_ref()
    .map(inbound)
    .transpose()
}

pub(crate) async fn route_counts<S: Backend>(
    store: &S,
    q: RouteCountQuery,
) -> StoreResult<RouteCounts> {
    let binds = vec![
        Bind::Text(q.gateway),
        Bind::Text(q.platform),
        Bind::Text(q.chat_id),
        Bind::OptText(q.sender_id),
        Bind::Int(ms(q.since)),
    ];
    let rows = store.read(sql::ROUTE_COUNTS, binds).await?;
    let row = rows
        .first()
        .ok_or_else(|| crate::error::map(sqlx::Error::RowNotFound))?;
    Ok(RouteCounts {
        sender: count(row, "sender")?,
        chat: count(row, "chat")?,
        chat_queued: count(row, "chat_queued")?,
        global_queued: count(row, "global_queued")?,
    })
}

pub(crate) async fn find_sessions<S: Backend>(
    store: &S,
    lookup: SessionLookup,
) -> StoreResult<Vec<GatewaySession>> {
    let (text, binds) = match lookup {
        SessionLookup::ReplyTo {
            gateway,
            platform,
            chat_id,
            platform_message_id,
        } => (
            sql::SESSIONS_OF_REPLY.as_str(),
            vec![
                Bind::Text(gateway),
                Bind::Text(platform),
                Bind::Text(platform_message_id),
                Bind::Text(chat_id),
            ],
        ),
        SessionLookup::Anchored {
            gateway,
            platform,
            chat_id,
            anchors,
        } => (
            sql::SESSIONS_ANCHORED.as_str(),
            vec![
                Bind::Text(gateway),
                Bind::Text(platform),
                Bind::Text(chat_id),
                Bind::OptText(anchors.first().cloned()),
                Bind::OptText(anchors.get(1).cloned()),
                Bind::OptText(anchors.get(2).cloned()),
            ],
        ),
        SessionLookup::ChatSender {
            gateway,
            platform,
            chat_id,
            sender_id,
            since,
        } => (
            sql::SESSIONS_CHAT_SENDER.as_str(),
            vec![
                Bind::Text(gateway),
                Bind::Text(platform),
                Bind::Text(chat_id),
                Bind::Text(sender_id),
                Bind::Int(ms(since)),
            ],
        ),
        SessionLookup::RecentSender {
            gateway,
            platform,
            sender_id,
            since,
        } => (
            sql::SESSIONS_RECENT_SENDER.as_str(),
            vec![
                Bind::Text(gateway),
                Bind::Text(platform),
                Bind::Text(sender_id),
                Bind::Int(ms(since)),
            ],
        ),
    };
    store.read(text, binds).await?.iter().map(session).collect()
}

pub(crate) async fn record_route<S: Backend>(store: &S, w: RouteWrite) -> StoreResult<RouteRecord> {
    let now = ms(w.inbound.now);
    let mut tx = store.write_tx().await?;
    if let Some(a) = &w.admission {
        let binds = vec![
            Bind::Text(a.session.project_id.clone()),
            Bind::Text(a.session.workbench_task_id.clone()),
        ];
        let row = fetch_one::<S>(&mut tx, sql::ADMISSION_COUNTS, binds).await?;
        let counts = AdmissionCounts {
            project_queue: count(&row, "project_queue")?,
            workbench_events: count(&row, "workbench_events")?,
            global_queue: count(&row, "global_queue")?,
        };
        if counts.global_queue >= a.limits.global_queue
            || counts.project_queue >= a.limits.project_queue
            || counts.workbench_events >= a.limits.workbench_events
        {
            S::rollback(tx).await?;
            return Ok(RouteRecord::Refused(counts));
        }
    }
    let i = &w.inbound;
    let binds = vec![
        Bind::Text(i.id.clone()),
        Bind::Text(i.dedup_key.clone()),
        Bind::Text(i.gateway.clone()),
        Bind::Text(i.platform.clone()),
        Bind::Text(i.chat_id.clone()),
        Bind::OptText(i.sender_id.clone()),
        Bind::Text(i.platform_message_id.clone()),
        Bind::OptText(i.thread_id.clone()),
        Bind::OptText(i.root_message_id.clone()),
        Bind::OptText(i.reply_to_message_id.clone()),
        Bind::Text(i.intent.as_str().to_owned()),
        Bind::Text(i.content.clone()),
        Bind::Text(w.state.as_str().to_owned()),
        Bind::Text(w.response.clone()),
        Bind::Int(now),
    ];
    if execute::<S>(&mut tx, sql::INSERT_ROUTED, binds).await? != 1 {
        let binds = vec![Bind::Text(i.dedup_key.clone())];
        let row = inbound(&fetch_one::<S>(&mut tx, INBOUND_BY_KEY.as_str(), binds).await?)?;
        S::rollback(tx).await?;
        return Ok(RouteRecord::Duplicate(row));
    }
    for id in &w.close {
        let binds = vec![Bind::Text(id.clone()), Bind::Int(now)];
        execute::<S>(&mut tx, sql::CLOSE_SESSION, binds).await?;
    }
    if let Some(a) = &w.admission {
        let s = &a.session;
        let binds = vec![
            Bind::Text(s.id.clone()),
            Bind::Text(s.binding_key.clone()),
            Bind::Text(s.gateway.clone()),
            Bind::Text(s.platform.clone()),
            Bind::Text(s.chat_id.clone()),
            Bind::OptText(s.thread_id.clone()),
            Bind::OptText(s.root_message_id.clone()),
            Bind::OptText(s.sender_id.clone()),
            Bind::Text(s.project_id.clone()),
            Bind::Text(s.workbench_task_id.clone()),
            Bind::Int(now),
        ];
        let session_id: String = fetch_one::<S>(&mut tx, sql::BIND_SESSION, binds)
            .await?
            .at(0)?;
        let binds = vec![Bind::Text(i.id.clone()), Bind::Text(session_id)];
        execute::<S>(&mut tx, sql::SET_SESSION, binds).await?;
        let e = &a.event;
        let binds = vec![
            Bind::Text(e.id.clone()),
            Bind::Text(e.parent_task_id.clone()),
            Bind::Text(e.source_task_id.clone()),
            Bind::Text(e.kind.as_str().to_owned()),
            Bind::Text(e.priority.as_str().to_owned()),
            Bind::Text(e.dedup_key.clone()),
            Bind::Text(e.payload.to_string()),
            Bind::Int(ms(e.now)),
        ];
        execute::<S>(&mut tx, sql::INSERT_EVENT, binds).await?;
        execute::<S>(&mut tx, replies::INSERT, reply_binds(&a.ack)).await?;
    }
    let binds = vec![Bind::Text(i.id.clone())];
    let row = inbound(&fetch_one::<S>(&mut tx, INBOUND_BY_ID.as_str(), binds).await?)?;
    S::commit(tx).await?;
    Ok(RouteRecord::Recorded(row))
}

pub(crate) async fn get_session<S: Backend>(
    store: &S,
    id: &str,
) -> StoreResult<Option<GatewaySession>> {
    read_optional(store, &sql::SESSION_BY_ID, vec![Bind::Text(id.to_owned())])
        .await?
        .as_ref()
        .map(session)
        .transpose()
}

/// A task created for an inbound message a reply answered: `(chat,
/// created task, Workbench)`.
pub(crate) type ReplyTask = (String, String, Option<String>);

pub(crate) async fn tasks_of_reply<S: Backend>(
    store: &S,
    gateway: &str,
    platform: &str,
    platform_message_id: &str,
) -> StoreResult<Vec<ReplyTask>> {
    let binds = vec![
        Bind::Text(gateway.to_owned()),
        Bind::Text(platform.to_owned()),
        Bind::Text(platform_message_id.to_owned()),
    ];
    let rows = store.read(sql::TASKS_OF_REPLY, binds).await?;
    rows.iter()
        .map(|r| Ok((r.at(0)?, r.at(1)?, r.at(2)?)))
        .collect()
}

pub(crate) async fn linked_task<S: Backend>(
    store: &S,
    inbound_id: &str,
) -> StoreResult<Option<String>> {
    read_optional(
        store,
        sql::LINKED_TASK,
        vec![Bind::Text(inbound_id.to_owned())],
    )
    .await?
    .map(|r| r.at(0))
    .transpose()
}

pub(crate) async fn create_linked_task<S: Backend>(
    store: &S,
    t: NewTask,
    inbound_id: &str,
) -> StoreResult<(String, bool)> {
    let agent = serde_json::to_string(&t.agent).map_err(|e| StoreError::Backend(Box::new(e)))?;
    let mut tx = store.write_tx().await?;
    let binds = vec![Bind::Text(inbound_id.to_owned())];
    if let Some(row) = fetch_optional::<S>(&mut tx, sql::LINKED_TASK, binds).await? {
        let task: String = row.at(0)?;
        S::rollback(tx).await?;
        return Ok((task, false));
    }
    let binds = vec![
        Bind::Text(t.id.clone()),
        Bind::OptText(t.project_id),
        Bind::Text(t.title),
        Bind::OptText(t.description),
        Bind::OptText(t.parent_task_id),
        Bind::Text(agent),
        Bind::Int(ms(t.now)),
        Bind::Int(ms(t.now)),
    ];
    execute::<S>(&mut tx, INSERT_TASK, binds).await?;
    let binds = vec![
        Bind::Text(inbound_id.to_owned()),
        Bind::Text(t.id.clone()),
        Bind::Int(ms(t.now)),
    ];
    execute::<S>(&mut tx, sql::INSERT_LINK, binds).await?;
    S::commit(tx).await?;
    Ok((t.id, true))
}

pub(crate) async fn settle_request<S: Backend>(
    store: &S,
    s: RequestSettle,
) -> StoreResult<Option<(GatewayReply, bool)>> {
    let now = ms(s.now);
    let mut tx = store.write_tx().await?;
    if let Some((task, workbench)) = &s.link {
        let binds = vec![
            Bind::Text(s.inbound_id.clone()),
            Bind::Text(task.clone()),
            Bind::Int(now),
        ];
        execute::<S>(&mut tx, sql::INSERT_LINK, binds).await?;
        let binds = vec![
            Bind::Text(s.inbound_id.clone()),
            Bind::Text(task.clone()),
            Bind::Int(now),
        ];
        execute::<S>(&mut tx, sql::SET_CREATED_TASK, binds).await?;
        let binds = vec![Bind::Text(task.clone()), Bind::Text(workbench.clone())];
        execute::<S>(&mut tx, sql::ADOPT_CHILD, binds).await?;
    }
    let binds = vec![
        Bind::Text(s.inbound_id.clone()),
        Bind::Text(s.state.as_str().to_owned()),
        Bind::OptText(s.response.clone()),
        Bind::Int(now),
    ];
    if execute::<S>(&mut tx, sql::SETTLE_REQUEST, binds).await? != 1 {
        S::rollback(tx).await?;
        return Ok(None);
    }
    if let Some(key) = &s.consume_event {
        let binds = vec![Bind::Text(key.clone()), Bind::Int(now)];
        execute::<S>(&mut tx, sql::CONSUME_EVENT, binds).await?;
    }
    let created = execute::<S>(&mut tx, replies::INSERT, reply_binds(&s.reply)).await? == 1;
    let binds = vec![Bind::Text(s.reply.dedup_key.clone())];
    let reply = replies::reply(&fetch_one::<S>(&mut tx, replies::BY_KEY.as_str(), binds).await?)?;
    S::commit(tx).await?;
    Ok(Some((reply, created)))
}

pub(crate) async fn mark_inbound<S: Backend>(store: &S, mark: InboundMark) -> StoreResult<bool> {
    let mut tx = store.write_tx().await?;
    let binds = vec![
        Bind::Text(mark.id),
        Bind::Text(mark.state.as_str().to_owned()),
        Bind::OptText(mark.response),
        Bind::OptText(mark.last_error),
        Bind::Int(ms(mark.now)),
        Bind::Text(mark.seen_state.as_str().to_owned()),
    ];
    let done = execute::<S>(&mut tx, sql::MARK_INBOUND, binds).await?;
    S::commit(tx).await?;
    Ok(done == 1)
}

pub(crate) async fn list_sessions<S: Backend>(
    store: &S,
    limit: u32,
) -> StoreResult<Vec<GatewaySession>> {
    let binds = vec![Bind::Int(i64::from(limit))];
    let rows = store.read(&sql::LIST_SESSIONS, binds).await?;
    rows.iter().map(session).collect()
}

pub(crate) async fn list_inbound<S: Backend>(
    store: &S,
    state: Option<InboundState>,
    limit: u32,
) -> StoreResult<Vec<GatewayInbound>> {
    let limit = Bind::Int(i64::from(limit));
    let rows = match state {
        None => store.read(&sql::LIST_INBOUND, vec![limit]).await?,
        Some(s) => {
            let binds = vec![limit, Bind::Text(s.as_str().to_owned())];
            store.read(&sql::LIST_INBOUND_IN_STATE, binds).await?
        }
    };
    rows.iter().map(inbound).collect()
}

/// `impl GatewayRouteStore for $store` with the functions of this module,
/// each method in its own span.
macro_rules! gateway_route_store {
    ($store:ty) => {
        const _: () = {
            use harness_core::store::{
                GatewayInbound, GatewayReply, GatewayRouteStore, GatewaySession, InboundMark,
                InboundState, NewTask, RequestSettle, RouteCountQuery, RouteCounts, RouteRecord,
                RouteWrite, SessionLookup, StoreResult,
            };
            use $crate::shared::gateway_route_store::{self as r, ReplyTask};

            #[async_trait::async_trait]
            impl GatewayRouteStore for $store {
                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn inbound_by_key(
                    &self,
                    dedup_key: &str,
                ) -> StoreResult<Option<GatewayInbound>> {
                    r::inbound_by_key(self, dedup_key).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn route_counts(&self, query: RouteCountQuery) -> StoreResult<RouteCounts> {
                    r::route_counts(self, query).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn find_sessions(
                    &self,
                    lookup: SessionLookup,
                ) -> StoreResult<Vec<GatewaySession>> {
                    r::find_sessions(self, lookup).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn record_route(&self, write: RouteWrite) -> StoreResult<RouteRecord> {
                    r::record_route(self, write).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn get_session(&self, id: &str) -> StoreResult<Option<GatewaySession>> {
                    r::get_session(self, id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn tasks_of_reply(
                    &self,
                    gateway: &str,
                    platform: &str,
                    platform_message_id: &str,
                ) -> StoreResult<Vec<ReplyTask>> {
                    r::tasks_of_reply(self, gateway, platform, platform_message_id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn linked_task(&self, inbound_id: &str) -> StoreResult<Option<String>> {
                    r::linked_task(self, inbound_id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn create_linked_task(
                    &self,
                    task: NewTask,
                    inbound_id: &str,
                ) -> StoreResult<(String, bool)> {
                    r::create_linked_task(self, task, inbound_id).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn settle_request(
                    &self,
                    settle: RequestSettle,
                ) -> StoreResult<Option<(GatewayReply, bool)>> {
                    r::settle_request(self, settle).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn mark_inbound(&self, mark: InboundMark) -> StoreResult<bool> {
                    r::mark_inbound(self, mark).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn list_sessions(&self, limit: u32) -> StoreResult<Vec<GatewaySession>> {
                    r::list_sessions(self, limit).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn list_inbound(
                    &self,
                    state: Option<InboundState>,
                    limit: u32,
                ) -> StoreResult<Vec<GatewayInbound>> {
                    r::list_inbound(self, state, limit).await
                }
            }
        };
    };
}
pub(crate) use gateway_route_store;
