//! `TaskStore` on PostgreSQL: the shared implementation
//! ([`crate::shared::tasks`]).

use super::PgStore;

crate::shared::tasks::task_store!(PgStore, pool, pool);
