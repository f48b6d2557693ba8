//! The receipt of a question (docs/evidence.md): its timeline from the rows
//! Harness already writes — asked; pushed (the outbox row: gateway, chat,
//! platform message id); reminded / escalated; answered (by whom, on which
//! surface); typed into the terminal (the delivery row: once, or
//! UNVERIFIED); the agent resumed (its recorded state, else its screen);
//! and the first screen lines after the answer (captured a few seconds
//! after it was typed, bounded and redacted like the ask's own screen,
//! `answer_screens`). A step that stalls is marked where it stalled:
//! "pushed 40 min ago, never delivered by the gateway".
//!
//! [`build`] is pure (facts and `now` in, the timeline out); the service
//! reads the facts. The screens are never logged: only their lengths are.

use crate::report::Reports;
use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::{
    CoreError, CoreResult,
    deliveries::{Delivery, DeliveryState},
    model::{AgentStateName, AgentStateRecord, Message, MessageKind, MessageState},
    outbox::Outbound,
    store::{AnswerScreen, Escalation, OutboundState, Reminder},
    validate,
};

/// After this long a step that should have happened is marked stalled.
pub const STALL_AFTER: chrono::Duration = chrono::Duration::minutes(5);

/// How long after the answer was typed its screen is captured by default
/// (`HarnessConfig::answer_capture_after`).
pub const CAPTURE_AFTER: std::time::Duration = std::time::Duration::from_secs(3);

pub use harness_types::{StepKind, StepStatus};

/// One line of the timeline. The optional fields say what the step's row
/// holds.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReceiptStep {
    pub step: StepKind,
    pub status: StepStatus,
    /// When it happened (or, for a stalled or waiting step, since when it
    /// is owed).
    pub at: Option<DateTime<Utc>>,
    /// The step in words (English).
    pub note: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gateway: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub platform: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chat_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub platform_message_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outbound_id: Option<String>,
    /// A reminder's number, an escalation's order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq: Option<u32>,
    /// An escalation's notify target.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Who answered: `person` or `default`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// Where: `chat`, `web` (the web UI, REST or MCP) or `deadline`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub surface: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delivery_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delivery_state: Option<DeliveryState>,
    /// The agent's recorded state (`working`, `idle` …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent_state: Option<AgentStateName>,
    /// The screen after the answer, redacted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub screen: Option<String>,
    /// What went wrong: the row's last error, the agent's state in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl ReceiptStep {
    fn new(step: StepKind, status: StepStatus, at: Option<DateTime<Utc>>, note: String) -> Self {
        Self {
            step,
            status,
            at,
            note,
            gateway: None,
            platform: None,
            chat_id: None,
            platform_message_id: None,
            outbound_id: None,
            seq: None,
            target: None,
            by: None,
            surface: None,
            delivery_id: None,
            delivery_state: None,
            agent_state: None,
            screen: None,
            error: None,
        }
    }

    fn with_row(mut self, o: &Outbound) -> Self {
        self.gateway = Some(o.gateway.clone());
        self.platform.clone_from(&o.platform);
        self.chat_id = o.platform_chat_id.clone().or_else(|| o.dest.clone());
        self.platform_message_id.clone_from(&o.platform_message_id);
        self.outbound_id = Some(o.id.clone());
        self.error.clone_from(&o.last_error);
        self
    }
}

/// A question's receipt, as `GET /api/messages/{id}/receipt` answers it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuestionReceipt {
    pub message_id: String,
    pub task_id: String,
    pub state: MessageState,
    /// The agent's screen when it asked, redacted (`null`: none taken).
    pub screen: Option<String>,
    pub steps: Vec<ReceiptStep>,
    /// The first step that stalled or failed: where the question stopped.
    pub stalled_at: Option<StepKind>,
}

/// What a receipt is built from: the rows, as read.
#[derive(Debug, Clone)]
pub struct ReceiptFacts {
    pub message: Message,
    pub screen: Option<String>,
    /// The outbox rows of the message (its push), oldest first.
    pub pushes: Vec<Outbound>,
    pub reminders: Vec<Reminder>,
    /// Each escalation with its outbox row.
    pub escalations: Vec<(Escalation, Option<Outbound>)>,
    pub by_default: bool,
    pub answered_in_chat: Option<DateTime<Utc>>,
    pub delivery: Option<Delivery>,
    /// The recorded state of the agent that asked.
    pub agent: Option<AgentStateRecord>,
    pub after: Option<AnswerScreen>,
    /// How long after the answer was typed its screen is due.
    pub capture_after: chrono::Duration,
}

