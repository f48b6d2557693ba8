//! Blocking first-run prompts of the agent CLIs, found on the terminal
//! screen. An unattended agent that sits at "Do you trust this folder?" or
//! "Bypass Permissions mode … No, exit" looks busy but never works; the
//! watcher reports each such prompt once per execution as a notice on the
//! task (shown in the task page's timeline and the notification center).

use std::{sync::Arc, time::Duration};

use harness_core::{Harness, model::Provider};
use harness_pty::PtySession;

/// A prompt (or refusal) that stops an agent before it works.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockingPrompt {
    ClaudeBypassWarning,
    ClaudeTrustFolder,
    ClaudeApiKey,
    ClaudeOnboarding,
    ClaudeLogin,
    /// Claude Code refuses `--dangerously-skip-permissions` as root.
    ClaudeRoot,
    CodexTrust,
    CodexLogin,
    CodexUpdate,
}

/// Needles matched against the screen with all whitespace removed and
/// lowercased: TUIs position words with cursor moves, so spaces are not
/// reliable in the screen text.
const PATTERNS: &[(Provider, BlockingPrompt, &[&str])] = &[
    (
        Provider::Claude,
        BlockingPrompt::ClaudeRoot,
        &["cannotbeusedwithroot/sudoprivileges"],
    ),
    (
        Provider::Claude,
        BlockingPrompt::ClaudeBypassWarning,
        &["bypasspermissionsmode", "yes,iaccept"],
    ),
    (
        Provider::Claude,
        BlockingPrompt::ClaudeTrustFolder,
        &["itrustthisfolder"],
    ),
    (
        Provider::Claude,
        BlockingPrompt::ClaudeApiKey,
        &["detectedacustomapikey", "doyouwanttousethisapikey"],
    ),
    (
        Provider::Claude,
        BlockingPrompt::ClaudeOnboarding,
        &["choosethetextstyle"],
    ),
    (
        Provider::Claude,
        BlockingPrompt::ClaudeLogin,
        &["selectloginmethod"],
    ),
    // Codex 0.171 in a git repository it was never trusted in.
    (
        Provider::Codex,
        BlockingPrompt::CodexTrust,
        &["trustthisfolder?", "trustandcontinue"],
    ),
    // Older Codex releases.
    (
        Provider::Codex,
        BlockingPrompt::CodexTrust,
        &["doyoutrustthecontentsofthisdirectory"],
    ),
    (
        Provider::Codex,
        BlockingPrompt::CodexLogin,
        &["signinwithchatgpt"],
    ),
    (
        Provider::Codex,
        BlockingPrompt::CodexUpdate,
        &["updateavailable!", "skipuntilnextversion"],
    ),
];

impl BlockingPrompt {
    /// What the task page says (English; the agent's own screen is English too).
    pub fn notice(self) -> &'static str {
        match self {
            Self::ClaudeBypassWarning => {
                "The agent is waiting at a Claude Code prompt: the one-time \"Bypass Permissions mode\" \
warning. Open the task's terminal and choose \"Yes, I accept\" (Harness normally skips it for \
its own spawns)."
            }
            Self::ClaudeTrustFolder => {
                "The agent is waiting at a Claude Code prompt: \"Do you trust this folder?\". Open the \
task's terminal and answer it once (Claude Code remembers the answer per folder), or run \
`claude` once in that folder yourself."
            }
            Self::ClaudeApiKey => {
                "The agent is waiting at a Claude Code prompt: \"Detected a custom API key — do you want \
to use it?\". Open the task's terminal and answer it once, or use ANTHROPIC_AUTH_TOKEN."
            }
            Self::ClaudeOnboarding => {
                "The agent is waiting at a Claude Code prompt: first-run onboarding (theme). Open the \
task's terminal and finish it once, or run `claude` once yourself."
            }
            Self::ClaudeLogin => {
                "The agent is waiting at a Claude Code prompt: login. Log in by running `claude` once \
yourself, or give the task an API key in its env."
            }
            Self::ClaudeRoot => {
                "Claude Code refused to start: it does not accept --dangerously-skip-permissions when \
run as root. Run Harness as a normal user, or — only inside a sandbox or container — add \
IS_SANDBOX=1 to the task's env."
            }
            Self::CodexTrust => {
                "The agent is waiting at a Codex prompt: \"Trust this folder?\". Open the task's \
terminal and answer it once (Codex saves the decision), or run `codex` once in that folder."
            }
            Self::CodexLogin => {
                "The agent is waiting at a Codex prompt: sign-in. Log in by running `codex login` \
yourself, or give the task an API key in its env."
            }
            Self::CodexUpdate => {
                "The agent is waiting at a Codex prompt: \"Update available\". Open the task's \
terminal and choose to skip, or update Codex."
            }
        }
    }
}

