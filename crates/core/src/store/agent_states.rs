//! The agent states' aggregate (`crate::agent_state`): each execution's
//! current state as last recorded, written with what it says — the push to
//! the person and the event in a parent's inbox — in one transaction; and
//! the newest hook event of an execution whose kind of turn changed.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::{NewEvent, NewOutbound, Outbound, StoreResult, WorkbenchEvent};
use crate::model::{AgentStateName, AgentStateRecord, ExecutionStatus, TaskStatus};

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

/// An open unattended task's latest execution with that execution's
/// recorded state: the few facts that decide whether its agent needs a
/// person (`crate::report::agents::needs_person_of`), read for every such
/// task at once ([`AgentStateStore::latest_unattended_runs`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LatestRun {
    pub task_id: String,
    pub task_status: TaskStatus,
    pub unattended: bool,
    pub execution_id: String,
    pub status: ExecutionStatus,
    pub exit_code: Option<i64>,
    pub created_at: DateTime<Utc>,
    pub ended_at: Option<DateTime<Utc>>,
    /// The execution's recorded agent state, when the watcher wrote one.
    pub state: Option<RecordedState>,
}

/// The part of an [`AgentStateRecord`] the rule reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedState {
    /// The state's name.
    pub state: AgentStateName,
    /// The state in words.
    pub reason: String,
    pub since: DateTime<Utc>,
    pub exit_code: Option<i32>,
    pub gave_up: bool,
}

impl RecordedState {
    pub fn of(r: &AgentStateRecord) -> Self {
        Self {
            state: r.state,
            reason: r.reason.clone(),
            since: r.since,
            exit_code: r.exit_code,
            gave_up: r.gave_up,
        }
    }
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

    /// One query: every task with unattended mode on that is not DONE or
    /// CANCELLED and has an execution — its latest one (by start, then id)
    /// with that execution's recorded state — by task id.
    async fn latest_unattended_runs(&self) -> StoreResult<Vec<LatestRun>>;
}
