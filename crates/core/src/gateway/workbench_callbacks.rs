//! The Workbench's callbacks for gateway requests (docs/tower-messaging.md
//! docs/tower-workbench.md §4.6, docs/tower-workbench.md §8.9–§8.11): `confirm_gateway_task_created`,
//! `complete_gateway_discussion`, `complete_gateway_work`. Only the bound
//! Workbench may call them — the agent credential of the session's
//! Workbench task (any other credential: 403). Each writes its reply (the
//! fourth kind of owed work) in the transaction that records the request's
//! new state ([`crate::store::GatewayRouteStore::settle_request`]), so the
//! person is answered exactly once however often the Workbench repeats the
//! call; the reply worker sends it.

use crate::gateway::Gateway;
use chrono::Utc;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{context::text, replies};
use crate::{
    CoreError, CoreResult,
    auth::Identity,
    ids as core_ids,
    model::TaskView,
    outbox::token,
    store::{
        GatewayInbound, GatewaySession, InboundIntent, InboundState, NewReply, ReplyKind,
        RequestSettle,
    },
    validate,
    work::Kind,
};

pub const MAX_RESPONSE_CHARS: usize = 16_000;
pub const MAX_SUMMARY_CHARS: usize = 8_000;
/// An inbound id's and a task id's limit.
pub const MAX_ID_CHARS: usize = 128;

/// The three callbacks' input (REST `PUT /gateway` with `action`; MCP).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallbackInput {
    /// `task_created`, `discussion` or `final` (REST only).
    pub action: Option<String>,
    pub inbound_id: Option<String>,
    pub task_id: Option<String>,
    /// The discussion's answer.
    pub response: Option<String>,
    pub result_summary: Option<String>,
    /// The Workbench task calling (must be the caller's own task).
    pub reviewer_task_id: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Callback {
    TaskCreated,
    Discussion,
    Final,
}

impl Callback {
    pub fn parse(action: Option<&str>) -> CoreResult<Self> {
        match action.map(str::trim) {
            Some("task_created") => Ok(Self::TaskCreated),
            Some("discussion") => Ok(Self::Discussion),
            Some("final") => Ok(Self::Final),
            _ => Err(CoreError::invalid(
                "action",
                "action must be task_created, discussion or final",
            )),
        }
    }
}

fn id_field(value: Option<&str>, field: &'static str) -> CoreResult<String> {
    let v = text(value, field, MAX_ID_CHARS)?
        .ok_or_else(|| CoreError::invalid(field, format!("{field} required")))?;
    validate::cuid(field, &v)
}

