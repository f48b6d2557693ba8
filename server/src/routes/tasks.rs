use axum::{
    Json, Router,
    extract::{Path, State},
    http::StatusCode,
    routing::{get, post, put},
};
use harness_core::{model::TaskView, tasks::CreateTask};

use crate::{
    error::{ApiError, ApiResult},
    extract::{Admin, JsonBody},
    state::AppState,
};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/tasks", post(create).get(list))
        .route("/tasks/{id}", get(show))
        .route("/tasks/{id}/start", post(not_yet_start))
        .route("/tasks/{id}/stop", post(not_yet_stop))
        .route("/tasks/{id}/input", post(not_yet_input))
        .route("/tasks/{id}/screen", get(not_yet_screen))
        .route("/tasks/{id}/unattended", put(set_unattended))
}

async fn create(
    State(s): State<AppState>,
    _: Admin,
    JsonBody(body): JsonBody<CreateTask>,
) -> ApiResult<(StatusCode, Json<TaskView>)> {
    Ok((
        StatusCode::CREATED,
        Json(s.harness.create_task(body).await?),
    ))
}

async fn list(State(s): State<AppState>, _: Admin) -> ApiResult<Json<Vec<TaskView>>> {
    Ok(Json(s.harness.list_tasks().await?))
}

async fn show(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<TaskView>> {
    Ok(Json(s.harness.get_task(&id).await?))
}

/// Terminal endpoints check the task exists, then answer 501 until the PTY
/// supervisor lands.
async fn terminal_pending(s: &AppState, id: &str, what: &'static str) -> ApiResult<Json<()>> {
    s.harness.get_task(id).await?;
    Err(ApiError::NotImplemented(what))
}

async fn not_yet_start(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<()>> {
    terminal_pending(&s, &id, "starting a task").await
}

async fn not_yet_stop(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<()>> {
    terminal_pending(&s, &id, "stopping a task").await
}

async fn not_yet_input(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<()>> {
    terminal_pending(&s, &id, "terminal input").await
}

async fn not_yet_screen(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<()>> {
    terminal_pending(&s, &id, "the terminal screen").await
}

#[derive(serde::Deserialize)]
struct Unattended {
    on: Option<bool>,
}

/// `PUT /api/tasks/{id}/unattended {on}` — same as the MCP tool `set_goal_mode`.
async fn set_unattended(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<Unattended>,
) -> ApiResult<Json<TaskView>> {
    let on = body
        .on
        .ok_or_else(|| harness_core::CoreError::invalid("on", "on (boolean) required"))?;
    Ok(Json(s.harness.set_unattended(&id, on).await?))
}
