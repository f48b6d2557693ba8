//! Timed automatic actions on an unattended agent (the rules are in
//! `crate::agent_actions`): a row per action — type "continue" at a usage
//! limit's reset, after an error loop, restart a crashed agent with its
//! session, type a nudge, answer a CLI's own dialog — written when the
//! agent's state is planned, due at its time, done once by the action
//! worker on the engine (`crate::work`, kind `AgentActions`), cancelled when
//! a person acts first.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::StoreResult;

pub use harness_types::{ActionKind, ActionReason, ActionState};

/// One timed action.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentAction {
    pub id: String,
    pub task_id: String,
    /// The execution whose state it answers.
    pub execution_id: String,
    /// Only this node may do it (it presses a key in a terminal there);
    /// none: any node.
    pub node_id: Option<String>,
    pub action: ActionKind,
    pub reason: ActionReason,
    /// The text typed (a nudge), or the key pressed (a dialog's option).
    pub text: Option<String>,
    /// When it was planned for.
    pub due_at: DateTime<Utc>,
    /// One action per execution and state episode.
    pub dedup_key: String,
    pub state: ActionState,
    pub attempts: u32,
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub lease_owner: Option<String>,
    pub lease_expires_at: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
    /// What was done ("typed continue", "resumed session …").
    pub result: Option<String>,
    /// The keyed delivery that types its text.
    pub delivery_id: Option<String>,
    /// The execution a resume or restart started.
    pub started_execution_id: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// When it was done (or may have been: unverified).
    pub done_at: Option<DateTime<Utc>>,
}

/// A new action: PENDING, due at `due_at`.
#[derive(Debug, Clone)]
pub struct NewAction {
    pub id: String,
    pub task_id: String,
    pub execution_id: String,
    pub node_id: Option<String>,
    pub action: ActionKind,
    pub reason: ActionReason,
    pub text: Option<String>,
    pub due_at: DateTime<Utc>,
    pub dedup_key: String,
    pub now: DateTime<Utc>,
}

/// How one attempt ended, as the store records it (decided by the core).
#[derive(Debug, Clone)]
pub struct ActionSettle {
    pub id: String,
    /// DONE, FAILED, GAVE_UP or UNVERIFIED.
    pub state: ActionState,
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
    pub result: Option<String>,
    pub delivery_id: Option<String>,
    pub started_execution_id: Option<String>,
}

/// One turn of the action worker: record `settles` (rows still RUNNING
/// under `owner`), give back `released` (leased, never started: due now,
/// the claim's attempt undone), then lease up to `limit` due rows of
/// `node` (or of no node) until `lease_until`.
#[derive(Debug, Clone)]
pub struct ActionTurn {
    pub owner: String,
    pub node: String,
    pub settles: Vec<ActionSettle>,
    pub released: Vec<String>,
    pub lease_until: DateTime<Utc>,
    pub now: DateTime<Utc>,
    pub limit: u32,
}

#[async_trait]
pub trait AgentActionStore: Send + Sync {
    /// Write `new` unless its dedup key is taken (then the row that has
    /// it); with `superseded` (the note), the other due actions of its
    /// execution are cancelled in the same transaction. Returns the row and
    /// whether this call wrote it.
    async fn plan_action(
        &self,
        new: NewAction,
        superseded: Option<&str>,
    ) -> StoreResult<(AgentAction, bool)>;

    /// The open actions (due or under way) of an execution, oldest first.
    async fn open_actions(&self, execution_id: &str) -> StoreResult<Vec<AgentAction>>;

    /// How many actions of `reason` for an execution are no longer open
    /// (an action's episode number).
    async fn closed_action_count(
        &self,
        execution_id: &str,
        reason: ActionReason,
    ) -> StoreResult<u32>;

    /// How many actions of `reason` for a task were done (or may have
    /// been: under way, unverified) since `since` — the per-hour caps.
    async fn actions_done_since(
        &self,
        task_id: &str,
        reason: ActionReason,
        since: DateTime<Utc>,
    ) -> StoreResult<u32>;

    /// Cancel the due actions of a task (of one execution only, with
    /// `execution_id`), noting `why`. Returns the cancelled rows.
    async fn cancel_actions(
        &self,
        task_id: &str,
        execution_id: Option<&str>,
        why: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<Vec<AgentAction>>;

    /// One turn of the worker (see [`ActionTurn`]), one transaction.
    async fn settle_and_claim_actions(&self, turn: ActionTurn) -> StoreResult<Vec<AgentAction>>;

    /// A task's actions, newest first.
    async fn task_actions(&self, task_id: &str, limit: u32) -> StoreResult<Vec<AgentAction>>;

    async fn get_action(&self, id: &str) -> StoreResult<Option<AgentAction>>;
}
