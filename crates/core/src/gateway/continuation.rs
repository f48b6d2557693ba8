//! `continue_bound_task` (docs/tower-messaging.md §8.4): the OWNER's explicit
//! "continue" / "fix it from this failure" for the task a chat message is
//! bound to — at most once per platform message.
//!
//! The platform message is an inbound row (dedup key of docs/tower-messaging.md §2.12, the same row
//! a routed `task_context` would have written); the call claims the row
//! with the engine's lease ([`crate::work::Lease`]: its process as the
//! owner, [`CLAIM_LEASE`]), fenced by the row it judged, so of concurrent
//! or repeated calls one acts and the others answer `deduped` / `noOp`.
//! The claim is not owed work — no worker takes it up; it lives as long as
//! the call — so a lapsed one (its lease ended, or its process is gone) is
//! taken over by the gateway's retry of the message or settled by the
//! recovery pass (`recovery.rs`) by what it had queued. A task with an OPEN ask is refused
//! (`continue_open_ask`: that is `reply_to_ask`'s). The instruction goes
//! into the task's terminal through the delivery queue with the inbound id
//! as the injection id (docs/decisions.md D5: typed at most once, even when a retry follows an
//! uncertain answer); the row is PROCESSED once the delivery row exists, and
//! in that transaction the acknowledgement reply is written
//! ([`super::replies`]). A message that is only `restart`, `resume` or
//! `stop` (the replies an agent-state push offers,
//! `crate::agent_state::told`) acts on the task's agent instead
//! (`Agents::agent_reply`).

use crate::gateway::Gateway;
use chrono::{DateTime, Duration, Utc};
use serde::Deserialize;
use serde_json::{Value, json};

use super::{
    context::{Lookup, MAX_ID_CHARS, MAX_PLATFORM_CHARS, MAX_QUOTED_CHARS, MAX_TASK_ID_CHARS},
    context::{gateway_name, required, text},
    ids,
    owner::{Role, Sender},
};
use crate::{
    CoreError, CoreResult, ids as core_ids,
    outbox::token,
    store::{GatewayInbound, InboundClaim, InboundFinish, InboundIntent, InboundState, NewInbound},
    work::Lease,
};

pub const MAX_CONTENT_CHARS: usize = 10_000;

/// How long a claim holds its row (another try may take it over after).
pub const CLAIM_LEASE: std::time::Duration = std::time::Duration::from_secs(60);

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContinueInput {
    pub gateway: Option<String>,
    pub platform: Option<String>,
    pub chat_id: Option<String>,
    /// The id of this message (the idempotency identity).
    pub platform_message_id: Option<String>,
    pub sender_id: Option<String>,
    pub reply_to_message_id: Option<String>,
    pub quoted_text: Option<String>,
    pub task_id: Option<String>,
    pub content: Option<String>,
}

struct Checked {
    lookup: Lookup,
    platform_message_id: String,
    sender_id: Option<String>,
    content: String,
}

impl ContinueInput {
    fn check(&self) -> CoreResult<Checked> {
        let base = super::context::TaskContextInput {
            gateway: self.gateway.clone(),
            platform: self.platform.clone(),
            chat_id: self.chat_id.clone(),
            reply_to_message_id: self.reply_to_message_id.clone(),
            quoted_text: self.quoted_text.clone(),
            task_id: self.task_id.clone(),
        };
        // Field by field in the schema's order, then the "one of" rule.
        gateway_name(self.gateway.as_deref())?;
        required(self.platform.as_deref(), "platform", MAX_PLATFORM_CHARS)?;
        required(self.chat_id.as_deref(), "chatId", MAX_ID_CHARS)?;
        let platform_message_id = required(
            self.platform_message_id.as_deref(),
            "platformMessageId",
            MAX_ID_CHARS,
        )?;
        let sender_id = text(self.sender_id.as_deref(), "senderId", MAX_ID_CHARS)?;
        text(
            self.reply_to_message_id.as_deref(),
            "replyToMessageId",
            MAX_ID_CHARS,
        )?;
        text(self.quoted_text.as_deref(), "quotedText", MAX_QUOTED_CHARS)?;
        text(self.task_id.as_deref(), "taskId", MAX_TASK_ID_CHARS)?;
        let content = required(self.content.as_deref(), "content", MAX_CONTENT_CHARS)?;
        Ok(Checked {
            lookup: base.check()?,
            platform_message_id,
            sender_id,
            content,
        })
    }
}

