//! An agent's first turn has Harness's tools. Claude Code (2.1.332) sends
//! its first model request — the start prompt — about a second after it
//! starts, whether or not its MCP servers have connected yet: with a slow
//! Harness (a busy machine) the request offers no `ask_human`, and the
//! model's first call of it fails with "No such tool available". It does
//! wait for its SessionStart hooks before that request (both seen with the
//! real CLI against a slow MCP server; `docs/agent-states.md`). So Harness's
//! SessionStart hook, at a start or a resume, waits (bounded) until this
//! execution has listed its tools over MCP:
//!
//! * `HarnessMcp::list_tools` with an agent token →
//!   [`Terminals::tools_listed`];
//! * `POST /api/internal/hooks/tools-ready` → [`Terminals::wait_for_tools`],
//!   at most [`TOOLS_WAIT_MAX`] (the hook's own timeout is longer), and
//!   then until [`TOOLS_SETTLE`] after the listing: the CLI takes the list
//!   from the response while the hook's answer races it (with the hook
//!   released at the listing itself, the real CLI's first request still
//!   went out without the tools, `tests/mcp_ready_real.rs`).
//!
//! Codex connects its MCP servers before its first turn: its wait ends at
//! once.

use std::time::Duration;

use super::Terminals;

/// The longest a SessionStart hook waits for the agent's tool listing.
pub const TOOLS_WAIT_MAX: Duration = Duration::from_secs(20);
/// How long after the listing the hook is released.
pub const TOOLS_SETTLE: Duration = Duration::from_secs(1);

impl Terminals {
    /// `execution_id` of `task_id` listed its Harness tools over MCP.
    pub fn tools_listed(&self, task_id: &str, execution_id: &str) {
        self.inner.tools_listed.record(task_id, Some(execution_id));
    }

    /// Wait until `execution_id` of `task_id` has listed its Harness tools,
    /// at most `max` (capped at [`TOOLS_WAIT_MAX`]); whether it has.
    pub async fn wait_for_tools(&self, task_id: &str, execution_id: &str, max: Duration) -> bool {
        let listed = self
            .inner
            .tools_listed
            .wait(task_id, execution_id, max.min(TOOLS_WAIT_MAX))
            .await;
        match listed {
            Some(at) => tokio::time::sleep_until(at + TOOLS_SETTLE).await,
            None => tracing::warn!(
                task_id,
                execution_id,
                "the agent had not listed its Harness tools when its start-up hook gave up waiting; its first turn may lack them"
            ),
        }
        listed.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::super::ready::AgentSignals;
    use std::{sync::Arc, time::Duration};

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_wait_ends_at_its_executions_report_and_not_at_anothers() {
        let signals = Arc::new(AgentSignals::default());
        assert!(
            signals
                .wait("t1", "e1", Duration::from_millis(50))
                .await
                .is_none(),
            "nothing reported yet"
        );
        let waiter = {
            let signals = signals.clone();
            tokio::spawn(async move { signals.wait("t1", "e2", Duration::from_secs(10)).await })
        };
        // Another execution's report (an older one of the task) is not it.
        signals.record("t1", Some("e1"));
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!waiter.is_finished(), "woken by another execution's report");
        let started = std::time::Instant::now();
        signals.record("t1", Some("e2"));
        assert!(waiter.await.unwrap().is_some(), "the report ends the wait");
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(signals.wait("t1", "e2", Duration::ZERO).await.is_some());
    }
}
