//! `ReminderStore` on PostgreSQL: the shared implementation
//! ([`crate::shared::reminders`]).

use super::PgStore;

crate::shared::reminders::reminder_store!(PgStore, pool, sqlx::postgres::PgRow);
