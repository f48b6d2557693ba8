//! The recorded cases: what the stand-in answers, what the CLI gets in its
//! environment, and the steps of the recording.

use harness_model_standin::Turn;
use serde_json::{Value, json};

use crate::{Case, Step};

fn epoch_in(secs: u64) -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
        + secs
}

/// Text an agent is asked to write that quotes the CLIs' own status lines.
const QUOTED: &str = "Here are the lines you asked for, quoted:\n\n```text\n\
✻ 529 Overloaded · retrying in 1s · attempt 3/10\n\
● API Error: 529 Overloaded. Please try again.\n\
❯ Resend your message to try again\n\
⎿  You've hit your 5-hour limit · resets 9:57am (UTC)\n\
● Usage limit reached · set to continue automatically at 9:57am\n\
Continuing automatically at 9:57am · Esc to cancel\n\
⎿  Not logged in · Please run /login\n\
■ You’ve hit your usage limit. Try again at 9:54 AM.\n\
◦ Reconnecting... 4/5\n\
■ unexpected status 401 Unauthorized\n\
```\n\nusage limit reached · retrying in 5s · attempt 1/10";

/// An answer long enough to fill the screen, ending in quoted status lines
/// right above the CLI's input (outside a code block).
fn quoted_long() -> String {
    let filler: Vec<String> = (1..=40).map(|n| format!("filler line {n}")).collect();
    format!(
        "{}\n\n{QUOTED}\n\n✻ 529 Overloaded · retrying in 1s · attempt 3/10\n\n\
         ■ You’ve hit your usage limit. Try again at 9:54 AM.",
        filler.join("\n")
    )
}

fn anthropic_error(kind: &str, message: &str) -> Value {
    json!({"type": "error", "error": {"type": kind, "message": message}})
}

