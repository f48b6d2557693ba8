//! Browser sessions (`harness_sessions`, migration 0006) once for both
//! backends: one statement per method on the writer (writes) or the read
//! pool (checks).

/// `$1` id hash, `$2` now, `$3` expiry.
pub(crate) const INSERT: &str =
    "INSERT INTO harness_sessions (id_hash, created_at, expires_at) VALUES ($1, $2, $3)";
/// The id hash of a live session (`$1` id hash, `$2` now).
pub(crate) const ALIVE: &str = "SELECT id_hash FROM harness_sessions \
     WHERE id_hash = $1 AND revoked_at IS NULL AND expires_at > $2";
/// `$1` now, `$2` id hash.
pub(crate) const REVOKE: &str = "UPDATE harness_sessions SET revoked_at = $1 \
     WHERE id_hash = $2 AND revoked_at IS NULL";
/// `$1` now.
pub(crate) const REVOKE_ALL: &str = "UPDATE harness_sessions SET revoked_at = $1 \
     WHERE revoked_at IS NULL AND expires_at > $1";
/// `$1` the cut-off.
pub(crate) const PURGE: &str =
    "DELETE FROM harness_sessions WHERE expires_at <= $1 OR revoked_at <= $1";

/// `impl SessionStore for $store`, reading from `self.$read`, writing on
/// `self.$write` (one-statement writes) or in `self.write_tx()`.
macro_rules! session_store {
    ($store:ty, $read:ident, $write:ident) => {
        const _: () = {
            use chrono::{DateTime, Utc};
            use harness_core::store::{SessionStore, StoreResult};
            use $crate::shared::rows::ms;
            use $crate::{error::map, shared::sessions};

            #[async_trait::async_trait]
            impl SessionStore for $store {
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
                        .execute(&self.$write)
                        .await
                        .map_err(map)?;
                    Ok(())
                }

                async fn session_alive(
                    &self,
                    id_hash: &str,
                    now: DateTime<Utc>,
                ) -> StoreResult<bool> {
                    let found: Option<String> = sqlx::query_scalar(sessions::ALIVE)
                        .bind(id_hash)
                        .bind(ms(now))
                        .fetch_optional(&self.$read)
                        .await
                        .map_err(map)?;
                    Ok(found.is_some())
                }

                async fn revoke_session(
                    &self,
                    id_hash: &str,
                    now: DateTime<Utc>,
                ) -> StoreResult<bool> {
                    let done = sqlx::query(sessions::REVOKE)
                        .bind(ms(now))
                        .bind(id_hash)
                        .execute(&self.$write)
                        .await
                        .map_err(map)?;
                    Ok(done.rows_affected() > 0)
                }

                async fn revoke_all_sessions(&self, now: DateTime<Utc>) -> StoreResult<u64> {
                    let done = sqlx::query(sessions::REVOKE_ALL)
                        .bind(ms(now))
                        .execute(&self.$write)
                        .await
                        .map_err(map)?;
                    Ok(done.rows_affected())
                }

                async fn purge_sessions(&self, before: DateTime<Utc>) -> StoreResult<u64> {
                    let done = sqlx::query(sessions::PURGE)
                        .bind(ms(before))
                        .execute(&self.$write)
                        .await
                        .map_err(map)?;
                    Ok(done.rows_affected())
                }
            }
        };
    };
}
pub(crate) use session_store;
