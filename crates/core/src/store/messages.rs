//! Messages: asks, notifies and replies (the relay state machine's rows).

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::{Delivery, DeliveryClaim, StoreResult};
use crate::model::{Message, MessageQuery, MessageRow};

#[derive(Debug, Clone)]
pub struct NewAsk {
    pub id: String,
    pub task_id: String,
    pub question: String,
    pub now: DateTime<Utc>,
    /// The caller's idempotency key (asks only; unique per task).
    pub idempotency_key: Option<String>,
    /// The agent's screen when it asked, bounded and redacted
    /// (`crate::evidence`): stored with the ask in its transaction.
    pub evidence: Option<String>,
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
    pub delivery: Option<Delivery>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dismissed {
    Deleted(Message),
    NotFound,
    IsAsk,
}

/// The messages aggregate. Asking and answering also park and resume the
/// task's executions in the same transaction.
#[async_trait]
pub trait MessageStore: Send + Sync + 'static {
    // ---- messaging (each one transaction)
    /// Cancel the task's OPEN asks, insert the OPEN ask (bound to the newest
    /// RUNNING execution), park RUNNING executions. `MissingReference("task")`
    /// when the task does not exist.
    async fn record_ask(&self, ask: NewAsk) -> StoreResult<AskRecorded>;
    /// The screen stored with an ask ([`NewAsk::evidence`]); `None` when
    /// it has none. Deleted with its message.
    async fn ask_evidence(&self, message_id: &str) -> StoreResult<Option<String>>;
    /// The task's ask recorded with this idempotency key, in any state.
    async fn ask_by_key(&self, task_id: &str, key: &str) -> StoreResult<Option<Message>>;
    /// Insert a CLOSED notify line.
    async fn record_notify(&self, ask: NewAsk) -> StoreResult<Message>;
    /// OPEN → ANSWERED for the task's newest OPEN ask, only if it is still OPEN,
    /// PAUSED → RUNNING for its executions, and — when the task's agent ever
    /// ran — the reply's QUEUED delivery row `delivery_id` (bound to the node
    /// of the live execution, if any). `None` when no OPEN ask was there to
    /// answer (lost the race or never asked).
    ///
    /// With `claim`, the new row is leased at once to that worker when the
    /// worker's node may do it (the hand-off that saves the worker a claim).
    /// With `from_chat` (its person wrote the answer in the chat, through a
    /// gateway), the ask is recorded as answered through a gateway at `now`
    /// in the same transaction: recorded ⇔ answered.
    async fn answer_open_ask(
        &self,
        task_id: &str,
        text: &str,
        delivery_id: &str,
        claim: Option<&DeliveryClaim>,
        now: DateTime<Utc>,
        from_chat: bool,
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
}
