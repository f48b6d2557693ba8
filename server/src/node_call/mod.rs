//! Node-to-node calls: a node forwards the work of an
//! agent that runs on another node to that node's URL (from the node
//! registry), never starting a second agent itself.
//!
//! Authentication: the request is signed like a gateway's
//! (`harness_core::gateway::signing`: timestamp, nonce, body hash, HMAC over
//! method + path + body) but with the node key (`secrets/node.key` or
//! `HARNESS_NODE_KEY`, the same on every node and given to nobody else — the
//! gateways hold the internal API key, not this one). The owner verifies it
//! ([`verify`], `Cluster::accept_node_call`: window, signature, a nonce never
//! seen, remembered in the database) before any route under [`PREFIX`];
//! without it: 401. The Host/Origin policy of every route still applies (a
//! node's URL must name the owner as it accepts itself: its bind address or
//! an allowed host); node calls carry no Origin.
//!
//! The owner's routes are `routes.rs`; the terminal socket is proxied by
//! `ws_proxy.rs`.

pub mod routes;
pub mod ws_proxy;

use std::{sync::Arc, time::Duration};

use axum::{
    extract::{Request, State},
    middleware::Next,
    response::{IntoResponse, Response},
};
use harness_core::{CoreError, CoreResult, gateway::signing};
use reqwest::Method;
use serde::de::DeserializeOwned;

use crate::{error::ApiError, signed::Buffered, state::AppState};

/// Where the owner's side of node calls is mounted.
pub const PREFIX: &str = "/internal/node/";

/// How long one forwarded call may take (a start spawns an agent).
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// Signs and sends calls to other nodes. Cheap to clone.
#[derive(Clone)]
pub struct NodeClient {
    key: Arc<Vec<u8>>,
    http: reqwest::Client,
    /// For terminal sockets: no overall timeout (a socket lives for hours).
    upgrades: reqwest::Client,
}

impl std::fmt::Debug for NodeClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NodeClient")
    }
}

impl NodeClient {
    pub fn new(key: Vec<u8>) -> Self {
        let http = reqwest::Client::builder()
            .timeout(CALL_TIMEOUT)
            .connect_timeout(Duration::from_secs(5))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap_or_default();
        let upgrades = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap_or_default();
        Self {
            key: Arc::new(key),
            http,
            upgrades,
        }
    }

    /// The client of socket upgrades (signed by the caller with [`Self::sign`]).
    pub fn upgrade_client(&self) -> &reqwest::Client {
        &self.upgrades
    }

    /// The four signature headers of a call (also for the socket's upgrade).
    pub fn sign(
        &self,
        method: &str,
        path_and_query: &str,
        body: &[u8],
    ) -> [(&'static str, String); 4] {
        let nonce = uuid_like();
        signing::sign(
            &self.key,
            chrono::Utc::now(),
            &nonce,
            method,
            path_and_query,
            body,
        )
    }

    /// `method base+path` with a JSON body, signed; the owner's JSON answer,
    /// or its error as the same class of [`CoreError`]. An owner that cannot
    /// be reached is 503.
    pub async fn call<T: DeserializeOwned>(
        &self,
        base: &str,
        method: Method,
        path: &str,
        body: Option<&serde_json::Value>,
    ) -> CoreResult<T> {
        let bytes = match body {
            Some(b) => serde_json::to_vec(b).map_err(|e| CoreError::invalid_body(e.to_string()))?,
            None => Vec::new(),
        };
        let url = format!("{}{path}", base.trim_end_matches('/'));
        let mut req = self.http.request(method.clone(), &url);
        for (name, value) in self.sign(method.as_str(), path, &bytes) {
            req = req.header(name, value);
        }
        if body.is_some() {
            req = req.header("content-type", "application/json").body(bytes);
        }
        let resp = req.send().await.map_err(|e| unreachable_owner(base, &e))?;
        let status = resp.status();
        let text = resp.text().await.map_err(|e| unreachable_owner(base, &e))?;
        if status.is_success() {
            return serde_json::from_str(&text).map_err(|e| {
                CoreError::Unavailable(format!("the agent's node answered unreadably: {e}"))
            });
        }
        Err(remote_error(status.as_u16(), &text))
    }
}

fn unreachable_owner(base: &str, err: &reqwest::Error) -> CoreError {
    tracing::warn!(%err, node = base, "node-to-node call failed");
    CoreError::Unavailable(format!(
        "the node running this task's agent ({base}) cannot be reached"
    ))
}

/// The owner's error answer as this node's error of the same class.
fn remote_error(status: u16, body: &str) -> CoreError {
    let parsed: serde_json::Value = serde_json::from_str(body).unwrap_or_default();
    let message = parsed["error"]
        .as_str()
        .unwrap_or("the agent's node refused the request")
        .to_string();
    match status {
        400 | 422 => CoreError::Invalid {
            field: parsed["field"].as_str().and_then(known_field),
            message,
        },
        404 => CoreError::NotFound(message),
        409 => CoreError::Conflict(message),
        // The owner refusing this node's credential is a cluster set-up
        // problem (different node keys), not the caller's.
        401 | 403 => CoreError::Unavailable(format!(
            "the agent's node refused this node's call ({message}): do both nodes share the \
             node key?"
        )),
        _ => CoreError::Unavailable(message),
    }
}

/// The fields an owner's 400 may name (the core's errors carry `&'static str`).
fn known_field(field: &str) -> Option<&'static str> {
    [
        "agent",
        "agent.cwd",
        "text",
        "submit",
        "idempotencyKey",
        "taskId",
        "prompt",
        "on",
    ]
    .into_iter()
    .find(|f| *f == field)
}

/// A random nonce in the shape the signature rule wants (36 `[0-9a-f-]`).
fn uuid_like() -> String {
    let hex = harness_core::ids::new_token("");
    let digest = harness_core::ids::token_hash(&hex);
    format!(
        "{}-{}-{}-{}-{}",
        &digest[0..8],
        &digest[8..12],
        &digest[12..16],
        &digest[16..20],
        &digest[20..32]
    )
}

/// Middleware on [`PREFIX`]: only a call signed with the node key passes.
pub async fn verify(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let uri = req.uri().clone();
    let buffered = match Buffered::read(req, &uri).await {
        Ok(b) => b,
        Err(response) => return response,
    };
    match state
        .harness
        .cluster()
        .accept_node_call(&buffered.signed())
        .await
    {
        Ok(()) => next.run(buffered.into_request()).await,
        Err(err) => ApiError::from(err).into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nonces_have_the_signed_shape_and_differ() {
        let (a, b) = (uuid_like(), uuid_like());
        assert_eq!(a.len(), 36);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit() || c == b'-'));
        assert_ne!(a, b);
    }

    #[test]
    fn owner_errors_keep_their_class() {
        let e = remote_error(409, r#"{"error":"the task's agent is already running"}"#);
        assert!(matches!(e, CoreError::Conflict(m) if m.contains("already running")));
        let e = remote_error(400, r#"{"error":"bad","field":"agent.cwd"}"#);
        assert_eq!(e.field(), Some("agent.cwd"));
        assert!(matches!(remote_error(401, "{}"), CoreError::Unavailable(_)));
        assert!(matches!(remote_error(404, "x"), CoreError::NotFound(_)));
    }
}
