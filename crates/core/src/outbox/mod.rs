//! The durable outbox (docs/tower-messaging.md §2.2, docs/tower-messaging.md §3.2;
//! docs/decisions.md D7, docs/decisions.md D8, D10): `push_to_human` writes the message (PENDING_DELIVERY) and
//! its outbound row in one transaction; the outbox worker
//! (`server/src/workers/outbox.rs`) sends it through the gateway CLI and
//! applies the state machine:
//!
//! ```text
//! PENDING ─claim─► SENDING ─┬─ exit 0 + id ──────────────► DELIVERED        (activation)
//!    ▲                      ├─ exit 0 no id / error + id ─► SENT_UNVERIFIED  (activation)
//!    │                      ├─ lease expired (crash) ─────► SENT_UNVERIFIED  (activation)
//!  FAILED ◄─ clean failure ─┘ (backoff 2…256 s)  ── after MAX_ATTEMPTS ──► DEAD
//! ```
//!
//! Activation (one transaction): an ask opens (the task's other OPEN asks
//! are cancelled, RUNNING executions parked), a notify closes, and the
//! platform message id → task mapping is recorded. SENT_UNVERIFIED is never
//! sent again automatically; a person may "mark as delivered". FAILED / DEAD
//! can be retried by a person at once.

pub mod destination;
pub mod destination_edits;
pub mod gateway;
pub mod health;
mod model;
pub mod platforms;
pub mod receipt;
mod sender;
pub mod target_edits;
pub mod targets;
pub mod token;
pub mod unsent;

use std::time::Duration;

use chrono::Utc;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::{
    CoreError, CoreResult, Harness,
    events::HarnessEvent,
    ids,
    model::MessageState,
    store::{Dedup, NewOutbound, Settle},
    validate,
    work::ManualAction,
};
pub use model::{DeliveryMapping, Outbound, OutboundState};
pub use receipt::{Receipt, RunEnd, SendOutcome};
pub use unsent::Unsent;

/// How long a claim holds a row: longer than the CLI timeout plus its kill.
pub const CLAIM_LEASE: Duration = crate::work::OUTBOX.lease;
/// The gateway CLI's timeout (then its process group is killed).
pub const CLI_TIMEOUT: Duration = Duration::from_secs(60);
/// How long `push_to_human` waits for the first attempt by default (docs/decisions.md D8).
pub const DEFAULT_PUSH_WAIT: Duration = Duration::from_secs(5);
/// The longest message through a configured channel (`push_to_human`).
pub const MAX_PUSH_CHARS: usize = 4000;
/// The longest `to` (a chat name, alias or id).
pub const MAX_TO_CHARS: usize = 1024;
/// The longest caller `dedupKey`.
pub const MAX_DEDUP_KEY_CHARS: usize = 256;
/// The longest `downstream` (a gateway's downstream channel name).
pub const MAX_DOWNSTREAM_CHARS: usize = 128;
/// The longest `dest` (a chat id on a platform).
pub const MAX_DEST_CHARS: usize = 1024;
/// The longest gateway `profile`.
pub const MAX_PROFILE_CHARS: usize = 256;

/// The outbox service (`Harness::outbox`): the messages pushed to a person
/// and their outbound rows, sending them through the gateway CLI and
/// settling each attempt (here, `sender`), the gateway configuration
/// (`gateway`), the chat destinations and their edits (`destination`,
/// `destination_edits`), the notify targets and their edits (`targets`,
/// `target_edits`) and a channel's health (`health`).
#[derive(Clone, Copy)]
pub struct Outbox<'h> {
    pub(crate) h: &'h Harness,
}

/// `push_to_human` / `POST /api/internal/harness/outbound`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PushInput {
    #[serde(default)]
    pub task_id: Option<String>,
    pub message: Option<String>,
    pub scope: Option<String>,
    /// A destination (name, alias or id) for the work scope.
    pub to: Option<String>,
    pub expect_reply: Option<bool>,
    pub dedup_key: Option<String>,
    /// The reference's REST body names the channel itself; without it the
    /// active notify target of the scope is used.
    pub gateway: Option<String>,
    pub downstream: Option<String>,
    pub dest: Option<String>,
    pub requested_to: Option<String>,
    pub profile: Option<String>,
    pub presentation: Option<serde_json::Value>,
    /// options, multiSelect, default, deadline, urgency — as an ask takes
    /// them, validated by `options::validate`.
    #[serde(flatten)]
    pub choices: crate::options::ChoicesInput,
}

