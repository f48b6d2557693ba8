//! Gateway replies (docs/tower-messaging.md §2.6, docs/tower-messaging.md §3.4, docs/tower-messaging.md §8.12): the
//! fourth kind of owed work on the engine (`crate::work`). A reply answers
//! one inbound platform message in its chat — the acknowledgement of a
//! queued continuation (written with the inbound row's PROCESSED state, one
//! transaction), a discussion answer, the result of work. The reply worker
//! (`server/src/workers/gateway_replies.rs`) leases due rows, runs the
//! gateway CLI once per row ([`argv`]: a native reply with `--reply-to` /
//! `--thread-id` where the gateway has it) and the core records the
//! attempt's [`Outcome`] with [`REPLY_POLICY`]:
//!
//! * Done → DELIVERED (the platform's message id kept);
//! * Retry → FAILED, due again after 2, 4 … 256 s, DEAD at the cap;
//! * GaveUp → DEAD;
//! * Unverified (an error that still printed a message id, a lease that
//!   ended mid-send, a crash) → SENT_UNVERIFIED: never sent again
//!   automatically (docs/decisions.md D7/docs/decisions.md D9 — the reference's bug docs/tower-messaging.md §11.20 resent such rows).

use crate::gateway::Gateway;
use chrono::{DateTime, Utc};

use crate::{
    CoreError, CoreResult, ids as core_ids,
    outbox::{SendOutcome, gateway::GatewaySettings},
    store::{
        GatewayInbound, GatewayReply, NewReply, ReplyKind, ReplySettle, ReplyState, ReplyTurn,
    },
    work::{GATEWAY_REPLIES, Kind, Outcome, RetryPolicy},
};

/// Failed attempts before a reply is DEAD (as the outbox, docs/decisions.md D7).
pub const REPLY_POLICY: RetryPolicy = GATEWAY_REPLIES.retry();

/// At most this many characters in a reply.
pub const MAX_REPLY_CHARS: usize = 10_000;

/// How one attempt at a reply ended: the engine's outcome and the sent
/// message's platform id when the gateway printed one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyOutcome {
    pub outcome: Outcome,
    pub platform_message_id: Option<String>,
}

impl From<SendOutcome> for ReplyOutcome {
    /// The gateway CLI's receipt (`outbox::receipt::classify`) as an
    /// outcome: an id printed with an error is an unverified send.
    fn from(send: SendOutcome) -> Self {
        match send {
            SendOutcome::Delivered(r) => Self {
                outcome: Outcome::Done,
                platform_message_id: r.message_id,
            },
            SendOutcome::Unverified(r, why) => Self {
                outcome: Outcome::Unverified(why),
                platform_message_id: r.message_id,
            },
            SendOutcome::Failed(why) => Self {
                outcome: Outcome::Retry(why),
                platform_message_id: None,
            },
            SendOutcome::Skipped(why) | SendOutcome::GaveUp(why) => Self {
                outcome: Outcome::GaveUp(why),
                platform_message_id: None,
            },
        }
    }
}

/// What the store records for `row`'s attempt that ended with `o` at `now`.
pub fn settle_of(row: &GatewayReply, o: &ReplyOutcome, now: DateTime<Utc>) -> ReplySettle {
    // `attempts` already counts this attempt (it is counted at the claim).
    let after = GATEWAY_REPLIES.after(&o.outcome, row.attempts, REPLY_POLICY, now);
    let (state, next, error) = (
        ReplyState::parse(after.state).unwrap_or(ReplyState::Dead),
        after.next_attempt_at,
        after.error,
    );
    ReplySettle {
        id: row.id.clone(),
        state,
        next_attempt_at: next,
        last_error: error,
        platform_message_id: o.platform_message_id.clone(),
    }
}

/// The dedup key of the reply of `kind` to an inbound row (one per kind
/// and message).
pub fn dedup_key(kind: ReplyKind, inbound_id: &str) -> String {
    format!("gateway-reply:{}:{inbound_id}", kind.as_str())
}

/// The acknowledgement of a continuation queued for `task_title`.
pub fn queued_ack(inbound: &GatewayInbound, task_title: &str, now: DateTime<Utc>) -> NewReply {
    NewReply {
        id: core_ids::new_id(),
        inbound_id: inbound.id.clone(),
        kind: ReplyKind::QueuedAck,
        content: format!("Received — queued for the task “{task_title}”."),
        dedup_key: dedup_key(ReplyKind::QueuedAck, &inbound.id),
        now,
    }
}

/// The argv (without the binary) of sending `reply` (docs/contract.md §9):
/// OpenClaw replies natively (`--reply-to` the inbound message, in its
/// thread); Hermes has no reply-to, so its reply goes into the chat (the
/// thread through the target, `<platform>:<chat>[:<thread>]`).
pub fn argv(reply: &GatewayReply, settings: &GatewaySettings) -> Result<Vec<String>, String> {
    let text = reply.content.trim();
    if text.is_empty() {
        return Err("the reply is empty".into());
    }
    let mut args = Vec::new();
    if let Some(p) = &settings.profile {
        args.extend(["--profile".to_string(), p.clone()]);
    }
    match reply.gateway.as_str() {
        "openclaw" => {
            args.extend(["message", "send", "--channel"].map(String::from));
            args.push(reply.platform.clone());
            args.push("--target".into());
            args.push(reply.chat_id.clone());
            args.push("--reply-to".into());
            args.push(reply.reply_to_message_id.clone());
            if let Some(thread) = reply.thread_id.as_deref().filter(|t| !t.is_empty()) {
                args.push("--thread-id".into());
                args.push(thread.to_string());
            }
            args.push("--message".into());
            args.push(text.to_string());
            args.push("--json".into());
        }
        "hermes" => {
            let platform = if reply.platform == "wechat" {
                "weixin"
            } else {
                reply.platform.as_str()
            };
            let mut to = format!("{platform}:{}", reply.chat_id);
            if let Some(thread) = reply.thread_id.as_deref().filter(|t| !t.is_empty()) {
                to.push(':');
                to.push_str(thread);
            }
            args.extend(["send", "--to"].map(String::from));
            args.push(to);
            args.extend(["--json", "--"].map(String::from));
            args.push(text.to_string());
        }
        other => return Err(format!("Unsupported gateway: {other}")),
    }
    Ok(args)
}

