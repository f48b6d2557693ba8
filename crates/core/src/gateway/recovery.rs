//! Queued gateway work brought forward (docs/tower-messaging.md §8.2 step 14,
//! docs/tower-messaging.md §8.13): whether a project's Workbench must be started for the requests
//! waiting in its inbox, and the recovery of inbound rows left in an
//! intermediate state — run at start-up and every 30 s by the inbox worker's
//! upkeep (`server/src/workers/inbox.rs`); the server starts the Workbenches
//! this asks for (`Terminals::start_idle`).
//!
//! With the one-transaction admission (`route.rs`) a request is never
//! recorded without its event and acknowledgement; what can still be left
//! behind is what happens after it:
//! - a work request whose task was created and linked (`create_task` with
//!   `gatewayInboundId`) but never confirmed (the Workbench died before
//!   `confirm_gateway_task_created`) → confirmed here, as the callback
//!   would (PROCESSING, the event CONSUMED, `TASK_CREATED` reply);
//! - a request whose event the Workbench resolved without linking a task
//!   or answering → FAILED ("resolved … without a durable task link"), the
//!   Workbench is not woken again;
//! - a request still waiting (its event PENDING) → its event and
//!   acknowledgement re-published (deduplicated: normally nothing is
//!   written) and its Workbench asked for;
//! - a `continue_bound_task` claim whose lease (60 s) ended, or whose
//!   claiming process is gone (its node restarted or is dead): its input
//!   was queued (a delivery row keyed by the inbound id exists) →
//!   PROCESSED with its acknowledgement; not queued → FAILED
//!   (`continue_failed`: the gateway's retry of the message claims it
//!   again).
//!
//! Every step is a compare-and-set on the row's state
//! ([`crate::store::InboundMark`]): a callback that settles it meanwhile wins.

use crate::gateway::Gateway;
use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::{
    replies,
    route::{self, RequestSource},
    workbench_callbacks,
};
use crate::{
    CoreResult,
    model::ExecutionStatus,
    store::{
        EventKind, EventState, GatewayInbound, GatewaySession, InboundFinish, InboundIntent,
        InboundMark, InboundState, NewReply, ReplyKind,
    },
    work::Kind,
};

/// Rows one pass looks at (docs/tower-messaging.md §8.13).
pub const RECOVERY_LIMIT: u32 = 100;

/// What one recovery pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recovery {
    pub scanned: usize,
    /// Rows moved to a later state (confirmed, PROCESSED).
    pub advanced: usize,
    /// Rows marked FAILED.
    pub failed: usize,
    /// Workbenches with requests waiting, whose start is wanted (the
    /// server starts those without a live terminal).
    pub workbenches: Vec<String>,
}

fn is_request(kind: EventKind) -> bool {
    matches!(
        kind,
        EventKind::GatewayDiscussionRequest | EventKind::GatewayWorkRequest
    )
}

