//! `GET /api/analytics`: how long agents wait for humans (the `/analytics` page's data).

use axum::{Json, Router, extract::State, routing::get};
use harness_core::analytics::Analytics;

use crate::{error::ApiResult, extract::Admin, state::AppState};

pub fn routes() -> Router<AppState> {
    Router::new().route("/analytics", get(show))
}

#[utoipa::path(
    get,
    path = "/api/analytics",
    tag = "analytics",
    responses(
        (status = 200, description = "Response times, parked time, questions", body = harness_core::analytics::Analytics)
    )
)]
async fn show(State(s): State<AppState>, _: Admin) -> ApiResult<Json<Analytics>> {
    Ok(Json(
        s.harness.reports().analytics(chrono::Utc::now()).await?,
    ))
}

/// These routes in the OpenAPI document (`routes/openapi` merges it).
#[derive(utoipa::OpenApi)]
#[openapi(paths(show))]
pub(super) struct Api;
