//! The state machine: an observation of the screen plus the other inputs →
//! exactly one [`AgentState`]. Pure: the caller passes the clock.

use super::{AgentState, Observation};

/// Silence while working after which an agent is stalled (20 minutes).
pub const DEFAULT_STALL_AFTER: std::time::Duration = std::time::Duration::from_secs(20 * 60);

/// How the agent's process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    Code(i32),
    Signal(i32),
}

/// The agent's hook events that tell where its turn is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookEvent {
    /// A session started (with its prompt, or resumed).
    SessionStart,
    /// A prompt was submitted (a person's message, a delivery).
    UserPromptSubmit,
    /// A tool is about to run.
    PreToolUse,
    /// A tool ran.
    PostToolUse,
    /// The turn ended.
    Stop,
}

/// Everything the state is made of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inputs<'a> {
    /// The process's end, when it has ended.
    pub exit: Option<ExitStatus>,
    /// What the screen shows (the CLI's recogniser).
    pub observation: &'a Observation,
    /// The newest hook event of the current execution.
    pub last_hook: Option<HookEvent>,
    /// An ask or approval of this agent waits for a person.
    pub open_question: bool,
    /// Seconds since the terminal last printed anything.
    pub silent_secs: u64,
    /// Silence while working that counts as stalled
    /// ([`DEFAULT_STALL_AFTER`] unless configured).
    pub stall_after: std::time::Duration,
}

