//! `route_gateway_message` (docs/tower-messaging.md §8.2, docs/decisions.md D11): the
//! OWNER's chat message, routed once per (gateway, platform, chat,
//! platform message id).
//!
//! Everything is decided before anything is written; then one transaction
//! ([`crate::store::GatewayRouteStore::record_route`]) records the inbound
//! row in its final state with its result — and, for a discussion or work
//! request admitted to the project's Workbench, the session binding, the
//! Workbench event and the acknowledgement reply. A message is therefore
//! either not recorded at all (a crash before the commit: the gateway's
//! retry routes it afresh) or recorded with everything it owes; of
//! concurrent deliveries one inserts and the others answer from its row
//! (`in_progress` / `already_processed`, `noOp`). `DIRECT` is answered
//! without a row. Rate limits count normalised chat and sender ids (docs/decisions.md D11).

use crate::gateway::Gateway;
use chrono::{Duration, Utc};
use serde_json::{Value, json};

use super::{
    context::Lookup,
    owner::{Role, Sender},
    projects::{self, Ask, Resolution, Scope},
    replies,
    route_input::{RouteInput, SessionAction, asks_for_new_work},
    sessions::Conversation,
};
use crate::{
    CoreError, CoreResult,
    events::HarnessEvent,
    ids as core_ids,
    model::Project,
    store::{
        Admission, AdmissionCounts, AdmissionLimits, EventKind, GatewayInbound, InboundIntent,
        InboundState, NewEvent, NewInbound, NewReply, Priority, ReplyKind, RouteCountQuery,
        RouteRecord, RouteWrite, SessionLookup,
    },
    work::Kind,
};

/// Rate window and limits (docs/tower-messaging.md §8.2, docs/tower-messaging.md §9).
pub const RATE_WINDOW_SECS: i64 = 60;
pub const SENDER_LIMIT: u64 = 30;
pub const CHAT_LIMIT: u64 = 120;
pub const CHAT_QUEUE_LIMIT: u64 = 50;
pub const GLOBAL_QUEUE_LIMIT: u64 = 500;
pub const ADMISSION: AdmissionLimits = AdmissionLimits {
    project_queue: 100,
    workbench_events: 100,
    global_queue: GLOBAL_QUEUE_LIMIT,
};

const DIRECT_INSTRUCTIONS: &str = "Harness does not answer ordinary questions: answer them \
yourself. Route only Harness queries (TOWER), project discussions and project work.";
const TOWER_INSTRUCTIONS: &str = "Read-only Harness queries only (status, tasks, questions). \
Anything that changes a project is PROJECT_WORK: route it again with that intent.";

fn finish(value: Value, extra: Value) -> Value {
    let mut value = value;
    if let (Some(obj), Some(more)) = (value.as_object_mut(), extra.as_object()) {
        for (k, v) in more {
            obj.insert(k.clone(), v.clone());
        }
    }
    value
}

/// The answer to a platform message already recorded (docs/tower-messaging.md §8.2 step 3).
fn duplicate(row: &GatewayInbound) -> Value {
    let cached: Option<Value> = row
        .response
        .as_deref()
        .and_then(|r| serde_json::from_str(r).ok());
    let original = cached
        .as_ref()
        .and_then(|v| v.get("mode"))
        .cloned()
        .unwrap_or(Value::Null);
    let base = json!({"inboundId": row.id, "deduped": true, "noOp": true});
    match (row.state, &cached) {
        (InboundState::Processed, Some(_)) => finish(
            base,
            json!({"mode": "already_processed", "state": "PROCESSED"}),
        ),
        (InboundState::Queued, _) => finish(
            base,
            json!({"mode": "in_progress", "state": "QUEUED", "originalMode": original}),
        ),
        (_, None) | (InboundState::Processing | InboundState::Received, _) => finish(
            base,
            json!({"mode": "in_progress", "state": "PROCESSING", "originalMode": original}),
        ),
        _ => finish(
            base,
            json!({"mode": "already_processed", "state": row.state.as_str(),
                "originalMode": original}),
        ),
    }
}

