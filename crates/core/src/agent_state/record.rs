//! What is stored of a state change, and the state in words: the one rule
//! from a [`StateChange`] to an [`AgentStateRecord`] (its reason, e.g.
//! "usage limit reached; resets 9:57am (UTC)", "API overloaded (529),
//! attempt 3 of 10"), and back to the state it records. Pure.

use chrono::{DateTime, Utc};

use super::{AgentState, ErrorKind, ResetTime, StateChange, reason};
use crate::model::{AgentStateName, AgentStateRecord};

/// The record of `change`, written at `change.at` (`since` is kept by the
/// store while the state's name stays the same).
pub fn record_of(change: &StateChange) -> AgentStateRecord {
    let mut r = AgentStateRecord {
        execution_id: change.execution_id.clone(),
        task_id: change.task_id.clone(),
        state: change.state.name(),
        reason: reason(&change.state),
        lines: change.lines.clone(),
        since: change.at,
        error_kind: None,
        attempt: None,
        attempt_of: None,
        gave_up: false,
        reset_text: None,
        reset_at: None,
        exit_code: None,
        signal: None,
        silent_secs: None,
        dialog_title: None,
        dialog_options: Vec::new(),
        updated_at: change.at,
    };
    match &change.state {
        AgentState::Working | AgentState::Idle | AgentState::LoggedOut => {}
        AgentState::WaitingForPerson { dialog } => {
            if let Some((title, options)) = dialog {
                r.dialog_title = Some(title.clone());
                r.dialog_options = options.clone();
            }
        }
        AgentState::UsageLimited { reset } => {
            r.reset_text = reset.as_ref().map(|t| t.text.clone());
            r.reset_at = change.reset_at;
        }
        AgentState::Erroring {
            kind,
            attempt,
            of,
            gave_up,
        } => {
            r.error_kind = Some(kind_name(kind));
            r.attempt = *attempt;
            r.attempt_of = *of;
            r.gave_up = *gave_up;
        }
        AgentState::Stalled { silent_secs } => r.silent_secs = Some(*silent_secs),
        AgentState::Exited { code } => r.exit_code = Some(*code),
        AgentState::Crashed { signal } => r.signal = Some(*signal),
    }
    r
}

/// The instant a usage limit's printed reset time names, after `now`, in
/// the zone the CLI printed or else this machine's (`None`: no time shown).
pub fn reset_at(state: &AgentState, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let AgentState::UsageLimited { reset: Some(reset) } = state else {
        return None;
    };
    let ts = jiff::Timestamp::from_millisecond(now.timestamp_millis()).ok()?;
    let zoned = ts.to_zoned_datetime(jiff::tz::TimeZone::system());
    let at = reset.next_after(&zoned)?;
    DateTime::from_timestamp_millis(at.timestamp().as_millisecond())
}

/// The state a record holds.
pub fn state_of(r: &AgentStateRecord) -> AgentState {
    match r.state {
        AgentStateName::Working => AgentState::Working,
        AgentStateName::WaitingForPerson => AgentState::WaitingForPerson {
            dialog: r
                .dialog_title
                .clone()
                .map(|t| (t, r.dialog_options.clone())),
        },
        AgentStateName::Idle => AgentState::Idle,
        AgentStateName::UsageLimited => AgentState::UsageLimited {
            reset: r.reset_text.as_deref().and_then(ResetTime::parse),
        },
        AgentStateName::Erroring => AgentState::Erroring {
            kind: r
                .error_kind
                .as_deref()
                .map_or(ErrorKind::Other(String::new()), kind_from),
            attempt: r.attempt,
            of: r.attempt_of,
            gave_up: r.gave_up,
        },
        AgentStateName::LoggedOut => AgentState::LoggedOut,
        AgentStateName::Stalled => AgentState::Stalled {
            silent_secs: r.silent_secs.unwrap_or(0),
        },
        AgentStateName::Exited => AgentState::Exited {
            code: r.exit_code.unwrap_or(0),
        },
        AgentStateName::Crashed => AgentState::Crashed {
            signal: r.signal.unwrap_or(0),
        },
    }
}

