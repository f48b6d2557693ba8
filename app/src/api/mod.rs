//! Server functions (under `/sfn`) and the DTOs they exchange with the
//! browser. Every server function is a thin adapter over one or a few
//! `harness_core::Harness` calls; the rules live in the core.

pub mod agent_states;
pub mod analytics;
pub mod approvals;
pub mod choices;
pub mod control;
pub mod deliveries;
pub mod demo;
pub mod gateway;
pub mod inbox;
pub mod locale;
pub mod messages;
pub mod outbound;
pub mod plan;
pub mod project_form;
pub mod receipt;
#[cfg(feature = "ssr")]
pub mod receipt_words;
pub mod recovery;
pub mod reminders;
pub mod report;
#[cfg(feature = "ssr")]
pub mod report_words;
// `add_notify_target` takes the add form's eight fields as arguments (the
// same reason as `tasks` below).
#[allow(clippy::too_many_arguments)]
pub mod settings;
// `create_task` takes the New-task form's nine fields as arguments; the
// server-fn macro's client stub cannot carry an item-level allow.
#[allow(clippy::too_many_arguments)]
pub mod tasks;
pub mod workbench_runtime;

use harness_types::{MessageKind, MessageState};
use serde::{Deserialize, Serialize};

pub use agent_states::*;
pub use approvals::*;
pub use choices::*;
pub use control::*;
pub use deliveries::*;
pub use demo::*;
pub use inbox::*;
pub use locale::*;
pub use messages::*;
pub use outbound::*;
pub use plan::*;
pub use project_form::*;
pub use receipt::*;
pub use recovery::*;
pub use reminders::*;
pub use settings::*;
pub use tasks::*;
pub use workbench_runtime::*;

/// Rows per notification-center page.
pub const PAGE_SIZE: u32 = 50;

/// One notification-center row as the UI shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Row {
    pub id: String,
    pub task_id: String,
    pub task_title: String,
    pub workspace: Option<String>,
    pub project: Option<String>,
    pub kind: MessageKind,
    pub state: MessageState,
    pub content: String,
    pub reply: Option<String>,
    /// Unix milliseconds.
    pub sent_ms: i64,
    pub replied_ms: Option<i64>,
    /// An answered ask: how its reply is getting into the agent's terminal.
    #[serde(default)]
    pub delivery: Option<DeliveryInfo>,
    /// A structured question: its options, default and deadline.
    #[serde(default)]
    pub choices: Option<ChoiceInfo>,
    /// A pushed message: how it is getting to the human's chat (the outbox).
    #[serde(default)]
    pub outbound: Option<OutboundInfo>,
    /// An OPEN ask: how long it waited, reminders, escalation.
    #[serde(default)]
    pub follow_up: Option<reminders::FollowUpInfo>,
}

/// The badge a row shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// An OPEN ask: an agent is waiting.
    Pending,
    Answered,
    /// Notify lines and asks that ended without an answer.
    Muted,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Answered => "answered",
            Self::Muted => "muted",
        }
    }
}

impl Row {
    pub fn is_ask(&self) -> bool {
        self.kind == MessageKind::Ask
    }

    pub fn status(&self) -> Status {
        match (self.is_ask(), self.state) {
            (true, MessageState::Open) => Status::Pending,
            (true, MessageState::Answered) => Status::Answered,
            _ => Status::Muted,
        }
    }

    /// The badge's text key: a closed row says how it ended (a
    /// stopped task's question read "muted").
    pub fn badge_key(&self) -> &'static str {
        match (self.status(), self.is_ask(), self.state) {
            (Status::Pending, ..) => "badge.pending",
            (Status::Answered, ..) => "badge.answered",
            (_, false, _) => "badge.update",
            (_, true, MessageState::Cancelled) => "badge.cancelled",
            (_, true, MessageState::Ignored) => "badge.ignored",
            (_, true, MessageState::Expired) => "badge.expired",
            _ => "badge.muted",
        }
    }

    /// Identity of what the row shows (re-render when it changes).
    pub fn version(&self) -> String {
        format!(
            "{}:{}:{}:{}",
            self.id,
            self.state,
            self.replied_ms.unwrap_or(0),
            self.delivery
                .as_ref()
                .map(|d| format!("{}{}", d.state.as_str(), d.attempts))
                .unwrap_or_default()
        ) + &self
            .outbound
            .as_ref()
            .map(|o| format!(":{}{}", o.state.as_str(), o.attempts))
            .unwrap_or_default()
    }
}

/// One keyset page, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Page {
    pub rows: Vec<Row>,
    /// Cursor of the next (older) page, when there is one.
    pub next: Option<String>,
}

#[cfg(feature = "ssr")]
pub(crate) mod ssr {
    use harness_core::{CoreError, Harness, model::MessageRow};
    use leptos::prelude::*;

    use super::Row;

    pub fn harness() -> Result<Harness, ServerFnError> {
        use_context::<Harness>().ok_or_else(|| ServerFnError::new("server is not initialised"))
    }

    /// Client-facing text for a core error, with the HTTP status of its class
    /// (the same mapping as the REST API); storage details stay in the log.
    pub fn to_sfn(err: CoreError) -> ServerFnError {
        use http::StatusCode;
        let status =
            StatusCode::from_u16(err.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        if status.is_server_error() {
            tracing::error!(error = ?err, "server function failed");
        }
        if let Some(response) = use_context::<leptos_axum::ResponseOptions>() {
            response.set_status(status);
        }
        ServerFnError::new(err.client_message())
    }

    pub fn row(r: MessageRow) -> Row {
        let m = r.message;
        Row {
            id: m.id,
            task_id: m.task_id,
            task_title: r.task_title,
            workspace: r.workspace_name,
            project: r.project_name,
            kind: m.kind,
            state: m.state,
            content: m.content,
            reply: m.reply_text,
            sent_ms: m.created_at.timestamp_millis(),
            replied_ms: m.replied_at.map(|t| t.timestamp_millis()),
            delivery: None,
            choices: None,
            outbound: None,
            follow_up: None,
        }
    }

    /// Attach the delivery of every answered ask (one query).
    pub async fn with_deliveries(h: &Harness, rows: Vec<Row>) -> Result<Vec<Row>, ServerFnError> {
        let mut rows = super::outbound::attach(h, rows).await?;
        let ids: Vec<String> = rows
            .iter()
            .filter(|r| r.is_ask() && r.state == harness_types::MessageState::Answered)
            .map(|r| r.id.clone())
            .collect();
        if ids.is_empty() {
            return Ok(rows);
        }
        let found = h
            .deliveries()
            .deliveries_for_messages(&ids)
            .await
            .map_err(to_sfn)?;
        let mut by_message: std::collections::HashMap<String, super::DeliveryInfo> = found
            .into_iter()
            .filter_map(|d| Some((d.message_id.clone()?, super::DeliveryInfo::from(d))))
            .collect();
        for row in &mut rows {
            row.delivery = by_message.remove(&row.id);
        }
        Ok(rows)
    }
}
