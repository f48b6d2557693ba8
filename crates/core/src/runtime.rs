//! The port to the agent runtime (PTY supervisor). The core decides *that* a
//! reply must reach the agent and records it as a delivery row (see
//! [`crate::deliveries`]); the runtime's delivery worker decides *how*: typed
//! into the live terminal exactly once per injection id, or — when the
//! terminal is gone — by resuming the agent with the provider's resume mode
//! and delivering the reply prefixed with the question it answers
//! (docs/decisions.md D3, docs/decisions.md D5, D6).

pub trait AgentRuntime: Send + Sync + 'static {
    /// The task asked and is parked: its terminal must stay alive (no
    /// keepalive timer) until the reply arrives.
    fn parked(&self, _task_id: &str) {}

    /// The runtime as the person's controls (Start / Stop / Resume): what a
    /// reply `stop` / `restart` to an agent-state push acts through
    /// (`Agents::agent_reply`). `None`: no runtime acts on replies.
    fn control(&self) -> Option<std::sync::Arc<dyn crate::control::AgentControl>> {
        None
    }

    /// The live execution's agent runs in a holder this server cannot read
    /// (`crate::unreadable_holder`): read with the task.
    /// What the task's terminal in this process shows now, with the
    /// secret values of the environment its agent was given (docs/evidence.md:
    /// the evidence of an ask). `None`: no terminal here.
    fn screen(&self, _task_id: &str) -> Option<crate::evidence::RawScreen> {
        None
    }

    /// The secret values of the environment the task's agent was last
    /// given in this process, also once its terminal is gone: what the
    /// screen lines of its states are redacted of (`crate::agent_states`).
    /// By default those of its screen, while it has one.
    fn secrets(&self, task_id: &str) -> Vec<String> {
        self.screen(task_id).map(|s| s.secrets).unwrap_or_default()
    }

    fn unreadable_holder(
        &self,
        _execution_id: &str,
    ) -> Option<crate::unreadable_holder::UnreadableHolder> {
        None
    }
}
