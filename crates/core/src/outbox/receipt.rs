//! What a gateway CLI said: the platform message id parsed from its output
//! (JSON, possibly after log lines), and the outcome rule of docs/decisions.md D7.

use serde_json::Value;

/// The receipt of a send: the platform's message id and where it went.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Receipt {
    pub message_id: Option<String>,
    pub platform: Option<String>,
    pub chat_id: Option<String>,
}

const ID_KEYS: &[&str] = &[
    "message_id",
    "messageId",
    "platformMessageId",
    "openMessageId",
];
const PLATFORM_KEYS: &[&str] = &["platform", "channel", "downstream"];
const CHAT_KEYS: &[&str] = &["chat_id", "chatId", "target", "to", "destination"];

fn value_string(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Depth-first: an object's listed keys first, then its nested values.
fn find(v: &Value, keys: &[&str]) -> Option<String> {
    match v {
        Value::Object(map) => keys
            .iter()
            .find_map(|k| map.get(*k).and_then(value_string))
            .or_else(|| map.values().find_map(|n| find(n, keys))),
        Value::Array(items) => items.iter().find_map(|n| find(n, keys)),
        _ => None,
    }
}

fn om_token(text: &str) -> Option<String> {
    let at = text.find("om_")?;
    let id: String = text[at..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .collect();
    (id.len() > 3).then_some(id)
}

fn any_om(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => {
            let t = s.trim();
            (t.starts_with("om_") && om_token(t).as_deref() == Some(t)).then(|| t.to_string())
        }
        Value::Object(map) => map.values().find_map(any_om),
        Value::Array(items) => items.iter().find_map(any_om),
        _ => None,
    }
}

/// The JSON objects in `text`: every line that parses as an object, and the
/// whole text; the last one wins (log lines before it are tolerated).
fn last_json(text: &str) -> Option<Value> {
    if let Ok(v @ Value::Object(_)) = serde_json::from_str::<Value>(text.trim()) {
        return Some(v);
    }
    // A pretty-printed object after log lines: from the last line that opens one.
    let lines: Vec<&str> = text.lines().collect();
    for start in (0..lines.len()).rev() {
        if !lines[start].trim_start().starts_with('{') {
            continue;
        }
        let candidate = lines[start..].join("\n");
        if let Ok(v @ Value::Object(_)) = serde_json::from_str::<Value>(candidate.trim()) {
            return Some(v);
        }
    }
    None
}

/// Parse a gateway CLI's stdout (docs/contract.md §9, docs/tower-messaging.md §6.5).
pub fn parse(output: &str) -> Receipt {
    if let Some(json) = last_json(output) {
        return Receipt {
            message_id: find(&json, ID_KEYS).or_else(|| any_om(&json)),
            platform: find(&json, PLATFORM_KEYS),
            chat_id: find(&json, CHAT_KEYS),
        };
    }
    // Text form: `message_id: om_…` or a bare `om_…`.
    Receipt {
        message_id: om_token(output),
        platform: None,
        chat_id: None,
    }
}

/// How one CLI run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunEnd {
    /// The process exited with this code.
    Exited(i32),
    /// Killed by a signal (not by us).
    Signalled,
    /// Killed (with its process group) after the timeout.
    TimedOut,
    /// It never started (missing binary, permission…).
    SpawnFailed(String),
}

/// The outcome of a send attempt (docs/decisions.md D7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SendOutcome {
    /// Exit 0 with a verifiable platform message id.
    Delivered(Receipt),
    /// The platform may have the message: exit 0 without an id, or an
    /// error that still printed an id. Never sent again automatically.
    Unverified(Receipt, String),
    /// Nothing was sent (spawn error, non-zero exit or timeout without an id).
    Failed(String),
    /// Not attempted: the row is no longer owed (a reminder or escalation
    /// whose ask was answered while it was leased ahead,
    /// `Asks::skip_before_send`). The row ends DEAD with the reason.
    Skipped(String),
    /// Not sent, and sending again cannot change that (its command line
    /// cannot be built, [`super::Unsent`]). The row ends DEAD with the reason.
    GaveUp(String),
}

