//! Signed gateway requests on `/api/internal/harness/gateway*` and
//! `/api/internal/harness/outbound` (docs/decisions.md D12; the rule is the core's,
//! `harness_core::gateway::signing`). A request there that carries any of
//! the `x-tower-*` headers is judged as signed: verified (body hash,
//! signature, window, a nonce never seen — remembered in the database) and
//! then made the gateway's identity, or refused with the reference's status
//! and message. Without those headers the route's bearer credential applies.

use axum::{
    body::{Body, Bytes, to_bytes},
    extract::{OriginalUri, Request, State},
    http::{Uri, request::Parts},
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
    let buffered = match Buffered::read(req, &uri).await {
        Ok(b) => b,
        Err(response) => return response,
    };
    match state
        .harness
        .gateway()
        .accept_signed(&buffered.signed())
        .await
    {
        Ok(identity) => {
            let mut req = buffered.into_request();
            req.extensions_mut().insert(identity);
            next.run(req).await
        }
        Err(err) => ApiError::from(err).into_response(),
    }
}

/// A request whose body is read (bounded by [`MAX_BODY_BYTES`]) so that its
/// signature can be checked before the handler sees it: the gateway's signed
/// routes and the node-to-node calls (`node_call::verify`) share it.
pub(crate) struct Buffered {
    parts: Parts,
    body: Bytes,
    method: String,
    path_and_query: String,
}

impl Buffered {
    /// Read the body; `uri` is the path the signature covers. Too large a
    /// body is a 413.
    pub(crate) async fn read(req: Request, uri: &Uri) -> Result<Self, Response> {
        let (parts, body) = req.into_parts();
        let body = to_bytes(body, MAX_BODY_BYTES).await.map_err(|_| {
            ApiError::PayloadTooLarge(format!("body larger than {MAX_BODY_BYTES} bytes"))
                .into_response()
        })?;
        Ok(Self {
            method: parts.method.as_str().to_ascii_uppercase(),
            path_and_query: uri
                .path_and_query()
                .map_or(uri.path(), |p| p.as_str())
                .to_string(),
            parts,
            body,
        })
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.parts.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// What the signature rule judges.
    pub(crate) fn signed(&self) -> SignedRequest<'_> {
        SignedRequest {
            timestamp: self.header(signing::TIMESTAMP),
            nonce: self.header(signing::NONCE),
            body_sha256: self.header(signing::BODY_SHA256),
            signature: self.header(signing::SIGNATURE),
            method: &self.method,
            path_and_query: &self.path_and_query,
            body: &self.body,
        }
    }

    /// The request again, with its body, for the handler.
    pub(crate) fn into_request(self) -> Request {
        Request::from_parts(self.parts, Body::from(self.body))
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
