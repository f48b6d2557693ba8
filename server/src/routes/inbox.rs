//! The parent's inbox: `GET /api/tasks/{id}/inbox` (events,
//! batches, derived children; the admin, the task's agent or its parent's)
//! and `PUT /api/internal/workbench/batch` (ack / heartbeat / resolve of a
//! batch by the parent's agent, bound to its task).

use axum::{
    Json, Router,
    extract::{Path, State},
    http::StatusCode,
    routing::{get, put},
};
use harness_core::inbox::BatchAction;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::{
    error::ApiResult,
    extract::{Admin, Caller, JsonBody},
    state::AppState,
};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/tasks/{id}/inbox", get(inbox))
        .route("/internal/workbench/batch", put(batch))
        .route(
            "/projects/{id}/workbench",
            get(workbench).post(ensure_workbench),
        )
        .route("/projects/{id}/workbench/runtime", get(workbench_runtime))
}

/// The project's Workbench runtime state (docs/tower-workbench.md §2.9), derived
/// now from its live terminal, latest execution and inbox (404 without a
/// Workbench).
#[utoipa::path(
    get,
    path = "/api/projects/{id}/workbench/runtime",
    tag = "projects",
    params(
        ("id" = String, Path, description = "The project's id (a CUID)")
    ),
    responses(
        (status = 200, description = "The Workbench's runtime state, derived now", body = harness_core::workbench_runtime::WorkbenchRuntime)
    )
)]
async fn workbench_runtime(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<harness_core::workbench_runtime::WorkbenchRuntime>> {
    let view = s
        .harness
        .tasks()
        .project_workbench(&id)
        .await?
        .ok_or_else(|| {
            harness_core::CoreError::NotFound("The project has no Workbench yet".into())
        })?;
    Ok(Json(
        s.harness
            .tasks()
            .workbench_runtime(&s.terminals, &view.task.id)
            .await?,
    ))
}

/// The project's resident Workbench task (404 when it has none yet).
#[utoipa::path(
    get,
    path = "/api/projects/{id}/workbench",
    tag = "projects",
    params(
        ("id" = String, Path, description = "The project's id (a CUID)")
    ),
    responses(
        (status = 200, description = "The project's Workbench task", body = harness_core::model::TaskView)
    )
)]
async fn workbench(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<harness_core::model::TaskView>> {
    s.harness
        .tasks()
        .project_workbench(&id)
        .await?
        .map(Json)
        .ok_or_else(|| {
            harness_core::CoreError::NotFound("The project has no Workbench yet".into()).into()
        })
}

#[derive(utoipa::ToSchema, Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct WorkbenchBody {
    agent: Option<harness_core::tasks::AgentInput>,
}

/// Create the project's Workbench on demand (201), or return it (200).
#[utoipa::path(
    post,
    path = "/api/projects/{id}/workbench",
    tag = "projects",
    params(
        ("id" = String, Path, description = "The project's id (a CUID)")
    ),
    request_body = Option<WorkbenchBody>,
    responses(
        (status = 200, description = "The existing Workbench", body = harness_core::model::TaskView),
        (status = 201, description = "The Workbench, created", body = harness_core::model::TaskView)
    )
)]
async fn ensure_workbench(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
    body: axum::body::Bytes,
) -> ApiResult<(StatusCode, Json<harness_core::model::TaskView>)> {
    // The body is optional (`{}` or none: the default agent).
    let agent = if body.is_empty() {
        None
    } else {
        crate::extract::parse_json::<WorkbenchBody>(&body)?.agent
    };
    let (view, created) = s.harness.tasks().ensure_workbench(&id, agent).await?;
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(view)))
}

#[utoipa::path(
    get,
    path = "/api/tasks/{id}/inbox",
    tag = "internal",
    params(
        ("id" = String, Path, description = "The task's id (a CUID)")
    ),
    responses(
        (status = 200, description = "The task's inbox and derived children", body = super::openapi::InboxResponse)
    )
)]
async fn inbox(
    State(s): State<AppState>,
    Caller(who): Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    let view = s.harness.access().task_for(&who, Some(&id)).await?;
    let inbox = s.harness.deliveries().inbox(&view.task.id).await?;
    let children = s.harness.deliveries().children(&view.task.id).await?;
    Ok(Json(json!({
        "taskId": view.task.id,
        "parentTaskId": view.task.parent_task_id,
        "events": inbox.events,
        "batches": inbox.batches,
        "children": children,
    })))
}

#[derive(utoipa::ToSchema, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct BatchBody {
    pub action: String,
    pub batch_id: String,
    pub parent_task_id: Option<String>,
    pub lease_token: String,
}

pub(crate) fn action(name: &str) -> Result<BatchAction, harness_core::CoreError> {
    match name {
        "ack" => Ok(BatchAction::Ack),
        "heartbeat" => Ok(BatchAction::Heartbeat),
        "resolve" => Ok(BatchAction::Resolve),
        _ => Err(harness_core::CoreError::invalid(
            "action",
            "Invalid Workbench batch transition (ack, heartbeat or resolve)",
        )),
    }
}

#[utoipa::path(
    put,
    path = "/api/internal/workbench/batch",
    tag = "internal",
    request_body = BatchBody,
    responses(
        (status = 200, description = "The batch after the transition", body = harness_core::inbox::BatchTransition)
    )
)]
async fn batch(
    State(s): State<AppState>,
    Caller(who): Caller,
    JsonBody(body): JsonBody<BatchBody>,
) -> ApiResult<Json<harness_core::inbox::BatchTransition>> {
    let parent = who.bind_task(body.parent_task_id.as_deref())?;
    let act = action(&body.action)?;
    Ok(Json(
        s.harness
            .deliveries()
            .batch_transition(&parent, &body.batch_id, &body.lease_token, act)
            .await?,
    ))
}

/// These routes in the OpenAPI document (`routes/openapi` merges it).
#[derive(utoipa::OpenApi)]
#[openapi(paths(workbench, ensure_workbench, workbench_runtime, inbox, batch))]
pub(super) struct Api;
