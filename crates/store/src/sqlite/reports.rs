//! `ReportStore` on SQLite: the shared implementation
//! ([`crate::shared::reports`]).

use super::SqliteStore;

crate::shared::reports::report_store!(SqliteStore, reader);
