//! `DeliveryStore` on SQLite: the shared implementation
//! ([`crate::shared::delivery_store`]), and the engine's generic
//! `WorkStore` ([`crate::shared::work`]).

use super::SqliteStore;

crate::shared::delivery_store::delivery_store!(SqliteStore);
crate::shared::work::work_store!(SqliteStore);
