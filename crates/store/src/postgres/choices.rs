//! `ChoicesStore` on PostgreSQL: the shared implementation
//! ([`crate::shared::choices_store`]).

use super::PgStore;

crate::shared::choices_store::choices_store!(PgStore);
