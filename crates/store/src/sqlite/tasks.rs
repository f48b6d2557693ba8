//! `TaskStore` on SQLite: the shared implementation
//! ([`crate::shared::tasks`]).

use super::SqliteStore;

crate::shared::tasks::task_store!(SqliteStore, reader, writer);
