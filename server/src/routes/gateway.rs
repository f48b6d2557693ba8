//! The gateway's inbound routes (issue 28, tower-messaging.md §5.8) with
//! the reference's paths and bodies: `POST /api/internal/harness/gateway-task`
//! (`resolve_gateway_task_context`, read-only) and `PUT …/gateway-task`
//! (`continue_bound_task`). Credentials: a signed request (`signed.rs`), the
//! gateway token or the admin token; an agent's token is refused. Plus the
//! gateway token's rotation for the admin.

use axum::{
    Json, Router,
    extract::{FromRequestParts, State},
    http::request::Parts,
    routing::post,
};
use harness_core::{
    CoreError,
    gateway::{
        context::{TaskContext, TaskContextInput},
        continuation::ContinueInput,
    },
};
use serde::Serialize;
use serde_json::Value;

use crate::{
    error::{ApiError, ApiResult},
    extract::{Admin, Caller, JsonBody},
    state::AppState,
};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/internal/harness/gateway-task",
            post(resolve).put(continue_task),
        )
        .route("/settings/gateway-token/rotate", post(rotate))
}

/// A gateway's credential (signed request or gateway token) or the admin's.
pub struct GatewayCaller;

impl FromRequestParts<AppState> for GatewayCaller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let Caller(who) = Caller::from_request_parts(parts, state).await?;
        if who.is_gateway() || who.is_admin() {
            Ok(Self)
        } else {
            Err(CoreError::Forbidden(
                "this endpoint needs a gateway credential (a signed request or the gateway token)"
                    .into(),
            )
            .into())
        }
    }
}

/// Which task a chat message refers to; writes nothing.
#[utoipa::path(
    post,
    path = "/api/internal/harness/gateway-task",
    tag = "gateway",
    request_body = TaskContextInput,
    responses(
        (status = 200, description = "The bound task's context, or bound: false", body = TaskContext)
    )
)]
async fn resolve(
    State(s): State<AppState>,
    _: GatewayCaller,
    JsonBody(body): JsonBody<TaskContextInput>,
) -> ApiResult<Json<TaskContext>> {
    Ok(Json(s.harness.resolve_gateway_task_context(&body).await?))
}

/// The OWNER's explicit continuation, once per platform message.
#[utoipa::path(
    put,
    path = "/api/internal/harness/gateway-task",
    tag = "gateway",
    request_body = ContinueInput,
    responses(
        (status = 200, description = "continued_task, continue_open_ask, continue_not_bound, continue_in_progress, continue_failed or continue_conflict (with deduped / noOp)", body = super::openapi::BatchResponse)
    )
)]
async fn continue_task(
    State(s): State<AppState>,
    _: GatewayCaller,
    JsonBody(body): JsonBody<ContinueInput>,
) -> ApiResult<Json<Value>> {
    Ok(Json(s.harness.continue_bound_task(&body).await?))
}

#[derive(Serialize, utoipa::ToSchema)]
struct Rotated {
    /// The new gateway token (the old one no longer works).
    token: String,
}

/// Replace the gateway token (`secrets/gateway.token`).
#[utoipa::path(
    post,
    path = "/api/settings/gateway-token/rotate",
    tag = "settings",
    responses(
        (status = 200, description = "The new token", body = Rotated)
    )
)]
async fn rotate(State(s): State<AppState>, _: Admin) -> ApiResult<Json<Rotated>> {
    let root = s.data_root.clone();
    let token = tokio::task::spawn_blocking(move || crate::secrets::rotate_gateway_token(&root))
        .await
        .map_err(|e| ApiError::bad_request(e.to_string()))?
        .map_err(|e| {
            tracing::error!(error = %e, "cannot rotate the gateway token");
            ApiError::from(CoreError::Unavailable(
                "cannot write the gateway token".into(),
            ))
        })?;
    Ok(Json(Rotated { token }))
}

/// These routes in the OpenAPI document.
#[derive(utoipa::OpenApi)]
#[openapi(paths(resolve, continue_task, rotate))]
pub(super) struct Api;
