//! `ToolCheckStore` on PostgreSQL: the shared implementation
//! ([`crate::shared::tool_checks`]).

use super::PgStore;

crate::shared::tool_checks::tool_check_store!(PgStore, pool, pool);
