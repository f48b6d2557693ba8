//! `/api/internal/harness/*`: the agent and gateway messaging API with the
//! reference's bodies and status codes (docs/tower-messaging.md §5.2–§5.5).
//! Admin token or the agent's own token (bound to its task).

use axum::{
    Json, Router,
    extract::State,
    routing::{get, post},
};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::{
    error::{ApiError, ApiResult},
    extract::{Caller, JsonBody, QueryParams},
    state::AppState,
};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/ask", post(ask))
        .route("/reply", post(reply))
        .route("/notify", post(notify))
        .route("/pending", get(pending))
}

#[derive(utoipa::ToSchema, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AskBody {
    task_id: Option<String>,
    question: Option<String>,
    /// A retry with the same key answers the ask recorded before.
    idempotency_key: Option<String>,
    /// options, multiSelect, default, deadline, urgency.
    #[serde(flatten)]
    choices: harness_core::options::ChoicesInput,
    /// Set by `harness hook pre-tool`: the native question tool it denied
    /// (a derived task's question then also goes to its parent's inbox).
    native_tool: Option<String>,
}

#[utoipa::path(
    post,
    path = "/api/internal/harness/ask",
    tag = "internal",
    request_body = AskBody,
    responses(
        (status = 200, description = "The ask is recorded and the agent parked", body = super::openapi::AskResponse, links(
            ("ignore" = (operation_id = "post_harness_messages_id_ignore", parameters(("id" = "$response.body#/requestId")))),
            ("dismiss" = (operation_id = "delete_harness_messages_id", parameters(("id" = "$response.body#/requestId"))))
        ))
    )
)]
async fn ask(
    State(s): State<AppState>,
    Caller(who): Caller,
    JsonBody(body): JsonBody<AskBody>,
) -> ApiResult<Json<Value>> {
    let task_id = who.bind_agent_task(body.task_id.as_deref())?;
    let native = body
        .native_tool
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty());
    let out = match native {
        Some(tool) if body.idempotency_key.is_none() => {
            s.harness
                .asks()
                .ask_native(&task_id, tool, body.question.as_deref(), &body.choices)
                .await?
        }
        _ => {
            s.harness
                .asks()
                .ask_keyed(
                    &task_id,
                    body.question.as_deref(),
                    &body.choices,
                    body.idempotency_key.as_deref(),
                )
                .await?
        }
    };
    Ok(Json(json!({
        "ok": true,
        "requestId": out.request_id,
        "noChannelConfigured": out.no_channel_configured,
        "deduped": out.deduped,
    })))
}

#[derive(utoipa::ToSchema, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ReplyBody {
    task_id: Option<String>,
    text: Option<String>,
    allow_retry: Option<bool>,
    /// The gateway's verified sender of a reply from chat (≤ 512): who
    /// decided, when the reply decides an approval.
    sender_id: Option<String>,
    /// The ask this answer is for (the question the person saw): an answer
    /// aimed at an approval decides exactly that one, or is refused (409
    /// "cancelled" / "already decided") when it is no longer pending.
    request_id: Option<String>,
}

#[utoipa::path(
    post,
    path = "/api/internal/harness/reply",
    tag = "internal",
    request_body = ReplyBody,
    responses(
        (status = 200, description = "The answer is recorded", body = super::openapi::ReplyResponse)
    )
)]
async fn reply(
    State(s): State<AppState>,
    Caller(who): Caller,
    JsonBody(body): JsonBody<ReplyBody>,
) -> ApiResult<Json<Value>> {
    let person = s.harness.gateway().gateway_person(&who, None).await?;
    if body.text.is_none() {
        return Err(harness_core::CoreError::invalid("text", "text required").into());
    }
    let task_id = who.bind_task(body.task_id.as_deref())?;
    let out = s
        .harness
        .asks()
        .reply_aimed(
            &person,
            &task_id,
            body.text.as_deref(),
            body.allow_retry.unwrap_or(true),
            body.sender_id.as_deref(),
            harness_core::messaging::Aim {
                request_id: body.request_id.as_deref(),
                ..Default::default()
            },
        )
        .await?;
    Ok(Json(json!({
        "ok": true,
        "taskId": out.task_id,
        "requestId": out.request_id,
        "mode": out.mode,
        "injected": out.injected,
        "deduped": out.deduped,
        "deliveryId": out.delivery_id,
        "delivery": out.delivery,
        "deliveryState": out.delivery_state,
        "deliveryError": out.delivery_error,
    })))
}

#[derive(utoipa::ToSchema, Deserialize)]
#[serde(rename_all = "camelCase")]
struct NotifyBody {
    task_id: Option<String>,
    message: Option<String>,
}

#[utoipa::path(
    post,
    path = "/api/internal/harness/notify",
    tag = "internal",
    request_body = NotifyBody,
    responses(
        (status = 200, description = "The notify is recorded", body = super::openapi::NotifyResponse)
    )
)]
async fn notify(
    State(s): State<AppState>,
    Caller(who): Caller,
    JsonBody(body): JsonBody<NotifyBody>,
) -> ApiResult<Json<Value>> {
    let task_id = who.bind_agent_task(body.task_id.as_deref())?;
    let message = s
        .harness
        .asks()
        .notify(&task_id, body.message.as_deref())
        .await?;
    Ok(Json(json!({ "ok": true, "messageId": message.id })))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PendingQuery {
    task_id: Option<String>,
}

#[utoipa::path(
    get,
    path = "/api/internal/harness/pending",
    tag = "internal",
    params(
        ("taskId" = Option<String>, Query, description = "The task (an agent token: its own)")
    ),
    responses(
        (status = 200, description = "The task's open ask, if any", body = harness_core::messaging::Pending)
    )
)]
async fn pending(
    State(s): State<AppState>,
    Caller(who): Caller,
    QueryParams(q): QueryParams<PendingQuery>,
) -> ApiResult<Json<Value>> {
    let task_id = who.bind_task(q.task_id.as_deref())?;
    let p = s.harness.asks().pending(&task_id).await?;
    serde_json::to_value(p)
        .map(Json)
        .map_err(|e| ApiError::bad_request(e.to_string()))
}

/// These routes in the OpenAPI document (`routes/openapi` merges it).
#[derive(utoipa::OpenApi)]
#[openapi(paths(ask, reply, notify, pending))]
pub(super) struct Api;
