//! The nodes of a cluster and their drain: list them, see one,
//! drain or undrain one (`harness_core::drain`). The admin token or a UI
//! session; an agent's token is refused. Any node answers for any node:
//! the flag is the registry's.

use axum::{
    Json, Router,
    extract::{Path, State},
    routing::get,
};
use harness_core::{
    CoreError,
    drain::{DrainAnswer, NodeView},
};
use serde::{Deserialize, Serialize};

use crate::{
    error::ApiResult,
    extract::{Admin, JsonBody},
    state::AppState,
};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/nodes", get(list))
        .route("/nodes/{id}", get(one).patch(set))
}

/// Every node, and which one answered.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct NodeList {
    this_node: String,
    /// The answering node's name (`--node-name`; its id when it has none).
    this_node_name: String,
    /// Whether the answering node acts as draining now (it follows the
    /// registry at once through the event bus, at the latest at its next
    /// heartbeat).
    this_node_draining: bool,
    nodes: Vec<NodeView>,
}

/// The nodes of the cluster (one on SQLite), with the agents each runs.
#[utoipa::path(
    get,
    path = "/api/nodes",
    tag = "nodes",
    responses((status = 200, description = "Every node, by id", body = NodeList))
)]
async fn list(State(s): State<AppState>, _: Admin) -> ApiResult<Json<NodeList>> {
    let nodes = s.harness.cluster().node_views().await?;
    let this_node = s.harness.config().node_id.clone();
    let this_node_name = nodes
        .iter()
        .find(|n| n.this_node)
        .map_or_else(|| this_node.clone(), |n| n.name.clone());
    Ok(Json(NodeList {
        this_node,
        this_node_name,
        this_node_draining: s.harness.cluster().draining(),
        nodes,
    }))
}

/// One node: alive, draining, the agents it runs (a drain is done when
/// `liveRuns` is empty).
#[utoipa::path(
    get,
    path = "/api/nodes/{id}",
    tag = "nodes",
    params(("id" = String, Path, description = "The node id (`<data-dir>/node-id`)")),
    responses(
        (status = 200, description = "The node", body = NodeView),
        (status = 404, description = "No such node in the registry")
    )
)]
async fn one(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
) -> ApiResult<Json<NodeView>> {
    Ok(Json(s.harness.cluster().node_view(&id).await?))
}

/// `{"draining": true}` drains the node, `false` undrains it.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
struct DrainInput {
    /// true: the node takes no new work; false: it takes work again.
    draining: Option<bool>,
}

/// Drain or undrain a node: it stops (or starts again) taking new work;
/// its agents keep running. Kept across its restarts until undrained.
#[utoipa::path(
    patch,
    path = "/api/nodes/{id}",
    tag = "nodes",
    params(("id" = String, Path, description = "The node id (`<data-dir>/node-id`)")),
    request_body = DrainInput,
    responses(
        (status = 200, description = "The node as it is now; `note` when no other node takes its work", body = DrainAnswer),
        (status = 400, description = "`draining` missing or not a boolean (named in `field`)"),
        (status = 404, description = "No such node in the registry")
    )
)]
async fn set(
    State(s): State<AppState>,
    _: Admin,
    Path(id): Path<String>,
    JsonBody(body): JsonBody<DrainInput>,
) -> ApiResult<Json<DrainAnswer>> {
    let draining = body
        .draining
        .ok_or_else(|| CoreError::invalid("draining", "required: true or false"))?;
    Ok(Json(
        s.harness.cluster().set_node_draining(&id, draining).await?,
    ))
}

/// The routes of this file in the OpenAPI document.
#[derive(utoipa::OpenApi)]
#[openapi(paths(list, one, set))]
pub struct Api;
