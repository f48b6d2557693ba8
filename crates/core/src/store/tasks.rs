//! Tasks, their projects and workspaces, executions and agent credentials.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::StoreResult;
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
    /// are held by live agent holders). Returns their task ids.
    async fn interrupt_live_executions(
        &self,
        node: &str,
        keep: &[String],
        now: DateTime<Utc>,
    ) -> StoreResult<Vec<String>>;
    /// The newest RUNNING or PAUSED execution of the task.
    async fn live_execution(&self, task_id: &str) -> StoreResult<Option<Execution>>;
}
