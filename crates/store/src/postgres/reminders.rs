//! `ReminderStore` on PostgreSQL: the shared implementation
//! ([`crate::shared::reminder_store`]).

use super::PgStore;

crate::shared::reminder_store::reminder_store!(PgStore);
