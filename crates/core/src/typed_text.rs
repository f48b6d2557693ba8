//! Text that Harness types into an agent's terminal is read by the agent's
//! CLI as text, never as a command or a key.
//!
//! The agent CLIs treat some input as commands, not as a message to the
//! model. Seen with the real CLIs (Claude Code 2.1.332, Codex 0.171.0;
//! `server/tests/typed_text_real.rs` keeps it checked):
//!
//! | typed (bracketed paste, then Enter) | Claude Code             | Codex                   |
//! |-------------------------------------|-------------------------|-------------------------|
//! | `!touch f`                          | runs it in a shell      | runs it in a shell      |
//! | ` !touch f` (leading space)         | text                    | text                    |
//! | `/exit`                             | exits                   | (`/quit`) quits         |
//! | ` /exit`, `\n/exit`, `\t/exit`      | exits (input trimmed)   | text                    |
//! | `\/exit`, `\!touch f`               | text                    | text                    |
//! | `#note`                             | text (no memory mode)   | text                    |
//! | `hello\n!touch f` written raw       | one message, two lines  | one message, two lines  |
//!
//! So a reply is neutralised by provider: for Claude Code a leading `!`,
//! `/` or `#` (after any whitespace, which it trims) gets a backslash before
//! it; for Codex, which only looks at the very first character, a space
//! (Codex trims it before the model sees the text). `#` is included for
//! the CLI versions that save a `#` line as a memory. Both CLIs read a
//! newline inside injected text as a new line of the same message, so only
//! the text's first line can be a command. Any other terminal program may
//! submit at every newline (when it did not enable bracketed paste the text
//! is written raw): every line is neutralised, the Claude Code way.
//!
//! Escape and control characters are dropped for every provider: an escape
//! sequence is a key (Shift+Tab, arrows, Esc) or, inside a bracketed paste,
//! `ESC[201~` ends the paste early and the rest is typed as keys. A
//! carriage return is Enter, so CR and CRLF become a newline before the
//! lines are checked.
//!
//! What a person types at the terminal (the browser's keystrokes, the
//! admin's terminal input) is not touched: it is a person at the keyboard.
//! An agent typing into its derived child is refused instead
//! ([`check_agent_input`]): a parent has no reason to send its child a
//! command or a key, and an error tells it so.

use crate::{
    CoreError, CoreResult,
    auth::Identity,
    model::Provider,
    store::{Delivery, DeliveryKind},
};

/// Who types into a terminal through the terminal-input API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Typist {
    /// A person (the admin token): typed as written, keys included.
    Person,
    /// An agent (into its derived child): checked by [`check_agent_input`].
    Agent,
}

impl Typist {
    /// The typist an identity is: only the admin is a person.
    pub fn of(who: &Identity) -> Self {
        match who {
            Identity::Admin => Self::Person,
            _ => Self::Agent,
        }
    }
}

/// Is a delivery typed as Harness's text ([`neutralise`]d)? Every one is —
/// a reply, a parent's decision, a chat continuation, a Workbench batch, a
/// late approval decision — but keyed terminal input (`input` without
/// `resume`, queued by the terminal-input API for a live terminal): its
/// text was checked when it was queued, by who typed it (a person's is
/// typed as written, an agent's passed [`check_agent_input`]).
pub fn delivery_is_text(row: &Delivery) -> bool {
    row.kind != DeliveryKind::Input || row.resume
}

/// First characters the agent CLIs read as a command (shell, slash
/// command, memory).
const COMMAND_LEADS: [char; 3] = ['!', '/', '#'];

/// A character a terminal reads as a key or a control, not text: C0
/// controls but tab and newline, DEL and C1 controls (ESC included).
fn is_control(c: char) -> bool {
    c != '\t' && c != '\n' && c.is_control()
}

/// `text` with every control character dropped and CR / CRLF turned into
/// a newline (a carriage return is the Enter key).
pub fn drop_controls(text: &str) -> String {
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    text.chars().filter(|c| !is_control(*c)).collect()
}

/// The command character `line` starts with, after whitespace.
fn command_lead(line: &str) -> Option<char> {
    line.trim_start()
        .chars()
        .next()
        .filter(|c| COMMAND_LEADS.contains(c))
}

/// Does the CLI read each line of typed text on its own (every newline can
/// submit)? Claude Code and Codex read a newline as part of the message.
fn every_line_counts(provider: Provider) -> bool {
    matches!(provider, Provider::Command)
}