/// What `push_to_human` answers (docs/tower-messaging.md §4.3).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PushOutcome {
    pub ok: bool,
    pub scope: String,
    pub expect_reply: bool,
    pub outbound_id: String,
    pub message_id: Option<String>,
    pub state: OutboundState,
    pub deduped: bool,
    pub sent: bool,
    pub parked: bool,
    pub platform_message_id: Option<String>,
    pub last_error: Option<String>,
    pub attempts: u32,
}

fn trimmed(v: Option<&str>, field: &'static str, max: usize) -> CoreResult<Option<String>> {
    let v = v.map(str::trim).filter(|t| !t.is_empty());
    if v.is_some_and(|t| t.chars().count() > max) {
        return Err(CoreError::invalid(
            field,
            format!("{field} too long (at most {max})"),
        ));
    }
    Ok(v.map(str::to_string))
}

/// `harness:<taskId>:<first 32 hex of sha256(JSON{…})>` (docs/tower-messaging.md §2.12).
pub fn implicit_key(task_id: &str, n: &NewOutbound) -> String {
    implicit_key_with(task_id, n, None)
}

/// The structured part of a push as given, for its implicit key.
fn choices_key(c: &crate::options::ChoicesInput) -> serde_json::Value {
    serde_json::json!({
        "options": c.options, "multiSelect": c.multi_select, "default": c.default,
        "deadline": c.deadline, "urgency": c.urgency,
    })
}

/// [`implicit_key`] of a push with choices (their input joins the digest;
/// without choices the key is exactly [`implicit_key`]'s).
fn implicit_key_with(task_id: &str, n: &NewOutbound, choices: Option<serde_json::Value>) -> String {
    let mut json = serde_json::json!({
        "taskId": task_id,
        "gateway": n.gateway,
        "downstream": n.downstream,
        "dest": n.dest,
        "requestedTo": n.requested_to,
        "scope": n.scope,
        "expectReply": n.expect_reply,
        "message": n.message,
    });
    if let Some(c) = choices {
        json["choices"] = c;
    }
    let digest = Sha256::digest(json.to_string().as_bytes());
    format!("harness:{task_id}:{}", &hex::encode(digest)[..32])
}

/// The agent's screen as a push carries it (already bounded and redacted),
/// labelled in `lang`.
pub fn screen_block(screen: &str, lang: crate::ladder::Lang) -> String {
    let label = match lang {
        crate::ladder::Lang::En => "Agent's screen (redacted):",
        crate::ladder::Lang::Zh => "智能体的屏幕（已脱敏）：",
    };
    format!("{label}\n```\n{screen}\n```")
}

/// The body sent: the task title, the message, and the task token line.
pub fn compose_body(title: Option<&str>, message: &str, task_id: &str) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(t) = title.map(str::trim).filter(|t| !t.is_empty()) {
        parts.push(t.to_string());
    }
    parts.push(message.trim().to_string());
    if token::extract(message).as_deref() != Some(task_id) {
        parts.push(token::task_line(task_id));
    }
    parts.join("\n\n")
}

