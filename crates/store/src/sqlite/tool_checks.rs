//! `ToolCheckStore` on SQLite: the shared implementation
//! ([`crate::shared::tool_checks`]).

use super::SqliteStore;

crate::shared::tool_checks::tool_check_store!(SqliteStore, reader, writer);
