use axum::{
    Json, Router,
    extract::{Path, State},
    http::StatusCode,
    routing::{patch, post},
};
use harness_core::{model::Project, project_check::UpdateProject, tasks::CreateProject};

use crate::{
    error::ApiResult,
    extract::{Admin, JsonBody},
    state::AppState,
};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/projects", post(create).get(list))
        .route("/projects/{id}", patch(update))
}

/// Rename a project and/or change its path (`{"name"?, "path"?}`); the path
/// is validated as at creation (absolute, canonical).
#[utoipa::path(
    patch,
    path = "/api/projects/{id}",
    tag = "projects",
    params(
        ("id" = String, Path, description = "The project's id (a CUID)")
    ),
    request_body = harness_core::project_check::UpdateProject,
    responses(
        (status = 200, description = "The project, updated", body = harness_core::model::Project)
    )
)]
async fn update(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<UpdateProject>,
) -> ApiResult<Json<Project>> {
    Ok(Json(
        s.harness.tasks().update_project(&id, body, false).await?,
    ))
}

#[utoipa::path(
    post,
    path = "/api/projects",
    tag = "projects",
    request_body = harness_core::tasks::CreateProject,
    responses(
        (status = 201, description = "The project", body = harness_core::model::Project, links(
            ("plan" = (operation_id = "get_projects_id_plan", parameters(("id" = "$response.body#/id")))),
            ("workbench" = (operation_id = "get_projects_id_workbench", parameters(("id" = "$response.body#/id")))),
            ("ensureWorkbench" = (operation_id = "post_projects_id_workbench", parameters(("id" = "$response.body#/id"))))
        ))
    )
)]
async fn create(
    State(s): State<AppState>,
    _: Admin,
    JsonBody(body): JsonBody<CreateProject>,
) -> ApiResult<(StatusCode, Json<Project>)> {
    Ok((
        StatusCode::CREATED,
        Json(s.harness.tasks().create_project(body).await?),
    ))
}

#[utoipa::path(
    get,
    path = "/api/projects",
    tag = "projects",
    responses(
        (status = 200, description = "Every project", body = Vec<harness_core::model::Project>)
    )
)]
async fn list(State(s): State<AppState>, _: Admin) -> ApiResult<Json<Vec<Project>>> {
    Ok(Json(s.harness.tasks().list_projects().await?))
}

/// These routes in the OpenAPI document (`routes/openapi` merges it).
#[derive(utoipa::OpenApi)]
#[openapi(paths(create, list, update))]
pub(super) struct Api;