impl Outbox<'_> {
    /// Wake the outbox worker (a row is due).
    pub fn wake_outbox(&self) {
        self.h.wake(crate::work::Kind::Outbox);
    }

    /// Publish a change of an outbound row (after its commit).
    pub fn outbound_changed(&self, row: &Outbound) {
        self.h.publish(HarnessEvent::OutboundChanged {
            id: row.id.clone(),
            task_id: row.task_id.clone(),
            message_id: row.message_id.clone(),
            state: row.state,
        });
    }

    /// Persist a message for the human and its outbound row (one
    /// transaction), wake the sender, wait at most `outbox_wait` for the
    /// first attempt, and answer the row's state (docs/decisions.md D8).
    #[tracing::instrument(skip_all, fields(task_id))]
    pub async fn push_to_human(&self, input: PushInput) -> CoreResult<PushOutcome> {
        let task_id = validate::task_id(input.task_id.as_deref())?;
        let task = self
            .h
            .store()
            .get_task(&task_id)
            .await?
            .ok_or_else(|| CoreError::NotFound("Task not found".into()))?;
        let scope = match trimmed(input.scope.as_deref(), "scope", 20)? {
            Some(s) if s == "work" || s == "unattended" => s,
            Some(_) => {
                return Err(CoreError::invalid(
                    "scope",
                    "scope must be \"work\" or \"unattended\"",
                ));
            }
            None => if task.task.unattended {
                "unattended"
            } else {
                "work"
            }
            .to_string(),
        };
        let dedup_key = trimmed(input.dedup_key.as_deref(), "dedupKey", MAX_DEDUP_KEY_CHARS)?;
        let to = trimmed(
            input.to.as_deref().or(input.requested_to.as_deref()),
            "to",
            MAX_TO_CHARS,
        )?;
        // The chat's language: the configured target's (a gateway named in
        // the call: English).
        let mut lang = crate::ladder::Lang::En;
        // Whether the push may carry the agent's screen: only a target
        // that allows it (docs/evidence.md), never an explicit gateway.
        let mut include_screen = false;
        let (gateway, downstream, dest, profile, raw_max) = match trimmed(
            input.gateway.as_deref(),
            "gateway",
            32,
        )? {
            Some(g) => {
                if g != "hermes" && g != "openclaw" {
                    return Err(CoreError::invalid(
                        "gateway",
                        "gateway must be \"hermes\" or \"openclaw\"",
                    ));
                }
                (
                    g,
                    trimmed(
                        input.downstream.as_deref(),
                        "downstream",
                        MAX_DOWNSTREAM_CHARS,
                    )?,
                    trimmed(input.dest.as_deref(), "dest", MAX_DEST_CHARS)?,
                    trimmed(input.profile.as_deref(), "profile", MAX_PROFILE_CHARS)?,
                    16_000,
                )
            }
            None => {
                let target = self.active_target(&scope).await?.ok_or_else(|| {
                    CoreError::Conflict(format!("No active {scope} channel configured"))
                })?;
                if target.gateway != "hermes" && target.gateway != "openclaw" {
                    return Err(CoreError::Conflict(format!(
                        "push_to_human supports Hermes/OpenClaw channels only; active gateway is {}",
                        target.gateway
                    )));
                }
                let clean =
                    |v: Option<String>| v.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
                lang = target.lang();
                include_screen = target.include_screen;
                (
                    target.gateway,
                    clean(target.downstream),
                    clean(target.dest),
                    clean(target.profile),
                    MAX_PUSH_CHARS,
                )
            }
        };
        if scope == "work" && dest.is_none() && to.is_none() {
            return Err(CoreError::invalid(
                "to",
                "Work messages require a destination: pass `to` (a chat name, alias or id)",
            ));
        }
        let message = validate::text("message", input.message.as_deref(), raw_max)?;
        let now = Utc::now();
        let choices = crate::options::validate(&input.choices, now, self.h.config().pending_ttl)?;
        if choices.is_some() && input.expect_reply == Some(false) {
            return Err(CoreError::invalid(
                "expectReply",
                "options, multiSelect, default, deadline and urgency make a question: \
                 expectReply must be true or left out",
            ));
        }
        // A question with choices always expects its answer.
        let expect_reply = choices.is_some() || input.expect_reply.unwrap_or(scope == "unattended");
        let body = compose_body(Some(&task.task.title), &message, &task_id);
        let presentation = input
            .presentation
            .filter(|p| !p.is_null())
            .map(|p| p.to_string());
        let mut new = NewOutbound {
            id: ids::new_id(),
            message_id: Some(ids::new_id()),
            task_id: Some(task_id.clone()),
            dedup: Dedup::Implicit(String::new()),
            gateway,
            downstream,
            dest,
            requested_to: to,
            profile,
            scope: scope.clone(),
            expect_reply,
            message: body,
            presentation,
            now,
            choices: None,
        };
        new.dedup = match dedup_key {
            Some(k) => Dedup::Explicit(format!("harness:{task_id}:{k}")),
            // Keyed on the choices as given (a relative deadline renders
            // another time on every retry; its input does not).
            None => Dedup::Implicit(implicit_key_with(
                &task_id,
                &new,
                choices.as_ref().map(|_| choices_key(&input.choices)),
            )),
        };
        let mut text = message.clone();
        if let Some(choices) = choices {
            // The chat text lists the options numbered, the default and the deadline.
            text = crate::options::render_for_chat_in(&message, &choices, lang);
            new.message = compose_body(Some(&task.task.title), &text, &task_id);
            new.choices = Some(choices);
        }
        self.h
            .check_rate(&task_id, crate::rate_limit::RateAction::Push)?;
        // A question keeps the agent's screen (redacted) like an ask; the
        // chat gets it only from a target that allows it. Added after the
        // dedup key: a retry with another screen is the same push.
        let evidence = if expect_reply {
            self.h.asks().evidence_now(&task_id).await
        } else {
            None
        };
        if include_screen && let Some(screen) = &evidence {
            let with = format!("{text}\n\n{}", screen_block(screen, lang));
            new.message = compose_body(Some(&task.task.title), &with, &task_id);
        }
        self.enqueue_and_wait(new, evidence.as_deref()).await
    }

    /// Write the rows, wake the worker, wait briefly, answer.
    /// With `evidence`, the question's screen is stored with its new
    /// message (not with a reused one).
    pub(crate) async fn enqueue_and_wait(
        &self,
        new: NewOutbound,
        evidence: Option<&str>,
    ) -> CoreResult<PushOutcome> {
        let events = self.h.subscribe();
        let (scope, expect_reply) = (new.scope.clone(), new.expect_reply);
        let enqueued = self
            .h
            .store()
            .enqueue_outbound(new)
            .await
            .map_err(|e| match e {
                crate::store::StoreError::MissingReference(_) => {
                    CoreError::NotFound("Task not found".into())
                }
                other => other.into(),
            })?;
        if !enqueued.deduped {
            tracing::info!(outbound_id = %enqueued.row.id, "outbound message queued");
            if let (Some(screen), Some(m)) = (evidence, &enqueued.row.message_id)
                && let Err(err) = self.h.store().add_ask_evidence(m, screen, Utc::now()).await
            {
                // The push stands without it.
                tracing::warn!(%err, message_id = %m, "the pushed question's screen was not stored");
            }
            self.outbound_changed(&enqueued.row);
            if let (Some(m), Some(t)) = (&enqueued.row.message_id, &enqueued.row.task_id) {
                self.h.publish(HarnessEvent::MessageChanged {
                    id: m.clone(),
                    task_id: t.clone(),
                });
            }
        }
        let mut row = enqueued.row;
        if !row.state.attempted() {
            self.wake_outbox();
            let wait = self.h.config().outbox_wait;
            if !wait.is_zero() {
                row = self
                    .wait_outbound(&row.id, wait, events)
                    .await?
                    .unwrap_or(row);
            }
        }
        // Only a sent ask can be parked: read its message only then.
        let message_state = match (&row.message_id, row.state.sent() && expect_reply) {
            (Some(id), true) => self.h.store().get_message(id).await?.map(|m| m.state),
            _ => None,
        };
        Ok(PushOutcome {
            ok: true,
            scope,
            expect_reply,
            outbound_id: row.id.clone(),
            message_id: row.message_id.clone(),
            state: row.state,
            deduped: enqueued.deduped,
            sent: row.state.sent(),
            parked: expect_reply && message_state == Some(MessageState::Open),
            platform_message_id: row.platform_message_id.clone(),
            last_error: row.last_error.clone(),
            attempts: row.attempts,
        })
    }

    /// Wait up to `wait` for an attempt on the row to end; its latest state.
    pub async fn wait_outbound(
        &self,
        id: &str,
        wait: Duration,
        events: tokio::sync::broadcast::Receiver<HarnessEvent>,
    ) -> CoreResult<Option<Outbound>> {
        // A change that did not end an attempt (the claim) needs no read:
        // the event carries the state.
        let wakes = |e: &HarnessEvent| {
            matches!(e, HarnessEvent::OutboundChanged { id: changed, state, .. }
                if changed == id && state.attempted())
        };
        let read = || async {
            let row = self.h.store().get_outbound(id).await?;
            Ok(match row {
                Some(r) if !r.state.attempted() => None,
                other => Some(other),
            })
        };
        match crate::work::until_settled(wait, None, events, wakes, read).await? {
            Some(row) => Ok(row),
            None => Ok(self.h.store().get_outbound(id).await?),
        }
    }

    /// The outbox's settle hook for a row found SENDING under a lapsed
    /// lease whose attempt had started (`crate::work::recovery`): settled
    /// SENT_UNVERIFIED through the same statement as a sender's outcome, so
    /// a sent ask is opened and its execution parked; never sent again
    /// automatically. Conditional on the same owner (and, with
    /// `expired_before`, a lease still ended). False: the row moved on.
    pub(crate) async fn settle_lost_outbound(
        &self,
        id: &str,
        owner: &str,
        expired_before: Option<chrono::DateTime<Utc>>,
    ) -> CoreResult<bool> {
        let Some(row) = self.h.store().get_outbound(id).await? else {
            return Ok(false);
        };
        Ok(self
            .settle(
                &row,
                owner,
                expired_before,
                unverified_after_crash(),
                Utc::now(),
            )
            .await?
            .is_some())
    }

    /// Commit the evidence that `owner` is about to spawn the CLI of `row`'s
    /// current attempt. False: the lease is gone — the send must not start.
    pub async fn mark_outbound_started(&self, row: &Outbound, owner: &str) -> CoreResult<bool> {
        let marked = self
            .mark_outbound_started_many(owner, &[(row.id.clone(), row.attempts)])
            .await?;
        Ok(marked.contains(&row.id))
    }

    /// [`Self::mark_outbound_started`] for several sends in one commit
    /// (`(id, attempt)`): the ids marked; a row left out must not start.
    pub async fn mark_outbound_started_many(
        &self,
        owner: &str,
        marks: &[(String, u32)],
    ) -> CoreResult<Vec<String>> {
        Ok(self.h.store().mark_outbound_started(owner, marks).await?)
    }

    /// "Retry now" for a FAILED or DEAD row (admin).
    pub async fn retry_outbound(&self, id: &str) -> CoreResult<Outbound> {
        let id = validate::cuid("outboundId", id.trim())?;
        match self.h.store().retry_outbound(&id, Utc::now()).await? {
            Some(row) => {
                tracing::info!(outbound_id = %row.id, "outbound queued again by a person");
                self.outbound_changed(&row);
                self.wake_outbox();
                Ok(row)
            }
            None => Err(self.outbound_not_in(&id, ManualAction::Retry).await),
        }
    }

    /// "Mark as delivered" for a SENT_UNVERIFIED row (admin).
    pub async fn mark_outbound_delivered(&self, id: &str) -> CoreResult<Outbound> {
        let id = validate::cuid("outboundId", id.trim())?;
        match self
            .h
            .store()
            .mark_outbound_delivered(&id, Utc::now())
            .await?
        {
            Some(row) => {
                self.outbound_changed(&row);
                Ok(row)
            }
            None => Err(self.outbound_not_in(&id, ManualAction::MarkDelivered).await),
        }
    }

    pub async fn outbound(&self, id: &str) -> CoreResult<Outbound> {
        let id = validate::cuid("outboundId", id.trim())?;
        self.h
            .store()
            .get_outbound(&id)
            .await?
            .ok_or_else(|| CoreError::NotFound("Outbound message not found".into()))
    }

    /// The outbound rows of these messages (for the notification rows).
    pub async fn outbound_for_messages(&self, message_ids: &[String]) -> CoreResult<Vec<Outbound>> {
        let mut out = Vec::new();
        for chunk in message_ids.chunks(500) {
            out.extend(self.h.store().outbound_for_messages(chunk).await?);
        }
        Ok(out)
    }

    /// Newest first (all, or one task's).
    pub async fn list_outbound(
        &self,
        task_id: Option<&str>,
        limit: u32,
    ) -> CoreResult<Vec<Outbound>> {
        let task_id = task_id.map(|t| validate::task_id(Some(t))).transpose()?;
        Ok(self
            .h
            .store()
            .list_outbound(task_id.as_deref(), limit.clamp(1, 500))
            .await?)
    }

    /// The refusal of `action` on a row in a state it does not accept.
    async fn outbound_not_in(&self, id: &str, action: ManualAction) -> CoreError {
        let found = self.h.store().get_outbound(id).await;
        crate::work::refused(
            "Outbound message",
            found.map(|r| r.map(|r| r.state)),
            action,
        )
    }
}

fn unverified_after_crash() -> Settle {
    Settle::Sent {
        state: OutboundState::SentUnverified,
        platform: None,
        chat_id: None,
        platform_message_id: None,
        note: Some(crate::work::OUTBOX.lost.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_has_title_message_and_token_once() {
        let id = "cabcdefghijklmnopqrstuvwx";
        let b = compose_body(Some("Fix CI"), " Which DB? ", id);
        assert_eq!(
            b,
            format!("Fix CI\n\nWhich DB?\n\nTask ID: [[tower:task={id}]]")
        );
        let with = format!("x {}", token::build(id));
        assert_eq!(compose_body(None, &with, id), with);
    }

    #[test]
    fn states_round_trip() {
        for s in [
            OutboundState::Pending,
            OutboundState::Sending,
            OutboundState::Delivered,
            OutboundState::SentUnverified,
            OutboundState::Failed,
            OutboundState::Dead,
        ] {
            assert_eq!(OutboundState::parse(s.as_str()), Some(s));
        }
    }
}
