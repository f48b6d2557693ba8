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

mod cases;

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

/// The terminal's size: 160×45, or `RECORD_SIZE=<cols>x<rows>` (e.g.
/// `80x24`, Harness's default terminal: the case is then saved as
/// `<case>@80x24.txt`).
const ROWS: u16 = 45;
const COLS: u16 = 160;

/// The size to record at and the file-name suffix it gives.
fn size() -> (u16, u16, String) {
    let Ok(spec) = std::env::var("RECORD_SIZE") else {
        return (COLS, ROWS, String::new());
    };
    let parsed = spec
        .split_once('x')
        .and_then(|(c, r)| Some((c.trim().parse::<u16>().ok()?, r.trim().parse::<u16>().ok()?)))
        .filter(|(c, r)| *c >= 20 && *r >= 10);
    match parsed {
        Some((c, r)) if (c, r) != (COLS, ROWS) => (c, r, format!("@{c}x{r}")),
        Some(_) => (COLS, ROWS, String::new()),
        None => {
            eprintln!(
                "RECORD_SIZE={spec:?} is not <cols>x<rows> (at least 20x10); recording at {COLS}x{ROWS}"
            );
            (COLS, ROWS, String::new())
        }
    }
}
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
    let (cols, rows, suffix) = size();
    let env = if suffix.is_empty() {
        String::new()
    } else {
        format!("RECORD_SIZE={cols}x{rows} ")
    };
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
            rows,
            cols,
            pixel_width: 0,
            pixel_height: 0,
        })
        .context("openpty")?;
    let mut child = pair.slave.spawn_command(cmd).context("spawn")?;
    drop(pair.slave);
    let model = Arc::new(Mutex::new(TerminalModel::new(rows, cols)));
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
                let path = out.join(cli).join(format!("{name}{suffix}.txt"));
                std::fs::create_dir_all(path.parent().unwrap_or(out))?;
                let header = format!(
                    "# {version} · recorded {} · {cols}x{rows} PTY, screen as harness_term::TerminalModel renders it · \
                     `{env}cargo run -p harness-model-standin --example record_agent_screens -- {cli} {}` · model stand-in: {} · {note}\n",
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
        "codex" => cases::codex_cases(),
        _ => cases::claude_cases(),
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
