//! Approvals of risky tool calls: the audit record of each held
//! call and its one-time grant.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::Serialize;

use super::{
    AskRecorded, Choices, Delivery, NewAsk, NewEvent, NewInput, NewOutbound, Outbound, StoreResult,
};

// The states are the shared vocabulary's (also in the browser).
pub use harness_types::ApprovalState;

/// One held tool call.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Approval {
    pub id: String,
    pub task_id: String,
    pub execution_id: Option<String>,
    /// The ask (structured question) that carries it.
    pub request_id: String,
    pub tool: String,
    /// The exact tool input, as JSON text.
    pub input: String,
    /// sha256 of tool + canonical input: what a grant is for.
    pub input_hash: String,
    pub cwd: Option<String>,
    /// The matched rule (`policy::Matched`) as JSON text.
    pub rule: String,
    pub state: ApprovalState,
    /// The hook stopped waiting: the decision is typed into the terminal.
    pub parked: bool,
    /// Who decided (`admin`, `browser`, `gateway:<sender id>` for a reply
    /// from chat, `harness` when its ask was cancelled or expired).
    pub decided_by: Option<String>,
    /// Where from (`rest`, `reply`, `chat`; `ask` when its ask ended).
    pub decided_via: Option<String>,
    pub decided_at: Option<DateTime<Utc>>,
    /// The person's reason (a denial's "because …").
    pub reason: Option<String>,
    /// When the agent's retried call used the decision (once).
    pub consumed_at: Option<DateTime<Utc>>,
    /// What the agent did next: `ran`, `held`, `told-to-wait`.
    pub outcome: Option<String>,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone)]
pub struct NewApproval {
    pub id: String,
    pub task_id: String,
    pub execution_id: Option<String>,
    pub request_id: String,
    pub tool: String,
    pub input: String,
    pub input_hash: String,
    pub cwd: Option<String>,
    pub rule: String,
    pub now: DateTime<Utc>,
    /// When the push may go out (its `next_attempt_at`): a derived task's
    /// approval reaches its parent first and the person only after the
    /// ladder's step (`HarnessConfig::approval_parent_step`); `None`: now.
    pub push_not_before: Option<DateTime<Utc>>,
    /// The push to the person's chat: an outbound row
    /// with the task and no message of its own (its delivery mapping names
    /// the task, whose OPEN ask — this approval's — a reply answers),
    /// written in the ask's transaction under the key `approval:<id>`
    /// (`dedup` is ignored). `None`: no channel is configured.
    pub push: Option<NewOutbound>,
}

/// Which approvals to list (the audit export), newest
/// first: every filter optional.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApprovalQuery {
    pub task_id: Option<String>,
    /// Created at or after.
    pub since: Option<DateTime<Utc>>,
    /// Created before.
    pub until: Option<DateTime<Utc>>,
    /// The keyset cursor: only rows older than this approval (its
    /// created_at, then id) — the last id of the previous page.
    pub before: Option<String>,
    pub limit: u32,
}

/// The dedup key of an approval's push to chat.
pub fn approval_push_key(approval_id: &str) -> String {
    format!("approval:{approval_id}")
}

/// A person's decision.
#[derive(Debug, Clone)]
pub struct ApprovalDecision {
    pub approve: bool,
    pub by: String,
    pub via: String,
    pub reason: Option<String>,
    /// The ask's reply text (`Approve` / `Deny`).
    pub reply_text: String,
    /// What is typed into the live terminal when the approval turns out to
    /// be parked (the hook stopped waiting): this input delivery (keyed
    /// `approval:<id>`: owed once) is written in the decision's
    /// transaction. Ignored when the approval is not parked.
    pub typed: Option<NewInput>,
    pub now: DateTime<Utc>,
    /// Decided by the person writing in the chat (through a gateway): the
    /// approval's ask is recorded as answered through a gateway at `now`,
    /// in the decision's transaction.
    pub from_chat: bool,
}

/// What [`ApprovalStore::decide_approval`] wrote.
#[derive(Debug, Clone)]
pub struct ApprovalDecided {
    pub approval: Approval,
    /// The typed decision's delivery (parked approvals), `created`: this
    /// decision inserted it (`false`: its key existed).
    pub delivery: Option<(Delivery, bool)>,
    /// The approval's push to chat and the reminders and escalations of its
    /// ask, dropped (DEAD) by this decision because they were not sent yet
    /// (PENDING / FAILED).
    pub dropped: Vec<Outbound>,
}

/// What [`ApprovalStore::record_approval_ask`] wrote.
#[derive(Debug, Clone)]
pub struct ApprovalAsked {
    pub recorded: AskRecorded,
    /// The parent's inbox event was added (`false`: none, or a duplicate).
    pub event_added: bool,
    pub approval: Approval,
    /// The push to chat written with it (PENDING).
    pub push: Option<Outbound>,
}

#[async_trait]
pub trait ApprovalStore: Send + Sync + 'static {
    /// An approval's ask — exactly `record_ask_with_choices`, or with
    /// `parent_event` `record_ask_for_parent` — and its PENDING approval row
    /// (`approval.request_id` must be `ask.id`), and its push to chat
    /// (`approval.push`), and the ask's screen (`ask.evidence`), in ONE
    /// transaction: no ask without its approval, no approval without its
    /// ask, no approval asked but not pushed.
    async fn record_approval_ask(
        &self,
        ask: NewAsk,
        choices: Choices,
        parent_event: Option<NewEvent>,
        approval: NewApproval,
    ) -> StoreResult<ApprovalAsked>;
    async fn insert_approval(&self, a: NewApproval) -> StoreResult<Approval>;
    async fn get_approval(&self, id: &str) -> StoreResult<Option<Approval>>;
    async fn approval_for_request(&self, request_id: &str) -> StoreResult<Option<Approval>>;
    /// The task's PENDING approval for this exact call, if any.
    async fn pending_approval_for_call(
        &self,
        task_id: &str,
        input_hash: &str,
    ) -> StoreResult<Option<Approval>>;
    /// Newest first (created_at, id), narrowed by `q`.
    async fn list_approvals(&self, q: &ApprovalQuery) -> StoreResult<Vec<Approval>>;
    /// PENDING → APPROVED/DENIED (only if still PENDING: one winner), and in
    /// the same transaction the carrying ask OPEN → ANSWERED with
    /// `reply_text`, the task's PAUSED executions → RUNNING and, when the
    /// approval is parked, the `typed` delivery; its push to chat and its
    /// ask's reminders and escalations, if not sent yet (PENDING / FAILED),
    /// DEAD. `None` when it was no longer
    /// PENDING (or does not exist).
    async fn decide_approval(
        &self,
        id: &str,
        decision: &ApprovalDecision,
    ) -> StoreResult<Option<ApprovalDecided>>;
    /// The hook stopped waiting: `parked` on a PENDING approval. Answers the
    /// row as it stands after the statement (`None`: no such row).
    async fn park_approval(&self, id: &str, now: DateTime<Utc>) -> StoreResult<Option<Approval>>;
    /// Use a decision once: the task's oldest decided, unused approval of
    /// this exact call gets `consumed_at` and its outcome (`ran` when
    /// approved, `held` when denied), atomically (two racing calls: one
    /// gets it). First, in the same transaction, the task's unused
    /// decisions that went stale are closed (outcome `unused`): the task
    /// asked something newer since the decision, or the execution that
    /// asked ended after it (a restart's interruption excepted).
    async fn consume_approval(
        &self,
        task_id: &str,
        input_hash: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<Approval>>;
}
