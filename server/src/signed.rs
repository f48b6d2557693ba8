//! Signed gateway requests on `/api/internal/harness/gateway*` and
//! `/api/internal/harness/outbound` (decisions D12; the rule is the core's,
//! `harness_core::gateway::signing`). A request there that carries any of
//! the `x-tower-*` headers is judged as signed: verified (body hash,
//! signature, window, a nonce never seen — remembered in the database) and
//! then made the gateway's identity, or refused with the reference's status
//! and message. Without those headers the route's bearer credential applies.

use axum::{
    body::{Body, to_bytes},
    extract::{OriginalUri, Request, State},
    middleware::Next,
    response::{IntoResponse, Response},
};
use harness_core::gateway::signing::{self, SignedRequest};

use crate::{error::ApiError, extract::MAX_BODY_BYTES, state::AppState};

/// Whether a path takes signed requests.
pub fn signed_path(path: &str) -> bool {
    path.strip_prefix("/api/internal/harness/")
        .is_some_and(|rest| rest.starts_with("gateway") || rest == "outbound")
}

fn header<'a>(req: &'a Request, name: &str) -> Option<&'a str> {
    req.headers().get(name).and_then(|v| v.to_str().ok())
}

/// Middleware on `/api`.
pub async fn verify(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let uri = req
        .extensions()
        .get::<OriginalUri>()
        .map_or_else(|| req.uri().clone(), |o| o.0.clone());
    if !signed_path(uri.path()) {
        return next.run(req).await;
    }
    let claims = [
        signing::TIMESTAMP,
        signing::NONCE,
        signing::BODY_SHA256,
        signing::SIGNATURE,
    ]
    .iter()
    .any(|h| req.headers().contains_key(*h));
    if !claims {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    let bytes = match to_bytes(body, MAX_BODY_BYTES).await {
        Ok(b) => b,
        Err(_) => {
            return ApiError::PayloadTooLarge(format!("body larger than {MAX_BODY_BYTES} bytes"))
                .into_response();
        }
    };
    let req = Request::from_parts(parts, Body::empty());
    let path_and_query = uri.path_and_query().map_or(uri.path(), |p| p.as_str());
    let method = req.method().as_str().to_ascii_uppercase();
    let signed = SignedRequest {
        timestamp: header(&req, signing::TIMESTAMP),
        nonce: header(&req, signing::NONCE),
        body_sha256: header(&req, signing::BODY_SHA256),
        signature: header(&req, signing::SIGNATURE),
        method: &method,
        path_and_query,
        body: &bytes,
    };
    match state.harness.accept_signed(&signed).await {
        Ok(identity) => {
            let (mut parts, _) = req.into_parts();
            parts.extensions.insert(identity);
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
        Err(err) => ApiError::from(err).into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gateway_routes_and_the_outbox_are_signed() {
        for path in [
            "/api/internal/harness/gateway",
            "/api/internal/harness/gateway-task",
            "/api/internal/harness/gateway-query",
            "/api/internal/harness/outbound",
        ] {
            assert!(signed_path(path), "{path}");
        }
        for path in [
            "/api/internal/harness/reply",
            "/api/internal/harness/outbound/x",
            "/api/tasks",
        ] {
            assert!(!signed_path(path), "{path}");
        }
    }
}