fn ago(now: DateTime<Utc>, at: DateTime<Utc>) -> String {
    harness_types::waited_text((now - at).num_milliseconds())
}

fn late(now: DateTime<Utc>, since: DateTime<Utc>) -> bool {
    now - since > STALL_AFTER
}

fn push_step(now: DateTime<Utc>, o: &Outbound, kind: StepKind, what: &str) -> ReceiptStep {
    let (status, at, note) = match o.state {
        OutboundState::Delivered => (
            StepStatus::Done,
            o.delivered_at.or(Some(o.updated_at)),
            format!(
                "{what} through {} to {}{}",
                o.gateway,
                o.platform_chat_id
                    .as_deref()
                    .or(o.dest.as_deref())
                    .unwrap_or("its chat"),
                o.platform_message_id
                    .as_deref()
                    .map(|m| format!(", message {m}"))
                    .unwrap_or_default()
            ),
        ),
        OutboundState::SentUnverified => (
            StepStatus::Unverified,
            Some(o.updated_at),
            format!(
                "{what} through {}, not confirmed by the gateway (no message id)",
                o.gateway
            ),
        ),
        OutboundState::Dead => (
            StepStatus::Failed,
            Some(o.updated_at),
            format!(
                "{what} {} ago, never delivered by the gateway ({} attempts{})",
                ago(now, o.created_at),
                o.attempts,
                o.last_error
                    .as_deref()
                    .map(|e| format!(": {e}"))
                    .unwrap_or_default()
            ),
        ),
        OutboundState::Pending | OutboundState::Sending | OutboundState::Failed => {
            let error = o
                .last_error
                .as_deref()
                .map(|e| format!(" (last error: {e})"))
                .unwrap_or_default();
            if late(now, o.created_at) {
                (
                    StepStatus::Stalled,
                    Some(o.created_at),
                    format!(
                        "{what} {} ago, never delivered by the gateway{error}",
                        ago(now, o.created_at)
                    ),
                )
            } else {
                (
                    StepStatus::Waiting,
                    Some(o.created_at),
                    format!("{what}: being sent through {}{error}", o.gateway),
                )
            }
        }
    };
    ReceiptStep::new(kind, status, at, note).with_row(o)
}

/// The timeline of one question at `now`.
pub fn build(facts: ReceiptFacts, now: DateTime<Utc>) -> QuestionReceipt {
    let m = &facts.message;
    let mut steps = vec![ReceiptStep::new(
        StepKind::Asked,
        StepStatus::Done,
        Some(m.created_at),
        if facts.screen.is_some() {
            "asked, with the agent's screen".into()
        } else {
            "asked".into()
        },
    )];
    let first_push = facts.pushes.first();
    if let Some(o) = first_push {
        steps.push(push_step(now, o, StepKind::Pushed, "pushed"));
    }
    for r in &facts.reminders {
        let (status, note) = if r.sent {
            (StepStatus::Done, format!("reminder {} sent", r.seq))
        } else if m.state == MessageState::Open {
            (StepStatus::Waiting, format!("reminder {} queued", r.seq))
        } else {
            continue;
        };
        let mut s = ReceiptStep::new(StepKind::Reminded, status, Some(r.created_at), note);
        s.seq = Some(r.seq);
        s.outbound_id = Some(r.outbound_id.clone());
        steps.push(s);
    }
    for (e, row) in &facts.escalations {
        let what = format!("escalated to {}", e.target);
        let mut s = match row {
            Some(o) => push_step(now, o, StepKind::Escalated, &what),
            None => ReceiptStep::new(
                StepKind::Escalated,
                StepStatus::Done,
                Some(e.created_at),
                what,
            ),
        };
        s.seq = Some(e.seq);
        s.target = Some(e.target.clone());
        steps.push(s);
    }
    steps.push(answered_step(&facts, first_push, now));
    if m.state == MessageState::Answered {
        typed_steps(&facts, &mut steps, now);
    }
    let stalled_at = steps
        .iter()
        .find(|s| matches!(s.status, StepStatus::Stalled | StepStatus::Failed))
        .map(|s| s.step);
    QuestionReceipt {
        message_id: m.id.clone(),
        task_id: m.task_id.clone(),
        state: m.state,
        screen: facts.screen,
        steps,
        stalled_at,
    }
}

