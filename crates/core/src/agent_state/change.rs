//! A change of a live agent's state, as the watcher reports it: the one
//! value that passes from the detection (the server's watcher over the
//! terminal, the hooks and the exit) to what follows it (the record, the
//! push to the person, the automatic recovery). Pure data.

use chrono::{DateTime, Utc};

use super::AgentState;
use crate::model::AgentStateName;

/// One execution's state changed from `previous` to `state` at `at`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateChange {
    pub task_id: String,
    pub execution_id: String,
    /// The state before (`None`: the first one the watcher saw for this
    /// execution, e.g. after a restart of the server).
    pub previous: Option<AgentState>,
    pub state: AgentState,
    /// The screen lines that show the state (the CLI's own status lines,
    /// at most [`MAX_EVIDENCE_LINES`]); for an exit or a stall, which no
    /// status line shows, the last lines of the screen (empty when there is
    /// no screen: an exit found after a restart).
    pub lines: Vec<String>,
    /// For [`AgentState::UsageLimited`] with a printed reset time: the
    /// instant it names (`ResetTime::next_after` from the time of the
    /// change).
    pub reset_at: Option<DateTime<Utc>>,
    pub at: DateTime<Utc>,
}

/// The most screen lines a change carries as its evidence.
pub const MAX_EVIDENCE_LINES: usize = 8;

impl AgentState {
    /// The state's stable name: the `state` label of `harness_agents`, the
    /// `state` of the JSON, the key of a push's dedup.
    pub fn name(&self) -> AgentStateName {
        match self {
            AgentState::Working => AgentStateName::Working,
            AgentState::WaitingForPerson { .. } => AgentStateName::WaitingForPerson,
            AgentState::Idle => AgentStateName::Idle,
            AgentState::UsageLimited { .. } => AgentStateName::UsageLimited,
            AgentState::Erroring { .. } => AgentStateName::Erroring,
            AgentState::LoggedOut => AgentStateName::LoggedOut,
            AgentState::Stalled { .. } => AgentStateName::Stalled,
            AgentState::Exited { .. } => AgentStateName::Exited,
            AgentState::Crashed { .. } => AgentStateName::Crashed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_state_has_its_own_name() {
        let states = [
            AgentState::Working,
            AgentState::WaitingForPerson { dialog: None },
            AgentState::Idle,
            AgentState::UsageLimited { reset: None },
            AgentState::Erroring {
                kind: super::super::ErrorKind::Network,
                attempt: None,
                of: None,
                gave_up: false,
            },
            AgentState::LoggedOut,
            AgentState::Stalled { silent_secs: 1 },
            AgentState::Exited { code: 0 },
            AgentState::Crashed { signal: 9 },
        ];
        let names: Vec<_> = states.iter().map(AgentState::name).collect();
        assert_eq!(names, AgentStateName::ALL);
    }
}
