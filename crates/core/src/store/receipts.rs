//! The receipt of a question (`crate::receipt`): what the rows Harness
//! already writes do not hold — the agent's screen a few seconds after the
//! answer was typed (`answer_screens`, migration 0043), the screen of an
//! ask pushed to a chat (`ask_evidence`, written after the push's own
//! rows) — and whether the answer came through a gateway.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::StoreResult;

/// The screen after an answer was typed, bounded and redacted
/// (`crate::evidence::snapshot`) before it is stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswerScreen {
    pub message_id: String,
    /// The delivery that typed the answer.
    pub delivery_id: String,
    pub screen: String,
    pub captured_at: DateTime<Utc>,
}

#[async_trait]
pub trait ReceiptStore: Send + Sync {
    /// Store the screen after the answer; the first one wins. `false` when
    /// one was stored before or the message is gone (deleted meanwhile).
    async fn record_answer_screen(&self, screen: AnswerScreen) -> StoreResult<bool>;

    /// The screen stored after the answer to `message_id`.
    async fn answer_screen(&self, message_id: &str) -> StoreResult<Option<AnswerScreen>>;

    /// Store the evidence of an ask recorded without it (a question pushed
    /// to a chat: its message is written by the outbox's enqueue); the first
    /// one wins. `false` when it had one or the message is gone.
    async fn add_ask_evidence(
        &self,
        message_id: &str,
        screen: &str,
        now: DateTime<Utc>,
    ) -> StoreResult<bool>;

    /// When the ask was answered by its person writing in the chat
    /// (through a gateway); `None`: on the web, the API, MCP or by default.
    async fn answered_in_chat(&self, message_id: &str) -> StoreResult<Option<DateTime<Utc>>>;
}
