//! `ToolCheckStore` on PostgreSQL: the shared implementation
//! ([`crate::shared::tool_check_store`]).

use super::PgStore;

crate::shared::tool_check_store::tool_check_store!(PgStore);
