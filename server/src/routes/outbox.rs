//! The outbox over REST: `POST /api/internal/harness/outbound` (agents,
//! gateways: the reference's body; also `push_to_human`'s shape), the rows
//! as people see them with the two manual actions (admin), the platform
//! message id → task lookup for inbound routing, and the gateway settings.

use axum::{
    Json, Router,
    extract::{Path, State},
    http::StatusCode,
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
            get(destinations)
                .put(set_destinations)
                .post(add_destination),
        )
        .route(
            "/settings/destinations/{id}",
            axum::routing::put(update_destination).delete(delete_destination),
        )
}

#[derive(Deserialize, utoipa::ToSchema)]
struct DestinationsBody {
    destinations: Vec<Destination>,
}

/// The destination aliases (`harness.destinations`, docs/tower-messaging.md §6.2).
#[utoipa::path(
    get,
    path = "/api/settings/destinations",
    tag = "settings",
    responses(
        (status = 200, description = "The destination aliases", body = Vec<Destination>)
    )
)]
async fn destinations(State(s): State<AppState>, _: Admin) -> ApiResult<Json<Vec<Destination>>> {
    Ok(Json(s.harness.outbox().destinations().await?))
}

/// Replace the destination aliases (`{"destinations": [...]}`); entries
/// keep the ids they carry (entries without one are addressed by position).
#[utoipa::path(
    put,
    path = "/api/settings/destinations",
    tag = "settings",
    request_body = DestinationsBody,
    responses(
        (status = 200, description = "The destination aliases, as stored", body = Vec<Destination>)
    )
)]
async fn set_destinations(
    State(s): State<AppState>,
    _: Admin,
    JsonBody(body): JsonBody<DestinationsBody>,
) -> ApiResult<Json<Vec<Destination>>> {
    Ok(Json(
        s.harness
            .outbox()
            .set_destinations(body.destinations)
            .await?,
    ))
}

/// Add one alias (it gets an id); a concurrent edit of another entry, or a
/// directory hit cached by a send, is not lost.
#[utoipa::path(
    post,
    path = "/api/settings/destinations",
    tag = "settings",
    request_body = Destination,
    responses(
        (status = 201, description = "The alias, with its id", body = Destination, links(
            ("update" = (operation_id = "put_settings_destinations_id", parameters(("id" = "$response.body#/id")))),
            ("delete" = (operation_id = "delete_settings_destinations_id", parameters(("id" = "$response.body#/id"))))
        ))
    )
)]
async fn add_destination(
    State(s): State<AppState>,
    _: Admin,
    JsonBody(body): JsonBody<Destination>,
) -> ApiResult<(StatusCode, Json<Destination>)> {
    Ok((
        StatusCode::CREATED,
        Json(s.harness.outbox().add_destination(body).await?),
    ))
}

/// Replace one alias by id (or position, for entries without an id).
#[utoipa::path(
    put,
    path = "/api/settings/destinations/{id}",
    tag = "settings",
    params(
        ("id" = String, Path, description = "The alias entry's id (or position, for entries without one)")
    ),
    request_body = Destination,
    responses(
        (status = 200, description = "The alias, as stored", body = Destination)
    )
)]
async fn update_destination(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<Destination>,
) -> ApiResult<Json<Destination>> {
    Ok(Json(
        s.harness.outbox().update_destination(&id, body).await?,
    ))
}

#[utoipa::path(
    delete,
    path = "/api/settings/destinations/{id}",
    tag = "settings",
    params(
        ("id" = String, Path, description = "The alias entry's id (or position, for entries without one)")
    ),
    responses(
        (status = 200, description = "Removed", body = super::openapi::OkBody)
    )
)]
async fn delete_destination(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<serde_json::Value>> {
    s.harness.outbox().remove_destination(&id).await?;
    Ok(Json(serde_json::json!({"ok": true})))
}

/// Append one target (it gets an id); the others are untouched.
#[utoipa::path(
    post,
    path = "/api/settings/notify-targets/add",
    tag = "settings",
    request_body = NotifyTarget,
    responses(
        (status = 200, description = "The target, with its id", body = NotifyTarget, links(
            ("update" = (operation_id = "put_settings_notify_targets_id", parameters(("id" = "$response.body#/id")))),
            ("delete" = (operation_id = "delete_settings_notify_targets_id", parameters(("id" = "$response.body#/id")))),
            ("test" = (operation_id = "post_settings_notify_targets_id_test", parameters(("id" = "$response.body#/id"))))
        ))
    )
)]
async fn add_target(
    State(s): State<AppState>,
    _: Admin,
    JsonBody(body): JsonBody<NotifyTarget>,
) -> ApiResult<Json<NotifyTarget>> {
    Ok(Json(s.harness.outbox().add_notify_target(body).await?))
}

