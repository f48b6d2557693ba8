//! `ToolCheckStore` on SQLite: the shared implementation
//! ([`crate::shared::tool_check_store`]).

use super::SqliteStore;

crate::shared::tool_check_store::tool_check_store!(SqliteStore);
