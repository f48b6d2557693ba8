//! One truthful state per live agent (`docs/agent-states.md`).
//!
//! Two halves, both pure:
//! - the screen side: a recogniser per CLI ([`claude::observe`],
//!   [`codex::observe`]) reads the terminal screen the way the CLI lays it
//!   out and reports what the CLI itself says about its model API (an
//!   [`Observation`]). Only the CLI's own status lines, at the place the CLI
//!   draws them, count: the agent's text in the conversation never does.
//! - the state machine ([`state`]): an observation, the process's exit, the
//!   agent's hook events, an open question and the time of the last output
//!   become exactly one [`AgentState`].
//!
//! The recognised lines come from screens recorded from the real CLIs
//! (`crates/core/tests/fixtures/agent_screens/`).
//!
//! After a change: [`record_of`] is what is stored (the reason in words),
//! [`told::after_change`] what is said and to whom.

mod change;
pub mod claude;
pub mod codex;
mod machine;
mod reason_words;
mod record;
mod screen;
mod time;
pub mod told;
mod unsent;

pub use change::{MAX_EVIDENCE_LINES, StateChange};
pub use machine::{DEFAULT_STALL_AFTER, ExitStatus, HookEvent, Inputs, Turn, notification, state};
pub use reason_words::{reason, reason_in, reset_words};
pub use record::{exit_of_code, is_change, record_of, reset_at, signal_number, state_of};
pub use screen::Screen;
pub use time::ResetTime;
pub use unsent::{Typed, holds_unsent, shows_input_box, typed_state};

/// Which CLI drew a screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cli {
    Claude,
    Codex,
}

impl Cli {
    /// The CLI a provider runs (a `command` agent has none: no recogniser,
    /// no input box).
    pub fn of(provider: crate::model::Provider) -> Option<Self> {
        match provider {
            crate::model::Provider::Claude => Some(Self::Claude),
            crate::model::Provider::Codex => Some(Self::Codex),
            crate::model::Provider::Command => None,
        }
    }
}

/// What a recogniser read on a screen.
pub fn observe(cli: Cli, screen: &Screen) -> Observation {
    recognise(cli, screen).observation
}

/// What a recogniser read on a screen, with the CLI's own rows that show it.
pub fn recognise(cli: Cli, screen: &Screen) -> Seen {
    match cli {
        Cli::Claude => claude::recognise(screen),
        Cli::Codex => codex::recognise(screen),
    }
}

/// An observation and its evidence: the CLI's own rows it was read from,
/// top to bottom, trimmed, at most [`MAX_EVIDENCE_LINES`] (the last ones
/// when there are more). Empty for [`Observation::None`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub observation: Observation,
    pub lines: Vec<String>,
}

impl Seen {
    /// The rows of `screen` at `rows` (any order, repeats allowed) as the
    /// evidence of `observation`; blank rows are left out.
    pub(crate) fn from_rows(
        screen: &Screen,
        observation: Observation,
        mut rows: Vec<usize>,
    ) -> Self {
        if observation == Observation::None {
            rows.clear();
        }
        rows.sort_unstable();
        rows.dedup();
        let mut lines: Vec<String> = rows
            .into_iter()
            .map(|i| screen.row(i).trim().to_string())
            .filter(|l| !l.is_empty())
            .collect();
        if lines.len() > MAX_EVIDENCE_LINES {
            lines.drain(..lines.len() - MAX_EVIDENCE_LINES);
        }
        Self { observation, lines }
    }
}

/// A dialog of the CLI itself on `screen` (its title and options), also
/// when another observation wins: Codex draws its rate-limit dialog
/// together with its usage-limit cell, and the dialog takes the keys typed
/// into the terminal until it is answered.
pub fn dialog(cli: Cli, screen: &Screen) -> Option<(String, Vec<String>)> {
    let found = match cli {
        Cli::Claude => claude::dialog(screen).map(|(found, _)| found),
        Cli::Codex => codex::dialog(screen).map(|(_, found, _)| found),
    };
    match found {
        Some(Observation::NativeDialog { title, options }) => Some((title, options)),
        _ => None,
    }
}

