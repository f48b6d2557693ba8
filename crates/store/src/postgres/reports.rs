//! `ReportStore` on PostgreSQL: the shared implementation
//! ([`crate::shared::report_store`]).

use super::PgStore;

crate::shared::report_store::report_store!(PgStore);
