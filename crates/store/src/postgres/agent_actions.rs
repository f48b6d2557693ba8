//! [`harness_core::store::AgentActionStore`] on PostgreSQL: the shared
//! implementation ([`crate::shared::agent_actions`]).

use super::PgStore;

crate::shared::agent_actions::agent_action_store!(PgStore, pool, super::DIALECT);
