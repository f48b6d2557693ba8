//! `SessionStore` on PostgreSQL: the shared implementation
//! ([`crate::shared::sessions`]).

use super::PgStore;

crate::shared::sessions::session_store!(PgStore);
