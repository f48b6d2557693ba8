//! Browser sessions on PostgreSQL (`harness_sessions`, migration 0006): one
//! statement per method on the writer (writes) or the read pool (checks).

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use harness_core::{sessions::SessionStore, store::StoreResult};

use super::{PgStore, rows::ms};
use crate::error::map;

#[async_trait]
impl SessionStore for PgStore {
    async fn insert_session(
        &self,
        id_hash: &str,
        now: DateTime<Utc>,
        expires_at: DateTime<Utc>,
    ) -> StoreResult<()> {
        sqlx::query(
            "INSERT INTO harness_sessions (id_hash, created_at, expires_at) VALUES ($1, $2, $3)",
        )
        .bind(id_hash)
        .bind(ms(now))
        .bind(ms(expires_at))
        .execute(&self.pool)
        .await
        .map_err(map)?;
        Ok(())
    }

    async fn session_alive(&self, id_hash: &str, now: DateTime<Utc>) -> StoreResult<bool> {
        let found: Option<i64> = sqlx::query_scalar(
            "SELECT 1::bigint FROM harness_sessions \
             WHERE id_hash = $1 AND revoked_at IS NULL AND expires_at > $2",
        )
        .bind(id_hash)
        .bind(ms(now))
        .fetch_optional(&self.pool)
        .await
        .map_err(map)?;
        Ok(found.is_some())
    }

    async fn revoke_session(&self, id_hash: &str, now: DateTime<Utc>) -> StoreResult<bool> {
        let done = sqlx::query(
            "UPDATE harness_sessions SET revoked_at = $1 \
             WHERE id_hash = $2 AND revoked_at IS NULL",
        )
        .bind(ms(now))
        .bind(id_hash)
        .execute(&self.pool)
        .await
        .map_err(map)?;
        Ok(done.rows_affected() > 0)
    }

    async fn revoke_all_sessions(&self, now: DateTime<Utc>) -> StoreResult<u64> {
        let done = sqlx::query(
            "UPDATE harness_sessions SET revoked_at = $1 \
             WHERE revoked_at IS NULL AND expires_at > $2",
        )
        .bind(ms(now))
        .bind(ms(now))
        .execute(&self.pool)
        .await
        .map_err(map)?;
        Ok(done.rows_affected())
    }

    async fn purge_sessions(&self, before: DateTime<Utc>) -> StoreResult<u64> {
        let done =
            sqlx::query("DELETE FROM harness_sessions WHERE expires_at <= $1 OR revoked_at <= $2")
                .bind(ms(before))
                .bind(ms(before))
                .execute(&self.pool)
                .await
                .map_err(map)?;
        Ok(done.rows_affected())
    }
}
