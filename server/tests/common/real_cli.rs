//! The real agent CLIs (Claude Code, Codex from npm, `end2end/real-cli`):
//! where they are installed and what a test reads of a task.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::Server;

pub const PROMPT: &str = "Task: say hello";

/// Set to `1`, a missing real CLI or gateway fails its test instead of
/// skipping it (a machine that must run them all).
pub const REQUIRE: &str = "HARNESS_REQUIRE_REAL_CLIS";
/// A file each test with a real CLI appends `ran|skipped <test> <what>` to
/// (`test.sh` prints it at the end).
pub const REPORT: &str = "HARNESS_REAL_CLI_REPORT";

/// The one check of every test with a real CLI, gateway or SDK: `path` when
/// it is installed; else "skipped: …" and `None` — or a failure with
/// [`REQUIRE`]`=1`. Either way the run is noted in [`REPORT`].
pub fn real_tool(what: &str, path: PathBuf) -> Option<PathBuf> {
    let found = path.exists();
    note(if found { "ran" } else { "skipped" }, what);
    if found {
        return Some(path);
    }
    let why = format!(
        "{what} not installed (run scripts/setup.sh test) — expected at {}",
        path.display()
    );
    assert!(
        std::env::var(REQUIRE).as_deref() != Ok("1"),
        "{REQUIRE}=1: {why}"
    );
    eprintln!("skipped: {why}");
    None
}

fn note(result: &str, what: &str) {
    use std::io::Write;
    let Some(file) = std::env::var_os(REPORT) else {
        return;
    };
    // libtest names each test's thread after the test.
    let test = std::thread::current()
        .name()
        .unwrap_or("unknown test")
        .to_string();
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)
    {
        // One write(2) per line: tests running at once append whole lines
        // (`writeln!` on a File writes piece by piece and interleaved them).
        let _ = f.write_all(format!("{result} {test} ({what})\n").as_bytes());
    }
}

pub fn installed(cli: &str) -> Option<PathBuf> {
    real_tool(
        cli,
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../end2end/real-cli/node_modules/.bin")
            .join(cli),
    )
}

/// The model stand-in's requests, one line each (method, path, whether of
/// the main conversation, the turn served) and the last `tail` characters
/// of each body: what a timed-out wait of a real-CLI test shows.
pub fn requests_seen(standin: &harness_model_standin::StandIn, tail: usize) -> String {
    standin
        .requests()
        .iter()
        .map(|r| {
            let line = format!("{} {} main={} turn={:?}", r.method, r.path, r.main, r.turn);
            if tail == 0 {
                return line;
            }
            let body = r.body.to_string();
            let skip = body.chars().count().saturating_sub(tail);
            let end: String = body.chars().skip(skip).collect();
            format!("{line} …{end}")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The real Claude Code set up for a test: `home/.claude.json` says its
/// onboarding is done and `work` trusted (those prompts are detected on
/// screen otherwise, `terminals/prompts.rs`), with the keys of `state`
/// added; the environment it gets points it at the model stand-in `base`
/// with an API key and nothing else reached, MCP tools listed with each
/// request (not behind ToolSearch), with the keys of `env` added or
/// replaced.
pub fn claude_env(home: &Path, work: &Path, base: &str, state: Value, env: Value) -> Value {
    let mut file = serde_json::json!({"hasCompletedOnboarding": true,
        "projects": {work.display().to_string(): {"hasTrustDialogAccepted": true}}});
    merge(&mut file, state);
    std::fs::write(home.join(".claude.json"), file.to_string()).unwrap();
    let mut out = serde_json::json!({
        "HOME": home, "IS_SANDBOX": "1",
        "ANTHROPIC_BASE_URL": base, "ANTHROPIC_AUTH_TOKEN": "standin",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1",
        "ENABLE_TOOL_SEARCH": "false",
    });
    merge(&mut out, env);
    out
}

/// The keys of the object `extra` set on the object `into` (`null`: removed).
fn merge(into: &mut Value, extra: Value) {
    if let (Some(into), Value::Object(extra)) = (into.as_object_mut(), extra) {
        for (k, v) in extra {
            if v.is_null() {
                into.remove(&k);
            } else {
                into.insert(k, v);
            }
        }
    }
}

/// A Claude Code task running `command` in `work` with `env`, started with
/// [`PROMPT`]; its id.
pub async fn start_claude_task(
    s: &Server,
    title: &str,
    command: &Path,
    work: &Path,
    env: Value,
) -> String {
    let (status, t) = s
        .admin(
            "POST",
            "/api/tasks",
            Some(
                serde_json::json!({"title": title, "agent": {"provider": "claude",
                "command": [command.display().to_string()], "cwd": work, "env": env}}),
            ),
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::CREATED, "{t}");
    let task = t["id"].as_str().unwrap().to_string();
    let (status, out) = s
        .admin(
            "POST",
            &format!("/api/tasks/{task}/start"),
            Some(serde_json::json!({"prompt": PROMPT})),
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::OK, "{out}");
    task
}

pub async fn screen(s: &Server, task: &str) -> String {
    let (_, v) = s
        .admin("GET", &format!("/api/tasks/{task}/screen"), None)
        .await;
    v["text"].as_str().unwrap_or_default().to_string()
}

pub async fn task_json(s: &Server, task: &str) -> Value {
    s.admin("GET", &format!("/api/tasks/{task}"), None).await.1
}
