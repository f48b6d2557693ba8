//! `ReminderStore` on SQLite: the shared implementation
//! ([`crate::shared::reminder_store`]).

use super::SqliteStore;

crate::shared::reminder_store::reminder_store!(SqliteStore);
