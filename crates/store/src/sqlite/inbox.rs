//! `InboxStore` on SQLite: the shared implementation
//! ([`crate::shared::inbox`]).

use super::SqliteStore;

crate::shared::inbox::inbox_store!(SqliteStore);
