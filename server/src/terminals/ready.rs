//! When a just-(re)started agent accepts typed input. A resumed Claude Code
//! enables bracketed paste well before it draws anything or reads a key,
//! and under load its start-up is silent for seconds: text typed then (the
//! old "drawn or bracketed paste, then quiet" wait let it through) is
//! buffered and read with its Enter in one chunk — as a paste, so the text
//! sat unsent in the input box. For Claude Code the text waits for one of
//! these real signals:
//!
//! * the screen shows its input box: a prompt line (`❯`) right under a
//!   horizontal rule — not a `❯` line of the resumed transcript. The box is
//!   drawn by the component that reads the keys;
//! * its SessionStart hook (`startup|resume`, in the per-spawn settings)
//!   was reported by this execution (`POST /api/internal/hooks/session` →
//!   [`Terminals::session_started`]) and the screen is drawn — Claude Code
//!   runs the hook while it starts (it reads keys from then on);
//! * the screen is drawn and is not Claude Code's TUI at all (no "Claude
//!   Code" on it: a wrapper or a stand-in such as the agent double), whose
//!   drawn screen is all there is to go by.
//!
//! Other providers (Codex reports SessionStart only at its first turn, a
//! command has none) keep the drawn-screen wait ([`super::resume::wait_until_drawn`]).
//! Every wait is bounded ([`READY_MAX`]): then the text is typed anyway (the
//! delivery still waits for an input boundary) and the miss is logged.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use harness_core::model::Provider;
use harness_pty::PtySession;

use super::Terminals;

/// The longest wait for a restarted agent's readiness.
pub const READY_MAX: Duration = Duration::from_secs(20);

/// One kind of report seen per task: task → the reporting execution
/// (`None`: reported with the admin token, naming no execution) and when.
/// Used for SessionStart reports and for the agent's listing of its Harness
/// tools (`mcp_ready`). One entry per task, the newest report's.
#[derive(Default)]
pub(super) struct AgentSignals {
    seen: Mutex<HashMap<String, (Option<String>, tokio::time::Instant)>>,
    changed: tokio::sync::Notify,
}

impl AgentSignals {
    pub(super) fn record(&self, task_id: &str, execution_id: Option<&str>) {
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        seen.insert(
            task_id.to_string(),
            (
                execution_id.map(str::to_string),
                tokio::time::Instant::now(),
            ),
        );
        drop(seen);
        self.changed.notify_waiters();
    }

    /// When `execution_id` of `task_id` reported, if it has.
    pub(super) fn seen_at(
        &self,
        task_id: &str,
        execution_id: &str,
    ) -> Option<tokio::time::Instant> {
        let seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        seen.get(task_id)
            .filter(|(e, _)| e.as_deref().is_none_or(|e| e == execution_id))
            .map(|(_, at)| *at)
    }

    pub(super) fn seen(&self, task_id: &str, execution_id: &str) -> bool {
        self.seen_at(task_id, execution_id).is_some()
    }

    /// Wait until `execution_id` of `task_id` has reported, at most `max`;
    /// when it did.
    pub(super) async fn wait(
        &self,
        task_id: &str,
        execution_id: &str,
        max: Duration,
    ) -> Option<tokio::time::Instant> {
        let deadline = tokio::time::Instant::now() + max;
        loop {
            // Created before the check: a report in between still wakes it.
            let changed = self.changed.notified();
            if let Some(at) = self.seen_at(task_id, execution_id) {
                return Some(at);
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                return self.seen_at(task_id, execution_id);
            }
        }
    }
}

fn is_rule(line: &str) -> bool {
    line.chars().count() >= 10 && line.chars().all(|c| c == '─')
}

/// Whether Claude Code's input box is on `screen`: a prompt line right
/// under the box's top edge (`────` then `❯ …`; older versions: `╭───╮`
/// then `│ > …`).
pub fn claude_input_shown(screen: &str) -> bool {
    let lines: Vec<&str> = screen.lines().map(str::trim).collect();
    lines.windows(2).any(|w| {
        (is_rule(w[0]) && w[1].starts_with('❯'))
            || (w[0].starts_with('╭') && w[1].starts_with("│ >"))
    })
}

