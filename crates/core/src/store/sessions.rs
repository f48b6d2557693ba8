//! Browser sessions (`crate::sessions` holds their rules): only the hash of
//! a session id is stored.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::StoreResult;

/// Storage of sessions (one atomic statement per method).
#[async_trait]
pub trait SessionStore: Send + Sync + 'static {
    async fn insert_session(
        &self,
        id_hash: &str,
        now: DateTime<Utc>,
        expires_at: DateTime<Utc>,
    ) -> StoreResult<()>;
    /// True when the session exists, is not revoked and expires after `now`.
    async fn session_alive(&self, id_hash: &str, now: DateTime<Utc>) -> StoreResult<bool>;
    /// Revokes one session; false when there was no live one.
    async fn revoke_session(&self, id_hash: &str, now: DateTime<Utc>) -> StoreResult<bool>;
    /// Revokes every live session; returns how many.
    async fn revoke_all_sessions(&self, now: DateTime<Utc>) -> StoreResult<u64>;
    /// Deletes sessions that expired or were revoked before `before`.
    async fn purge_sessions(&self, before: DateTime<Utc>) -> StoreResult<u64>;
}
