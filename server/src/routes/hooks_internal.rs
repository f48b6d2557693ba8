//! `/api/internal/hooks/*`: reports from the agent-side hook commands.

use axum::{Json, Router, extract::State, routing::post};
use harness_core::auth::Identity;
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
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SessionBody {
    task_id: Option<String>,
    session_id: Option<String>,
}

/// SessionStart: `{taskId?, sessionId}` → the session id is stored on the
/// caller's execution (agent token) or the task's live execution (admin);
/// the first write wins (`skipped: true` afterwards).
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
    let out = s
        .harness
        .record_session(&task_id, execution, body.session_id.as_deref())
        .await?;
    Ok(Json(if out.skipped {
        json!({"ok": true, "skipped": true, "sessionId": out.session_id})
    } else {
        json!({"ok": true, "sessionId": out.session_id})
    }))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StopBody {
    task_id: Option<String>,
}

/// Stop hook: the agent's turn ended — a real input boundary for pending
/// reply injections. Never kills the terminal (decisions D3, D4).
async fn stop(
    State(s): State<AppState>,
    Caller(who): Caller,
    JsonBody(body): JsonBody<StopBody>,
) -> ApiResult<Json<Value>> {
    let task_id = who.bind_task(body.task_id.as_deref())?;
    s.terminals.turn_complete(&task_id);
    Ok(Json(json!({"ok": true})))
}
