//! The evidence of a question (docs/evidence.md): what the agent's screen showed
//! when it asked, kept with the ask. Bounded (the last
//! [`DEFAULT_LINES`] non-blank-trailing lines, at most [`MAX_BYTES`]) and
//! redacted ([`crate::redact`]) before it is stored; deleted with its
//! message. It is never logged: only its length is.

use serde::Serialize;

use crate::asks::Asks;
use crate::{CoreError, CoreResult, redact, validate};

/// Lines of the screen kept by default.
pub const DEFAULT_LINES: usize = 20;

/// The most bytes a snapshot keeps (its last lines win).
pub const MAX_BYTES: usize = 4096;

/// The evidence of one message, as the API answers it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AskEvidence {
    pub message_id: String,
    /// The last lines of the agent's screen when it asked, redacted; `null`
    /// when none was taken (no terminal in this process, or not an ask).
    pub screen: Option<String>,
}

/// What the agent's terminal showed, as the runtime reads it, with the
/// values the runtime gave the agent that must not be shown.
#[derive(Clone, Default)]
pub struct RawScreen {
    /// The visible rows joined by `\n`.
    pub text: String,
    /// The secret values of the agent's environment
    /// ([`redact::secret_env_values`]).
    pub secrets: Vec<String>,
}

// The screen and the secrets never reach a log through `{:?}`.
impl std::fmt::Debug for RawScreen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawScreen")
            .field("text_len", &self.text.len())
            .field("secrets", &self.secrets.len())
            .finish()
    }
}

/// The snapshot to store: the whole screen redacted first (so a key block
/// that began above the kept lines is still recognised), then its last
/// `lines` lines without the blank ones at the bottom, then its last
/// [`MAX_BYTES`] bytes (cut at a line start when one is in the last part,
/// else at a character boundary). `None` when nothing is left.
pub fn snapshot(screen: &RawScreen, extra_secrets: &[String], lines: usize) -> Option<String> {
    let secrets = secrets_of(screen, extra_secrets);
    let redacted = redact::redact(&screen.text, &secrets);
    let rows: Vec<&str> = redacted.lines().map(str::trim_end).collect();
    let used = rows
        .iter()
        .rposition(|r| !r.is_empty())
        .map_or(0, |last| last + 1);
    let first = used.saturating_sub(lines.max(1));
    let kept = rows[first..used].join("\n");
    let kept = tail_bytes(&kept, MAX_BYTES);
    let kept = kept.trim_start_matches('\n');
    (!kept.trim().is_empty()).then(|| kept.to_string())
}

impl Asks<'_> {
    /// The evidence of an ask `task_id` is about to record: its terminal's
    /// screen in this process, bounded and redacted with the secret values
    /// of its environment (the runtime's, and the task's own variables in
    /// case the runtime no longer knows them). `None` without a terminal
    /// here (an agent on another node, or none running).
    pub(crate) async fn evidence_now(&self, task_id: &str) -> Option<String> {
        let raw = self.h.runtime()?.screen(task_id)?;
        let task_env = match self.h.store().get_task(task_id).await {
            Ok(Some(view)) => redact::secret_env_values(&view.task.agent.env),
            Ok(None) => Vec::new(),
            Err(err) => {
                tracing::warn!(%err, "the task's environment was not read for redaction");
                return None;
            }
        };
        let kept = snapshot(&raw, &task_env, DEFAULT_LINES);
        // Its length only: the screen never goes to a log.
        tracing::debug!(
            bytes = kept.as_ref().map_or(0, String::len),
            "ask evidence taken"
        );
        kept
    }

    /// The values redacted from what `task`'s agent showed, besides the
    /// well-known patterns: the secrets of the environment this process gave
    /// it (the runtime's, also once its terminal is gone) and the task's own
    /// variables (in case the runtime never knew them: another node, a
    /// restart).
    pub(crate) fn agent_secrets(&self, task: &crate::model::Task) -> Vec<String> {
        let mut secrets = self
            .h
            .runtime()
            .map(|r| r.secrets(&task.id))
            .unwrap_or_default();
        secrets.extend(redact::secret_env_values(&task.agent.env));
        secrets
    }

    /// The screen stored with the message `message_id`.
    pub async fn ask_evidence(&self, message_id: &str) -> CoreResult<AskEvidence> {
        let message_id = validate::cuid("messageId", message_id.trim())?;
        if self.h.store().get_message(&message_id).await?.is_none() {
            return Err(CoreError::NotFound("Message not found".into()));
        }
        let screen = self.h.store().ask_evidence(&message_id).await?;
        Ok(AskEvidence { message_id, screen })
    }
}