fn answered_step(facts: &ReceiptFacts, push: Option<&Outbound>, now: DateTime<Utc>) -> ReceiptStep {
    let m = &facts.message;
    let step = |status, at, note: String| ReceiptStep::new(StepKind::Answered, status, at, note);
    match m.state {
        MessageState::Answered => {
            let at = m.replied_at;
            let mut s = if facts.by_default {
                let mut s = step(
                    StepStatus::Done,
                    at,
                    "answered by its default at the deadline".into(),
                );
                s.by = Some("default".into());
                s.surface = Some("deadline".into());
                s
            } else if facts.answered_in_chat.is_some() {
                let mut s = step(
                    StepStatus::Done,
                    at,
                    "answered by its person in the chat".into(),
                );
                s.by = Some("person".into());
                s.surface = Some("chat".into());
                if let Some(o) = push {
                    s.gateway = Some(o.gateway.clone());
                    s.platform.clone_from(&o.platform);
                    s.chat_id = o.platform_chat_id.clone().or_else(|| o.dest.clone());
                }
                s
            } else {
                let mut s = step(
                    StepStatus::Done,
                    at,
                    "answered by a person on the web, REST or MCP".into(),
                );
                s.by = Some("person".into());
                s.surface = Some("web".into());
                s
            };
            s.at = at;
            s
        }
        MessageState::Open => step(
            StepStatus::Waiting,
            Some(m.created_at),
            format!("waiting for an answer for {}", ago(now, m.created_at)),
        ),
        MessageState::PendingDelivery => step(
            StepStatus::Waiting,
            Some(m.created_at),
            "not asked yet: waiting for its push to reach the chat".into(),
        ),
        MessageState::Cancelled => step(
            StepStatus::Failed,
            None,
            "not answered: the agent asked again (this question was superseded) or stopped".into(),
        ),
        MessageState::Expired => step(StepStatus::Failed, None, "not answered: it expired".into()),
        MessageState::Ignored => step(StepStatus::Failed, None, "ignored by a person".into()),
        MessageState::Closed => step(
            StepStatus::Skipped,
            None,
            "a notice: nothing to answer".into(),
        ),
    }
}

/// Typed, resumed, the screen after: the steps of an answered ask.
fn typed_steps(facts: &ReceiptFacts, steps: &mut Vec<ReceiptStep>, now: DateTime<Utc>) {
    let answered_at = facts.message.replied_at.unwrap_or(facts.message.created_at);
    let Some(d) = &facts.delivery else {
        steps.push(ReceiptStep::new(
            StepKind::Typed,
            StepStatus::Skipped,
            None,
            "nothing typed: the task's agent never ran".into(),
        ));
        return;
    };
    let waiting_for = match d.state {
        DeliveryState::WaitingBoundary => "waiting for the agent to finish its turn",
        DeliveryState::Resuming => "restarting the agent",
        DeliveryState::Writing => "being typed",
        _ => "queued",
    };
    let (status, at, note) = match d.state {
        DeliveryState::Delivered => (
            StepStatus::Done,
            d.done_at,
            format!("typed into the terminal once (delivery {})", d.id),
        ),
        DeliveryState::Unverified => (
            StepStatus::Unverified,
            Some(d.updated_at),
            format!(
                "UNVERIFIED: the write may or may not have reached the terminal (delivery {})",
                d.id
            ),
        ),
        DeliveryState::Failed if d.next_attempt_at.is_none() => (
            StepStatus::Failed,
            Some(d.updated_at),
            format!(
                "not typed: {} (delivery {})",
                d.last_error.as_deref().unwrap_or("failed"),
                d.id
            ),
        ),
        _ if late(now, answered_at) => (
            StepStatus::Stalled,
            Some(answered_at),
            format!(
                "answered {} ago, never typed into the terminal ({}{})",
                ago(now, answered_at),
                waiting_for,
                d.last_error
                    .as_deref()
                    .map(|e| format!("; last error: {e}"))
                    .unwrap_or_default()
            ),
        ),
        _ => (
            StepStatus::Waiting,
            Some(answered_at),
            format!("not typed yet: {waiting_for}"),
        ),
    };
    let mut typed = ReceiptStep::new(StepKind::Typed, status, at, note);
    typed.delivery_id = Some(d.id.clone());
    typed.delivery_state = Some(d.state);
    typed.error.clone_from(&d.last_error);
    steps.push(typed);
    if d.state != DeliveryState::Delivered {
        return;
    }
    let typed_at = d.done_at.unwrap_or(d.updated_at);
    steps.push(resumed_step(facts, typed_at, now));
    steps.push(match &facts.after {
        Some(a) => {
            let mut s = ReceiptStep::new(
                StepKind::ScreenAfter,
                StepStatus::Done,
                Some(a.captured_at),
                "the agent's screen after the answer".into(),
            );
            s.screen = Some(a.screen.clone());
            s.delivery_id = Some(a.delivery_id.clone());
            s
        }
        None if now - typed_at > facts.capture_after + chrono::Duration::minutes(1) => {
            ReceiptStep::new(
                StepKind::ScreenAfter,
                StepStatus::Skipped,
                None,
                "no screen captured: no terminal of the task in this process when it was due"
                    .into(),
            )
        }
        None => ReceiptStep::new(
            StepKind::ScreenAfter,
            StepStatus::Waiting,
            Some(typed_at),
            "the screen is captured a few seconds after the answer was typed".into(),
        ),
    });
}

