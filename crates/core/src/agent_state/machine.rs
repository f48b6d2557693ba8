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
    /// The CLI asks the person for something and waits (Claude Code's
    /// Notification hook: a permission prompt, an MCP server's question).
    NeedsPerson,
    /// The CLI has waited at its prompt for input for a while (Claude
    /// Code's Notification hook, `idle_prompt`): the turn is over.
    IdlePrompt,
}

/// Where an agent's turn is, by its newest hook event: what the server
/// keeps across a restart when it changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Turn {
    /// Between a prompt and its end.
    Working,
    /// The CLI waits for the person's answer.
    WaitingForPerson,
    /// The turn ended; the CLI waits at its prompt.
    Ended,
}

impl HookEvent {
    /// Where the turn is after this event.
    pub fn turn(self) -> Turn {
        match self {
            Self::Stop | Self::IdlePrompt => Turn::Ended,
            Self::NeedsPerson => Turn::WaitingForPerson,
            Self::SessionStart | Self::UserPromptSubmit | Self::PreToolUse | Self::PostToolUse => {
                Turn::Working
            }
        }
    }
}

/// Claude Code's Notification hook as an event, from its
/// `notification_type` (else, from CLIs that send none, its message): a
/// permission prompt or an MCP server's question wait for the person;
/// `idle_prompt` (sent after the CLI waited at its prompt for a while) is
/// a turn that ended. Any other notification (`auth_success`, an answered
/// question) says nothing of the turn: `None`.
pub fn notification(kind: Option<&str>, message: Option<&str>) -> Option<HookEvent> {
    match kind.map(str::trim).filter(|k| !k.is_empty()) {
        Some("permission_prompt" | "elicitation_dialog") => Some(HookEvent::NeedsPerson),
        Some("idle_prompt") => Some(HookEvent::IdlePrompt),
        Some(_) => None,
        None => {
            let m = message.unwrap_or_default().to_lowercase();
            if m.contains("needs your permission") || m.contains("needs your approval") {
                Some(HookEvent::NeedsPerson)
            } else if m.contains("waiting for your input") {
                Some(HookEvent::IdlePrompt)
            } else {
                None
            }
        }
    }
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
    match i.last_hook.map(HookEvent::turn) {
        Some(Turn::Ended) => return AgentState::Idle,
        // The CLI's own question (a permission prompt): waiting, never
        // stalled, however long the person takes.
        Some(Turn::WaitingForPerson) => return AgentState::WaitingForPerson { dialog: None },
        Some(Turn::Working) | None => {}
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
    fn the_clis_notifications() {
        let none = Observation::None;
        // A permission prompt waits for the person, not stalled after an hour.
        let i = Inputs {
            last_hook: Some(HookEvent::NeedsPerson),
            silent_secs: 3600,
            ..base(&none)
        };
        assert_eq!(state(&i), AgentState::WaitingForPerson { dialog: None });
        let i = Inputs {
            last_hook: Some(HookEvent::IdlePrompt),
            silent_secs: 3600,
            ..base(&none)
        };
        assert_eq!(state(&i), AgentState::Idle);
        // What the screen says still comes first.
        let limited = Observation::UsageLimited { reset: None };
        let i = Inputs {
            last_hook: Some(HookEvent::NeedsPerson),
            ..base(&limited)
        };
        assert_eq!(state(&i), AgentState::UsageLimited { reset: None });
        for (kind, message, event) in [
            (
                Some("permission_prompt"),
                None,
                Some(HookEvent::NeedsPerson),
            ),
            (
                Some("elicitation_dialog"),
                None,
                Some(HookEvent::NeedsPerson),
            ),
            (Some("idle_prompt"), None, Some(HookEvent::IdlePrompt)),
            (Some("auth_success"), None, None),
            (
                None,
                Some("Claude needs your permission to use Bash"),
                Some(HookEvent::NeedsPerson),
            ),
            (
                None,
                Some("Claude is waiting for your input"),
                Some(HookEvent::IdlePrompt),
            ),
            (Some(""), Some("something else"), None),
        ] {
            assert_eq!(notification(kind, message), event, "{kind:?} {message:?}");
        }
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