/// Replace one target by id (or position, for targets without an id);
/// a concurrent edit of another target is not lost.
#[utoipa::path(
    put,
    path = "/api/settings/notify-targets/{id}",
    tag = "settings",
    params(
        ("id" = String, Path, description = "The notify target's id")
    ),
    request_body = NotifyTarget,
    responses(
        (status = 200, description = "The target", body = NotifyTarget)
    )
)]
async fn update_target(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<NotifyTarget>,
) -> ApiResult<Json<NotifyTarget>> {
    Ok(Json(
        s.harness.outbox().update_notify_target(&id, body).await?,
    ))
}

#[utoipa::path(
    delete,
    path = "/api/settings/notify-targets/{id}",
    tag = "settings",
    params(
        ("id" = String, Path, description = "The notify target's id")
    ),
    responses(
        (status = 200, description = "Removed", body = super::openapi::OkBody)
    )
)]
async fn delete_target(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<serde_json::Value>> {
    s.harness.outbox().delete_notify_target(&id).await?;
    Ok(Json(serde_json::json!({"ok": true})))
}

/// "Send a test message": through the real outbox and gateway CLI.
#[utoipa::path(
    post,
    path = "/api/settings/notify-targets/{id}/test",
    tag = "settings",
    params(
        ("id" = String, Path, description = "The notify target's id")
    ),
    responses(
        (status = 200, description = "The test message as sent (or parked)", body = PushOutcome)
    )
)]
async fn test_target(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<PushOutcome>> {
    Ok(Json(s.harness.outbox().send_test_message(&id).await?))
}

/// Persist + send (docs/tower-messaging.md §5.6): answers within a few seconds
/// with `{ok, outboundId, state, deduped, sent, parked, platformMessageId, lastError}`.
#[utoipa::path(
    post,
    path = "/api/internal/harness/outbound",
    tag = "internal",
    request_body = PushInput,
    responses(
        (status = 200, description = "Persisted, and sent when the gateway answered in time", body = PushOutcome, links(
            ("show" = (operation_id = "get_outbound_id", parameters(("id" = "$response.body#/outboundId")))),
            ("retry" = (operation_id = "post_outbound_id_retry", parameters(("id" = "$response.body#/outboundId")))),
            ("markDelivered" = (operation_id = "post_outbound_id_mark_delivered", parameters(("id" = "$response.body#/outboundId"))))
        ))
    )
)]
async fn enqueue(
    State(s): State<AppState>,
    Caller(who): Caller,
    JsonBody(mut body): JsonBody<PushInput>,
) -> ApiResult<Json<PushOutcome>> {
    body.task_id = Some(who.bind_task(body.task_id.as_deref())?);
    Ok(Json(s.harness.outbox().push_to_human(body).await?))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MappingQuery {
    gateway: Option<String>,
    platform: Option<String>,
    chat_id: Option<String>,
    message_id: Option<String>,
}

/// The mapping of a message Harness sent into one chat: a message id is
/// unique only within its chat, so the chat is part of every lookup.
#[utoipa::path(
    get,
    path = "/api/internal/harness/delivery-map",
    tag = "internal",
    params(
        ("gateway" = String, Query, description = "The gateway it went through (hermes, openclaw)"),
        ("platform" = String, Query, description = "The platform (feishu, telegram, …)"),
        ("chatId" = String, Query, description = "The chat the reply comes from"),
        ("messageId" = String, Query, description = "The platform's message id")
    ),
    responses(
        (status = 200, description = "The task the platform message belongs to, or null", body = Option<DeliveryMapping>)
    )
)]
async fn mapping(
    State(s): State<AppState>,
    _: Admin,
    QueryParams(q): QueryParams<MappingQuery>,
) -> ApiResult<Json<Option<DeliveryMapping>>> {
    let required = |value: Option<String>, field: &'static str| {
        value
            .filter(|v| !v.trim().is_empty())
            .ok_or_else(|| harness_core::CoreError::invalid(field, format!("{field} required")))
    };
    let gateway = required(q.gateway, "gateway")?;
    let platform = required(q.platform, "platform")?;
    let chat_id = required(q.chat_id, "chatId")?;
    let id = required(q.message_id, "messageId")?;
    Ok(Json(
        s.harness
            .gateway()
            .delivery_mapping(&gateway, &platform, &chat_id, &id)
            .await?,
    ))
}

