//! Settings (JSON values by key) once for both backends: one generic
//! function per method over [`Backend`], and [`settings_store!`] that
//! implements the port with them; each write is one write transaction.

use chrono::{DateTime, Utc};
use harness_core::store::{StoreError, StoreResult};

use super::{
    Bind, SqlRow,
    backend::{Backend, execute, fetch_optional, read_optional},
    ms,
};

/// `$1` key.
pub(crate) const GET: &str = "SELECT value FROM settings WHERE key = $1";
/// `$1` key, `$2` JSON text, `$3` now.
pub(crate) const UPSERT: &str = "INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, $3) \
     ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at";

/// The JSON of a stored value.
fn parse(v: String) -> StoreResult<serde_json::Value> {
    serde_json::from_str(&v).map_err(|_| StoreError::Corrupt {
        column: "settings.value",
        value: v,
    })
}

/// The upsert of `key` with its binds.
fn upsert_binds(key: &str, value: &serde_json::Value, now: DateTime<Utc>) -> Vec<Bind> {
    vec![
        Bind::Text(key.to_owned()),
        Bind::Text(value.to_string()),
        Bind::Int(ms(now)),
    ]
}

pub(crate) async fn get_setting<S: Backend>(
    store: &S,
    key: &str,
) -> StoreResult<Option<serde_json::Value>> {
    let value: Option<String> = read_optional(store, GET, vec![Bind::Text(key.to_owned())])
        .await?
        .map(|r| r.at(0))
        .transpose()?;
    value.map(parse).transpose()
}

pub(crate) async fn put_setting<S: Backend>(
    store: &S,
    key: &str,
    value: &serde_json::Value,
    now: DateTime<Utc>,
) -> StoreResult<()> {
    let mut tx = store.write_tx().await?;
    execute::<S>(&mut tx, UPSERT, upsert_binds(key, value, now)).await?;
    S::commit(tx).await?;
    Ok(())
}

pub(crate) async fn replace_setting<S: Backend>(
    store: &S,
    key: &str,
    expected: Option<&serde_json::Value>,
    value: &serde_json::Value,
    now: DateTime<Utc>,
) -> StoreResult<bool> {
    // One write transaction: the read and the write are one atomic step.
    let mut tx = store.write_tx().await?;
    let current: Option<String> =
        fetch_optional::<S>(&mut tx, GET, vec![Bind::Text(key.to_owned())])
            .await?
            .map(|r| r.at(0))
            .transpose()?;
    let current: Option<serde_json::Value> = current.and_then(|v| serde_json::from_str(&v).ok());
    if current.as_ref() != expected {
        return Ok(false);
    }
    execute::<S>(&mut tx, UPSERT, upsert_binds(key, value, now)).await?;
    S::commit(tx).await?;
    Ok(true)
}

/// `impl SettingsStore for $store` with the functions of this module, each
/// method in its own span.
macro_rules! settings_store {
    ($store:ty) => {
        const _: () = {
            use chrono::{DateTime, Utc};
            use harness_core::store::{SettingsStore, StoreResult};
            use $crate::shared::settings as s;

            #[async_trait::async_trait]
            impl SettingsStore for $store {
                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn get_setting(&self, key: &str) -> StoreResult<Option<serde_json::Value>> {
                    s::get_setting(self, key).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn put_setting(
                    &self,
                    key: &str,
                    value: &serde_json::Value,
                    now: DateTime<Utc>,
                ) -> StoreResult<()> {
                    s::put_setting(self, key, value, now).await
                }

                #[tracing::instrument(level = "debug", skip_all, err(level = "debug"))]
                async fn replace_setting(
                    &self,
                    key: &str,
                    expected: Option<&serde_json::Value>,
                    value: &serde_json::Value,
                    now: DateTime<Utc>,
                ) -> StoreResult<bool> {
                    s::replace_setting(self, key, expected, value, now).await
                }
            }
        };
    };
}
pub(crate) use settings_store;
