//! Records what the REAL agent CLIs (Claude Code and Codex from
//! `end2end/real-cli`, installed by `scripts/setup.sh test`) draw when their
//! model API fails: each CLI runs in a real PTY of 160×45 against the model
//! stand-in scripted to fail (429 with a usage-limit body and rate-limit
//! headers, 529, 500, 401, a stream cut in the middle) or to answer with
//! text that only quotes such lines, and the screen — as Harness's own
//! terminal model (`harness_term::TerminalModel`) renders it — is written to
//! `crates/core/tests/fixtures/agent_screens/<cli>/<case>.txt` under a header
//! line saying how it was recorded. `docs/agent-states.md` tells when to run
//! it again.
//!
//! ```text
//! cargo run -p harness-model-standin --example record_agent_screens -- claude            # every Claude case
//! cargo run -p harness-model-standin --example record_agent_screens -- codex overloaded_529
//! ```
//!
//! A case whose awaited line never shows is still saved (the header says
//! "timed out waiting for …"): it is what the CLI drew, and the fixture's
//! test then tells whether it is recognised.

use std::{
    io::{Read, Write},
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use anyhow::{Context, bail};
use harness_model_standin::{StandIn, Turn};
use harness_term::TerminalModel;
use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use serde_json::{Value, json};

const ROWS: u16 = 45;
const COLS: u16 = 160;
const PROMPT: &str = "Task: say hello";

/// One step of a recording.
enum Step {
    /// Wait until the screen shows one of the texts (or the timeout).
    Wait(&'static [&'static str], u64),
    /// Wait for the screen to stop changing (at most this many seconds).
    Settle(u64),
    /// Save the screen as this case.
    Save(&'static str),
    /// Replace the stand-in's script.
    Script(Vec<Turn>),
    /// Type this text, then Enter.
    Type(&'static str),
}

/// A run of one CLI against one scripted failure.
struct Case {
    name: &'static str,
    what: &'static str,
    script: Vec<Turn>,
    /// Extra environment of the CLI.
    env: Vec<(&'static str, String)>,
    /// Codex: extra lines of its model provider's table.
    provider_extra: &'static str,
    /// Claude: log in as a subscriber (an OAuth token) instead of an API token.
    subscription: bool,
    steps: Vec<Step>,
}

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

fn claude_cases() -> Vec<Case> {
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
    ]
}

fn openai_error(kind: &str, message: &str) -> Value {
    json!({"error": {"type": kind, "code": kind, "message": message}})
}

fn codex_cases() -> Vec<Case> {
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
    ]
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn version(package: &str) -> String {
    let path = repo().join(format!(
        "end2end/real-cli/node_modules/{package}/package.json"
    ));
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v["version"].as_str().map(str::to_string))
        .unwrap_or_else(|| "unknown".into())
}

/// The CLI's screen, fed by a reader thread.
struct Screen {
    model: Arc<Mutex<TerminalModel>>,
}

impl Screen {
    fn text(&self) -> String {
        self.model
            .lock()
            .map(|m| m.screen_text().text)
            .unwrap_or_default()
    }
}

async fn record(cli: &str, case: Case, out: &Path) -> anyhow::Result<()> {
    let bin = repo().join("end2end/real-cli/node_modules/.bin").join(cli);
    if !bin.exists() {
        bail!("{} is not installed (scripts/setup.sh test)", bin.display());
    }
    // Claude Code's other requests (titles, probes) offer no tools; the
    // conversation offers Bash, Codex's its shell tools.
    let standin = StandIn::start_marked(
        case.script,
        &["Bash", "exec_command", "shell", "apply_patch"],
    )
    .await?;
    let dir = tempfile::tempdir()?;
    let (work, home) = (dir.path().join("work"), dir.path().join("home"));
    std::fs::create_dir_all(&work)?;
    std::fs::create_dir_all(&home)?;
    let mut cmd = CommandBuilder::new(&bin);
    cmd.env_clear();
    cmd.env("PATH", std::env::var("PATH").unwrap_or_default());
    cmd.env("HOME", &home);
    cmd.env("TERM", "xterm-256color");
    cmd.env("LANG", "C.UTF-8");
    cmd.env("TZ", "UTC");
    cmd.cwd(&work);
    let version = if cli == "claude" {
        let state = json!({"hasCompletedOnboarding": true,
            "projects": {work.display().to_string(): {"hasTrustDialogAccepted": true}}});
        std::fs::write(home.join(".claude.json"), state.to_string())?;
        for (k, v) in [
            ("IS_SANDBOX", "1"),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
            ("DISABLE_TELEMETRY", "1"),
            ("DISABLE_AUTOUPDATER", "1"),
            ("DISABLE_ERROR_REPORTING", "1"),
        ] {
            cmd.env(k, v);
        }
        cmd.env("ANTHROPIC_BASE_URL", standin.base_url());
        if case.subscription {
            cmd.env("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-standin");
        } else {
            cmd.env("ANTHROPIC_AUTH_TOKEN", "standin");
        }
        cmd.arg(PROMPT);
        format!("Claude Code {}", version("@anthropic-ai/claude-code"))
    } else {
        let codex_home = home.join(".codex");
        std::fs::create_dir_all(&codex_home)?;
        std::fs::write(
            codex_home.join("config.toml"),
            format!(
                "model = \"standin-model\"\nmodel_provider = \"standin\"\n\
                 [model_providers.standin]\nname = \"standin\"\nbase_url = \"{}/v1\"\n\
                 env_key = \"STANDIN_API_KEY\"\nwire_api = \"responses\"\n\
                 supports_websockets = false\nrequires_openai_auth = false\n{}",
                standin.base_url(),
                case.provider_extra
            ),
        )?;
        cmd.env("CODEX_HOME", &codex_home);
        cmd.env("STANDIN_API_KEY", "standin");
        cmd.args([
            "--dangerously-bypass-approvals-and-sandbox",
            "-c",
            "check_for_update_on_startup=false",
            "--",
            PROMPT,
        ]);
        format!("Codex {}", version("@openai/codex"))
    };
    for (k, v) in &case.env {
        cmd.env(k, v);
    }
    let pair = native_pty_system()
        .openpty(PtySize {
            rows: ROWS,
            cols: COLS,
            pixel_width: 0,
            pixel_height: 0,
        })
        .context("openpty")?;
    let mut child = pair.slave.spawn_command(cmd).context("spawn")?;
    drop(pair.slave);
    let model = Arc::new(Mutex::new(TerminalModel::new(ROWS, COLS)));
    let mut reader = pair.master.try_clone_reader()?;
    let mut writer = pair.master.take_writer()?;
    let feed = model.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            if let Ok(mut m) = feed.lock() {
                m.feed(&buf[..n]);
            }
        }
    });
    let screen = Screen { model };
    let started = Instant::now();
    let mut note = String::new();
    for step in case.steps {
        match step {
            Step::Wait(texts, secs) => {
                let deadline = Instant::now() + Duration::from_secs(secs);
                loop {
                    let text = screen.text();
                    if let Some(t) = texts.iter().find(|t| text.contains(**t)) {
                        note = format!("waited {}s for {t:?}", started.elapsed().as_secs());
                        break;
                    }
                    if Instant::now() > deadline {
                        note = format!("timed out waiting for {texts:?}");
                        eprintln!("{cli} {}: {note}", case.name);
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
            Step::Settle(secs) => {
                let deadline = Instant::now() + Duration::from_secs(secs);
                let mut last = screen.text();
                let mut same_since = Instant::now();
                while Instant::now() < deadline {
                    tokio::time::sleep(Duration::from_millis(250)).await;
                    let now = screen.text();
                    if now != last {
                        last = now;
                        same_since = Instant::now();
                    } else if same_since.elapsed() > Duration::from_secs(2) {
                        break;
                    }
                }
            }
            Step::Save(name) => {
                let text = screen.text();
                let path = out.join(cli).join(format!("{name}.txt"));
                std::fs::create_dir_all(path.parent().unwrap_or(out))?;
                let header = format!(
                    "# {version} · recorded {} · {COLS}x{ROWS} PTY, screen as harness_term::TerminalModel renders it · \
                     `cargo run -p harness-model-standin --example record_agent_screens -- {cli} {}` · model stand-in: {} · {note}\n",
                    today(),
                    case.name,
                    case.what
                );
                std::fs::write(&path, header + &text + "\n")?;
                eprintln!("saved {} ({note})", path.display());
            }
            Step::Script(turns) => standin.set_script(turns),
            Step::Type(text) => {
                writer.write_all(text.as_bytes())?;
                writer.flush()?;
                // Apart, so the Enter is not read as part of a paste.
                tokio::time::sleep(Duration::from_millis(500)).await;
                writer.write_all(b"\r")?;
                writer.flush()?;
            }
        }
    }
    child.kill().ok();
    child.wait().ok();
    Ok(())
}

/// Today's date (UTC) as `YYYY-MM-DD`.
fn today() -> String {
    std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%d"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(cli) = args.first().cloned() else {
        bail!("usage: record_agent_screens claude|codex [case …]");
    };
    // Made again for each case: reset times are counted from its start.
    let cases = || match cli.as_str() {
        "codex" => codex_cases(),
        _ => claude_cases(),
    };
    if cli != "claude" && cli != "codex" {
        bail!("unknown CLI {cli:?} (claude or codex)");
    }
    let out = repo().join("crates/core/tests/fixtures/agent_screens");
    let wanted = &args[1..];
    let names: Vec<&str> = cases().iter().map(|c| c.name).collect();
    for name in names {
        if !wanted.is_empty() && !wanted.iter().any(|w| w == name) {
            continue;
        }
        let Some(case) = cases().into_iter().find(|c| c.name == name) else {
            continue;
        };
        if let Err(err) = record(&cli, case, &out).await {
            eprintln!("{cli} {name}: {err:#}");
        }
    }
    Ok(())
}
