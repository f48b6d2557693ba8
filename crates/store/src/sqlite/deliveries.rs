//! `DeliveryStore` on SQLite: the shared implementation
//! ([`crate::shared::delivery_store`]).

use super::SqliteStore;

crate::shared::delivery_store::delivery_store!(SqliteStore, reader, writer, super::DIALECT);
