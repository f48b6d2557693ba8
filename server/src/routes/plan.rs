//! `GET /api/projects/{id}/plan?lines=N`: the project's task list (`<path>/harness-tasks.json`)
//! and the tail of its progress log, as `harness_plan::view::PlanView` — the same view model
//! the `/projects/{id}/plan` page shows. A missing or corrupt file is a state of the view
//! (`missing` / `error` with the `[CONFIG]` text), not an HTTP error.

use axum::{
    Json, Router,
    extract::{Path, State},
    routing::get,
};
use harness_core::{CoreError, validate};
use harness_plan::view::{DEFAULT_LOG_LINES, PlanView, plan_view};
use serde::Deserialize;

use crate::{
    error::ApiResult,
    extract::{Admin, QueryParams},
    state::AppState,
};

/// Most progress-log lines one request may ask for.
pub const MAX_LOG_LINES: usize = 1000;

pub fn routes() -> Router<AppState> {
    Router::new().route("/projects/{id}/plan", get(show))
}

#[derive(Deserialize)]
struct Params {
    lines: Option<String>,
}

#[utoipa::path(
    get,
    path = "/api/projects/{id}/plan",
    tag = "projects",
    params(
        ("id" = String, Path, description = "The project's id (a CUID)"),
        ("lines" = Option<u32>, Query, description = "Progress-log lines (default 20)")
    ),
    responses(
        (status = 200, description = "The task list and the tail of its progress log", body = super::openapi::PlanViewBody)
    )
)]
async fn show(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
    QueryParams(p): QueryParams<Params>,
) -> ApiResult<Json<PlanView>> {
    let id = validate::cuid("id", id.trim())?;
    let lines = match p.lines.as_deref().map(str::trim) {
        None | Some("") => DEFAULT_LOG_LINES,
        Some(n) => n
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=MAX_LOG_LINES).contains(n))
            .ok_or_else(|| {
                CoreError::invalid("lines", format!("lines must be 1..{MAX_LOG_LINES}"))
            })?,
    };
    let project = s.harness.tasks().project(&id).await?;
    let dir = std::path::PathBuf::from(project.path);
    let view = tokio::task::spawn_blocking(move || plan_view(&dir, lines))
        .await
        .map_err(|e| CoreError::Store(harness_core::store::StoreError::Backend(Box::new(e))))?;
    Ok(Json(view))
}

/// These routes in the OpenAPI document (`routes/openapi` merges it).
#[derive(utoipa::OpenApi)]
#[openapi(paths(show))]
pub(super) struct Api;
