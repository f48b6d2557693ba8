use axum::{Json, Router, extract::State, http::StatusCode, routing::post};
use harness_core::{model::Project, tasks::CreateProject};

use crate::{
    error::ApiResult,
    extract::{Admin, JsonBody},
    state::AppState,
};

pub fn routes() -> Router<AppState> {
    Router::new().route("/projects", post(create).get(list))
}

async fn create(
    State(s): State<AppState>,
    _: Admin,
    JsonBody(body): JsonBody<CreateProject>,
) -> ApiResult<(StatusCode, Json<Project>)> {
    Ok((
        StatusCode::CREATED,
        Json(s.harness.create_project(body).await?),
    ))
}

async fn list(State(s): State<AppState>, _: Admin) -> ApiResult<Json<Vec<Project>>> {
    Ok(Json(s.harness.list_projects().await?))
}
