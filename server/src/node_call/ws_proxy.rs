//! The browser terminal of an agent on another node: this node passes the
//! browser's WebSocket upgrade on to the owner (`/internal/node/ws/terminal`,
//! signed with the node key), answers the browser with the owner's `101`
//! (the same `Sec-WebSocket-Accept`: the browser's key went through
//! unchanged) and then copies bytes both ways until either side closes. The
//! frames, the flow control and the sizing of `terminals::ws` are the
//! owner's, untouched; no extension is negotiated across the hop.

use axum::{
    body::Body,
    extract::Request,
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
};
use hyper_util::rt::TokioIo;

use crate::{error::error_body, state::AppState};

/// Proxy the browser's socket `req` to the terminal of `task_id` on the node at `base`.
pub async fn proxy(state: &AppState, base: &str, task_id: &str, mut req: Request) -> Response {
    let Some(key) = req.headers().get("sec-websocket-key").cloned() else {
        return refused(StatusCode::BAD_REQUEST, "a WebSocket upgrade is required");
    };
    let Some(on_upgrade) = req.extensions_mut().remove::<hyper::upgrade::OnUpgrade>() else {
        return refused(StatusCode::BAD_REQUEST, "a WebSocket upgrade is required");
    };
    let Some(slot) = state.streams.websocket() else {
        return refused(
            StatusCode::SERVICE_UNAVAILABLE,
            "too many terminal connections",
        );
    };
    let client = state.terminals.node_client();
    let path = format!("/internal/node/ws/terminal/{task_id}");
    let mut call = client
        .upgrade_client()
        .get(format!("{}{path}", base.trim_end_matches('/')))
        .header(header::CONNECTION, "upgrade")
        .header(header::UPGRADE, "websocket")
        .header("sec-websocket-version", "13")
        .header("sec-websocket-key", key);
    if let Some(protocol) = req.headers().get("sec-websocket-protocol") {
        call = call.header("sec-websocket-protocol", protocol.clone());
    }
    for (name, value) in client.sign("GET", &path, b"") {
        call = call.header(name, value);
    }
    let owner = match call.send().await {
        Ok(r) => r,
        Err(err) => {
            tracing::warn!(%err, node = base, "cannot reach the agent's node for its terminal");
            return refused(
                StatusCode::SERVICE_UNAVAILABLE,
                "the node running this task's agent cannot be reached",
            );
        }
    };
    if owner.status() != StatusCode::SWITCHING_PROTOCOLS {
        let status = owner.status();
        let body = owner.text().await.unwrap_or_default();
        return (status, [(header::CONTENT_TYPE, "application/json")], body).into_response();
    }
    let accept = owner.headers().get("sec-websocket-accept").cloned();
    let protocol = owner.headers().get("sec-websocket-protocol").cloned();
    let upstream = match owner.upgrade().await {
        Ok(u) => u,
        Err(err) => {
            tracing::warn!(%err, node = base, "the agent's node did not upgrade the terminal socket");
            return refused(
                StatusCode::BAD_GATEWAY,
                "the agent's node refused the socket",
            );
        }
    };
    let task = task_id.to_string();
    tokio::spawn(async move {
        let _slot = slot;
        let browser = match on_upgrade.await {
            Ok(b) => b,
            Err(err) => {
                tracing::debug!(%err, "the browser went away before its socket upgraded");
                return;
            }
        };
        let mut browser = TokioIo::new(browser);
        let mut upstream = upstream;
        if let Err(err) = tokio::io::copy_bidirectional(&mut browser, &mut upstream).await {
            tracing::debug!(%err, task_id = task, "proxied terminal socket ended");
        }
    });
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let h = response.headers_mut();
    h.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
    h.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    if let Some(accept) = accept {
        h.insert("sec-websocket-accept", accept);
    }
    if let Some(protocol) = protocol {
        h.insert("sec-websocket-protocol", protocol);
    }
    response
}

fn refused(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(error_body(message, None))).into_response()
}
