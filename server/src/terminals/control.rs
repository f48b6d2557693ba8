//! The terminals as the core's [`AgentControl`] port: what the web UI's
//! Start / Stop / Restart / Resume buttons reach (through
//! `Tasks::control_task`, which checks the rules first) — and, as the
//! core's [`AgentRuntime`], what a person's `restart` / `stop` reply to an
//! agent-state push acts through (`Agents::agent_reply`).

use async_trait::async_trait;
use harness_core::{
    CoreResult,
    control::{AgentControl, StartRequest, TerminalState},
    model::Execution,
    runtime::AgentRuntime,
};

use super::{Terminals, providers::StartMode};

#[async_trait]
impl AgentControl for Terminals {
    async fn start(&self, task_id: &str, request: StartRequest) -> CoreResult<Execution> {
        let mode = match request {
            StartRequest::Fresh { prompt } => StartMode::Fresh { prompt },
            // Never "the most recent session": fresh when none is known.
            StartRequest::Resume => self.resume_mode_for(task_id).await?,
        };
        Terminals::start(self, task_id, mode).await
    }

    async fn stop(&self, task_id: &str) -> CoreResult<bool> {
        Terminals::stop(self, task_id).await
    }

    fn terminal_state(&self, task_id: &str) -> Option<TerminalState> {
        self.live(task_id).map(|s| TerminalState {
            turn_complete: s.turn_complete(),
        })
    }
}

impl AgentRuntime for Terminals {
    fn parked(&self, task_id: &str) {
        self.inner.registry.park(task_id);
    }

    fn control(&self) -> Option<std::sync::Arc<dyn AgentControl>> {
        Some(std::sync::Arc::new(self.clone()))
    }

    fn screen(&self, task_id: &str) -> Option<harness_core::evidence::RawScreen> {
        self.raw_screen(task_id)
    }

    fn secrets(&self, task_id: &str) -> Vec<String> {
        self.inner.secrets.of(task_id)
    }

    fn unreadable_holder(
        &self,
        execution_id: &str,
    ) -> Option<harness_core::unreadable_holder::UnreadableHolder> {
        self.inner.unreadable.facts(execution_id)
    }
}