/// Whether going from `previous` to `next` is a change to record: another
/// state, or the same one with other details — except the seconds of a
/// stall, which grow by themselves, and a usage limit read again with its
/// reset at the same time of day but fewer words (a narrower terminal
/// wraps the zone onto a row of its own): only a new or another reset time
/// is a change of a usage limit.
pub fn is_change(previous: Option<&AgentState>, next: &AgentState) -> bool {
    match (previous, next) {
        (None, _) => true,
        (Some(AgentState::Stalled { .. }), AgentState::Stalled { .. }) => false,
        (
            Some(AgentState::UsageLimited { reset: before }),
            AgentState::UsageLimited { reset: now },
        ) => match (before, now) {
            (Some(b), Some(n)) => (b.hour, b.minute) != (n.hour, n.minute),
            (None, Some(_)) => true,
            (_, None) => false,
        },
        (Some(p), n) => p != n,
    }
}

/// An error kind as stored: `overloaded`, `rate_limited`,
/// `server_<status>`, `network`, `other: <words>`.
pub fn kind_name(kind: &ErrorKind) -> String {
    match kind {
        ErrorKind::Overloaded => "overloaded".into(),
        ErrorKind::RateLimited => "rate_limited".into(),
        ErrorKind::Server(status) => format!("server_{status}"),
        ErrorKind::Network => "network".into(),
        ErrorKind::Other(words) => format!("other: {words}"),
    }
}

fn kind_from(text: &str) -> ErrorKind {
    match text {
        "overloaded" => ErrorKind::Overloaded,
        "rate_limited" => ErrorKind::RateLimited,
        "network" => ErrorKind::Network,
        _ => match text.strip_prefix("server_").and_then(|s| s.parse().ok()) {
            Some(status) => ErrorKind::Server(status),
            None => ErrorKind::Other(text.strip_prefix("other: ").unwrap_or(text).into()),
        },
    }
}

/// The name of a signal ("SIGKILL"), when it is a common one.
pub(super) fn signal_name(signal: i32) -> Option<&'static str> {
    Some(match signal {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        _ => return None,
    })
}

/// A process's end from its exit code: 128 + n (n a signal, 1…31) is how
/// a shell and the agents' isolation launcher (`harness_pty::isolate`)
/// report a child killed by signal n — a crash; any other code an exit.
pub fn exit_of_code(code: i32) -> super::ExitStatus {
    match code {
        129..=159 => super::ExitStatus::Signal(code - 128),
        _ => super::ExitStatus::Code(code),
    }
}

