//! Settings (JSON values by key) once for both backends.

/// `$1` key.
pub(crate) const GET: &str = "SELECT value FROM settings WHERE key = $1";
/// `$1` key, `$2` JSON text, `$3` now.
pub(crate) const UPSERT: &str = "INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, $3) \
     ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at";

/// `impl SettingsStore for $store`, reading from `self.$read`, writing on
/// `self.$write` (one-statement writes) or in `self.write_tx()`.
macro_rules! settings_store {
    ($store:ty, $read:ident, $write:ident) => {
        const _: () = {
            use chrono::{DateTime, Utc};
            use harness_core::store::{SettingsStore, StoreError, StoreResult};
            use $crate::shared::rows::ms;
            use $crate::{error::map, shared::settings};

            #[async_trait::async_trait]
            impl SettingsStore for $store {
                async fn get_setting(&self, key: &str) -> StoreResult<Option<serde_json::Value>> {
                    let value: Option<String> = sqlx::query_scalar(settings::GET)
                        .bind(key)
                        .fetch_optional(&self.$read)
                        .await
                        .map_err(map)?;
                    value
                        .map(|v| {
                            serde_json::from_str(&v).map_err(|_| StoreError::Corrupt {
                                column: "settings.value",
                                value: v,
                            })
                        })
                        .transpose()
                }

                async fn put_setting(
                    &self,
                    key: &str,
                    value: &serde_json::Value,
                    now: DateTime<Utc>,
                ) -> StoreResult<()> {
                    let mut tx = self.write_tx().await?;
                    sqlx::query(settings::UPSERT)
                        .bind(key)
                        .bind(value.to_string())
                        .bind(ms(now))
                        .execute(&mut *tx)
                        .await
                        .map_err(map)?;
                    tx.commit().await.map_err(map)?;
                    Ok(())
                }

                async fn replace_setting(
                    &self,
                    key: &str,
                    expected: Option<&serde_json::Value>,
                    value: &serde_json::Value,
                    now: DateTime<Utc>,
                ) -> StoreResult<bool> {
                    // BEGIN IMMEDIATE on the single writer: the read and the write are
                    // one atomic step.
                    let mut tx = self.write_tx().await?;
                    let current: Option<String> = sqlx::query_scalar(settings::GET)
                        .bind(key)
                        .fetch_optional(&mut *tx)
                        .await
                        .map_err(map)?;
                    let current: Option<serde_json::Value> =
                        current.and_then(|v| serde_json::from_str(&v).ok());
                    if current.as_ref() != expected {
                        return Ok(false);
                    }
                    sqlx::query(settings::UPSERT)
                        .bind(key)
                        .bind(value.to_string())
                        .bind(ms(now))
                        .execute(&mut *tx)
                        .await
                        .map_err(map)?;
                    tx.commit().await.map_err(map)?;
                    Ok(true)
                }
            }
        };
    };
}
pub(crate) use settings_store;
