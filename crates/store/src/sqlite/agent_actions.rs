//! [`harness_core::store::AgentActionStore`] on SQLite: the shared
//! implementation ([`crate::shared::agent_actions`]); reads on the
//! read-only pool.

use super::SqliteStore;

crate::shared::agent_actions::agent_action_store!(SqliteStore, reader, super::DIALECT);
