//! `SettingsStore` on SQLite: the shared implementation
//! ([`crate::shared::settings`]).

use super::SqliteStore;

crate::shared::settings::settings_store!(SqliteStore);
