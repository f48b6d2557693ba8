//! `/api/internal/hooks/*`: reports from the agent-side hook commands.

use axum::{Json, Router, extract::State, routing::post};
use harness_core::{
    agent_state::{self, HookEvent},
    auth::Identity,
};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::{
    error::ApiResult,
    extract::{Caller, JsonBody},
    state::AppState,
};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/session", post(session))
        .route("/stop", post(stop))
        .route("/notification", post(notification))
        .route("/tools-ready", post(tools_ready))
}

#[derive(utoipa::ToSchema, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SessionBody {
    task_id: Option<String>,
    session_id: Option<String>,
}

/// SessionStart: `{taskId?, sessionId}` → the session id is stored on the
/// caller's execution (agent token) or the task's live execution (admin);
/// the first write wins (`skipped: true` afterwards). The report also tells
/// the terminals that the agent has started (a delivery to a restarted
/// Claude Code waits for it).
#[utoipa::path(
    post,
    path = "/api/internal/hooks/session",
    tag = "internal",
    request_body = SessionBody,
    responses(
        (status = 200, description = "The session id as stored", body = super::openapi::SessionResponse)
    )
)]
async fn session(
    State(s): State<AppState>,
    Caller(who): Caller,
    JsonBody(body): JsonBody<SessionBody>,
) -> ApiResult<Json<Value>> {
    let task_id = who.bind_task(body.task_id.as_deref())?;
    let execution = match &who {
        Identity::Agent { execution_id, .. } => Some(execution_id.as_str()),
        _ => None,
    };
    // The agent runs its start-up hooks: a restarted one reads keys now
    // (`terminals::ready`), whatever the session id's write finds.
    s.terminals.session_started(&task_id, execution);
    s.terminals
        .note_hook(&task_id, execution, HookEvent::SessionStart)
        .await;
    let out = s
        .harness
        .tasks()
        .record_session(&task_id, execution, body.session_id.as_deref())
        .await?;
    Ok(Json(if out.skipped {
        json!({"ok": true, "skipped": true, "sessionId": out.session_id})
    } else {
        json!({"ok": true, "sessionId": out.session_id})
    }))
}

#[derive(utoipa::ToSchema, Deserialize)]
#[serde(rename_all = "camelCase")]
struct StopBody {
    task_id: Option<String>,
    execution_id: Option<String>,
    session_id: Option<String>,
    event_id: Option<String>,
    last_reply: Option<String>,
}

/// Stop hook: the agent's turn ended. Fenced by execution id (the agent
/// token's own; an admin names it or gets the live one): only the task's
/// live execution marks its terminal at an input boundary (the latch the
/// parent's inbox drains at) and, for a derived child, persists the event in
/// the parent's inbox before answering. A late or foreign callback changes
/// nothing. Never kills the terminal, never cancels an OPEN ask (docs/decisions.md D3, docs/decisions.md D4).
#[utoipa::path(
    post,
    path = "/api/internal/hooks/stop",
    tag = "internal",
    request_body = StopBody,
    responses(
        (status = 200, description = "The turn end as recorded", body = super::openapi::StopResponse)
    )
)]
async fn stop(
    State(s): State<AppState>,
    Caller(who): Caller,
    JsonBody(body): JsonBody<StopBody>,
) -> ApiResult<Json<Value>> {
    let task_id = who.bind_task(body.task_id.as_deref())?;
    let execution_id = s
        .harness
        .tasks()
        .reported_execution(&who, &task_id, body.execution_id.as_deref())
        .await?;
    let Some(execution_id) = execution_id else {
        return Ok(Json(json!({"ok": true, "ownsTurn": false})));
    };
    let out = s
        .harness
        .deliveries()
        .record_turn_end(
            &task_id,
            &execution_id,
            body.session_id.as_deref(),
            body.event_id.as_deref(),
            body.last_reply.as_deref(),
        )
        .await?;
    if out.owns_turn {
        s.terminals.turn_complete(&task_id);
        s.terminals
            .note_hook(&task_id, Some(&execution_id), HookEvent::Stop)
            .await;
        // This task may be a parent with a waiting inbox, or a child whose
        // event its idle parent can take now.
        s.harness.wake(harness_core::work::Kind::Inbox);
    }
    Ok(Json(json!({"ok": true, "ownsTurn": out.owns_turn,
        "eventId": out.event_id, "deduped": out.deduped})))
}

