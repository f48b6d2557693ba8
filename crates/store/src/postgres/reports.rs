//! `ReportStore` on PostgreSQL: the shared implementation
//! ([`crate::shared::reports`]).

use super::PgStore;

crate::shared::reports::report_store!(PgStore, pool);
