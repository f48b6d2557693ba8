//! `AgentStateStore` on SQLite: the shared implementation
//! ([`crate::shared::agent_state_store`]).

use super::SqliteStore;

crate::shared::agent_state_store::agent_state_store!(SqliteStore);
