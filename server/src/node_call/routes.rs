//! The owner's side of node calls: what another node forwards for an agent
//! that runs here. Each route does the local half of a `Terminals` method
//! (never forwarding again: a call that reaches a node that is not the
//! agent's gets a 409, no ping-pong). Mounted under [`super::PREFIX`] behind
//! [`super::verify`].

use axum::{
    Json, Router,
    extract::{Path, State},
    middleware,
    routing::{get, post},
};
use serde::Deserialize;
use serde_json::json;

use crate::{
    error::ApiResult, extract::JsonBody, state::AppState, terminals::providers::StartMode,
};

pub fn router(state: &AppState) -> Router<AppState> {
    Router::new()
        .route("/internal/node/tasks/{id}/start", post(start))
        .route("/internal/node/tasks/{id}/stop", post(stop))
        .route("/internal/node/tasks/{id}/input", post(input))
        .route("/internal/node/tasks/{id}/screen", get(screen))
        .route(
            "/internal/node/ws/terminal/{id}",
            get(crate::terminals::ws::local_handler),
        )
        .route_layer(middleware::from_fn_with_state(state.clone(), super::verify))
}

#[derive(Deserialize)]
struct StartCall {
    mode: StartMode,
}

async fn start(
    State(s): State<AppState>,
    Path(id): Path<String>,
    JsonBody(call): JsonBody<StartCall>,
) -> ApiResult<Json<harness_core::model::Execution>> {
    Ok(Json(s.terminals.start_here(&id, call.mode).await?))
}

async fn stop(
    State(s): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<Json<serde_json::Value>> {
    let was_running = s.terminals.stop_here(&id).await?;
    Ok(Json(json!({ "wasRunning": was_running })))
}

#[derive(Deserialize)]
struct InputCall {
    text: String,
    submit: bool,
}

async fn input(
    State(s): State<AppState>,
    Path(id): Path<String>,
    JsonBody(call): JsonBody<InputCall>,
) -> ApiResult<Json<crate::terminals::InputResult>> {
    Ok(Json(
        s.terminals.type_here(&id, &call.text, call.submit).await?,
    ))
}

async fn screen(
    State(s): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<Json<harness_pty::ScreenText>> {
    Ok(Json(s.terminals.screen_here(&id)?))
}