/// The Workbench event of an admitted request: its instruction (docs/tower-messaging.md §8.2 step 13).
/// What the Workbench is asked (the event's `instruction`), from the
/// request's source chat, its thread and its words.
pub(crate) struct RequestSource<'a> {
    pub inbound_id: &'a str,
    pub platform: &'a str,
    pub chat_id: &'a str,
    pub thread: Option<&'a str>,
    pub content: &'a str,
}

impl<'a> RequestSource<'a> {
    /// The source of a recorded row (recovery re-publishes its event).
    pub(crate) fn of(row: &'a GatewayInbound) -> Self {
        Self {
            inbound_id: &row.id,
            platform: &row.platform,
            chat_id: &row.chat_id,
            thread: row.thread_id.as_deref().or(row.root_message_id.as_deref()),
            content: &row.content,
        }
    }
}

/// The Workbench event of an admitted request (dedup `gateway-discussion:<id>`
/// / `gateway-work:<id>`); recovery re-publishes the same event.
pub(crate) fn request_event(
    src: &RequestSource<'_>,
    project: &Project,
    workbench_id: &str,
    discussion: bool,
    now: chrono::DateTime<Utc>,
) -> NewEvent {
    let id = src.inbound_id;
    NewEvent {
        id: core_ids::new_id(),
        parent_task_id: workbench_id.to_string(),
        source_task_id: workbench_id.to_string(),
        execution_id: None,
        kind: if discussion {
            EventKind::GatewayDiscussionRequest
        } else {
            EventKind::GatewayWorkRequest
        },
        priority: Priority::Normal,
        dedup_key: event_key(id, discussion),
        execution_review_key: None,
        fallback: false,
        payload: json!({"childTaskId": workbench_id,
            "childTitle": format!("{} gateway {}", project.name,
                if discussion { "discussion" } else { "request" }),
            "instruction": instruction(src, project, discussion),
            "sourceReference": {"namespace": "gateway_inbound", "id": id}}),
        now,
    }
}

/// The dedup key of a request's Workbench event.
pub(crate) fn event_key(inbound_id: &str, discussion: bool) -> String {
    if discussion {
        format!("gateway-discussion:{inbound_id}")
    } else {
        format!("gateway-work:{inbound_id}")
    }
}

/// The acknowledgement of an admitted request (docs/tower-messaging.md §8.2 step 15).
pub(crate) fn ack_text(project: &Project, discussion: bool) -> String {
    if discussion {
        format!(
            "Queued for the {} Workbench discussion. No task will be created without an \
             explicit work request.",
            project.name
        )
    } else {
        format!(
            "Queued for {} Workbench. No task has been created yet.",
            project.name
        )
    }
}

fn instruction(src: &RequestSource<'_>, project: &Project, discussion: bool) -> String {
    let inbound_id = src.inbound_id;
    let mut lines = vec![
        if discussion {
            "[Gateway project discussion]".to_string()
        } else {
            "[Gateway project work request]".to_string()
        },
        format!("Project: {} ({})", project.name, project.id),
        format!("Inbound: {inbound_id}"),
        format!("Source: {}:{}", src.platform, src.chat_id),
    ];
    if let Some(t) = src.thread {
        lines.push(format!("Thread: {t}"));
    }
    lines.push(String::new());
    lines.push(src.content.to_string());
    lines.push(String::new());
    if discussion {
        lines.push(format!(
            "Answer this directly; you may inspect the repository. Do not create a task just \
             because a plan is clear. Finish with complete_gateway_discussion({{ inboundId: \
             \"{inbound_id}\", response }}) — that is the answer the person gets."
        ));
    } else {
        lines.push(format!(
            "Research the request and dispatch it with create_task (pass gatewayInboundId: \
             \"{inbound_id}\"); do not implement it in this terminal. After the task really \
             exists call confirm_gateway_task_created({{ inboundId: \"{inbound_id}\", taskId }}); \
             after reviewing its result call complete_gateway_work({{ inboundId: \
             \"{inbound_id}\", taskId, resultSummary }})."
        ));
    }
    lines.join("\n")
}