/// One line, made text for `provider` (when it starts with a command
/// character).
fn neutral_line(provider: Provider, line: &str) -> String {
    if command_lead(line).is_none() {
        return line.to_string();
    }
    let rest = line.trim_start();
    match provider {
        // Codex reads a command only at the very first character and trims
        // the message it sends: the model sees the text unchanged.
        Provider::Codex => format!(" {rest}"),
        // Claude Code trims before it looks for a slash command: only a
        // visible character in front keeps the line text.
        Provider::Claude | Provider::Command => format!("\\{rest}"),
    }
}

/// `text` as Harness types it into an agent run by `provider`: controls
/// dropped and a leading command character neutralised (module docs).
pub fn neutralise(provider: Provider, text: &str) -> String {
    let clean = drop_controls(text);
    if !every_line_counts(provider) {
        // Only the first line (its leading whitespace, newlines included,
        // is trimmed by Claude Code) can be a command.
        let lead = clean.len() - clean.trim_start().len();
        let first_end = clean[lead..]
            .find('\n')
            .map(|i| lead + i)
            .unwrap_or(clean.len());
        if command_lead(&clean[..first_end]).is_none() {
            return clean;
        }
        return format!(
            "{}{}",
            neutral_line(provider, &clean[..first_end]),
            &clean[first_end..]
        );
    }
    clean
        .split('\n')
        .map(|line| neutral_line(provider, line))
        .collect::<Vec<_>>()
        .join("\n")
}

