//! Structured questions: the options, default, deadline and
//! urgency stored with an ask, and the deadline's default answer.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use serde::{Deserialize, Serialize};

use super::{Answered, AskRecorded, DeliveryClaim, NewAsk, NewEvent, StoreResult};

/// Who answered an ask, when it was not a person.
pub const ANSWERED_BY_DEFAULT: &str = "default_after_deadline";

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AskOption {
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Urgency {
    Low,
    #[default]
    Normal,
    High,
}

impl Urgency {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Normal => "normal",
            Self::High => "high",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "low" => Some(Self::Low),
            "normal" => Some(Self::Normal),
            "high" => Some(Self::High),
            _ => None,
        }
    }
}

/// The validated structured part of an ask, as stored with it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Choices {
    pub options: Vec<AskOption>,
    pub multi_select: bool,
    /// The label taken when the deadline passes with the ask still OPEN.
    pub default: Option<String>,
    pub deadline_at: Option<DateTime<Utc>>,
    pub urgency: Urgency,
    /// `None` (a person, or not answered) or [`ANSWERED_BY_DEFAULT`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered_by: Option<String>,
    /// The option(s) the answer named (0-based), when it named any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered_options: Option<Vec<usize>>,
}

/// An OPEN ask whose deadline passed with a default to apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DueDefault {
    pub message_id: String,
    pub task_id: String,
    pub default_label: String,
    pub deadline_at: DateTime<Utc>,
}

#[async_trait]
pub trait ChoicesStore: Send + Sync + 'static {
    /// `record_ask` and the ask's choices, in one transaction.
    async fn record_ask_with_choices(
        &self,
        ask: NewAsk,
        choices: Choices,
    ) -> StoreResult<AskRecorded>;
    /// The choices of these asks (asks without any are left out).
    async fn choices_for(&self, message_ids: &[String]) -> StoreResult<Vec<(String, Choices)>>;
    /// OPEN asks with a default whose deadline is at or before `now`, oldest first.
    async fn due_defaults(&self, now: DateTime<Utc>, limit: u32) -> StoreResult<Vec<DueDefault>>;
    /// The earliest deadline of an OPEN ask with a default, if any.
    async fn next_default_deadline(&self) -> StoreResult<Option<DateTime<Utc>>>;
    /// Answer the ask `message_id` with its default — only if it is still
    /// OPEN and its deadline is at or before `now` — marking it answered by
    /// "default after deadline", in the same transaction as a reply: PAUSED →
    /// RUNNING and the reply's delivery row (text `delivery_text`). `None`
    /// when it was no longer OPEN (a person answered first) or not yet due.
    async fn answer_with_default(
        &self,
        message_id: &str,
        delivery_text: &str,
        delivery_id: &str,
        claim: Option<&DeliveryClaim>,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<Answered>>;
    /// Answer the ask `message_id` — only if it is still OPEN — with the
    /// option(s) `picked` (0-based; `text` is their label(s)), recorded with
    /// its choices (none picked: `text` is a free answer, recorded as one); otherwise exactly a person's reply (PAUSED → RUNNING and
    /// the reply's delivery row, and with `from_chat` the record that it was
    /// answered through a gateway, as in `answer_open_ask`: one
    /// transaction). `None`: no longer OPEN.
    #[allow(clippy::too_many_arguments)]
    async fn answer_with_options(
        &self,
        message_id: &str,
        text: &str,
        picked: &[usize],
        delivery_id: &str,
        claim: Option<&DeliveryClaim>,
        now: DateTime<Utc>,
        from_chat: bool,
    ) -> StoreResult<Option<Answered>>;
    /// `record_ask` (with its choices, if any, and its screen,
    /// `ask.evidence`) and `event` in the parent's inbox, in one transaction; the event's execution is the ask's. An
    /// event already stored under its dedup key is left as it is. Returns
    /// the ask and whether the event was added.
    async fn record_ask_for_parent(
        &self,
        ask: NewAsk,
        choices: Option<Choices>,
        event: NewEvent,
    ) -> StoreResult<(AskRecorded, bool)>;
    /// The id of the inbox event under `dedup_key` while it is not yet
    /// typed into the parent (PENDING or PROCESSING).
    async fn undelivered_event(&self, dedup_key: &str) -> StoreResult<Option<String>>;
}
