//! The REAL agent CLIs (Claude Code 2.1.332, Codex 0.171.0 from npm,
//! installed by `scripts/setup.sh test` into `end2end/real-cli`) started by a
//! real Harness server, against scripted stand-ins of their model APIs
//! (`crates/model-standin`). Each test checks, with the CLI's own behaviour:
//! started with a prompt, the native question tool denied on an unattended
//! task, `ask_human` through MCP parks the task, the session id recorded, the
//! Stop hook reported, the reply typed into the live terminal once and seen by
//! the model in its next request, and — after the terminal is gone — the
//! agent resumed with the directive and the question, and that neither the
//! user's `~/.claude` / `~/.codex` nor the agent's config were edited.
//!
//! Without the CLIs the tests print "skipped: …" and pass.

use crate::common;

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use harness_model_standin::{StandIn, Turn};
use reqwest::StatusCode;
use serde_json::{Value, json};

use common::real_cli::{PROMPT, claude_env, installed, screen, task_json};

const REPLY_1: &str = "Blue, please (reply one)";
const REPLY_2: &str = "Ship it (reply two)";

/// Poll `check` until it returns `Some`, at most `secs` seconds; on a
/// timeout the panic shows what the stand-in received and the screen.
async fn until<T, F, Fut>(run: &Run, secs: u64, what: &str, check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    common::until_with(what, Duration::from_secs(secs), check, || report(run)).await
}

async fn report(run: &Run) -> String {
    let seen: Vec<String> = run
        .standin
        .requests()
        .iter()
        .map(|r| {
            let tools: Vec<String> = r.body["tools"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|t| {
                    let name = t["name"].as_str().unwrap_or("?");
                    match t["tools"].as_array() {
                        Some(inner) => format!(
                            "{name}{:?}",
                            inner
                                .iter()
                                .map(|i| i["name"].as_str().unwrap_or("?"))
                                .collect::<Vec<_>>()
                        ),
                        None => name.to_string(),
                    }
                })
                .collect();
            let items = r.body["messages"].as_array().or(r.body["input"].as_array());
            let last: Vec<String> = items
                .map(|m| {
                    m.iter()
                        .rev()
                        .take(3)
                        .rev()
                        .map(|i| i.to_string().chars().take(400).collect())
                        .collect()
                })
                .unwrap_or_default();
            format!(
                "{} {} main={} turn={:?} tools={tools:?}\n   last items: {last:?}",
                r.method, r.path, r.main, r.turn
            )
        })
        .collect();
    format!(
        "requests:\n{}\nscreen:\n{}",
        seen.join("\n"),
        screen(&run.server, &run.task).await
    )
}

async fn open_ask(s: &common::Server, task: &str) -> Option<String> {
    let (_, rows) = s
        .admin(
            "GET",
            &format!("/api/harness/messages?view=pending&taskId={task}"),
            None,
        )
        .await;
    rows["rows"][0]["content"].as_str().map(str::to_string)
}

/// Files (path → size, mtime) under the user's own agent config.
fn snapshot_user_config() -> BTreeMap<PathBuf, (u64, std::time::SystemTime)> {
    let home = PathBuf::from(std::env::var("HOME").unwrap_or_else(|_| "/root".into()));
    let mut out = BTreeMap::new();
    let mut stack = vec![
        home.join(".claude"),
        home.join(".codex"),
        home.join(".claude.json"),
    ];
    while let Some(p) = stack.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if meta.is_dir() {
            for e in std::fs::read_dir(&p).into_iter().flatten().flatten() {
                stack.push(e.path());
            }
        } else if let Ok(m) = meta.modified() {
            out.insert(p, (meta.len(), m));
        }
    }
    out
}