impl Gateway<'_> {
    /// One callback, by `who` (the bound Workbench's agent credential).
    pub async fn gateway_callback(
        &self,
        who: &Identity,
        callback: Callback,
        input: &CallbackInput,
    ) -> CoreResult<Value> {
        let inbound_id = id_field(input.inbound_id.as_deref(), "inboundId")?;
        let task_id = match callback {
            Callback::Discussion => None,
            _ => Some(id_field(input.task_id.as_deref(), "taskId")?),
        };
        let response = match callback {
            Callback::Discussion => Some(
                text(input.response.as_deref(), "response", MAX_RESPONSE_CHARS)?
                    .ok_or_else(|| CoreError::invalid("response", "response required"))?,
            ),
            _ => None,
        };
        let summary = match callback {
            Callback::Final => text(
                input.result_summary.as_deref(),
                "resultSummary",
                MAX_SUMMARY_CHARS,
            )?,
            _ => None,
        };
        if let Some(r) = text(
            input.reviewer_task_id.as_deref(),
            "reviewerTaskId",
            MAX_ID_CHARS,
        )? {
            who.bind_task(Some(&r))?;
        }
        let (inbound, session) = self.bound_request(who, &inbound_id, callback).await?;
        let now = Utc::now();
        let reply = |kind: ReplyKind, content: String| NewReply {
            id: core_ids::new_id(),
            inbound_id: inbound.id.clone(),
            kind,
            content,
            dedup_key: replies::dedup_key(kind, &inbound.id),
            now,
        };
        let settle = match callback {
            Callback::TaskCreated => {
                let task = self
                    .request_task(&inbound, &session, task_id.as_deref(), false)
                    .await?;
                task_created(&inbound, &session, &task, now)?
            }
            Callback::Discussion => {
                let answer = response.unwrap_or_default();
                RequestSettle {
                    inbound_id: inbound.id.clone(),
                    link: None,
                    state: InboundState::Processed,
                    response: Some(
                        json!({"mode": "project_discussion", "owner": "workbench",
                            "queued": true, "response": answer})
                        .to_string(),
                    ),
                    consume_event: Some(format!("gateway-discussion:{}", inbound.id)),
                    reply: reply(ReplyKind::DiscussionReply, answer),
                    now,
                }
            }
            Callback::Final => {
                let task = self
                    .request_task(&inbound, &session, task_id.as_deref(), true)
                    .await?;
                if self
                    .h
                    .tasks()
                    .live_execution(&task.task.id)
                    .await?
                    .is_some()
                {
                    return Err(CoreError::Conflict(
                        "Workbench must stop and review the task before final delivery".into(),
                    ));
                }
                let result =
                    summary.unwrap_or_else(|| "The Workbench reviewed the task's result.".into());
                let content = format!(
                    "Task completed: {}\nResult: {result}\nHarness task id: {}",
                    task.task.title,
                    token::build(&task.task.id)
                );
                RequestSettle {
                    inbound_id: inbound.id.clone(),
                    link: None,
                    state: InboundState::Processed,
                    response: Some(
                        json!({"mode": "project_work", "taskId": task.task.id,
                            "resultSummary": result})
                        .to_string(),
                    ),
                    consume_event: None,
                    reply: reply(ReplyKind::FinalResult, content),
                    now,
                }
            }
        };
        let (row, created) = self.settle_gateway_request(settle, &session).await?;
        Ok(
            json!({"ok": true, "inboundId": inbound.id, "deliveryId": row.id,
            "kind": row.kind.as_str(), "state": row.state, "deduped": !created,
            "taskId": task_id}),
        )
    }

    /// [`RequestSettle`] in one transaction; the reply worker is woken
    /// for a new reply. Also the recovery's confirmation (docs/tower-workbench.md §8.13).
    pub(crate) async fn settle_gateway_request(
        &self,
        settle: RequestSettle,
        session: &GatewaySession,
    ) -> CoreResult<(crate::store::GatewayReply, bool)> {
        let (row, created) = self
            .h
            .store()
            .settle_request(settle)
            .await
            .map_err(|e| match e {
                crate::store::StoreError::Duplicate(_) => CoreError::Conflict(
                    "the task is already linked to another gateway request".into(),
                ),
                other => other.into(),
            })?
            .ok_or_else(|| CoreError::NotFound("Gateway inbound message not found".into()))?;
        if created {
            self.h.wake(Kind::GatewayReplies);
        }
        self.h.publish(crate::events::HarnessEvent::TaskChanged {
            task_id: session_workbench(session)?,
        });
        Ok((row, created))
    }

    /// The request and its session, for the bound Workbench only.
    async fn bound_request(
        &self,
        who: &Identity,
        inbound_id: &str,
        callback: Callback,
    ) -> CoreResult<(GatewayInbound, GatewaySession)> {
        let not_found = || CoreError::NotFound("Gateway request not found".into());
        let inbound = self
            .h
            .store()
            .get_inbound(inbound_id)
            .await?
            .ok_or_else(not_found)?;
        let want = match callback {
            Callback::Discussion => InboundIntent::ProjectDiscussion,
            _ => InboundIntent::ProjectWork,
        };
        let session = match &inbound.session_id {
            Some(id) if inbound.intent == want => self.h.store().get_session(id).await?,
            _ => None,
        }
        .ok_or_else(not_found)?;
        let own = match who {
            Identity::Agent { task_id, .. } => Some(task_id),
            _ => None,
        };
        if own.is_none() || own != session.workbench_task_id.as_ref() {
            return Err(CoreError::Forbidden(
                "Only the bound project Workbench may complete this gateway request".into(),
            ));
        }
        Ok((inbound, session))
    }

    /// The task a work request created: in the session's project; the one
    /// linked already, if any (`confirmed`: it must be).
    async fn request_task(
        &self,
        inbound: &GatewayInbound,
        session: &GatewaySession,
        task_id: Option<&str>,
        confirmed: bool,
    ) -> CoreResult<TaskView> {
        let task_id = task_id.unwrap_or_default();
        let linked = self.h.store().linked_task(&inbound.id).await?;
        if confirmed && inbound.created_task_id.is_none() {
            return Err(CoreError::Conflict(
                "The created task must be confirmed before final delivery".into(),
            ));
        }
        match inbound.created_task_id.as_ref().or(linked.as_ref()) {
            Some(l) if l != task_id => {
                return Err(CoreError::Conflict(
                    "The gateway request is linked to another task".into(),
                ));
            }
            _ => {}
        }
        let task = match self.h.store().get_task(task_id).await? {
            Some(t) if t.task.project_id.as_deref() == Some(session.project_id.as_str()) => t,
            _ => {
                return Err(CoreError::invalid(
                    "taskId",
                    "Created task does not belong to the gateway project",
                ));
            }
        };
        Ok(task)
    }

    /// `create_task` with `gatewayInboundId`: only the bound Workbench, for
    /// its own work request; the task is linked in the transaction that
    /// creates it, so a retry returns the same task.
    pub(crate) async fn check_gateway_link(
        &self,
        who: &Identity,
        inbound_id: &str,
    ) -> CoreResult<String> {
        let inbound_id = validate::cuid("gatewayInboundId", inbound_id.trim())?;
        self.bound_request(who, &inbound_id, Callback::TaskCreated)
            .await?;
        Ok(inbound_id)
    }
}

/// The confirmation of a created task (docs/tower-workbench.md §8.9): linked, recorded as the
/// row's created task (PROCESSING), adopted by the Workbench, the work
/// event CONSUMED, the `TASK_CREATED` reply.
pub(crate) fn task_created(
    inbound: &GatewayInbound,
    session: &GatewaySession,
    task: &TaskView,
    now: chrono::DateTime<Utc>,
) -> CoreResult<RequestSettle> {
    Ok(RequestSettle {
        inbound_id: inbound.id.clone(),
        link: Some((task.task.id.clone(), session_workbench(session)?)),
        state: if inbound.state == InboundState::Processed {
            InboundState::Processed
        } else {
            InboundState::Processing
        },
        response: None,
        consume_event: Some(format!("gateway-work:{}", inbound.id)),
        reply: NewReply {
            id: core_ids::new_id(),
            inbound_id: inbound.id.clone(),
            kind: ReplyKind::TaskCreated,
            content: format!(
                "Task created: {}\nStatus: {}\nHarness task id: {}",
                task.task.title,
                task.task.status.as_str(),
                token::build(&task.task.id)
            ),
            dedup_key: replies::dedup_key(ReplyKind::TaskCreated, &inbound.id),
            now,
        },
        now,
    })
}

pub(crate) fn session_workbench(session: &GatewaySession) -> CoreResult<String> {
    session
        .workbench_task_id
        .clone()
        .ok_or_else(|| CoreError::NotFound("the session's Workbench is gone".into()))
}
