//! `ChoicesStore` on SQLite: the shared implementation
//! ([`crate::shared::choices_store`]).

use super::SqliteStore;

crate::shared::choices_store::choices_store!(SqliteStore);
