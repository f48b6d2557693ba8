//! [`SettingsStore`] on PostgreSQL: JSON values by key.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use harness_core::store::{SettingsStore, StoreError, StoreResult};

use super::{PgStore, rows::ms};
use crate::{error::map, shared::settings};

#[async_trait]
impl SettingsStore for PgStore {
    async fn get_setting(&self, key: &str) -> StoreResult<Option<serde_json::Value>> {
        let value: Option<String> = sqlx::query_scalar(settings::GET)
            .bind(key)
            .fetch_optional(&self.pool)
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
