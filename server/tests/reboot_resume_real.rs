//! After a reboot with the REAL Claude Code and Codex (`end2end/real-cli`)
//! against the model stand-ins: an unattended task's agent runs, the server
//! stops (its holder keeps the agent), the holder and the agent are killed
//! (a reboot), and the next server resumes it on its own with its provider
//! session — Claude Code `--resume <id>`, Codex `resume <id>` on the new
//! process's command line — and the model sees the first run's conversation
//! (its prompt) in the resumed agent's next request; one report row names
//! the session.
//!
//! Without the CLIs the tests print "skipped: …" and pass.

use crate::common;

use std::{
    path::Path,
    time::{Duration, Instant},
};

use harness_model_standin::{StandIn, Turn};
use reqwest::StatusCode;
use serde_json::{Value, json};

use common::real_cli::{PROMPT, claude_env, installed, screen, task_json};

use super::reboot_resume::{agent_pids, kill_now};

const FIRST: &str = "Hello from the first run";
const AGAIN: &str = "Are you back after the reboot?";

async fn until<T, F, Fut>(secs: u64, what: &str, check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    common::until(what, Duration::from_secs(secs), check).await
}

/// The command lines of the task's processes, NULs kept.
fn cmdlines(task: &str) -> Vec<String> {
    agent_pids(task)
        .into_iter()
        .filter_map(|pid| std::fs::read(format!("/proc/{pid}/cmdline")).ok())
        .map(|raw| String::from_utf8_lossy(&raw).into_owned())
        .collect()
}

async fn reboot_resumes_the_session(
    provider: &'static str,
    bin: &Path,
    resume_args: fn(&str) -> String,
    env: impl FnOnce(&Path, &Path, &str) -> Value,
) {
    let dir = tempfile::tempdir().unwrap();
    let (data, work, home) = (
        dir.path().join("data"),
        dir.path().join("work"),
        dir.path().join("home"),
    );
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let standin = StandIn::start(vec![
        Turn::say(&format!("{FIRST}.")),
        Turn::say("Yes: {last_user}"),
    ])
    .await
    .unwrap();
    let env = env(&work, &home, &standin.base_url());
    let s = common::start(&data).await;
    let (st, out) = s
        .admin(
            "PUT",
            "/api/settings/notify-targets",
            Some(json!({"targets": [{"gateway": "openclaw", "scope": "unattended", "active": true}]})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    let (st, t) = s
        .admin(
            "POST",
            "/api/tasks",
            Some(json!({"title": format!("reboot {provider}"), "agent": {
                "provider": provider, "command": [bin.display().to_string()],
                "cwd": work, "env": env}})),
        )
        .await;
    assert_eq!(st, StatusCode::CREATED, "{t}");
    let t = t["id"].as_str().unwrap().to_string();
    let _reaper = super::reboot_resume::Reaper(vec![t.clone()]);
    let (st, out) = s
        .admin(
            "PUT",
            &format!("/api/tasks/{t}/unattended"),
            Some(json!({"on": true})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    let (st, out) = s
        .admin(
            "POST",
            &format!("/api/tasks/{t}/start"),
            Some(json!({"prompt": PROMPT})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    let first = out["executionId"].as_str().unwrap().to_string();
    until(90, "the first turn on screen", || async {
        screen(&s, &t).await.contains(FIRST).then_some(())
    })
    .await;
    let session = until(60, "the session id", || async {
        task_json(&s, &t).await["execution"]["sessionId"]
            .as_str()
            .map(str::to_string)
    })
    .await;

    // The reboot: the server stops (the holder keeps the agent), then the
    // holder and the agent are killed.
    s.shutdown().await;
    until(30, "the agent gone", || async {
        kill_now(&t);
        agent_pids(&t).is_empty().then_some(())
    })
    .await;
    let s = common::start(&data).await;
    // A new execution, recording the same session.
    until(90, "the agent resumed", || async {
        let v = task_json(&s, &t).await;
        (v["execution"]["status"] == "RUNNING"
            && v["execution"]["id"] != first.as_str()
            && v["execution"]["sessionId"] == session.as_str())
        .then_some(v)
    })
    .await;
    let wanted = resume_args(&session);
    let lines = until(30, "the resumed command line", || async {
        let lines = cmdlines(&t);
        lines.iter().any(|l| l.contains(&wanted)).then_some(lines)
    })
    .await;
    assert!(
        !lines
            .iter()
            .any(|l| l.contains("--continue") || l.contains("--last")),
        "never the directory's latest session: {lines:?}"
    );
    // The model sees the first run's conversation: the same session goes on.
    // Typed once the resumed TUI has drawn and is still.
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let before = screen(&s, &t).await;
        tokio::time::sleep(Duration::from_millis(700)).await;
        if !before.trim().is_empty() && screen(&s, &t).await == before {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for the resumed agent's screen, still:\n{before}"
        );
    }
    let (st, out) = s
        .admin(
            "POST",
            &format!("/api/tasks/{t}/input"),
            Some(json!({"text": AGAIN, "submit": true})),
        )
        .await;
    assert_eq!(st, StatusCode::OK, "{out}");
    let resumed = until(90, "the resumed agent's request", || async {
        standin
            .main_requests()
            .into_iter()
            .find(|r| r.to_string().contains(AGAIN))
    })
    .await;
    // (The first run's prompt: its answer may not have reached the CLI's
    // transcript before the kill.)
    assert!(
        resumed.to_string().contains(PROMPT),
        "the resumed request carries the first run: {resumed}"
    );
    // One report row names the session.
    let (_, rows) = s.admin("GET", "/api/outbound?limit=500", None).await;
    let reports: Vec<&Value> = rows
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["dedupKey"].as_str().unwrap_or("").starts_with("reboot:"))
        .collect();
    assert_eq!(reports.len(), 1, "{rows:#}");
    assert!(
        reports[0]["message"]
            .as_str()
            .unwrap()
            .contains(&format!("session {session}")),
        "{}",
        reports[0]
    );
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn real_claude_code_resumes_its_session_after_a_reboot() {
    let Some(bin) = installed("claude") else {
        return;
    };
    reboot_resumes_the_session(
        "claude",
        &bin,
        |sid| format!("\0--resume\0{sid}"),
        |work, home, base| claude_env(home, work, base, json!({}), json!({})),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn real_codex_resumes_its_session_after_a_reboot() {
    let Some(bin) = installed("codex") else {
        return;
    };
    reboot_resumes_the_session(
        "codex",
        &bin,
        |sid| format!("\0resume\0{sid}"),
        |_work, home, base| {
            let codex_home = home.join(".codex");
            std::fs::create_dir_all(&codex_home).unwrap();
            let config = format!(
                "model = \"standin-model\"\nmodel_provider = \"standin\"\n\
                 [model_providers.standin]\nname = \"standin\"\nbase_url = \"{base}/v1\"\n\
                 env_key = \"STANDIN_API_KEY\"\nwire_api = \"responses\"\n\
                 supports_websockets = false\nrequires_openai_auth = false\n"
            );
            std::fs::write(codex_home.join("config.toml"), config).unwrap();
            json!({"HOME": home, "CODEX_HOME": codex_home, "STANDIN_API_KEY": "standin"})
        },
    )
    .await;
}
