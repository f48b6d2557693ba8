//! The ungated-run watch (`harness_core::ungated`): the PostToolUse hook's
//! report (agent token: its own task) and a task's flags (admin). Thin.

use axum::{
    Json, Router,
    extract::{Path, State},
    routing::{get, post},
};
use harness_core::{approvals::ToolCall, store::UngatedFlag};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::{
    error::ApiResult,
    extract::{Admin, Caller, JsonBody},
    state::AppState,
};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/internal/hooks/post-tool", post(post_tool))
        .route("/tasks/{id}/ungated", get(for_task))
}

#[derive(utoipa::ToSchema, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RanBody {
    task_id: Option<String>,
    #[serde(flatten)]
    call: ToolCall,
}

/// PostToolUse: the call ran. A call no pre-tool check saw flags the
/// execution (once) and alerts the person; `flagged` says whether the
/// execution is flagged now.
#[utoipa::path(post, path = "/api/internal/hooks/post-tool", tag = "internal", request_body = RanBody,
    responses((status = 200, description = "{ok, flagged}")))]
async fn post_tool(
    State(s): State<AppState>,
    Caller(who): Caller,
    JsonBody(body): JsonBody<RanBody>,
) -> ApiResult<Json<Value>> {
    let task_id = who.bind_task(body.task_id.as_deref())?;
    let execution = who.bind_execution(None)?;
    s.terminals
        .note_hook(
            &task_id,
            execution.as_deref(),
            harness_core::agent_state::HookEvent::PostToolUse,
        )
        .await;
    let flag = s
        .harness
        .approvals()
        .tool_ran(&task_id, execution.as_deref(), &body.call)
        .await?;
    Ok(Json(json!({"ok": true, "flagged": flag.is_some()})))
}

#[utoipa::path(get, path = "/api/tasks/{id}/ungated", tag = "approvals",
    params(("id" = String, Path, description = "The task's id (a CUID)")),
    responses((status = 200, description = "Executions of the task seen running a tool with no pre-tool check, oldest first", body = Vec<UngatedFlag>)))]
async fn for_task(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<Vec<UngatedFlag>>> {
    s.harness.tasks().get_task(&id).await?;
    Ok(Json(s.harness.approvals().ungated_flags(&id).await?))
}

/// These routes in the OpenAPI document (`routes/openapi` merges it).
#[derive(utoipa::OpenApi)]
#[openapi(paths(post_tool, for_task))]
pub(super) struct Api;
