//! `InboxStore` on PostgreSQL: the shared implementation
//! ([`crate::shared::inbox`]).

use super::PgStore;

crate::shared::inbox::inbox_store!(PgStore);
