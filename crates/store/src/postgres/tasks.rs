//! [`harness_core::store::TaskStore`] on PostgreSQL: the shared implementation
//! (`crate::shared::tasks`), reads on `pool`.

use super::PgStore;

crate::shared::tasks::task_store!(PgStore, pool);
