//! REST routes, split by resource. Each handler: extract, call the core, shape JSON.

mod analytics;
mod approvals;
mod deliveries;
mod evidence;
mod gateway;
mod harness_internal;
mod hooks_internal;
mod inbox;
mod messages;
mod nodes;
mod openapi;
mod outbox;
mod plan;
mod projects;
mod recovery;
mod report;
mod settings;
mod tasks;
mod ungated;

use axum::{Json, Router, http::StatusCode, response::IntoResponse, routing::get};

use crate::{error::error_body, state::AppState};

/// Everything under `/api`.
pub fn api() -> Router<AppState> {
    Router::new()
        .merge(projects::routes())
        .merge(plan::routes())
        .merge(tasks::routes())
        .merge(deliveries::routes())
        .merge(messages::routes())
        .merge(evidence::routes())
        .merge(settings::routes())
        .merge(recovery::routes())
        .merge(analytics::routes())
        .merge(approvals::routes())
        .merge(inbox::routes())
        .merge(outbox::routes())
        .merge(gateway::routes())
        .merge(nodes::routes())
        .merge(ungated::routes())
        .merge(report::routes())
        .nest("/internal/harness", harness_internal::routes())
        .nest("/internal/hooks", hooks_internal::routes())
        .route(
            "/internal/terminal/{task_id}/input",
            axum::routing::post(internal_input),
        )
        .route("/openapi.json", get(openapi::serve))
        .fallback(|| async {
            (
                StatusCode::NOT_FOUND,
                Json(error_body("no such API endpoint", None)),
            )
        })
}

/// The OpenAPI description of every `/api` module (see `openapi/mod.rs`).
fn openapi_parts() -> Vec<utoipa::openapi::OpenApi> {
    use utoipa::OpenApi;
    vec![
        Api::openapi(),
        projects::Api::openapi(),
        plan::Api::openapi(),
        tasks::Api::openapi(),
        deliveries::Api::openapi(),
        messages::Api::openapi(),
        evidence::Api::openapi(),
        settings::Api::openapi(),
        recovery::Api::openapi(),
        analytics::Api::openapi(),
        approvals::Api::openapi(),
        inbox::Api::openapi(),
        outbox::Api::openapi(),
        gateway::Api::openapi(),
        nodes::Api::openapi(),
        harness_internal::Api::openapi(),
        hooks_internal::Api::openapi(),
        ungated::Api::openapi(),
        report::Api::openapi(),
    ]
}

/// The routes of this file in the OpenAPI document.
#[derive(utoipa::OpenApi)]
#[openapi(paths(internal_input))]
struct Api;

/// The OpenAPI 3.1 document served at `GET /api/openapi.json`, as utoipa
/// builds it (without the constraints of `openapi/constraints.rs`).
pub fn openapi_document() -> &'static utoipa::openapi::OpenApi {
    openapi::document()
}

/// The document exactly as served, constraints included.
pub fn openapi_json() -> &'static serde_json::Value {
    openapi::document_json()
}

/// The constraints that name no field or parameter of the document.
pub fn openapi_unmatched_constraints() -> &'static [String] {
    openapi::unmatched_constraints()
}

/// Every constraint stated in the document, with its rules (for the test
/// that ties each one to a core constant).
pub use openapi::{constraints, rules as openapi_rules};
/// Most progress-log lines one plan request may ask for.
pub use plan::MAX_LOG_LINES as MAX_PLAN_LOG_LINES;

pub async fn healthz() -> impl IntoResponse {
    Json(serde_json::json!({ "status": "ok" }))
}

pub fn health() -> Router<AppState> {
    Router::new().route("/healthz", get(healthz))
}

/// `POST /api/internal/terminal/{taskId}/input` — a parent agent into its
/// derived child (never its own terminal) and the admin.
#[utoipa::path(
    post,
    path = "/api/internal/terminal/{task_id}/input",
    tag = "internal",
    params(
        ("task_id" = String, Path, description = "The task whose terminal to type into (a CUID)")
    ),
    request_body = tasks::InputBody,
    responses(
        (status = 200, description = "Typed (or queued)", body = openapi::InputResponse)
    )
)]
async fn internal_input(
    axum::extract::State(s): axum::extract::State<AppState>,
    crate::extract::Caller(who): crate::extract::Caller,
    axum::extract::Path(task_id): axum::extract::Path<String>,
    crate::extract::JsonBody(body): crate::extract::JsonBody<tasks::InputBody>,
) -> crate::error::ApiResult<Json<serde_json::Value>> {
    s.harness
        .access()
        .authorize_terminal(&who, &task_id)
        .await?;
    let typist = harness_core::typed_text::Typist::of(&who);
    tasks::terminal_input(&s, &task_id, body, typist).await
}