fn tail(text: &str, max: usize) -> String {
    let t = text.trim();
    let n = t.chars().count();
    if n <= max {
        t.to_string()
    } else {
        t.chars().skip(n - max).collect()
    }
}

/// OpenClaw's CLI failed because its gateway could not reach the platform
/// (`OutboundDeliveryError: Network request for 'sendMessage' failed!`). The
/// gateway has then queued the message and sends it by itself once the
/// platform answers (5 attempts over about 13 minutes, kept across its
/// restarts), so a resend from here would arrive as a second copy: the
/// platform may get the message (docs/decisions.md D7's SENT_UNVERIFIED). HTTP errors (429,
/// 5xx) and permanent ones (chat not found) are not queued: they stay FAILED.
fn handed_to_openclaw_queue(stdout: &str, stderr: &str) -> bool {
    [stdout, stderr].iter().any(|text| {
        text.lines().any(|line| {
            line.find("Network request for '")
                .is_some_and(|at| line[at..].contains("' failed!"))
        })
    })
}

/// Classify a finished run from its end, stdout and stderr.
pub fn classify(end: &RunEnd, stdout: &str, stderr: &str) -> SendOutcome {
    let receipt = parse(stdout);
    let detail = || {
        let err = tail(stderr, 1500);
        let out = tail(stdout, 500);
        match (err.is_empty(), out.is_empty()) {
            (false, _) => err,
            (true, false) => out,
            (true, true) => "no output".to_string(),
        }
    };
    match (end, receipt.message_id.is_some()) {
        (RunEnd::Exited(0), true) => SendOutcome::Delivered(receipt),
        (RunEnd::Exited(0), false) => SendOutcome::Unverified(
            receipt,
            format!(
                "the gateway exited 0 but printed no message id; it may have sent: {}",
                detail()
            ),
        ),
        (RunEnd::SpawnFailed(why), _) => {
            SendOutcome::Failed(format!("cannot start the gateway CLI: {why}"))
        }
        (end, true) => SendOutcome::Unverified(
            receipt,
            format!(
                "the gateway failed ({end:?}) but printed a message id: {}",
                detail()
            ),
        ),
        (RunEnd::TimedOut, false) => SendOutcome::Failed(format!(
            "the gateway CLI timed out and was killed: {}",
            detail()
        )),
        (RunEnd::Exited(code), false) if handed_to_openclaw_queue(stdout, stderr) => {
            SendOutcome::Unverified(
                receipt,
                format!(
                    "Not resent (a resend would arrive twice): OpenClaw could not reach the \
                     platform (exit {code}), and its gateway keeps the message and sends it by \
                     itself once the platform answers (up to about 13 minutes). Mark it delivered \
                     when it arrives; a question stays open on the task page meanwhile: {}",
                    detail()
                ),
            )
        }
        (RunEnd::Exited(code), false) => {
            SendOutcome::Failed(format!("the gateway CLI exited with {code}: {}", detail()))
        }
        (RunEnd::Signalled, false) => SendOutcome::Failed(format!(
            "the gateway CLI was killed by a signal: {}",
            detail()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openclaw_and_hermes_shapes() {
        let oc = r#"{"action":"send","channel":"telegram","dryRun":false,"handledBy":"plugin","messageId":"4246","payload":{"ok":true,"messageId":"4246","chatId":"-100"}}"#;
        let r = parse(oc);
        assert_eq!(r.message_id.as_deref(), Some("4246"));
        assert_eq!(r.platform.as_deref(), Some("telegram"));
        let nested = r#"{"payload":{"result":{"messageId":"77"}}}"#;
        assert_eq!(parse(nested).message_id.as_deref(), Some("77"));
        let hermes = r#"{"success":true,"platform":"telegram","chat_id":"42","message_id":"4243"}"#;
        let r = parse(hermes);
        assert_eq!(r.message_id.as_deref(), Some("4243"));
        assert_eq!(r.chat_id.as_deref(), Some("42"));
        assert_eq!(
            parse(r#"{"success":true,"platform":"signal"}"#).message_id,
            None
        );
        assert_eq!(
            parse(r#"{"message_id": 12}"#).message_id.as_deref(),
            Some("12")
        );
    }

    #[test]
    fn json_after_log_noise_and_text_forms() {
        let noisy = "INFO connecting\nWARN slow\n{\"message_id\":\"m1\"}\n";
        assert_eq!(parse(noisy).message_id.as_deref(), Some("m1"));
        let pretty = "log {not json}\n{\n  \"ok\": true,\n  \"messageId\": \"m2\"\n}\n";
        assert_eq!(parse(pretty).message_id.as_deref(), Some("m2"));
        assert_eq!(
            parse("sent, message id: om_abc123").message_id.as_deref(),
            Some("om_abc123")
        );
        assert_eq!(
            parse(r#"{"x":{"y":"om_zz9"}}"#).message_id.as_deref(),
            Some("om_zz9")
        );
        assert_eq!(parse("nothing here").message_id, None);
        assert_eq!(parse("").message_id, None);
    }

    #[test]
    fn outcomes_follow_d7() {
        let ok = r#"{"message_id":"1"}"#;
        assert!(matches!(
            classify(&RunEnd::Exited(0), ok, ""),
            SendOutcome::Delivered(_)
        ));
        assert!(matches!(
            classify(&RunEnd::Exited(0), "{}", ""),
            SendOutcome::Unverified(..)
        ));
        assert!(matches!(
            classify(&RunEnd::Exited(1), ok, "boom"),
            SendOutcome::Unverified(..)
        ));
        assert!(matches!(
            classify(&RunEnd::TimedOut, ok, ""),
            SendOutcome::Unverified(..)
        ));
        match classify(&RunEnd::Exited(2), r#"{"error":"x"}"#, "usage") {
            SendOutcome::Failed(e) => assert!(e.contains("exited with 2") && e.contains("usage")),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            classify(&RunEnd::TimedOut, "", ""),
            SendOutcome::Failed(_)
        ));
        assert!(matches!(
            classify(&RunEnd::SpawnFailed("ENOENT".into()), "", ""),
            SendOutcome::Failed(_)
        ));
        assert!(matches!(
            classify(&RunEnd::Signalled, "", ""),
            SendOutcome::Failed(_)
        ));
    }

    /// What OpenClaw 2026.9.6's `message send --json` printed (exit 1) with
    /// the Bot API unreachable, on HTTP 500, on 429 and for a missing chat.
    #[test]
    fn openclaw_network_failures_are_in_its_gateway_queue_http_errors_are_not() {
        let stderr = |reason: &str| {
            format!(
                "[openclaw] The CLI command failed.\n[openclaw] Reason: {reason}\n[openclaw] Debug: \
                 set OPENCLAW_DEBUG=1 to include the stack trace.\n[openclaw] Try: openclaw doctor\n"
            )
        };
        let stdout = |reason: &str| {
            serde_json::json!({"ok": false, "error": {"type": "cli_error", "message": reason}})
                .to_string()
        };
        let queued = "OutboundDeliveryError: Network request for 'sendMessage' failed!";
        match classify(&RunEnd::Exited(1), &stdout(queued), &stderr(queued)) {
            SendOutcome::Unverified(r, why) => {
                assert_eq!(r.message_id, None);
                assert!(
                    why.starts_with("Not resent") && why.contains(queued),
                    "{why}"
                );
            }
            other => panic!("{other:?}"),
        }
        // Either stream alone is enough (stderr only: stdout was not JSON).
        assert!(matches!(
            classify(&RunEnd::Exited(1), "", &stderr(queued)),
            SendOutcome::Unverified(..)
        ));
        for reason in [
            "OutboundDeliveryError: Call to 'sendMessage' failed! (500: Internal Server Error)",
            "OutboundDeliveryError: Call to 'sendMessage' failed! (429: Too Many Requests: retry after 5)",
            "OutboundDeliveryError: Telegram send failed: chat not found (chat_id=-100999).",
        ] {
            assert!(
                matches!(
                    classify(&RunEnd::Exited(1), &stdout(reason), &stderr(reason)),
                    SendOutcome::Failed(_)
                ),
                "{reason}"
            );
        }
    }
}