pub(crate) fn claude_cases() -> Vec<Case> {
    let reset = epoch_in(70).to_string();
    let unified = |status: &str| -> Vec<(String, String)> {
        vec![
            ("anthropic-ratelimit-unified-status".into(), status.into()),
            ("anthropic-ratelimit-unified-reset".into(), reset.clone()),
            (
                "anthropic-ratelimit-unified-representative-claim".into(),
                "five_hour".into(),
            ),
            (
                "anthropic-ratelimit-unified-5h-status".into(),
                status.into(),
            ),
            ("anthropic-ratelimit-unified-5h-reset".into(), reset.clone()),
            (
                "anthropic-ratelimit-unified-5h-utilization".into(),
                "1.0".into(),
            ),
            ("retry-after".into(), "70".into()),
        ]
    };
    let usage_429 = |status: &str| Turn::Fail {
        status: 429,
        body: anthropic_error(
            "rate_limit_error",
            "This request would exceed your account's rate limit. Please try again later.",
        ),
        headers: unified(status),
    };
    let fail = |status: u16, kind: &str, message: &str| {
        Turn::fail(status, anthropic_error(kind, message), &[]).always()
    };
    let few = || vec![("CLAUDE_CODE_MAX_RETRIES", "1".to_string())];
    let retrying: &'static [&'static str] = &["retrying in", "attempt "];
    let gave_up: &'static [&'static str] = &["API Error", "Resend your message"];
    vec![
        Case {
            name: "rate_limit_429",
            what: "every request: 429 rate_limit_error (no rate-limit headers), default retries",
            script: vec![fail(
                429,
                "rate_limit_error",
                "Number of request tokens has exceeded your per-minute rate limit",
            )],
            env: vec![],
            provider_extra: "",
            subscription: false,
            steps: vec![
                Step::Wait(retrying, 90),
                Step::Settle(2),
                Step::Save("rate_limit_429_retrying"),
            ],
        },
        Case {
            name: "rate_limit_429_gave_up",
            what: "every request: 429 rate_limit_error, CLAUDE_CODE_MAX_RETRIES=1",
            script: vec![fail(
                429,
                "rate_limit_error",
                "Number of request tokens has exceeded your per-minute rate limit",
            )],
            env: few(),
            provider_extra: "",
            subscription: false,
            steps: vec![
                Step::Wait(&["Resend your message"], 180),
                Step::Settle(8),
                Step::Save("rate_limit_429_gave_up"),
            ],
        },
        Case {
            name: "usage_limit_subscription",
            what: "subscription login (CLAUDE_CODE_OAUTH_TOKEN); requests answer 429 with anthropic-ratelimit-unified-* headers (rejected, five_hour, reset 70 s ahead) until the reset, then a text",
            script: vec![usage_429("rejected").always()],
            env: vec![],
            provider_extra: "",
            subscription: true,
            steps: vec![
                Step::Wait(&["limit"], 90),
                Step::Settle(4),
                Step::Save("usage_limit_subscription"),
                Step::Script(vec![Turn::say("Hello after the reset.")]),
                Step::Wait(&["Hello after the reset", "Usage limit reset"], 150),
                Step::Settle(6),
                Step::Save("usage_limit_subscription_after_reset"),
            ],
        },
        Case {
            name: "usage_limit_api_key",
            what: "API token (ANTHROPIC_AUTH_TOKEN); every request: 429 with anthropic-ratelimit-unified-* headers (rejected, five_hour, reset 70 s ahead)",
            script: vec![usage_429("rejected").always()],
            env: vec![],
            provider_extra: "",
            subscription: false,
            steps: vec![
                Step::Wait(&["limit"], 90),
                Step::Settle(2),
                Step::Save("usage_limit_api_key"),
            ],
        },
        Case {
            name: "usage_limit_api_key_watchdog",
            what: "API token (ANTHROPIC_AUTH_TOKEN), CLAUDE_CODE_RETRY_WATCHDOG=1; every request: 429 with anthropic-ratelimit-unified-* headers (rejected, five_hour, reset 70 s ahead)",
            script: vec![usage_429("rejected").always()],
            env: vec![("CLAUDE_CODE_RETRY_WATCHDOG", "1".to_string())],
            provider_extra: "",
            subscription: false,
            steps: vec![
                Step::Wait(&["limit reached", "API Error"], 90),
                Step::Settle(2),
                Step::Save("usage_limit_api_key_watchdog"),
            ],
        },
        Case {
            name: "unauthorized_401_subscription_invalid",
            what: "subscription login (CLAUDE_CODE_OAUTH_TOKEN); every request: 401 authentication_error \"Invalid authentication credentials\"",
            script: vec![fail(
                401,
                "authentication_error",
                "Invalid authentication credentials",
            )],
            env: vec![],
            provider_extra: "",
            subscription: true,
            steps: vec![
                Step::Wait(&["/login", "API Error", "401"], 120),
                Step::Settle(8),
                Step::Save("unauthorized_401_subscription_invalid"),
            ],
        },
        Case {
            name: "overloaded_529",
            what: "every request: 529 overloaded_error, default retries",
            script: vec![fail(529, "overloaded_error", "Overloaded")],
            env: vec![],
            provider_extra: "",
            subscription: false,
            steps: vec![
                Step::Wait(retrying, 90),
                Step::Settle(2),
                Step::Save("overloaded_529_retrying"),
            ],
        },
        Case {
            name: "overloaded_529_gave_up",
            what: "every request: 529 overloaded_error, CLAUDE_CODE_MAX_RETRIES=1",
            script: vec![fail(529, "overloaded_error", "Overloaded")],
            env: few(),
            provider_extra: "",
            subscription: false,
            steps: vec![
                Step::Wait(gave_up, 180),
                Step::Settle(8),
                Step::Save("overloaded_529_gave_up"),
            ],
        },
        Case {
            name: "server_error_500",
            what: "every request: 500 api_error, default retries",
            script: vec![fail(500, "api_error", "Internal server error")],
            env: vec![],
            provider_extra: "",
            subscription: false,
            steps: vec![
                Step::Wait(retrying, 90),
                Step::Settle(2),
                Step::Save("server_error_500_retrying"),
            ],
        },
        Case {
            name: "server_error_500_gave_up",
            what: "every request: 500 api_error, CLAUDE_CODE_MAX_RETRIES=1",
            script: vec![fail(500, "api_error", "Internal server error")],
            env: few(),
            provider_extra: "",
            subscription: false,
            steps: vec![
                Step::Wait(gave_up, 180),
                Step::Settle(8),
                Step::Save("server_error_500_gave_up"),
            ],
        },
        Case {
            name: "unauthorized_401_subscription",
            what: "subscription login (CLAUDE_CODE_OAUTH_TOKEN); every request: 401 authentication_error",
            script: vec![fail(401, "authentication_error", "OAuth token has expired")],
            env: vec![],
            provider_extra: "",
            subscription: true,
            steps: vec![
                Step::Wait(&["/login", "API Error", "401"], 120),
                Step::Settle(8),
                Step::Save("unauthorized_401_subscription"),
            ],
        },
        Case {
            name: "unauthorized_401_api_key",
            what: "API token (ANTHROPIC_AUTH_TOKEN); every request: 401 authentication_error",
            script: vec![fail(401, "authentication_error", "invalid x-api-key")],
            env: vec![],
            provider_extra: "",
            subscription: false,
            steps: vec![
                Step::Wait(&["/login", "API Error", "401"], 120),
                Step::Settle(8),
                Step::Save("unauthorized_401_api_key"),
            ],
        },
        Case {
            name: "connection_dropped",
            what: "every request: the stream starts (200, message_start) and the connection is dropped, default retries",
            script: vec![Turn::Drop.always()],
            env: vec![],
            provider_extra: "",
            subscription: false,
            steps: vec![
                Step::Wait(&["retrying in", "attempt ", "API Error"], 90),
                Step::Settle(2),
                Step::Save("connection_dropped_retrying"),
            ],
        },
        Case {
            name: "connection_dropped_gave_up",
            what: "every request: the stream starts (200, message_start) and the connection is dropped, CLAUDE_CODE_MAX_RETRIES=1",
            script: vec![Turn::Drop.always()],
            env: few(),
            provider_extra: "",
            subscription: false,
            steps: vec![
                Step::Wait(gave_up, 180),
                Step::Settle(8),
                Step::Save("connection_dropped_gave_up"),
            ],
        },
        Case {
            name: "recovered_after_error",
            what: "every request: 529 overloaded_error with CLAUDE_CODE_MAX_RETRIES=1 until it gives up; then the stand-in answers and the message is typed again (negative: the old error stays in the conversation)",
            script: vec![fail(529, "overloaded_error", "Overloaded")],
            env: few(),
            provider_extra: "",
            subscription: false,
            steps: vec![
                Step::Wait(gave_up, 180),
                Step::Settle(4),
                Step::Script(vec![Turn::say("Recovered: hello.")]),
                Step::Type("again please"),
                Step::Wait(&["Recovered: hello."], 90),
                Step::Settle(8),
                Step::Save("recovered_after_error"),
            ],
        },
        Case {
            name: "quoted_status_lines_long",
            what: "a normal answer filling the screen whose last lines quote the CLIs' status lines, in and after a code block (negative)",
            script: vec![Turn::say(&quoted_long())],
            env: vec![],
            provider_extra: "",
            subscription: false,
            steps: vec![
                Step::Wait(&["9:54 AM"], 90),
                Step::Settle(8),
                Step::Save("quoted_status_lines_long"),
            ],
        },
        Case {
            name: "quoted_status_lines",
            what: "a normal answer whose text quotes the CLIs' status lines in a code block (negative)",
            script: vec![Turn::say(QUOTED)],
            env: vec![],
            provider_extra: "",
            subscription: false,
            steps: vec![
                Step::Wait(&["retrying in 5s · attempt 1/10"], 90),
                Step::Settle(6),
                Step::Save("quoted_status_lines"),
            ],
        },
        Case {
            name: "native_question",
            what: "the model calls AskUserQuestion (two options): Claude Code's own question dialog",
            script: vec![Turn::call(
                "AskUserQuestion",
                json!({"questions": [{"question": "Which colour?", "header": "Colour", "multiSelect": false,
                    "options": [{"label": "Red", "description": "red"}, {"label": "Blue", "description": "blue"}]}]}),
            )],
            env: vec![],
            provider_extra: "",
            subscription: false,
            steps: vec![
                Step::Wait(&["Which colour?"], 90),
                Step::Settle(6),
                Step::Save("native_question"),
            ],
        },
        Case {
            name: "working_tool",
            what: "the model runs a 30 s command (Bash `sleep 30`): Claude Code working, its spinner on (negative)",
            script: vec![
                Turn::call(
                    "Bash",
                    json!({"command": "sleep 30", "description": "Wait thirty seconds"}),
                ),
                Turn::say("Done waiting."),
            ],
            env: vec![],
            provider_extra: "",
            subscription: false,
            // Saved at once: the stand-in answers in no time.
            steps: vec![
                Step::Wait(&["esc to interrupt"], 90),
                Step::Save("working_tool"),
            ],
        },
    ]
}

