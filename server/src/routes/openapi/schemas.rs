//! Schemas of the JSON bodies that handlers build with `json!` (the typed
//! ones derive `ToSchema` where they are defined: `harness_core` behind its
//! `openapi` feature, the handlers' request bodies in `routes/*.rs`).
//! Only the document uses these types; a response that drifts from them is
//! caught by the schemathesis run (`scripts/schemathesis.sh`).

#![allow(dead_code)]

use harness_core::{deliveries::DeliveryState, model::TaskView};
use serde::Serialize;
use utoipa::ToSchema;

/// Every error: `{"error": "...", "field"?: "..."}` (`error.rs`
/// `error_body`); 5xx bodies say only "internal error".
#[derive(Serialize, ToSchema)]
pub struct ErrorBody {
    /// What went wrong, for people.
    pub error: String,
    /// The request field at fault (bad input only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub field: Option<String>,
}

/// `{"ok": true}`
#[derive(Serialize, ToSchema)]
pub struct OkBody {
    pub ok: bool,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AskResponse {
    pub ok: bool,
    /// The ask's message id.
    pub request_id: String,
    /// No active notify target: nobody is told (the ask still waits).
    pub no_channel_configured: bool,
    /// A retry with the idempotency key of an ask already recorded.
    pub deduped: bool,
}

/// How the reply resumed the agent.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResumeMode {
    Continued,
    AlreadyRunning,
    NotRunning,
    Started,
}

/// What became of a reply's or an input's delivery into the terminal.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryOutcome {
    Delivered,
    Queued,
    Failed,
    Unverified,
    None,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReplyResponse {
    pub ok: bool,
    pub task_id: String,
    pub request_id: String,
    pub mode: ResumeMode,
    pub injected: bool,
    pub deduped: bool,
    pub delivery_id: Option<String>,
    pub delivery: DeliveryOutcome,
    pub delivery_state: Option<DeliveryState>,
    pub delivery_error: Option<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NotifyResponse {
    pub ok: bool,
    pub message_id: String,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionResponse {
    pub ok: bool,
    /// An earlier report had already set the session id (first write wins).
    #[schema(nullable = false)]
    pub skipped: Option<bool>,
    pub session_id: String,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NotificationResponse {
    pub ok: bool,
    /// The notification told the watcher something (the CLI waits for the
    /// person, or at its prompt); `false`: any other notification.
    pub noted: bool,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolsReadyResponse {
    pub ok: bool,
    /// The execution listed its Harness tools over MCP before the wait ended.
    pub listed: bool,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StopResponse {
    pub ok: bool,
    /// The execution is the task's live one: its turn end counts.
    pub owns_turn: bool,
    pub event_id: Option<String>,
    #[schema(nullable = false)]
    pub deduped: Option<bool>,
}

/// The parent's inbox: events from derived children, batches, children.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InboxResponse {
    pub task_id: String,
    pub parent_task_id: Option<String>,
    pub events: Vec<serde_json::Map<String, serde_json::Value>>,
    pub batches: Vec<serde_json::Map<String, serde_json::Value>>,
    pub children: Vec<TaskView>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StartResponse {
    pub execution_id: String,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StopTaskResponse {
    pub ok: bool,
    pub was_running: bool,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InputResponse {
    pub ok: bool,
    pub task_id: String,
    pub submitted: bool,
    pub deduped: bool,
    pub delivery_id: Option<String>,
    pub delivery: Option<DeliveryOutcome>,
}

/// The terminal's screen as text.
#[derive(Serialize, ToSchema)]
pub struct ScreenResponse {
    pub cols: u16,
    pub rows: u16,
    pub text: String,
}

#[derive(Serialize, ToSchema)]
pub struct DirectiveResponse {
    /// The system directive agents are started with.
    pub directive: String,
}

/// A JSON object answer (the gateway routes'; once the Workbench batch's,
/// now typed as `harness_core::inbox::BatchTransition`).
#[derive(Serialize, ToSchema)]
pub struct BatchResponse(pub serde_json::Map<String, serde_json::Value>);

/// A project's task list and progress log (`harness_plan::view::PlanView`).
#[derive(Serialize, ToSchema)]
pub struct PlanViewBody(pub serde_json::Map<String, serde_json::Value>);
