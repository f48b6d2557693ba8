//! `NodeStore` on SQLite: the shared implementation
//! ([`crate::shared::node_store`]); one process, so the database's clock is
//! the node's.

use super::SqliteStore;

crate::shared::node_store::node_store!(SqliteStore);
