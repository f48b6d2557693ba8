//! `AgentStateStore` on PostgreSQL: the shared implementation
//! ([`crate::shared::agent_state_store`]).

use super::PgStore;

crate::shared::agent_state_store::agent_state_store!(PgStore);