fn openai_error(kind: &str, message: &str) -> Value {
    json!({"error": {"type": kind, "code": kind, "message": message}})
}

pub(crate) fn codex_cases() -> Vec<Case> {
    let resets_at = epoch_in(70);
    let usage = Turn::Fail {
        status: 429,
        body: json!({"error": {"type": "usage_limit_reached", "message": "The usage limit has been reached",
            "plan_type": "plus", "resets_at": resets_at, "resets_in_seconds": 70}}),
        headers: vec![
            ("x-codex-primary-used-percent".into(), "100".into()),
            ("x-codex-primary-window-minutes".into(), "300".into()),
            ("x-codex-primary-reset-at".into(), resets_at.to_string()),
            ("x-codex-primary-reset-after-seconds".into(), "70".into()),
        ],
    };
    let fail = |status: u16, kind: &str, message: &str| {
        Turn::fail(status, openai_error(kind, message), &[]).always()
    };
    let few = "request_max_retries = 1\nstream_max_retries = 1\n";
    let reconnecting: &'static [&'static str] = &["Reconnecting"];
    let gave_up: &'static [&'static str] = &["■"];
    vec![
        Case {
            name: "usage_limit",
            what: "every request: 429 usage_limit_reached (resets 70 s ahead) with x-codex-primary-* headers",
            script: vec![usage.always()],
            env: vec![],
            provider_extra: "",
            subscription: false,
            steps: vec![
                Step::Wait(&["usage limit", "■"], 120),
                Step::Settle(6),
                Step::Save("usage_limit"),
            ],
        },
        Case {
            name: "overloaded_529",
            what: "every request: 529 server_is_overloaded, default retries",
            script: vec![fail(
                529,
                "server_is_overloaded",
                "The server is overloaded",
            )],
            env: vec![],
            provider_extra: "",
            subscription: false,
            steps: vec![
                Step::Wait(reconnecting, 90),
                Step::Settle(2),
                Step::Save("overloaded_529_retrying"),
            ],
        },
        Case {
            name: "overloaded_529_gave_up",
            what: "every request: 529 server_is_overloaded, request_max_retries = 1, stream_max_retries = 1",
            script: vec![fail(
                529,
                "server_is_overloaded",
                "The server is overloaded",
            )],
            env: vec![],
            provider_extra: few,
            subscription: false,
            steps: vec![
                Step::Wait(gave_up, 180),
                Step::Settle(8),
                Step::Save("overloaded_529_gave_up"),
            ],
        },
        Case {
            name: "server_error_500",
            what: "every request: 500 server_error, default retries",
            script: vec![fail(500, "server_error", "Internal server error")],
            env: vec![],
            provider_extra: "",
            subscription: false,
            steps: vec![
                Step::Wait(reconnecting, 90),
                Step::Settle(2),
                Step::Save("server_error_500_retrying"),
            ],
        },
        Case {
            name: "server_error_500_gave_up",
            what: "every request: 500 server_error, request_max_retries = 1, stream_max_retries = 1",
            script: vec![fail(500, "server_error", "Internal server error")],
            env: vec![],
            provider_extra: few,
            subscription: false,
            steps: vec![
                Step::Wait(gave_up, 180),
                Step::Settle(8),
                Step::Save("server_error_500_gave_up"),
            ],
        },
        Case {
            name: "unauthorized_401",
            what: "every request: 401 invalid_api_key, request_max_retries = 1, stream_max_retries = 1",
            script: vec![fail(401, "invalid_api_key", "Incorrect API key provided")],
            env: vec![],
            provider_extra: few,
            subscription: false,
            steps: vec![
                Step::Wait(gave_up, 180),
                Step::Settle(8),
                Step::Save("unauthorized_401"),
            ],
        },
        Case {
            name: "connection_dropped",
            what: "every request: the stream starts (200, response.created) and the connection is dropped, default retries",
            script: vec![Turn::Drop.always()],
            env: vec![],
            provider_extra: "",
            subscription: false,
            steps: vec![
                Step::Wait(reconnecting, 90),
                Step::Settle(2),
                Step::Save("connection_dropped_retrying"),
            ],
        },
        Case {
            name: "connection_dropped_gave_up",
            what: "every request: the stream starts (200, response.created) and the connection is dropped, request_max_retries = 1, stream_max_retries = 1",
            script: vec![Turn::Drop.always()],
            env: vec![],
            provider_extra: few,
            subscription: false,
            steps: vec![
                Step::Wait(gave_up, 180),
                Step::Settle(8),
                Step::Save("connection_dropped_gave_up"),
            ],
        },
        Case {
            name: "recovered_after_error",
            what: "every request: 529 server_is_overloaded with request_max_retries = 1, stream_max_retries = 1 until it gives up; then the stand-in answers and the message is typed again (negative: the old error stays in the history)",
            script: vec![fail(
                529,
                "server_is_overloaded",
                "The server is overloaded",
            )],
            env: vec![],
            provider_extra: few,
            subscription: false,
            steps: vec![
                Step::Wait(gave_up, 180),
                Step::Settle(4),
                Step::Script(vec![Turn::say("Recovered: hello.")]),
                Step::Type("again please"),
                Step::Wait(&["Recovered: hello."], 90),
                Step::Settle(8),
                Step::Save("recovered_after_error"),
            ],
        },
        Case {
            name: "quoted_status_lines_long",
            what: "a normal answer filling the screen whose last lines quote the CLIs' status lines, in and after a code block (negative)",
            script: vec![Turn::say(&quoted_long())],
            env: vec![],
            provider_extra: "",
            subscription: false,
            steps: vec![
                Step::Wait(&["9:54 AM"], 90),
                Step::Settle(8),
                Step::Save("quoted_status_lines_long"),
            ],
        },
        Case {
            name: "quoted_status_lines",
            what: "a normal answer whose text quotes the CLIs' status lines in a code block (negative)",
            script: vec![Turn::say(QUOTED)],
            env: vec![],
            provider_extra: "",
            subscription: false,
            steps: vec![
                Step::Wait(&["retrying in 5s · attempt 1/10"], 90),
                Step::Settle(6),
                Step::Save("quoted_status_lines"),
            ],
        },
        Case {
            name: "working_tool",
            what: "the model runs a 30 s command (exec_command `sleep 30`): Codex working, its live status on (negative)",
            script: vec![
                Turn::call("exec_command", json!({"cmd": "sleep 30"})),
                Turn::say("Done waiting."),
            ],
            env: vec![],
            provider_extra: "",
            subscription: false,
            steps: vec![
                Step::Wait(&["esc to interrupt"], 90),
                Step::Settle(3),
                Step::Save("working_tool"),
            ],
        },
    ]
}