fn squeeze(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The blocking prompts visible in `screen` for this provider.
pub fn detect(provider: Provider, screen: &str) -> Vec<BlockingPrompt> {
    let flat = squeeze(screen);
    PATTERNS
        .iter()
        .filter(|(p, _, needles)| *p == provider && needles.iter().all(|n| flat.contains(n)))
        .map(|(_, prompt, _)| *prompt)
        .collect()
}

/// How long after the start the screen is watched (first-run prompts come
/// first); the final screen is always checked at exit.
const WATCH_FOR: Duration = Duration::from_secs(180);
const EVERY: Duration = Duration::from_millis(500);

/// Watch a freshly spawned agent's screen; report each blocking prompt once.
/// Bounded: ends at the agent's exit or after [`WATCH_FOR`].
pub fn watch(harness: Harness, task_id: String, provider: Provider, session: Arc<PtySession>) {
    if !matches!(provider, Provider::Claude | Provider::Codex) {
        return;
    }
    tokio::spawn(async move {
        let mut reported: Vec<BlockingPrompt> = Vec::new();
        let deadline = tokio::time::Instant::now() + WATCH_FOR;
        loop {
            let exited = tokio::select! {
                r = session.wait_exit() => { let _ = r; true }
                _ = tokio::time::sleep(EVERY) => false,
            };
            if exited {
                session.sync_model().await;
            }
            for prompt in detect(provider, &session.screen_text().text) {
                if reported.contains(&prompt) {
                    continue;
                }
                reported.push(prompt);
                tracing::warn!(task_id, ?prompt, "the agent is blocked at a prompt");
                if let Err(err) = harness.asks().notify(&task_id, Some(prompt.notice())).await {
                    tracing::warn!(error = ?err, task_id, "cannot record the prompt notice");
                }
            }
            if exited || tokio::time::Instant::now() >= deadline {
                return;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_real_claude_screens() {
        // Screen text as Claude Code 2.1.332 draws it.
        let bypass = " WARNING: Claude Code running in Bypass Permissions mode\n\n  ❯ 1. No, exit\n    2. Yes, I accept\n";
        assert_eq!(
            detect(Provider::Claude, bypass),
            [BlockingPrompt::ClaudeBypassWarning]
        );
        let trust = "Quick safety check: Is this a project you created or one you trust?\n ❯ 1. No, exit\n   2. Yes, I trust this folder";
        assert_eq!(
            detect(Provider::Claude, trust),
            [BlockingPrompt::ClaudeTrustFolder]
        );
        let root = "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons";
        assert_eq!(detect(Provider::Claude, root), [BlockingPrompt::ClaudeRoot]);
        assert!(detect(Provider::Codex, root).is_empty(), "per provider");
        // Screen text as Codex 0.171 draws it in Harness's terminal.
        let sign_in = "  Welcome to Codex, OpenAI's command-line coding agent\n\n> 1. Sign in with ChatGPT\n  2. Sign in with Device Code";
        assert_eq!(
            detect(Provider::Codex, sign_in),
            [BlockingPrompt::CodexLogin]
        );
        let codex_trust = "  Folder access\n  Trust this folder? Codex can read, edit, and run files here, subject to your\n› 1. Trust and continue\n  2. Back to Agent Command Center";
        assert_eq!(
            detect(Provider::Codex, codex_trust),
            [BlockingPrompt::CodexTrust]
        );
        let working = "❯ Task: say hello\n⏵⏵ bypass permissions on (shift+tab to cycle)";
        assert!(detect(Provider::Claude, working).is_empty());
    }

    #[test]
    fn every_prompt_has_a_notice() {
        for (_, prompt, needles) in PATTERNS {
            assert!(!needles.is_empty());
            assert!(prompt.notice().len() > 40);
        }
    }
}
