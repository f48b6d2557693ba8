//! `StatsStore` on PostgreSQL: the shared implementation
//! ([`crate::shared::stats`]).

use super::PgStore;

crate::shared::stats::stats_store!(PgStore);
