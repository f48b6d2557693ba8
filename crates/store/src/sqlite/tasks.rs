//! `TaskStore` on SQLite: the shared implementation
//! ([`crate::shared::task_store`]).

use super::SqliteStore;

crate::shared::task_store::task_store!(SqliteStore);
