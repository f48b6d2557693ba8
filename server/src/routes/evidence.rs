//! A question's evidence and receipt (docs/evidence.md): the agent's screen when
//! it asked, and the question's timeline from asked to the agent going on.
//! Both under the notification center's path (`/api/harness/messages/{id}/…`)
//! and the reference's (`/api/messages/{id}/…`); the core builds them.

use axum::{
    Json, Router,
    extract::{Path, State},
    routing::get,
};
use harness_core::{evidence::AskEvidence, receipt::QuestionReceipt};

use crate::{error::ApiResult, extract::Admin, state::AppState};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/harness/messages/{id}/evidence", get(evidence))
        .route("/messages/{id}/evidence", get(message_evidence))
        .route("/harness/messages/{id}/receipt", get(receipt))
        .route("/messages/{id}/receipt", get(message_receipt))
}

#[utoipa::path(
    get,
    path = "/api/harness/messages/{id}/evidence",
    tag = "messages",
    params(
        ("id" = String, Path, description = "The message's id (a CUID)")
    ),
    responses(
        (status = 200, description = "The last lines of the agent's screen when it asked, redacted (null: none was taken)", body = AskEvidence)
    )
)]
async fn evidence(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<AskEvidence>> {
    Ok(Json(s.harness.asks().ask_evidence(&id).await?))
}

#[utoipa::path(
    get,
    path = "/api/messages/{id}/evidence",
    tag = "messages",
    params(
        ("id" = String, Path, description = "The message's id (a CUID)")
    ),
    responses(
        (status = 200, description = "The same as /api/harness/messages/{id}/evidence", body = AskEvidence)
    )
)]
async fn message_evidence(
    state: State<AppState>,
    admin: Admin,
    id: Path<String>,
) -> ApiResult<Json<AskEvidence>> {
    evidence(state, admin, id).await
}

#[utoipa::path(
    get,
    path = "/api/messages/{id}/receipt",
    tag = "messages",
    params(
        ("id" = String, Path, description = "The question's id (a CUID)")
    ),
    responses(
        (status = 200, description = "The question's timeline: asked, pushed (gateway, chat, platform message id), reminded / escalated, answered (by whom, where), typed into the terminal (delivery id, once or UNVERIFIED), the agent resumed, its screen after the answer (redacted); `stalledAt` names the first step that stalled or failed", body = QuestionReceipt)
    )
)]
async fn message_receipt(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<QuestionReceipt>> {
    Ok(Json(s.harness.reports().receipt(&id).await?))
}

#[utoipa::path(
    get,
    path = "/api/harness/messages/{id}/receipt",
    tag = "messages",
    params(
        ("id" = String, Path, description = "The question's id (a CUID)")
    ),
    responses(
        (status = 200, description = "The same as /api/messages/{id}/receipt", body = QuestionReceipt)
    )
)]
async fn receipt(
    state: State<AppState>,
    admin: Admin,
    id: Path<String>,
) -> ApiResult<Json<QuestionReceipt>> {
    message_receipt(state, admin, id).await
}

/// These routes in the OpenAPI document (`routes/openapi` merges it).
#[derive(utoipa::OpenApi)]
#[openapi(paths(evidence, message_evidence, message_receipt, receipt))]
pub(super) struct Api;
