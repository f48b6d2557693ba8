//! `StatsStore` on SQLite: the shared implementation
//! ([`crate::shared::stats`]).

use super::SqliteStore;

crate::shared::stats::stats_store!(SqliteStore);
