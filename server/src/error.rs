//! The one place where errors become HTTP responses:
//! `{"error": "...", "field"?: "..."}` with a 4xx status, or a generic 500
//! whose cause goes to the log only.

use axum::{
    Json,
    http::StatusCode,
    response::{IntoResponse, Response},
};
use harness_core::CoreError;
use serde_json::json;

#[derive(Debug)]
pub enum ApiError {
    Core(CoreError),
    /// Malformed request syntax: bad JSON, wrong types.
    BadRequest {
        message: String,
        field: Option<String>,
    },
    PayloadTooLarge(String),
}

impl From<CoreError> for ApiError {
    fn from(err: CoreError) -> Self {
        Self::Core(err)
    }
}

impl ApiError {
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::BadRequest {
            message: message.into(),
            field: None,
        }
    }
}

/// The status of a core error: the core's one class → status mapping
/// ([`CoreError::http_status`]), shared with the server functions.
pub fn status_of(err: &CoreError) -> StatusCode {
    StatusCode::from_u16(err.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

pub fn error_body(message: &str, field: Option<&str>) -> serde_json::Value {
    match field {
        Some(field) => json!({ "error": message, "field": field }),
        None => json!({ "error": message }),
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        match self {
            Self::Core(err) => {
                let status = status_of(&err);
                if status.is_server_error() && !matches!(err, CoreError::Unavailable(_)) {
                    tracing::error!(error = ?err, "request failed");
                    return (status, Json(error_body("internal error", None))).into_response();
                }
                let mut response =
                    (status, Json(error_body(&err.client_message(), err.field()))).into_response();
                // A rate-limited action (429) says when to try again.
                if let Some(secs) = err.retry_after()
                    && let Ok(value) = axum::http::HeaderValue::from_str(&secs.to_string())
                {
                    response
                        .headers_mut()
                        .insert(axum::http::header::RETRY_AFTER, value);
                }
                response
            }
            Self::BadRequest { message, field } => (
                StatusCode::BAD_REQUEST,
                Json(error_body(&message, field.as_deref())),
            )
                .into_response(),
            Self::PayloadTooLarge(message) => (
                StatusCode::PAYLOAD_TOO_LARGE,
                Json(error_body(&message, None)),
            )
                .into_response(),
        }
    }
}

pub type ApiResult<T> = Result<T, ApiError>;
