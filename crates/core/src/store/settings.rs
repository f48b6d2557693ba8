//! Settings: JSON values by key.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::StoreResult;

/// The settings aggregate.
#[async_trait]
pub trait SettingsStore: Send + Sync + 'static {
    // ---- settings (JSON values by key)
    async fn get_setting(&self, key: &str) -> StoreResult<Option<serde_json::Value>>;
    async fn put_setting(
        &self,
        key: &str,
        value: &serde_json::Value,
        now: DateTime<Utc>,
    ) -> StoreResult<()>;
}
