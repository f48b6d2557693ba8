//! `SessionStore` on SQLite: the shared implementation
//! ([`crate::shared::sessions`]).

use super::SqliteStore;

crate::shared::sessions::session_store!(SqliteStore);
