//! `ReminderStore` on SQLite: the shared implementation
//! ([`crate::shared::reminders`]).

use super::SqliteStore;

crate::shared::reminders::reminder_store!(SqliteStore, reader, sqlx::sqlite::SqliteRow);
