//! The outbox over REST: `POST /api/internal/harness/outbound` (agents,
//! gateways: the reference's body; also `push_to_human`'s shape), the rows
//! as people see them with the two manual actions (admin), the platform
//! message id → task lookup for inbound routing, and the gateway settings.

use axum::{
    Json, Router,
    extract::{Path, State},
    routing::{get, post},
};
use harness_core::outbox::{
    DeliveryMapping, Outbound, PushInput, PushOutcome, destination::Destination,
    gateway::GatewayConfig,
};
use harness_core::settings::NotifyTarget;
use serde::Deserialize;

use crate::{
    error::ApiResult,
    extract::{Admin, Caller, JsonBody, QueryParams},
    state::AppState,
};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/internal/harness/outbound", post(enqueue))
        .route("/internal/harness/delivery-map", get(mapping))
        .route("/outbound", get(list))
        .route("/tasks/{id}/outbound", get(for_task))
        .route("/outbound/{id}", get(show))
        .route("/outbound/{id}/retry", post(retry))
        .route("/outbound/{id}/mark-delivered", post(mark_delivered))
        .route("/settings/gateways", get(gateways).put(set_gateways))
        .route("/settings/notify-targets/add", post(add_target))
        .route(
            "/settings/notify-targets/{id}",
            axum::routing::put(update_target).delete(delete_target),
        )
        .route("/settings/notify-targets/{id}/test", post(test_target))
        .route(
            "/settings/destinations",
            get(destinations).put(set_destinations),
        )
}

#[derive(Deserialize)]
struct DestinationsBody {
    destinations: Vec<Destination>,
}

/// The destination aliases (`harness.destinations`, tower-messaging.md §6.2).
async fn destinations(State(s): State<AppState>, _: Admin) -> ApiResult<Json<Vec<Destination>>> {
    Ok(Json(s.harness.destinations().await?))
}

async fn set_destinations(
    State(s): State<AppState>,
    _: Admin,
    JsonBody(body): JsonBody<DestinationsBody>,
) -> ApiResult<Json<Vec<Destination>>> {
    Ok(Json(s.harness.set_destinations(body.destinations).await?))
}

/// Append one target (it gets an id); the others are untouched.
async fn add_target(
    State(s): State<AppState>,
    _: Admin,
    JsonBody(body): JsonBody<NotifyTarget>,
) -> ApiResult<Json<NotifyTarget>> {
    Ok(Json(s.harness.add_notify_target(body).await?))
}

/// Replace one target by id (or position, for targets without an id);
/// a concurrent edit of another target is not lost.
async fn update_target(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<NotifyTarget>,
) -> ApiResult<Json<NotifyTarget>> {
    Ok(Json(s.harness.update_notify_target(&id, body).await?))
}

async fn delete_target(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<serde_json::Value>> {
    s.harness.delete_notify_target(&id).await?;
    Ok(Json(serde_json::json!({"ok": true})))
}

/// "Send a test message": through the real outbox and gateway CLI.
async fn test_target(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<PushOutcome>> {
    Ok(Json(s.harness.send_test_message(&id).await?))
}

/// Persist + send (tower-messaging.md §5.6): answers within a few seconds
/// with `{ok, outboundId, state, deduped, sent, parked, platformMessageId, lastError}`.
async fn enqueue(
    State(s): State<AppState>,
    Caller(who): Caller,
    JsonBody(mut body): JsonBody<PushInput>,
) -> ApiResult<Json<PushOutcome>> {
    body.task_id = Some(who.bind_task(body.task_id.as_deref())?);
    Ok(Json(s.harness.push_to_human(body).await?))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MappingQuery {
    platform: Option<String>,
    message_id: Option<String>,
}

async fn mapping(
    State(s): State<AppState>,
    _: Admin,
    QueryParams(q): QueryParams<MappingQuery>,
) -> ApiResult<Json<Option<DeliveryMapping>>> {
    let platform = q
        .platform
        .ok_or_else(|| harness_core::CoreError::invalid("platform", "platform required"))?;
    let id = q
        .message_id
        .ok_or_else(|| harness_core::CoreError::invalid("messageId", "messageId required"))?;
    Ok(Json(s.harness.delivery_mapping(&platform, &id).await?))
}

#[derive(Deserialize)]
struct ListQuery {
    limit: Option<u32>,
}

async fn list(
    State(s): State<AppState>,
    _: Admin,
    QueryParams(q): QueryParams<ListQuery>,
) -> ApiResult<Json<Vec<Outbound>>> {
    Ok(Json(
        s.harness
            .list_outbound(None, q.limit.unwrap_or(100))
            .await?,
    ))
}

async fn for_task(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<Vec<Outbound>>> {
    s.harness.get_task(&id).await?;
    Ok(Json(s.harness.list_outbound(Some(&id), 100).await?))
}

async fn show(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<Outbound>> {
    Ok(Json(s.harness.outbound(&id).await?))
}

/// FAILED or DEAD → PENDING, due now ("retry now").
async fn retry(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<Outbound>> {
    Ok(Json(s.harness.retry_outbound(&id).await?))
}

/// SENT_UNVERIFIED → DELIVERED ("mark as delivered").
async fn mark_delivered(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<Outbound>> {
    Ok(Json(s.harness.mark_outbound_delivered(&id).await?))
}

async fn gateways(State(s): State<AppState>, _: Admin) -> ApiResult<Json<GatewayConfig>> {
    Ok(Json(s.harness.gateway_config().await?))
}

/// `PUT /api/settings/gateways {hermes?: {cliPath, profile, displayName, env}, openclaw?: …}`.
async fn set_gateways(
    State(s): State<AppState>,
    _: Admin,
    JsonBody(body): JsonBody<GatewayConfig>,
) -> ApiResult<Json<GatewayConfig>> {
    Ok(Json(s.harness.set_gateway_config(body).await?))
}
