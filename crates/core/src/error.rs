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
    /// Storage failed; the text is for logs only, never shown to clients.
    #[error("storage error")]
    Store(#[from] StoreError),
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

    /// The field name for `Invalid` errors, if any.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            Self::Invalid { field, .. } => *field,
            _ => None,
        }
    }
}
