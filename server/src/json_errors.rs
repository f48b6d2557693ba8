//! Every error body from `/api` (and the UI's `/sfn` guards) is JSON:
//! framework rejections — 413 from the body limit, a
//! path that is not UTF-8, an unknown route, a wrong method — come out of
//! axum and tower-http as `text/plain` or empty; this middleware rewrites any
//! such error into `{"error": "…"}` with the same status. Handlers' own
//! errors (`error.rs`) are JSON already and pass through untouched.

use axum::{
    body::Body,
    extract::Request,
    http::{HeaderValue, header},
    middleware::Next,
    response::{IntoResponse, Response},
};

use crate::error::error_body;

/// Largest framework error text kept as the message.
const MAX_TEXT: usize = 2048;

pub async fn json_errors(req: Request, next: Next) -> Response {
    let response = next.run(req).await;
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if is_json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, MAX_TEXT)
        .await
        .ok()
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
        .filter(|t| !t.is_empty() && !status.is_server_error())
        .unwrap_or_else(|| status.canonical_reason().unwrap_or("error").to_string());
    let json = error_body(&text, None).to_string();
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Response::from_parts(parts, Body::from(json)).into_response()
}
