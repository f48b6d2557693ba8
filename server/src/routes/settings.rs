use axum::{Json, Router, extract::State, routing::get};
use harness_core::settings::NotifyTarget;

use crate::{
    error::ApiResult,
    extract::{Admin, JsonBody},
    state::AppState,
};

pub fn routes() -> Router<AppState> {
    Router::new().route("/settings/notify-targets", get(list).put(replace))
}

async fn list(State(s): State<AppState>, _: Admin) -> ApiResult<Json<Vec<NotifyTarget>>> {
    Ok(Json(s.harness.notify_targets().await?))
}

#[derive(serde::Deserialize)]
struct Targets {
    targets: Vec<NotifyTarget>,
}

/// Body: `{"targets": [...]}` (an object, like every other body).
async fn replace(
    State(s): State<AppState>,
    _: Admin,
    JsonBody(body): JsonBody<Targets>,
) -> ApiResult<Json<Vec<NotifyTarget>>> {
    Ok(Json(s.harness.set_notify_targets(body.targets).await?))
}
