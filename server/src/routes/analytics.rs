//! `GET /api/analytics`: how long agents wait for humans (the `/analytics` page's data).

use axum::{Json, Router, extract::State, routing::get};
use harness_core::analytics::Analytics;

use crate::{error::ApiResult, extract::Admin, state::AppState};

pub fn routes() -> Router<AppState> {
    Router::new().route("/analytics", get(show))
}

async fn show(State(s): State<AppState>, _: Admin) -> ApiResult<Json<Analytics>> {
    Ok(Json(s.harness.analytics(chrono::Utc::now()).await?))
}
