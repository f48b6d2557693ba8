use axum::{
    Json, Router,
    extract::{Path, State},
    http::StatusCode,
    routing::{get, post, put},
};
use harness_core::{model::TaskView, tasks::CreateTask, typed_text::Typist};

use serde_json::json;

use crate::{
    error::ApiResult,
    extract::{Admin, JsonBody},
    state::AppState,
    terminals::providers::StartMode,
};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/tasks", post(create).get(list))
        .route("/tasks/{id}", get(show))
        .route("/tasks/{id}/start", post(start))
        .route("/tasks/{id}/stop", post(stop))
        .route("/tasks/{id}/input", post(input))
        .route("/tasks/{id}/screen", get(screen))
        .route("/tasks/{id}/unattended", put(set_unattended))
}

#[utoipa::path(
    post,
    path = "/api/tasks",
    tag = "tasks",
    request_body = harness_core::tasks::CreateTask,
    responses(
        (status = 201, description = "The task", body = harness_core::model::TaskView, links(
            ("show" = (operation_id = "get_tasks_id", parameters(("id" = "$response.body#/id")))),
            ("start" = (operation_id = "post_tasks_id_start", parameters(("id" = "$response.body#/id")))),
            ("stop" = (operation_id = "post_tasks_id_stop", parameters(("id" = "$response.body#/id")))),
            ("input" = (operation_id = "post_tasks_id_input", parameters(("id" = "$response.body#/id")))),
            ("screen" = (operation_id = "get_tasks_id_screen", parameters(("id" = "$response.body#/id")))),
            ("unattended" = (operation_id = "put_tasks_id_unattended", parameters(("id" = "$response.body#/id")))),
            ("deliveries" = (operation_id = "get_tasks_id_deliveries", parameters(("id" = "$response.body#/id")))),
            ("outbound" = (operation_id = "get_tasks_id_outbound", parameters(("id" = "$response.body#/id")))),
            ("inbox" = (operation_id = "get_tasks_id_inbox", parameters(("id" = "$response.body#/id")))),
            ("terminalInput" = (operation_id = "post_internal_terminal_task_id_input", parameters(("task_id" = "$response.body#/id")))),
            ("ask" = (operation_id = "post_internal_harness_ask", request_body = json!({"taskId": "$response.body#/id", "question": "Which database?"}))),
            ("notify" = (operation_id = "post_internal_harness_notify", request_body = json!({"taskId": "$response.body#/id", "message": "Build finished"}))),
            ("reply" = (operation_id = "post_internal_harness_reply", request_body = json!({"taskId": "$response.body#/id", "text": "sqlite"}))),
            ("pushToHuman" = (operation_id = "post_internal_harness_outbound", request_body = json!({"taskId": "$response.body#/id", "message": "Deployed", "gateway": "hermes", "dest": "feishu:oc_test"}))),
            ("sessionHook" = (operation_id = "post_internal_hooks_session", request_body = json!({"taskId": "$response.body#/id", "sessionId": "session-1"}))),
            ("stopHook" = (operation_id = "post_internal_hooks_stop", request_body = json!({"taskId": "$response.body#/id"}))),
            ("pending" = (operation_id = "get_internal_harness_pending", parameters(("taskId" = "$response.body#/id")))),
            ("messages" = (operation_id = "get_harness_messages", parameters(("taskId" = "$response.body#/id"))))
        ))
    )
)]
async fn create(
    State(s): State<AppState>,
    _: Admin,
    JsonBody(body): JsonBody<CreateTask>,
) -> ApiResult<(StatusCode, Json<TaskView>)> {
    Ok((
        StatusCode::CREATED,
        Json(s.harness.tasks().create_task(body).await?),
    ))
}

#[utoipa::path(
    get,
    path = "/api/tasks",
    tag = "tasks",
    responses(
        (status = 200, description = "Every task", body = Vec<harness_core::model::TaskView>)
    )
)]
async fn list(State(s): State<AppState>, _: Admin) -> ApiResult<Json<Vec<TaskView>>> {
    Ok(Json(s.harness.tasks().list_tasks().await?))
}

#[utoipa::path(
    get,
    path = "/api/tasks/{id}",
    tag = "tasks",
    params(
        ("id" = String, Path, description = "The task's id (a CUID)")
    ),
    responses(
        (status = 200, description = "The task", body = harness_core::model::TaskView)
    )
)]
async fn show(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<TaskView>> {
    Ok(Json(s.harness.tasks().get_task(&id).await?))
}

#[derive(utoipa::ToSchema, serde::Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct StartBody {
    prompt: Option<String>,
    resume: Option<bool>,
}