#[derive(Deserialize)]
struct ListQuery {
    limit: Option<u32>,
}

#[utoipa::path(
    get,
    path = "/api/outbound",
    tag = "outbox",
    params(
        ("limit" = Option<u32>, Query, description = "Rows at most (default 100, at most 500)")
    ),
    responses(
        (status = 200, description = "Outbox rows, newest first", body = Vec<Outbound>)
    )
)]
async fn list(
    State(s): State<AppState>,
    _: Admin,
    QueryParams(q): QueryParams<ListQuery>,
) -> ApiResult<Json<Vec<Outbound>>> {
    Ok(Json(
        s.harness
            .outbox()
            .list_outbound(None, q.limit.unwrap_or(100))
            .await?,
    ))
}

#[utoipa::path(
    get,
    path = "/api/tasks/{id}/outbound",
    tag = "outbox",
    params(
        ("id" = String, Path, description = "The task's id (a CUID)"),
        ("limit" = Option<u32>, Query, description = "Rows at most (default 100, at most 500)")
    ),
    responses(
        (status = 200, description = "The task's outbox rows, newest first", body = Vec<Outbound>)
    )
)]
async fn for_task(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
    QueryParams(q): QueryParams<ListQuery>,
) -> ApiResult<Json<Vec<Outbound>>> {
    s.harness.tasks().get_task(&id).await?;
    Ok(Json(
        s.harness
            .outbox()
            .list_outbound(Some(&id), q.limit.unwrap_or(100))
            .await?,
    ))
}

#[utoipa::path(
    get,
    path = "/api/outbound/{id}",
    tag = "outbox",
    params(
        ("id" = String, Path, description = "The outbox row's id (a CUID)")
    ),
    responses(
        (status = 200, description = "The outbox row", body = Outbound)
    )
)]
async fn show(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<Outbound>> {
    Ok(Json(s.harness.outbox().outbound(&id).await?))
}

/// FAILED or DEAD → PENDING, due now ("retry now").
#[utoipa::path(
    post,
    path = "/api/outbound/{id}/retry",
    tag = "outbox",
    params(
        ("id" = String, Path, description = "The outbox row's id (a CUID)")
    ),
    responses(
        (status = 200, description = "Due again now", body = Outbound)
    )
)]
async fn retry(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<Outbound>> {
    Ok(Json(s.harness.outbox().retry_outbound(&id).await?))
}

/// SENT_UNVERIFIED → DELIVERED ("mark as delivered").
#[utoipa::path(
    post,
    path = "/api/outbound/{id}/mark-delivered",
    tag = "outbox",
    params(
        ("id" = String, Path, description = "The outbox row's id (a CUID)")
    ),
    responses(
        (status = 200, description = "Marked as delivered", body = Outbound)
    )
)]
async fn mark_delivered(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<Outbound>> {
    Ok(Json(s.harness.outbox().mark_outbound_delivered(&id).await?))
}

#[utoipa::path(
    get,
    path = "/api/settings/gateways",
    tag = "settings",
    responses(
        (status = 200, description = "The gateway settings", body = GatewayConfig)
    )
)]
async fn gateways(State(s): State<AppState>, _: Admin) -> ApiResult<Json<GatewayConfig>> {
    Ok(Json(s.harness.outbox().gateway_config().await?))
}

/// `PUT /api/settings/gateways {hermes?: {cliPath, profile, displayName, env}, openclaw?: …}`.
#[utoipa::path(
    put,
    path = "/api/settings/gateways",
    tag = "settings",
    request_body = GatewayConfig,
    responses(
        (status = 200, description = "The gateway settings", body = GatewayConfig)
    )
)]
async fn set_gateways(
    State(s): State<AppState>,
    _: Admin,
    JsonBody(body): JsonBody<GatewayConfig>,
) -> ApiResult<Json<GatewayConfig>> {
    Ok(Json(s.harness.outbox().set_gateway_config(body).await?))
}

/// These routes in the OpenAPI document (`routes/openapi` merges it).
#[derive(utoipa::OpenApi)]
#[openapi(paths(
    add_target,
    update_target,
    delete_target,
    test_target,
    enqueue,
    mapping,
    list,
    for_task,
    show,
    retry,
    mark_delivered,
    gateways,
    set_gateways,
    destinations,
    set_destinations,
    add_destination,
    update_destination,
    delete_destination
))]
pub(super) struct Api;
