//! Request extractors that fail with our JSON errors: a JSON body that names
//! the offending field, and the caller's identity from the bearer token.

use axum::{
    body::Bytes,
    extract::{FromRequest, FromRequestParts, Request},
    http::{header, request::Parts},
};
use harness_core::auth::Identity;
use serde::de::DeserializeOwned;

use crate::{error::ApiError, state::AppState};

/// Largest JSON body accepted by the REST API.
pub const MAX_BODY_BYTES: usize = 256 * 1024;

/// `Json<T>` with our error shape: `Invalid JSON` for syntax errors, and the
/// JSON path of a wrongly typed field in `field`.
pub struct JsonBody<T>(pub T);

impl<T: DeserializeOwned> FromRequest<AppState> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let bytes = Bytes::from_request(req, state).await.map_err(|rejection| {
            if rejection.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
                ApiError::PayloadTooLarge(format!("body larger than {MAX_BODY_BYTES} bytes"))
            } else {
                ApiError::bad_request(format!("unreadable body: {rejection}"))
            }
        })?;
        parse_json(&bytes).map(JsonBody)
    }
}

pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let value: serde_json::Value = serde_json::from_slice(bytes)
        .map_err(|e| ApiError::bad_request(format!("Invalid JSON: {e}")))?;
    if !value.is_object() {
        return Err(ApiError::bad_request("Invalid JSON: expected an object"));
    }
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        ApiError::BadRequest {
            message: format!("invalid field {path}: {}", e.inner()),
            field: (path != ".").then_some(path),
        }
    })
}

/// The bearer token of the request, if any.
pub fn bearer(parts: &Parts) -> Option<&str> {
    let value = parts.headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim())
}

/// Any authenticated caller (admin or agent).
pub struct Caller(pub Identity);

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        if let Some(identity) = parts.extensions.get::<Identity>() {
            return Ok(Self(identity.clone()));
        }
        let token = bearer(parts).ok_or_else(|| {
            harness_core::CoreError::Unauthorized(
                "missing credential: send Authorization: Bearer <token>".into(),
            )
        })?;
        let identity = state.harness.access().authenticate(token).await?;
        parts.extensions.insert(identity.clone());
        Ok(Self(identity))
    }
}

/// The admin/automation credential only.
pub struct Admin;

impl FromRequestParts<AppState> for Admin {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let Caller(identity) = Caller::from_request_parts(parts, state).await?;
        if identity.is_admin() {
            Ok(Self)
        } else {
            Err(harness_core::CoreError::Forbidden(
                "this endpoint needs the admin token; agent tokens may use only /api/internal and /mcp".into(),
            )
            .into())
        }
    }
}

/// Query-string parameters with our JSON error on malformed input.
pub struct QueryParams<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for QueryParams<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let query = parts.uri.query().unwrap_or_default();
        serde_urlencoded::from_str(query)
            .map(QueryParams)
            .map_err(|e| ApiError::bad_request(format!("invalid query string: {e}")))
    }
}