/// `POST /api/tasks/{id}/start {prompt?, resume?}` → `{executionId}`: spawn the
/// agent in a PTY (fresh, or `resume: true` to continue the provider session).
#[utoipa::path(
    post,
    path = "/api/tasks/{id}/start",
    tag = "tasks",
    params(
        ("id" = String, Path, description = "The task's id (a CUID)")
    ),
    request_body = Option<StartBody>,
    responses(
        (status = 200, description = "The agent runs", body = super::openapi::StartResponse)
    )
)]
async fn start(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
    raw: axum::body::Bytes,
) -> ApiResult<Json<serde_json::Value>> {
    // The body is optional: empty means a fresh start without a prompt.
    let body: StartBody = if raw.iter().all(u8::is_ascii_whitespace) {
        StartBody::default()
    } else {
        crate::extract::parse_json(&raw)?
    };
    let mode = if body.resume.unwrap_or(false) {
        // Never "the most recent session": a fresh start when unknown.
        s.terminals.resume_mode_for(&id).await?
    } else {
        let prompt = harness_core::validate::optional_text(
            "prompt",
            body.prompt.as_deref(),
            harness_core::validate::MAX_PROMPT_CHARS,
        )?;
        StartMode::Fresh { prompt }
    };
    // A person starts it: Harness's own planned actions are off.
    s.harness
        .agents()
        .cancel_agent_actions(&id, "a person started the agent")
        .await?;
    let execution = s.terminals.start(&id, mode).await?;
    Ok(Json(json!({"executionId": execution.id})))
}

#[utoipa::path(
    post,
    path = "/api/tasks/{id}/stop",
    tag = "tasks",
    params(
        ("id" = String, Path, description = "The task's id (a CUID)")
    ),
    responses(
        (status = 200, description = "The agent is stopped", body = super::openapi::StopTaskResponse)
    )
)]
async fn stop(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<serde_json::Value>> {
    let was_running = s.terminals.stop(&id).await?;
    Ok(Json(json!({"ok": true, "wasRunning": was_running})))
}

#[derive(utoipa::ToSchema, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InputBody {
    pub text: Option<String>,
    pub submit: Option<bool>,
    pub idempotency_key: Option<String>,
}

/// `POST /api/tasks/{id}/input {text, submit, idempotencyKey?}`.
#[utoipa::path(
    post,
    path = "/api/tasks/{id}/input",
    tag = "tasks",
    params(
        ("id" = String, Path, description = "The task's id (a CUID)")
    ),
    request_body = InputBody,
    responses(
        (status = 200, description = "Typed (or queued)", body = super::openapi::InputResponse)
    )
)]
async fn input(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<InputBody>,
) -> ApiResult<Json<serde_json::Value>> {
    // A person at the keyboard: typed as written.
    terminal_input(&s, &id, body, Typist::Person).await
}

/// Type `body` into task `id`'s terminal as `typist` (the core's rules:
/// `Terminals::input`).
pub(crate) async fn terminal_input(
    s: &AppState,
    id: &str,
    body: InputBody,
    typist: Typist,
) -> ApiResult<Json<serde_json::Value>> {
    let text = body
        .text
        .ok_or_else(|| harness_core::CoreError::invalid("text", "text required"))?;
    if let Some(k) = &body.idempotency_key
        && (k.is_empty() || k.chars().count() > harness_core::validate::MAX_INPUT_KEY_CHARS)
    {
        return Err(harness_core::CoreError::invalid(
            "idempotencyKey",
            format!(
                "idempotencyKey must be 1..{} characters",
                harness_core::validate::MAX_INPUT_KEY_CHARS
            ),
        )
        .into());
    }
    let out = s
        .terminals
        .input(
            id,
            &text,
            body.submit.unwrap_or(true),
            body.idempotency_key.as_deref(),
            typist,
        )
        .await?;
    Ok(Json(
        json!({"ok": true, "taskId": out.task_id, "submitted": out.submitted, "deduped": out.deduped,
            "deliveryId": out.delivery_id, "delivery": out.delivery}),
    ))
}

#[utoipa::path(
    get,
    path = "/api/tasks/{id}/screen",
    tag = "tasks",
    params(
        ("id" = String, Path, description = "The task's id (a CUID)")
    ),
    responses(
        (status = 200, description = "The screen as text", body = super::openapi::ScreenResponse)
    )
)]
async fn screen(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<serde_json::Value>> {
    let screen = s.terminals.screen(&id).await?;
    Ok(Json(
        json!({"cols": screen.cols, "rows": screen.rows, "text": screen.text}),
    ))
}

#[derive(utoipa::ToSchema, serde::Deserialize)]
struct Unattended {
    on: Option<bool>,
}

/// `PUT /api/tasks/{id}/unattended {on}` — same as the MCP tool `set_goal_mode`.
#[utoipa::path(
    put,
    path = "/api/tasks/{id}/unattended",
    tag = "tasks",
    params(
        ("id" = String, Path, description = "The task's id (a CUID)")
    ),
    request_body = Unattended,
    responses(
        (status = 200, description = "The task", body = harness_core::model::TaskView)
    )
)]
async fn set_unattended(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<Unattended>,
) -> ApiResult<Json<TaskView>> {
    let on = body
        .on
        .ok_or_else(|| harness_core::CoreError::invalid("on", "on (boolean) required"))?;
    Ok(Json(s.harness.tasks().set_unattended(&id, on).await?))
}

/// These routes in the OpenAPI document (`routes/openapi` merges it).
#[derive(utoipa::OpenApi)]
#[openapi(paths(create, list, show, start, stop, input, screen, set_unattended))]
pub(super) struct Api;
