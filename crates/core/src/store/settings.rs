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
    /// Compare-and-set: write `value` only if the stored value still equals
    /// `expected` (`None`: absent). `false` when another writer changed it.
    async fn replace_setting(
        &self,
        key: &str,
        expected: Option<&serde_json::Value>,
        value: &serde_json::Value,
        now: DateTime<Utc>,
    ) -> StoreResult<bool>;
}
