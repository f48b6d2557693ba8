//! `DeliveryStore` on PostgreSQL: the shared implementation
//! ([`crate::shared::delivery_store`]).

use super::PgStore;

crate::shared::delivery_store::delivery_store!(PgStore, pool, pool, super::DIALECT);
