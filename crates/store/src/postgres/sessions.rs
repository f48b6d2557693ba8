//! Browser sessions on PostgreSQL (`harness_sessions`, migration 0006): one
//! statement per method on the writer (writes) or the read pool (checks).

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use harness_core::{sessions::SessionStore, store::StoreResult};

use super::{PgStore, rows::ms};
use crate::{error::map, shared::sessions};

#[async_trait]
impl SessionStore for PgStore {
    async fn insert_session(
        &self,
        id_hash: &str,
        now: DateTime<Utc>,
        expires_at: DateTime<Utc>,
    ) -> StoreResult<()> {
        sqlx::query(sessions::INSERT)
            .bind(id_hash)
            .bind(ms(now))
            .bind(ms(expires_at))
            .execute(&self.pool)
            .await
            .map_err(map)?;
        Ok(())
    }

    async fn session_alive(&self, id_hash: &str, now: DateTime<Utc>) -> StoreResult<bool> {
        let found: Option<String> = sqlx::query_scalar(sessions::ALIVE)
            .bind(id_hash)
            .bind(ms(now))
            .fetch_optional(&self.pool)
            .await
            .map_err(map)?;
        Ok(found.is_some())
    }

    async fn revoke_session(&self, id_hash: &str, now: DateTime<Utc>) -> StoreResult<bool> {
        let done = sqlx::query(sessions::REVOKE)
            .bind(ms(now))
            .bind(id_hash)
            .execute(&self.pool)
            .await
            .map_err(map)?;
        Ok(done.rows_affected() > 0)
    }

    async fn revoke_all_sessions(&self, now: DateTime<Utc>) -> StoreResult<u64> {
        let done = sqlx::query(sessions::REVOKE_ALL)
            .bind(ms(now))
            .execute(&self.pool)
            .await
            .map_err(map)?;
        Ok(done.rows_affected())
    }

    async fn purge_sessions(&self, before: DateTime<Utc>) -> StoreResult<u64> {
        let done = sqlx::query(sessions::PURGE)
            .bind(ms(before))
            .execute(&self.pool)
            .await
            .map_err(map)?;
        Ok(done.rows_affected())
    }
}
