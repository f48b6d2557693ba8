//! The port to the agent runtime (PTY supervisor). The core decides *that* a
//! reply must reach the agent; the runtime decides *how*: typed into the live
//! terminal exactly once per injection id, or — when the terminal is gone —
//! by resuming the agent with the provider's resume mode and delivering the
//! reply prefixed with the question it answers (decisions D3, D5, D6).

use async_trait::async_trait;
use serde::Serialize;

/// A reply to deliver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyDelivery {
    pub task_id: String,
    /// Stable id of this delivery (the ask id): the runtime writes it at most once.
    pub injection_id: String,
    pub text: String,
    /// The question being answered (used when the agent had to be restarted).
    pub question: String,
}

/// How a delivery went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Delivered {
    /// Typed into the live terminal now.
    Injected,
    /// This injection id had already been written; nothing written again.
    AlreadyInjected,
    /// The terminal was gone: the agent was restarted (resume mode) with the reply.
    Restarted,
    /// Nothing to deliver to: the task's agent never ran, or its live
    /// execution is not run by this server's terminals (restarting would
    /// start a second agent). The reply stays recorded on the ask.
    Detached,
}

#[async_trait]
pub trait AgentRuntime: Send + Sync + 'static {
    async fn deliver_reply(&self, delivery: ReplyDelivery) -> Result<Delivered, String>;

    /// The task asked and is parked: its terminal must stay alive (no
    /// keepalive timer) until the reply arrives.
    fn parked(&self, _task_id: &str) {}
}
