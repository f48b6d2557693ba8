//! `/api/deliveries/*` and `/api/tasks/{id}/deliveries` (admin): the durable
//! delivery queue as people see it, and the two manual actions for a row
//! the worker will not touch by itself ("deliver again", "mark as delivered").

use axum::{
    Json, Router,
    extract::{Path, State},
    routing::{get, post},
};
use harness_core::deliveries::Delivery;

use crate::{error::ApiResult, extract::Admin, state::AppState};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/tasks/{id}/deliveries", get(for_task))
        .route("/deliveries/{id}", get(show))
        .route("/deliveries/{id}/retry", post(retry))
        .route("/deliveries/{id}/mark-delivered", post(mark_delivered))
}

#[utoipa::path(
    get,
    path = "/api/tasks/{id}/deliveries",
    tag = "deliveries",
    params(
        ("id" = String, Path, description = "The task's id (a CUID)")
    ),
    responses(
        (status = 200, description = "The task's deliveries", body = Vec<harness_core::deliveries::Delivery>)
    )
)]
async fn for_task(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<Vec<Delivery>>> {
    s.harness.tasks().get_task(&id).await?;
    Ok(Json(s.harness.deliveries().task_deliveries(&id).await?))
}

#[utoipa::path(
    get,
    path = "/api/deliveries/{id}",
    tag = "deliveries",
    params(
        ("id" = String, Path, description = "The delivery's id (a CUID)")
    ),
    responses(
        (status = 200, description = "The delivery", body = harness_core::deliveries::Delivery)
    )
)]
async fn show(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<Delivery>> {
    Ok(Json(s.harness.deliveries().delivery(&id).await?))
}

/// FAILED or UNVERIFIED → QUEUED ("deliver again").
#[utoipa::path(
    post,
    path = "/api/deliveries/{id}/retry",
    tag = "deliveries",
    params(
        ("id" = String, Path, description = "The delivery's id (a CUID)")
    ),
    responses(
        (status = 200, description = "Queued again", body = harness_core::deliveries::Delivery)
    )
)]
async fn retry(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<Delivery>> {
    Ok(Json(s.harness.deliveries().retry_delivery(&id).await?))
}

/// UNVERIFIED → DELIVERED ("mark as delivered").
#[utoipa::path(
    post,
    path = "/api/deliveries/{id}/mark-delivered",
    tag = "deliveries",
    params(
        ("id" = String, Path, description = "The delivery's id (a CUID)")
    ),
    responses(
        (status = 200, description = "Marked as delivered", body = harness_core::deliveries::Delivery)
    )
)]
async fn mark_delivered(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<Delivery>> {
    Ok(Json(s.harness.deliveries().mark_delivered(&id).await?))
}

/// These routes in the OpenAPI document (`routes/openapi` merges it).
#[derive(utoipa::OpenApi)]
#[openapi(paths(for_task, show, retry, mark_delivered))]
pub(super) struct Api;
