//! `TaskStore` on PostgreSQL: the shared implementation
//! ([`crate::shared::task_store`]).

use super::PgStore;

crate::shared::task_store::task_store!(PgStore);