#[derive(utoipa::ToSchema, Deserialize)]
#[serde(rename_all = "camelCase")]
struct NotificationBody {
    task_id: Option<String>,
    execution_id: Option<String>,
    /// Claude Code's `notification_type` (`permission_prompt`,
    /// `idle_prompt`, `elicitation_dialog`, …).
    notification_type: Option<String>,
    /// The notification's text (read when there is no type).
    message: Option<String>,
}

/// Notification hook (Claude Code): the CLI asks the person for something
/// (a permission prompt, an MCP server's question: the agent waits for a
/// person, never "stalled") or has waited at its prompt (its turn is over).
/// Fed to the agent watcher as the newest hook event of the execution
/// (`agent_state::notification`); any other notification is taken and
/// changes nothing (`noted: false`).
#[utoipa::path(
    post,
    path = "/api/internal/hooks/notification",
    tag = "internal",
    request_body = NotificationBody,
    responses(
        (status = 200, description = "Taken", body = super::openapi::NotificationResponse)
    )
)]
async fn notification(
    State(s): State<AppState>,
    Caller(who): Caller,
    JsonBody(body): JsonBody<NotificationBody>,
) -> ApiResult<Json<Value>> {
    let task_id = who.bind_task(body.task_id.as_deref())?;
    let execution_id = who.bind_execution(body.execution_id.as_deref())?;
    let event =
        agent_state::notification(body.notification_type.as_deref(), body.message.as_deref());
    if let Some(event) = event {
        s.terminals
            .note_hook(&task_id, execution_id.as_deref(), event)
            .await;
    }
    Ok(Json(json!({"ok": true, "noted": event.is_some()})))
}

#[derive(utoipa::ToSchema, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolsReadyBody {
    task_id: Option<String>,
    execution_id: Option<String>,
    /// How long to wait at most, in milliseconds (default and cap 20000).
    #[schema(minimum = 0)]
    wait_ms: Option<u64>,
}

/// SessionStart (Claude Code), after the session report: wait until this
/// execution has listed its Harness tools over MCP, at most `waitMs` (cap
/// 20 s), so that the agent's first model request offers them (Claude Code
/// waits for this hook, not for its MCP servers; `terminals::mcp_ready`).
/// `listed: false` when the wait ended without it, or when the task has no
/// live execution.
#[utoipa::path(
    post,
    path = "/api/internal/hooks/tools-ready",
    tag = "internal",
    request_body = ToolsReadyBody,
    responses(
        (status = 200, description = "Whether the tools were listed", body = super::openapi::ToolsReadyResponse)
    )
)]
async fn tools_ready(
    State(s): State<AppState>,
    Caller(who): Caller,
    JsonBody(body): JsonBody<ToolsReadyBody>,
) -> ApiResult<Json<Value>> {
    let task_id = who.bind_task(body.task_id.as_deref())?;
    let execution_id = s
        .harness
        .tasks()
        .reported_execution(&who, &task_id, body.execution_id.as_deref())
        .await?;
    let Some(execution_id) = execution_id else {
        return Ok(Json(json!({"ok": true, "listed": false})));
    };
    let max = std::time::Duration::from_millis(
        body.wait_ms
            .unwrap_or(u64::MAX)
            .min(crate::terminals::mcp_ready::TOOLS_WAIT_MAX.as_millis() as u64),
    );
    let listed = s
        .terminals
        .wait_for_tools(&task_id, &execution_id, max)
        .await;
    Ok(Json(json!({"ok": true, "listed": listed})))
}

/// These routes in the OpenAPI document (`routes/openapi` merges it).
#[derive(utoipa::OpenApi)]
#[openapi(paths(session, stop, notification, tools_ready))]
pub(super) struct Api;
