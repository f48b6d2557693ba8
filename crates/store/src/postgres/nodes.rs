//! `NodeStore` on PostgreSQL: the shared implementation
//! ([`crate::shared::nodes`]) with the database's `clock_timestamp()`.

use super::PgStore;

crate::shared::nodes::node_store!(PgStore, pool, pool, beat, super::DIALECT);
