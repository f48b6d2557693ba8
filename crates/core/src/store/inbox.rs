//! The inbox aggregate: a parent's durable WorkbenchEvents and the batches
//! they are claimed into (see [`crate::inbox`] for the rules). Claiming is
//! shaped so that PostgreSQL can run it with `FOR UPDATE SKIP LOCKED`.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Delivery, StoreResult};

macro_rules! text_enum {
    ($name:ident { $($variant:ident = $text:literal),+ $(,)? }) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name { $(#[serde(rename = $text)] $variant),+ }
        impl $name {
            pub fn as_str(self) -> &'static str { match self { $(Self::$variant => $text),+ } }
            pub fn parse(s: &str) -> Option<Self> { match s { $($text => Some(Self::$variant),)+ _ => None } }
        }
    };
}

// The kinds, priorities and states are the shared vocabulary's (also in the
// browser).
pub use harness_types::{BatchState, EventKind, EventState, Priority};

text_enum!(MessageRole { User = "USER", Assistant = "ASSISTANT", System = "SYSTEM" });

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkbenchEvent {
    pub id: String,
    pub parent_task_id: String,
    pub source_task_id: String,
    pub execution_id: Option<String>,
    pub kind: EventKind,
    pub priority: Priority,
    pub dedup_key: String,
    pub execution_review_key: Option<String>,
    pub batch_id: Option<String>,
    /// `{childTaskId, childTitle, childReply?, question?, executionId?, exitCode?}`.
    pub payload: Value,
    pub state: EventState,
    pub attempts: u32,
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub consumed_at: Option<DateTime<Utc>>,
    /// The claim's holder (`<node id>:<boot id>`) while it is claimed and
    /// not yet batched; never shown.
    #[serde(skip)]
    pub lease_owner: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkbenchBatch {
    /// Also the delivery id and the TaskMessage id.
    pub id: String,
    pub parent_task_id: String,
    pub execution_id: Option<String>,
    pub event_ids: Vec<String>,
    pub prompt: String,
    pub state: BatchState,
    #[serde(skip_serializing)]
    pub lease_token: Option<String>,
    pub lease_expires_at: Option<DateTime<Utc>>,
    pub dispatch_attempts: u32,
    pub last_error: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub dispatched_at: Option<DateTime<Utc>>,
    pub acked_at: Option<DateTime<Utc>>,
    pub resolved_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskMessage {
    pub id: String,
    pub task_id: String,
    pub execution_id: Option<String>,
    pub role: MessageRole,
    pub content: String,
    pub metadata: Option<Value>,
    pub created_at: DateTime<Utc>,
}

/// A new event (see [`crate::store::InboxStore::add_workbench_event`]).
#[derive(Debug, Clone)]
pub struct NewEvent {
    pub id: String,
    pub parent_task_id: String,
    pub source_task_id: String,
    pub execution_id: Option<String>,
    pub kind: EventKind,
    pub priority: Priority,
    pub dedup_key: String,
    pub execution_review_key: Option<String>,
    /// Produced by the execution-exit fallback (never duplicates a stop review).
    pub fallback: bool,
    pub payload: Value,
    pub now: DateTime<Utc>,
}

/// A batch to store with its delivery, in one transaction with the claim check.
#[derive(Debug, Clone)]
pub struct NewBatch {
    /// Digest of the sorted dedup keys; also the delivery id and the TaskMessage id.
    pub id: String,
    pub parent_task_id: String,
    /// The parent's live execution at claim time.
    pub execution_id: Option<String>,
    /// The claim whose events make the batch.
    pub claim_token: String,
    pub event_ids: Vec<String>,
    pub prompt: String,
    pub lease_token: String,
    pub lease_until: DateTime<Utc>,
    /// The node that owns the parent's terminal.
    pub node_id: Option<String>,
    /// The TaskMessage metadata (JSON).
    pub metadata: String,
    pub now: DateTime<Utc>,
}

/// The inbox port. Every method is one transaction.
#[async_trait]
pub trait InboxStore: Send + Sync + 'static {
    /// Insert an event. An existing `dedup_key` returns that row and `false`.
    /// On an `execution_review_key` collision: a completion fallback, or any
    /// producer when the owner of the key is the fallback, returns the owner
    /// and `false` (one review per execution); a later distinct stop turn of
    /// the same execution is inserted without the key.
    async fn add_workbench_event(&self, event: NewEvent) -> StoreResult<(WorkbenchEvent, bool)>;

    /// Record a provider turn end on the execution (time and last reply).
    async fn record_turn_end(
        &self,
        execution_id: &str,
        summary: Option<&str>,
        now: DateTime<Utc>,
    ) -> StoreResult<bool>;

    /// Lease up to `limit` PENDING events of the parent (HIGH before NORMAL,
    /// then created_at, id) to `owner` under `claim_token` until `lease_until`.
    /// Stale reviews are CONSUMED first (never delivered): those of a DONE or
    /// CANCELLED child, and all but the newest per (child, execution).
    async fn claim_workbench_events(
        &self,
        parent_task_id: &str,
        owner: &str,
        claim_token: &str,
        limit: u32,
        now: DateTime<Utc>,
        lease_until: DateTime<Utc>,
    ) -> StoreResult<Vec<WorkbenchEvent>>;

    /// In one transaction, only while every event of the claim is still
    /// PROCESSING under `claim_token`: upsert the batch (CLAIMED), set the
    /// events' batch id, upsert the SYSTEM TaskMessage (id = batch id), and
    /// queue the delivery (id = batch id; a FAILED row of an earlier attempt
    /// of the same batch is queued again). `None`: the claim was lost.
    async fn store_workbench_batch(
        &self,
        batch: NewBatch,
    ) -> StoreResult<Option<(WorkbenchBatch, Delivery)>>;

    /// Events of `owner`'s claim `claim_token` that never became a batch →
    /// PENDING, due now, with `error` (the engine's release: the claim's
    /// attempt undone). Lapsed claims are taken back by the engine's one
    /// recovery pass ([`super::WorkStore::recover_work`] with
    /// [`super::INBOX`]).
    async fn release_workbench_claim(
        &self,
        owner: &str,
        claim_token: &str,
        error: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<u64>;

    /// The Workbench start throttle: take the right to start `task_id` for
    /// `owner` until `until`, unless another try (any node, any boot) holds
    /// it past `now` — judged by the database's clock. `true`: this caller
    /// starts it.
    async fn take_workbench_start(
        &self,
        task_id: &str,
        owner: &str,
        now: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> StoreResult<bool>;

    /// Follow the deliveries of CLAIMED batches: DELIVERED → batch
    /// DISPATCHED and its events DELIVERED; a clean FAILED delivery (not
    /// leased) is taken back from the delivery queue → batch FAILED and its
    /// events PENDING. UNVERIFIED stays as it is (a person decides). Returns
    /// the batches that changed.
    async fn settle_workbench_batches(
        &self,
        now: DateTime<Utc>,
    ) -> StoreResult<Vec<WorkbenchBatch>>;

    /// Parents with PENDING events (oldest first).
    async fn workbench_parents_pending(&self, limit: u32) -> StoreResult<Vec<String>>;
    /// Whether the parent has a batch on its way (CLAIMED, its delivery not
    /// UNVERIFIED: that one waits for a person and blocks nothing).
    async fn workbench_batch_in_flight(&self, parent_task_id: &str) -> StoreResult<bool>;

    /// Lease-token transition of a batch by its agent (ack / heartbeat /
    /// resolve): see `crate::inbox` for the rules. Returns the batch after.
    async fn transition_workbench_batch(
        &self,
        batch_id: &str,
        from: &[BatchState],
        to: BatchState,
        lease_token: &str,
        lease_until: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<WorkbenchBatch>>;

    /// The parent's provider turn ended: its DISPATCHED / ACKED batches are
    /// RESOLVED and their events CONSUMED (the turn is the receipt).
    async fn resolve_dispatched_batches(
        &self,
        parent_task_id: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<Vec<WorkbenchBatch>>;

    /// Ended executions (COMPLETED / FAILED, ended at or after `since`) of
    /// derived children without any event of theirs in the parent's inbox:
    /// (task id, execution id, status, exit code), oldest first.
    async fn child_executions_missing_events(
        &self,
        since: DateTime<Utc>,
        limit: u32,
    ) -> StoreResult<Vec<(String, String, crate::model::ExecutionStatus, Option<i64>)>>;

    /// The resident Workbench task of a project, if any.
    async fn project_workbench(&self, project_id: &str) -> StoreResult<Option<String>>;
    /// Whether the task is some project's Workbench.
    async fn is_workbench(&self, task_id: &str) -> StoreResult<bool>;
    /// In one transaction: the project's Workbench task id if it has one
    /// (`false`), else `task` inserted and bound as its Workbench (`true`).
    async fn create_project_workbench(&self, task: super::NewTask) -> StoreResult<(String, bool)>;

    async fn get_workbench_batch(&self, id: &str) -> StoreResult<Option<WorkbenchBatch>>;
    /// The parent's events, newest first.
    async fn list_workbench_events(
        &self,
        parent_task_id: &str,
        limit: u32,
    ) -> StoreResult<Vec<WorkbenchEvent>>;
    /// The parent's batches, newest first.
    async fn list_workbench_batches(
        &self,
        parent_task_id: &str,
        limit: u32,
    ) -> StoreResult<Vec<WorkbenchBatch>>;
    /// The task's TaskMessages, newest first.
    async fn list_task_messages(&self, task_id: &str, limit: u32) -> StoreResult<Vec<TaskMessage>>;
    /// The derived children of a task, oldest first.
    async fn child_task_ids(&self, parent_task_id: &str) -> StoreResult<Vec<String>>;
}