impl Gateway<'_> {
    /// docs/tower-messaging.md §8.2 for the OWNER (403, nothing written, for anyone else).
    pub async fn route_gateway_message(&self, input: &RouteInput) -> CoreResult<Value> {
        let route = input.check()?;
        let c = &route.conv;
        let role = self
            .gateway_role(Sender {
                gateway: &c.gateway,
                platform: &c.platform,
                sender_id: c.sender_id.as_deref(),
            })
            .await?;
        if role != Role::Owner {
            return Err(CoreError::Forbidden(
                "Only the configured platform OWNER may route a message (use route_gateway_query)"
                    .into(),
            ));
        }
        if route.intent == InboundIntent::Direct {
            return Ok(json!({"mode": "direct_not_supported", "inboundId": null,
                "deduped": false, "noOp": true, "instructions": DIRECT_INSTRUCTIONS}));
        }
        let dedup_key = super::ids::inbound_dedup_key(
            &c.gateway,
            &c.platform,
            &c.chat_id,
            &c.platform_message_id,
        );
        if let Some(row) = self.h.store().inbound_by_key(&dedup_key).await? {
            return Ok(duplicate(&row));
        }
        let now = Utc::now();
        let new = NewInbound {
            id: core_ids::new_id(),
            dedup_key,
            gateway: c.gateway.clone(),
            platform: c.platform.clone(),
            chat_id: c.chat_id.clone(),
            sender_id: c.sender_id.clone(),
            platform_message_id: c.platform_message_id.clone(),
            thread_id: c.thread_id.clone(),
            root_message_id: c.root_message_id.clone(),
            reply_to_message_id: c.reply_to_message_id.clone(),
            intent: route.intent,
            content: route.content.clone(),
            now,
        };
        let id = new.id.clone();
        let processed = |response: Value, close: Vec<String>| RouteWrite {
            inbound: new.clone(),
            state: InboundState::Processed,
            response: response.to_string(),
            close,
            admission: None,
        };
        if let Some(limited) = self.rate_limited(c, &id).await? {
            return self.record(processed(limited, Vec::new())).await;
        }
        if route.action == SessionAction::Close {
            let closed = self.sessions_to_close(c).await?;
            let out = json!({"mode": "discussion_closed", "inboundId": id,
                "closedSessionIds": closed, "deduped": false,
                "instructions": "The conversation's project binding is closed: the next message \
                    starts afresh (name the project)."});
            return self.record(processed(out, closed)).await;
        }
        // A reply to a morning report answers its numbered items.
        if let Some((report_id, lang)) = self.h.reports().report_replied_to(c).await? {
            let mut out = self
                .h
                .reports()
                .report_reply_json(&report_id, &route.content, c.sender_id.as_deref(), lang)
                .await?;
            out["inboundId"] = json!(id);
            out["deduped"] = json!(false);
            return self.record(processed(out, Vec::new())).await;
        }
        let new_work = route.start_new_work
            || route.action == SessionAction::New
            || (route.intent == InboundIntent::ProjectWork && asks_for_new_work(&route.content));
        if !new_work {
            let lookup = Lookup {
                gateway: c.gateway.clone(),
                platform: c.platform.clone(),
                chat_id: c.chat_id.clone(),
                reply_to_message_id: c.reply_to_message_id.clone(),
                quoted_text: route.quoted_text.clone(),
                task_id: route.task_id.clone(),
            };
            let context = self.task_context(&lookup, Some(&route.content)).await?;
            if context.bound {
                // A reply "approve" / "deny" to an approval's push:
                // it decides the approval that push asked, never another.
                let mapping = match c.reply_to_message_id.as_deref() {
                    Some(pmid) => {
                        self.delivery_mapping(&c.gateway, &c.platform, &c.chat_id, pmid)
                            .await?
                    }
                    None => None,
                };
                if let Some(task) = context.subject_task_id.as_deref()
                    && let Some(mut out) = self
                        .h
                        .approvals()
                        .chat_approval_answer(
                            &crate::auth::Person::gateway_owner(),
                            task,
                            &route.content,
                            c.sender_id.as_deref(),
                            mapping.as_ref(),
                        )
                        .await?
                {
                    out["inboundId"] = json!(id);
                    out["deduped"] = json!(false);
                    return self.record(processed(out, Vec::new())).await;
                }
                let out = json!({"mode": "task_context", "inboundId": id,
                    "taskId": context.subject_task_id, "project": context.project,
                    "resolution": "reply_binding", "deduped": false, "context": context,
                    "instructions": "The message is about this task: continue it with \
                        continue_bound_task, or answer its OPEN question with reply_to_ask."});
                return self.record(processed(out, Vec::new())).await;
            }
        }
        if route.intent == InboundIntent::Tower {
            let out = json!({"mode": "tower_mcp", "inboundId": id, "deduped": false,
                "instructions": TOWER_INSTRUCTIONS});
            return self.record(processed(out, Vec::new())).await;
        }
        let resolved = self
            .resolve_project(Ask {
                conv: Some(c),
                project: route.project.as_deref(),
                scope: &Scope::All,
                ignore_sessions: route.action == SessionAction::New,
                now,
            })
            .await?;
        let (project, resolution) = match resolved {
            Resolution::Found {
                project,
                resolution,
                ..
            } => (project, resolution),
            Resolution::Candidates { candidates, reason } => {
                let out = json!({"mode": "needs_project_selection", "inboundId": id,
                    "deduped": false, "reason": reason,
                    "candidates": candidates.iter().map(projects::candidate).collect::<Vec<_>>(),
                    "instructions": "Ask the person which project they mean, then route the \
                        message again with project set."});
                return self.record(processed(out, Vec::new())).await;
            }
        };
        let discussion = route.intent == InboundIntent::ProjectDiscussion;
        let (workbench, _) = self.h.tasks().ensure_workbench(&project.id, None).await?;
        let workbench_id = workbench.task.id.clone();
        let mode = if discussion {
            "project_discussion"
        } else {
            "project_work"
        };
        let ack_text = ack_text(&project, discussion);
        let out = json!({"mode": mode, "inboundId": id, "workbenchTaskId": workbench_id,
        "project": projects::candidate(&project), "resolution": resolution,
        "deduped": false, "queued": true, "acknowledgement": ack_text,
        "instructions": if discussion {
            "Queued for the project's Workbench, which answers in this chat. Do not answer \
             it yourself and do not restate the acknowledgement."
        } else {
            "Queued for the project's Workbench, which reports back in this chat. Do not \
             restate the acknowledgement."
        }});
        let admission = Admission {
            session: c.new_session(core_ids::new_id(), &project.id, &workbench_id),
            event: request_event(
                &RequestSource {
                    inbound_id: &id,
                    platform: &c.platform,
                    chat_id: &c.chat_id,
                    thread: c.thread_id.as_deref().or(c.root_message_id.as_deref()),
                    content: &route.content,
                },
                &project,
                &workbench_id,
                discussion,
                now,
            ),
            ack: NewReply {
                id: core_ids::new_id(),
                inbound_id: id.clone(),
                kind: ReplyKind::QueuedAck,
                content: ack_text,
                dedup_key: replies::dedup_key(ReplyKind::QueuedAck, &id),
                now,
            },
            limits: ADMISSION,
        };
        let write = RouteWrite {
            inbound: new.clone(),
            state: InboundState::Queued,
            response: out.to_string(),
            close: Vec::new(),
            admission: Some(admission),
        };
        match self.h.store().record_route(write).await? {
            RouteRecord::Recorded(row) => {
                tracing::info!(inbound_id = %row.id, workbench = %workbench_id, mode,
                    "gateway request queued for the Workbench");
                self.h.publish(HarnessEvent::TaskChanged {
                    task_id: workbench_id,
                });
                self.h.wake(Kind::Inbox);
                self.h.wake(Kind::GatewayReplies);
                Ok(finish(out, json!({"sessionId": row.session_id})))
            }
            RouteRecord::Duplicate(row) => Ok(duplicate(&row)),
            RouteRecord::Refused(counts) => {
                self.record(processed(admission_refused(&id, counts), Vec::new()))
                    .await
            }
        }
    }

    /// Record a result that owes nothing (PROCESSED).
    async fn record(&self, write: RouteWrite) -> CoreResult<Value> {
        let out: Value = serde_json::from_str(&write.response).unwrap_or(Value::Null);
        match self.h.store().record_route(write).await? {
            RouteRecord::Recorded(_) | RouteRecord::Refused(_) => Ok(out),
            RouteRecord::Duplicate(row) => Ok(duplicate(&row)),
        }
    }

    /// docs/tower-messaging.md §8.2 step 4 on normalised ids (docs/decisions.md D11); the new row counts.
    async fn rate_limited(&self, c: &Conversation, id: &str) -> CoreResult<Option<Value>> {
        let counts = self
            .h
            .store()
            .route_counts(RouteCountQuery {
                gateway: c.gateway.clone(),
                platform: c.platform.clone(),
                chat_id: c.chat_id.clone(),
                sender_id: c.sender_id.clone(),
                since: Utc::now() - Duration::seconds(RATE_WINDOW_SECS),
            })
            .await?;
        let scope = if counts.global_queued >= GLOBAL_QUEUE_LIMIT {
            "global"
        } else if counts.chat_queued >= CHAT_QUEUE_LIMIT {
            "queue"
        } else if c.sender_id.is_some() && counts.sender + 1 > SENDER_LIMIT {
            "sender"
        } else if counts.chat + 1 > CHAT_LIMIT {
            "chat"
        } else {
            return Ok(None);
        };
        let retry = if matches!(scope, "global" | "queue") {
            120
        } else {
            60
        };
        Ok(Some(
            json!({"mode": "rate_limited", "inboundId": id, "deduped": false,
            "scope": scope, "retryAfterSeconds": retry,
            "instructions": format!("Too many messages ({scope}): tell the person to retry in \
                {retry} seconds.")}),
        ))
    }

    /// The sessions a CLOSE ends: this thread's, else this chat and
    /// sender's (any age).
    async fn sessions_to_close(&self, c: &Conversation) -> CoreResult<Vec<String>> {
        let anchors = c.anchors();
        let lookup = if !anchors.is_empty() {
            SessionLookup::Anchored {
                gateway: c.gateway.clone(),
                platform: c.platform.clone(),
                chat_id: c.chat_id.clone(),
                anchors,
            }
        } else if let Some(sender) = &c.sender_id {
            SessionLookup::ChatSender {
                gateway: c.gateway.clone(),
                platform: c.platform.clone(),
                chat_id: c.chat_id.clone(),
                sender_id: sender.clone(),
                since: chrono::DateTime::<Utc>::UNIX_EPOCH,
            }
        } else {
            return Ok(Vec::new());
        };
        Ok(self
            .h
            .store()
            .find_sessions(lookup)
            .await?
            .into_iter()
            .map(|s| s.id)
            .collect())
    }
}

fn admission_refused(id: &str, counts: AdmissionCounts) -> Value {
    let scope = if counts.global_queue >= ADMISSION.global_queue {
        "global"
    } else if counts.project_queue >= ADMISSION.project_queue {
        "project"
    } else {
        "workbench"
    };
    json!({"mode": "rate_limited", "inboundId": id, "deduped": false, "scope": scope,
        "retryAfterSeconds": 120, "counts": counts,
        "instructions": format!("The project's Workbench queue is full ({} queued in the \
            project, {} open Workbench events, {} queued overall): tell the person to retry \
            in 120 seconds.", counts.project_queue, counts.workbench_events, counts.global_queue)})
}
