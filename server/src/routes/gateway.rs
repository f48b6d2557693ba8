//! The gateway's inbound routes (docs/tower-messaging.md §5.8) with
//! the reference's paths and bodies: `POST /api/internal/harness/gateway-task`
//! (`resolve_gateway_task_context`, read-only) and `PUT …/gateway-task`
//! (`continue_bound_task`), `POST …/gateway` (`route_gateway_message`, docs/tower-messaging.md §5.7),
//! `PATCH …/gateway` (`completeGatewayInbound`)
//! and `POST …/gateway-query` (`route_gateway_query`, docs/tower-messaging.md §5.9), `POST …/gateway-access`
//! (`manage_gateway_channel_access`, docs/tower-messaging.md §5.10). Credentials: a signed request (`signed.rs`), the
//! gateway token or the admin token; an agent's token is refused. Plus the
//! gateway token's rotation for the admin.

use axum::{
    Json, Router,
    extract::{FromRequestParts, Path, State},
    http::{StatusCode, request::Parts},
    routing::{get, post},
};
use harness_core::{
    CoreError,
    gateway::{
        access::AccessInput,
        completion::CompletionInput,
        context::{TaskContext, TaskContextInput},
        continuation::ContinueInput,
        route_input::{QueryInput, RouteInput},
        workbench_callbacks::{Callback, CallbackInput},
    },
};
use serde::Serialize;
use serde_json::Value;

use crate::{
    error::{ApiError, ApiResult},
    extract::{Admin, Caller, JsonBody, QueryParams},
    state::AppState,
};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(
            "/internal/harness/gateway-task",
            post(resolve).put(continue_task),
        )
        .route(
            "/internal/harness/gateway",
            post(route_message).patch(complete).put(callback),
        )
        .route("/internal/harness/gateway-query", post(query))
        .route("/internal/harness/gateway-access", post(access))
        .route("/gateway/channels", get(list_channels))
        .route("/gateway/inbound", get(list_inbound))
        .route("/gateway/sessions", get(list_sessions))
        .route("/gateway/replies/{id}/retry", post(retry_reply))
        .route(
            "/gateway/replies/{id}/mark-delivered",
            post(mark_reply_delivered),
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
    Ok(Json(
        s.harness
            .gateway()
            .resolve_gateway_task_context(&body)
            .await?,
    ))
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
    Ok(Json(s.harness.gateway().continue_bound_task(&body).await?))
}

/// The OWNER's chat message, routed once per platform message (docs/tower-messaging.md §8.2).
#[utoipa::path(
    post,
    path = "/api/internal/harness/gateway",
    tag = "gateway",
    request_body = RouteInput,
    responses(
        (status = 200, description = "direct_not_supported, rate_limited, discussion_closed, task_context, tower_mcp, needs_project_selection, project_discussion or project_work; a repeat: in_progress or already_processed with deduped / noOp", body = super::openapi::BatchResponse)
    )
)]
async fn route_message(
    State(s): State<AppState>,
    _: GatewayCaller,
    JsonBody(body): JsonBody<RouteInput>,
) -> ApiResult<Json<Value>> {
    Ok(Json(
        s.harness.gateway().route_gateway_message(&body).await?,
    ))
}

/// The gateway closes an inbound row with a result of its own (docs/tower-messaging.md §5.7
/// PATCH, `completeGatewayInbound`): PROCESSED, whatever its state.
#[utoipa::path(
    patch,
    path = "/api/internal/harness/gateway",
    tag = "gateway",
    request_body = CompletionInput,
    responses(
        (status = 200, description = "{ok: true, inboundId, state: PROCESSED}", body = super::openapi::BatchResponse),
        (status = 400, description = "inboundId missing, malformed or unknown; an unknown field", body = super::openapi::BatchResponse)
    )
)]
async fn complete(
    State(s): State<AppState>,
    _: GatewayCaller,
    JsonBody(body): JsonBody<CompletionInput>,
) -> ApiResult<Json<Value>> {
    Ok(Json(
        s.harness.gateway().complete_gateway_inbound(&body).await?,
    ))
}

/// The bound Workbench's callbacks (docs/tower-messaging.md §5.7 PUT): `action` `task_created`,
/// `discussion` or `final`; only the Workbench task's own credential.
#[utoipa::path(
    put,
    path = "/api/internal/harness/gateway",
    tag = "gateway",
    request_body = CallbackInput,
    responses(
        (status = 200, description = "The reply written (deliveryId, kind, state, deduped)", body = super::openapi::BatchResponse)
    )
)]
async fn callback(
    State(s): State<AppState>,
    Caller(who): Caller,
    JsonBody(body): JsonBody<CallbackInput>,
) -> ApiResult<Json<Value>> {
    let action = Callback::parse(body.action.as_deref())?;
    Ok(Json(
        s.harness
            .gateway()
            .gateway_callback(&who, action, &body)
            .await?,
    ))
}

/// A NON_OWNER's question about a project; writes nothing (docs/tower-messaging.md §8.7).
#[utoipa::path(
    post,
    path = "/api/internal/harness/gateway-query",
    tag = "gateway",
    request_body = QueryInput,
    responses(
        (status = 200, description = "project_query, needs_project_selection or channel_access_denied", body = super::openapi::BatchResponse)
    )
)]
async fn query(
    State(s): State<AppState>,
    _: GatewayCaller,
    JsonBody(body): JsonBody<QueryInput>,
) -> ApiResult<Json<Value>> {
    Ok(Json(s.harness.gateway().route_gateway_query(&body).await?))
}