/// The scripted conversation, the same for both CLIs.
fn script(native_question: &str) -> Vec<Turn> {
    let questions = if native_question == "AskUserQuestion" {
        json!({"questions": [{"question": "Which colour?", "header": "Colour", "multiSelect": false,
            "options": [{"label": "Red", "description": "red"}, {"label": "Blue", "description": "blue"}]}]})
    } else {
        json!({"questions": [{"id": "colour", "header": "Colour", "question": "Which colour?",
            "options": [{"label": "Red", "description": "red"}, {"label": "Blue", "description": "blue"}]}]})
    };
    vec![
        Turn::call(native_question, questions),
        Turn::call("ask_human", json!({"question": "Red or blue?"})),
        Turn::say("Waiting for the human."),
        Turn::call("ask_human", json!({"question": "Second question: ship?"})),
        Turn::say("Waiting again."),
        Turn::say("Thanks: {last_user}"),
    ]
}

struct Run {
    provider: &'static str,
    server: common::Server,
    standin: StandIn,
    task: String,
    _dir: tempfile::TempDir,
    work: PathBuf,
    agent_home: PathBuf,
}

async fn setup(
    provider: &'static str,
    bin: &Path,
    env: impl FnOnce(&Path, &Path, &str) -> Value,
) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    let agent_home = dir.path().join("home");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&agent_home).unwrap();
    let server = common::start(&dir.path().join("data")).await;
    let native = if provider == "claude" {
        "AskUserQuestion"
    } else {
        "request_user_input"
    };
    let standin = StandIn::start(script(native)).await.unwrap();
    let env = env(&work, &agent_home, &standin.base_url());
    let (status, t) = server
        .admin(
            "POST",
            "/api/tasks",
            Some(json!({"title": format!("real {provider}"), "agent": {
                "provider": provider, "command": [bin.display().to_string()],
                "cwd": work, "env": env}})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{t}");
    let task = t["id"].as_str().unwrap().to_string();
    // Unattended mode needs an active unattended channel (a core rule).
    let (status, body) = server
        .admin(
            "PUT",
            "/api/settings/notify-targets",
            Some(json!({"targets": [{"gateway": "openclaw", "scope": "unattended", "active": true}]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, _) = server
        .admin(
            "PUT",
            &format!("/api/tasks/{task}/unattended"),
            Some(json!({"on": true})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    Run {
        provider,
        server,
        standin,
        task,
        _dir: dir,
        work,
        agent_home,
    }
}

/// The main-conversation request that answered scripted turn `n`.
async fn turn_request(run: &Run, n: usize) -> Value {
    let what = format!("scripted turn {n}");
    until(run, 60, &what, || async move {
        run.standin.main_requests().get(n).cloned()
    })
    .await
}

/// The scripted flow shared by both CLIs. `text_of` renders a request as
/// searchable text; `last_user` is the newest user message of a request.
async fn drive(run: &Run, text_of: fn(&Value) -> String, last_user: fn(&Value) -> String) {
    let s = &run.server;
    let t = &run.task;
    let (status, started) = s
        .admin(
            "POST",
            &format!("/api/tasks/{t}/start"),
            Some(json!({"prompt": PROMPT})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{started}");

    // Started with the prompt (a CLI that read it as an option would fail here).
    let first = turn_request(run, 0).await;
    assert!(text_of(&first).contains(PROMPT), "prompt missing: {first}");
    // for Claude Code neither the prompt nor the directive
    // is an argument of any process of the agent (other users read them in
    // ps); Codex takes them only as arguments (docs/agent-clis.md).
    if run.provider == "claude" {
        let sid = s.running.terminals.live(t).expect("live").pid();
        for line in session_cmdlines(sid) {
            assert!(
                !line.contains(PROMPT) && !line.contains("escalation ladder"),
                "a secret in ps: {line}"
            );
        }
    }
    // The native question was denied by Harness's gate (unattended task).
    let second = turn_request(run, 1).await;
    assert!(
        text_of(&second).contains("this task runs unattended"),
        "the gate's denial reaches the model: {}",
        text_of(&second)
    );
    // The native menu became a Harness question with the same options
    //, and the model was told so.
    assert!(
        text_of(&second).contains("ALREADY recorded"),
        "{}",
        text_of(&second)
    );
    let (status, page) = s
        .admin(
            "GET",
            &format!("/api/harness/messages?view=all&taskId={t}"),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let native = page["rows"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| {
            r["content"]
                .as_str()
                .is_some_and(|c| c.contains("Which colour?"))
        })
        .unwrap_or_else(|| panic!("the native question is not an ask: {page}"));
    assert_eq!(
        native["options"],
        json!([{"label": "Red", "description": "red"}, {"label": "Blue", "description": "blue"}]),
        "{native}"
    );
    // ask_human through MCP parks the task.
    // (It supersedes the ask the native menu became.)
    let question = until(run, 60, "the open ask", || async {
        open_ask(s, t).await.filter(|q| q == "Red or blue?")
    })
    .await;
    assert_eq!(question, "Red or blue?");
    let view = task_json(s, t).await;
    assert_eq!(view["execution"]["status"], "PAUSED", "{view}");
    // The turn ended: the Stop hook reached the server.
    let _ = turn_request(run, 2).await;
    until(run, 60, "the Stop hook", || async {
        s.running
            .terminals
            .live(t)
            .is_some_and(|p| p.turn_complete())
            .then_some(())
    })
    .await;
    // The session id was reported (SessionStart hook).
    let session_id = until(run, 60, "the session id", || async {
        task_json(s, t).await["execution"]["sessionId"]
            .as_str()
            .map(str::to_string)
    })
    .await;

    // The reply is typed into the live terminal once, and the model sees it.
    let (status, r) = s
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": t, "text": REPLY_1})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{r}");
    let after_reply = turn_request(run, 3).await;
    assert!(
        last_user(&after_reply).contains(REPLY_1),
        "the reply is the model's next user message: {}",
        last_user(&after_reply)
    );
    // Second ask, then the terminal dies (not a stop: the ask stays answerable).
    until(run, 60, "the second ask", || async {
        open_ask(s, t).await.filter(|q| q.starts_with("Second"))
    })
    .await;
    let _ = turn_request(run, 4).await;
    let live = s.running.terminals.live(t).expect("a live terminal");
    live.kill().unwrap();
    until(run, 30, "the exit", || async {
        s.running.terminals.live(t).is_none().then_some(())
    })
    .await;
    let (status, r) = s
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": t, "text": REPLY_2})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{r}");
    let resumed = turn_request(run, 5).await;
    let resumed_text = text_of(&resumed);
    assert!(
        last_user(&resumed).contains("[针对你之前的提问：Second question: ship?]")
            && last_user(&resumed).contains(REPLY_2),
        "the resumed agent gets the question and the reply: {}",
        last_user(&resumed)
    );
    assert!(
        resumed_text.contains("Red or blue?"),
        "the same conversation continues (resume, not a fresh start)"
    );
    assert!(
        resumed_text.contains("escalation ladder"),
        "the directive is applied on resume"
    );
    assert!(
        resumed_text.contains(&session_id),
        "the resumed CLI itself runs session {session_id}"
    );
    let view = task_json(s, t).await;
    assert_eq!(
        view["execution"]["sessionId"], session_id,
        "the resumed execution continues the recorded session: {view}"
    );
    // Each reply reached the model exactly once.
    for reply in [REPLY_1, REPLY_2] {
        assert_eq!(
            resumed_text.matches(reply).count(),
            1,
            "{reply} typed once: {resumed_text}"
        );
    }
    // Every scripted turn was served and nothing else asked for one.
    assert_eq!(run.standin.turns_served(), 6);
}

/// The command lines (as `ps` shows them) of every process in session `sid`.
fn session_cmdlines(sid: u32) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp session …: fields after the last ')'.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest.split_whitespace().collect())
            .unwrap_or_default();
        if fields.get(3).and_then(|f| f.parse::<u32>().ok()) == Some(sid) {
            let raw = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            out.push(String::from_utf8_lossy(&raw).replace('\0', " "));
        }
    }
    assert!(!out.is_empty(), "no process in session {sid}");
    out
}

fn claude_text(body: &Value) -> String {
    body.to_string()
}

fn claude_last_user(body: &Value) -> String {
    let Some(m) = body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
    else {
        return String::new();
    };
    m["content"].to_string()
}

fn codex_last_user(body: &Value) -> String {
    body["input"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .map(|m| m["content"].to_string())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn real_claude_code_parks_resumes_and_is_gated() {
    let Some(bin) = installed("claude") else {
        return;
    };
    let before = snapshot_user_config();
    let run = setup("claude", &bin, |work, home, base| {
        // A user who already finished onboarding and trusted the folder
        // (those prompts are detected on screen otherwise, see prompts.rs).
        claude_env(home, work, base, json!({}), json!({}))
    })
    .await;
    drive(&run, claude_text, claude_last_user).await;
    // The directive went in as a system prompt, Harness's hooks and MCP per
    // spawn: nothing was written into the agent's or the user's settings.
    let settings = run.agent_home.join(".claude/settings.json");
    let written = std::fs::read_to_string(&settings).unwrap_or_default();
    assert!(!written.contains("harness"), "{written}");
    assert_eq!(snapshot_user_config(), before, "~/.claude untouched");
    let _ = &run.work;
    run.server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn real_codex_parks_resumes_and_is_gated() {
    let Some(bin) = installed("codex") else {
        return;
    };
    let before = snapshot_user_config();
    let mut config_text = String::new();
    let run = setup("codex", &bin, |_work, home, base| {
        let codex_home = home.join(".codex");
        std::fs::create_dir_all(&codex_home).unwrap();
        config_text = format!(
            "model = \"standin-model\"\nmodel_provider = \"standin\"\n\
             [model_providers.standin]\nname = \"standin\"\nbase_url = \"{base}/v1\"\n\
             env_key = \"STANDIN_API_KEY\"\nwire_api = \"responses\"\n\
             supports_websockets = false\nrequires_openai_auth = false\n"
        );
        std::fs::write(codex_home.join("config.toml"), &config_text).unwrap();
        json!({"HOME": home, "CODEX_HOME": codex_home, "STANDIN_API_KEY": "standin"})
    })
    .await;
    drive(&run, |b| b.to_string(), codex_last_user).await;
    let codex_home = run.agent_home.join(".codex");
    // Codex records its own UI state there; Harness writes nothing.
    let now = std::fs::read_to_string(codex_home.join("config.toml")).unwrap();
    assert!(
        now.starts_with(&config_text)
            && !now.contains("hooks")
            && !now.contains("mcp_servers")
            && !now.contains("harness"),
        "Harness passes its hooks and MCP server as -c overrides, never in config.toml: {now}"
    );
    // Point 3: the recorded session is the one in Codex's own session files.
    let view = task_json(&run.server, &run.task).await;
    let recorded = view["execution"]["sessionId"].as_str().unwrap().to_string();
    let since = chrono::Utc::now() - chrono::Duration::minutes(10);
    let found = harness_server::terminals::resume::find_codex_session(
        &codex_home,
        &run.work,
        since,
        chrono::Utc::now(),
    );
    assert_eq!(found.as_deref(), Some(recorded.as_str()));
    assert_eq!(snapshot_user_config(), before, "~/.codex untouched");
    run.server.shutdown().await;
}

/// Point 3: Codex reports its session id only through a hook at its first
/// turn. With no hook report at all (here: the hooks' binary is not a
/// harness, so every hook fails open), a resume still continues the task's own session —
/// found in Codex's session files — and never "the most recent" one.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn real_codex_without_a_hook_report_resumes_its_session_from_the_session_files() {
    let Some(bin) = installed("codex") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (work, home) = (dir.path().join("work"), dir.path().join("home"));
    let codex_home = home.join(".codex");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&codex_home).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let mut cfg =
        harness_server::ServeConfig::new(listener.local_addr().unwrap(), dir.path().join("data"));
    // Not a harness: every hook fails (and agents run unisolated: the
    // isolation probe through it fails too).
    let not_harness = dir.path().join("not-harness");
    std::fs::write(&not_harness, "#!/bin/sh\nexit 1\n").unwrap();
    std::fs::set_permissions(
        &not_harness,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    cfg.harness_bin = not_harness;
    // No harness to run holders from either: agents in the server's PTYs.
    cfg.holders.enabled = false;
    let running = harness_server::launch(cfg, listener).await.unwrap();
    let s = common::Server {
        base: running.base_url(),
        admin: running.admin_token.clone(),
        running,
        client: reqwest::Client::new(),
    };
    let standin = StandIn::start(vec![
        Turn::call("ask_human", json!({"question": "Red or blue?"})),
        Turn::say("Waiting for the human."),
        Turn::say("Thanks: {last_user}"),
    ])
    .await
    .unwrap();
    std::fs::write(
        codex_home.join("config.toml"),
        format!(
            "model = \"m\"\nmodel_provider = \"standin\"\n[model_providers.standin]\n\
             name = \"standin\"\nbase_url = \"{}/v1\"\nenv_key = \"K\"\nwire_api = \"responses\"\n\
             supports_websockets = false\nrequires_openai_auth = false\n",
            standin.base_url()
        ),
    )
    .unwrap();
    let (_, t) = s
        .admin(
            "POST",
            "/api/tasks",
            Some(json!({"title": "no hooks", "agent": {"provider": "codex",
                "command": [bin.display().to_string()], "cwd": work,
                "env": {"HOME": home, "CODEX_HOME": codex_home, "K": "standin"}}})),
        )
        .await;
    let t = t["id"].as_str().unwrap().to_string();
    s.admin(
        "POST",
        &format!("/api/tasks/{t}/start"),
        Some(json!({"prompt": PROMPT})),
    )
    .await;
    let deadline = Instant::now() + Duration::from_secs(60);
    while standin.main_requests().len() < 2 || open_ask(&s, &t).await.is_none() {
        assert!(
            Instant::now() < deadline,
            "the agent never asked: {}",
            screen(&s, &t).await
        );
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    let view = task_json(&s, &t).await;
    assert!(
        view["execution"]["sessionId"].is_null(),
        "no hook reported the session: {view}"
    );
    s.running.terminals.live(&t).unwrap().kill().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while s.running.terminals.live(&t).is_some() {
        assert!(Instant::now() < deadline, "the agent did not exit");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (status, r) = s
        .admin(
            "POST",
            "/api/internal/harness/reply",
            Some(json!({"taskId": t, "text": REPLY_1})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{r}");
    let deadline = Instant::now() + Duration::from_secs(60);
    let resumed = loop {
        if let Some(r) = standin.main_requests().get(2).cloned() {
            break r;
        }
        assert!(
            Instant::now() < deadline,
            "no resumed turn: {}",
            screen(&s, &t).await
        );
        tokio::time::sleep(Duration::from_millis(150)).await;
    };
    assert!(
        resumed.to_string().contains("Red or blue?"),
        "the same conversation continues"
    );
    assert!(codex_last_user(&resumed).contains(REPLY_1));
    let view = task_json(&s, &t).await;
    let found = harness_server::terminals::resume::find_codex_session(
        &codex_home,
        &work,
        chrono::Utc::now() - chrono::Duration::minutes(10),
        chrono::Utc::now(),
    );
    assert_eq!(
        view["execution"]["sessionId"].as_str(),
        found.as_deref(),
        "the resumed execution recorded the session from the files: {view}"
    );
    s.shutdown().await;
}
