//! `ReportStore` on SQLite: the shared implementation
//! ([`crate::shared::report_store`]).

use super::SqliteStore;

crate::shared::report_store::report_store!(SqliteStore);
