//! [`harness_core::store::AgentActionStore`] on PostgreSQL: the shared
//! implementation ([`crate::shared::agent_action_store`]).

use super::PgStore;

crate::shared::agent_action_store::agent_action_store!(PgStore);
