//! The WebSocket protocol of `/ws/terminal/{taskId}`.
//!
//! * Server → client: **binary** frames are terminal output; the first one
//!   after connecting (and the first one after a `lagged` notice) is a full
//!   snapshot that redraws from a reset terminal. **Text** frames are JSON
//!   [`ServerMsg`]s.
//! * Client → server: text frames holding JSON [`ClientMsg`]s.
//! * A close code of `4000 + exit code` means the process exited: the
//!   client shows it and does not reconnect ([`close_action`]).

use serde::{Deserialize, Serialize};

/// Close code for "process exited with code 0"; exit code `n` closes with
/// `EXIT_CLOSE_BASE + n`.
pub const EXIT_CLOSE_BASE: u16 = 4000;
/// Highest close code read as an exit (exit code 255).
pub const EXIT_CLOSE_MAX: u16 = EXIT_CLOSE_BASE + 255;

/// A control message from the client (a JSON text frame).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ClientMsg {
    /// Keystrokes or a paste, as the bytes a terminal would send (UTF-8,
    /// escape sequences included).
    Input {
        /// The text to write to the PTY.
        data: String,
    },
    /// The terminal's size in character cells.
    Resize {
        /// Rows.
        rows: u16,
        /// Columns.
        cols: u16,
    },
    /// Cumulative count of output bytes processed on this connection.
    Ack {
        /// Bytes processed since the connection opened (snapshot included).
        bytes: u64,
    },
    /// Text followed by Enter (for API clients; the browser does not use
    /// it).
    Submit {
        /// The text to submit.
        data: String,
    },
}

impl ClientMsg {
    /// The JSON text frame.
    pub fn to_json(&self) -> String {
        // Serialising these plain structs cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// A control message from the server (a JSON text frame).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ServerMsg {
    /// The process exited with `code`.
    Exit {
        /// The exit code.
        code: i32,
    },
    /// The client fell behind; the next binary frame is a fresh snapshot.
    Lagged,
    /// The PTY's size (the largest viewer's): draw at this size, scroll if
    /// the container is smaller. Sent before the snapshot and on changes.
    Size {
        /// Rows.
        rows: u16,
        /// Columns.
        cols: u16,
    },
    /// Something went wrong on the server.
    Error {
        /// Human-readable text (shown as plain text, never as HTML).
        message: String,
    },
    /// A message type this client does not know (ignored).
    #[serde(other)]
    Unknown,
}

impl ServerMsg {
    /// Parses a text frame; malformed JSON is [`ServerMsg::Unknown`].
    pub fn parse(text: &str) -> Self {
        serde_json::from_str(text).unwrap_or(Self::Unknown)
    }
}

/// What to do when the socket closes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CloseAction {
    /// The process exited with this code: show it, do not reconnect.
    Exited(i32),
    /// Anything else: reconnect with back-off.
    Reconnect,
}

/// Reads a WebSocket close code.
pub fn close_action(code: u16) -> CloseAction {
    if (EXIT_CLOSE_BASE..=EXIT_CLOSE_MAX).contains(&code) {
        CloseAction::Exited(i32::from(code - EXIT_CLOSE_BASE))
    } else {
        CloseAction::Reconnect
    }
}

/// The terminal WebSocket URL for `task_id` on the page's own origin:
/// `ws://host/ws/terminal/{taskId}` (`wss://` when the page is `https:`).
/// `page_protocol` is `location.protocol` (`"http:"` / `"https:"`), `host`
/// is `location.host`; the task id is percent-encoded.
pub fn terminal_url(page_protocol: &str, host: &str, task_id: &str) -> String {
    let scheme = if page_protocol == "https:" {
        "wss"
    } else {
        "ws"
    };
    let mut id = String::with_capacity(task_id.len());
    for b in task_id.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            id.push(char::from(b));
        } else {
            id.push_str(&format!("%{b:02X}"));
        }
    }
    format!("{scheme}://{host}/ws/terminal/{id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_messages_serialise_as_the_server_expects() {
        let cases = [
            (
                ClientMsg::Input {
                    data: "ls\r\u{1b}[A".into(),
                },
                r#"{"type":"input","data":"ls\r\u001b[A"}"#,
            ),
            (
                ClientMsg::Resize { rows: 24, cols: 80 },
                r#"{"type":"resize","rows":24,"cols":80}"#,
            ),
            (
                ClientMsg::Ack { bytes: 65536 },
                r#"{"type":"ack","bytes":65536}"#,
            ),
            (
                ClientMsg::Submit { data: "y".into() },
                r#"{"type":"submit","data":"y"}"#,
            ),
        ];
        for (msg, json) in cases {
            assert_eq!(msg.to_json(), json);
            let back: ClientMsg = serde_json::from_str(json).unwrap();
            assert_eq!(back, msg);
        }
    }

    #[test]
    fn server_messages_parse() {
        assert_eq!(
            ServerMsg::parse(r#"{"type":"exit","code":3}"#),
            ServerMsg::Exit { code: 3 }
        );
        assert_eq!(
            ServerMsg::parse(r#"{"type":"exit","code":-1}"#),
            ServerMsg::Exit { code: -1 }
        );
        assert_eq!(ServerMsg::parse(r#"{"type":"lagged"}"#), ServerMsg::Lagged);
        assert_eq!(
            ServerMsg::parse(r#"{"type":"error","message":"no such task"}"#),
            ServerMsg::Error {
                message: "no such task".into()
            }
        );
        // Extra fields are tolerated.
        assert_eq!(
            ServerMsg::parse(r#"{"type":"lagged","dropped":12}"#),
            ServerMsg::Lagged
        );
    }

    #[test]
    fn unknown_or_malformed_server_messages_are_ignored() {
        for text in [
            r#"{"type":"future-thing","x":1}"#,
            "not json",
            "",
            r#"{"code":1}"#,
            r#"{"type":"exit"}"#,
        ] {
            assert_eq!(ServerMsg::parse(text), ServerMsg::Unknown, "{text}");
        }
    }

    #[test]
    fn urls() {
        assert_eq!(
            terminal_url("http:", "127.0.0.1:3000", "42"),
            "ws://127.0.0.1:3000/ws/terminal/42"
        );
        assert_eq!(
            terminal_url("https:", "example.org", "a b/../c?d#e"),
            "wss://example.org/ws/terminal/a%20b%2F..%2Fc%3Fd%23e"
        );
    }

    #[test]
    fn close_codes() {
        assert_eq!(close_action(4000), CloseAction::Exited(0));
        assert_eq!(close_action(4001), CloseAction::Exited(1));
        assert_eq!(close_action(4130), CloseAction::Exited(130));
        assert_eq!(close_action(4255), CloseAction::Exited(255));
        for code in [1000, 1001, 1005, 1006, 1011, 3999, 4256, 4403] {
            assert_eq!(close_action(code), CloseAction::Reconnect, "{code}");
        }
    }
}