impl Gateway<'_> {
    /// Whether the Workbench `task_id` should be started for the gateway
    /// requests waiting (PENDING) in its inbox (docs/tower-messaging.md §8.2 step 14,
    /// `ensureWorkbench`): yes, unless it is no Workbench, nothing is
    /// waiting, it has a live execution (here or on another node), or a person
    /// stopped it after the oldest waiting request came in (it waits for a
    /// person's start, or a newer request). The caller checks its own
    /// terminals.
    pub async fn workbench_start_wanted(&self, task_id: &str) -> CoreResult<bool> {
        if !self.h.store().is_workbench(task_id).await? {
            return Ok(false);
        }
        let oldest = self
            .h
            .store()
            .list_workbench_events(task_id, 200)
            .await?
            .into_iter()
            .filter(|e| e.state == EventState::Pending && is_request(e.kind))
            .map(|e| e.created_at)
            .min();
        let Some(oldest) = oldest else {
            return Ok(false);
        };
        // A live execution is somebody's agent (this node's terminal, or
        // another node's): it gets the batch at its turn end. One without a
        // terminal after a restart was ended at start-up.
        if self.h.tasks().live_execution(task_id).await?.is_some() {
            return Ok(false);
        }
        let view = self.h.tasks().get_task(task_id).await?;
        let stopped_since = view.execution.as_ref().is_some_and(|e| {
            e.status == ExecutionStatus::Stopped && e.ended_at.is_some_and(|at| at >= oldest)
        });
        Ok(!stopped_since)
    }

    /// The Workbench could not be started: the reason is noted on the
    /// requests waiting for it (docs/tower-messaging.md §8.2 step 14, `lastError`), so the gateway
    /// page shows why nothing happens. Their state does not change.
    pub async fn workbench_start_failed(&self, task_id: &str, reason: &str) -> CoreResult<()> {
        let now = Utc::now();
        for e in self.h.store().list_workbench_events(task_id, 200).await? {
            if e.state != EventState::Pending || !is_request(e.kind) {
                continue;
            }
            let Some(inbound) = e.payload["sourceReference"]["id"].as_str() else {
                continue;
            };
            self.h
                .store()
                .mark_inbound(InboundMark {
                    id: inbound.to_string(),
                    seen_state: InboundState::Queued,
                    state: InboundState::Queued,
                    response: None,
                    last_error: Some(format!("workbench: {reason}")),
                    now,
                })
                .await?;
        }
        Ok(())
    }

    /// docs/tower-messaging.md §8.13 `recoverQueuedGatewayWork`, one pass (see the module doc).
    pub async fn recover_gateway_inbound(&self, now: DateTime<Utc>) -> CoreResult<Recovery> {
        let mut rows = self
            .h
            .store()
            .list_inbound(Some(InboundState::Queued), RECOVERY_LIMIT)
            .await?;
        rows.extend(
            self.h
                .store()
                .list_inbound(Some(InboundState::Processing), RECOVERY_LIMIT)
                .await?,
        );
        rows.retain(|r| {
            matches!(
                r.intent,
                InboundIntent::ProjectDiscussion | InboundIntent::ProjectWork
            )
        });
        rows.sort_by_key(|r| r.created_at);
        rows.truncate(RECOVERY_LIMIT as usize);
        let mut out = Recovery {
            scanned: rows.len(),
            ..Recovery::default()
        };
        for row in rows {
            let step = match &row.session_id {
                Some(session) => self.recover_request(&row, session, now).await,
                None => self.recover_continuation(&row, now).await,
            };
            match step {
                Ok(Step::Nothing) => {}
                Ok(Step::Advanced) => out.advanced += 1,
                Ok(Step::Failed) => out.failed += 1,
                Ok(Step::Wanted(wb)) => {
                    if !out.workbenches.contains(&wb) {
                        out.workbenches.push(wb);
                    }
                }
                Err(err) => {
                    tracing::warn!(error = ?err, inbound_id = %row.id, "cannot recover the gateway request");
                    out.failed += 1;
                }
            }
        }
        if out.advanced + out.failed > 0 {
            tracing::info!(
                advanced = out.advanced,
                failed = out.failed,
                "gateway requests recovered"
            );
        }
        Ok(out)
    }

    async fn fail(&self, row: &GatewayInbound, response: Value, why: &str) -> CoreResult<Step> {
        let marked = self
            .h
            .store()
            .mark_inbound(InboundMark {
                id: row.id.clone(),
                seen_state: row.state,
                state: InboundState::Failed,
                response: Some(response.to_string()),
                last_error: Some(why.to_string()),
                now: Utc::now(),
            })
            .await?;
        Ok(if marked { Step::Failed } else { Step::Nothing })
    }

    /// A request admitted to a Workbench (discussion or work).
    async fn recover_request(
        &self,
        row: &GatewayInbound,
        session_id: &str,
        now: DateTime<Utc>,
    ) -> CoreResult<Step> {
        let discussion = row.intent == InboundIntent::ProjectDiscussion;
        let mode = if discussion {
            "project_discussion"
        } else {
            "project_work"
        };
        let session = self.h.store().get_session(session_id).await?;
        let Some((session, workbench)) = session.and_then(|s| {
            let wb = s.workbench_task_id.clone()?;
            Some((s, wb))
        }) else {
            return self
                .fail(
                    row,
                    json!({"mode": mode, "inboundId": row.id, "recovered": true}),
                    "the request's session or Workbench is gone",
                )
                .await;
        };
        if !discussion && let Some(step) = self.recover_linked(row, &session).await? {
            return Ok(step);
        }
        if row.state != InboundState::Queued {
            // Confirmed work: the Workbench reviews its task through its
            // inbox; nothing here is owed.
            return Ok(Step::Nothing);
        }
        let project = match self.h.tasks().project(&session.project_id).await {
            Ok(p) => p,
            Err(crate::CoreError::NotFound(_)) => {
                return self
                    .fail(
                        row,
                        json!({"mode": mode, "inboundId": row.id, "recovered": true}),
                        "the request's project is gone",
                    )
                    .await;
            }
            Err(err) => return Err(err),
        };
        // Re-published with its dedup key: normally the existing event.
        let (event, created) = self
            .h
            .store()
            .add_workbench_event(route::request_event(
                &RequestSource::of(row),
                &project,
                &workbench,
                discussion,
                now,
            ))
            .await?;
        if created {
            tracing::warn!(inbound_id = %row.id, "a queued gateway request's Workbench event was missing: re-published");
            self.h.wake(Kind::Inbox);
        }
        if event.state == EventState::Consumed {
            let why = if discussion {
                "the Workbench resolved the discussion without answering it \
                 (complete_gateway_discussion)"
            } else {
                "the Workbench resolved the work request without a durable task link \
                 (create_task with gatewayInboundId, confirm_gateway_task_created)"
            };
            return self
                .fail(
                    row,
                    json!({"mode": mode, "inboundId": row.id, "recovered": true,
                        "reason": why}),
                    why,
                )
                .await;
        }
        let ack = NewReply {
            id: crate::ids::new_id(),
            inbound_id: row.id.clone(),
            kind: ReplyKind::QueuedAck,
            content: route::ack_text(&project, discussion),
            dedup_key: replies::dedup_key(ReplyKind::QueuedAck, &row.id),
            now,
        };
        if let Some((_, true)) = self.h.store().enqueue_reply(ack).await? {
            tracing::warn!(inbound_id = %row.id, "a queued gateway request's acknowledgement was missing: written");
            self.h.wake(Kind::GatewayReplies);
        }
        Ok(Step::Wanted(workbench))
    }

    /// A work request's linked task: confirmed when the Workbench did not
    /// get to it. `None`: no link.
    async fn recover_linked(
        &self,
        row: &GatewayInbound,
        session: &GatewaySession,
    ) -> CoreResult<Option<Step>> {
        let linked = self.h.store().linked_task(&row.id).await?;
        let Some(task_id) = linked.or_else(|| row.created_task_id.clone()) else {
            return Ok(None);
        };
        let Some(task) = self.h.store().get_task(&task_id).await? else {
            return self
                .fail(
                    row,
                    json!({"mode": "project_work", "inboundId": row.id, "recovered": true}),
                    "the task created for the request is gone",
                )
                .await
                .map(Some);
        };
        if row.created_task_id.is_some() {
            return Ok(Some(Step::Nothing));
        }
        let settle = workbench_callbacks::task_created(row, session, &task, Utc::now())?;
        let (_, created) = self.settle_gateway_request(settle, session).await?;
        tracing::warn!(inbound_id = %row.id, task_id = %task.task.id, created,
            "a linked gateway task was never confirmed: confirmed by the recovery");
        Ok(Some(Step::Advanced))
    }

    /// A `continue_bound_task` claim (no session) whose lease ended.
    async fn recover_continuation(
        &self,
        row: &GatewayInbound,
        now: DateTime<Utc>,
    ) -> CoreResult<Step> {
        let stored: Option<Value> = row
            .response
            .as_deref()
            .and_then(|r| serde_json::from_str(r).ok());
        if row.state != InboundState::Processing
            || !self.continuation_claim_lapsed(row, now).await?
        {
            return Ok(Step::Nothing);
        }
        let task_id = stored
            .as_ref()
            .and_then(|v| v.get("taskId"))
            .and_then(Value::as_str)
            .map(str::to_string);
        let queued = match &task_id {
            Some(t) => self
                .h
                .store()
                .task_deliveries(t, 500)
                .await?
                .into_iter()
                .find(|d| d.dedup_key.as_deref() == Some(row.id.as_str())),
            None => None,
        };
        let (Some(task_id), Some(delivery)) = (task_id.clone(), queued) else {
            let why = "the continuation's claim lapsed (its lease ended or its node is gone) \
                       before its input was queued; the gateway's retry of the message \
                       continues it";
            return self
                .fail(
                    row,
                    json!({"mode": "continue_failed", "inboundId": row.id, "taskId": task_id,
                        "deduped": false, "noOp": false, "reason": why}),
                    why,
                )
                .await;
        };
        let title = match self.h.store().get_task(&task_id).await? {
            Some(t) => t.task.title,
            None => task_id.clone(),
        };
        let out = json!({"mode": "continued_task", "inboundId": row.id, "taskId": task_id,
            "deliveryId": delivery.id, "delivery": delivery.state, "queued": true,
            "deduped": false, "noOp": false, "recovered": true});
        // The result and its acknowledgement in one transaction, as the
        // continuation itself writes them (a racing retry of the message
        // writes the same result; the acknowledgement's key is unique).
        let done = self
            .h
            .store()
            .finish_inbound(InboundFinish {
                id: row.id.clone(),
                state: InboundState::Processed,
                response: out.to_string(),
                last_error: None,
                now,
                reply: Some(replies::queued_ack(row, &title, now)),
            })
            .await?;
        if done.is_none() {
            return Ok(Step::Nothing);
        }
        self.h.wake(Kind::GatewayReplies);
        Ok(Step::Advanced)
    }
}

enum Step {
    Nothing,
    Advanced,
    Failed,
    /// Still waiting for this Workbench.
    Wanted(String),
}