/// The number of a signal from the words a process's end was reported
/// with ("Killed", "Terminated", "signal 9", "SIGKILL"); `None` when they
/// name no signal (a lost status).
pub fn signal_number(words: &str) -> Option<i32> {
    let w = words.trim();
    if let Some(n) = w
        .strip_prefix("signal ")
        .and_then(|n| n.trim().parse::<i32>().ok())
    {
        return Some(n);
    }
    let upper = w.to_ascii_uppercase();
    if let Some(n) = (1..=31).find(|&n| signal_name(n) == Some(upper.as_str())) {
        return Some(n);
    }
    // strsignal(3)'s words, as portable-pty and the holder report them.
    Some(match w {
        "Hangup" => 1,
        "Interrupt" => 2,
        "Quit" => 3,
        "Illegal instruction" => 4,
        "Aborted" => 6,
        "Bus error" => 7,
        "Floating point exception" => 8,
        "Killed" => 9,
        "Segmentation fault" => 11,
        "Broken pipe" => 13,
        "Alarm clock" => 14,
        "Terminated" => 15,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(state: AgentState) -> StateChange {
        StateChange {
            task_id: "t".into(),
            execution_id: "e".into(),
            previous: None,
            state,
            lines: vec!["✻ 529 Overloaded · retrying in 2s · attempt 3/10".into()],
            reset_at: None,
            at: Utc::now(),
        }
    }

    #[test]
    fn a_record_holds_the_details_and_gives_its_state_back() {
        let states = [
            AgentState::Working,
            AgentState::WaitingForPerson { dialog: None },
            AgentState::WaitingForPerson {
                dialog: Some(("Which colour?".into(), vec!["Red".into(), "Blue".into()])),
            },
            AgentState::Idle,
            AgentState::UsageLimited {
                reset: ResetTime::parse("12:26pm (UTC)"),
            },
            AgentState::UsageLimited { reset: None },
            AgentState::Erroring {
                kind: ErrorKind::Overloaded,
                attempt: Some(3),
                of: Some(10),
                gave_up: false,
            },
            AgentState::Erroring {
                kind: ErrorKind::Server(503),
                attempt: None,
                of: None,
                gave_up: true,
            },
            AgentState::Erroring {
                kind: ErrorKind::Other("API error".into()),
                attempt: Some(1),
                of: None,
                gave_up: false,
            },
            AgentState::LoggedOut,
            AgentState::Stalled { silent_secs: 1201 },
            AgentState::Exited { code: 3 },
            AgentState::Crashed { signal: 9 },
        ];
        for state in states {
            let r = record_of(&change(state.clone()));
            assert_eq!(r.state, state.name());
            assert_eq!(r.reason, reason(&state));
            assert_eq!(r.lines.len(), 1);
            assert_eq!(state_of(&r), state.clone(), "{r:?}");
        }
        let r = record_of(&change(AgentState::Erroring {
            kind: ErrorKind::Overloaded,
            attempt: Some(3),
            of: Some(10),
            gave_up: false,
        }));
        assert_eq!(
            (r.error_kind.as_deref(), r.attempt, r.attempt_of, r.gave_up),
            (Some("overloaded"), Some(3), Some(10), false)
        );
    }

    #[test]
    fn a_change_is_another_state_or_other_details_but_a_longer_stall() {
        let stalled = AgentState::Stalled { silent_secs: 1200 };
        assert!(is_change(None, &AgentState::Working));
        assert!(!is_change(Some(&AgentState::Working), &AgentState::Working));
        assert!(is_change(Some(&AgentState::Working), &stalled));
        assert!(!is_change(
            Some(&stalled),
            &AgentState::Stalled { silent_secs: 1500 }
        ));
        let attempt = |a| AgentState::Erroring {
            kind: ErrorKind::Overloaded,
            attempt: Some(a),
            of: Some(10),
            gave_up: false,
        };
        assert!(is_change(Some(&attempt(3)), &attempt(4)));
        // A usage limit: only a new or another reset time is a change.
        let limited = |text: &str, hour, zone: Option<&str>| AgentState::UsageLimited {
            reset: Some(ResetTime {
                text: text.into(),
                hour,
                minute: 26,
                zone: zone.map(str::to_string),
            }),
        };
        let full = limited("12:26pm (UTC)", 12, Some("UTC"));
        assert!(!is_change(Some(&full), &limited("12:26pm", 12, None)));
        assert!(is_change(
            Some(&full),
            &limited("1:26pm (UTC)", 13, Some("UTC"))
        ));
        let unknown = AgentState::UsageLimited { reset: None };
        assert!(is_change(Some(&unknown), &full));
        assert!(!is_change(Some(&full), &unknown));
    }

    #[test]
    fn a_printed_reset_names_the_next_instant() {
        let now = DateTime::parse_from_rfc3339("2026-12-05T12:25:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let limited = AgentState::UsageLimited {
            reset: ResetTime::parse("12:26pm (UTC)"),
        };
        assert_eq!(
            reset_at(&limited, now).map(|t| t.to_rfc3339()),
            Some("2026-12-05T12:26:00+00:00".into())
        );
        assert_eq!(
            reset_at(&AgentState::UsageLimited { reset: None }, now),
            None
        );
    }

    #[test]
    fn a_code_of_128_plus_a_signal_is_that_signal() {
        use super::super::ExitStatus;
        assert_eq!(exit_of_code(137), ExitStatus::Signal(9));
        assert_eq!(exit_of_code(143), ExitStatus::Signal(15));
        assert_eq!(exit_of_code(3), ExitStatus::Code(3));
        assert_eq!(exit_of_code(128), ExitStatus::Code(128));
        assert_eq!(exit_of_code(255), ExitStatus::Code(255));
    }

    #[test]
    fn signals_from_the_words_of_an_end() {
        assert_eq!(signal_number("Killed"), Some(9));
        assert_eq!(signal_number("Terminated"), Some(15));
        assert_eq!(signal_number("signal 10"), Some(10));
        assert_eq!(signal_number("SIGSEGV"), Some(11));
        assert_eq!(signal_number("the agent's holder is gone"), None);
    }
}
