//! The agent states' aggregate (`crate::agent_state`): each execution's
//! current state as last recorded, written with what it says — the push to
//! the person and the event in a parent's inbox — in one transaction; and
//! the newest hook event of an execution whose kind of turn changed.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::{NewEvent, NewOutbound, Outbound, StoreResult, WorkbenchEvent};
use crate::model::AgentStateRecord;

/// One write: the record (its `since` is kept while the state's name stays
/// the same), a push (queued once: its dedup key is unique) and a parent's
/// inbox event (once per its dedup key). Any part may be absent.
#[derive(Debug, Clone, Default)]
pub struct AgentStateWrite {
    pub record: Option<AgentStateRecord>,
    /// The push; its `dedup` is `Dedup::Explicit(<key>)` (the key stored
    /// as it is).
    pub push: Option<NewOutbound>,
    pub parent_event: Option<NewEvent>,
}

/// What [`AgentStateStore::write_agent_state`] stored.
#[derive(Debug, Clone, Default)]
pub struct AgentStateWritten {
    /// The record as stored.
    pub record: Option<AgentStateRecord>,
    /// The push, when this write queued it (`None`: none, or queued before).
    pub push: Option<Outbound>,
    /// The parent's event, when this write added it.
    pub event: Option<WorkbenchEvent>,
}

#[async_trait]
pub trait AgentStateStore: Send + Sync {
    /// The record, the push and the parent's event in one transaction.
    async fn write_agent_state(&self, write: AgentStateWrite) -> StoreResult<AgentStateWritten>;

    /// An execution's recorded state.
    async fn agent_state(&self, execution_id: &str) -> StoreResult<Option<AgentStateRecord>>;

    /// Records `hook` (`session_start`, `user_prompt_submit`,
    /// `pre_tool_use`, `post_tool_use`, `stop`) as the execution's newest.
    async fn note_hook(&self, execution_id: &str, hook: &str, at: DateTime<Utc>)
    -> StoreResult<()>;

    /// The execution's newest recorded hook event and when it came.
    async fn last_hook(&self, execution_id: &str) -> StoreResult<Option<(String, DateTime<Utc>)>>;
}