/// The OWNER's channel access change (docs/tower-messaging.md §5.10): 200 when `ok`, 400 when
/// `ok: false` (needs a selection); the chat is the inbound message's.
#[utoipa::path(
    post,
    path = "/api/internal/harness/gateway-access",
    tag = "gateway",
    request_body = AccessInput,
    responses(
        (status = 200, description = "{ok, deduped, record, version, updatedAt}", body = super::openapi::BatchResponse),
        (status = 400, description = "A field is invalid (named), or ok: false with needsSelection and candidates", body = super::openapi::BatchResponse)
    )
)]
async fn access(
    State(s): State<AppState>,
    _: GatewayCaller,
    JsonBody(body): JsonBody<AccessInput>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let out = s
        .harness
        .gateway()
        .manage_gateway_channel_access(&body)
        .await?;
    let status = if out["ok"] == Value::Bool(true) {
        StatusCode::OK
    } else {
        StatusCode::BAD_REQUEST
    };
    Ok((status, Json(out)))
}

/// Channels and their access (newest change first), with the OWNER ids
/// per gateway (admin; the gateway page).
#[utoipa::path(
    get,
    path = "/api/gateway/channels",
    tag = "gateway",
    responses(
        (status = 200, description = "{channels: [record], version, owners: {openclaw, hermes}}", body = super::openapi::BatchResponse)
    )
)]
async fn list_channels(State(s): State<AppState>, _: Admin) -> ApiResult<Json<Value>> {
    Ok(Json(s.harness.gateway().gateway_channels().await?))
}

#[derive(serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct ListQuery {
    /// RECEIVED, QUEUED, PROCESSING, PROCESSED or FAILED (inbound only).
    state: Option<String>,
    /// At most this many rows (default 100, at most 500).
    limit: Option<u32>,
}

/// Inbound gateway messages, newest first, with their routing result and
/// their replies (admin).
#[utoipa::path(
    get,
    path = "/api/gateway/inbound",
    tag = "gateway",
    params(ListQuery),
    responses(
        (status = 200, description = "Inbound rows with result and replies", body = [harness_core::gateway::listing::InboundView])
    )
)]
async fn list_inbound(
    State(s): State<AppState>,
    _: Admin,
    QueryParams(q): QueryParams<ListQuery>,
) -> ApiResult<Json<Vec<harness_core::gateway::listing::InboundView>>> {
    Ok(Json(
        s.harness
            .gateway()
            .gateway_inbound(q.state.as_deref(), q.limit)
            .await?,
    ))
}

/// Gateway sessions (chat thread or chat + sender → project), newest first (admin).
#[utoipa::path(
    get,
    path = "/api/gateway/sessions",
    tag = "gateway",
    params(ListQuery),
    responses(
        (status = 200, description = "Sessions", body = [harness_core::store::GatewaySession])
    )
)]
async fn list_sessions(
    State(s): State<AppState>,
    _: Admin,
    QueryParams(q): QueryParams<ListQuery>,
) -> ApiResult<Json<Vec<harness_core::store::GatewaySession>>> {
    Ok(Json(s.harness.gateway().gateway_sessions(q.limit).await?))
}

/// FAILED, DEAD or SENT_UNVERIFIED → PENDING, due now ("retry now"; a
/// person's decision, docs/decisions.md D7/docs/decisions.md D9).
#[utoipa::path(
    post,
    path = "/api/gateway/replies/{id}/retry",
    tag = "gateway",
    params(
        ("id" = String, Path, description = "The reply's id (a CUID)")
    ),
    responses(
        (status = 200, description = "Due again now", body = harness_core::store::GatewayReply),
        (status = 404, description = "No such reply"),
        (status = 409, description = "The reply is in another state")
    )
)]
async fn retry_reply(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<harness_core::store::GatewayReply>> {
    Ok(Json(s.harness.gateway().retry_gateway_reply(&id).await?))
}

/// SENT_UNVERIFIED → DELIVERED ("mark as delivered").
#[utoipa::path(
    post,
    path = "/api/gateway/replies/{id}/mark-delivered",
    tag = "gateway",
    params(
        ("id" = String, Path, description = "The reply's id (a CUID)")
    ),
    responses(
        (status = 200, description = "Marked as delivered", body = harness_core::store::GatewayReply),
        (status = 404, description = "No such reply"),
        (status = 409, description = "The reply is in another state")
    )
)]
async fn mark_reply_delivered(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<harness_core::store::GatewayReply>> {
    Ok(Json(
        s.harness
            .gateway()
            .mark_gateway_reply_delivered(&id)
            .await?,
    ))
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
    let harness = s.harness.clone();
    let token = tokio::task::spawn_blocking(move || harness.access().rotate_gateway_token())
        .await
        .map_err(|e| ApiError::bad_request(e.to_string()))??;
    Ok(Json(Rotated { token }))
}

/// These routes in the OpenAPI document.
#[derive(utoipa::OpenApi)]
#[openapi(paths(
    resolve,
    continue_task,
    route_message,
    complete,
    callback,
    query,
    access,
    list_channels,
    list_inbound,
    list_sessions,
    retry_reply,
    mark_reply_delivered,
    rotate
))]
pub(super) struct Api;