/// Whether Claude Code, showing `screen` (and having reported SessionStart
/// when `session_started`), reads typed keys (see the module doc).
pub fn claude_ready(screen: &str, session_started: bool) -> bool {
    let squeezed: String = screen
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_lowercase();
    if squeezed.is_empty() {
        return false;
    }
    claude_input_shown(screen) || session_started || !squeezed.contains("claudecode")
}

/// How a readiness wait ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readiness {
    /// The provider's signals were seen.
    Ready,
    /// The agent exited meanwhile.
    Exited,
    /// [`READY_MAX`] passed without them.
    TimedOut,
}

impl Terminals {
    /// A SessionStart report of `task_id`'s agent (its execution when the
    /// agent's own token reported it).
    pub fn session_started(&self, task_id: &str, execution_id: Option<&str>) {
        self.inner.starts.record(task_id, execution_id);
    }

    /// Wait (bounded) until the agent just started as `execution_id` for
    /// `task_id` accepts typed input (see the module doc).
    pub(super) async fn wait_until_ready(
        &self,
        task_id: &str,
        execution_id: &str,
        provider: Provider,
        session: &Arc<PtySession>,
    ) -> Readiness {
        if provider != Provider::Claude {
            super::resume::wait_until_drawn(session).await;
            return if session.has_exited() {
                Readiness::Exited
            } else {
                Readiness::Ready
            };
        }
        let starts = &self.inner.starts;
        let deadline = tokio::time::Instant::now() + READY_MAX;
        loop {
            let changed = starts.changed.notified();
            session.sync_model().await;
            let hook = starts.seen(task_id, execution_id);
            let screen = session.screen_text().text;
            if claude_ready(&screen, hook) {
                tracing::debug!(task_id, execution_id, "the restarted agent accepts input");
                return Readiness::Ready;
            }
            if session.has_exited() {
                return Readiness::Exited;
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                tracing::warn!(
                    task_id,
                    execution_id,
                    session_start_seen = hook,
                    input_box_shown = claude_input_shown(&screen),
                    "the restarted agent showed no readiness in time; typing anyway"
                );
                return Readiness::TimedOut;
            }
            // Woken by a SessionStart report, else polled for the screen.
            let tick = Duration::from_millis(100).min(deadline - now);
            let _ = tokio::time::timeout(tick, changed).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_input_box_is_a_prompt_under_a_rule_not_a_transcript_line() {
        let rule = "─".repeat(40);
        let ready = format!(
            " ▐▛███▛█   Claude Code v2.1.332\n\n❯ earlier question\n  ⎿ answer\n\n{rule}\n❯ \n{rule}\n  ⏵⏵ bypass permissions on"
        );
        assert!(claude_input_shown(&ready));
        let transcript_only = " ▐▛███▛█   Claude Code v2.1.332\n\n❯ earlier question\n  ⎿ answer\n";
        assert!(!claude_input_shown(transcript_only));
        assert!(!claude_input_shown(""));
        assert!(claude_input_shown(
            "╭──────────────╮\n│ > Try \"fix lint\" │\n╰──────────────╯"
        ));
    }

    #[test]
    fn claude_code_is_ready_at_its_input_box_or_its_session_start_and_a_stand_in_when_drawn() {
        let rule = "─".repeat(40);
        let banner = " ▐▛███▛█   Claude Code v2.1.332\n ▝▝   ▝▝   /work\n";
        assert!(!claude_ready("", true), "nothing drawn yet");
        assert!(!claude_ready("  \n ", false));
        assert!(
            !claude_ready(banner, false),
            "the header without its input box"
        );
        assert!(claude_ready(banner, true), "drawn after its SessionStart");
        assert!(claude_ready(
            &format!("{banner}\n{rule}\n❯ \n{rule}\n"),
            false
        ));
        assert!(
            claude_ready(
                "harness-agent-double 0.1.0 session s1\nRESUMED s1\n> ",
                false
            ),
            "not Claude Code's TUI: drawn is enough"
        );
    }

    #[test]
    fn a_report_counts_for_its_own_execution_or_any_when_it_names_none() {
        let s = AgentSignals::default();
        assert!(!s.seen("t1", "e1"));
        s.record("t1", Some("e0"));
        assert!(!s.seen("t1", "e1"), "an earlier execution's report");
        s.record("t1", Some("e1"));
        assert!(s.seen("t1", "e1"));
        s.record("t2", None);
        assert!(s.seen("t2", "e9"));
    }
}
