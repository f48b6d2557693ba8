//! A live agent's recorded state (docs/agent-states.md): its name — the
//! core's `harness_core::agent_state::AgentState` without its details — and
//! how bad it is for a person ([`Severity`]). Reading the screen, the hooks
//! and the exit into a state is the core's.

use crate::macros::{plain_enum, string_enum};

string_enum!(
    /// The name of an agent's state: the `state` of its record and of the
    /// JSON, the `state` label of `harness_agents`, the key of a push's
    /// dedup.
    AgentStateName {
        /// Between a prompt and the end of its turn, with output recently.
        Working => "working",
        /// A person's answer is awaited: an open ask or approval, or a
        /// dialog of the CLI.
        WaitingForPerson => "waiting_for_person",
        /// The turn ended; the agent waits at its prompt.
        Idle => "idle",
        /// The account's usage limit is reached.
        UsageLimited => "usage_limited",
        /// API errors: the CLI retries, or gave up after them.
        Erroring => "erroring",
        /// Not logged in, or the credentials were refused.
        LoggedOut => "logged_out",
        /// Working by its hooks, but silent for the stall threshold.
        Stalled => "stalled",
        /// The process exited (with its code).
        Exited => "exited",
        /// The process was killed by a signal, or lost.
        Crashed => "crashed",
    }
);

plain_enum!(
    /// How bad an agent's state is, for its colour: `ok` (working), `wait`
    /// (a person's answer is awaited), `idle` (at rest, nothing wrong),
    /// `warn` (held up, may go on by itself), `bad` (stopped: a person is
    /// needed).
    Severity {
        Ok = "ok",
        Wait = "wait",
        Idle = "idle",
        Warn = "warn",
        Bad = "bad",
    }
);

impl AgentStateName {
    /// How bad this state is; `exit_code`: an exit's code (none or 0: a
    /// clean end), `gave_up`: the CLI stopped retrying its API errors.
    pub fn severity(self, exit_code: Option<i32>, gave_up: bool) -> Severity {
        match self {
            Self::Working => Severity::Ok,
            Self::WaitingForPerson => Severity::Wait,
            Self::Idle => Severity::Idle,
            Self::UsageLimited | Self::Stalled => Severity::Warn,
            Self::Erroring if gave_up => Severity::Bad,
            Self::Erroring => Severity::Warn,
            Self::LoggedOut | Self::Crashed => Severity::Bad,
            Self::Exited if exit_code.unwrap_or(0) == 0 => Severity::Idle,
            Self::Exited => Severity::Bad,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::macros::round_trip;

    #[test]
    fn texts_are_the_serde_names() {
        round_trip!(
            AgentStateName,
            [
                "working",
                "waiting_for_person",
                "idle",
                "usage_limited",
                "erroring",
                "logged_out",
                "stalled",
                "exited",
                "crashed",
            ]
        );
        for s in [
            Severity::Ok,
            Severity::Wait,
            Severity::Idle,
            Severity::Warn,
            Severity::Bad,
        ] {
            assert_eq!(Severity::parse(s.as_str()), Some(s));
            assert_eq!(
                serde_json::to_value(s).ok(),
                Some(serde_json::Value::from(s.as_str()))
            );
        }
    }

    #[test]
    fn severity_of_each_state() {
        use AgentStateName as N;
        assert_eq!(N::Working.severity(None, false), Severity::Ok);
        assert_eq!(N::WaitingForPerson.severity(None, false), Severity::Wait);
        assert_eq!(N::Idle.severity(None, false), Severity::Idle);
        assert_eq!(N::UsageLimited.severity(None, false), Severity::Warn);
        assert_eq!(N::Erroring.severity(None, false), Severity::Warn);
        assert_eq!(N::Erroring.severity(None, true), Severity::Bad);
        assert_eq!(N::LoggedOut.severity(None, false), Severity::Bad);
        assert_eq!(N::Stalled.severity(None, false), Severity::Warn);
        assert_eq!(N::Exited.severity(Some(0), false), Severity::Idle);
        assert_eq!(N::Exited.severity(None, false), Severity::Idle);
        assert_eq!(N::Exited.severity(Some(3), false), Severity::Bad);
        assert_eq!(N::Crashed.severity(Some(0), false), Severity::Bad);
    }
}
