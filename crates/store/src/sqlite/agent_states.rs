//! `AgentStateStore` on SQLite: the shared implementation
//! ([`crate::shared::agent_states`]).

use super::SqliteStore;

crate::shared::agent_states::agent_state_store!(SqliteStore, reader, writer);