impl Gateway<'_> {
    /// Write a reply of `kind` to an inbound row (idempotent per kind and
    /// message: the first content wins) and wake the reply worker.
    pub async fn enqueue_gateway_reply(
        &self,
        inbound_id: &str,
        kind: ReplyKind,
        content: &str,
    ) -> CoreResult<(GatewayReply, bool)> {
        let content = content.trim();
        if content.is_empty() {
            return Err(CoreError::invalid("content", "content: must not be blank"));
        }
        if content.chars().count() > MAX_REPLY_CHARS {
            return Err(CoreError::invalid(
                "content",
                format!("content: at most {MAX_REPLY_CHARS} characters"),
            ));
        }
        let written = self
            .h
            .store()
            .enqueue_reply(NewReply {
                id: core_ids::new_id(),
                inbound_id: inbound_id.to_string(),
                kind,
                content: content.to_string(),
                dedup_key: dedup_key(kind, inbound_id),
                now: Utc::now(),
            })
            .await?
            .ok_or_else(|| CoreError::NotFound(format!("inbound message {inbound_id}")))?;
        if written.1 {
            self.h.wake(Kind::GatewayReplies);
        }
        Ok(written)
    }

    /// One turn of the reply worker: record the attempts that ended
    /// (`settle_of`), give back `released`, lease up to `limit` due rows
    /// for `lease` — one transaction.
    pub async fn settle_and_claim_replies(
        &self,
        owner: &str,
        done: Vec<(GatewayReply, ReplyOutcome)>,
        released: Vec<String>,
        lease: chrono::Duration,
        limit: u32,
    ) -> CoreResult<Vec<GatewayReply>> {
        let now = Utc::now();
        let settles = done.iter().map(|(r, o)| settle_of(r, o, now)).collect();
        Ok(self
            .h
            .store()
            .settle_and_claim_replies(ReplyTurn {
                owner: owner.to_string(),
                settles,
                released,
                lease_until: now.checked_add_signed(lease).unwrap_or(now),
                now,
                limit,
            })
            .await?)
    }

    /// The replies to one inbound message, oldest first.
    pub async fn gateway_replies(&self, inbound_id: &str) -> CoreResult<Vec<GatewayReply>> {
        Ok(self.h.store().replies_for_inbound(inbound_id).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(gateway: &str, thread: Option<&str>) -> GatewayReply {
        let now = Utc::now();
        GatewayReply {
            id: "r1".into(),
            inbound_id: "i1".into(),
            kind: ReplyKind::QueuedAck,
            content: " -ok ".into(),
            dedup_key: "k".into(),
            gateway: gateway.into(),
            platform: "telegram".into(),
            chat_id: "-100777".into(),
            reply_to_message_id: "42".into(),
            thread_id: thread.map(str::to_string),
            state: ReplyState::Sending,
            attempts: 1,
            next_attempt_at: None,
            lease_owner: None,
            lease_expires_at: None,
            last_error: None,
            platform_message_id: None,
            delivered_at: None,
            created_at: now,
            updated_at: now,
        }
    }

    #[test]
    fn openclaw_replies_natively_and_hermes_into_the_chat() {
        let s = GatewaySettings::default();
        assert_eq!(
            argv(&reply("openclaw", Some("7")), &s).unwrap(),
            [
                "message",
                "send",
                "--channel",
                "telegram",
                "--target",
                "-100777",
                "--reply-to",
                "42",
                "--thread-id",
                "7",
                "--message",
                "-ok",
                "--json"
            ]
        );
        assert_eq!(
            argv(&reply("hermes", Some("7")), &s).unwrap(),
            ["send", "--to", "telegram:-100777:7", "--json", "--", "-ok"]
        );
        assert!(argv(&reply("telegram", None), &s).is_err());
    }

    #[test]
    fn each_outcome_has_its_state_and_the_cap_gives_up() {
        let now = Utc::now();
        let mut row = reply("hermes", None);
        let o = |outcome| ReplyOutcome {
            outcome,
            platform_message_id: Some("9".into()),
        };
        assert_eq!(
            settle_of(&row, &o(Outcome::Done), now).state,
            ReplyState::Delivered
        );
        let failed = settle_of(&row, &o(Outcome::Retry("x".into())), now);
        assert_eq!(failed.state, ReplyState::Failed);
        assert_eq!(
            failed.next_attempt_at.map(|t| (t - now).num_seconds()),
            Some(2)
        );
        assert_eq!(
            settle_of(&row, &o(Outcome::Unverified("x".into())), now).state,
            ReplyState::SentUnverified
        );
        assert_eq!(
            settle_of(&row, &o(Outcome::GaveUp("x".into())), now).state,
            ReplyState::Dead
        );
        row.attempts = REPLY_POLICY.max_attempts;
        assert_eq!(
            settle_of(&row, &o(Outcome::Retry("x".into())), now).state,
            ReplyState::Dead
        );
    }
}
