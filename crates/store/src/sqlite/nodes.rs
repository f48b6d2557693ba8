//! `NodeStore` on SQLite: the shared implementation
//! ([`crate::shared::nodes`]); one process, so the database's clock is the
//! node's.

use super::SqliteStore;

crate::shared::nodes::node_store!(SqliteStore, reader, writer, writer, super::DIALECT);
