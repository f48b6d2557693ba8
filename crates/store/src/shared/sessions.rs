//! Browser sessions (`harness_sessions`, migration 0006) once for both
//! backends: one statement per method on its own where writes go
//! ([`Backend::write`]) or on the readers (checks); one generic function
//! per method, and [`session_store!`] that implements the port with them.

use chrono::{DateTime, Utc};
use harness_core::store::StoreResult;

use super::{
    Bind, SqlRow,
    backend::{Backend, read_optional},
    ms,
};

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

pub(crate) async fn insert_session<S: Backend>(
    store: &S,
    id_hash: &str,
    now: DateTime<Utc>,
    expires_at: DateTime<Utc>,
) -> StoreResult<()> {
    let binds = vec![
        Bind::Text(id_hash.to_owned()),
        Bind::Int(ms(now)),
        Bind::Int(ms(expires_at)),
    ];
    store.write(INSERT, binds).await?;
    Ok(())
}

pub(crate) async fn session_alive<S: Backend>(
    store: &S,
    id_hash: &str,
    now: DateTime<Utc>,
) -> StoreResult<bool> {
    let binds = vec![Bind::Text(id_hash.to_owned()), Bind::Int(ms(now))];
    let found: Option<String> = read_optional(store, ALIVE, binds)
        .await?
        .map(|r| r.at(0))
        .transpose()?;
    Ok(found.is_some())
}

pub(crate) async fn revoke_session<S: Backend>(
    store: &S,
    id_hash: &str,
    now: DateTime<Utc>,
) -> StoreResult<bool> {
    let binds = vec![Bind::Int(ms(now)), Bind::Text(id_hash.to_owned())];
    Ok(store.write(REVOKE, binds).await? > 0)
}

pub(crate) async fn revoke_all_sessions<S: Backend>(
    store: &S,
    now: DateTime<Utc>,
) -> StoreResult<u64> {
    store.write(REVOKE_ALL, vec![Bind::Int(ms(now))]).await
}

pub(crate) async fn purge_sessions<S: Backend>(
    store: &S,
    before: DateTime<Utc>,
) -> StoreResult<u64> {
    store.write(PURGE, vec![Bind::Int(ms(before))]).await
}

/// `impl SessionStore for $store` with the functions of this module, each
/// method in its own span.
macro_rules! session_store {
    ($store:ty) => {
        const _: () = {
            use chrono::{DateTime, Utc};
            use harness_core::store::{SessionStore, StoreResult};
            use $crate::shared::sessions as s;

            #[async_trait::async_trait]
            impl SessionStore for $store {
                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn insert_session(
                    &self,
                    id_hash: &str,
                    now: DateTime<Utc>,
                    expires_at: DateTime<Utc>,
                ) -> StoreResult<()> {
                    s::insert_session(self, id_hash, now, expires_at).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn session_alive(
                    &self,
                    id_hash: &str,
                    now: DateTime<Utc>,
                ) -> StoreResult<bool> {
                    s::session_alive(self, id_hash, now).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn revoke_session(
                    &self,
                    id_hash: &str,
                    now: DateTime<Utc>,
                ) -> StoreResult<bool> {
                    s::revoke_session(self, id_hash, now).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn revoke_all_sessions(&self, now: DateTime<Utc>) -> StoreResult<u64> {
                    s::revoke_all_sessions(self, now).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn purge_sessions(&self, before: DateTime<Utc>) -> StoreResult<u64> {
                    s::purge_sessions(self, before).await
                }
            }
        };
    };
}
pub(crate) use session_store;