/// The one state of the agent. The order of the rules is the answer to
/// "which wins": an ended process; what the CLI itself says about its API or
/// login (it is what holds the agent now); a person awaited; a turn that
/// ended; silence beyond the threshold; else working.
pub fn state(i: &Inputs<'_>) -> AgentState {
    match i.exit {
        Some(ExitStatus::Code(code)) => return AgentState::Exited { code },
        Some(ExitStatus::Signal(signal)) => return AgentState::Crashed { signal },
        None => {}
    }
    match i.observation {
        Observation::LoggedOut => return AgentState::LoggedOut,
        Observation::UsageLimited { reset } => {
            return AgentState::UsageLimited {
                reset: reset.clone(),
            };
        }
        Observation::Erroring { kind, attempt, of } => {
            return AgentState::Erroring {
                kind: kind.clone(),
                attempt: *attempt,
                of: *of,
                gave_up: false,
            };
        }
        Observation::GaveUp { kind } => {
            return AgentState::Erroring {
                kind: kind.clone(),
                attempt: None,
                of: None,
                gave_up: true,
            };
        }
        Observation::NativeDialog { title, options } => {
            return AgentState::WaitingForPerson {
                dialog: Some((title.clone(), options.clone())),
            };
        }
        Observation::None => {}
    }
    if i.open_question {
        return AgentState::WaitingForPerson { dialog: None };
    }
    if i.last_hook == Some(HookEvent::Stop) {
        return AgentState::Idle;
    }
    if i.silent_secs >= i.stall_after.as_secs() {
        return AgentState::Stalled {
            silent_secs: i.silent_secs,
        };
    }
    AgentState::Working
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent_state::{ErrorKind, ResetTime};

    fn base(observation: &Observation) -> Inputs<'_> {
        Inputs {
            exit: None,
            observation,
            last_hook: Some(HookEvent::PreToolUse),
            open_question: false,
            silent_secs: 5,
            stall_after: DEFAULT_STALL_AFTER,
        }
    }

    #[test]
    fn working_between_a_prompt_and_its_stop() {
        let none = Observation::None;
        for hook in [
            None,
            Some(HookEvent::SessionStart),
            Some(HookEvent::UserPromptSubmit),
            Some(HookEvent::PreToolUse),
            Some(HookEvent::PostToolUse),
        ] {
            let i = Inputs {
                last_hook: hook,
                ..base(&none)
            };
            assert_eq!(state(&i), AgentState::Working, "{hook:?}");
        }
        let i = Inputs {
            last_hook: Some(HookEvent::Stop),
            ..base(&none)
        };
        assert_eq!(state(&i), AgentState::Idle);
    }

    #[test]
    fn exit_and_signal_win_over_everything() {
        let limit = Observation::UsageLimited { reset: None };
        let i = Inputs {
            exit: Some(ExitStatus::Code(1)),
            open_question: true,
            ..base(&limit)
        };
        assert_eq!(state(&i), AgentState::Exited { code: 1 });
        let i = Inputs {
            exit: Some(ExitStatus::Signal(9)),
            ..base(&limit)
        };
        assert_eq!(state(&i), AgentState::Crashed { signal: 9 });
        let none = Observation::None;
        let i = Inputs {
            exit: Some(ExitStatus::Code(0)),
            last_hook: Some(HookEvent::Stop),
            ..base(&none)
        };
        assert_eq!(state(&i), AgentState::Exited { code: 0 });
    }

    #[test]
    fn the_clis_own_report_wins_over_hooks_and_questions() {
        let reset = ResetTime::parse("9:57am");
        let cases = [
            (Observation::LoggedOut, AgentState::LoggedOut),
            (
                Observation::UsageLimited {
                    reset: reset.clone(),
                },
                AgentState::UsageLimited { reset },
            ),
            (
                Observation::Erroring {
                    kind: ErrorKind::Overloaded,
                    attempt: Some(3),
                    of: Some(10),
                },
                AgentState::Erroring {
                    kind: ErrorKind::Overloaded,
                    attempt: Some(3),
                    of: Some(10),
                    gave_up: false,
                },
            ),
            (
                Observation::GaveUp {
                    kind: ErrorKind::Network,
                },
                AgentState::Erroring {
                    kind: ErrorKind::Network,
                    attempt: None,
                    of: None,
                    gave_up: true,
                },
            ),
            (
                Observation::NativeDialog {
                    title: "Approaching rate limits".into(),
                    options: vec!["Switch".into(), "Keep".into()],
                },
                AgentState::WaitingForPerson {
                    dialog: Some((
                        "Approaching rate limits".into(),
                        vec!["Switch".into(), "Keep".into()],
                    )),
                },
            ),
        ];
        for (observation, want) in cases {
            // Also long silent, with a Stop and an open question: the screen wins.
            let i = Inputs {
                last_hook: Some(HookEvent::Stop),
                open_question: true,
                silent_secs: 3600,
                ..base(&observation)
            };
            assert_eq!(state(&i), want, "{observation:?}");
        }
    }

    #[test]
    fn an_open_question_is_waiting_not_stalled_or_idle() {
        let none = Observation::None;
        for hook in [Some(HookEvent::Stop), Some(HookEvent::PreToolUse)] {
            let i = Inputs {
                open_question: true,
                last_hook: hook,
                silent_secs: 7200,
                ..base(&none)
            };
            assert_eq!(state(&i), AgentState::WaitingForPerson { dialog: None });
        }
    }

    #[test]
    fn silence_while_working_is_a_stall_at_the_threshold() {
        let none = Observation::None;
        let at = |silent_secs: u64, hook: HookEvent| Inputs {
            silent_secs,
            last_hook: Some(hook),
            ..base(&none)
        };
        assert_eq!(
            state(&at(20 * 60 - 1, HookEvent::PreToolUse)),
            AgentState::Working
        );
        assert_eq!(
            state(&at(20 * 60, HookEvent::PreToolUse)),
            AgentState::Stalled {
                silent_secs: 20 * 60
            }
        );
        // Idle at the prompt for hours is idle, not stalled.
        assert_eq!(state(&at(5 * 3600, HookEvent::Stop)), AgentState::Idle);
        // A configured threshold.
        let i = Inputs {
            stall_after: std::time::Duration::from_secs(60),
            ..at(61, HookEvent::UserPromptSubmit)
        };
        assert_eq!(state(&i), AgentState::Stalled { silent_secs: 61 });
    }
}
