//! `AgentStateStore` on PostgreSQL: the shared implementation
//! ([`crate::shared::agent_states`]).

use super::PgStore;

crate::shared::agent_states::agent_state_store!(PgStore, pool, pool);
