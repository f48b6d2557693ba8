//! `NodeStore` on PostgreSQL: the shared implementation
//! ([`crate::shared::node_store`]) with the database's `clock_timestamp()`.

use super::PgStore;

crate::shared::node_store::node_store!(PgStore);
