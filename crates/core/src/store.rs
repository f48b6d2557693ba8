//! The storage port. Every method is one atomic unit of work (one transaction
//! where it writes). Implementations live outside the core (`harness-store`);
//! the core never sees SQL.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::model::{
    AgentConfig, Execution, ExecutionStatus, Message, MessageQuery, MessageRow, Project, TaskView,
};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A referenced row does not exist (foreign key).
    #[error("referenced {0} does not exist")]
    MissingReference(&'static str),
    /// A uniqueness rule was violated.
    #[error("duplicate {0}")]
    Duplicate(&'static str),
    /// The backend failed (I/O, corruption, pool closed…).
    #[error("database backend error: {0}")]
    Backend(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// A stored value could not be decoded.
    #[error("corrupt stored value in {column}: {value}")]
    Corrupt { column: &'static str, value: String },
}

pub type StoreResult<T> = Result<T, StoreError>;

#[derive(Debug, Clone)]
pub struct NewProject {
    pub id: String,
    pub workspace_id: String,
    pub workspace_name: String,
    pub name: String,
    pub path: String,
    pub now: DateTime<Utc>,
}

#[derive(Debug, Clone)]
pub struct NewTask {
    pub id: String,
    pub title: String,
    pub description: Option<String>,
    pub project_id: Option<String>,
    pub parent_task_id: Option<String>,
    pub agent: AgentConfig,
    pub now: DateTime<Utc>,
}

#[derive(Debug, Clone)]
pub struct NewExecution {
    pub id: String,
    pub task_id: String,
    pub token_hash: String,
    pub status: ExecutionStatus,
    /// The node that spawns it.
    pub node_id: Option<String>,
    pub now: DateTime<Utc>,
}

#[derive(Debug, Clone)]
pub struct NewAsk {
    pub id: String,
    pub task_id: String,
    pub question: String,
    pub now: DateTime<Utc>,
}

/// What `ask` did, atomically.
#[derive(Debug, Clone)]
pub struct AskRecorded {
    pub message: Message,
    /// OPEN asks of the task that were superseded (→ CANCELLED).
    pub cancelled: Vec<String>,
    /// Executions parked RUNNING → PAUSED.
    pub paused: Vec<String>,
}

/// What a successful conditional answer did, atomically.
#[derive(Debug, Clone)]
pub struct Answered {
    pub message: Message,
    /// Executions resumed PAUSED → RUNNING.
    pub resumed: Vec<String>,
    /// Whether an execution was already RUNNING (nothing to resume).
    pub running: bool,
    /// The delivery row written by the same transaction (`None`: the task's
    /// agent never ran, nothing to type into).
    pub delivery: Option<crate::deliveries::Delivery>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dismissed {
    Deleted(Message),
    NotFound,
    IsAsk,
}

/// Persistence for the whole Harness domain.
#[async_trait]
pub trait Store: crate::deliveries::DeliveryStore + Send + Sync + 'static {
    // ---- projects and tasks
    /// Finds the workspace by name or creates it with `id`; returns its id.
    async fn ensure_workspace(
        &self,
        id: &str,
        name: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<String>;
    async fn create_project(&self, project: NewProject) -> StoreResult<Project>;
    async fn list_projects(&self) -> StoreResult<Vec<Project>>;
    async fn create_task(&self, task: NewTask) -> StoreResult<TaskView>;
    async fn get_task(&self, id: &str) -> StoreResult<Option<TaskView>>;
    async fn list_tasks(&self, limit: u32) -> StoreResult<Vec<TaskView>>;

    /// Set the unattended flag; `None` when the task does not exist.
    async fn set_unattended(
        &self,
        task_id: &str,
        on: bool,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<TaskView>>;
    /// Ids of every task with unattended mode on.
    async fn unattended_task_ids(&self) -> StoreResult<Vec<String>>;

    // ---- executions and credentials
    async fn create_execution(&self, execution: NewExecution) -> StoreResult<Execution>;
    /// The execution whose agent token hashes to `token_hash`.
    async fn execution_by_token_hash(&self, token_hash: &str) -> StoreResult<Option<Execution>>;

    /// Record the agent's session id on the execution; the first write wins.
    /// Returns the stored session id, or `None` when the execution is missing.
    async fn set_session_id(
        &self,
        execution_id: &str,
        session_id: &str,
    ) -> StoreResult<Option<String>>;
    /// End a live execution (RUNNING/PAUSED → `status`) with its exit code and
    /// reason; `false` when it was not live any more.
    async fn finish_execution(
        &self,
        execution_id: &str,
        status: ExecutionStatus,
        exit_code: Option<i64>,
        reason: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<bool>;
    /// Mark every live execution of `node` (or of no recorded node) FAILED
    /// with reason `interrupted` (server start: their processes died with
    /// the previous server on this node). Returns their task ids.
    async fn interrupt_live_executions(
        &self,
        node: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<Vec<String>>;
    /// The newest RUNNING or PAUSED execution of the task.
    async fn live_execution(&self, task_id: &str) -> StoreResult<Option<Execution>>;

    // ---- messaging (each one transaction)
    /// Cancel the task's OPEN asks, insert the OPEN ask (bound to the newest
    /// RUNNING execution), park RUNNING executions. `MissingReference("task")`
    /// when the task does not exist.
    async fn record_ask(&self, ask: NewAsk) -> StoreResult<AskRecorded>;
    /// Insert a CLOSED notify line.
    async fn record_notify(&self, ask: NewAsk) -> StoreResult<Message>;
    /// OPEN → ANSWERED for the task's newest OPEN ask, only if it is still OPEN,
    /// PAUSED → RUNNING for its executions, and — when the task's agent ever
    /// ran — the reply's QUEUED delivery row `delivery_id` (bound to the
    /// node of the live execution, if any). `None` when no OPEN ask was
    /// there to answer (lost the race or never asked).
    async fn answer_open_ask(
        &self,
        task_id: &str,
        text: &str,
        delivery_id: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<Answered>>;
    /// PAUSED → RUNNING for the task's executions; returns (resumed ids, any running).
    async fn resume_executions(&self, task_id: &str) -> StoreResult<(Vec<String>, bool)>;
    /// Newest OPEN ask of the task.
    async fn open_ask(&self, task_id: &str) -> StoreResult<Option<Message>>;
    /// Newest ask of the task in any state.
    async fn latest_ask(&self, task_id: &str) -> StoreResult<Option<Message>>;
    async fn get_message(&self, id: &str) -> StoreResult<Option<Message>>;
    /// OPEN → IGNORED if still OPEN.
    async fn ignore_ask(&self, id: &str) -> StoreResult<Option<Message>>;
    /// Delete a non-ask message.
    async fn dismiss_message(&self, id: &str) -> StoreResult<Dismissed>;
    /// The task's OPEN asks → CANCELLED (the task was stopped); returns their ids.
    async fn cancel_open_asks(&self, task_id: &str) -> StoreResult<Vec<String>>;
    /// OPEN asks created before `cutoff` → EXPIRED; returns their ids.
    async fn expire_asks_before(&self, cutoff: DateTime<Utc>) -> StoreResult<Vec<String>>;
    async fn list_messages(&self, query: &MessageQuery) -> StoreResult<Vec<MessageRow>>;
    async fn message_row(&self, id: &str) -> StoreResult<Option<MessageRow>>;
    async fn pending_count(&self) -> StoreResult<u64>;

    // ---- settings (JSON values by key)
    async fn get_setting(&self, key: &str) -> StoreResult<Option<serde_json::Value>>;
    async fn put_setting(
        &self,
        key: &str,
        value: &serde_json::Value,
        now: DateTime<Utc>,
    ) -> StoreResult<()>;
}
