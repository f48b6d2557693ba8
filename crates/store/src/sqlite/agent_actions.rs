//! [`harness_core::store::AgentActionStore`] on SQLite: the shared
//! implementation ([`crate::shared::agent_action_store`]).

use super::SqliteStore;

crate::shared::agent_action_store::agent_action_store!(SqliteStore);