/// The values redacted from `screen`: the agent's own secrets and `extra`.
pub(crate) fn secrets_of<'a>(screen: &'a RawScreen, extra: &'a [String]) -> Vec<&'a str> {
    screen
        .secrets
        .iter()
        .chain(extra)
        .map(String::as_str)
        .collect()
}

/// The last `max` bytes of `text`, starting at a line when possible.
fn tail_bytes(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut cut = text.len() - max;
    while !text.is_char_boundary(cut) {
        cut += 1;
    }
    let tail = &text[cut..];
    match tail.find('\n') {
        Some(n) if n + 1 < tail.len() => &tail[n + 1..],
        _ => tail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> RawScreen {
        RawScreen {
            text: text.into(),
            secrets: Vec::new(),
        }
    }

    #[test]
    fn keeps_the_last_lines_without_the_blank_bottom() {
        let text = (1..=30)
            .map(|n| format!("line {n}   "))
            .chain(["".to_string(), "   ".to_string()])
            .collect::<Vec<_>>()
            .join("\n");
        let got = snapshot(&raw(&text), &[], 3).unwrap();
        assert_eq!(got, "line 28\nline 29\nline 30");
        let got = snapshot(&raw(&text), &[], DEFAULT_LINES).unwrap();
        assert_eq!(got.lines().count(), 20);
        assert!(got.starts_with("line 11\n"));
    }

    #[test]
    fn is_at_most_max_bytes_and_cut_at_a_line() {
        let text = (0..20)
            .map(|n| format!("{n:02}{}", "é".repeat(200)))
            .collect::<Vec<_>>()
            .join("\n");
        let got = snapshot(&raw(&text), &[], DEFAULT_LINES).unwrap();
        assert!(got.len() <= MAX_BYTES, "{}", got.len());
        assert!(got.ends_with(&"é".repeat(200)));
        let first = got.lines().next().unwrap();
        assert_eq!(first.len(), 2 + 400, "starts at a whole line");
    }

    #[test]
    fn one_long_line_is_cut_at_a_character() {
        let text = "é".repeat(5000);
        let got = snapshot(&raw(&text), &[], DEFAULT_LINES).unwrap();
        assert!(got.len() <= MAX_BYTES && got.len() >= MAX_BYTES - 1);
    }

    #[test]
    fn an_empty_screen_gives_none() {
        assert_eq!(snapshot(&raw("\n   \n"), &[], DEFAULT_LINES), None);
    }

    #[test]
    fn redacts_before_it_bounds() {
        // The key block began above the kept lines: its body is still removed.
        let mut text = String::from("-----BEGIN PRIVATE KEY-----\n");
        for n in 0..30 {
            text.push_str(&format!("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo{n:02}\n"));
        }
        text.push_str("-----END PRIVATE KEY-----\nToken: hxa_0123456789abcdef0123\n$ ");
        let screen = RawScreen {
            text: text.clone(),
            secrets: vec!["env-secret-value".into()],
        };
        let got = snapshot(&screen, &["task-secret-1".into()], 5).unwrap();
        assert!(!got.contains("QUJD"), "{got}");
        assert!(!got.contains("0123456789abcdef"), "{got}");
        let with_env = RawScreen {
            text: "echo env-secret-value task-secret-1".into(),
            secrets: vec!["env-secret-value".into()],
        };
        assert_eq!(
            snapshot(&with_env, &["task-secret-1".into()], 5).unwrap(),
            "echo [REDACTED] [REDACTED]"
        );
    }

    #[test]
    fn debug_shows_no_text() {
        let screen = RawScreen {
            text: "sk-ant-secretsecretsecretsecret".into(),
            secrets: vec!["hunter22".into()],
        };
        let shown = format!("{screen:?}");
        assert!(
            !shown.contains("sk-ant") && !shown.contains("hunter"),
            "{shown}"
        );
    }
}
