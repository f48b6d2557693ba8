//! Choosing the backend from the database URL.

use std::sync::Arc;

use harness_core::store::Store;

use crate::{PgOptions, PgStore, SqliteOptions, SqliteStore, StoreOpenError};

/// The store behind a database URL: `sqlite://…` (the embedded default) or
/// `postgres://…` / `postgresql://…`.
#[derive(Clone)]
pub enum AnyStore {
    Sqlite(SqliteStore),
    Postgres(PgStore),
}

impl AnyStore {
    /// Open (creating and migrating as needed) the database at `url`.
    pub async fn open(url: &str) -> Result<Self, StoreOpenError> {
        match scheme(url).as_deref() {
            Some("sqlite") => Ok(Self::Sqlite(
                SqliteStore::open(SqliteOptions::new(url)).await?,
            )),
            Some("postgres" | "postgresql") => {
                Ok(Self::Postgres(PgStore::open(PgOptions::new(url)).await?))
            }
            _ => Err(StoreOpenError::Unsupported(redact_url(url))),
        }
    }

    /// Judge nodes dead after `dead_after` without a heartbeat (default
    /// [`harness_core::nodes::DEFAULT_DEAD_AFTER`]).
    pub fn with_node_dead_after(self, dead_after: std::time::Duration) -> Self {
        match self {
            Self::Sqlite(s) => Self::Sqlite(s.with_node_dead_after(dead_after)),
            Self::Postgres(s) => Self::Postgres(s.with_node_dead_after(dead_after)),
        }
    }

    /// The port the core holds.
    pub fn port(&self) -> Arc<dyn Store> {
        match self {
            Self::Sqlite(s) => Arc::new(s.clone()),
            Self::Postgres(s) => Arc::new(s.clone()),
        }
    }

    /// The event bus of a server on this store, and its job (ends when
    /// `cancel` fires): PostgreSQL relays every node's events through
    /// LISTEN/NOTIFY (waiting up to 5 s for the LISTEN connection, so a node
    /// that starts serving hears the others); SQLite has one process, an
    /// in-process bus.
    pub async fn event_bus(
        &self,
        cancel: tokio_util::sync::CancellationToken,
    ) -> (
        Arc<dyn harness_core::EventBus>,
        Option<tokio::task::JoinHandle<()>>,
    ) {
        match self {
            Self::Sqlite(_) => (
                Arc::new(harness_core::events::InProcessBus::default()),
                None,
            ),
            Self::Postgres(s) => {
                let (bus, job) = crate::postgres::bus::PgEventBus::start(s.pool().clone(), cancel);
                if !bus.listening(std::time::Duration::from_secs(5)).await {
                    tracing::warn!(
                        "not listening for the other nodes' events yet; retrying in the background"
                    );
                }
                (bus, Some(job))
            }
        }
    }

    /// The browser-session port alone (only the login layer uses it).
    pub fn sessions(&self) -> Arc<dyn harness_core::store::SessionStore> {
        match self {
            Self::Sqlite(s) => Arc::new(s.clone()),
            Self::Postgres(s) => Arc::new(s.clone()),
        }
    }

    /// Close the connections, waiting for in-flight statements.
    pub async fn close(&self) {
        match self {
            Self::Sqlite(s) => s.close().await,
            Self::Postgres(s) => s.close().await,
        }
    }
}

fn scheme(url: &str) -> Option<String> {
    let (scheme, _) = url.split_once(':')?;
    Some(scheme.trim().to_ascii_lowercase())
}

/// The URL without its credentials (`user:password@`), for messages and logs.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://***@{}", &rest[at + 1..]),
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_credentials_only() {
        assert_eq!(
            redact_url("postgres://u:secret@db:5432/h?sslmode=require"),
            "postgres://***@db:5432/h?sslmode=require"
        );
        assert_eq!(redact_url("sqlite:///data/h.db"), "sqlite:///data/h.db");
        assert_eq!(redact_url("sqlite://a@b.db"), "sqlite://***@b.db");
        assert_eq!(redact_url("nonsense"), "nonsense");
    }

    #[tokio::test]
    async fn other_schemes_are_refused_without_credentials() {
        let err = AnyStore::open("mysql://u:pw@localhost/h")
            .await
            .err()
            .unwrap();
        let text = err.to_string();
        assert!(
            text.contains("unsupported") && !text.contains("pw"),
            "{text}"
        );
    }
}
