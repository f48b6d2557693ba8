//! A task and its agent runs: the stored statuses, the status a person sees
//! (`RunState`), what a person can do with the agent (`Action`) and why an
//! action is not possible now (`Blocked`). The rules that derive them are
//! the core's (`harness_core::control`).

use serde::{Deserialize, Serialize};

use crate::macros::string_enum;

string_enum!(
    /// Lifecycle of a task as a unit of work.
    TaskStatus { Todo => "TODO", InProgress => "IN_PROGRESS", InReview => "IN_REVIEW", Done => "DONE", Cancelled => "CANCELLED" }
);
string_enum!(
    /// Lifecycle of one agent run of a task.
    ExecutionStatus { Running => "RUNNING", Paused => "PAUSED", Completed => "COMPLETED", Failed => "FAILED", Stopped => "STOPPED" }
);
string_enum!(
    /// Which agent CLI runs a task.
    Provider { Claude => "claude", Codex => "codex", Command => "command" }
);

impl ExecutionStatus {
    /// A live run: its agent runs, or is parked on a question.
    pub fn is_live(self) -> bool {
        matches!(self, Self::Running | Self::Paused)
    }
}

/// What a person sees as a task's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunState {
    /// No agent run yet.
    NotStarted,
    Running,
    /// The agent asked and waits for a reply.
    Waiting,
    /// The last run exited with code 0.
    Finished,
    /// The last run failed (exit code when known; none: lost or interrupted).
    Failed,
    /// The last run was stopped by a person (or superseded by a new start).
    Stopped,
}

impl RunState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NotStarted => "not_started",
            Self::Running => "running",
            Self::Waiting => "waiting",
            Self::Finished => "finished",
            Self::Failed => "failed",
            Self::Stopped => "stopped",
        }
    }
}

/// What a person can do with a task's agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Start,
    Stop,
    Restart,
    Resume,
}

impl Action {
    pub const ALL: [Action; 4] = [Self::Start, Self::Stop, Self::Restart, Self::Resume];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Start => "start",
            Self::Stop => "stop",
            Self::Restart => "restart",
            Self::Resume => "resume",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|a| a.as_str() == text)
    }
}

/// Why an action is not possible now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Blocked {
    /// The agent is running (or parked on a question): stop it first.
    Running,
    /// There is no running agent to stop.
    NotRunning,
    /// Never started: nothing to restart.
    NeverStarted,
    /// No session id was recorded: the provider session cannot be resumed.
    NoSession,
}

impl Blocked {
    /// Stable code (the UI translates it).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::NotRunning => "not_running",
            Self::NeverStarted => "never_started",
            Self::NoSession => "no_session",
        }
    }

    /// English text for API clients.
    pub fn message(self) -> &'static str {
        match self {
            Self::Running => "the task's agent is already running",
            Self::NotRunning => "the task's agent is not running",
            Self::NeverStarted => "the task's agent never ran: start it",
            Self::NoSession => "no session id is known for this task: it cannot be resumed",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_the_serde_names() {
        for s in [
            RunState::NotStarted,
            RunState::Running,
            RunState::Waiting,
            RunState::Finished,
            RunState::Failed,
            RunState::Stopped,
        ] {
            assert_eq!(
                serde_json::to_value(s).ok(),
                Some(serde_json::Value::from(s.as_str()))
            );
        }
        for a in Action::ALL {
            assert_eq!(Action::parse(a.as_str()), Some(a));
            assert_eq!(
                serde_json::to_value(a).ok(),
                Some(serde_json::Value::from(a.as_str()))
            );
        }
        for b in [
            Blocked::Running,
            Blocked::NotRunning,
            Blocked::NeverStarted,
            Blocked::NoSession,
        ] {
            assert_eq!(
                serde_json::to_value(b).ok(),
                Some(serde_json::Value::from(b.as_str()))
            );
        }
        assert_eq!(
            serde_json::to_string(&TaskStatus::InProgress)
                .ok()
                .as_deref(),
            Some("\"IN_PROGRESS\"")
        );
        assert_eq!(
            ExecutionStatus::parse("PAUSED"),
            Some(ExecutionStatus::Paused)
        );
        assert!(ExecutionStatus::Paused.is_live() && !ExecutionStatus::Stopped.is_live());
    }
}
