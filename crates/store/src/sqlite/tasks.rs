//! [`harness_core::store::TaskStore`] on SQLite: the shared implementation
//! (`crate::shared::tasks`), reads on `reader`.

use super::SqliteStore;

crate::shared::tasks::task_store!(SqliteStore, reader);
