//! `SettingsStore` on PostgreSQL: the shared implementation
//! ([`crate::shared::settings`]).

use super::PgStore;

crate::shared::settings::settings_store!(PgStore);