/// What kind of API failure the CLI reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// 529 / "overloaded".
    Overloaded,
    /// A 429 that is not a usage limit (requests or tokens per minute).
    RateLimited,
    /// Any other 5xx.
    Server(u16),
    /// The connection failed or was cut (reset, refused, stream closed).
    Network,
    /// Any other failure, as the CLI worded it.
    Other(String),
}

/// What the CLI's own status lines say, or [`Observation::None`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Observation {
    /// Nothing the CLI reports about its API: the agent works or waits as
    /// its hooks say.
    None,
    /// The account's usage limit is reached; `reset` when the CLI printed
    /// when it lifts.
    UsageLimited { reset: Option<ResetTime> },
    /// The CLI is retrying its API: `attempt` of `of` when it shows them.
    Erroring {
        kind: ErrorKind,
        attempt: Option<u32>,
        of: Option<u32>,
    },
    /// The CLI stopped retrying after an error and waits at its prompt.
    GaveUp { kind: ErrorKind },
    /// The CLI is not logged in (or its credentials were refused).
    LoggedOut,
    /// A dialog of the CLI itself waits for a key (a menu with options).
    NativeDialog { title: String, options: Vec<String> },
}

/// The one state of a live agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentState {
    /// Between a prompt and the end of its turn, with output recently.
    Working,
    /// A person's answer is awaited: an open ask or approval, or a dialog of
    /// the CLI (`dialog`: its title and options).
    WaitingForPerson {
        dialog: Option<(String, Vec<String>)>,
    },
    /// The turn ended; the agent waits at its prompt.
    Idle,
    /// The account's usage limit; `reset` when the CLI printed it.
    UsageLimited { reset: Option<ResetTime> },
    /// API errors: retrying (`gave_up` false, with the attempt count when
    /// shown) or stopped after them (`gave_up` true).
    Erroring {
        kind: ErrorKind,
        attempt: Option<u32>,
        of: Option<u32>,
        gave_up: bool,
    },
    /// Not logged in, or the credentials were refused.
    LoggedOut,
    /// Working by its hooks, but silent for `silent_secs` (at least the
    /// stall threshold).
    Stalled { silent_secs: u64 },
    /// The process exited with this code.
    Exited { code: i32 },
    /// The process was killed by this signal.
    Crashed { signal: i32 },
}

/// The HTTP status at the start of `text` ("529 Overloaded", "429 …") or
/// inside it ("(429)", "status 529"), as a kind.
pub(crate) fn kind_of(text: &str) -> ErrorKind {
    let lower = text.to_lowercase();
    let status = status_in(text);
    if status == Some(529) || lower.contains("overloaded") {
        return ErrorKind::Overloaded;
    }
    match status {
        Some(429) => ErrorKind::RateLimited,
        Some(s @ 500..=599) => ErrorKind::Server(s),
        _ if [
            "connection",
            "econnreset",
            "econnrefused",
            "network",
            "stream disconnected",
            "socket",
            "timed out",
            "timeout",
            "fetch failed",
        ]
        .iter()
        .any(|n| lower.contains(n)) =>
        {
            ErrorKind::Network
        }
        _ => ErrorKind::Other(text.trim().to_string()),
    }
}

/// The first three-digit HTTP status (400..=599) standing alone in `text`.
fn status_in(text: &str) -> Option<u16> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i + 3 <= bytes.len() {
        let alone_before = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
        let alone_after = i + 3 == bytes.len() || !bytes[i + 3].is_ascii_alphanumeric();
        if alone_before
            && alone_after
            && bytes[i..i + 3].iter().all(u8::is_ascii_digit)
            && let Ok(n) = text[i..i + 3].parse::<u16>()
            && (400..=599).contains(&n)
        {
            return Some(n);
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_from_the_clis_wording() {
        assert_eq!(kind_of("529 Overloaded"), ErrorKind::Overloaded);
        assert_eq!(
            kind_of("Request rejected (429) · too many tokens"),
            ErrorKind::RateLimited
        );
        assert_eq!(
            kind_of("unexpected status 500 Internal Server Error"),
            ErrorKind::Server(500)
        );
        assert_eq!(
            kind_of("Connection to the API was lost (ECONNRESET)"),
            ErrorKind::Network
        );
        assert_eq!(
            kind_of("port 14290 is busy"),
            ErrorKind::Other("port 14290 is busy".into())
        );
    }
}