fn cached(row: &GatewayInbound) -> Option<Value> {
    row.response
        .as_deref()
        .and_then(|r| serde_json::from_str::<Value>(r).ok())
}

fn mode_of(value: &Option<Value>) -> Option<String> {
    value
        .as_ref()
        .and_then(|v| v.get("mode"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

fn with(mut value: Value, extra: Value) -> Value {
    if let (Some(obj), Some(more)) = (value.as_object_mut(), extra.as_object()) {
        for (k, v) in more {
            obj.insert(k.clone(), v.clone());
        }
    }
    value
}

fn prompt(row: &GatewayInbound, title: &str, task_id: &str) -> String {
    let mut lines = vec![
        "[Explicit Gateway Task Continuation]".to_string(),
        format!("Inbound: {}", row.id),
        format!("Task: {title}"),
        token::task_line(task_id),
        format!("Source: {}:{}", row.platform, row.chat_id),
        format!("Platform message: {}", row.platform_message_id),
    ];
    if let Some(reply_to) = &row.reply_to_message_id {
        lines.push(format!("Reply to: {reply_to}"));
    }
    lines.push(String::new());
    lines.push(row.content.clone());
    lines.push(String::new());
    lines.push(
        "The configured OWNER explicitly asked this task to continue with the message above."
            .into(),
    );
    lines.join("\n")
}

impl Gateway<'_> {
    /// Whether a continuation's PROCESSING claim may be taken over (by the
    /// gateway's retry of the message, or by the recovery pass): its lease
    /// ended (`now`: the database's clock), or the process holding it is
    /// gone — its node restarted (another boot) or the cluster deems it
    /// dead (its heartbeat is older than the dead-after, by the database's
    /// clock). A claim only lives as long as the call that made it, so
    /// nobody waits out the lease for a dead one. Taking over twice is
    /// harmless: the input's delivery is keyed by the inbound id and its
    /// acknowledgement's key is unique.
    pub(crate) async fn continuation_claim_lapsed(
        &self,
        row: &GatewayInbound,
        now: DateTime<Utc>,
    ) -> CoreResult<bool> {
        // A row without a lease (never claimed) lapses with its age.
        let ends = row.lease_expires_at.unwrap_or_else(|| {
            row.updated_at + Duration::from_std(CLAIM_LEASE).unwrap_or(Duration::seconds(60))
        });
        if now >= ends {
            return Ok(true);
        }
        let Some(owner) = row.lease_owner.as_deref() else {
            return Ok(false);
        };
        if self.h.config().delivery_owner.as_deref() == Some(owner) {
            return Ok(false);
        }
        let Some((node, boot)) = owner.split_once(':') else {
            return Ok(false);
        };
        Ok(match self.h.store().get_node(node).await? {
            Some(n) => n.boot != boot || !n.alive,
            None => false,
        })
    }

    /// docs/tower-messaging.md §8.4: refused (403, nothing written) unless the sender is the OWNER.
    pub async fn continue_bound_task(&self, input: &ContinueInput) -> CoreResult<Value> {
        let c = input.check()?;
        let role = self
            .gateway_role(Sender {
                gateway: &c.lookup.gateway,
                platform: &c.lookup.platform,
                sender_id: c.sender_id.as_deref(),
            })
            .await?;
        if role != Role::Owner {
            return Err(CoreError::Forbidden(
                "Only the configured platform OWNER may continue a task".into(),
            ));
        }
        // The claim clock is the database's: every node judges a claim's
        // age by the same clock.
        let now = self.h.cluster().db_now().await?;
        let (row, created) = self
            .h
            .store()
            .create_inbound(NewInbound {
                id: core_ids::new_id(),
                dedup_key: ids::inbound_dedup_key(
                    &c.lookup.gateway,
                    &c.lookup.platform,
                    &c.lookup.chat_id,
                    &c.platform_message_id,
                ),
                gateway: c.lookup.gateway.clone(),
                platform: c.lookup.platform.clone(),
                chat_id: ids::normalize_chat_id(&c.lookup.platform, &c.lookup.chat_id),
                sender_id: c.sender_id.clone(),
                platform_message_id: c.platform_message_id.clone(),
                thread_id: None,
                root_message_id: None,
                reply_to_message_id: c.lookup.reply_to_message_id.clone(),
                intent: InboundIntent::ProjectWork,
                content: c.content.clone(),
                now,
            })
            .await?;
        let deduped = !created;
        let stored = cached(&row);
        let mode = mode_of(&stored);
        let in_flight = mode.as_deref() == Some("continue_in_progress") || stored.is_none();
        let stale = in_flight && self.continuation_claim_lapsed(&row, now).await?;
        let mut expected: Option<String> = None;
        if deduped {
            let replay = json!({"deduped": true, "noOp": true});
            if matches!(
                mode.as_deref(),
                Some(
                    "continued_task"
                        | "agent_action"
                        | "continue_not_bound"
                        | "continue_open_ask"
                        | "continue_conflict"
                )
            ) {
                return Ok(with(stored.unwrap_or(Value::Null), replay));
            }
            let routed_context = mode.as_deref() == Some("task_context");
            let retryable = mode.as_deref() == Some("continue_failed")
                || (mode.as_deref() == Some("continue_in_progress") && stale)
                || (stored.is_none() && stale)
                || routed_context;
            if !retryable {
                return Ok(json!({
                    "mode": if row.state == InboundState::Failed { "continue_failed" } else { "continue_in_progress" },
                    "inboundId": row.id, "deduped": true, "noOp": true,
                    "taskId": stored.as_ref().and_then(|v| v.get("taskId")).cloned(),
                    "reason": row.last_error,
                }));
            }
            if row.content.trim() != c.content {
                return Ok(json!({
                    "mode": "continue_conflict", "inboundId": row.id, "deduped": true,
                    "noOp": true, "reason": "content does not match the stored message",
                }));
            }
            expected = stored.as_ref().and_then(|v| {
                v.get("taskId")
                    .or_else(|| v.get("context").and_then(|c| c.get("subjectTaskId")))
                    .and_then(Value::as_str)
                    .map(str::to_string)
            });
        }
        let context = self.task_context(&c.lookup, Some(&c.content)).await?;
        if let (Some(expected), Some(subject)) = (&expected, &context.subject_task_id)
            && expected != subject
        {
            return Ok(json!({
                "mode": "continue_conflict", "inboundId": row.id, "deduped": deduped,
                "noOp": true, "reason": "the message is bound to another task",
            }));
        }
        let in_progress = json!({"mode": "continue_in_progress", "inboundId": row.id,
            "taskId": context.subject_task_id});
        // Leased to this process, so a retry need not wait out the lease
        // when it dies before it finishes.
        let lease = Lease {
            owner: self
                .h
                .config()
                .delivery_owner
                .clone()
                .unwrap_or_else(|| self.h.config().node_id.clone()),
            ttl: CLAIM_LEASE,
        };
        let claim = |seen: &GatewayInbound| InboundClaim {
            id: seen.id.clone(),
            seen_state: seen.state,
            seen_response: seen.response.clone(),
            seen_updated_at: seen.updated_at,
            response: in_progress.to_string(),
            lease_until: lease.until(now),
            owner: lease.owner.clone(),
            now,
        };
        let mut claimed = self.h.store().claim_inbound(claim(&row)).await?;
        if claimed.is_none()
            && let Some(current) = self.h.store().get_inbound(&row.id).await?
            && current.state == InboundState::Failed
            && mode_of(&cached(&current)).as_deref() == Some("continue_failed")
            && current.content.trim() == c.content
        {
            // The recovery failed the lapsed claim between this call's read
            // and its claim; its failure says the retry continues it: this
            // call is that retry.
            claimed = self.h.store().claim_inbound(claim(&current)).await?;
        }
        let Some(claimed) = claimed else {
            // Another call took the row: its result, or it is still at it.
            let current = self.h.store().get_inbound(&row.id).await?;
            let value = current.as_ref().and_then(cached).unwrap_or(in_progress);
            return Ok(with(value, json!({"deduped": true, "noOp": true})));
        };
        let finish = |state: InboundState, response: &Value, error: Option<String>| InboundFinish {
            id: claimed.id.clone(),
            state,
            response: response.to_string(),
            last_error: error,
            now: Utc::now(),
            reply: None,
        };
        let (Some(task_id), Some(title)) = (&context.subject_task_id, &context.task_title) else {
            let out = json!({"mode": "continue_not_bound", "inboundId": claimed.id,
                "deduped": deduped, "noOp": true, "reason": context.reason});
            self.h
                .store()
                .finish_inbound(finish(InboundState::Processed, &out, None))
                .await?;
            return Ok(out);
        };
        // "restart" / "resume" / "stop" alone: the person acts on the
        // agent (a reply to an agent-state push), whatever it waits for.
        if let Some(action) = crate::agent_state::told::reply_action(&c.content)
            && let Some(control) = self.h.runtime().and_then(|r| r.control())
        {
            let word = match action {
                crate::agent_state::told::ReplyAction::Resume => "resume",
                crate::agent_state::told::ReplyAction::Stop => "stop",
            };
            let (state, out, error) = match self
                .h
                .agents()
                .agent_reply(control.as_ref(), task_id, action)
                .await
            {
                Ok(view) => (
                    InboundState::Processed,
                    json!({"mode": "agent_action", "action": word, "inboundId": claimed.id,
                        "taskId": task_id, "executionId": view.execution.map(|e| e.id),
                        "deduped": deduped, "noOp": false}),
                    None,
                ),
                Err(err) => {
                    let reason = err.client_message();
                    (
                        InboundState::Failed,
                        json!({"mode": "continue_failed", "action": word,
                            "inboundId": claimed.id, "taskId": task_id, "deduped": deduped,
                            "noOp": false, "reason": reason}),
                        Some(reason),
                    )
                }
            };
            self.h
                .store()
                .finish_inbound(finish(state, &out, error))
                .await?;
            return Ok(out);
        }
        if context.has_open_ask == Some(true) {
            let out = json!({"mode": "continue_open_ask", "inboundId": claimed.id,
                "taskId": task_id, "deduped": deduped, "noOp": true,
                "reason": "the task has an OPEN question: answer it with reply_to_ask"});
            self.h
                .store()
                .finish_inbound(finish(InboundState::Processed, &out, None))
                .await?;
            return Ok(out);
        }
        let text = prompt(&claimed, title, task_id);
        // The owner continues the task from the chat: Harness's own
        // planned actions are off.
        self.h
            .agents()
            .cancel_agent_actions(task_id, "a person continued it from the chat")
            .await?;
        match self
            .h
            .deliveries()
            .enqueue_child_input(task_id, &text, true, &claimed.id)
            .await
        {
            Ok((delivery, _)) => {
                let out = json!({"mode": "continued_task", "inboundId": claimed.id,
                    "taskId": task_id, "deliveryId": delivery.id,
                    "delivery": delivery.state, "queued": true, "deduped": deduped,
                    "noOp": false});
                // The acknowledgement is written with the PROCESSED state
                // (one transaction): exactly one per queued continuation.
                let mut done = finish(InboundState::Processed, &out, None);
                done.reply = Some(super::replies::queued_ack(&claimed, title, done.now));
                self.h.store().finish_inbound(done).await?;
                self.h.wake(crate::work::Kind::GatewayReplies);
                Ok(out)
            }
            Err(err) => {
                let reason = err.client_message();
                let out = json!({"mode": "continue_failed", "inboundId": claimed.id,
                    "taskId": task_id, "deduped": deduped, "noOp": false, "reason": reason});
                self.h
                    .store()
                    .finish_inbound(finish(InboundState::Failed, &out, Some(reason)))
                    .await?;
                Ok(out)
            }
        }
    }
}
