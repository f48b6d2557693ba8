//! The one error type of the core. Every variant has a class that the HTTP
//! layer maps to a status code in exactly one place (`server::error`).

use crate::store::StoreError;

pub type CoreResult<T> = Result<T, CoreError>;

#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    /// Input failed validation. `field` names the offending field when there is one.
    #[error("{message}")]
    Invalid {
        field: Option<&'static str>,
        message: String,
    },
    /// The addressed entity does not exist.
    #[error("{0}")]
    NotFound(String),
    /// The request is valid but conflicts with the current state (the reference's 409s).
    #[error("{0}")]
    Conflict(String),
    /// No valid credential.
    #[error("{0}")]
    Unauthorized(String),
    /// A valid credential that may not act on this resource.
    #[error("{0}")]
    Forbidden(String),
    /// Too many actions of one kind for one task (`rate_limit`): retry
    /// after `retry_after_secs` (HTTP 429 with `Retry-After`).
    #[error("{message}")]
    RateLimited {
        message: String,
        retry_after_secs: u64,
    },
    /// A facility the request needs is not set up (HTTP 503), e.g. request
    /// signing without its key.
    #[error("{0}")]
    Unavailable(String),
    /// Storage failed; the text is for logs only, never shown to clients.
    #[error("storage error")]
    Store(#[source] StoreError),
}

impl From<StoreError> for CoreError {
    /// A uniqueness rule of the schema (one OPEN ask, one live execution per
    /// task…) lost to a concurrent writer: a conflict with the current state
    /// (409), never a server error. Callers that know the context map
    /// `Duplicate` to a more precise message first.
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::Duplicate(what) => Self::Conflict(format!(
                "conflicts with the current state: duplicate {what}"
            )),
            other => Self::Store(other),
        }
    }
}

impl CoreError {
    pub fn invalid(field: &'static str, message: impl Into<String>) -> Self {
        Self::Invalid {
            field: Some(field),
            message: message.into(),
        }
    }

    pub fn invalid_body(message: impl Into<String>) -> Self {
        Self::Invalid {
            field: None,
            message: message.into(),
        }
    }

    /// The HTTP status of this error's class: the one mapping used by the
    /// REST API, the MCP endpoint's transport errors and the server functions.
    pub fn http_status(&self) -> u16 {
        match self {
            Self::Invalid { .. } => 400,
            Self::Unauthorized(_) => 401,
            Self::Forbidden(_) => 403,
            Self::NotFound(_) => 404,
            Self::Conflict(_) => 409,
            Self::RateLimited { .. } => 429,
            Self::Unavailable(_) => 503,
            Self::Store(_) => 500,
        }
    }

    /// The text a client may see: the message of a 4xx, a generic text for
    /// a storage failure (whose detail is for the log only).
    pub fn client_message(&self) -> String {
        match self {
            Self::Store(_) => "internal error".into(),
            other => other.to_string(),
        }
    }

    /// Seconds to wait before trying again (`Retry-After`), for a 429.
    pub fn retry_after(&self) -> Option<u64> {
        match self {
            Self::RateLimited {
                retry_after_secs, ..
            } => Some(*retry_after_secs),
            _ => None,
        }
    }

    /// The field name for `Invalid` errors, if any.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            Self::Invalid { field, .. } => *field,
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lost_uniqueness_race_is_a_conflict_not_a_server_error() {
        let err = CoreError::from(StoreError::Duplicate("execution"));
        assert!(matches!(err, CoreError::Conflict(_)));
        assert_eq!(err.http_status(), 409);
        let err = CoreError::from(StoreError::Backend("disk on fire".into()));
        assert_eq!(err.http_status(), 500);
        assert_eq!(err.client_message(), "internal error", "no storage detail");
        assert_eq!(CoreError::invalid("f", "bad").http_status(), 400);
        assert_eq!(CoreError::Unauthorized("x".into()).http_status(), 401);
        assert_eq!(CoreError::Forbidden("x".into()).http_status(), 403);
        assert_eq!(CoreError::NotFound("x".into()).http_status(), 404);
    }
}