/// Whether the agent is not going on with its work in this state.
fn stopped(state: AgentStateName) -> bool {
    use AgentStateName as N;
    match state {
        N::Working | N::WaitingForPerson | N::Idle => false,
        N::UsageLimited | N::Erroring | N::LoggedOut | N::Stalled | N::Exited | N::Crashed => true,
    }
}

fn resumed_step(facts: &ReceiptFacts, typed_at: DateTime<Utc>, now: DateTime<Utc>) -> ReceiptStep {
    let step = |status, at, note: String| ReceiptStep::new(StepKind::Resumed, status, at, note);
    if let Some(a) = facts
        .agent
        .as_ref()
        .filter(|a| a.since >= typed_at && a.state != AgentStateName::WaitingForPerson)
    {
        let stopped = stopped(a.state);
        let mut s = if stopped {
            step(
                StepStatus::Failed,
                Some(a.since),
                format!("the agent did not go on: {}", a.reason),
            )
        } else {
            step(
                StepStatus::Done,
                Some(a.since),
                format!("the agent went on ({})", a.reason),
            )
        };
        s.agent_state = Some(a.state);
        if stopped {
            s.error = Some(a.reason.clone());
        }
        return s;
    }
    if let Some(after) = &facts.after
        && facts.screen.as_deref() != Some(after.screen.as_str())
    {
        return step(
            StepStatus::Done,
            Some(after.captured_at),
            "the agent went on: its screen changed after the answer".into(),
        );
    }
    if late(now, typed_at) {
        step(
            StepStatus::Stalled,
            Some(typed_at),
            format!(
                "typed {} ago, the agent has not been seen going on since",
                ago(now, typed_at)
            ),
        )
    } else {
        step(
            StepStatus::Waiting,
            Some(typed_at),
            "typed: waiting for the agent to go on".into(),
        )
    }
}

impl Reports<'_> {
    /// The receipt of the question `message_id`.
    pub async fn receipt(&self, message_id: &str) -> CoreResult<QuestionReceipt> {
        let id = validate::cuid("messageId", message_id.trim())?;
        let message = self
            .h
            .store()
            .get_message(&id)
            .await?
            .filter(|m| m.kind == MessageKind::Ask)
            .ok_or_else(|| CoreError::NotFound("Question not found".into()))?;
        Ok(build(self.receipt_facts(message).await?, Utc::now()))
    }

    /// What the receipt of the ask `message` is built from (the morning
    /// report reads it for each answered question of its window).
    pub(crate) async fn receipt_facts(&self, message: Message) -> CoreResult<ReceiptFacts> {
        let store = self.h.store();
        let id = message.id.clone();
        let ids = std::slice::from_ref(&id);
        let mut pushes = store.outbound_for_messages(ids).await?;
        pushes.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)));
        let mut reminders = store.reminders_for(ids).await?;
        reminders.sort_by_key(|r| r.seq);
        let mut escalations = Vec::new();
        for e in store.escalations_for(ids).await? {
            let row = store.get_outbound(&e.outbound_id).await?;
            escalations.push((e, row));
        }
        escalations.sort_by_key(|(e, _)| e.seq);
        let by_default = store
            .choices_for(ids)
            .await?
            .into_iter()
            .any(|(_, c)| c.answered_by_default());
        let agent = match &message.execution_id {
            Some(x) => store.agent_state(x).await?,
            None => None,
        };
        Ok(ReceiptFacts {
            screen: store.ask_evidence(&id).await?,
            pushes,
            reminders,
            escalations,
            by_default,
            answered_in_chat: store.answered_in_chat(&id).await?,
            delivery: store.delivery_for_message(&id).await?,
            agent,
            after: store.answer_screen(&id).await?,
            capture_after: chrono::Duration::from_std(self.h.config().answer_capture_after)
                .unwrap_or(chrono::Duration::seconds(3)),
            message,
        })
    }
}

#[path = "receipt_line.rs"]
pub mod line;

#[cfg(test)]
#[path = "receipt_tests.rs"]
mod tests;
