use axum::{Json, Router, extract::State, routing::get};
use harness_core::settings::NotifyTarget;

use crate::{
    error::ApiResult,
    extract::{Admin, JsonBody},
    state::AppState,
};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/settings/notify-targets", get(list).put(replace))
        .route("/settings/directive", get(directive).put(set_directive))
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

/// `GET /api/settings/directive` → `{directive}`: the system directive agents get.
async fn directive(State(s): State<AppState>, _: Admin) -> ApiResult<Json<serde_json::Value>> {
    Ok(Json(
        serde_json::json!({"directive": s.harness.system_directive().await?}),
    ))
}

#[derive(serde::Deserialize)]
struct DirectiveBody {
    directive: Option<String>,
}

/// `PUT /api/settings/directive {directive}`; empty restores the built-in one.
async fn set_directive(
    State(s): State<AppState>,
    _: Admin,
    JsonBody(body): JsonBody<DirectiveBody>,
) -> ApiResult<Json<serde_json::Value>> {
    let directive = s
        .harness
        .set_system_directive(body.directive.as_deref())
        .await?;
    Ok(Json(serde_json::json!({"directive": directive})))
}
