//! `DeliveryStore` on PostgreSQL: the shared implementation
//! ([`crate::shared::delivery_store`]), and the engine's generic
//! `WorkStore` ([`crate::shared::work`]).

use super::PgStore;

crate::shared::delivery_store::delivery_store!(PgStore);
crate::shared::work::work_store!(PgStore);