/// An agent's text for its derived child's terminal (run by `provider`):
/// refused when it holds a control character or a line the child's CLI
/// would read as a command; else the text with CR / CRLF as newlines.
pub fn check_agent_input(provider: Provider, text: &str) -> CoreResult<String> {
    if let Some((at, c)) = text
        .chars()
        .enumerate()
        .find(|(_, c)| *c != '\r' && is_control(*c))
    {
        return Err(CoreError::invalid(
            "text",
            format!(
                "an agent types text only: the control character U+{:04X} at character {at} \
                 would be read as a key, not text (a person at the terminal can press keys)",
                u32::from(c)
            ),
        ));
    }
    let clean = drop_controls(text);
    let found = if every_line_counts(provider) {
        clean
            .split('\n')
            .enumerate()
            .find_map(|(n, line)| command_lead(line).map(|c| (n, c)))
    } else {
        let first = clean.trim_start().split('\n').next().unwrap_or_default();
        command_lead(first).map(|c| (0, c))
    };
    if let Some((n, c)) = found {
        let what = match c {
            '!' => "a shell command",
            '/' => "a slash command",
            _ => "a command (a memory note)",
        };
        return Err(CoreError::invalid(
            "text",
            format!(
                "line {} starts with '{c}', which the child's CLI would run as {what} instead of \
                 reading it as text; Harness types only text into an agent: put a word before it",
                n + 1
            ),
        ));
    }
    Ok(clean)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Provider; 3] = [Provider::Claude, Provider::Codex, Provider::Command];

    #[test]
    fn plain_text_is_unchanged() {
        for p in ALL {
            for t in [
                "Blue, please",
                "use option B\nthen run the tests",
                "a/b #3 !",
                "",
            ] {
                assert_eq!(neutralise(p, t), t, "{p:?}");
                assert_eq!(check_agent_input(p, t).unwrap(), t, "{p:?}");
            }
        }
    }

    #[test]
    fn a_leading_bang_never_reaches_the_cli_as_a_shell_command() {
        let t = "!touch /tmp/x/pwned";
        assert_eq!(neutralise(Provider::Claude, t), "\\!touch /tmp/x/pwned");
        assert_eq!(neutralise(Provider::Codex, t), " !touch /tmp/x/pwned");
        assert_eq!(neutralise(Provider::Command, t), "\\!touch /tmp/x/pwned");
    }

    #[test]
    fn a_slash_command_is_text_even_after_whitespace() {
        // Claude Code trims the input before it looks for a slash command.
        for t in ["/exit", "  /exit", "\n/exit", "\t/exit", "\r\n/exit"] {
            assert_eq!(neutralise(Provider::Claude, t), "\\/exit", "{t:?}");
            assert_eq!(neutralise(Provider::Codex, t), " /exit", "{t:?}");
        }
        assert_eq!(
            neutralise(Provider::Claude, "\n/exit\nmore"),
            "\\/exit\nmore"
        );
    }

    #[test]
    fn a_memory_line_is_text() {
        assert_eq!(neutralise(Provider::Claude, "#remember"), "\\#remember");
        assert_eq!(neutralise(Provider::Codex, "#remember"), " #remember");
    }

    #[test]
    fn later_lines_matter_only_where_a_newline_can_submit() {
        let t = "fine\n!touch /tmp/x\n  /exit\n# heading";
        // Claude Code and Codex: one message; its later lines are text.
        assert_eq!(neutralise(Provider::Claude, t), t);
        assert_eq!(neutralise(Provider::Codex, t), t);
        assert_eq!(
            neutralise(Provider::Command, t),
            "fine\n\\!touch /tmp/x\n\\/exit\n\\# heading"
        );
    }

    #[test]
    fn escape_sequences_and_controls_are_dropped() {
        // An embedded end-of-paste marker would let the rest be typed as keys.
        let t = "ok\x1b[201~\r!touch /tmp/x\x1b[200~";
        for p in ALL {
            let out = neutralise(p, t);
            assert!(
                !out.contains('\x1b') && !out.contains('\r'),
                "{p:?}: {out:?}"
            );
        }
        // The CR became a newline: the line after it is checked too.
        assert_eq!(
            neutralise(Provider::Command, t),
            "ok[201~\n\\!touch /tmp/x[200~"
        );
        // Shift+Tab, Ctrl+C, DEL, a C1 CSI, NUL, bell, backspace.
        let keys = "a\x1b[Zb\x03c\x7fd\u{9b}e\0f\x07g\x08h\ti";
        assert_eq!(neutralise(Provider::Claude, keys), "a[Zbcdefgh\ti");
    }

    #[test]
    fn a_control_cannot_hide_a_leading_command_character() {
        // DEL would erase the "a" in a raw write, leaving "!…" first; ESC
        // and Ctrl+U likewise. Dropped first, then checked.
        for t in ["\x7f!touch /tmp/x", "\x1b!touch /tmp/x", "\x15/exit"] {
            let out = neutralise(Provider::Codex, t);
            assert!(out.starts_with(' '), "{t:?}: {out:?}");
            let out = neutralise(Provider::Claude, t);
            assert!(out.starts_with('\\'), "{t:?}: {out:?}");
        }
    }

    #[test]
    fn neutralising_twice_changes_nothing_more() {
        for p in ALL {
            for t in ["!x", "/exit\n/y", " #m", "a\x1b[201~b"] {
                let once = neutralise(p, t);
                assert_eq!(neutralise(p, &once), once, "{p:?} {t:?}");
            }
        }
    }

    #[test]
    fn an_agent_is_refused_a_command_or_a_key_for_its_child() {
        for p in ALL {
            for t in ["!git push --force origin HEAD:x", " /exit", "\n#note"] {
                let err = check_agent_input(p, t).unwrap_err();
                assert_eq!(err.http_status(), 400, "{p:?} {t:?}");
                assert!(err.to_string().contains("text"), "{err}");
                assert!(err.to_string().contains(" starts with '"), "{err}");
            }
            let err = check_agent_input(p, "ok\x1b[201~").unwrap_err();
            assert!(err.to_string().contains("U+001B"), "{err}");
            // A CR is a newline, not a refusal.
            assert_eq!(check_agent_input(p, "a\r\nb").unwrap(), "a\nb");
        }
        // A later line only where a newline can submit.
        let t = "decision: B\n/exit";
        assert!(check_agent_input(Provider::Claude, t).is_ok());
        assert!(check_agent_input(Provider::Codex, t).is_ok());
        let err = check_agent_input(Provider::Command, t).unwrap_err();
        assert!(err.to_string().contains("line 2 starts with '/'"), "{err}");
    }

    #[test]
    fn every_delivery_but_keyed_terminal_input_is_typed_as_text() {
        let now = chrono::Utc::now();
        let row = |kind, resume| Delivery {
            id: "d".into(),
            task_id: "t".into(),
            kind,
            message_id: None,
            node_id: None,
            text: "!x".into(),
            question: None,
            submit: true,
            dedup_key: None,
            state: crate::store::DeliveryState::Queued,
            attempts: 0,
            next_attempt_at: None,
            lease_owner: None,
            lease_expires_at: None,
            last_error: None,
            created_at: now,
            updated_at: now,
            done_at: None,
            resume,
        };
        // Replies; a parent's decision, a batch, a continuation, an approval.
        assert!(delivery_is_text(&row(DeliveryKind::Reply, false)));
        assert!(delivery_is_text(&row(DeliveryKind::Input, true)));
        // Keyed terminal input: checked by who typed it when it was queued.
        assert!(!delivery_is_text(&row(DeliveryKind::Input, false)));
    }

    #[test]
    fn only_the_admin_types_as_a_person() {
        assert_eq!(Typist::of(&Identity::Admin), Typist::Person);
        let agent = Identity::Agent {
            task_id: "t".into(),
            execution_id: "e".into(),
        };
        for who in [agent, Identity::Browser, Identity::Gateway] {
            assert_eq!(Typist::of(&who), Typist::Agent);
        }
    }
}
