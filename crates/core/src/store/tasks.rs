//! Tasks, their projects and workspaces, executions and agent credentials.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::{NewOutbound, Outbound, StoreResult};
use crate::model::{AgentConfig, Execution, ExecutionStatus, Project, TaskView};

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

/// Where an interrupted execution stands with its automatic resume after a
/// reboot (`crate::reboot`; column `executions.reboot_state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RebootState {
    /// Interrupted at a start of its node: the decision is owed.
    Pending,
    /// Decided by the boot in [`RebootRow::owner`] (a resume may be under way).
    Claimed,
    /// Reported: never looked at again.
    Done,
}

impl RebootState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "PENDING",
            Self::Claimed => "CLAIMED",
            Self::Done => "DONE",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "PENDING" => Some(Self::Pending),
            "CLAIMED" => Some(Self::Claimed),
            "DONE" => Some(Self::Done),
            _ => None,
        }
    }
}

/// An execution owed (or in the middle of) its reboot decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RebootRow {
    pub execution: Execution,
    pub state: RebootState,
    /// The boot (`<node>:<boot>`) that claimed it.
    pub owner: Option<String>,
    /// Why it was not resumed, or how its resume went.
    pub note: Option<String>,
    /// The reboot state and note of the task's execution just before this
    /// one (`None`: none, or one never owed a decision): tells whether an
    /// automatic resume started this one.
    pub previous_state: Option<RebootState>,
    pub previous_note: Option<String>,
}

/// The tasks & executions aggregate.
#[async_trait]
pub trait TaskStore: Send + Sync + 'static {
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
    /// One project by id.
    async fn get_project(&self, id: &str) -> StoreResult<Option<Project>>;
    /// Rename a project and/or move it to another path; `None` when there is
    /// no such project. A name taken in its workspace is `Duplicate`.
    async fn update_project(
        &self,
        id: &str,
        name: &str,
        path: &str,
    ) -> StoreResult<Option<Project>>;
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
    /// with reason `interrupted`, except those in `keep` (server start: their
    /// processes died with the previous server on this node; the kept ones
    /// are held by live agent holders), each owed its reboot decision
    /// ([`RebootState::Pending`]), in one transaction. Returns their task ids.
    async fn interrupt_live_executions(
        &self,
        node: &str,
        keep: &[String],
        now: DateTime<Utc>,
    ) -> StoreResult<Vec<String>>;
    /// Executions whose reboot decision is owed to `node` (PENDING, of
    /// `node` or of no recorded node) and every CLAIMED one (a boot may have
    /// stopped before it reported them), oldest first.
    async fn reboot_rows(&self, node: &str) -> StoreResult<Vec<RebootRow>>;
    /// Claim the decision of an execution for the boot `owner` with its
    /// `note`: PENDING → CLAIMED, or (`from`: an earlier boot that stopped
    /// before reporting) CLAIMED by `from` → CLAIMED by `owner`. `false`:
    /// another boot or node has it.
    async fn claim_reboot(
        &self,
        execution_id: &str,
        from: Option<&str>,
        owner: &str,
        note: Option<&str>,
    ) -> StoreResult<bool>;
    /// One transaction: each `(execution id, note)` CLAIMED by `owner` →
    /// DONE with its note, and — when at least one was — the `report` rows
    /// queued in the outbox (keys from their `dedup`; no message of their
    /// own). Returns the rows written.
    async fn finish_reboot(
        &self,
        owner: &str,
        notes: &[(String, String)],
        report: &[NewOutbound],
    ) -> StoreResult<Vec<Outbound>>;
    /// The newest RUNNING or PAUSED execution of the task.
    async fn live_execution(&self, task_id: &str) -> StoreResult<Option<Execution>>;
}
